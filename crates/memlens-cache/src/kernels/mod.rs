//! Built-in kernels: exact reference streams of the paper's case studies, with named
//! regions and source-statement labels, needing no external tool.
//!
//! | name | what it does | paper |
//! |---|---|---|
//! | `matmul` (`--variant standard\|transposed\|blocked`, `--block B`) | N×N matrix multiply | Figure 1, 5 |
//! | `bubble-sort` | bubble sort of N pseudo-random values | Figure 6 |
//! | `merge-sort` | top-down merge sort with a temporary buffer | Figure 7 |
//! | `array-init` | `a[i] = 0` over N elements | Figure 3 |
//! | `particles` | a particle update streaming several arrays in phases | Figure 8 (MPM) |
//!
//! Use [`Kernel::info`] for the regions and labels and [`Kernel::generate`] for the
//! references, in program order.

pub mod layout;
pub mod matmul;
pub mod sorting;
pub mod streaming;

use std::fmt;

use crate::label::TraceInfo;
use crate::reference::Reference;

pub use matmul::MatMulVariant;

/// The names [`Kernel::new`] accepts.
pub const KERNEL_NAMES: [&str; 5] = [
    "matmul",
    "bubble-sort",
    "merge-sort",
    "array-init",
    "particles",
];

/// The sizes and options shared by all kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelParams {
    /// The problem size: matrix dimension, array length or particle count.
    pub n: u64,
    /// The size of one element in bytes.
    pub elem_size: u16,
    /// The block size of the blocked matrix multiply.
    pub block: u64,
    /// The number of time steps of the particle update.
    pub steps: u32,
    /// The seed of the sorting kernels' input data and the particles' cell jitter.
    pub seed: u64,
}

impl Default for KernelParams {
    fn default() -> KernelParams {
        KernelParams {
            n: 64,
            elem_size: 8,
            block: 8,
            steps: 2,
            seed: 1,
        }
    }
}

/// Which kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Matrix multiply.
    MatMul(MatMulVariant),
    /// Bubble sort.
    BubbleSort,
    /// Merge sort with a temporary buffer.
    MergeSort,
    /// Array initialisation.
    ArrayInit,
    /// The phased particle update.
    Particles,
}

/// Why a kernel could not be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// No kernel has this name.
    UnknownKernel(String),
    /// The kernel has no such variant.
    UnknownVariant {
        /// The kernel.
        kernel: String,
        /// The variant asked for.
        variant: String,
    },
    /// A parameter is out of range.
    BadParameter(&'static str),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::UnknownKernel(name) => write!(
                f,
                "unknown kernel `{name}`; choose one of {}",
                KERNEL_NAMES.join(", ")
            ),
            KernelError::UnknownVariant { kernel, variant } => match kernel.as_str() {
                "matmul" => write!(
                    f,
                    "unknown matmul variant `{variant}`; choose standard, transposed or blocked"
                ),
                _ => write!(f, "kernel `{kernel}` has no variant `{variant}`"),
            },
            KernelError::BadParameter(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for KernelError {}

/// A configured kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Which kernel.
    pub kind: KernelKind,
    /// Its parameters.
    pub params: KernelParams,
}

impl Kernel {
    /// Sets up a kernel by name (see [`KERNEL_NAMES`]) and optional variant.
    pub fn new(
        name: &str,
        variant: Option<&str>,
        params: KernelParams,
    ) -> Result<Kernel, KernelError> {
        let unknown_variant = |v: &str| KernelError::UnknownVariant {
            kernel: name.to_owned(),
            variant: v.to_owned(),
        };
        let kind = match name {
            "matmul" => KernelKind::MatMul(match variant {
                None => MatMulVariant::Standard,
                Some(v) => MatMulVariant::from_name(v).ok_or_else(|| unknown_variant(v))?,
            }),
            "bubble-sort" | "bubblesort" => KernelKind::BubbleSort,
            "merge-sort" | "mergesort" => KernelKind::MergeSort,
            "array-init" | "init" => KernelKind::ArrayInit,
            "particles" | "mpm" => KernelKind::Particles,
            _ => return Err(KernelError::UnknownKernel(name.to_owned())),
        };
        if let (Some(v), false) = (variant, matches!(kind, KernelKind::MatMul(_))) {
            return Err(unknown_variant(v));
        }
        if params.n == 0 {
            return Err(KernelError::BadParameter(
                "the problem size N must be at least 1",
            ));
        }
        if params.elem_size == 0 {
            return Err(KernelError::BadParameter(
                "the element size must be at least 1 byte",
            ));
        }
        if params.block == 0 {
            return Err(KernelError::BadParameter(
                "the block size must be at least 1",
            ));
        }
        let elements = match kind {
            KernelKind::MatMul(_) => params.n.checked_mul(params.n),
            _ => Some(params.n),
        };
        let fits = elements
            .and_then(|e| e.checked_mul(u64::from(params.elem_size)))
            .is_some_and(|bytes| bytes < 1 << 40);
        if !fits {
            return Err(KernelError::BadParameter(
                "the kernel's arrays would not fit in a 1 TiB address range",
            ));
        }
        Ok(Kernel { kind, params })
    }

    /// Returns the kernel's regions and statement labels.
    pub fn info(&self) -> TraceInfo {
        let p = &self.params;
        match self.kind {
            KernelKind::MatMul(v) => matmul::info(v, p),
            KernelKind::BubbleSort => sorting::bubble_info(p),
            KernelKind::MergeSort => sorting::merge_info(p),
            KernelKind::ArrayInit => streaming::init_info(p),
            KernelKind::Particles => streaming::particles_info(p),
        }
    }

    /// Emits every reference of the kernel, in program order.
    pub fn generate(&self, mut emit: impl FnMut(Reference)) {
        let p = &self.params;
        let emit: &mut dyn FnMut(Reference) = &mut emit;
        match self.kind {
            KernelKind::MatMul(v) => matmul::generate(v, p, emit),
            KernelKind::BubbleSort => sorting::bubble_generate(p, emit),
            KernelKind::MergeSort => sorting::merge_generate(p, emit),
            KernelKind::ArrayInit => streaming::init_generate(p, emit),
            KernelKind::Particles => streaming::particles_generate(p, emit),
        }
    }

    /// Collects every reference into a vector (convenient for small kernels).
    pub fn references(&self) -> Vec<Reference> {
        let mut references = Vec::new();
        self.generate(|r| references.push(r));
        references
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_variants_and_parameters_are_checked() {
        let p = KernelParams::default();
        for name in KERNEL_NAMES {
            let kernel = Kernel::new(name, None, p).unwrap();
            let info = kernel.info();
            let mut count = 0;
            kernel.generate(|r| {
                assert!(
                    info.labels.get(r.label).is_some(),
                    "{name}: every reference is labelled"
                );
                assert!(
                    info.regions.get(r.region).is_some(),
                    "{name}: every reference has a region"
                );
                count += 1;
            });
            assert!(count > 0, "{name}");
        }
        assert!(matches!(
            Kernel::new("quicksort", None, p),
            Err(KernelError::UnknownKernel(_))
        ));
        assert!(matches!(
            Kernel::new("matmul", Some("strassen"), p),
            Err(KernelError::UnknownVariant { .. })
        ));
        assert!(matches!(
            Kernel::new("bubble-sort", Some("x"), p),
            Err(KernelError::UnknownVariant { .. })
        ));
        let zero = KernelParams { n: 0, ..p };
        assert!(matches!(
            Kernel::new("matmul", None, zero),
            Err(KernelError::BadParameter(_))
        ));
        let huge = KernelParams { n: 1 << 32, ..p };
        assert!(Kernel::new("matmul", None, huge).is_err());
        assert_eq!(
            Kernel::new("matmul", Some("blocked"), p).unwrap().kind,
            KernelKind::MatMul(MatMulVariant::Blocked)
        );
    }
}
