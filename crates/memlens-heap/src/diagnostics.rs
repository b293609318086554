//! Counts of odd input the builder met and repaired instead of failing.
//!
//! A trace of a real program is never perfectly tidy: blocks allocated before recording
//! started get freed, an address can be handed out again while we still think it is
//! live (a lost free), clocks of different threads can disagree by a few nanoseconds.
//! The builder repairs each case in a documented way and counts it here, so the CLI can
//! tell the user without the analysis ever panicking.

/// What the builder repaired, by kind. All zero for a clean trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Frees of an address that was not live (blocks allocated before recording
    /// started, or double frees). They are ignored.
    pub unknown_frees: u64,
    /// Allocations at an address that was still live. The older block is ended at the
    /// new allocation's time, as if its free had been lost.
    pub reused_live_addresses: u64,
    /// Reallocations of an address that was not live. The new block is recorded as a
    /// fresh allocation.
    pub unknown_reallocs: u64,
    /// Events whose time was earlier than the previous event's. Their time is raised to
    /// the previous event's time, so the model stays in time order.
    pub out_of_order_events: u64,
    /// Allocations naming a stack id that the stack table never defined. They are moved
    /// to the root (empty) stack.
    pub invalid_stack_refs: u64,
    /// Context entries with a dangling reference (a stack parent or frame, an inline
    /// chain, a type id that does not exist yet). The reference is replaced by the root,
    /// unknown frame or unknown type.
    pub invalid_table_refs: u64,
}

impl Diagnostics {
    /// Whether nothing needed repair.
    pub fn is_clean(&self) -> bool {
        *self == Diagnostics::default()
    }

    /// One English sentence per non-zero count, for the CLI to print.
    pub fn messages(&self) -> Vec<String> {
        let entries = [
            (
                self.unknown_frees,
                "frees of unknown addresses were ignored (blocks allocated before recording started, or double frees)",
            ),
            (
                self.reused_live_addresses,
                "allocations reused a live address; the older block was ended at that time",
            ),
            (
                self.unknown_reallocs,
                "reallocations of unknown addresses were recorded as new allocations",
            ),
            (
                self.out_of_order_events,
                "events were out of time order and were moved to the previous event's time",
            ),
            (
                self.invalid_stack_refs,
                "allocations named an undefined stack and were moved to the empty stack",
            ),
            (
                self.invalid_table_refs,
                "stack, frame or type entries had dangling references that were reset",
            ),
        ];
        entries
            .iter()
            .filter(|(count, _)| *count > 0)
            .map(|(count, what)| format!("{count} {what}."))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_diagnostics_say_nothing() {
        assert!(Diagnostics::default().is_clean());
        assert!(Diagnostics::default().messages().is_empty());
    }

    #[test]
    fn each_count_gets_a_sentence() {
        let d = Diagnostics {
            unknown_frees: 3,
            out_of_order_events: 1,
            ..Default::default()
        };
        let messages = d.messages();
        assert_eq!(messages.len(), 2);
        assert!(messages[0].starts_with("3 frees of unknown addresses"));
    }
}
