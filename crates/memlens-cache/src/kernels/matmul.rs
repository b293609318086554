//! Matrix multiply `C = A × B` of N×N row-major matrices, the paper's first case
//! study (Figure 1): the standard algorithm, the one with a transposed right-hand
//! matrix, and the blocked one.
//!
//! The reference order is what an optimising compiler produces for
//! `C[i][j] += A[i][k]*B[k][j]` with the sum kept in a register: load `C[i][j]`, then
//! for each `k` load `A[i][k]` and `B[k][j]`, then store `C[i][j]`.

use crate::kernels::KernelParams;
use crate::kernels::layout::{Array, LayoutBuilder};
use crate::label::TraceInfo;
use crate::reference::{LabelId, Reference};

/// Which matrix multiply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatMulVariant {
    /// Dot products of rows of A with columns of B.
    Standard,
    /// The right-hand matrix is stored transposed, so both operands are read by rows.
    Transposed,
    /// Blocked (tiled) by `block × block` sub-matrices.
    Blocked,
}

impl MatMulVariant {
    /// Returns the variant named `standard`, `transposed` or `blocked`.
    pub fn from_name(name: &str) -> Option<MatMulVariant> {
        match name {
            "standard" | "naive" => Some(MatMulVariant::Standard),
            "transposed" => Some(MatMulVariant::Transposed),
            "blocked" | "tiled" => Some(MatMulVariant::Blocked),
            _ => None,
        }
    }
}

struct Plan {
    a: Array,
    b: Array,
    c: Array,
    load_a: LabelId,
    load_b: LabelId,
    load_c: LabelId,
    store_c: LabelId,
}

fn plan(variant: MatMulVariant, params: &KernelParams) -> (Plan, TraceInfo) {
    let n2 = params.n.saturating_mul(params.n);
    let mut layout = LayoutBuilder::new();
    let a = layout.array("A", n2, params.elem_size);
    let (b_name, statement, b_operand) = match variant {
        MatMulVariant::Transposed => ("BT", "C[i][j] += A[i][k]*BT[j][k]", "BT[j][k]"),
        _ => ("B", "C[i][j] += A[i][k]*B[k][j]", "B[k][j]"),
    };
    let b = layout.array(b_name, n2, params.elem_size);
    let c = layout.array("C", n2, params.elem_size);
    let plan = Plan {
        a,
        b,
        c,
        load_a: layout.label(&format!("{statement}: load A[i][k]")),
        load_b: layout.label(&format!("{statement}: load {b_operand}")),
        load_c: layout.label(&format!("{statement}: load C[i][j]")),
        store_c: layout.label(&format!("{statement}: store C[i][j]")),
    };
    (plan, layout.finish())
}

/// Returns the regions and labels of the kernel.
pub(crate) fn info(variant: MatMulVariant, params: &KernelParams) -> TraceInfo {
    plan(variant, params).1
}

/// Emits the kernel's references in program order.
pub(crate) fn generate(
    variant: MatMulVariant,
    params: &KernelParams,
    emit: &mut dyn FnMut(Reference),
) {
    let (p, _) = plan(variant, params);
    let n = params.n;
    let transposed = variant == MatMulVariant::Transposed;
    // One (i, j) cell: accumulate over k in [k0, k1).
    let cell = |i: u64, j: u64, k0: u64, k1: u64, emit: &mut dyn FnMut(Reference)| {
        emit(p.c.read(i * n + j, p.load_c));
        for k in k0..k1 {
            emit(p.a.read(i * n + k, p.load_a));
            let b_index = if transposed { j * n + k } else { k * n + j };
            emit(p.b.read(b_index, p.load_b));
        }
        emit(p.c.write(i * n + j, p.store_c));
    };
    match variant {
        MatMulVariant::Standard | MatMulVariant::Transposed => {
            for i in 0..n {
                for j in 0..n {
                    cell(i, j, 0, n, emit);
                }
            }
        }
        MatMulVariant::Blocked => {
            let b = params.block.clamp(1, n.max(1));
            for ii in (0..n).step_by(b as usize) {
                for jj in (0..n).step_by(b as usize) {
                    for kk in (0..n).step_by(b as usize) {
                        for i in ii..(ii + b).min(n) {
                            for j in jj..(jj + b).min(n) {
                                cell(i, j, kk, (kk + b).min(n), emit);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::AccessKind;

    fn collect(variant: MatMulVariant, n: u64, block: u64) -> Vec<Reference> {
        let params = KernelParams {
            n,
            block,
            ..KernelParams::default()
        };
        let mut refs = Vec::new();
        generate(variant, &params, &mut |r| refs.push(r));
        refs
    }

    #[test]
    fn standard_order_is_c_then_a_b_pairs_then_store() {
        let refs = collect(MatMulVariant::Standard, 2, 1);
        let base = crate::kernels::layout::BASE_ADDRESS;
        // 2×2 doubles each, 64-byte aligned: A at base, B at base+64, C at base+128.
        let addrs: Vec<u64> = refs[..6].iter().map(|r| r.addr - base).collect();
        assert_eq!(addrs, vec![128, 0, 64, 8, 80, 128]);
        assert_eq!(refs[5].kind, AccessKind::Write);
        assert_eq!(refs.len(), 2 * 2 * (2 * 2 + 2));
    }

    #[test]
    fn every_variant_makes_the_same_number_of_multiplies() {
        let count = |v, b| {
            collect(v, 12, b)
                .iter()
                .filter(|r| r.kind == AccessKind::Read)
                .count()
        };
        let standard = count(MatMulVariant::Standard, 4);
        assert_eq!(count(MatMulVariant::Transposed, 4), standard);
        // Blocking reloads C once per k-block: 3 k-blocks of 4 for N = 12.
        assert_eq!(count(MatMulVariant::Blocked, 4), 12 * 12 * (2 * 12 + 3));
        assert_eq!(count(MatMulVariant::Blocked, 5), 12 * 12 * (2 * 12 + 3));
    }
}
