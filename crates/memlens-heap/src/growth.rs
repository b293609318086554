//! Growth ranking ("leak suspects"): the paper's "automatic detection of suspicious
//! growth" (§9.2), made concrete.
//!
//! We compute the memory trees of a classifier chain at `samples + 1` evenly spaced
//! times over the window (one pass, see [`trees`](crate::trees)) and score every group by
//! three properties of its live-bytes series `y_0 … y_S`:
//!
//! - **growth** `y_S − y_0`: how much it accumulated;
//! - **monotonicity** `max(0, y_S − y_0) / Σ|y_{k+1} − y_k|`: 1 when it never shrinks,
//!   near 0 when it churns (a working set that fills and drains moves a lot but ends
//!   where it started);
//! - **R²** of a least-squares line through the samples: near 1 for steady
//!   accumulation, low for bursts and plateaus;
//! - **persistence** `clamp(2·(y_S − y_mid) / (y_S − y_0), 0, 1)`: whether it is still
//!   growing in the second half of the window. A linear leak scores 1; a pool or cache
//!   that warms up early and then stays flat (monotone, and with a middling R²) scores
//!   near 0. Growth that stopped early shows when the window is narrowed to it.
//!
//! `score = growth × monotonicity × R² × persistence`, in bytes. Groups that do not
//! grow are not suspects. Bytes never freed (live at exit) are reported per group.
//!
//! **Which nodes are candidates.** Both leaves and inner nodes: with `call-path` the
//! culprit is often an inner frame reached from many callers, and with `site,thread` the
//! site itself is the finding when several threads share its growth. But a node whose
//! growth is carried (≥ 90 %) by one child says the same thing less precisely than that
//! child, so it is dropped and the child stays. Chains of single children thus report
//! only their deepest node, and a node is reported beside its children only when its
//! growth is spread over several of them.

use crate::classifiers::ClassifierChain;
use crate::error::{HeapError, check_window};
use crate::model::{HeapModel, TimeWindow};
use crate::output::Suspect;
use crate::trees::TreeSeries;

/// What to rank.
#[derive(Debug, Clone)]
pub struct GrowthQuery {
    /// The grouping, e.g. `site` or `closest-user-frame`.
    pub classifiers: ClassifierChain,
    /// The window; `None` is the whole run.
    pub window: Option<TimeWindow>,
    /// Number of sampling intervals (the series has one more point); at least 2.
    pub samples: usize,
    /// Return at most this many suspects.
    pub limit: Option<usize>,
}

impl GrowthQuery {
    /// The whole run, 64 intervals, no limit.
    pub fn new(classifiers: ClassifierChain) -> Self {
        GrowthQuery {
            classifiers,
            window: None,
            samples: 64,
            limit: None,
        }
    }
}

/// A node is dropped when one child carries at least this share of its growth.
const CHILD_DOMINANCE: f64 = 0.9;

/// Ranks the groups of `query.classifiers` by growth over the window, best suspect first.
pub fn growth_suspects(model: &HeapModel, query: &GrowthQuery) -> Result<Vec<Suspect>, HeapError> {
    let window = check_window(query.window, model.run())?;
    let samples = query.samples.max(2) as u128;
    let span = window.duration_ns() as u128;
    let mut times: Vec<u64> = (0..=samples)
        .map(|i| window.start_ns + (span * i / samples) as u64)
        .collect();
    // A coalesced model shows the instant at or before each time: fit on those.
    let mut snapped: Vec<u64> = times.iter().map(|&t| model.exact_in(window, t)).collect();
    snapped.dedup();
    if snapped.len() >= 2 {
        times = snapped;
    }
    let mut series = TreeSeries::compute(model, &query.classifiers, &times)?;
    let (exit_bytes, exit_objects) = series.column(model.run().end_ns, true);
    // Groups that exist only at exit are zero at every sampled time.
    let nodes = series.node_count();
    for column in series.bytes.iter_mut().chain(series.objects.iter_mut()) {
        column.resize(nodes, 0);
    }
    let times = series.times().to_vec();
    let k_count = times.len();
    let children = series.tree.children();
    let bytes_of =
        |node: usize| -> Vec<u64> { series.bytes.iter().map(|column| column[node]).collect() };
    let growth =
        |node: usize| series.bytes[k_count - 1][node] as i64 - series.bytes[0][node] as i64;

    let mut suspects = Vec::new();
    for node in 1..series.node_count() {
        let g = growth(node);
        if g <= 0 {
            continue;
        }
        let dominated = children[node]
            .iter()
            .any(|&c| growth(c as usize) as f64 >= CHILD_DOMINANCE * g as f64);
        if dominated {
            continue;
        }
        let values = bytes_of(node);
        let (r_squared, slope_per_ns) = linear_fit(&times, &values);
        let monotonicity = monotonicity(&values);
        let persistence = persistence(&values);
        let objects: Vec<u64> = series.objects.iter().map(|column| column[node]).collect();
        let full_key = series.full_key(node as u32);
        suspects.push(Suspect {
            key: full_key.last().cloned().unwrap_or_default(),
            full_key,
            growth_bytes: g,
            growth_objects: objects[k_count - 1] as i64 - objects[0] as i64,
            start_bytes: values[0],
            end_bytes: values[k_count - 1],
            max_bytes: values.iter().copied().max().unwrap_or(0),
            live_at_exit_bytes: exit_bytes.get(node).copied().unwrap_or(0),
            live_at_exit_objects: exit_objects.get(node).copied().unwrap_or(0),
            monotonicity,
            r_squared,
            slope_bytes_per_s: slope_per_ns * 1e9,
            persistence,
            score: g as f64 * monotonicity * r_squared * persistence,
        });
    }
    suspects.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.growth_bytes.cmp(&a.growth_bytes))
            .then_with(|| a.full_key.cmp(&b.full_key))
    });
    if let Some(limit) = query.limit {
        suspects.truncate(limit);
    }
    Ok(suspects)
}

/// Net rise over total variation, clamped to `[0, 1]`.
fn monotonicity(values: &[u64]) -> f64 {
    let variation: f64 = values.windows(2).map(|w| w[0].abs_diff(w[1]) as f64).sum();
    let rise = *values.last().unwrap_or(&0) as f64 - *values.first().unwrap_or(&0) as f64;
    if variation == 0.0 {
        0.0
    } else {
        (rise / variation).clamp(0.0, 1.0)
    }
}

/// Twice the share of the net growth made in the second half, clamped to `[0, 1]`.
fn persistence(values: &[u64]) -> f64 {
    let (first, mid, last) = (
        values[0] as f64,
        values[values.len() / 2] as f64,
        values[values.len() - 1] as f64,
    );
    if last <= first {
        0.0
    } else {
        (2.0 * (last - mid) / (last - first)).clamp(0.0, 1.0)
    }
}

/// R² and slope (per ns) of the least-squares line through `(times, values)`.
fn linear_fit(times: &[u64], values: &[u64]) -> (f64, f64) {
    let n = times.len() as f64;
    let x0 = times[0] as f64;
    let xs: Vec<f64> = times.iter().map(|&t| t as f64 - x0).collect();
    let mean_x = xs.iter().sum::<f64>() / n;
    let mean_y = values.iter().map(|&v| v as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, &y) in xs.iter().zip(values) {
        let (dx, dy) = (x - mean_x, y as f64 - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx == 0.0 || syy == 0.0 {
        return (0.0, 0.0);
    }
    ((sxy * sxy / (sxx * syy)).clamp(0.0, 1.0), sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonicity_separates_growth_from_churn() {
        assert_eq!(monotonicity(&[0, 1, 2, 3]), 1.0);
        assert_eq!(monotonicity(&[0, 10, 0, 10, 0]), 0.0);
        assert!((monotonicity(&[0, 10, 0, 10]) - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(monotonicity(&[5, 5, 5]), 0.0);
    }

    #[test]
    fn persistence_separates_leaks_from_warm_up() {
        assert_eq!(persistence(&[0, 1, 2, 3, 4]), 1.0);
        assert_eq!(persistence(&[0, 4, 4, 4, 4]), 0.0);
        assert_eq!(persistence(&[0, 1, 3, 3, 4]), 0.5);
        assert_eq!(persistence(&[4, 3, 2]), 0.0);
    }

    #[test]
    fn linear_fit_of_a_line_is_perfect() {
        let (r2, slope) = linear_fit(&[10, 20, 30, 40], &[100, 200, 300, 400]);
        assert!((r2 - 1.0).abs() < 1e-12);
        assert!((slope - 10.0).abs() < 1e-12);
        assert_eq!(linear_fit(&[1, 2, 3], &[7, 7, 7]), (0.0, 0.0));
    }
}
