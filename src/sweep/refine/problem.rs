//! One refinement's least-squares problem: the refined parameters' places
//! (a grid axis, or a film's own), their bounds, the weighted residuals of
//! every film at a candidate, the fit and its description as a
//! [`Refined`], and a joint refinement's reweighing.

use super::{
    ElementsFit, MAX_REWEIGHINGS, REWEIGHING_TOLERANCE, ROBUST_CORRELATION_BELOW, RefineFilm,
    Refined, RefinedParameter, get, residuals, values, varied,
};
use crate::least_squares::profile::{Profile, ProfileSettings, profiles};
use crate::least_squares::{Fit, LmSettings, correlation_length, levenberg_marquardt, newey_west};
use crate::model::TetherParams;
use crate::scenario::SolverSettings;
use crate::solver::SolverError;
use crate::sweep::axis::Axis;
use crate::sweep::joint::{self, FilmWeight};
use crate::sweep::{CONFIDENCE_LEVEL, Candidate, Grid, chi2_quantile};

/// A refined parameter's place: its axis, and the film whose own it is.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slot {
    axis: Axis,
    film: Option<usize>,
}

/// What every fit of one identification shares.
#[derive(Clone)]
pub(super) struct Problem<'a> {
    pub(super) grid: &'a Grid,
    pub(super) films: &'a [RefineFilm<'a>],
    /// Each film's weight in the J_e fitted (the films' own at first).
    pub(super) weights: Vec<f64>,
    pub(super) base: &'a TetherParams,
    pub(super) settings: &'a SolverSettings,
}

impl Problem<'_> {
    /// The continuous axes the grid varies, then each film's own axes that
    /// vary, and their bounds.
    fn axes(&self) -> (Vec<Slot>, Vec<(f64, f64)>) {
        let range = |v: &[f64]| {
            (
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        };
        let mut slots: Vec<(Slot, (f64, f64))> = varied(self.grid)
            .into_iter()
            .map(|axis| (Slot { axis, film: None }, range(&values(axis, self.grid))))
            .collect();
        for (k, film) in self.films.iter().enumerate() {
            for own in film.own.iter().filter(|a| a.values.len() > 1) {
                let slot = Slot {
                    axis: own.axis,
                    film: Some(k),
                };
                slots.push((slot, range(&own.values)));
            }
        }
        slots.into_iter().unzip()
    }

    /// Film `k`'s candidate at the shared candidate `start`: its best own
    /// values there.
    fn film_start(&self, k: usize, start: &Candidate) -> Candidate {
        let film = &self.films[k];
        let mut c = *start;
        if film.own.is_empty() {
            return c;
        }
        if let Some(own_start) = &film.start {
            for own in film.own {
                if let Some(v) = own_start.value(own.axis) {
                    c.set(own.axis, v);
                }
            }
            return c;
        }
        // Off the grid with no start of its own: the shared start's values.
        let Some(at) = self.grid.index_of(start) else {
            return c;
        };
        for (p, v) in film.scores[at].own.iter() {
            c.parameters.set(p, v);
        }
        c
    }

    /// The parameters' values at `start`.
    fn start_values(&self, start: &Candidate, slots: &[Slot]) -> Vec<f64> {
        slots
            .iter()
            .map(|s| match s.film {
                None => get(s.axis, start),
                Some(k) => get(s.axis, &self.film_start(k, start)),
            })
            .collect()
    }

    /// The residuals of every film, each scaled by the square root of its
    /// weight, with the parameters at `p`.
    fn residuals(
        &self,
        start: &Candidate,
        slots: &[Slot],
        p: &[f64],
    ) -> Result<Vec<f64>, SolverError> {
        // The films side by side: an LM trial step is one evaluation, and
        // the films' simulations are its whole cost.
        use rayon::prelude::*;
        let per_film = self
            .weights
            .par_iter()
            .enumerate()
            .map(|(k, weight)| {
                let scale = weight.sqrt();
                let r = self.film_residuals(k, start, slots, p)?;
                Ok(r.into_iter().map(|x| scale * x).collect::<Vec<f64>>())
            })
            .collect::<Result<Vec<_>, SolverError>>()?;
        Ok(per_film.concat())
    }

    /// Film `k`'s residuals, unweighted, with the parameters at `p`.
    fn film_residuals(
        &self,
        k: usize,
        start: &Candidate,
        slots: &[Slot],
        p: &[f64],
    ) -> Result<Vec<f64>, SolverError> {
        let film = &self.films[k];
        let mut c = self.film_start(k, start);
        for (slot, &v) in slots.iter().zip(p) {
            if slot.film.is_none_or(|f| f == k) {
                c.set(slot.axis, v);
            }
        }
        let (tether, scenario) = c.experiment(self.base, film.scenario);
        residuals(film.measured, &scenario, &tether, self.settings)
    }

    /// Each refined parameter's profile around `fit`, the refinement of
    /// `start`: a simulation that diverges or whose Newton iteration fails
    /// far from the estimate ends that side, anything else the run.
    pub(super) fn profile(
        &self,
        start: &Candidate,
        fit: &Fit,
        rise: f64,
    ) -> Result<Vec<Profile>, SolverError> {
        let (slots, bounds) = self.axes();
        profiles(
            &|p: &[f64]| self.residuals(start, &slots, p),
            fit,
            &bounds,
            rise,
            &|e: &SolverError| {
                matches!(
                    e,
                    SolverError::Diverged { .. } | SolverError::NewtonFailed { .. }
                )
            },
            &ProfileSettings::DEFAULT,
        )
    }

    /// The refinement of `best`, with the fit it came from.
    pub(super) fn fit(&self, best: &Candidate) -> Result<Option<(Refined, Fit)>, SolverError> {
        let (slots, bounds) = self.axes();
        if slots.is_empty() {
            return Ok(None);
        }
        let grid_best = self.start_values(best, &slots);
        let fit = levenberg_marquardt(
            |p: &[f64]| self.residuals(best, &slots, p),
            &grid_best,
            &bounds,
            &LmSettings::DEFAULT,
        )?;
        Ok(Some((self.describe(best, &grid_best, &fit), fit)))
    }

    /// Each residual row's frame (numbered across the films) and series
    /// (a film's marker coordinate), in [`Self::residuals`]' order; and the
    /// fewest frames a film has.
    fn row_layout(&self) -> (Vec<usize>, Vec<usize>, usize) {
        let (mut blocks, mut series) = (Vec::new(), Vec::new());
        let (mut first_block, mut first_series, mut fewest) = (0, 0, usize::MAX);
        for film in self.films {
            let times = film.scenario.frame_times_s();
            let markers = film.scenario.marker_arc_lengths_m.len();
            for (f, &t) in times.iter().enumerate().skip(1) {
                for j in (0..markers).filter(|&j| film.measured.get(t, j).is_some()) {
                    for axis in 0..2 {
                        blocks.push(first_block + f);
                        series.push(first_series + 2 * j + axis);
                    }
                }
            }
            first_block += times.len();
            first_series += 2 * markers;
            fewest = fewest.min(times.len());
        }
        (blocks, series, fewest)
    }

    /// Newey–West's covariance of `fit` over the frames, with N/(N − p) as
    /// σ²'s, and the lags it used.
    fn robust_covariance(&self, fit: &Fit) -> (Option<nalgebra::DMatrix<f64>>, usize) {
        let (blocks, series, fewest) = self.row_layout();
        let lags = correlation_length(
            &fit.residuals,
            &series,
            &blocks,
            ROBUST_CORRELATION_BELOW,
            fewest / 4,
        );
        let k = fit.values.len();
        let n = fit.residuals.len();
        let small_sample = n as f64 / n.saturating_sub(k).max(1) as f64;
        let covariance =
            newey_west(&fit.jacobian, &fit.residuals, &blocks, lags).map(|c| c * small_sample);
        (covariance, lags)
    }

    /// The refinement `fit` of `best`, which began at `grid_best`.
    fn describe(&self, best: &Candidate, grid_best: &[f64], fit: &Fit) -> Refined {
        let (slots, _) = self.axes();
        let k = slots.len();
        let (robust, robust_lags) = self.robust_covariance(fit);
        let parameters: Vec<RefinedParameter> = (0..k)
            .map(|i| RefinedParameter {
                parameter: slots[i].axis,
                film: slots[i]
                    .film
                    .and_then(|f| self.films[f].name)
                    .map(str::to_string),
                value: fit.values[i],
                standard_error: fit
                    .covariance
                    .as_ref()
                    .map_or(f64::NAN, |c| c[(i, i)].sqrt()),
                robust_standard_error: robust.as_ref().map(|c| c[(i, i)].sqrt()),
                grid_best: grid_best[i],
                at_bound: fit.at_bound[i],
                profile: None,
            })
            .collect();
        let undetermined = match fit.singular {
            Some((small, large)) => Some(format!(
                "JᵀJ is near singular (its correlation matrix's eigenvalues {small:.3e} and {large:.3e}): the data do not determine these parameters apart"
            )),
            None => fit.at_bound.iter().position(|&b| b).map(|i| {
                format!(
                    "{} = {} is on the grid's bound: the data may want it beyond the range searched",
                    parameters[i].name(),
                    fit.values[i]
                )
            }),
        };
        let correlation = fit
            .covariance
            .as_ref()
            .filter(|_| k == 2)
            .map(|c| c[(0, 1)] / (c[(0, 0)] * c[(1, 1)]).sqrt());
        Refined {
            elements: best.elements,
            elements_tried: vec![best.elements],
            elements_offered: self.grid.elements(),
            every_elements: false,
            parameters,
            j_e_m2: fit.cost,
            robust_lags,
            observations: fit.observations,
            sigma_m: fit.sigma2.sqrt(),
            covariance: fit.covariance.as_ref().map_or_else(
                || vec![vec![f64::NAN; k]; k],
                |c| {
                    (0..k)
                        .map(|a| (0..k).map(|b| c[(a, b)]).collect())
                        .collect()
                },
            ),
            correlation,
            iterations: fit.iterations,
            simulations: fit.evaluations,
            undetermined,
            per_elements: vec![ElementsFit {
                elements: best.elements,
                j_e_m2: fit.cost,
                values: fit.values.clone(),
            }],
            confidence_level: CONFIDENCE_LEVEL,
            profile_rise_m2: fit.sigma2 * chi2_quantile(1, CONFIDENCE_LEVEL),
            films: Vec::new(),
        }
    }

    /// Each film's J_e (unweighted) and compared coordinates with the
    /// parameters at `p`.
    fn film_costs(
        &self,
        start: &Candidate,
        slots: &[Slot],
        p: &[f64],
    ) -> Result<Vec<(f64, usize)>, SolverError> {
        (0..self.films.len())
            .map(|k| {
                let r = self.film_residuals(k, start, slots, p)?;
                Ok((r.iter().map(|x| x * x).sum(), r.len()))
            })
            .collect()
    }

    /// A joint refinement reweighed: each film's weight from its own
    /// residual at the refined values (as `sweep::joint::weights` takes it
    /// from the grid's best, whose coarse steps inflate it), and the fit
    /// repeated from there until no weight moves by more than
    /// [`REWEIGHING_TOLERANCE`].
    pub(super) fn reweighed(
        mut self,
        start: &Candidate,
        mut refined: Refined,
        mut fit: Fit,
    ) -> Result<(Self, Refined, Fit), SolverError> {
        let (slots, bounds) = self.axes();
        let grid_best: Vec<f64> = refined.parameters.iter().map(|p| p.grid_best).collect();
        let mut evaluations = 0;
        for _ in 0..MAX_REWEIGHINGS {
            let costs = self.film_costs(start, &slots, &fit.values)?;
            evaluations += 1;
            let weights = joint::inverse_variance_weights(&costs);
            let settled = weights
                .iter()
                .zip(&self.weights)
                .all(|(new, old)| (new / old - 1.0).abs() <= REWEIGHING_TOLERANCE);
            refined.films = self
                .films
                .iter()
                .zip(&costs)
                .zip(&weights)
                .map(|((f, &(j_e_m2, observations)), &weight)| FilmWeight {
                    name: f.name.unwrap_or_default().to_string(),
                    j_e_m2,
                    observations,
                    sigma_m: (j_e_m2 / observations.saturating_sub(2).max(1) as f64).sqrt(),
                    weight,
                })
                .collect();
            if settled {
                break;
            }
            self.weights = weights;
            fit = levenberg_marquardt(
                |p: &[f64]| self.residuals(start, &slots, p),
                &fit.values,
                &bounds,
                &LmSettings::DEFAULT,
            )?;
            evaluations += fit.evaluations;
            let films = std::mem::take(&mut refined.films);
            refined = Refined {
                films,
                ..self.describe(start, &grid_best, &fit)
            };
        }
        refined.simulations = evaluations * self.films.len();
        Ok((self, refined, fit))
    }
}

impl Problem<'_> {
    /// `refined` (with its `fit`) fitted again from its values, at this
    /// problem's settings; a joint one reweighed again. Also the
    /// simulations it took.
    pub(super) fn refit(
        self,
        start: &Candidate,
        refined: Refined,
        fit: &Fit,
    ) -> Result<(Self, Refined, Fit, usize), SolverError> {
        let (slots, bounds) = self.axes();
        let grid_best: Vec<f64> = refined.parameters.iter().map(|p| p.grid_best).collect();
        let fit = levenberg_marquardt(
            |p: &[f64]| self.residuals(start, &slots, p),
            &fit.values,
            &bounds,
            &LmSettings::DEFAULT,
        )?;
        let again = Refined {
            films: refined.films,
            ..self.describe(start, &grid_best, &fit)
        };
        let simulations = fit.evaluations * self.films.len();
        if self.films.len() == 1 {
            return Ok((self, again, fit, simulations));
        }
        let (problem, again, fit) = self.reweighed(start, again, fit)?;
        let reweighing = again.simulations;
        Ok((problem, again, fit, simulations + reweighing))
    }
}
