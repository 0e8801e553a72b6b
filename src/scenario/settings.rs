//! How a scenario is solved: which CPU solver with its settings, and what
//! a run reports about its solver.

use serde::Serialize;

use crate::error::InputError;
use crate::scheme::FixedStepScheme;
use crate::solver::reference::ReferenceStats;
use crate::solver::{ReferenceOptions, SolverKind};

/// How to solve: which CPU solver, and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SolverSettings {
    pub kind: SolverKind,
    /// Step of the fixed-step schemes (explicit, semi-implicit); None
    /// chooses it from the model (docs/model.md §8).
    pub step_s: Option<f64>,
    pub reference: ReferenceOptions,
}

impl SolverSettings {
    /// The reference solver at its default tolerance.
    pub fn reference() -> Self {
        Self {
            kind: SolverKind::Reference,
            ..Default::default()
        }
    }

    /// The reference solver at local error tolerance `tolerance_m` \[m\].
    pub fn reference_at(tolerance_m: f64) -> Self {
        let mut settings = Self::reference();
        settings.reference.tolerance_m = tolerance_m;
        settings
    }

    /// The reference solver at a user's tolerance, checked against its
    /// range (`tolerance_m`), or at its default.
    pub fn checked_reference(tolerance_m: Option<f64>) -> Result<Self, InputError> {
        match tolerance_m {
            Some(t) => {
                crate::solver::reference::check_tolerance_m("tolerance_m", t)?;
                Ok(Self::reference_at(t))
            }
            None => Ok(Self::reference()),
        }
    }
}

impl Default for SolverSettings {
    fn default() -> Self {
        Self {
            kind: SolverKind::Explicit,
            step_s: None,
            reference: ReferenceOptions::default(),
        }
    }
}

/// What one solver run reports about itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum SolverReport {
    /// A fixed-step CPU scheme (explicit or semi-implicit).
    FixedStep {
        scheme: FixedStepScheme,
        step_s: f64,
        steps: u64,
    },
    Reference(ReferenceStats),
    /// The GPU's adaptive implicit scheme (the reference solver's, on the
    /// GPU: `gpu::adaptive`), with what it did.
    GpuAdaptive {
        precision: crate::gpu::Precision,
        tolerance_m: f64,
        steps: u64,
        rejected_steps: u64,
        newton_iterations: u64,
        factorizations: u64,
        max_local_error_m: f64,
    },
    /// The GPU engine.
    Gpu {
        scheme: FixedStepScheme,
        step_s: f64,
        steps: u64,
        precision: crate::gpu::Precision,
        /// The layout it ran in.
        layout: crate::gpu::GpuLayout,
    },
}
