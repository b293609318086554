//! What `memlens record` says about each trace it has just written, from the process
//! stream alone: the recorder's totals record (written just before the end of a clean
//! run), so the events are not read back. Sentences only; the CLI prints them.

use memlens_heap::{format_bytes, format_duration};

use crate::input::TraceInput;

impl TraceInput {
    /// `/bin/prog (pid 7): 3098 allocations (66.5 MiB requested), 3098 frees, 0
    /// reallocations in 166 ms`; a sampled trace's counts are those of its sample
    /// (`3098 sampled allocations …`), a run that did not end cleanly has none.
    pub fn recorded_line(&self) -> String {
        let md = &self.metadata;
        let name = md
            .process
            .as_ref()
            .map(|p| format!("{} (pid {})", p.exe, p.pid))
            .unwrap_or_default();
        let sampled = if self.sampling().is_some() {
            "sampled "
        } else {
            ""
        };
        let figures = match md.totals {
            Some(t) => format!(
                "{} {sampled}allocations ({} requested), {} frees, {} reallocations in {}",
                t.allocations,
                format_bytes(t.requested_bytes),
                t.frees,
                t.reallocations,
                format_duration(md.end.as_ref().map_or(0, |e| e.0).max(md.last_time))
            ),
            None => "the run did not end cleanly; `memlens summary` reads what was written".into(),
        };
        format!("{name}: {figures}")
    }

    /// What the user should know after the line: the recorder's warnings, how the trace
    /// was sampled, and whether nothing at all was recorded (a statically linked
    /// allocator), one sentence each.
    pub fn recorded_notes(&self) -> Vec<String> {
        let md = &self.metadata;
        let mut notes: Vec<String> = md
            .warnings
            .iter()
            .map(|(_, w)| format!("warning: {w}"))
            .collect();
        notes.extend(self.sampling().map(|s| s.note()));
        if md.totals.is_some_and(|t| t.allocations == 0) || md.event_records == 0 {
            let why = match self.sampling() {
                Some(_) => {
                    "no allocation was sampled; the program allocated little (try a smaller --sample), or"
                }
                None => "no allocation was recorded;",
            };
            notes.push(format!(
                "warning: {why} the program may use a statically linked allocator (jemalloc, mimalloc, …) that LD_PRELOAD cannot see"
            ));
        }
        notes
    }
}
