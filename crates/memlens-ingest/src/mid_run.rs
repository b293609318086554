//! The one sentence every view shows for a trace that starts mid-run: the recorder
//! was attached to a running process (`memlens attach`), so the blocks it had
//! allocated before are unknown and their frees are counted, not matched.

use memlens_heap::format_duration;
use memlens_trace::Attached;

/// `the trace starts mid-run (attached to PID 4242 at 2026-11-28 04:51:48 UTC, 1.29 s
/// after it started): blocks allocated before are unknown`.
pub fn mid_run_note(attached: &Attached) -> String {
    let age = match attached.process_start_unix_ns {
        0 => String::new(),
        start => format!(
            ", {} after it started",
            format_duration(attached.attach_unix_ns.saturating_sub(start))
        ),
    };
    format!(
        "the trace starts mid-run (attached to PID {} at {}{age}): blocks allocated before are unknown",
        attached.pid,
        utc(attached.attach_unix_ns)
    )
}

/// `YYYY-MM-DD HH:MM:SS UTC` for a time in ns since the Unix epoch (the days-to-civil
/// conversion of Howard Hinnant's `chrono`-compatible date algorithms).
fn utc(unix_ns: u64) -> String {
    let secs = unix_ns / 1_000_000_000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_the_process_the_time_and_its_age() {
        let attached = Attached {
            pid: 4242,
            attach_unix_ns: 1_795_841_508_041_400_793,
            process_start_unix_ns: 1_795_841_506_750_000_000,
        };
        assert_eq!(
            mid_run_note(&attached),
            "the trace starts mid-run (attached to PID 4242 at 2026-11-28 04:51:48 UTC, \
             1.291 s after it started): blocks allocated before are unknown"
        );
        let unknown_start = Attached {
            process_start_unix_ns: 0,
            ..attached
        };
        assert!(mid_run_note(&unknown_start).contains("04:51:48 UTC): blocks"));
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000_000_000), "2000-02-29 00:00:00 UTC");
    }
}
