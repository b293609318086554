//! The recorded processes and their threads: who allocated, as the traces name them.

use crate::ids::ProcessId;

/// A recorded process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid (0 when unknown).
    pub ppid: u32,
    /// A readable name (the executable's file name).
    pub name: String,
}

/// A thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Its process.
    pub process: ProcessId,
    /// The kernel's thread id.
    pub tid: u32,
    /// Its name (empty when unnamed).
    pub name: String,
}
