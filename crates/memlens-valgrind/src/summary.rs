//! What a recording produced, counted while the stream is encoded: the numbers
//! behind `memlens cache record`'s closing line and its warnings.

/// What a recording produced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Data references (reads, writes, modifies).
    pub data: u64,
    /// Instruction fetches.
    pub fetches: u64,
    /// Reference sites (instruction operands) seen.
    pub sites: u64,
    /// Regions declared in the trace.
    pub regions: u64,
    /// Heap blocks allocated.
    pub allocations: u64,
    /// `MEMLENS_START`/`MEMLENS_STOP` requests seen.
    pub roi_marks: u64,
    /// Sites that got no label because all 65,535 label ids were taken.
    pub unlabelled_sites: u64,
    /// How the stream ended (`exit`), or `None` when it stopped without an end
    /// record (the program called exec or was killed).
    pub ended: Option<String>,
}

impl Summary {
    /// All references.
    pub fn references(&self) -> u64 {
        self.data + self.fetches
    }

    /// True when the tool recorded nothing at all, not even a site: Valgrind or the
    /// tool stopped before the program ran.
    pub fn is_empty(&self) -> bool {
        self.references() == 0 && self.sites == 0
    }
}
