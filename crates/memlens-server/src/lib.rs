//! The memlens viewer's server: a local HTTP server that holds one heap model, answers
//! a small JSON API from the heap engine, and serves the web app embedded in the
//! binary; and the self-contained HTML report, which is the same web app with the
//! API's answers written into the page.
//!
//! Responsibilities and guarantees:
//!
//! - **No analysis here.** Every number comes from `memlens-heap`; this crate caches
//!   the engine's results ([`Engine`]) and turns them into JSON ([`protocol`]).
//! - **Fast steps.** Memory-tree series are built once per classifier list (one pass
//!   over the allocations); a step to a snapshot time is a cache hit, and a step to any
//!   other time adds that time to a small series with `add_time`, so it costs
//!   milliseconds even for 10 M allocations (`cargo bench -p memlens-server --bench
//!   time_step` measures it).
//! - **Lets no one in.** Loopback only unless the user explicitly asks otherwise, an
//!   unguessable token in every URL, loopback `Host` headers only, `GET` without a body
//!   and bounded URIs and query lists ([`server`]).
//! - **A fresh clone builds it.** `build.rs` builds `web/` with npm into `OUT_DIR`;
//!   without npm the binary embeds a page saying what to install ([`assets`]).
//!
//! Data flow: the CLI builds a `HeapModel` and a [`RunInfo`], then either
//! [`Viewer::bind`] + [`Viewer::run`] (`memlens view`), or [`Engine::new`] +
//! [`Engine::report_document`] + [`report_html`] (`memlens report`).
#![deny(missing_docs)]

pub mod alloc;
pub mod assets;
pub mod cache;
mod drill;
mod engine;
mod error;
pub mod lens_api;
pub mod protocol;
mod report;
pub mod request;
mod run_info;
pub mod security;
mod series_cache;
pub mod server;
mod snapshots;
mod worker;

pub use alloc::AllocLens;
pub use cache::{CacheLens, ReferenceSource};
pub use engine::{Engine, EngineOptions};
pub use error::{ApiError, ServeError};
pub use lens_api::{ApiBody, LensApi};
pub use report::{ReportError, report_html};
pub use run_info::RunInfo;
pub use server::{Viewer, ViewerConfig};
pub use snapshots::{Snapshot, SnapshotKind, snapshot_plan};
