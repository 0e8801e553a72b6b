//! Where and how a job's simulations run: one [`EngineKind`] type for every job
//! (simulate, identify, the swing-up GA and its landscape, bench), and the
//! one place ([`choice`]) that turns `--backend auto|gpu|cpu` into an
//! engine with the reason it prints.
//!
//! Layer: above `solver`, `gpu` and `scenario` (an engine names a CPU
//! solver's settings or a GPU scheme), below the workflows that use it.

pub mod calibrate;
pub mod calibration;
pub mod choice;
mod cpu_run;
pub mod estimate;
mod gpu_run;
pub mod request;
pub mod run;
mod simulation;

use serde::{Deserialize, Serialize};

use crate::gpu::Precision;
use crate::named::{Named, display_and_parse_by_name};
use crate::scenario::SolverSettings;
use crate::scheme::FixedStepScheme;
use crate::solver::SolverKind;

/// What `--backend` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The faster of the CPU and the GPU for this job, from the work it
    /// counts and the rates it measures (see `engine::choice`).
    #[default]
    Auto,
    /// The GPU engine, even on a CPU emulation such as lavapipe.
    Gpu,
    /// The CPU solvers on all cores.
    Cpu,
}

impl Named for Backend {
    const WHAT: &'static str = "backend";
    const ALL: &'static [Self] = &[Backend::Auto, Backend::Gpu, Backend::Cpu];

    fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Backend::Auto => {
                "The faster of the CPU and the GPU for this job, from the work it counts and the rates it measures (see `engine::choice`)"
            }
            Backend::Gpu => "The GPU engine, even on a CPU emulation such as lavapipe",
            Backend::Cpu => "The CPU solvers on all cores",
        }
    }
}

display_and_parse_by_name!(Backend);

pub use crate::gpu::{GpuLayout, LayoutRequest};

/// How a job asks to be run: the engine flags every command shares
/// (`--backend`, `--adapter`, `--precision`, `--gpu-layout`, `--solver`),
/// carried whole by each workflow's request into [`choice::choose`] and
/// recorded whole in the metadata (`tether_sweep.engine_options`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineOptions {
    pub backend: Backend,
    /// An adapter's index or part of its name; None: the first.
    pub adapter: Option<String>,
    /// The GPU's precision (the CPU is f64).
    pub precision: Precision,
    /// The GPU's layout, or `auto` (for each batch and scheme, `gpu::cost`).
    pub gpu_layout: LayoutRequest,
    /// `--solver`; None: the job's default (reference on the CPU,
    /// semi-implicit on the GPU).
    pub solver: Option<SolverKind>,
}

impl EngineOptions {
    /// The CPU with the job's default solver.
    pub fn cpu() -> Self {
        Self {
            backend: Backend::Cpu,
            ..Self::default()
        }
    }
}
pub use run::{Engine, Outcome, PreparedBatch, Progress, RunHooks, Simulation};

/// An engine: a CPU solver on all cores, or the GPU engine with a precision,
/// a fixed-step scheme and a layout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EngineKind {
    Cpu(SolverSettings),
    Gpu {
        precision: Precision,
        scheme: FixedStepScheme,
        /// `--gpu-layout`: a layout, or `auto` for the cost model's per
        /// chunk (`gpu::cost`).
        layout: LayoutRequest,
    },
    /// The reference solver's adaptive implicit scheme on the GPU
    /// (`gpu::adaptive`), with its settings.
    GpuAdaptive {
        precision: Precision,
        reference: crate::solver::ReferenceOptions,
    },
}

/// The engine as the results tables and their metadata name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineNames {
    pub backend: String,
    pub precision: String,
    pub solver: String,
}

impl EngineKind {
    /// The GPU engine with `scheme` in `precision`, its layout left to the
    /// cost model.
    pub const fn gpu(precision: Precision, scheme: FixedStepScheme) -> Self {
        EngineKind::Gpu {
            precision,
            scheme,
            layout: LayoutRequest::Auto,
        }
    }

    /// The same engine with `--gpu-layout` `layout` (no change on the CPU).
    pub const fn with_layout(self, layout: LayoutRequest) -> Self {
        match self {
            EngineKind::Gpu {
                precision, scheme, ..
            } => EngineKind::Gpu {
                precision,
                scheme,
                layout,
            },
            cpu => cpu,
        }
    }

    /// The CPU running `kind` with its default settings.
    pub const fn cpu(kind: SolverKind) -> Self {
        EngineKind::Cpu(SolverSettings {
            kind,
            step_s: None,
            reference: crate::solver::ReferenceOptions::DEFAULT,
        })
    }

    pub fn is_gpu(&self) -> bool {
        matches!(
            self,
            EngineKind::Gpu { .. } | EngineKind::GpuAdaptive { .. }
        )
    }

    /// `cpu` or `gpu`.
    pub fn backend_name(&self) -> &'static str {
        match self {
            EngineKind::Cpu(_) => "cpu",
            EngineKind::Gpu { .. } | EngineKind::GpuAdaptive { .. } => "gpu",
        }
    }

    /// The arithmetic: f64 on the CPU.
    pub fn precision(&self) -> Precision {
        match self {
            EngineKind::Cpu(_) => Precision::F64,
            EngineKind::Gpu { precision, .. } | EngineKind::GpuAdaptive { precision, .. } => {
                *precision
            }
        }
    }

    /// The solver, as the CPU names the GPU's schemes too.
    pub fn solver(&self) -> SolverKind {
        match self {
            EngineKind::Cpu(settings) => settings.kind,
            EngineKind::Gpu { scheme, .. } => SolverKind::from(*scheme),
            EngineKind::GpuAdaptive { .. } => SolverKind::Reference,
        }
    }

    /// The fixed-step scheme, on the GPU.
    pub fn gpu_scheme(&self) -> Option<FixedStepScheme> {
        match self {
            EngineKind::Cpu(_) | EngineKind::GpuAdaptive { .. } => None,
            EngineKind::Gpu { scheme, .. } => Some(*scheme),
        }
    }

    /// The layout asked for, on the GPU.
    pub fn gpu_layout(&self) -> Option<LayoutRequest> {
        match self {
            EngineKind::Cpu(_) | EngineKind::GpuAdaptive { .. } => None,
            EngineKind::Gpu { layout, .. } => Some(*layout),
        }
    }

    pub fn names(&self) -> EngineNames {
        EngineNames {
            backend: self.backend_name().into(),
            precision: self.precision().name().into(),
            solver: self.solver().name().into(),
        }
    }

    /// The CPU as a device on a terminal or in a table: `CPU, 2 threads`
    /// (`CPU, 1 thread` where rayon runs one).
    pub fn cpu_device_name() -> String {
        match rayon::current_num_threads() {
            1 => "CPU, 1 thread".to_string(),
            threads => format!("CPU, {threads} threads"),
        }
    }

    /// One line for a terminal: `CPU reference solver, f64`.
    pub fn describe(&self) -> String {
        match self {
            EngineKind::Cpu(s) => format!("CPU {} solver, f64", s.kind.name()),
            EngineKind::Gpu {
                precision,
                scheme,
                layout,
            } => format!(
                "GPU {} scheme, {}, {} layout",
                scheme.name(),
                precision.name(),
                layout.name()
            ),
            EngineKind::GpuAdaptive {
                precision,
                reference,
            } => format!(
                "GPU reference solver (adaptive implicit), {}, tolerance {:e} m",
                precision.name(),
                reference.tolerance_m
            ),
        }
    }

    /// The engines `bench --engines` names, with their names, in the
    /// order the bench runs them.
    pub const BENCH: [(&'static str, EngineKind); 9] = [
        (
            "gpu-f32",
            EngineKind::gpu(Precision::F32, FixedStepScheme::Explicit),
        ),
        (
            "gpu-semi-implicit-f32",
            EngineKind::gpu(Precision::F32, FixedStepScheme::SemiImplicit),
        ),
        (
            "gpu-f64",
            EngineKind::gpu(Precision::F64, FixedStepScheme::Explicit),
        ),
        (
            "gpu-semi-implicit-f64",
            EngineKind::gpu(Precision::F64, FixedStepScheme::SemiImplicit),
        ),
        // The reference solver's scheme on the GPU: in f32 at its
        // tolerance floor (docs/gpu.md), in f64 at the CPU's default.
        (
            "gpu-reference-f32",
            EngineKind::GpuAdaptive {
                precision: Precision::F32,
                reference: crate::solver::ReferenceOptions {
                    tolerance_m: 1e-7,
                    ..crate::solver::ReferenceOptions::DEFAULT
                },
            },
        ),
        (
            "gpu-reference-f64",
            EngineKind::GpuAdaptive {
                precision: Precision::F64,
                reference: crate::solver::ReferenceOptions::DEFAULT,
            },
        ),
        ("cpu-explicit", EngineKind::cpu(SolverKind::Explicit)),
        (
            "cpu-semi-implicit",
            EngineKind::cpu(SolverKind::SemiImplicit),
        ),
        ("cpu-reference", EngineKind::cpu(SolverKind::Reference)),
    ];

    /// The engine's name in `bench` (`gpu-semi-implicit-f32`, …).
    pub fn bench_name(&self) -> &'static str {
        // By precision, whatever its tolerance.
        if let EngineKind::GpuAdaptive { precision, .. } = self {
            return match precision {
                Precision::F32 => "gpu-reference-f32",
                Precision::F64 => "gpu-reference-f64",
            };
        }
        Self::BENCH
            .iter()
            .find(|(_, e)| e.same_kind(self))
            .map(|(name, _)| *name)
            .expect("every engine kind has a bench name")
    }

    /// The engine `bench --engines` calls `name`.
    pub fn from_bench_name(name: &str) -> Option<Self> {
        Self::BENCH
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, e)| *e)
    }

    /// Same backend, precision and scheme, whatever the CPU solver's
    /// tolerances or the GPU's layout.
    fn same_kind(&self, other: &EngineKind) -> bool {
        match (self, other) {
            (EngineKind::Cpu(a), EngineKind::Cpu(b)) => a.kind == b.kind,
            (a, b) => a.with_layout(LayoutRequest::Auto) == b.with_layout(LayoutRequest::Auto),
        }
    }
}

/// The GPU scheme a job runs for its `--solver`: the one named, else the
/// semi-implicit scheme, whose step D·n² does not bound.
pub fn gpu_scheme(solver: Option<SolverKind>) -> FixedStepScheme {
    solver
        .and_then(SolverKind::fixed_step_scheme)
        .unwrap_or(FixedStepScheme::SemiImplicit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_names_round_trip_and_are_distinct() {
        for (name, engine) in EngineKind::BENCH {
            assert_eq!(engine.bench_name(), name);
            assert_eq!(EngineKind::from_bench_name(name), Some(engine));
        }
        assert_eq!(EngineKind::from_bench_name("gpu"), None);
    }

    #[test]
    fn names_are_the_results_table_columns() {
        let cpu = EngineKind::cpu(SolverKind::Reference).names();
        assert_eq!(
            (
                cpu.backend.as_str(),
                cpu.precision.as_str(),
                cpu.solver.as_str()
            ),
            ("cpu", "f64", "reference")
        );
        let gpu = EngineKind::gpu(Precision::F32, FixedStepScheme::SemiImplicit).names();
        assert_eq!(
            (
                gpu.backend.as_str(),
                gpu.precision.as_str(),
                gpu.solver.as_str()
            ),
            ("gpu", "f32", "semi-implicit")
        );
    }
}
