//! The two choices every tree query names: what a node's size means ([`Metric`]) and
//! how siblings are ordered ([`SortStrategy`]). A leaf module, shared by the meta tree
//! that applies them, the result types that record them and the JSON protocol.

/// What a node's size means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metric {
    /// Live bytes.
    #[default]
    Bytes,
    /// Live blocks (objects).
    Objects,
}

impl Metric {
    /// Parses `bytes` or `objects`.
    pub fn from_name(name: &str) -> Option<Metric> {
        match name {
            "bytes" => Some(Metric::Bytes),
            "objects" => Some(Metric::Objects),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Bytes => "bytes",
            Metric::Objects => "objects",
        }
    }
}

/// How siblings are ordered (and, through pruning, which survive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortStrategy {
    /// By size in the first tree of the series.
    StartSize,
    /// By size in the last tree of the series.
    EndSize,
    /// By size in the last tree minus size in the first (may be negative).
    #[default]
    AbsoluteGrowth,
}

impl SortStrategy {
    /// Parses the command-line names `start`, `end` and `growth`.
    pub fn from_name(name: &str) -> Option<SortStrategy> {
        match name {
            "start" => Some(SortStrategy::StartSize),
            "end" => Some(SortStrategy::EndSize),
            "growth" => Some(SortStrategy::AbsoluteGrowth),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            SortStrategy::StartSize => "start",
            SortStrategy::EndSize => "end",
            SortStrategy::AbsoluteGrowth => "growth",
        }
    }
}
