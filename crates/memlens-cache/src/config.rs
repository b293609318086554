//! How a cache hierarchy is configured: levels, replacement, write policy, inclusion.
//!
//! These are plain values the user (or the CLI's `--level L1:32K:8:64:lru`, parsed by
//! [`crate::spec`]) fills in. Nothing here is validated; [`crate::Hierarchy::new`]
//! checks every level's geometry and reports the first problem by level name.

/// Which line a full set gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacement {
    /// Least recently used: the line whose last demand access is oldest.
    Lru,
    /// First in, first out: the line filled longest ago; hits change nothing.
    Fifo,
    /// A uniformly random line, drawn from a generator seeded per level.
    Random {
        /// The seed; the same seed and trace give the same evictions.
        seed: u64,
    },
    /// Tree pseudo-LRU: one bit per inner node of a binary tree over the ways.
    /// Needs a power-of-two number of ways (at most 64).
    TreePlru,
}

impl Replacement {
    /// Returns the policy's name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Replacement::Lru => "lru",
            Replacement::Fifo => "fifo",
            Replacement::Random { .. } => "random",
            Replacement::TreePlru => "plru",
        }
    }
}

/// What a store that hits does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritePolicy {
    /// Mark the line dirty; write it to the next level only when it is evicted.
    WriteBack,
    /// Pass every store on to the next level; lines are never dirty.
    WriteThrough,
}

/// How the contents of the levels relate to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inclusion {
    /// Every line of a level is also in every level below it. A line evicted from a
    /// lower level is invalidated in all levels above it (back-invalidation); dirty
    /// copies above are merged into its write-back.
    Inclusive,
    /// Fills go through every level on the way (like inclusive), but evictions do not
    /// invalidate anything above. Clean victims are dropped; dirty ones are written
    /// back to the next level. This is Cachegrind's and pycachesim's model.
    NonInclusive,
    /// A line lives in at most one level. Misses fill the first level only; every
    /// victim of level `i` (clean or dirty) moves into level `i + 1`, whose own victim
    /// moves further down; a hit below the first level moves the line up and out.
    Exclusive,
}

impl Inclusion {
    /// Returns the mode's name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Inclusion::Inclusive => "inclusive",
            Inclusion::NonInclusive => "non-inclusive",
            Inclusion::Exclusive => "exclusive",
        }
    }
}

/// One cache level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelConfig {
    /// The name used in statistics and error messages (`L1`, `D1`, `LL`, …).
    pub name: String,
    /// The capacity in bytes: `sets × ways × line_size`.
    pub size: u64,
    /// The associativity (lines per set).
    pub ways: u32,
    /// The line size in bytes; a power of two, at least 4.
    pub line_size: u32,
    /// The replacement policy.
    pub replacement: Replacement,
    /// What a store that hits does.
    pub write_policy: WritePolicy,
    /// Whether a store that misses fetches and fills the line (write-allocate) or is
    /// passed on to the next level without filling (no-write-allocate).
    pub write_allocate: bool,
}

impl LevelConfig {
    /// Makes a write-back, write-allocate LRU level.
    pub fn new(name: impl Into<String>, size: u64, ways: u32, line_size: u32) -> LevelConfig {
        LevelConfig {
            name: name.into(),
            size,
            ways,
            line_size,
            replacement: Replacement::Lru,
            write_policy: WritePolicy::WriteBack,
            write_allocate: true,
        }
    }

    /// Returns the same level with another replacement policy.
    pub fn with_replacement(self, replacement: Replacement) -> LevelConfig {
        LevelConfig {
            replacement,
            ..self
        }
    }

    /// Returns the same level with another write policy and write-allocate choice.
    pub fn with_writes(self, write_policy: WritePolicy, write_allocate: bool) -> LevelConfig {
        LevelConfig {
            write_policy,
            write_allocate,
            ..self
        }
    }
}

/// A whole hierarchy, first level (closest to the CPU) first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HierarchyConfig {
    /// The levels, from the one closest to the CPU to the last before memory.
    pub levels: Vec<LevelConfig>,
    /// How the levels' contents relate.
    pub inclusion: Inclusion,
}

impl HierarchyConfig {
    /// Makes a non-inclusive hierarchy of these levels.
    pub fn new(levels: Vec<LevelConfig>) -> HierarchyConfig {
        HierarchyConfig {
            levels,
            inclusion: Inclusion::NonInclusive,
        }
    }

    /// Returns the same hierarchy with another inclusion mode.
    pub fn with_inclusion(self, inclusion: Inclusion) -> HierarchyConfig {
        HierarchyConfig { inclusion, ..self }
    }
}
