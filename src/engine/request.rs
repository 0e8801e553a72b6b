//! What a job asks of the engine choice ([`EngineRequest`]), the settings
//! the GPU's adaptive scheme would run it at, and why that scheme may not
//! be weighed: read by the estimates and the decision alike.

use super::EngineOptions;
use crate::gpu::adaptive::{check_tolerance, f32_first_pass_tolerance_m};
use crate::gpu::layout::LayoutRequest;
use crate::gpu::{GpuError, Precision};
use crate::scenario::SolverSettings;
use crate::solver::{ReferenceOptions, SolverKind};

/// What a job asks for: its options, and what the choice weighs.
#[derive(Debug, Clone, Copy)]
pub struct EngineRequest<'a> {
    pub options: &'a EngineOptions,
    /// The CPU engine's settings when the CPU runs the job (its solver kind
    /// is `options.solver`, else the job's default).
    pub cpu: SolverSettings,
    /// How many simulations the job runs.
    pub simulations: usize,
    /// Whether the reference solver's tolerance is a first pass's
    /// (identify's scouting, `sweep::accuracy`): its candidates near the
    /// best are re-run at the data's tolerance, with a margin grown from
    /// the shifts measured, so a looser first pass decides nothing and only
    /// re-runs more of them. The GPU's adaptive scheme in f32 then runs at
    /// f32's first-pass tolerance for the job's n where that is looser
    /// ([`adaptive_reference`]).
    pub scouting: bool,
}

/// Why a choice failed: the GPU was asked for and cannot be had, or a
/// measurement failed.
#[derive(Debug, thiserror::Error)]
pub enum ChoiceError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("estimating the job's work: {0}")]
    Estimate(String),
}

/// Why the GPU's adaptive scheme is not weighed for this job, if it is not:
/// another solver asked for, the thread layout asked for, or a tolerance
/// the stage refuses in its precision ([`check_tolerance`]: in f32 one
/// below its floor).
pub(super) fn adaptive_refusal(request: &EngineRequest<'_>, largest: usize) -> Option<String> {
    let options = request.options;
    if request.cpu.kind != SolverKind::Reference {
        return Some(format!("--solver {}", request.cpu.kind.name()));
    }
    if options.gpu_layout == LayoutRequest::Thread {
        return Some("--gpu-layout thread".into());
    }
    if let Err(e) = crate::gpu::adaptive::check_method(request.cpu.reference.method) {
        return Some(format!("implicit_method {}", e.value));
    }
    let tolerance_m = adaptive_reference(request, largest).tolerance_m;
    check_tolerance(options.precision, tolerance_m)
        .err()
        .map(|e| {
            format!(
                "its tolerance {tolerance_m:e} m is not one it takes: {}",
                e.allowed
            )
        })
}

/// The reference settings the GPU's adaptive scheme runs the job at: the
/// job's, and for a scouting first pass in f32 no tighter than f32's
/// first-pass tolerance at the job's largest n
/// ([`f32_first_pass_tolerance_m`]: a first pass at 1e-6 m instead of
/// 1e-7 m re-runs 81 candidates of the default grid instead of 50, with
/// the same best, region and refined values, BENCHMARKS.md).
pub fn adaptive_reference(request: &EngineRequest<'_>, largest: usize) -> ReferenceOptions {
    let mut reference = request.cpu.reference;
    if request.scouting && request.options.precision == Precision::F32 {
        reference.tolerance_m = reference
            .tolerance_m
            .max(f32_first_pass_tolerance_m(largest));
    }
    reference
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_adaptive_scheme_is_weighed_where_it_can_run_as_counted() {
        let request = |options: &EngineOptions, kind: SolverKind, tolerance_m: f64| {
            let mut cpu = SolverSettings::reference_at(tolerance_m);
            cpu.kind = kind;
            adaptive_refusal(
                &EngineRequest {
                    options,
                    cpu,
                    simulations: 100,
                    scouting: false,
                },
                40,
            )
        };
        let f32 = EngineOptions::default();
        let f64 = EngineOptions {
            precision: Precision::F64,
            ..EngineOptions::default()
        };
        assert_eq!(request(&f64, SolverKind::Reference, 1e-9), None);
        assert_eq!(request(&f32, SolverKind::Reference, 1e-6), None);
        // f32 down to its floor (there in about f64's steps), not below.
        assert_eq!(request(&f32, SolverKind::Reference, 1e-7), None);
        let why = request(&f32, SolverKind::Reference, 5e-8).unwrap();
        assert!(
            why.contains("--precision f64") && why.contains("at least 1e-7 m"),
            "{why}"
        );
        let why = request(&f64, SolverKind::SemiImplicit, 1e-9).unwrap();
        assert!(why.contains("--solver semi-implicit"), "{why}");
        let thread = EngineOptions {
            gpu_layout: LayoutRequest::Thread,
            ..f64
        };
        let why = request(&thread, SolverKind::Reference, 1e-9).unwrap();
        assert!(why.contains("--gpu-layout thread"), "{why}");
    }

    #[test]
    fn only_a_scouting_first_pass_in_f32_is_loosened() {
        let f32 = EngineOptions::default();
        let f64 = EngineOptions {
            precision: Precision::F64,
            ..EngineOptions::default()
        };
        let tolerance = |options: &EngineOptions, scouting: bool, largest: usize| {
            let request = EngineRequest {
                options,
                cpu: SolverSettings::reference_at(1e-7),
                simulations: 100,
                scouting,
            };
            adaptive_reference(&request, largest).tolerance_m
        };
        assert_eq!(tolerance(&f32, true, 40), 1e-6);
        assert_eq!(tolerance(&f32, true, 10), 1e-7);
        assert_eq!(tolerance(&f32, false, 40), 1e-7);
        assert_eq!(tolerance(&f64, true, 40), 1e-7);
    }
}
