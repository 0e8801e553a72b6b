//! Wall time of one 2-s drop of the paper (n = 40, D = 2000 Pa·s, C_D = 0.8) on each
//! CPU solver, single-threaded. The target: the reference solver at
//! least 5× faster than Exudyn 1.13.6's generalized-α on the same machine
//! (see BENCHMARKS.md for both numbers and how Exudyn was timed).
//!
//! Also the kernels that take most of its time (BENCHMARKS.md): the
//! generalized force and tangent at n = 50, and the solves of that size
//! (real, and Radau IIA's complex one).
//!
//! Run: `cargo bench --bench reference_solver`

use std::f64::consts::FRAC_1_SQRT_2;

use criterion::{Criterion, criterion_group, criterion_main};
use tether_sweep::linalg::{BandedMatrix, BlockTridiagonalLu, Complex64};
use tether_sweep::model::tether::PRESCRIBED_DOFS;
use tether_sweep::model::{Tether, TetherParams};
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverSettings, simulate};
use tether_sweep::solver::SolverKind;

fn drop_n40(c: &mut Criterion) {
    let params = TetherParams {
        elements: 40,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        ..Default::default()
    };
    let scenario = Scenario::new(ScenarioKind::Drop, params.length_m);
    let mut group = c.benchmark_group("drop_2s_n40_d2000");
    group.sample_size(10);
    for kind in [SolverKind::Reference, SolverKind::Explicit] {
        let settings = SolverSettings {
            kind,
            ..Default::default()
        };
        group.bench_function(kind.name(), |b| {
            b.iter(|| simulate(&scenario, &params, &settings).expect("drop runs"))
        });
    }
    group.finish();
}

/// A moving, bent n = 50 tether: the force's cost does not depend on the
/// state, but a state with every term nonzero exercises all of it.
fn kernels(c: &mut Criterion) {
    let params = TetherParams {
        elements: 50,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        ..Default::default()
    };
    let tether = Tether::new(params).expect("valid tether");
    let dofs = tether.dofs();
    let q: Vec<f64> = (0..dofs)
        .map(|i| {
            let node = (i / 4) as f64;
            match i % 4 {
                0 => 0.0085 * node,
                1 => -0.0085 * node + 1e-4 * node.sin(),
                2 => FRAC_1_SQRT_2,
                _ => -FRAC_1_SQRT_2 + 1e-3 * node.cos(),
            }
        })
        .collect();
    let v: Vec<f64> = (0..dofs).map(|i| 0.1 * (0.3 * i as f64).cos()).collect();
    let mut f = vec![0.0; dofs];
    let mut group = c.benchmark_group("kernels_n50");
    group.bench_function("generalized_force", |b| {
        b.iter(|| tether.generalized_force(std::hint::black_box(&q), &v, &mut f))
    });
    let mut stiffness = BandedMatrix::zeros(dofs, tether.mass().half_bandwidth());
    let mut damping = stiffness.clone();
    group.bench_function("tangent", |b| {
        b.iter(|| tether.tangent(std::hint::black_box(&q), &v, &mut stiffness, &mut damping))
    });
    let mut iteration = tether.mass().clone();
    iteration.scale_add(1.0, &stiffness, 1e-8);
    iteration.scale_add(1.0, &damping, 1e-4);
    let lu = iteration
        .trailing(PRESCRIBED_DOFS)
        .factor()
        .expect("factors");
    let rhs: Vec<f64> = v[PRESCRIBED_DOFS..].to_vec();
    let mut x = rhs.clone();
    group.bench_function("banded_solve", |b| {
        b.iter(|| {
            x.copy_from_slice(&rhs);
            lu.solve_in_place(std::hint::black_box(&mut x))
        })
    });
    group.bench_function("banded_factor", |b| {
        b.iter(|| {
            iteration
                .trailing(PRESCRIBED_DOFS)
                .factor()
                .expect("factors")
        })
    });
    group.bench_function("block_tridiagonal_factor", |b| {
        b.iter(|| BlockTridiagonalLu::factor(&iteration, PRESCRIBED_DOFS).expect("factors"))
    });
    let blocked = BlockTridiagonalLu::factor(&iteration, PRESCRIBED_DOFS).expect("factors");
    group.bench_function("block_tridiagonal_solve", |b| {
        b.iter(|| {
            x.copy_from_slice(&rhs);
            blocked.solve_in_place(std::hint::black_box(&mut x))
        })
    });
    // Radau IIA's complex system, M + μh C + (μh)² K, at a 5-ms step.
    let mu_h = 5e-3 / Complex64::new(2.68, 3.05);
    let terms = [
        (Complex64::new(1.0, 0.0), tether.mass()),
        (mu_h, &damping),
        (mu_h * mu_h, &stiffness),
    ];
    group.bench_function("block_tridiagonal_factor_complex", |b| {
        b.iter(|| {
            BlockTridiagonalLu::factor_combination(std::hint::black_box(&terms), PRESCRIBED_DOFS)
                .expect("factors")
        })
    });
    let complex = BlockTridiagonalLu::factor_combination(&terms, PRESCRIBED_DOFS).expect("factors");
    let complex_rhs: Vec<Complex64> = rhs.iter().map(|&r| Complex64::new(r, -0.5 * r)).collect();
    let mut z = complex_rhs.clone();
    group.bench_function("block_tridiagonal_solve_complex", |b| {
        b.iter(|| {
            z.copy_from_slice(&complex_rhs);
            complex.solve_in_place(std::hint::black_box(&mut z))
        })
    });
    group.finish();
}

criterion_group!(benches, drop_n40, kernels);
criterion_main!(benches);
