//! The GPU engine on a small batch of drops (n = 10, 16 simulations, D over
//! 0–10000 Pa·s, 0.04 s), both schemes in f32 and f64, against the CPU
//! explicit and reference solvers on all cores. Each iteration includes the
//! host's setup of the batch (`bench::run`). The full throughput table is `tether-sweep bench`
//! (BENCHMARKS.md); this keeps a regression check under `cargo bench`.
//! Without a GPU adapter the GPU cases are skipped with a notice.

use criterion::{Criterion, criterion_group, criterion_main};
use tether_sweep::bench::{self, Engine, Peaks};
use tether_sweep::gpu::Gpu;

fn engines(c: &mut Criterion) {
    let gpu = match Gpu::open(None) {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("GPU cases skipped: {e}");
            None
        }
    };
    let scenario = bench::scenario(0.04);
    let peaks = Peaks::default();
    let mut group = c.benchmark_group("drop n=10 batch=16 0.04 s");
    group.sample_size(10);
    let mut run = |engine: Engine| {
        group.bench_function(engine.name(), |b| {
            b.iter(|| bench::run(engine, gpu.as_ref(), &scenario, (10, 16), 1, &peaks).unwrap())
        });
    };
    if let Some(g) = &gpu {
        run(Engine::GpuF32);
        run(Engine::GpuSemiImplicitF32);
        if g.adapter.shader_f64 {
            run(Engine::GpuF64);
            run(Engine::GpuSemiImplicitF64);
        }
    }
    run(Engine::CpuExplicit);
    run(Engine::CpuReference);
    group.finish();
}

criterion_group!(benches, engines);
criterion_main!(benches);
