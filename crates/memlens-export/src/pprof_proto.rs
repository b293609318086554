//! The messages of pprof's `profile.proto` (github.com/google/pprof, `proto/profile.proto`)
//! that memlens writes, declared for `prost` with the upstream field numbers and types:
//! the wire types, written once here. Strings are indexes into `string_table`, whose
//! entry 0 is the empty string.

/// A profile: sample types, samples and the tables they index.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    /// What each value of a sample is (type and unit).
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// The mapped modules.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// The code locations.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// The functions.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Every string; entry 0 is "".
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// When the profile was taken, ns since the Unix epoch.
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// How long it covers, ns.
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// The sampling period's type.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// The sampling period (1: every allocation).
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments (string indexes).
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The sample type shown by default (a string index of a type).
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// A value's type and unit (string indexes).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueType {
    /// `inuse_space`, …
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// `bytes`, `count`, …
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// Values of one stack with one set of labels.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// The stack, leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Labels (thread, size class).
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// A string or numeric label.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    /// The key (string index).
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// A string value (string index), or 0.
    #[prost(int64, tag = "2")]
    pub str: i64,
    /// A numeric value.
    #[prost(int64, tag = "3")]
    pub num: i64,
    /// The numeric value's unit (string index).
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

/// A mapped module.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    /// Its id (1-based).
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Start of the mapped range.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// End of the mapped range.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// File offset of `memory_start`.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// The file's path (string index).
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// The GNU build id, hex (string index).
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Locations in it are symbolized with function names.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// … with file names.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// … with line numbers.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// … with inlined frames.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// A code address with the source lines it stands for.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    /// Its id (1-based).
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The mapping it lies in, or 0.
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The return address.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Inlined functions first, the out-of-line function last.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

/// A function and line of a location.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Line {
    /// The function.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// The line, or 0.
    #[prost(int64, tag = "2")]
    pub line: i64,
}

/// A function.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Function {
    /// Its id (1-based).
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The demangled name (string index).
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// The name as the symbol table has it (string index).
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// The source file (string index).
    #[prost(int64, tag = "4")]
    pub filename: i64,
}
