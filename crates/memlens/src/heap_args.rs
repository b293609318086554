//! The arguments the heap-lens commands (`tree`, `growth`, `view`, `report`) share:
//! `--by` lists, times and windows, each checked against the run before the events are
//! read (by the heap engine's `time_in_run` and `window_in_run`), with the engine's
//! errors turned into usage errors (exit status 2).

use anyhow::Result;
use memlens_heap::{ClassifierChain, ClassifierOptions, HeapError, TimeWindow, parse_classifiers};
use memlens_ingest::TraceInput;

use crate::UsageError;

/// The grouping of `tree`, `growth` and `diff` when `--by` is not given: it suits C, C++
/// and Rust programs alike.
pub const DEFAULT_BY: &str = "closest-user-frame";

/// The run as the model sees it, known from the metadata alone: from the process start
/// (time 0) to the last record of the trace.
pub fn run_window(input: &TraceInput) -> TimeWindow {
    TimeWindow {
        start_ns: 0,
        end_ns: input.run_end_ns(),
    }
}

/// Parses a `--by` list with the `--domain` prefixes; a bad list is a usage error whose
/// message lists the valid classifier names.
pub fn classifier_chain(by: &str, domains: &[String]) -> Result<ClassifierChain> {
    let options = ClassifierOptions {
        domain_prefixes: domains.to_vec(),
        ..ClassifierOptions::default()
    };
    parse_classifiers(by, options).map_err(usage)
}

/// A query error of the engine (a time outside the run, no marks, …) as a usage error:
/// its message is already one sentence naming the argument at fault.
pub fn usage(error: HeapError) -> anyhow::Error {
    UsageError(error.to_string()).into()
}

/// Parses the time given to option `arg` (`1.5s`, `200ms`, `50%` of the run) and checks
/// that it lies inside the run.
pub fn parse_time(arg: &str, text: &str, run: TimeWindow) -> Result<u64> {
    memlens_heap::time_in_run(arg, text, run).map_err(usage)
}

/// The window of `--from` and `--to`, or `None` for the whole run.
pub fn window(from: Option<&str>, to: Option<&str>, run: TimeWindow) -> Result<Option<TimeWindow>> {
    memlens_heap::window_in_run(from, to, run).map_err(usage)
}
