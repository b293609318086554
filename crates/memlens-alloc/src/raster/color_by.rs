//! What the allocation map's colours show: a block's thread, site or process
//! (categories), or its size, waste, age or allocator latency (continuous).

/// The attribute blocks are coloured by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorBy {
    /// The allocating thread (categorical).
    #[default]
    Thread,
    /// The allocating site (categorical).
    Site,
    /// The process (categorical): for a parent and its forked children.
    Process,
    /// The requested size (continuous, logarithmic).
    Size,
    /// Waste, reserved − requested (continuous, logarithmic).
    Waste,
    /// The block's lifetime (continuous, logarithmic).
    Age,
    /// The allocator latency of the allocating call (continuous, logarithmic; needs a
    /// trace recorded with `--latency`).
    Latency,
}

impl ColorBy {
    /// Number of attributes.
    pub const COUNT: usize = 7;

    /// All attributes, in order.
    pub const ALL: [ColorBy; 7] = [
        ColorBy::Thread,
        ColorBy::Site,
        ColorBy::Process,
        ColorBy::Size,
        ColorBy::Waste,
        ColorBy::Age,
        ColorBy::Latency,
    ];

    /// The attribute's name as the CLI and the viewer spell it.
    pub fn name(self) -> &'static str {
        match self {
            ColorBy::Thread => "thread",
            ColorBy::Site => "site",
            ColorBy::Process => "process",
            ColorBy::Size => "size",
            ColorBy::Waste => "waste",
            ColorBy::Age => "age",
            ColorBy::Latency => "latency",
        }
    }

    /// The attribute named `name`.
    pub fn parse(name: &str) -> Option<ColorBy> {
        ColorBy::ALL.into_iter().find(|c| c.name() == name)
    }

    /// True for thread, site and process.
    pub fn is_categorical(self) -> bool {
        matches!(self, ColorBy::Thread | ColorBy::Site | ColorBy::Process)
    }
}
