//! The records a trace holds, as plain Rust values.
//!
//! A trace is a sequence of *streams*: the process stream (metadata: process
//! information, modules, threads, interned stacks, marks, warnings) and one
//! event stream per thread (allocations, frees, reallocations). These types are
//! what the writer takes and the reader returns; their byte layout lives in
//! `encode.rs`/`decode.rs` and is specified in `docs/trace-format.md`.

/// Nanoseconds since the recorded process started (its first recorded clock reading).
pub type TimeNs = u64;

/// A stack id: a node of the interned call-stack prefix tree.
///
/// Invariant: `0` is the root (the empty stack); every other node's parent was
/// defined before it in the process stream, so parents have smaller ids.
pub type StackId = u32;

/// The allocation function a block came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AllocFn {
    /// `malloc`
    Malloc = 0,
    /// `calloc`
    Calloc = 1,
    /// `posix_memalign`
    PosixMemalign = 2,
    /// `aligned_alloc`
    AlignedAlloc = 3,
    /// `memalign`
    Memalign = 4,
    /// `valloc`
    Valloc = 5,
    /// `pvalloc`
    Pvalloc = 6,
}

impl AllocFn {
    /// Every allocation function, in tag order.
    pub const ALL: [AllocFn; 7] = [
        AllocFn::Malloc,
        AllocFn::Calloc,
        AllocFn::PosixMemalign,
        AllocFn::AlignedAlloc,
        AllocFn::Memalign,
        AllocFn::Valloc,
        AllocFn::Pvalloc,
    ];

    /// Converts the numeric code back; `None` for codes this version does not know.
    pub fn from_code(code: u8) -> Option<AllocFn> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// The C function name.
    pub fn name(self) -> &'static str {
        match self {
            AllocFn::Malloc => "malloc",
            AllocFn::Calloc => "calloc",
            AllocFn::PosixMemalign => "posix_memalign",
            AllocFn::AlignedAlloc => "aligned_alloc",
            AllocFn::Memalign => "memalign",
            AllocFn::Valloc => "valloc",
            AllocFn::Pvalloc => "pvalloc",
        }
    }
}

/// One allocation-side event of one thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A block was allocated. `t` is taken after the allocator returned.
    Alloc {
        /// When.
        t: TimeNs,
        /// Thread id (the kernel's tid).
        tid: u32,
        /// The block's address.
        addr: u64,
        /// Requested size in bytes (for calloc, `n * size`).
        size: u64,
        /// The allocating call stack.
        stack: StackId,
        /// Which function allocated it.
        func: AllocFn,
    },
    /// A block was freed. `t` is taken before the allocator was called, so a
    /// later allocation that reuses the address always has a later time.
    Free {
        /// When.
        t: TimeNs,
        /// Thread id.
        tid: u32,
        /// The freed address (never null: `free(NULL)` is not recorded).
        addr: u64,
        /// The call stack of the `free` (`memlens record --free-stacks`); 0, the
        /// empty stack, when it was not recorded.
        stack: StackId,
    },
    /// `realloc`/`reallocarray` moved or resized a block; the block keeps its
    /// identity. `realloc(NULL, n)` is recorded as an [`Event::Alloc`] and
    /// `realloc(p, 0)` that frees as an [`Event::Free`].
    Realloc {
        /// When (after the allocator returned).
        t: TimeNs,
        /// Thread id.
        tid: u32,
        /// The old address.
        old_addr: u64,
        /// The new address (may equal the old one).
        new_addr: u64,
        /// The new requested size.
        size: u64,
        /// The call stack of the realloc.
        stack: StackId,
    },
}

impl Event {
    /// The event's time.
    pub fn time(&self) -> TimeNs {
        match *self {
            Event::Alloc { t, .. } | Event::Free { t, .. } | Event::Realloc { t, .. } => t,
        }
    }

    /// The thread that caused the event.
    pub fn tid(&self) -> u32 {
        match *self {
            Event::Alloc { tid, .. } | Event::Free { tid, .. } | Event::Realloc { tid, .. } => tid,
        }
    }

    /// The same event at time `t`.
    pub fn with_time(mut self, t: TimeNs) -> Event {
        match &mut self {
            Event::Alloc { t: at, .. }
            | Event::Free { t: at, .. }
            | Event::Realloc { t: at, .. } => *at = t,
        }
        self
    }
}

/// The program mapped memory itself (`memlens record --mmap`): an `mmap` or
/// `mmap64` call, or the new range of an `mremap`. Mappings that the allocator
/// makes with its internal `mmap` (glibc's large blocks and arenas) are not
/// seen: they are blocks of the allocation events already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// When (after the call returned).
    pub t: TimeNs,
    /// Thread id.
    pub tid: u32,
    /// The mapping's first address.
    pub addr: u64,
    /// Its length in bytes, as asked for (the kernel maps whole pages).
    pub len: u64,
    /// `PROT_*` bits (0 for an `mremap`: unknown).
    pub prot: u32,
    /// `MAP_*` bits (0 for an `mremap`: unknown).
    pub flags: u32,
    /// True when it maps a file (a file descriptor without `MAP_ANONYMOUS`).
    pub file: bool,
    /// True when it is the new range of an `mremap` (its old range was unmapped
    /// by the [`Unmapping`] just before it).
    pub remap: bool,
    /// The call stack of the `mmap` (or `mremap`).
    pub stack: StackId,
}

/// The program unmapped a range (`munmap`, or the old range of an `mremap`),
/// recorded with `memlens record --mmap`. The range may cover part of a
/// mapping, or several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unmapping {
    /// When (before the call, as for a free; after it for an `mremap`).
    pub t: TimeNs,
    /// Thread id.
    pub tid: u32,
    /// The first address unmapped.
    pub addr: u64,
    /// The length in bytes.
    pub len: u64,
}

/// A loaded segment of a module (a `PT_LOAD` program header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// `p_vaddr`: the segment's address before relocation.
    pub vaddr: u64,
    /// `p_memsz`.
    pub memsz: u64,
    /// `p_offset`: where the segment starts in the file.
    pub file_offset: u64,
    /// `p_flags` (`PF_X` = 1, `PF_W` = 2, `PF_R` = 4).
    pub flags: u32,
}

/// A shared object or executable mapped into the process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// Path as the dynamic loader reports it; the main executable's path is
    /// filled in from `/proc/self/exe`.
    pub path: String,
    /// `dlpi_addr`: runtime address minus link-time address.
    pub load_bias: u64,
    /// Its `PT_LOAD` segments.
    pub segments: Vec<Segment>,
    /// The GNU build id, when the object has one.
    pub build_id: Vec<u8>,
}

/// Where timestamps came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ClockSource {
    /// `clock_gettime(CLOCK_MONOTONIC)`.
    Monotonic = 0,
    /// The invariant TSC, converted to nanoseconds with calibration pairs.
    Tsc = 1,
}

/// Facts about the recorded process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Process id.
    pub pid: u32,
    /// Parent process id (for a forked child: the recorded parent).
    pub ppid: u32,
    /// Path of the executable.
    pub exe: String,
    /// The command line.
    pub cmdline: Vec<String>,
    /// Wall-clock time of time 0, in nanoseconds since the Unix epoch.
    pub start_unix_ns: u64,
    /// Where the timestamps came from.
    pub clock: ClockSource,
    /// The unwinder used: `"fp"` or `"dwarf"`.
    pub unwinder: String,
    /// The recorder's version.
    pub recorder: String,
}

/// The recorder's counts of the events it wrote ([`Meta::Totals`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Allocation events.
    pub allocations: u64,
    /// Free events.
    pub frees: u64,
    /// Reallocation events.
    pub reallocations: u64,
    /// Bytes requested by allocations and reallocations together.
    pub requested_bytes: u64,
}

impl Totals {
    /// Counts one event written.
    #[inline]
    pub fn count(&mut self, event: &Event) {
        match *event {
            Event::Alloc { size, .. } => self.count_alloc(size),
            Event::Realloc { size, .. } => self.count_realloc(size),
            Event::Free { .. } => self.count_free(),
        }
    }

    /// Counts an allocation of `size` bytes written.
    #[inline]
    pub fn count_alloc(&mut self, size: u64) {
        self.allocations += 1;
        self.requested_bytes += size;
    }

    /// Counts a reallocation to `size` bytes written.
    #[inline]
    pub fn count_realloc(&mut self, size: u64) {
        self.reallocations += 1;
        self.requested_bytes += size;
    }

    /// Counts a free written.
    #[inline]
    pub fn count_free(&mut self) {
        self.frees += 1;
    }
}

/// A record of the process stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meta {
    /// Who and what was recorded; the first record of every trace.
    Process(ProcessInfo),
    /// A module became loaded at `t`.
    ModuleLoad {
        /// When.
        t: TimeNs,
        /// The module.
        module: Module,
    },
    /// The module loaded with this bias and path was unloaded at `t`.
    ModuleUnload {
        /// When.
        t: TimeNs,
        /// Its load bias.
        load_bias: u64,
        /// Its path.
        path: String,
    },
    /// A thread was first seen, or was (re)named.
    ThreadName {
        /// When the name was read.
        t: TimeNs,
        /// Thread id.
        tid: u32,
        /// Its name (`comm`).
        name: String,
    },
    /// A thread ended.
    ThreadEnd {
        /// When.
        t: TimeNs,
        /// Thread id.
        tid: u32,
    },
    /// A node of the interned stack prefix tree: `id` is `parent` plus one
    /// more frame, the return address `ip` (outermost frames are nearer the root).
    StackNode {
        /// The new node's id.
        id: StackId,
        /// Its parent (0 = root).
        parent: StackId,
        /// The frame's return address (frame 0: the return address into the
        /// caller of the allocation function).
        ip: u64,
    },
    /// A user-placed or periodic point in time.
    Mark {
        /// When.
        t: TimeNs,
        /// The thread that placed it (0 for periodic marks).
        tid: u32,
        /// Its name.
        name: String,
    },
    /// Something the recorder wants the user to know (a statically linked
    /// allocator, dropped events, an unwinder failure).
    Warning {
        /// When.
        t: TimeNs,
        /// One sentence.
        message: String,
    },
    /// A TSC calibration pair (informational; timestamps are already in ns).
    Clock {
        /// Nanoseconds since start.
        t: TimeNs,
        /// The raw counter value.
        raw: u64,
    },
    /// The recorder's own counts of the events it wrote, written just before
    /// [`Meta::End`] of a clean run: what `memlens record` prints after the run
    /// without reading the events back.
    Totals(Totals),
    /// An allocation wrapper the user declared (`memlens record --wrapper GLOB`):
    /// a glob over demangled function names whose frames the frame policy treats
    /// as the allocator's, in every command that reads the trace.
    Wrapper {
        /// The pattern, e.g. `my_alloc*`.
        pattern: String,
    },
    /// The process ended cleanly (exit, `_exit` or exec); absent after a crash.
    End {
        /// When.
        t: TimeNs,
        /// How: `"exit"`, `"_exit"`, `"exec"`.
        how: String,
    },
    /// The program mapped memory (`memlens record --mmap`).
    Mmap(Mapping),
    /// The program unmapped memory (`memlens record --mmap`).
    Munmap(Unmapping),
    /// The name of type `id` (Java traces: a class name such as
    /// `java.util.HashMap$Node` or `int[]`), used by [`Meta::TypedStack`].
    TypeName {
        /// The type id (from 1; 0 means "no type").
        id: u32,
        /// Its name.
        name: String,
    },
    /// The source-level name of a synthetic frame address: recorders of managed
    /// runtimes (the JVMTI agent) give each method and line an address of their
    /// own in stack nodes and name it here, so stacks stay a prefix tree of
    /// addresses. A named address is never looked up in the module map.
    FrameName {
        /// The frame address used in [`Meta::StackNode`]s.
        ip: u64,
        /// The function, e.g. `com.example.Cache.lookup`.
        function: String,
        /// The source file name, e.g. `Cache.java` (empty when unknown).
        file: String,
        /// The source line (0 when unknown).
        line: u32,
    },
    /// A typed stack: stack id `id` has exactly the frames of `stack` and marks
    /// the allocations that name it as objects of type `type_id`. Lets event
    /// chunks carry an allocation's type in their stack column. `stack < id`.
    TypedStack {
        /// The new stack id (in the same id space as stack nodes).
        id: StackId,
        /// The stack whose frames it has (0 = the empty stack).
        stack: StackId,
        /// The type, named by a [`Meta::TypeName`].
        type_id: u32,
    },
    /// A heap walk of the JVMTI agent (`memlens record --java`): the
    /// [`Meta::Contained`] records that follow, up to the next walk, list every
    /// recorded object the walk reached, by the data structure containing it at `t`
    /// (an object not listed was unreachable: garbage not collected yet).
    HeapWalk(HeapWalk),
    /// Recorded objects that the latest [`Meta::HeapWalk`] found in one data
    /// structure (or in several).
    Contained(Contained),
    /// The recording is a Poisson sample by bytes (`memlens record --sample BYTES`,
    /// JVMTI heap sampling): each allocation of `s` bytes was recorded with
    /// probability `1 − exp(−s / mean_interval_bytes)`, independently, and a free only
    /// when its block was recorded. Absent: every allocation was recorded.
    Sampling {
        /// The mean number of bytes allocated between two recorded allocations.
        mean_interval_bytes: u64,
    },
    /// The trace starts mid-run: the recorder was attached to a process that was
    /// already running (`memlens attach`). Blocks allocated before are unknown, so
    /// frees of them are counted, not matched. Absent: recorded from the start.
    Attached(Attached),
}

/// How a recorder was attached to a running process ([`Meta::Attached`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attached {
    /// The process attached to.
    pub pid: u32,
    /// Wall-clock time of the attach, ns since the Unix epoch.
    pub attach_unix_ns: u64,
    /// Wall-clock time the process started, ns since the Unix epoch (0 unknown).
    pub process_start_unix_ns: u64,
}

/// A heap walk and its cost ([`Meta::HeapWalk`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapWalk {
    /// When the walk started (the heap it saw is the heap at `t`).
    pub t: TimeNs,
    /// How long the walk and its analysis took.
    pub duration_ns: u64,
    /// The part of `duration_ns` spent in the JVM's walk (`FollowReferences`,
    /// the Java threads stopped).
    pub pause_ns: u64,
    /// Data-structure objects (heads, internal objects, arrays) the walk reached.
    pub objects: u64,
    /// References it followed.
    pub references: u64,
}

/// Members of one data structure at a heap walk ([`Meta::Contained`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contained {
    /// The event address of the structure's head object (0: the members are in
    /// more than one data structure; 1: in none; `u64::MAX`: a head the recorder
    /// did not record).
    pub container: u64,
    /// The head's type, named by a [`Meta::TypeName`] (0 with `container` 0).
    pub container_type: u32,
    /// Event addresses of the recorded objects contained, ascending (the head
    /// and the structure's internal objects included).
    pub members: Vec<u64>,
}

/// The first synthetic frame address of the JVMTI agent: Java frames get
/// addresses from here up (kernel space, which no user-space return address
/// can be), each named by a [`Meta::FrameName`].
pub const SYNTHETIC_FRAME_BASE: u64 = 0xffff_f000_0000_0000;
