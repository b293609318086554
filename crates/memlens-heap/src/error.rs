//! The error values of the heap engine's queries.
//!
//! Every message is one English sentence that names the argument at fault, so the CLI
//! can print it as it is (DESIGN §7). Odd *input data* is not an error: the builder
//! repairs it and counts it in [`Diagnostics`](crate::Diagnostics).

use crate::model::TimeWindow;
use crate::units::format_time;

/// Why a query could not be answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeapError {
    /// A classifier name that the registry does not know.
    #[error("unknown classifier `{name}`; valid classifiers are: {}", .valid.join(", "))]
    UnknownClassifier {
        /// The name as the user wrote it.
        name: String,
        /// Every valid name, in registry order.
        valid: Vec<&'static str>,
    },
    /// An empty classifier list.
    #[error("the classifier list is empty; name at least one classifier, e.g. `site`")]
    NoClassifiers,
    /// `closest-domain-site` without any `--domain` prefix.
    #[error(
        "classifier `closest-domain-site` needs at least one `--domain PREFIX` naming the application's own functions"
    )]
    MissingDomainPrefix,
    /// A request for zero snapshot times (`--points 0` or an empty `--at` list).
    #[error("at least one snapshot time is needed, but zero were requested")]
    NoSnapshotTimes,
    /// Snapshot times were to come from marks, but the window holds none.
    #[error(
        "snapshot times were to come from marks, but the trace has no marks between {} and {}",
        format_time(.window.start_ns),
        format_time(.window.end_ns)
    )]
    NoMarks {
        /// The window that was searched.
        window: TimeWindow,
    },
    /// A requested time outside the recorded run.
    #[error(
        "time {} is outside the recorded run, which spans {} to {}",
        format_time(*.time_ns),
        format_time(.run.start_ns),
        format_time(.run.end_ns)
    )]
    TimeOutsideRun {
        /// The requested time.
        time_ns: u64,
        /// The recorded run.
        run: TimeWindow,
    },
    /// A window that ends before it starts or reaches outside the run.
    #[error(
        "time window {} to {} is empty or reaches outside the recorded run, which spans {} to {}",
        format_time(.window.start_ns),
        format_time(.window.end_ns),
        format_time(.run.start_ns),
        format_time(.run.end_ns)
    )]
    InvalidWindow {
        /// The requested window.
        window: TimeWindow,
        /// The recorded run.
        run: TimeWindow,
    },
    /// A time or window argument that is not a time, or lies outside the run: the
    /// sentence names the option (`` `--at 5` is not a time: … ``).
    #[error("{message}")]
    BadArgument {
        /// The whole sentence.
        message: String,
    },
    /// A timeline resolution of zero points or zero-length buckets.
    #[error("a timeline needs at least one point and buckets longer than zero")]
    ZeroResolution,
    /// A timeline resolution finer than [`MAX_TIMELINE_BUCKETS`] buckets.
    #[error(
        "a timeline of {buckets} buckets was requested, but at most {max} are allowed; choose fewer points or longer buckets",
        max = MAX_TIMELINE_BUCKETS
    )]
    TooManyBuckets {
        /// The number of buckets the resolution asked for.
        buckets: u128,
    },
}

/// The most buckets one timeline query may ask for (16 Mi; the response holds ~80 bytes
/// per bucket).
pub const MAX_TIMELINE_BUCKETS: u128 = 1 << 24;

/// Checks that `window` lies inside `run` and is not reversed; `None` means the run.
pub(crate) fn check_window(
    window: Option<TimeWindow>,
    run: TimeWindow,
) -> Result<TimeWindow, HeapError> {
    let Some(window) = window else { return Ok(run) };
    if window.start_ns > window.end_ns
        || !run.contains(window.start_ns)
        || !run.contains(window.end_ns)
    {
        return Err(HeapError::InvalidWindow { window, run });
    }
    Ok(window)
}
