//! The paper's sorting case studies (Figures 6 and 7): bubble sort, whose shrinking
//! sweeps end up entirely in L1, and top-down merge sort with its temporary buffer,
//! whose merges start in cache and spill out of it as the lists grow.
//!
//! The kernels sort real pseudo-random data while they emit references, so the
//! comparisons, and hence the swaps and merge orders, are those of a real run.

use crate::kernels::KernelParams;
use crate::kernels::layout::{Array, InputData, LayoutBuilder};
use crate::label::TraceInfo;
use crate::reference::{LabelId, Reference};

struct BubblePlan {
    a: Array,
    load_j: LabelId,
    load_next: LabelId,
    store_j: LabelId,
    store_next: LabelId,
}

fn bubble_plan(params: &KernelParams) -> (BubblePlan, TraceInfo) {
    let mut layout = LayoutBuilder::new();
    let a = layout.array("a", params.n, params.elem_size);
    let plan = BubblePlan {
        a,
        load_j: layout.label("if (a[j] > a[j+1]): load a[j]"),
        load_next: layout.label("if (a[j] > a[j+1]): load a[j+1]"),
        store_j: layout.label("swap(a[j], a[j+1]): store a[j]"),
        store_next: layout.label("swap(a[j], a[j+1]): store a[j+1]"),
    };
    (plan, layout.finish())
}

/// Returns the regions and labels of bubble sort.
pub(crate) fn bubble_info(params: &KernelParams) -> TraceInfo {
    bubble_plan(params).1
}

/// Emits bubble sort's references: sweep `s` compares `a[j]` with `a[j+1]` for
/// `j < n − 1 − s` and swaps out-of-order pairs; it stops after a sweep with no swap.
pub(crate) fn bubble_generate(params: &KernelParams, emit: &mut dyn FnMut(Reference)) {
    let (p, _) = bubble_plan(params);
    let mut values = InputData::new(params.seed).values(params.n);
    let n = values.len();
    for sweep in 0..n.saturating_sub(1) {
        let mut swapped = false;
        for j in 0..n - 1 - sweep {
            emit(p.a.read(j as u64, p.load_j));
            emit(p.a.read(j as u64 + 1, p.load_next));
            if values[j] > values[j + 1] {
                values.swap(j, j + 1);
                emit(p.a.write(j as u64, p.store_j));
                emit(p.a.write(j as u64 + 1, p.store_next));
                swapped = true;
            }
        }
        if !swapped {
            break;
        }
    }
}

struct MergePlan {
    a: Array,
    tmp: Array,
    load_left: LabelId,
    load_right: LabelId,
    store_tmp: LabelId,
    load_tmp: LabelId,
    store_a: LabelId,
}

fn merge_plan(params: &KernelParams) -> (MergePlan, TraceInfo) {
    let mut layout = LayoutBuilder::new();
    let a = layout.array("a", params.n, params.elem_size);
    let tmp = layout.array("tmp", params.n, params.elem_size);
    let plan = MergePlan {
        a,
        tmp,
        load_left: layout.label("merge: load a[i] (left list)"),
        load_right: layout.label("merge: load a[j] (right list)"),
        store_tmp: layout.label("merge: store tmp[k]"),
        load_tmp: layout.label("copy back: load tmp[k]"),
        store_a: layout.label("copy back: store a[k]"),
    };
    (plan, layout.finish())
}

/// Returns the regions and labels of merge sort.
pub(crate) fn merge_info(params: &KernelParams) -> TraceInfo {
    merge_plan(params).1
}

/// Emits top-down merge sort's references: sort both halves recursively, merge them
/// into `tmp`, copy `tmp` back.
pub(crate) fn merge_generate(params: &KernelParams, emit: &mut dyn FnMut(Reference)) {
    let (p, _) = merge_plan(params);
    let mut values = InputData::new(params.seed).values(params.n);
    let mut scratch = vec![0u64; values.len()];
    let len = values.len();
    merge_sort(&p, &mut values, &mut scratch, 0, len, emit);
}

fn merge_sort(
    p: &MergePlan,
    values: &mut [u64],
    scratch: &mut [u64],
    lo: usize,
    hi: usize,
    emit: &mut dyn FnMut(Reference),
) {
    if hi - lo < 2 {
        return;
    }
    let mid = lo + (hi - lo) / 2;
    merge_sort(p, values, scratch, lo, mid, emit);
    merge_sort(p, values, scratch, mid, hi, emit);
    let (mut i, mut j) = (lo, mid);
    for (k, slot) in scratch.iter_mut().enumerate().take(hi).skip(lo) {
        let take_left = if i < mid && j < hi {
            emit(p.a.read(i as u64, p.load_left));
            emit(p.a.read(j as u64, p.load_right));
            values[i] <= values[j]
        } else if i < mid {
            emit(p.a.read(i as u64, p.load_left));
            true
        } else {
            emit(p.a.read(j as u64, p.load_right));
            false
        };
        if take_left {
            *slot = values[i];
            i += 1;
        } else {
            *slot = values[j];
            j += 1;
        }
        emit(p.tmp.write(k as u64, p.store_tmp));
    }
    values[lo..hi].copy_from_slice(&scratch[lo..hi]);
    for k in lo..hi {
        emit(p.tmp.read(k as u64, p.load_tmp));
        emit(p.a.write(k as u64, p.store_a));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::AccessKind;

    #[test]
    fn bubble_sort_sweeps_shrink_and_stop_when_sorted() {
        let params = KernelParams {
            n: 50,
            ..KernelParams::default()
        };
        let mut max_index_per_sweep = Vec::new();
        let mut last = 0u64;
        let base = crate::kernels::layout::BASE_ADDRESS;
        bubble_generate(&params, &mut |r| {
            let index = (r.addr - base) / 8;
            if r.kind == AccessKind::Read && r.label == LabelId(1) && index == 0 {
                max_index_per_sweep.push(0);
            }
            if let Some(top) = max_index_per_sweep.last_mut() {
                *top = (*top).max(index);
            }
            last = index;
        });
        assert!(max_index_per_sweep.windows(2).all(|w| w[1] <= w[0]));
        assert_eq!(max_index_per_sweep[0], 49);
        assert!(max_index_per_sweep.len() < 50);
        let _ = last;
    }

    #[test]
    fn merge_sort_touches_every_element_of_both_arrays() {
        let params = KernelParams {
            n: 37,
            ..KernelParams::default()
        };
        let info = merge_info(&params);
        let mut writes = [0u64; 3];
        merge_generate(&params, &mut |r| {
            if r.kind == AccessKind::Write {
                writes[r.region.index()] += 1;
            }
        });
        let (a, tmp) = (
            info.regions.iter().next().unwrap().0,
            info.regions.iter().nth(1).unwrap().0,
        );
        assert_eq!(writes[a.index()], writes[tmp.index()]);
        // Each of the 6 recursion levels writes at most all 37 elements; all but the
        // deepest (which holds only 5 pairs) write all of them.
        assert_eq!(writes[a.index()], 37 * 5 + 10);
    }
}
