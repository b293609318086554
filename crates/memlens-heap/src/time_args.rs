//! Times and windows as users give them to the heap commands (`--at 1.5s`, `--from
//! 50%`, `--to 2s`), read with the one time grammar of `memlens-vocab` and checked
//! against the recorded run before any event is read, each problem one sentence that
//! names the option.

use crate::error::HeapError;
use crate::model::TimeWindow;
use crate::snapshots::SnapshotTimes;
use crate::units::format_duration;

/// The time given to option `arg` (`1.5s`, `200ms`, `50%` of the run), checked to lie
/// inside `run`.
pub fn time_in_run(arg: &str, text: &str, run: TimeWindow) -> Result<u64, HeapError> {
    let time_ns = memlens_vocab::parse_time(text, run.start_ns, run.end_ns).map_err(|e| {
        HeapError::BadArgument {
            message: e.for_argument(arg),
        }
    })?;
    if !run.contains(time_ns) {
        let outside = HeapError::TimeOutsideRun { time_ns, run };
        return Err(HeapError::BadArgument {
            message: format!("`{arg} {}`: {outside}", text.trim()),
        });
    }
    Ok(time_ns)
}

/// The window of `--from` and `--to` (either may be missing), or `None` for the whole
/// run. A window that ends before it starts is an error.
pub fn window_in_run(
    from: Option<&str>,
    to: Option<&str>,
    run: TimeWindow,
) -> Result<Option<TimeWindow>, HeapError> {
    if from.is_none() && to.is_none() {
        return Ok(None);
    }
    let start_ns = from.map_or(Ok(run.start_ns), |t| time_in_run("--from", t, run))?;
    let end_ns = to.map_or(Ok(run.end_ns), |t| time_in_run("--to", t, run))?;
    if end_ns < start_ns {
        return Err(HeapError::BadArgument {
            message: format!(
                "`--to` ({}) is before `--from` ({}); the window must not end before it starts",
                format_duration(end_ns),
                format_duration(start_ns)
            ),
        });
    }
    Ok(Some(TimeWindow { start_ns, end_ns }))
}

/// The times a user named — explicit snapshot times and the window's ends — at which a
/// coalesced model must be exact for `times` and `window` to be answered exactly (the
/// ingest layer builds the model with them as instants).
pub fn named_times(times: Option<&SnapshotTimes>, window: Option<TimeWindow>) -> Vec<u64> {
    let mut named = match times {
        Some(SnapshotTimes::Explicit(times)) => times.clone(),
        _ => Vec::new(),
    };
    named.extend(window.iter().flat_map(|w| [w.start_ns, w.end_ns]));
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: TimeWindow = TimeWindow {
        start_ns: 0,
        end_ns: 4_000_000_000,
    };

    #[test]
    fn times_take_units_and_percentages_of_the_run() {
        let at = |text| time_in_run("--at", text, RUN).unwrap();
        assert_eq!(at("1.5s"), 1_500_000_000);
        assert_eq!(at("200ms"), 200_000_000);
        assert_eq!(at("10us"), 10_000);
        assert_eq!(at("10 µs"), 10_000);
        assert_eq!(at("500ns"), 500);
        assert_eq!(at("25%"), 1_000_000_000);
        assert_eq!(at("100%"), RUN.end_ns);
    }

    #[test]
    fn bad_times_are_errors_naming_the_argument() {
        let error = |text| time_in_run("--at", text, RUN).unwrap_err().to_string();
        assert!(error("5").contains("`--at 5` is not a time"));
        assert!(error("-1s").contains("is not a time"));
        assert!(error("1.5 parsecs").contains("is not a time"));
        assert!(error("101%").contains("between 0 and 100"));
        let outside = error("5s");
        assert!(outside.contains("outside the recorded run"), "{outside}");
    }

    #[test]
    fn windows_default_to_the_run_ends_and_must_not_be_reversed() {
        assert_eq!(window_in_run(None, None, RUN).unwrap(), None);
        assert_eq!(
            window_in_run(Some("1s"), None, RUN).unwrap(),
            Some(TimeWindow {
                start_ns: 1_000_000_000,
                end_ns: RUN.end_ns
            })
        );
        let reversed = window_in_run(Some("3s"), Some("1s"), RUN).unwrap_err();
        assert!(
            reversed.to_string().contains("before `--from`"),
            "{reversed}"
        );
    }
}
