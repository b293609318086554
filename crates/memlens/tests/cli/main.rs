//! The CLI's integration tests, one module per command or concern, in one test binary
//! so that the shared helpers in `support/` compile once. Most run real programs
//! (compiled from `tests/programs/`, `tests/heap_programs/` and
//! `tests/alloc_programs/`) under the recorder; see `support` for what they need.
//! Run them alone with `cargo test -p memlens --test cli`.

mod support;

mod alloc_cli;
mod alloc_window;
mod attach;
mod bad_input;
mod cache_cli;
mod cache_record;
mod diff_cli;
mod export_parquet;
mod export_pprof;
mod export_profiles;
mod free_stacks;
mod heap_cli;
mod heaptrack_counts;
mod java;
mod latency;
mod processes;
mod real_programs;
mod robustness;
mod rust_programs;
mod same_site;
mod sampling;
mod scale;
mod sites;
mod viewer_live;
mod viewer_report;
mod viewer_security;
