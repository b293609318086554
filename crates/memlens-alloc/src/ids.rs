//! Dense ids of the model's tables: blocks, threads, processes, sites and bins. Each is
//! an index into its table, so lookups are array reads.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as a table index.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A block: index into [`crate::AllocModel::blocks`] (blocks are sorted by allocation time).
    BlockId
);
id_type!(
    /// A thread of some process: index into [`crate::AllocModel::threads`].
    ThreadId
);
id_type!(
    /// A recorded process (one trace file): index into [`crate::AllocModel::processes`].
    ProcessId
);
id_type!(
    /// An allocation site (the allocating function with file:line): index into
    /// [`crate::AllocModel::sites`]. Site 0 is always the unknown site.
    SiteId
);
id_type!(
    /// A bin (an address region of the real run, or a pool bin of a replay): index into
    /// [`crate::AllocModel::bins`].
    BinId
);

impl SiteId {
    /// The site of blocks whose stack was not recorded or not resolved.
    pub const UNKNOWN: SiteId = SiteId(0);
}
