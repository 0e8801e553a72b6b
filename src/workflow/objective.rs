//! The batched objective: J_e of any list of candidates against a film,
//! run as one batch on the engine an identification of the same request
//! would choose, at its tolerance. What optimizers, samplers and other
//! programs call instead of a whole identification.
//!
//! It is the sweep's own path ([`crate::sweep::run`] on the same film,
//! experiment, engine and solver settings as [`super::identify::prepare`]
//! makes them), so on the CPU a candidate's J_e is the one
//! `results.parquet` holds for it at the same tolerance, whatever else is
//! in the batch. Along a release axis, candidates that differ only in the
//! release time share one simulation of every value of the grid's axis and
//! of the batch's own (a value off the grid's axis joins its group's
//! simulation, and so moves its group's J_e within the solver's
//! tolerance).

use super::WorkflowError;
use super::identify::{IdentifyRequest, check_settings, choose_sweep_engine};
use crate::engine::{Engine, EngineKind, RunHooks};
use crate::error::InputError;
use crate::model::TetherParams;
use crate::scenario::{Scenario, SolverSettings};
use crate::solver::SolverKind;
use crate::sweep::refine::residuals;
use crate::sweep::{Axis, Candidate, CandidateResult, run};
use crate::track::MeasuredTrack;

/// J_e of candidates against one film: built once (the film read and
/// checked, the engine chosen), called any number of times.
pub struct Objective {
    measured: MeasuredTrack,
    scenario: Scenario,
    base: TetherParams,
    axes: Vec<Axis>,
    /// The grid's release axis, which every release group's shared
    /// simulation samples ([`crate::sweep::release::whole_group`]).
    release_axis: Option<Vec<f64>>,
    engine: Engine,
    settings: SolverSettings,
    observations: usize,
}

impl Objective {
    /// The objective of `request`'s film: its measured track read through
    /// its camera and checked against its experiment as `identify` checks
    /// them, on the engine `identify` would choose for the request's grid,
    /// whose axes name the candidates' parameters (its values only weigh
    /// the engine's choice). The tolerance is the request's `tolerance_m`,
    /// else identify's first pass's ([`crate::sweep::accuracy`]); for the
    /// data's own, give the `tolerance_m` an identification chose
    /// (`IdentifyReport::accuracy`).
    pub fn new(request: &IdentifyRequest) -> Result<Self, WorkflowError> {
        check_settings(request)?;
        let [film] = &request.films[..] else {
            return Err(WorkflowError::Usage(format!(
                "the objective scores one film; {} given",
                request.films.len()
            )));
        };
        let film = super::film::check(
            film,
            &request.grid,
            &request.base,
            request.allow_implausible,
        )?;
        let (choice, settings, _) =
            choose_sweep_engine(request, &[(&request.grid, &film.scenario)])?;
        Ok(Self {
            observations: film.coverage.observations(),
            measured: film.measured,
            scenario: film.scenario,
            base: request.base.clone(),
            axes: request.grid.axes(),
            release_axis: request.grid.release_axis().map(<[f64]>::to_vec),
            engine: choice.engine,
            settings,
        })
    }

    /// The candidates' parameters, as results columns, in the order
    /// [`Self::candidate`] takes their values: n, D, C_D, then the grid's
    /// parameter axes.
    pub fn parameters(&self) -> Vec<&'static str> {
        self.axes.iter().map(|a| a.column()).collect()
    }

    /// The candidate of `values`, one per [`Self::parameters`], checked:
    /// n a whole number, and a valid tether and experiment.
    pub fn candidate(&self, values: &[f64]) -> Result<Candidate, WorkflowError> {
        if values.len() != self.axes.len() {
            return Err(InputError::new(
                "candidate",
                format!("{} values", values.len()),
                format!("one per parameter: {}", self.parameters().join(", ")),
            )
            .into());
        }
        let elements = values[0];
        if !(elements >= 1.0 && elements.fract() == 0.0 && elements <= u32::MAX as f64) {
            return Err(InputError::new(
                Axis::Elements.column(),
                elements,
                "a whole number of elements, at least 1",
            )
            .into());
        }
        let mut candidate = Candidate::new(elements as usize, values[1], values[2]);
        for (axis, &value) in self.axes.iter().zip(values).skip(3) {
            if let Axis::Parameter(p) = axis {
                candidate.parameters.set(*p, value);
            }
        }
        self.check(&candidate)?;
        Ok(candidate)
    }

    /// A candidate makes a valid tether and experiment, and has values on
    /// the grid's parameter axes and no other.
    fn check(&self, candidate: &Candidate) -> Result<(), WorkflowError> {
        let on_axes = self.axes.iter().filter(|a| matches!(a, Axis::Parameter(_)));
        let given = candidate.parameters.iter().count();
        if on_axes.clone().any(|a| candidate.value(*a).is_none()) || given != on_axes.count() {
            return Err(InputError::new(
                "candidate",
                format!("{:?}", candidate.parameters),
                format!(
                    "values on these parameters: {}",
                    self.parameters().join(", ")
                ),
            )
            .into());
        }
        let (tether, experiment) = candidate.experiment(&self.base, &self.scenario);
        tether
            .validate()
            .and_then(|()| experiment.validate(tether.length_m))
            .map_err(|e| {
                InputError::new(
                    "candidate",
                    format!("{candidate:?}"),
                    format!("values that make a valid experiment: {e}"),
                )
                .into()
            })
    }

    /// Every candidate's result, in their order, run as one batch: J_e
    /// where it finished, else its status (diverged, failed) and no J_e.
    pub fn evaluate(
        &self,
        candidates: &[Candidate],
        hooks: RunHooks<'_>,
    ) -> Result<Vec<CandidateResult>, WorkflowError> {
        for c in candidates {
            self.check(c)?;
        }
        run(
            &self.engine,
            candidates,
            &self.measured,
            &self.base,
            &self.scenario,
            self.release_axis.as_deref(),
            hooks,
        )
        .map_err(super::batch("objective batch failed"))
    }

    /// J_e of every candidate \[m²\], in their order; None for one that
    /// diverged or failed.
    pub fn j_e_m2(&self, candidates: &[Candidate]) -> Result<Vec<Option<f64>>, WorkflowError> {
        Ok(self
            .evaluate(candidates, RunHooks::default())?
            .into_iter()
            .map(|r| r.j_e_m2)
            .collect())
    }

    /// A candidate's residuals \[m\]: measured minus simulated, x then y
    /// of each marker the film has, frame by frame after the first; J_e
    /// is their sum of squares. Run on the CPU's f64 reference solver at
    /// the objective's tolerance (its default where the engine runs a
    /// fixed-step scheme): least-squares fitters need a smooth function of
    /// the parameters, which fixed steps are not.
    pub fn residuals_m(&self, candidate: &Candidate) -> Result<Vec<f64>, WorkflowError> {
        self.check(candidate)?;
        let (tether, scenario) = candidate.experiment(&self.base, &self.scenario);
        let settings = SolverSettings {
            kind: SolverKind::Reference,
            ..self.settings
        };
        residuals(&self.measured, &scenario, &tether, &settings)
            .map_err(super::solver("residual run on the reference solver failed"))
    }

    /// The engine every batch runs on.
    pub fn engine(&self) -> EngineKind {
        self.engine.kind()
    }

    /// The reference solver's tolerance \[m\] where the engine runs it
    /// (None: a fixed-step scheme).
    pub fn tolerance_m(&self) -> Option<f64> {
        self.engine.tolerance_m()
    }

    /// The coordinates J_e compares: 2 per marker sample of every frame
    /// but the first.
    pub fn observations(&self) -> usize {
        self.observations
    }
}
