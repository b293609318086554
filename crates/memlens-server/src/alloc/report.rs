//! What a report embeds of the allocation map: the requests the page (`web/src/alloc`)
//! makes when it opens on the whole run with its default drawing options, at its
//! default size, for the real run and for one pool replay.
//!
//! The page's layout decides some parameters (image sizes, sample counts), so the
//! constants below mirror it; a page of another width finds the answer of the same
//! window at this size and scales it (`web/src/alloc/api.ts`). Grid tiles are embedded
//! for the first levels only — a pyramid of at most [`TILE_LEVELS`] — and deeper tiles
//! are cut from the nearest coarser one. Brushing (`block`) needs the model itself and
//! is not embedded.

use super::wire::MetaWire;
use super::{AllocLens, Drawn};
use crate::lens_api::ReportRequest;

/// The page width the embedded images are drawn for: `lens.ts` lays out `1300` px
/// when the panel has no width yet.
const PAGE_WIDTH: u64 = 1300;
/// The main view's width at [`PAGE_WIDTH`] (`lens.ts`: page − side panel (300) − 20 −
/// gutter (118, `main_view.ts`) − context view (84, `context_view.ts`) − 10).
const MAIN_WIDTH: u64 = PAGE_WIDTH - 300 - 20 - 118 - 84 - 10;
/// The main view's and context view's height (`lens.ts`).
const MAIN_HEIGHT: u64 = 420;
/// The context view's width (`context_view.ts`).
const CONTEXT_WIDTH: u64 = 84;
/// Grid tiles' side (`tiles.ts`).
const TILE_SIZE: u64 = 256;
/// The occupancy bar's height (`occupancy_bar.ts`).
const BAR_HEIGHT: u64 = 26;
/// The stacked bars' bar height, gap and count (`stacked_bars.ts`).
const STACK_BAR_H: u64 = 14;
const STACK_GAP: u64 = 3;
const STACK_MAX_BARS: usize = 48;
/// Bins in the grid of bins and their occupancy bars' height (`bin_grid.ts`).
const GRID_BINS: usize = 24;
const GRID_BAR_HEIGHT: u64 = 8;

/// The grid levels (`zx`, `zy`) embedded for the real run: the whole run in one tile,
/// and the levels the main view asks for on the whole run at widths from 257 to 2048
/// pixels (`zy` is 1 at its height of 420): 29 tiles.
pub const TILE_LEVELS: [(u32, u32); 4] = [(0, 0), (1, 1), (2, 1), (3, 1)];
/// The levels embedded for the replay: 13 tiles.
const REPLAY_TILE_LEVELS: [(u32, u32); 3] = [(0, 0), (1, 1), (2, 1)];

/// The most blocks whose pool replay a report embeds: a replay is a second model of
/// the run (as large as the first) with its own tiles, so a report of a longer run
/// leaves the replay to `memlens view`, where it is computed when asked for.
pub const REPORT_REPLAY_MAX_BLOCKS: usize = 1_000_000;

/// The pool configuration a report replays: the one the page's replay field suggests
/// (`controls.ts`), with the heap first-fit.
pub const REPORT_POOL: &str = "16:512,32:512,64:256,128:128";

/// The page's default drawing options (`lens.ts`: colour by thread, α 0.5, plateau
/// cushions).
const DRAW: [(&str, &str); 3] = [
    ("alpha", "0.5"),
    ("color", "thread"),
    ("cushion", "plateau"),
];

/// The whole-run strip's picture as the page asks for it (`whole_run_strip.ts`): one
/// pixel per time column of the engine's grid, scaled by the page.
const WHOLE_RUN_WIDTH: u32 = memlens_alloc::whole_run::COLUMNS as u32;
const WHOLE_RUN_HEIGHT: u32 = 128;

/// The page's default occupancy bars (`lens.ts`: antialiased, plateau cushions, α 0.5).
const BAR: [(&str, &str); 3] = [
    ("alpha", "0.5"),
    ("profile", "plateau"),
    ("style", "antialiased"),
];

/// Every request of the report: the real run's, then the replay's if it replays.
pub(super) fn requests(lens: &AllocLens) -> Vec<ReportRequest> {
    let mut requests = page_requests(&lens.real, &[], &TILE_LEVELS);
    let replay = [("pool", REPORT_POOL), ("overflow", "first-fit")];
    let query = replay
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    // A model the suggested pools cannot replay has no replay in its report, nor has a
    // long run (see `REPORT_REPLAY_MAX_BLOCKS`).
    if lens.real.model.blocks().len() > REPORT_REPLAY_MAX_BLOCKS {
        return requests;
    }
    if let Ok(drawn) = lens.drawn(&query) {
        requests.extend(page_requests(&drawn, &replay, &REPLAY_TILE_LEVELS));
    }
    requests
}

/// The requests of one model's page, each with the query that selects the model.
struct Page<'a> {
    model: &'a [(&'a str, &'a str)],
    /// The whole run, `t0` and `t1` as the page writes them.
    window: [(&'static str, String); 2],
    requests: Vec<ReportRequest>,
}

impl Page<'_> {
    /// Adds `route` with the model's query, `fixed` and `more`.
    fn push(&mut self, route: &str, fixed: &[(&str, &str)], more: &[(&str, String)]) {
        let query = self
            .model
            .iter()
            .chain(fixed)
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .chain(more.iter().map(|(k, v)| ((*k).to_owned(), v.clone())))
            .collect();
        self.requests.push(ReportRequest {
            route: route.to_owned(),
            query,
        });
    }

    /// Adds `route` over the whole run.
    fn push_window(&mut self, route: &str, fixed: &[(&str, &str)], more: &[(&str, String)]) {
        let mut all = self.window.to_vec();
        all.extend_from_slice(more);
        self.push(route, fixed, &all);
    }
}

/// The requests of the page on `drawn` (selected by `model`: empty for the real run).
fn page_requests(
    drawn: &Drawn,
    model: &[(&str, &str)],
    levels: &[(u32, u32)],
) -> Vec<ReportRequest> {
    let meta = AllocLens::meta(drawn);
    let mut page = Page {
        model,
        window: [
            ("t0", meta.run.start_ns.to_string()),
            ("t1", meta.run.end_ns.to_string()),
        ],
        requests: Vec::new(),
    };
    page.push("meta", &[], &[]);
    for &(zx, zy) in levels {
        for x in 0..1u64 << zx {
            for y in 0..1u64 << zy {
                let tile = [
                    ("zx", zx.to_string()),
                    ("zy", zy.to_string()),
                    ("x", x.to_string()),
                    ("y", y.to_string()),
                    ("size", TILE_SIZE.to_string()),
                ];
                page.push("tile", &DRAW, &tile);
            }
        }
    }
    let context = [
        ("w", CONTEXT_WIDTH.to_string()),
        ("h", MAIN_HEIGHT.to_string()),
    ];
    page.push("tile", &DRAW, &context);
    let bar = [("w", MAIN_WIDTH.to_string()), ("h", BAR_HEIGHT.to_string())];
    page.push_window("bar", &BAR, &bar);
    let samples = [("samples", (MAIN_WIDTH / 3).max(50).to_string())];
    page.push_window("metrics", &[], &samples);
    stacked_bars(&mut page, &meta);
    bin_grid(&mut page, &meta);
    if meta.whole_run.is_some() {
        let size = [
            ("w", WHOLE_RUN_WIDTH.to_string()),
            ("h", WHOLE_RUN_HEIGHT.to_string()),
        ];
        page.push("whole_run", &[], &size);
    }
    page.requests
}

/// The stacked occupancy bars of the bins with blocks (`stacked_bars.ts`).
fn stacked_bars(page: &mut Page<'_>, meta: &MetaWire) {
    let ids: Vec<String> = meta
        .bins
        .iter()
        .filter(|b| b.blocks > 0)
        .take(STACK_MAX_BARS)
        .map(|b| b.id.to_string())
        .collect();
    if ids.is_empty() {
        return;
    }
    let bars = [
        ("bins", ids.join(",")),
        ("w", MAIN_WIDTH.to_string()),
        ("bar_h", STACK_BAR_H.to_string()),
        ("gap", STACK_GAP.to_string()),
    ];
    page.push_window("bars", &BAR, &bars);
}

/// The grid of bins correlated by time (`bin_grid.ts`, the default): each shown bin's
/// map and occupancy bar over the whole run.
fn bin_grid(page: &mut Page<'_>, meta: &MetaWire) {
    let mut shown: Vec<_> = meta
        .bins
        .iter()
        .filter(|b| b.blocks > 0 || b.kind == "pool" || b.kind == "heap")
        .collect();
    if shown.len() > GRID_BINS {
        shown.sort_by_key(|b| std::cmp::Reverse(b.blocks));
        shown.truncate(GRID_BINS);
        shown.sort_by_key(|b| b.id);
    }
    let height = (560 / shown.len().max(1) as u64).clamp(40, 72);
    for bin in shown {
        let map = [
            ("bins", bin.id.to_string()),
            ("a0", bin.axis_start.to_string()),
            ("a1", bin.axis_end.max(bin.axis_start + 1).to_string()),
            ("w", MAIN_WIDTH.to_string()),
            ("h", height.to_string()),
        ];
        page.push_window("tile", &DRAW, &map);
        let bar = [
            ("bin", bin.id.to_string()),
            ("w", MAIN_WIDTH.to_string()),
            ("h", GRID_BAR_HEIGHT.to_string()),
        ];
        page.push_window("bar", &BAR, &bar);
    }
}
