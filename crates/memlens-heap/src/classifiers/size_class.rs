//! `size-class`: the block's size, bucketed. Two modes:
//!
//! - [`SizeClassMode::PowerOfTwo`]: `0 B`, `1 B`, `2 B`, `3–4 B`, `5–8 B`, … — bucket `k`
//!   holds sizes in `(2^(k-1), 2^k]`.
//! - [`SizeClassMode::Glibc`]: glibc's chunk sizes on 64-bit Linux. A request of `n`
//!   bytes takes a chunk of `max(32, (n + 8 + 15) & !15)` bytes; chunks up to 1 KiB (the
//!   small bins and tcache) are one class per 16 bytes, larger chunks are grouped in
//!   powers of two as glibc's large bins roughly are.
//!
//! The size used is the block's size at the snapshot: a block that `realloc` moves into
//! another class changes group at that time (the tree engine splits its life there).

use super::{Classifier, ClassifierEntry, ClassifierOptions, SizeClassMode};
use crate::ids::AllocId;
use crate::model::HeapModel;

/// The registry entry of `size-class`.
pub(crate) const ENTRY: ClassifierEntry = ClassifierEntry {
    name: "size-class",
    title: "Size Class",
    summary: "the block size in power-of-two buckets or glibc 16-byte chunk classes",
    build,
};

/// Classes at or above this are power-of-two groups of large glibc chunks.
const LARGE: u32 = 1000;

fn build<'m>(model: &'m HeapModel, options: &ClassifierOptions) -> Box<dyn Classifier + 'm> {
    Box::new(SizeClass {
        model,
        mode: options.size_classes,
    })
}

struct SizeClass<'m> {
    model: &'m HeapModel,
    mode: SizeClassMode,
}

/// The classes of `n` in both modes, as one key: allocations sharing it share both
/// classes, and so does their mean size (each class is an interval). A coalesced
/// model keeps one row per key, so `size-class` is exact on it in either mode.
pub(crate) fn size_key(n: u64) -> u32 {
    (class(SizeClassMode::PowerOfTwo, n) << 11) | class(SizeClassMode::Glibc, n)
}

/// The class of a block of `size` bytes.
fn class(mode: SizeClassMode, size: u64) -> u32 {
    match mode {
        SizeClassMode::PowerOfTwo if size == 0 => 0,
        SizeClassMode::PowerOfTwo => 1 + ceil_log2(size),
        SizeClassMode::Glibc => {
            let chunk = glibc_chunk(size);
            if chunk <= 1024 {
                (chunk / 16) as u32
            } else {
                LARGE + ceil_log2(chunk)
            }
        }
    }
}

/// The power-of-two size class of a block of `size` bytes (bucket `k` holds sizes in
/// `(2^(k-1), 2^k]`): what the exports label samples with.
pub fn size_class_of(size: u64) -> u32 {
    class(SizeClassMode::PowerOfTwo, size)
}

/// The name of power-of-two size class `key`: `0 B`, `1 B`, `2 B`, `3–4 B`, `5–8 B`, …
pub fn size_class_label(key: u32) -> String {
    match key {
        0 => "0 B".to_owned(),
        1 => "1 B".to_owned(),
        2 => "2 B".to_owned(),
        k => {
            let high = 1u64 << (k - 1).min(63);
            format!("{}–{}", exact(high / 2 + 1), exact(high))
        }
    }
}

/// `k` such that `2^(k-1) < n <= 2^k`, for `n >= 1`.
fn ceil_log2(n: u64) -> u32 {
    64 - (n - 1).leading_zeros()
}

/// The glibc chunk size serving a request of `n` bytes (64-bit: 8-byte header, 16-byte
/// alignment, 32-byte minimum).
pub(crate) fn glibc_chunk(n: u64) -> u64 {
    (n.saturating_add(8 + 15) & !15).max(32)
}

/// `n` bytes written exactly with the largest binary unit that divides it.
fn exact(n: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} B")
}

impl Classifier for SizeClass<'_> {
    fn name(&self) -> &'static str {
        ENTRY.name
    }

    fn title(&self) -> &'static str {
        ENTRY.title
    }

    fn class_of(&self, alloc: AllocId, size: u64, _at_ns: u64) -> u32 {
        // A coalesced row holds several blocks: classify their mean size.
        class(self.mode, size / self.model.objects_of(alloc))
    }

    fn label(&self, key: u32) -> String {
        match self.mode {
            SizeClassMode::PowerOfTwo => size_class_label(key),
            SizeClassMode::Glibc if key < LARGE => {
                let chunk = u64::from(key) * 16;
                let largest = chunk - 8;
                let smallest = if chunk == 32 { 0 } else { chunk - 16 - 8 + 1 };
                format!(
                    "{} chunk ({}–{} requested)",
                    exact(chunk),
                    exact(smallest),
                    exact(largest)
                )
            }
            SizeClassMode::Glibc => {
                let high = 1u64 << (key - LARGE).min(63);
                format!("{}–{} chunks", exact(high / 2 + 16), exact(high))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HeapModelBuilder;
    use crate::classifiers::parse_classifiers;
    use crate::ids::StackId;
    use crate::model::AllocKind;

    fn classes(mode: SizeClassMode, sizes: &[u64]) -> Vec<String> {
        let model = HeapModelBuilder::new().end(0);
        let options = ClassifierOptions {
            size_classes: mode,
            ..Default::default()
        };
        let chain = parse_classifiers("size-class", options).unwrap();
        let c = &chain.bind(&model)[0];
        sizes
            .iter()
            .map(|&s| c.label(c.class_of(AllocId(0), s, 0)))
            .collect()
    }

    #[test]
    fn power_of_two_buckets() {
        assert_eq!(
            classes(
                SizeClassMode::PowerOfTwo,
                &[0, 1, 2, 3, 4, 5, 8, 9, 1000, 1024, 1025]
            ),
            vec![
                "0 B",
                "1 B",
                "2 B",
                "3 B–4 B",
                "3 B–4 B",
                "5 B–8 B",
                "5 B–8 B",
                "9 B–16 B",
                "513 B–1 KiB",
                "513 B–1 KiB",
                "1025 B–2 KiB"
            ]
        );
    }

    #[test]
    fn glibc_chunk_classes() {
        assert_eq!(glibc_chunk(0), 32);
        assert_eq!(glibc_chunk(24), 32);
        assert_eq!(glibc_chunk(25), 48);
        assert_eq!(glibc_chunk(40), 48);
        assert_eq!(glibc_chunk(41), 64);
        assert_eq!(
            classes(SizeClassMode::Glibc, &[1, 24, 25, 40, 1016, 1017, 3000]),
            vec![
                "32 B chunk (0 B–24 B requested)",
                "32 B chunk (0 B–24 B requested)",
                "48 B chunk (25 B–40 B requested)",
                "48 B chunk (25 B–40 B requested)",
                "1 KiB chunk (1001 B–1016 B requested)",
                "1040 B–2 KiB chunks",
                "2064 B–4 KiB chunks",
            ]
        );
    }

    #[test]
    fn realloc_moves_a_block_between_classes() {
        let mut b = HeapModelBuilder::new();
        let a = b.alloc(0, 1, 0x10, 10, StackId::ROOT, AllocKind::Malloc);
        b.realloc(5, 1, 0x10, 0x10, 100, StackId::ROOT);
        let model = b.end(10);
        let chain = parse_classifiers("size-class", ClassifierOptions::default()).unwrap();
        let c = &chain.bind(&model)[0];
        assert_eq!(c.label(c.class_of(a, model.size_at(a, 1), 1)), "9 B–16 B");
        assert_eq!(c.label(c.class_of(a, model.size_at(a, 6), 6)), "65 B–128 B");
    }
}
