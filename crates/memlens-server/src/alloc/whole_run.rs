//! The allocation map's whole-run strip at the edge: the wire form of the engine's
//! [`WholeRunMap`] (the run, its rows and where the address axis jumps) for `meta`, and
//! its picture at any size for `api/alloc/whole_run?w=&h=`.

use std::collections::HashMap;

use memlens_alloc::{AllocModel, RgbaImage, WholeRunMap};

use super::query;
use super::wire::{RangeWire, WholeRunExtentWire, WholeRunWire};
use crate::error::ApiError;

/// The whole run of `model`, for `meta` (none unless the model holds a window and
/// carries the whole run).
pub(super) fn wire(model: &AllocModel) -> Option<WholeRunWire> {
    let map = model.whole_run()?;
    Some(WholeRunWire {
        run: RangeWire {
            start_ns: map.start,
            end_ns: map.end,
        },
        rows: map.rows.len() as u64,
        row_bytes: map.row_bytes,
        extents: extents(map),
    })
}

/// Runs of rows of adjacent addresses, bottom first.
fn extents(map: &WholeRunMap) -> Vec<WholeRunExtentWire> {
    let mut out: Vec<WholeRunExtentWire> = Vec::new();
    let mut previous = None;
    for (i, row) in map.rows.iter().enumerate() {
        let first = row.page.saturating_mul(map.row_bytes);
        let end = first.saturating_add(map.row_bytes);
        let adjacent = previous.is_some_and(|(p, page)| p == row.process && page + 1 == row.page);
        match out.last_mut() {
            Some(last) if adjacent => {
                last.rows += 1;
                last.end = format!("{end:#x}");
            }
            _ => out.push(WholeRunExtentWire {
                process: row.process.0,
                first_row: i as u64,
                rows: 1,
                start: format!("{first:#x}"),
                end: format!("{end:#x}"),
            }),
        }
        previous = Some((row.process, row.page));
    }
    out
}

/// The picture `api/alloc/whole_run` asks for (`w`, `h`: 1024 × 128 by default).
pub(super) fn picture(
    model: &AllocModel,
    q: &HashMap<String, String>,
) -> Result<RgbaImage, ApiError> {
    let (w, h) = (query::side(q, "w", 1024)?, query::side(q, "h", 128)?);
    let Some(map) = model.whole_run() else {
        return Err(ApiError {
            status: 404,
            message: "this allocation map holds the whole run itself, or its reading did not see the whole run: there is no whole-run picture".to_owned(),
        });
    };
    Ok(map.render(w, h))
}
