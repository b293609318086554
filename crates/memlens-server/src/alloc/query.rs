//! The allocation-map lens's query parameters, parsed into the engine's types. Every
//! value is checked here, so a bad one gets a 400 with one sentence naming it.
//!
//! | parameter | meaning |
//! |---|---|
//! | `pool=16:1024,32:512,…` | draw a pool-allocator replay instead of the real run ([`PoolQuery`]), with `overflow=first-fit\|best-fit` and `heap=SIZE` |
//! | `zx, zy, x, y, size` | a grid tile ([`tile_window`]): level `zx` splits the run into `2^zx` columns of tiles, `zy` the address axis into `2^zy` rows; tile (`x`, `y`) counts from the left and from the bottom |
//! | `t0, t1, a0, a1, w, h` | any window instead: times in ns on the model's timeline, positions on the compact address axis, image size |
//! | `alpha`, `cushion`, `color` | formula (1)'s bias, the cushion profile (`none`, `parabolic`, `plateau`), the colouring attribute |
//! | `bins=0,3` | only these bins; `smin`, `smax`: only requested sizes in that range (`K`/`M` allowed) |

use std::collections::HashMap;

use memlens_alloc::{
    AllocModel, BarStyle, BinId, ColorBy, CushionProfile, OverflowPolicy, PoolConfig,
    RenderOptions, SizeFilter, TimeRange, View, grid_bounds, parse_bytes,
};

use crate::error::ApiError;

/// The deepest grid level on either axis.
pub const MAX_LEVEL: u32 = 48;

/// The largest tile or image side the lens draws, pixels.
pub const MAX_SIDE: u32 = 4096;

/// The most samples a metric series may have.
pub const MAX_SAMPLES: usize = 4000;

type Query = HashMap<String, String>;

/// A parameter's text, if present and not blank.
pub(crate) fn text<'a>(q: &'a Query, name: &str) -> Option<&'a str> {
    q.get(name).map(|s| s.trim()).filter(|s| !s.is_empty())
}

/// A whole number parameter.
pub(crate) fn number(q: &Query, name: &str) -> Result<Option<u64>, ApiError> {
    text(q, name)
        .map(|t| {
            t.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("`{name}={t}` must be a whole number")))
        })
        .transpose()
}

/// A whole number parameter that must be present.
pub(crate) fn required(q: &Query, name: &str) -> Result<u64, ApiError> {
    number(q, name)?
        .ok_or_else(|| ApiError::bad_request(format!("the parameter `{name}` is missing")))
}

/// An image side: 1 to [`MAX_SIDE`].
pub(crate) fn side(q: &Query, name: &str, default: u32) -> Result<u32, ApiError> {
    let v = number(q, name)?.unwrap_or(u64::from(default));
    if v == 0 || v > u64::from(MAX_SIDE) {
        return Err(ApiError::bad_request(format!(
            "`{name}={v}` is out of range: an image side must be 1 to {MAX_SIDE} pixels"
        )));
    }
    Ok(v as u32)
}

/// A decimal parameter.
fn decimal(q: &Query, name: &str) -> Result<Option<f64>, ApiError> {
    text(q, name)
        .map(|t| {
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| ApiError::bad_request(format!("`{name}={t}` must be a number")))
        })
        .transpose()
}

/// The bias α: a number above 0 (default 0.5).
pub(crate) fn alpha(q: &Query) -> Result<f64, ApiError> {
    let a = decimal(q, "alpha")?.unwrap_or(0.5);
    if a <= 0.0 || a > 16.0 {
        return Err(ApiError::bad_request(format!(
            "`alpha={a}` is out of range: the bias α must be above 0 (1 is plain averaging) and at most 16"
        )));
    }
    Ok(a)
}

/// The cushion profile named by `name` (default plateau).
pub(crate) fn cushion(q: &Query, name: &str) -> Result<CushionProfile, ApiError> {
    match text(q, name).unwrap_or("plateau") {
        "plateau" => Ok(CushionProfile::Plateau),
        "parabolic" => Ok(CushionProfile::Parabolic),
        "none" | "flat" => Ok(CushionProfile::None),
        other => Err(ApiError::bad_request(format!(
            "`{name}={other}` is not a cushion profile: use none, parabolic or plateau"
        ))),
    }
}

/// The occupancy bar style (default antialiased).
pub(crate) fn bar_style(q: &Query) -> Result<BarStyle, ApiError> {
    match text(q, "style").unwrap_or("antialiased") {
        "flat" => Ok(BarStyle::Flat),
        "outlined" => Ok(BarStyle::Outlined),
        "cushioned" => Ok(BarStyle::Cushioned),
        "antialiased" => Ok(BarStyle::Antialiased),
        other => Err(ApiError::bad_request(format!(
            "`style={other}` is not a bar style: use flat, outlined, cushioned or antialiased"
        ))),
    }
}

/// The colouring attribute (default thread).
fn color_by(q: &Query, model: &AllocModel) -> Result<ColorBy, ApiError> {
    let name = text(q, "color").unwrap_or("thread");
    let by = ColorBy::parse(name).ok_or_else(|| {
        let names: Vec<&str> = ColorBy::ALL.iter().map(|c| c.name()).collect();
        ApiError::bad_request(format!(
            "`color={name}` is not an attribute: use one of {}",
            names.join(", ")
        ))
    })?;
    if by == ColorBy::Latency && !model.has_latency() {
        return Err(ApiError::bad_request(memlens_alloc::NO_LATENCY));
    }
    Ok(by)
}

/// A list of bin ids, each checked against the model.
pub(crate) fn bins(q: &Query, name: &str, model: &AllocModel) -> Result<Vec<BinId>, ApiError> {
    let Some(list) = text(q, name) else {
        return Ok(Vec::new());
    };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let id: u32 = item.parse().map_err(|_| {
                ApiError::bad_request(format!("`{name}={list}`: `{item}` is not a bin number"))
            })?;
            if model.bin(BinId(id)).is_none() {
                return Err(ApiError::bad_request(format!(
                    "`{name}={list}`: there is no bin {id} (this model has {})",
                    model.bins().len()
                )));
            }
            Ok(BinId(id))
        })
        .collect()
}

/// One optional bin (`bin=3`); absent means all bins.
pub(crate) fn one_bin(q: &Query, model: &AllocModel) -> Result<Option<BinId>, ApiError> {
    let list = bins(q, "bin", model)?;
    match list.as_slice() {
        [] => Ok(None),
        [b] => Ok(Some(*b)),
        _ => Err(ApiError::bad_request("`bin` takes one bin number")),
    }
}

/// A byte count with an optional `K`/`M`/`G` suffix.
fn bytes(q: &Query, name: &str) -> Result<Option<u64>, ApiError> {
    text(q, name)
        .map(|t| {
            parse_bytes(t).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "`{name}={t}` is not a size: write e.g. 64, 4K or 2M"
                ))
            })
        })
        .transpose()
}

/// The requested-size filter from `smin` and `smax`.
fn size_filter(q: &Query) -> Result<SizeFilter, ApiError> {
    let min = bytes(q, "smin")?.unwrap_or(0);
    let max = bytes(q, "smax")?.unwrap_or(u64::MAX);
    if min > max {
        return Err(ApiError::bad_request(format!(
            "the size filter `smin={min}` is above `smax={max}`: it keeps nothing"
        )));
    }
    Ok(SizeFilter { min, max })
}

/// How to draw the map.
pub(crate) fn render_options(q: &Query, model: &AllocModel) -> Result<RenderOptions, ApiError> {
    Ok(RenderOptions {
        alpha: alpha(q)?,
        cushion: cushion(q, "cushion")?,
        color_by: color_by(q, model)?,
        bins: bins(q, "bins", model)?,
        size: size_filter(q)?,
        ..RenderOptions::default()
    })
}

/// `[lo, hi)` of tile `i` when `[start, start + len)` is split into `2^level` equal
/// parts, each bound rounded down to a whole unit, so neighbours share their bounds
/// (the engine's [`grid_bounds`], whose overview recognises these tiles).
pub fn tile_bounds(start: u64, len: u64, level: u32, i: u64) -> (u64, u64) {
    grid_bounds(start, len, level, i)
}

/// The window of grid tile (`x`, `y`) at levels (`zx`, `zy`) of `model`, `size` pixels square.
pub fn tile_window(
    model: &AllocModel,
    zx: u32,
    zy: u32,
    x: u64,
    y: u64,
    size: u32,
) -> Result<View, ApiError> {
    for (name, z) in [("zx", zx), ("zy", zy)] {
        if z > MAX_LEVEL {
            return Err(ApiError::bad_request(format!(
                "`{name}={z}` is too deep: tile levels go from 0 to {MAX_LEVEL}"
            )));
        }
    }
    for (name, i, z) in [("x", x, zx), ("y", y, zy)] {
        if i >= 1u64 << z {
            return Err(ApiError::bad_request(format!(
                "`{name}={i}` is outside level {z}, which has {} tiles on that axis",
                1u64 << z
            )));
        }
    }
    let whole = View::whole(model, size, size);
    let (t0, t1) = tile_bounds(whole.time.start_ns, whole.time.duration_ns(), zx, x);
    let (a0, a1) = tile_bounds(whole.addr.0, whole.addr.1 - whole.addr.0, zy, y);
    if t1 <= t0 || a1 <= a0 {
        return Err(ApiError::bad_request(format!(
            "tile level zx={zx}, zy={zy} is zoomed in below one nanosecond or one byte per tile"
        )));
    }
    Ok(View {
        time: TimeRange {
            start_ns: t0,
            end_ns: t1,
        },
        addr: (a0, a1),
        width: size,
        height: size,
    })
}

/// The time window `t0..t1` (default: the whole run).
pub(crate) fn time_window(q: &Query, model: &AllocModel) -> Result<TimeRange, ApiError> {
    let whole = View::whole(model, 1, 1).time;
    let start_ns = number(q, "t0")?.unwrap_or(whole.start_ns);
    let end_ns = number(q, "t1")?.unwrap_or(whole.end_ns);
    if end_ns <= start_ns {
        return Err(ApiError::bad_request(format!(
            "the time window `t0={start_ns}`..`t1={end_ns}` is empty: t1 must be above t0"
        )));
    }
    Ok(TimeRange { start_ns, end_ns })
}

/// The view of a `tile` request: a grid tile when `zx` is given, else an explicit window.
pub(crate) fn view(q: &Query, model: &AllocModel) -> Result<View, ApiError> {
    if text(q, "zx").is_some() || text(q, "zy").is_some() {
        let level = |name| -> Result<u32, ApiError> {
            let z = required(q, name)?;
            u32::try_from(z).map_err(|_| ApiError::bad_request(format!("`{name}={z}` is too deep")))
        };
        return tile_window(
            model,
            level("zx")?,
            level("zy")?,
            required(q, "x")?,
            required(q, "y")?,
            side(q, "size", 256)?,
        );
    }
    let time = time_window(q, model)?;
    let axis_len = model.axis().len().max(1);
    let a0 = number(q, "a0")?.unwrap_or(0);
    let a1 = number(q, "a1")?.unwrap_or(axis_len);
    if a1 <= a0 {
        return Err(ApiError::bad_request(format!(
            "the address window `a0={a0}`..`a1={a1}` is empty: a1 must be above a0"
        )));
    }
    Ok(View {
        time,
        addr: (a0, a1),
        width: side(q, "w", 256)?,
        height: side(q, "h", 256)?,
    })
}

/// A pool-allocator configuration to replay, if the query names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PoolQuery {
    /// The configuration.
    pub config: PoolConfig,
    /// Its canonical spelling, the replay's cache key.
    pub key: String,
}

/// `pool`, `overflow` and `heap`.
pub(crate) fn pool(q: &Query) -> Result<Option<PoolQuery>, ApiError> {
    let Some(spec) = text(q, "pool") else {
        return Ok(None);
    };
    let bins =
        PoolConfig::parse_bins(spec).map_err(|e| ApiError::bad_request(format!("pool: {e}")))?;
    let mut config = PoolConfig::new(bins);
    config.overflow = match text(q, "overflow").unwrap_or("first-fit") {
        "first-fit" => OverflowPolicy::FirstFit,
        "best-fit" => OverflowPolicy::BestFit,
        other => {
            return Err(ApiError::bad_request(format!(
                "`overflow={other}` is not a heap policy: use first-fit or best-fit"
            )));
        }
    };
    config.heap_size = bytes(q, "heap")?;
    config
        .validate()
        .map_err(|e| ApiError::bad_request(format!("pool: {e}")))?;
    let key = format!(
        "{}|{:?}|{:?}",
        config
            .bins
            .iter()
            .map(|b| format!("{}:{}", b.block_size, b.count))
            .collect::<Vec<_>>()
            .join(","),
        config.overflow,
        config.heap_size
    );
    Ok(Some(PoolQuery { config, key }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_bounds_split_exactly_and_share_edges() {
        assert_eq!(tile_bounds(100, 1000, 0, 0), (100, 1100));
        assert_eq!(tile_bounds(100, 1000, 1, 0), (100, 600));
        assert_eq!(tile_bounds(100, 1000, 1, 1), (600, 1100));
        assert_eq!(tile_bounds(0, 10, 2, 1), (2, 5));
        assert_eq!(tile_bounds(0, 10, 2, 2), (5, 7));
        let big = u64::MAX / 2;
        assert_eq!(tile_bounds(0, big, 48, (1 << 48) - 1).1, big);
    }
}
