//! Where the cache lens's references come from: the trace's reference chunks, read
//! once into memory by the CLI, or one of the built-in kernels of `memlens-cache`,
//! generated on first use with sizes chosen to be watched (a 16×16 matrix multiply
//! fits a few hundred glyphs, as in the paper's Figure 1).

use std::sync::Arc;

use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_cache::{HierarchyConfig, LevelConfig, Reference, TraceInfo};

/// The most references the lens holds for one source (16 bytes each).
pub const MAX_REFERENCES: usize = 64 << 20;

/// A named list of references with their regions and source labels.
#[derive(Debug)]
pub struct ReferenceSource {
    /// The title the kernel picker shows.
    pub title: String,
    /// Every reference, in program order.
    pub references: Arc<[Reference]>,
    /// The regions (glyph colours) and labels (source lines).
    pub info: TraceInfo,
}

/// The built-in kernels the picker offers: id, kernel name, variant and title.
pub(crate) const KERNELS: [(&str, &str, Option<&str>, &str); 7] = [
    (
        "matmul-standard",
        "matmul",
        Some("standard"),
        "matmul, standard",
    ),
    (
        "matmul-transposed",
        "matmul",
        Some("transposed"),
        "matmul, transposed B",
    ),
    (
        "matmul-blocked",
        "matmul",
        Some("blocked"),
        "matmul, blocked 4×4",
    ),
    ("bubble-sort", "bubble-sort", None, "bubble sort"),
    ("merge-sort", "merge-sort", None, "merge sort"),
    ("array-init", "array-init", None, "array initialisation"),
    ("particles", "particles", None, "particle update (MPM-like)"),
];

/// The problem size each kernel gets unless the page asks for another.
pub(crate) fn default_size(kernel: &str) -> u64 {
    match kernel {
        "matmul" => 16,
        "bubble-sort" => 128,
        "merge-sort" => 512,
        "array-init" => 4096,
        _ => 1024,
    }
}

/// The largest problem size the page may ask for, per kernel, so that a kernel stays
/// within [`MAX_REFERENCES`].
pub(crate) fn max_size(kernel: &str) -> u64 {
    match kernel {
        "matmul" => 256,
        "bubble-sort" => 4096,
        _ => 4 << 20,
    }
}

/// Why the cache lens cannot show a source or hierarchy: one sentence naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// A kernel or source id that does not exist.
    #[error("unknown {what} `{id}`; choose {choices}")]
    Unknown {
        /// `kernel` or `source`.
        what: &'static str,
        /// The id as asked for.
        id: String,
        /// The ids that exist, as a phrase.
        choices: String,
    },
    /// A variant the kernel does not have.
    #[error("kernel `{kernel}` has no variant `{variant}`")]
    NoVariant {
        /// The kernel.
        kernel: String,
        /// The variant asked for.
        variant: String,
    },
    /// A problem size the lens cannot hold.
    #[error("`n={n}` is out of range for {title}: choose 1 to {max}")]
    SizeOutOfRange {
        /// The size asked for.
        n: u64,
        /// The kernel's title.
        title: &'static str,
        /// The largest size.
        max: u64,
    },
    /// The trace source asked for without a trace.
    #[error("there is no trace to show")]
    NoTrace,
    /// A kernel or hierarchy the engine refuses (its sentence).
    #[error("{0}")]
    Engine(String),
}

/// Generates kernel `id` with problem size `n`, or says why not.
pub(crate) fn kernel_source(id: &str, n: Option<u64>) -> Result<ReferenceSource, SourceError> {
    let Some(&(_, name, variant, title)) = KERNELS.iter().find(|k| k.0 == id) else {
        let ids: Vec<&str> = KERNELS.iter().map(|k| k.0).collect();
        return Err(SourceError::Unknown {
            what: "source",
            id: id.to_owned(),
            choices: format!("trace or one of {}", ids.join(", ")),
        });
    };
    let n = n.unwrap_or_else(|| default_size(name));
    if n == 0 || n > max_size(name) {
        return Err(SourceError::SizeOutOfRange {
            n,
            title,
            max: max_size(name),
        });
    }
    let params = KernelParams {
        n,
        block: 4,
        ..KernelParams::default()
    };
    let kernel =
        Kernel::new(name, variant, params).map_err(|e| SourceError::Engine(e.to_string()))?;
    let mut references = Vec::new();
    kernel.generate(|r| {
        if references.len() < MAX_REFERENCES {
            references.push(r);
        }
    });
    Ok(ReferenceSource {
        title: format!("{title} (N = {n})"),
        references: references.into(),
        info: kernel.info(),
    })
}

/// The hierarchy a kernel starts with: two small levels, so that a 16×16 multiply
/// (96 lines of data) both fits in memory's ring and overflows the caches.
pub(crate) fn kernel_hierarchy() -> HierarchyConfig {
    HierarchyConfig::new(vec![
        LevelConfig::new("L1", 1024, 2, 64),
        LevelConfig::new("L2", 4096, 4, 64),
    ])
}

/// The hierarchy a recorded trace starts with: a typical L1 and L2.
pub(crate) fn trace_hierarchy() -> HierarchyConfig {
    HierarchyConfig::new(vec![
        LevelConfig::new("L1", 32 * 1024, 8, 64),
        LevelConfig::new("L2", 256 * 1024, 8, 64),
    ])
}
