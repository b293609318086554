//! The memlens viewer's server: a local HTTP server that serves the web app embedded in
//! the binary and routes each lens's API to it; and the self-contained HTML report,
//! which is the same web app with the lenses' answers written into the page.
//!
//! Responsibilities and guarantees:
//!
//! - **No analysis here.** Every number comes from `memlens-heap`, `memlens-alloc` and
//!   `memlens-cache`; the lenses cache the engines' results and turn them into wire
//!   documents ([`protocol`] and each lens's `wire.rs`).
//! - **Every lens through one door.** A lens implements [`LensApi`]: an id, a tab, its
//!   answers, and the answers a report embeds. The server and the report know no lens
//!   by name: [`HeapLens`] (heap evolution), [`CacheLens`] and [`AllocLens`] plug in
//!   the same way. A lens still being read is a [`PendingLens`] until it is ready.
//! - **Fast steps.** The heap lens answers a time-travel step in milliseconds even for
//!   10 M allocations (see [`heap`]); the other lenses keep their recent answers.
//! - **Lets no one in.** Loopback only unless the user explicitly asks otherwise, an
//!   unguessable token in every URL, loopback `Host` headers only, `GET` without a body
//!   and bounded URIs and query lists ([`server`]).
//! - **A fresh clone builds it.** `build.rs` builds `web/` with npm into `OUT_DIR`;
//!   without npm the binary embeds a page saying what to install ([`assets`]).
//!
//! Data flow: the CLI builds the lenses with data in a trace ([`HeapLens::new`],
//! [`AllocLens::new`], [`CacheLens::new`]) and a [`RunInfo`], then either
//! [`Viewer::bind`] + [`Viewer::run`] (`memlens view`), or [`report_html`]
//! (`memlens report`).
#![deny(missing_docs)]

pub mod alloc;
pub mod assets;
mod browser;
pub mod cache;
mod error;
pub mod heap;
pub mod lens_api;
mod live;
mod pending;
pub mod protocol;
mod report;
mod run_info;
pub mod security;
pub mod server;
pub mod typescript;

pub use alloc::AllocLens;
pub use browser::open_in_browser;
pub use cache::{CacheLens, ReferenceSource};
pub use error::{ApiError, ServeError};
pub use heap::{Engine, EngineOptions, HeapLens, check_points};
pub use lens_api::{ApiBody, LensApi, ReportRequest};
pub use live::{LiveLenses, LiveStatus, LiveWire};
pub use pending::{NOT_READY, PendingLens};
pub use report::{ReportError, report_document, report_html};
pub use run_info::RunInfo;
pub use server::{Viewer, ViewerConfig};
