//! Test harness: runs one shared WGSL function alone, on many inputs, on the
//! adapter wgpu finds (lavapipe in CI), as dimforge's wgebra tests each of
//! its shader functions. The kernel's source is the step stage's shared
//! modules ([`shader::function_test_source`]) and a body that defines
//! `fn run()`: it reads its case's inputs with `arg`, `arg2`, `arg4` and
//! `arg4x4` (column by column) and writes its outputs with `put`, `put2`,
//! `put4` and `put4x4`, each at an offset in reals.
//!
//! Like `tests/gpu.rs`, these tests fail when there is no adapter, or no
//! SHADER_F64 for the f64 half, because a skipped test proves nothing;
//! TETHER_SWEEP_SKIP_GPU_TESTS and TETHER_SWEEP_SKIP_GPU_F64_TESTS skip
//! them knowingly, and say so.

use std::sync::OnceLock;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::super::abi::Real;
use super::super::buffers::{read_back, storage};
use super::super::{Gpu, Precision, shader};

/// Invocations per workgroup of a test kernel.
const WORKGROUP: usize = 64;

/// The harness's half of a kernel: bindings, accessors and the entry point.
/// `{inputs}`, `{outputs}` and `{cases}` are filled in per kernel.
const HARNESS: &str = r#"
@group(0) @binding(0) var<storage, read> inputs: array<real>;
@group(0) @binding(1) var<storage, read_write> outputs: array<real>;
const CASE_INPUTS: u32 = {inputs}u;
const CASE_OUTPUTS: u32 = {outputs}u;
const CASES: u32 = {cases}u;
var<private> case_index: u32;

fn arg(k: u32) -> real { return inputs[case_index * CASE_INPUTS + k]; }
fn arg2(k: u32) -> real2 { return real2(arg(k), arg(k + 1u)); }
fn arg4(k: u32) -> real4 { return real4(arg(k), arg(k + 1u), arg(k + 2u), arg(k + 3u)); }
fn arg4x4(k: u32) -> real4x4 {
    return real4x4(arg4(k), arg4(k + 4u), arg4(k + 8u), arg4(k + 12u));
}
fn put(k: u32, x: real) { outputs[case_index * CASE_OUTPUTS + k] = x; }
fn put2(k: u32, v: real2) { put(k, v.x); put(k + 1u, v.y); }
fn put4(k: u32, v: real4) { put2(k, v.xy); put2(k + 2u, v.zw); }
fn put4x4(k: u32, m: real4x4) { put4(k, m[0]); put4(k + 4u, m[1]); put4(k + 8u, m[2]); put4(k + 12u, m[3]); }

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= CASES) {
        return;
    }
    case_index = id.x;
    run();
}
"#;

/// One shared function's test kernel.
pub(super) struct FunctionKernel<'a> {
    /// What it runs, for messages.
    pub name: &'a str,
    /// Reals read per case.
    pub inputs: usize,
    /// Reals written per case.
    pub outputs: usize,
    /// WGSL defining `fn run()`.
    pub body: &'a str,
}

static GPU: OnceLock<Option<Gpu>> = OnceLock::new();

/// The adapter, opened once for all kernels; `None` when
/// TETHER_SWEEP_SKIP_GPU_TESTS says to skip.
fn gpu() -> Option<&'static Gpu> {
    GPU.get_or_init(|| {
        if std::env::var_os("TETHER_SWEEP_SKIP_GPU_TESTS").is_some() {
            eprintln!("shader function tests skipped (TETHER_SWEEP_SKIP_GPU_TESTS)");
            return None;
        }
        Some(Gpu::open(None).expect(
            "a GPU adapter (CI installs lavapipe: apt-get install mesa-vulkan-drivers); \
             set TETHER_SWEEP_SKIP_GPU_TESTS=1 to skip",
        ))
    })
    .as_ref()
}

impl FunctionKernel<'_> {
    /// The outputs of every case (`inputs` reals each, given in f64 and
    /// rounded to `precision`) as the adapter computes them, or `None` when
    /// the test is skipped knowingly.
    pub fn run(&self, precision: Precision, cases: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
        let gpu = gpu()?;
        if precision == Precision::F64 && !gpu.adapter.shader_f64 {
            if std::env::var_os("TETHER_SWEEP_SKIP_GPU_F64_TESTS").is_some() {
                eprintln!(
                    "{} (f64) skipped: {} has no SHADER_F64",
                    self.name, gpu.adapter
                );
                return None;
            }
            panic!(
                "{} has no SHADER_F64, so {} cannot run in f64; set TETHER_SWEEP_SKIP_GPU_F64_TESTS=1 to skip it knowingly",
                gpu.adapter, self.name
            );
        }
        assert!(cases.iter().all(|c| c.len() == self.inputs));
        let flat: Vec<f64> = cases.concat();
        let out = match precision {
            Precision::F32 => self.dispatch::<f32>(gpu, precision, &flat, cases.len()),
            Precision::F64 => self.dispatch::<f64>(gpu, precision, &flat, cases.len()),
        };
        Some(out.chunks(self.outputs).map(<[f64]>::to_vec).collect())
    }

    fn dispatch<R: Real>(
        &self,
        gpu: &Gpu,
        precision: Precision,
        inputs: &[f64],
        cases: usize,
    ) -> Vec<f64> {
        let harness = HARNESS
            .replace("{inputs}", &self.inputs.to_string())
            .replace("{outputs}", &self.outputs.to_string())
            .replace("{cases}", &cases.to_string());
        let source = shader::function_test_source(precision, &format!("{harness}\n{}", self.body));
        let device = &gpu.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(self.name),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(self.name),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(error) = pollster::block_on(scope.pop()) {
            panic!("test kernel {} does not compile: {error}", self.name);
        }
        let typed: Vec<R> = inputs.iter().map(|&x| R::from_f64(x)).collect();
        let input_buffer = storage(gpu, "inputs", &typed, wgpu::BufferUsages::empty());
        let output_buffer = storage(
            gpu,
            "outputs",
            &vec![R::default(); cases * self.outputs],
            wgpu::BufferUsages::COPY_SRC,
        );
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.name),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: input_buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: output_buffer.as_entire_binding(),
                },
            ],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(cases.div_ceil(WORKGROUP) as u32, 1, 1);
        }
        gpu.queue.submit([encoder.finish()]);
        let out: Vec<R> = read_back(gpu, &output_buffer).expect("reading the outputs back");
        gpu.check().expect("device faults");
        out.iter().map(|x| x.to_f64()).collect()
    }
}

/// Random cases: `count` of them, each from `case` given a generator seeded
/// with `seed`, so that a failure names a reproducible input.
pub(super) fn random_cases(
    seed: u64,
    count: usize,
    mut case: impl FnMut(&mut ChaCha8Rng) -> Vec<f64>,
) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count).map(|_| case(&mut rng)).collect()
}

/// A uniform variate in [low, high).
pub(super) fn uniform(rng: &mut ChaCha8Rng, low: f64, high: f64) -> f64 {
    low + (high - low) * rng.random::<f64>()
}

/// Fails unless each case's outputs from the adapter are within
/// `relative` of the mirror's, relative to the largest magnitude of that
/// case's mirror outputs (entries of one output mix terms of that scale).
pub(super) fn assert_agree(
    name: &str,
    precision: Precision,
    cases: &[Vec<f64>],
    adapter: &[Vec<f64>],
    mirror: &[Vec<f64>],
    relative: f64,
) {
    let mut worst = (0.0f64, 0usize, 0usize);
    for (case, (got, want)) in adapter.iter().zip(mirror).enumerate() {
        assert_eq!(got.len(), want.len());
        let scale = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            let error = (g - w).abs() / scale.max(f64::MIN_POSITIVE);
            // NaN on either side fails too.
            if error.is_nan() || error > worst.0 {
                worst = (if error.is_nan() { f64::INFINITY } else { error }, case, k);
            }
        }
    }
    let (error, case, k) = worst;
    assert!(
        error <= relative,
        "{name} ({}): adapter and mirror differ by {error:.3e} (relative, allowed {relative:.0e}) \
         at output {k} of case {case}: adapter {}, mirror {}; inputs {:?}",
        precision.name(),
        adapter[case][k],
        mirror[case][k],
        cases[case]
    );
    eprintln!(
        "{name} ({}): {} cases, worst relative difference {error:.2e}",
        precision.name(),
        cases.len()
    );
}

/// How much further from the exact value an adapter's f32 output may be
/// than the f32 mirror's own rounding in the same case (see
/// [`assert_as_accurate`]).
const F32_ROUNDING_FACTOR: f64 = 4.0;

/// For f32, where an adapter may round differently from the mirror (a
/// compiler that fuses a multiply-add the mirror rounds twice, as NVIDIA's
/// does): fails unless each output that differs from the mirror by more
/// than `relative` (of the case's scale, as in [`assert_agree`]) is still
/// as close to the exact value, the f64 mirror on the same rounded inputs,
/// as the f32 mirror is, within [`F32_ROUNDING_FACTOR`] times the mirror's
/// largest rounding error in that case. In an ill-conditioned case (a
/// strain of 1e-8 formed from coordinates of 1) both roundings are far
/// from each other and from the exact value; a transcription error (a
/// wrong sign, a wrong coefficient) is far from the exact value in any
/// case.
fn assert_as_accurate(
    name: &str,
    cases: &[Vec<f64>],
    adapter: &[Vec<f64>],
    mirror: &[Vec<f64>],
    exact: &[Vec<f64>],
    relative: f64,
) {
    let mut worst = (0.0f64, 0usize, 0usize, 0.0f64);
    let mut rounding_judged = 0;
    for (case, ((got, want), exact)) in adapter.iter().zip(mirror).zip(exact).enumerate() {
        let scale = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mirror_rounding = want
            .iter()
            .zip(exact)
            .fold(0.0f64, |m, (w, e)| m.max((w - e).abs()));
        let allowed = relative * scale;
        for (k, (g, e)) in got.iter().zip(exact).enumerate() {
            let from_mirror = (g - want[k]).abs();
            if from_mirror <= allowed {
                continue;
            }
            rounding_judged += 1;
            let excess = (g - e).abs() / (F32_ROUNDING_FACTOR * mirror_rounding).max(allowed);
            if excess.is_nan() || excess > worst.0 {
                let excess = if excess.is_nan() {
                    f64::INFINITY
                } else {
                    excess
                };
                worst = (excess, case, k, mirror_rounding);
            }
        }
    }
    let (excess, case, k, mirror_rounding) = worst;
    assert!(
        excess <= 1.0,
        "{name} (f32): the adapter is {excess:.2} times further from the exact value than          {F32_ROUNDING_FACTOR} times the mirror's own rounding ({mirror_rounding:.3e}) at output {k}          of case {case}: adapter {}, mirror {}, exact {}; inputs {:?}",
        adapter[case][k],
        mirror[case][k],
        exact[case][k],
        cases[case]
    );
    eprintln!(
        "{name} (f32): {} cases, {rounding_judged} outputs beyond {relative:.0e} of the mirror          judged by their distance from the exact value (worst {excess:.2} of the allowance)",
        cases.len()
    );
}

/// Runs `kernel` in both precisions on `cases` and compares each with
/// `mirror_f32` / `mirror_f64` (the mirror in that precision, fed the same
/// inputs rounded alike) within `relative_f32` / `relative_f64`; in f32,
/// outputs beyond `relative_f32` are judged against the exact value
/// instead ([`assert_as_accurate`]).
pub(super) fn check_both_precisions(
    kernel: &FunctionKernel,
    cases: &[Vec<f64>],
    mirror_f32: impl Fn(&[f32]) -> Vec<f64>,
    mirror_f64: impl Fn(&[f64]) -> Vec<f64>,
    (relative_f32, relative_f64): (f64, f64),
) {
    if let Some(adapter) = kernel.run(Precision::F32, cases) {
        let mirror: Vec<Vec<f64>> = cases
            .iter()
            .map(|c| mirror_f32(&c.iter().map(|&x| x as f32).collect::<Vec<_>>()))
            .collect();
        let exact: Vec<Vec<f64>> = cases
            .iter()
            .map(|c| mirror_f64(&c.iter().map(|&x| x as f32 as f64).collect::<Vec<_>>()))
            .collect();
        assert_as_accurate(kernel.name, cases, &adapter, &mirror, &exact, relative_f32);
    }
    if let Some(adapter) = kernel.run(Precision::F64, cases) {
        let mirror: Vec<Vec<f64>> = cases.iter().map(|c| mirror_f64(c)).collect();
        assert_agree(
            kernel.name,
            Precision::F64,
            cases,
            &adapter,
            &mirror,
            relative_f64,
        );
    }
}

/// A mirror's outputs (a matrix column by column, as `put4x4` writes it), in
/// f64.
pub(super) fn reals<'a, R: super::MirrorReal>(values: impl IntoIterator<Item = &'a R>) -> Vec<f64> {
    values.into_iter().map(|x| x.to_f64()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Case 0 is ill-conditioned: the f32 mirror is 1e-3 off the exact
    /// value, so an adapter rounding otherwise may be too. Case 1 is well
    /// conditioned: the mirror is exact to 1e-7.
    type Cases = Vec<Vec<f64>>;

    /// (inputs, f32 mirror, exact).
    fn cases() -> (Cases, Cases, Cases) {
        let inputs = vec![vec![0.0], vec![1.0]];
        let mirror = vec![vec![1.001, 2.0], vec![1.0, 2.0000001]];
        let exact = vec![vec![1.0, 2.0], vec![1.0, 2.0]];
        (inputs, mirror, exact)
    }

    #[test]
    fn another_rounding_of_an_ill_conditioned_case_passes() {
        let (inputs, mirror, exact) = cases();
        let adapter = vec![vec![0.998, 2.0], vec![1.0, 2.0]];
        assert_as_accurate("test", &inputs, &adapter, &mirror, &exact, 1e-5);
    }

    #[test]
    #[should_panic(expected = "further from the exact value")]
    fn an_error_in_a_well_conditioned_case_fails() {
        let (inputs, mirror, exact) = cases();
        // 1e-4 off where the mirror rounds to 1e-7: a transcription error.
        let adapter = vec![vec![1.0, 2.0], vec![1.0, 2.0002]];
        assert_as_accurate("test", &inputs, &adapter, &mirror, &exact, 1e-5);
    }

    #[test]
    #[should_panic(expected = "further from the exact value")]
    fn a_nan_fails() {
        let (inputs, mirror, exact) = cases();
        let adapter = vec![vec![f64::NAN, 2.0], vec![1.0, 2.0]];
        assert_as_accurate("test", &inputs, &adapter, &mirror, &exact, 1e-5);
    }
}
