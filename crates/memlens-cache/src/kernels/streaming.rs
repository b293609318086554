//! Streaming kernels: array initialisation (the paper's Figure 3) and a particle
//! update that sweeps several arrays in phases, in the spirit of the paper's
//! material point method example (Figure 8).
//!
//! The particle kernel keeps the MPM structure that matters for the cache: per time
//! step, phases that each stream a few per-particle arrays in order (mass and velocity
//! into momentum; positions and momentum scattered into a background grid; the stress
//! update from the constitutive model; the position update), so data moves into L1,
//! is used a few times, then ages out through L2 to memory.

use crate::kernels::KernelParams;
use crate::kernels::layout::{Array, InputData, LayoutBuilder};
use crate::label::TraceInfo;
use crate::reference::{LabelId, Reference};

fn init_plan(params: &KernelParams) -> (Array, LabelId, TraceInfo) {
    let mut layout = LayoutBuilder::new();
    let a = layout.array("a", params.n, params.elem_size);
    let store = layout.label("a[i] = 0: store a[i]");
    (a, store, layout.finish())
}

/// Returns the regions and labels of array initialisation.
pub(crate) fn init_info(params: &KernelParams) -> TraceInfo {
    init_plan(params).2
}

/// Emits `for i in 0..n { a[i] = 0 }`.
pub(crate) fn init_generate(params: &KernelParams, emit: &mut dyn FnMut(Reference)) {
    let (a, store, _) = init_plan(params);
    for i in 0..params.n {
        emit(a.write(i, store));
    }
}

struct ParticlePlan {
    mass: Array,
    velocity: Array,
    position: Array,
    momentum: Array,
    stress: Array,
    model: Array,
    grid: Array,
    cells: u64,
    labels: [LabelId; 14],
}

const PARTICLE_LABELS: [&str; 14] = [
    "momentum[p] = mass[p]*velocity[p]: load mass[p]",
    "momentum[p] = mass[p]*velocity[p]: load velocity[p]",
    "momentum[p] = mass[p]*velocity[p]: store momentum[p]",
    "grid[cell(position[p])] += momentum[p]: load position[p]",
    "grid[cell(position[p])] += momentum[p]: load momentum[p]",
    "grid[cell(position[p])] += momentum[p]: load grid[c]",
    "grid[cell(position[p])] += momentum[p]: store grid[c]",
    "stress[p] = model[p](velocity[p], stress[p]): load velocity[p]",
    "stress[p] = model[p](velocity[p], stress[p]): load model[p]",
    "stress[p] = model[p](velocity[p], stress[p]): load stress[p]",
    "stress[p] = model[p](velocity[p], stress[p]): store stress[p]",
    "position[p] += dt*velocity[p]: load velocity[p]",
    "position[p] += dt*velocity[p]: load position[p]",
    "position[p] += dt*velocity[p]: store position[p]",
];

fn particle_plan(params: &KernelParams) -> (ParticlePlan, TraceInfo) {
    let n = params.n;
    let e = params.elem_size;
    let cells = (n / 4).max(1);
    let mut layout = LayoutBuilder::new();
    let plan = ParticlePlan {
        mass: layout.array("mass", n, e),
        velocity: layout.array("velocity", n, e),
        position: layout.array("position", n, e),
        momentum: layout.array("momentum", n, e),
        stress: layout.array("stress", n, e),
        model: layout.array("constitutive model", n, e),
        grid: layout.array("grid", cells, e),
        cells,
        labels: PARTICLE_LABELS.map(|text| layout.label(text)),
    };
    (plan, layout.finish())
}

/// Returns the regions and labels of the particle update.
pub(crate) fn particles_info(params: &KernelParams) -> TraceInfo {
    particle_plan(params).1
}

/// Emits `params.steps` time steps of the particle update.
pub(crate) fn particles_generate(params: &KernelParams, emit: &mut dyn FnMut(Reference)) {
    let (p, _) = particle_plan(params);
    let l = p.labels;
    let n = params.n;
    // Particles are mostly ordered by cell, with some jitter, as after a sort by cell.
    let mut jitter = InputData::new(params.seed);
    let cell_of: Vec<u64> = (0..n)
        .map(|i| (i * p.cells / n.max(1) + jitter.next_value() % 2).min(p.cells - 1))
        .collect();
    for _ in 0..params.steps {
        for i in 0..n {
            emit(p.mass.read(i, l[0]));
            emit(p.velocity.read(i, l[1]));
            emit(p.momentum.write(i, l[2]));
        }
        for (i, &cell) in cell_of.iter().enumerate() {
            let i = i as u64;
            emit(p.position.read(i, l[3]));
            emit(p.momentum.read(i, l[4]));
            emit(p.grid.read(cell, l[5]));
            emit(p.grid.write(cell, l[6]));
        }
        for i in 0..n {
            emit(p.velocity.read(i, l[7]));
            emit(p.model.read(i, l[8]));
            emit(p.stress.read(i, l[9]));
            emit(p.stress.write(i, l[10]));
        }
        for i in 0..n {
            emit(p.velocity.read(i, l[11]));
            emit(p.position.read(i, l[12]));
            emit(p.position.write(i, l[13]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn particle_steps_stream_every_array_and_stay_in_bounds() {
        let params = KernelParams {
            n: 100,
            steps: 2,
            ..KernelParams::default()
        };
        let info = particles_info(&params);
        assert_eq!(info.regions.len(), 7);
        let mut count = 0;
        particles_generate(&params, &mut |r| {
            count += 1;
            let region = info
                .regions
                .get(r.region)
                .expect("every reference has a region");
            assert!(
                region.contains(r.addr) && region.contains(r.addr + 7),
                "{r:?}"
            );
        });
        assert_eq!(count, 2 * 100 * 14);
    }

    #[test]
    fn array_init_is_one_store_per_element() {
        let params = KernelParams {
            n: 10,
            ..KernelParams::default()
        };
        let mut refs = Vec::new();
        init_generate(&params, &mut |r| refs.push(r));
        assert_eq!(refs.len(), 10);
        assert!(refs.windows(2).all(|w| w[1].addr == w[0].addr + 8));
    }
}
