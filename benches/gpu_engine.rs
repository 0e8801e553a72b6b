//! The GPU engine on a small batch of drops (n = 10, 16 simulations, D over
//! 0–10000 Pa·s, 0.04 s), both schemes in f32 and f64, against the CPU
//! explicit and reference solvers on all cores. Each iteration includes the
//! host's setup of the batch (`throughput::run`). The full throughput table is `tether-sweep bench`
//! (BENCHMARKS.md); this keeps a regression check under `cargo bench`.
//! Without a GPU adapter the GPU cases are skipped with a notice.

use criterion::{Criterion, criterion_group, criterion_main};
use tether_sweep::engine::{Engine, EngineKind};
use tether_sweep::gpu::{Gpu, Precision};
use tether_sweep::scheme::FixedStepScheme;
use tether_sweep::solver::SolverKind;
use tether_sweep::throughput::{self, Peaks};

fn engines(c: &mut Criterion) {
    let gpu = match Gpu::open(None) {
        Ok(g) => Some(std::sync::Arc::new(g)),
        Err(e) => {
            eprintln!("GPU cases skipped: {e}");
            None
        }
    };
    let scenario = throughput::scenario(0.04);
    let peaks = Peaks::default();
    let mut group = c.benchmark_group("drop n=10 batch=16 0.04 s");
    group.sample_size(10);
    let mut run = |engine: EngineKind| {
        group.bench_function(engine.bench_name(), |b| {
            let engine = Engine::open(engine, gpu.as_ref()).unwrap();
            b.iter(|| throughput::run(&engine, &scenario, (10, 16), 1, &peaks).unwrap())
        });
    };
    if let Some(g) = &gpu {
        let precisions: &[Precision] = if g.adapter.shader_f64 {
            &[Precision::F32, Precision::F64]
        } else {
            &[Precision::F32]
        };
        for &precision in precisions {
            run(EngineKind::gpu(precision, FixedStepScheme::Explicit));
            run(EngineKind::gpu(precision, FixedStepScheme::SemiImplicit));
        }
    }
    run(EngineKind::cpu(SolverKind::Explicit));
    run(EngineKind::cpu(SolverKind::Reference));
    group.finish();
}

criterion_group!(benches, engines);
criterion_main!(benches);
