//! How one simulation ended, on any engine: the CPU solvers (through
//! `solver::SolverError::status`), the GPU's fixed-step and adaptive
//! schemes and their CPU mirrors (`gpu`), and every batch, sweep and GA
//! row above them. Below both engines so that each names its ends the same
//! way and neither depends on the other.

use std::fmt;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum RunStatus {
    Ok,
    /// The state blew up, or the solver could not go on (at `time_s` when
    /// the failure has one); it has no objective. `reason` says how.
    Diverged {
        time_s: Option<f64>,
        reason: String,
    },
    /// The adaptive implicit scheme's Newton method kept failing until the
    /// step fell below the smallest one; no objective. The fixed-step
    /// schemes never end so.
    NewtonFailed {
        time_s: f64,
        step_s: f64,
    },
    /// Stopped (Ctrl-C, the cancel flag) before it finished; its objectives
    /// are partial and must not be used.
    Cancelled,
    /// Stopped at `time_s` \[s\] (the film's clock) because its J_e, summed
    /// over the frames so far, had passed a bound it could no longer come
    /// under: the partial J_e it keeps is a lower bound of the whole
    /// film's (docs/identify.md, "Hopeless candidates").
    Abandoned {
        time_s: f64,
    },
}

impl RunStatus {
    /// A failure with no time, in words (a table read back, a test).
    pub fn diverged(reason: impl Into<String>) -> Self {
        RunStatus::Diverged {
            time_s: None,
            reason: reason.into(),
        }
    }

    /// The state blew up at `time_s` \[s\].
    pub fn diverged_at(time_s: f64, reason: impl Into<String>) -> Self {
        RunStatus::Diverged {
            time_s: Some(time_s),
            reason: reason.into(),
        }
    }

    /// The word a table's `status` column holds: a Newton failure is a
    /// divergence there, as it has no objective either.
    pub fn name(&self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Diverged { .. } | RunStatus::NewtonFailed { .. } => "diverged",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Abandoned { .. } => "abandoned",
        }
    }

    pub fn is_ok(&self) -> bool {
        *self == RunStatus::Ok
    }

    /// Ended by failing (diverged or a Newton failure), not by finishing or
    /// being stopped.
    pub fn failed(&self) -> bool {
        matches!(
            self,
            RunStatus::Diverged { .. } | RunStatus::NewtonFailed { .. }
        )
    }

    /// Where an abandoned run stopped \[s\] (its J_e a lower bound); None
    /// for every other end.
    pub fn abandoned_at(&self) -> Option<f64> {
        match *self {
            RunStatus::Abandoned { time_s } => Some(time_s),
            _ => None,
        }
    }

    /// The same end, its reason said to be in film `film`'s simulation.
    pub fn in_film(self, film: &str) -> Self {
        match self {
            RunStatus::Diverged { time_s, reason } => RunStatus::Diverged {
                time_s,
                reason: format!("film {film}: {reason}"),
            },
            other => other,
        }
    }
}

/// In the words of the solver's errors (`solver::SolverError`).
impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunStatus::Ok => write!(f, "finished"),
            RunStatus::Diverged {
                time_s: Some(time_s),
                reason,
            } => write!(f, "simulation diverged at t = {time_s} s: {reason}"),
            RunStatus::Diverged {
                time_s: None,
                reason,
            } => write!(f, "{reason}"),
            RunStatus::NewtonFailed { time_s, step_s } => write!(
                f,
                "Newton iteration of the reference solver failed at t = {time_s} s (step fell to {step_s:e} s)"
            ),
            RunStatus::Cancelled => write!(f, "cancelled (interrupted) before it finished"),
            RunStatus::Abandoned { time_s } => write!(
                f,
                "abandoned at t = {time_s} s: its J_e had passed the bound it could not come under"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newton_failure_is_a_divergence_in_the_tables_and_says_its_step() {
        let failed = RunStatus::NewtonFailed {
            time_s: 0.5,
            step_s: 1e-9,
        };
        assert_eq!(failed.name(), "diverged");
        assert!(failed.failed() && !failed.is_ok());
        assert!(failed.to_string().contains("1e-9 s"), "{failed}");
        let exploded = RunStatus::diverged_at(0.25, "state exploded").in_film("steep");
        assert_eq!(
            exploded.to_string(),
            "simulation diverged at t = 0.25 s: film steep: state exploded"
        );
        assert!(!RunStatus::Cancelled.failed());
        assert_eq!(RunStatus::Cancelled.name(), "cancelled");
    }
}
