//! Wall time of one 2-s SPEC drop (n = 40, D = 2000 Pa·s, C_D = 0.8) on each
//! CPU solver, single-threaded. The target: the reference solver at
//! least 5× faster than Exudyn 1.13.6's generalized-α on the same machine
//! (see BENCHMARKS.md for both numbers and how Exudyn was timed).
//!
//! Run: `cargo bench --bench reference_solver`

use criterion::{Criterion, criterion_group, criterion_main};
use tether_sweep::model::TetherParams;
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

criterion_group!(benches, drop_n40);
criterion_main!(benches);
