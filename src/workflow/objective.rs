//! The batched objective: J_e of any list of candidates against an
//! identification's films (one, or several of one tether), run as one
//! batch per film on the engine an identification of the same request
//! would choose, at its tolerance. What optimizers, samplers and other
//! programs call instead of a whole identification.
//!
//! It is the sweep's own path ([`crate::sweep::run`] on the same films,
//! experiments, engine and solver settings as [`super::identify::prepare`]
//! makes them), so on the CPU a candidate's J_e is the one
//! `results.parquet` holds for it at the same tolerance, whatever else is
//! in the batch; several films' J_e is combined as the sweep combines it
//! (`sweep::joint::combine_one`), with the weights of
//! [`Objective::with_weights`] (an identification's) or, by default, of
//! the films' own noise. Along a release axis, candidates that differ only
//! in the release time share one simulation of every value of the grid's
//! axis and of the batch's own (a value off the grid's axis joins its
//! group's simulation, and so moves its group's J_e within the solver's
//! tolerance).

use super::WorkflowError;
use super::film::CheckedFilm;
use super::identify::{IdentifyRequest, check_settings, choose_sweep_engine, film_grid};
use crate::engine::{Engine, EngineKind, RunHooks};
use crate::error::InputError;
use crate::model::TetherParams;
use crate::scenario::{Scenario, SolverSettings};
use crate::solver::{ImplicitMethod, SolverKind};
use crate::status::RunStatus;
use crate::sweep::accuracy::Accuracy;
use crate::sweep::joint::{FilmScore, FilmWeight, combine_one, weighed};
use crate::sweep::refine::residuals;
use crate::sweep::{Axis, Candidate, CandidateResult, Grid, Parameter, ParameterValues, run};

/// J_e of candidates against an identification's films: built once (each
/// film read and checked, the engine chosen), called any number of times.
pub struct Objective {
    /// Each film read and checked; its own parameters are its axes'.
    films: Vec<CheckedFilm>,
    base: TetherParams,
    /// The shared axes: n, D, C_D, then the grid's parameter axes.
    axes: Vec<Axis>,
    engine: Engine,
    settings: SolverSettings,
    /// Each film's weight in the joint J_e (one film: none).
    weights: Vec<FilmWeight>,
}

/// One candidate of a study: its J_e (several films': the joint J_e, ok
/// when every film ran) and each film's result.
#[derive(Debug, Clone)]
pub struct Score {
    pub result: CandidateResult,
    pub films: Vec<CandidateResult>,
}

/// The method and tolerance identify's rule ([`Accuracy::from_noise`])
/// chooses for `films`, from their own noise (the least noisy film's,
/// `[camera] noise` where declared) over all their compared coordinates:
/// a fit through the objective then runs at the accuracy identify's
/// refinement would. None when no film has a noise estimate.
pub fn datas_accuracy(films: &[CheckedFilm]) -> Option<Accuracy> {
    let noise_m = films
        .iter()
        .filter_map(|f| f.noise.map(|n| n.sigma_m))
        .fold(f64::INFINITY, f64::min);
    let observations: usize = films.iter().map(|f| f.coverage.observations()).sum();
    (noise_m.is_finite() && noise_m > 0.0).then(|| Accuracy::from_noise(noise_m, observations))
}

impl Objective {
    /// The objective of `request`'s films: each measured track read through
    /// its camera and checked against its experiment as `identify` checks
    /// them, on the engine `identify` would choose for the request's grid,
    /// whose axes (and each film's own) name the candidates' parameters
    /// (its values only weigh the engine's choice). The reference solver
    /// runs generalized-α at the request's `tolerance_m`, else the method
    /// and tolerance the data call for ([`datas_accuracy`]: identify's
    /// rule, from the films' own noise before any fit); to repeat an
    /// identification's J_e exactly, give both the same `tolerance_m`.
    /// Several films are weighed by their noise (`[camera] noise`, or each
    /// film's own estimate) until [`Self::with_weights`] says otherwise.
    pub fn new(request: &IdentifyRequest) -> Result<Self, WorkflowError> {
        check_settings(request)?;
        let mut films = Vec::with_capacity(request.films.len());
        for film in &request.films {
            let grid = film_grid(request, film)?;
            films.push(super::film::check(
                film,
                &grid,
                &request.base,
                request.allow_implausible,
            )?);
        }
        let experiments: Vec<(&Grid, &Scenario)> =
            films.iter().map(|f| (&f.grid, &f.scenario)).collect();
        let datas = request
            .tolerance_m
            .is_none()
            .then(|| datas_accuracy(&films))
            .flatten();
        let request = &IdentifyRequest {
            tolerance_m: request.tolerance_m.or(datas.map(|a| a.tolerance_m)),
            ..request.clone()
        };
        let (choice, mut settings, _) = choose_sweep_engine(request, &experiments)?;
        let mut engine = choice.engine;
        // The rule's method with its tolerance, on the CPU's reference
        // solver (a GPU's adaptive stage is generalized-α's, refused
        // above with a tolerance).
        if let (Some(a), EngineKind::Cpu(cpu)) = (datas, engine.kind())
            && cpu.kind == SolverKind::Reference
        {
            settings.reference.method = a.method;
            engine = Engine::cpu(settings);
        }
        let weights = match films.len() {
            1 => Vec::new(),
            _ => noise_weights(&films)?,
        };
        Ok(Self {
            films,
            base: request.base.clone(),
            axes: request.grid.axes().iter().map(|a| a.axis).collect(),
            engine,
            settings,
            weights,
        })
    }

    /// Several films weighed as an identification weighed them
    /// (`IdentifyReport::weights`, one per film in the films' order), so
    /// that the joint J_e is its `results.parquet`'s.
    pub fn with_weights(mut self, weights: &[FilmWeight]) -> Result<Self, WorkflowError> {
        let names: Vec<&str> = self.films.iter().map(|f| f.film.name.as_str()).collect();
        let given: Vec<&str> = weights.iter().map(|w| w.name.as_str()).collect();
        if self.films.len() < 2 || names != given {
            return Err(InputError::new(
                "weights",
                format!("{given:?}"),
                format!("one per film, in the films' order: {names:?}"),
            )
            .into());
        }
        self.weights = weights.to_vec();
        Ok(self)
    }

    /// The candidates' parameters, as results columns, in the order
    /// [`Self::candidates`] takes their values: n, D, C_D, the grid's
    /// parameter axes, then each of several films' own (`FILM.NAME`).
    pub fn parameters(&self) -> Vec<String> {
        let shared = self.axes.iter().map(|a| a.column().to_string());
        let own = self.films.iter().flat_map(|f| {
            f.film
                .own
                .iter()
                .map(move |a| format!("{}.{}", f.film.name, a.axis))
        });
        shared.chain(own).collect()
    }

    /// The films, by name.
    pub fn films(&self) -> Vec<&str> {
        self.films.iter().map(|f| f.film.name.as_str()).collect()
    }

    /// One film's candidate of `values`, one per [`Self::parameters`],
    /// checked: n a whole number, and a valid tether and experiment.
    /// Several films: [`Self::candidates`].
    pub fn candidate(&self, values: &[f64]) -> Result<Candidate, WorkflowError> {
        if self.films.len() > 1 {
            return Err(WorkflowError::Usage(format!(
                "a candidate of {} films is one per film: Objective::candidates",
                self.films.len()
            )));
        }
        Ok(self.candidates(values)?.remove(0))
    }

    /// Each film's candidate of `values` (one per [`Self::parameters`]):
    /// the shared values and that film's own, checked.
    pub fn candidates(&self, values: &[f64]) -> Result<Vec<Candidate>, WorkflowError> {
        let parameters = self.parameters();
        if values.len() != parameters.len() {
            return Err(InputError::new(
                "candidate",
                format!("{} values", values.len()),
                format!("one per parameter: {}", parameters.join(", ")),
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
        let mut shared = Candidate::new(elements as usize, values[1], values[2]);
        for (&axis, &value) in self.axes.iter().zip(values).skip(3) {
            shared.set(axis, value);
        }
        let mut own_values = values[self.axes.len()..].iter();
        let mut candidates = Vec::with_capacity(self.films.len());
        for (k, film) in self.films.iter().enumerate() {
            let mut c = shared;
            for (a, &v) in film.film.own.iter().zip(own_values.by_ref()) {
                c.set(a.axis, v);
            }
            self.check(k, &c)?;
            candidates.push(c);
        }
        Ok(candidates)
    }

    /// A film's candidate makes a valid tether and experiment, and has
    /// values on the grid's parameter axes and the film's own, and no
    /// other.
    fn check(&self, film: usize, candidate: &Candidate) -> Result<(), WorkflowError> {
        let f = &self.films[film];
        let own = f.film.own.iter().map(|a| a.axis);
        let on_axes: Vec<Parameter> = self
            .axes
            .iter()
            .copied()
            .chain(own)
            .filter_map(Axis::parameter)
            .collect();
        let given = candidate.parameters.iter().count();
        if on_axes
            .iter()
            .any(|&p| candidate.parameters.get(p).is_none())
            || given != on_axes.len()
        {
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
        let (tether, experiment) = candidate.experiment(&self.base, &f.scenario);
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

    /// One film's candidates' results, in their order, run as one batch:
    /// J_e where it finished, else its status (diverged, failed) and no
    /// J_e. Several films: [`Self::scores`].
    pub fn evaluate(
        &self,
        candidates: &[Candidate],
        hooks: RunHooks<'_>,
    ) -> Result<Vec<CandidateResult>, WorkflowError> {
        if self.films.len() > 1 {
            return Err(WorkflowError::Usage(format!(
                "a candidate of {} films is one per film: Objective::scores",
                self.films.len()
            )));
        }
        self.run_film(0, candidates, hooks)
    }

    fn run_film(
        &self,
        k: usize,
        candidates: &[Candidate],
        hooks: RunHooks<'_>,
    ) -> Result<Vec<CandidateResult>, WorkflowError> {
        let f = &self.films[k];
        for c in candidates {
            self.check(k, c)?;
        }
        run(
            &self.engine,
            candidates,
            f.study(&self.base),
            f.grid.release_axis(),
            None,
            hooks,
        )
        .map_err(super::batch("objective batch failed"))
    }

    /// Every study candidate's score (each one film's candidates from
    /// [`Self::candidates`]), each film's candidates run as one batch: its
    /// J_e (several films': the weighed sum, as the sweep combines it) and
    /// each film's result.
    pub fn scores(&self, rows: &[Vec<Candidate>]) -> Result<Vec<Score>, WorkflowError> {
        self.scores_with(rows, RunHooks::default())
    }

    /// [`Self::scores`], told of its progress and stopped by
    /// `hooks.cancel`: an interrupted batch is an error
    /// ([`WorkflowError::Interrupted`]), never scores of which some are
    /// missing.
    pub fn scores_with(
        &self,
        rows: &[Vec<Candidate>],
        hooks: RunHooks<'_>,
    ) -> Result<Vec<Score>, WorkflowError> {
        if let Some(row) = rows.iter().find(|r| r.len() != self.films.len()) {
            return Err(InputError::new(
                "candidates",
                format!("{} in a row", row.len()),
                format!("one per film: {}", self.films().join(", ")),
            )
            .into());
        }
        let mut by_film = Vec::with_capacity(self.films.len());
        for k in 0..self.films.len() {
            let batch: Vec<Candidate> = rows.iter().map(|r| r[k]).collect();
            let results = self.run_film(k, &batch, hooks)?;
            if results.iter().any(|r| r.status == RunStatus::Cancelled) {
                let done = results.iter().filter(|r| r.status != RunStatus::Cancelled);
                return Err(WorkflowError::Interrupted(format!(
                    "interrupted: {} of {} candidates of the batch had finished; no J_e is returned for a batch cut short",
                    done.count(),
                    results.len()
                )));
            }
            by_film.push(results);
        }
        Ok((0..rows.len())
            .map(|i| {
                let films: Vec<CandidateResult> = by_film.iter().map(|r| r[i].clone()).collect();
                let result = match &films[..] {
                    [only] => only.clone(),
                    _ => self.combined(&films),
                };
                Score { result, films }
            })
            .collect())
    }

    /// Several films' results at one study candidate, combined.
    fn combined(&self, films: &[CandidateResult]) -> CandidateResult {
        let scores: Vec<FilmScore> = films
            .iter()
            .zip(&self.films)
            .map(|(r, f)| {
                let mut own = ParameterValues::NONE;
                for p in f.film.own.iter().filter_map(|a| a.axis.parameter()) {
                    if let Some(v) = r.candidate.parameters.get(p) {
                        own.set(p, v);
                    }
                }
                FilmScore {
                    j_e_m2: r.j_e_m2,
                    own,
                    status: r.status.clone(),
                    steps: r.steps,
                    tolerance_m: r.tolerance_m,
                    implicit_method: r.implicit_method,
                }
            })
            .collect();
        let mut shared = films[0].candidate;
        shared.parameters = ParameterValues::NONE;
        for (p, v) in films[0].candidate.parameters.iter() {
            if !self.films[0]
                .film
                .own
                .iter()
                .any(|a| a.axis == Axis::Parameter(p))
            {
                shared.parameters.set(p, v);
            }
        }
        combine_one(shared, scores.iter(), &self.weights)
    }

    /// J_e of every candidate \[m²\], in their order; None for one that
    /// diverged or failed (one film's candidates).
    pub fn j_e_m2(&self, candidates: &[Candidate]) -> Result<Vec<Option<f64>>, WorkflowError> {
        Ok(self
            .evaluate(candidates, RunHooks::default())?
            .into_iter()
            .map(|r| r.j_e_m2)
            .collect())
    }

    /// A candidate's residuals \[m\] against film `film` (0 for a single
    /// film's): measured minus simulated, x then y of each marker the film
    /// has, frame by frame after the first; that film's J_e is their sum of
    /// squares. Run on the CPU's f64 reference solver at the objective's
    /// tolerance (its default where the engine runs a fixed-step scheme):
    /// least-squares fitters need a smooth function of the parameters,
    /// which fixed steps are not.
    pub fn film_residuals_m(
        &self,
        film: usize,
        candidate: &Candidate,
    ) -> Result<Vec<f64>, WorkflowError> {
        let f = self.films.get(film).ok_or_else(|| {
            InputError::new(
                "film",
                film,
                format!("one of the {} films, from 0", self.films.len()),
            )
        })?;
        self.check(film, candidate)?;
        let (tether, scenario) = candidate.experiment(&self.base, &f.scenario);
        let settings = SolverSettings {
            kind: SolverKind::Reference,
            ..self.settings
        };
        residuals(&f.measured, &scenario, &tether, &settings)
            .map_err(super::solver("residual run on the reference solver failed"))
    }

    /// A single film's candidate's residuals ([`Self::film_residuals_m`]).
    pub fn residuals_m(&self, candidate: &Candidate) -> Result<Vec<f64>, WorkflowError> {
        self.film_residuals_m(0, candidate)
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

    /// The reference solver's method where the engine runs it (None: a
    /// fixed-step scheme).
    pub fn implicit_method(&self) -> Option<ImplicitMethod> {
        self.engine.implicit_method()
    }

    /// The coordinates J_e compares: 2 per marker sample of every frame
    /// but the first, over every film.
    pub fn observations(&self) -> usize {
        self.films.iter().map(|f| f.coverage.observations()).sum()
    }

    /// Each film's weight in the joint J_e (none for one film).
    pub fn weights(&self) -> &[FilmWeight] {
        &self.weights
    }
}

/// Several films' weights from their noise (`[camera] noise`, or the
/// film's own estimate), as the sweep's from its best fits: σ² over
/// N − 2 degrees of freedom, weights averaging one a coordinate.
fn noise_weights(films: &[CheckedFilm]) -> Result<Vec<FilmWeight>, WorkflowError> {
    let mut found = Vec::with_capacity(films.len());
    for f in films {
        let n = f.coverage.observations();
        let Some(noise) = f.noise.filter(|n| n.sigma_m > 0.0 && n.sigma_m.is_finite()) else {
            return Err(InputError::new(
                "[camera] noise",
                format!("film {}: not given", f.film.name),
                "the film's noise, which weighs it (the film is too short to estimate it), or Objective::with_weights",
            )
            .into());
        };
        let sigma_m = noise.sigma_m;
        found.push(FilmWeight {
            name: f.film.name.clone(),
            observations: n,
            j_e_m2: sigma_m * sigma_m * n.saturating_sub(2).max(1) as f64,
            sigma_m,
            weight: f64::NAN,
        });
    }
    Ok(weighed(found))
}
