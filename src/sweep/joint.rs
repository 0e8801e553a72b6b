//! Joint identification: one tether, several films of it. The grid's
//! shared axes (n, D, C_D, any tether parameter) hold for every film; a
//! film's own parameters (its release time, release angle, pin) get axes
//! of their own, named `FILM.NAME`.
//!
//! A film's own values change only that film's J_e, so each film is swept
//! over the shared axes times its own ([`FilmAxes::grid`]: a release axis
//! still shares one simulation among its values) and minimized over its
//! own axes at each shared candidate ([`best_over_own`]). Two films with 16
//! release values each cost one simulation per film per shared candidate
//! and 16 + 16 scorings, not 256 combinations.
//!
//! The joint J_e weighs each film by the inverse of its noise variance,
//! estimated from its own residual ([`weights`]), and is scaled so that it
//! reads as one film's J_e would: a weighted sum of squares in m² whose
//! minimum is about σ̄² N over all N compared coordinates. The summary's
//! confidence region and σ² then hold for it unchanged.

use serde::{Deserialize, Serialize};

use super::grid::ParameterValues;
use super::{AxisValues, Candidate, CandidateResult, Grid};
use crate::error::InputError;
use crate::solver::ImplicitMethod;
use crate::status::RunStatus;

/// One film's part of a joint grid: its name and the axes over its own
/// parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilmAxes {
    /// The config's file stem, or `name = "…"` in its `[settings]`.
    pub name: String,
    /// Axes over the film's own parameters ([`super::Axis::is_films_own`]).
    pub own: Vec<AxisValues>,
}

impl FilmAxes {
    /// The film's grid: the shared axes, then its own (a release axis
    /// innermost), so that each shared candidate's film candidates lie side
    /// by side, [`FilmAxes::own_len`] of them.
    pub fn grid(&self, shared: &Grid) -> Result<Grid, InputError> {
        if let Some(axis) = shared
            .parameter_axes()
            .iter()
            .find(|a| a.axis.is_films_own())
        {
            let name = axis.axis.column();
            return Err(InputError::new(
                "axis",
                name,
                format!(
                    "in a joint identification, each film's own: write it as FILM.{name} (e.g. {})",
                    self.column(name)
                ),
            ));
        }
        let mut grid = shared.clone();
        for axis in &self.own {
            if !axis.axis.is_films_own() {
                return Err(InputError::new(
                    "axis",
                    self.column(axis.axis.column()),
                    "a film's own parameter (release_time_s, initial_angle_deg, pin_x_m, pin_y_m); the tether's parameters are shared: write them without a film's name",
                ));
            }
            grid = grid.with(axis.clone())?;
        }
        Ok(grid)
    }

    /// The film's candidates per shared candidate.
    pub fn own_len(&self) -> usize {
        self.own.iter().map(|a| a.values.len()).product()
    }

    /// One of the film's columns or parameters: `FILM.NAME`.
    pub fn column(&self, name: &str) -> String {
        format!("{}.{name}", self.name)
    }
}

/// A film's best over its own axes at one shared candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilmScore {
    /// J_e at the film's best own values \[m²\]; None when all diverged.
    pub j_e_m2: Option<f64>,
    /// Those values (none without own axes).
    pub own: ParameterValues,
    /// Ok, or the first failure when no own value ran.
    pub status: RunStatus,
    pub steps: u64,
    /// The reference solver's tolerance it ran at \[m\]; None for a
    /// fixed-step scheme.
    pub tolerance_m: Option<f64>,
    /// Its reference solver's method; None for a fixed-step scheme.
    pub implicit_method: Option<ImplicitMethod>,
}

/// Each shared candidate's best of one film, in the shared grid's order,
/// from the film's results in its grid's order ([`FilmAxes::grid`]).
pub fn best_over_own(film: &FilmAxes, results: &[CandidateResult]) -> Vec<FilmScore> {
    let own: Vec<_> = film.own.iter().filter_map(|a| a.axis.parameter()).collect();
    results
        .chunks(film.own_len())
        .map(|rows| {
            let best = rows
                .iter()
                .filter(|r| r.j_e_m2.is_some())
                .min_by(|a, b| a.j_e_m2.unwrap().total_cmp(&b.j_e_m2.unwrap()))
                .unwrap_or(&rows[0]);
            let mut values = ParameterValues::NONE;
            for &p in &own {
                if let Some(v) = best.candidate.parameters.get(p) {
                    values.set(p, v);
                }
            }
            FilmScore {
                j_e_m2: best.j_e_m2,
                own: values,
                status: best.status.clone(),
                steps: best.steps,
                tolerance_m: best.tolerance_m,
                implicit_method: best.implicit_method,
            }
        })
        .collect()
}

/// A film's fit, its noise and its weight in the joint J_e: at the grid's
/// best ([`weights`]), or at a joint refinement's values
/// (`sweep::refine::Refined::films`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilmWeight {
    pub name: String,
    /// Its J_e there, unweighted \[m²\]: over the grid, its lowest, each
    /// shared candidate at its best own values.
    pub j_e_m2: f64,
    /// Compared coordinates.
    pub observations: usize,
    /// Its noise estimate √(J_e / (N − 2)) \[m\], as the summary's σ.
    pub sigma_m: f64,
    /// σ̄² / σ², with σ̄² = Σ N / Σ (N / σ²) over the films: the weights
    /// average to one per compared coordinate.
    pub weight: f64,
}

/// Each film's noise from its own best fit over the grid, and its weight.
/// A film with no candidate that ran, or one that the model fits exactly
/// (no noise to weigh it by), is refused.
pub fn weights(
    films: &[FilmAxes],
    scores: &[Vec<FilmScore>],
    observations: &[usize],
) -> Result<Vec<FilmWeight>, InputError> {
    let mut found = Vec::with_capacity(films.len());
    for ((film, scores), &n) in films.iter().zip(scores).zip(observations) {
        let j_min = scores
            .iter()
            .filter_map(|s| s.j_e_m2)
            .fold(f64::INFINITY, f64::min);
        let sigma2 = j_min / n.saturating_sub(2).max(1) as f64;
        if !(sigma2.is_finite() && sigma2 > 0.0) {
            return Err(InputError::new(
                "measured",
                format!("film {}: lowest J_e {j_min:e} m²", film.name),
                "a film that some candidate runs and that no candidate fits exactly: its weight is the inverse of its noise variance",
            ));
        }
        found.push(FilmWeight {
            name: film.name.clone(),
            observations: n,
            j_e_m2: j_min,
            sigma_m: sigma2.sqrt(),
            weight: f64::NAN,
        });
    }
    Ok(weighed(found))
}

/// `films` with their weights from their J_e and compared coordinates
/// ([`inverse_variance_weights`]).
pub fn weighed(mut films: Vec<FilmWeight>) -> Vec<FilmWeight> {
    let costs: Vec<(f64, usize)> = films.iter().map(|w| (w.j_e_m2, w.observations)).collect();
    for (w, weight) in films.iter_mut().zip(inverse_variance_weights(&costs)) {
        w.weight = weight;
    }
    films
}

/// The films' weights from each film's J_e and compared coordinates N:
/// σ² = J_e / (N − 2), weight σ̄² / σ² with σ̄² = Σ N / Σ (N / σ²), so that
/// the weights average to one per compared coordinate.
pub fn inverse_variance_weights(costs: &[(f64, usize)]) -> Vec<f64> {
    let precision: Vec<f64> = costs
        .iter()
        .map(|&(j, n)| n.saturating_sub(2).max(1) as f64 / j)
        .collect();
    let total: usize = costs.iter().map(|&(_, n)| n).sum();
    let weighted: f64 = costs
        .iter()
        .zip(&precision)
        .map(|(&(_, n), p)| n as f64 * p)
        .sum();
    let mean_sigma2 = total as f64 / weighted;
    precision.iter().map(|p| p * mean_sigma2).collect()
}

/// The joint results, one per shared candidate in the shared grid's order:
/// J_e = Σ weight × the film's J_e, ok when every film ran (else the first
/// failure, named with its film).
pub fn combine(
    shared: &Grid,
    scores: &[Vec<FilmScore>],
    weights: &[FilmWeight],
) -> Vec<CandidateResult> {
    (0..shared.len())
        .map(|i| combine_one(shared.candidate(i), scores.iter().map(|s| &s[i]), weights))
        .collect()
}

/// One shared candidate's joint result from each film's score there (in
/// the films' order), as [`combine`] forms it.
pub fn combine_one<'a>(
    candidate: Candidate,
    films: impl Iterator<Item = &'a FilmScore> + Clone,
    weights: &[FilmWeight],
) -> CandidateResult {
    let failed = films.clone().zip(weights).find(|(s, _)| s.j_e_m2.is_none());
    let status = match failed {
        Some((s, w)) => s.status.clone().in_film(&w.name),
        None => RunStatus::Ok,
    };
    let j_e_m2 = failed.is_none().then(|| {
        films
            .clone()
            .zip(weights)
            .map(|(s, w)| w.weight * s.j_e_m2.expect("every film ran"))
            .sum()
    });
    CandidateResult {
        candidate,
        j_e_m2,
        status,
        step_s: None,
        steps: films.clone().map(|s| s.steps).sum(),
        gpu_layout: None,
        // The loosest of the films'.
        tolerance_m: films.clone().filter_map(|s| s.tolerance_m).reduce(f64::max),
        // One engine ran every film's candidate.
        implicit_method: films.filter_map(|s| s.implicit_method).next(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{Axis, Parameter};

    fn release(name: &str, values: &[f64]) -> FilmAxes {
        FilmAxes {
            name: name.into(),
            own: vec![AxisValues {
                axis: Axis::Parameter(Parameter::ReleaseTimeS),
                values: values.to_vec(),
            }],
        }
    }

    #[test]
    fn each_shared_candidate_takes_each_films_best_own_value() {
        let shared = Grid::parse("4", "0,100", "0.8").unwrap();
        let film = release("a", &[0.0, 0.01, 0.02]);
        let grid = film.grid(&shared).unwrap();
        assert_eq!(grid.len(), 6);
        // J_e lowest at release 0.01 for D = 0 and 0.02 for D = 100; one
        // release of D = 100 diverged.
        let results: Vec<CandidateResult> = grid
            .candidates()
            .into_iter()
            .map(|c| {
                let t = c.parameters.get(Parameter::ReleaseTimeS).unwrap();
                let best = if c.damping_pa_s == 0.0 { 0.01 } else { 0.02 };
                let diverged = c.damping_pa_s == 100.0 && t == 0.0;
                CandidateResult {
                    candidate: c,
                    j_e_m2: (!diverged).then(|| 1.0 + (t - best).abs()),
                    status: if diverged {
                        RunStatus::diverged("x")
                    } else {
                        RunStatus::Ok
                    },
                    step_s: None,
                    steps: 10,
                    gpu_layout: None,
                    tolerance_m: None,
                    implicit_method: None,
                }
            })
            .collect();
        let scores = best_over_own(&film, &results);
        assert_eq!(scores.len(), 2);
        assert_eq!(scores[0].own.get(Parameter::ReleaseTimeS), Some(0.01));
        assert_eq!(scores[1].own.get(Parameter::ReleaseTimeS), Some(0.02));
        assert_eq!(scores[1].j_e_m2, Some(1.0));
    }

    #[test]
    fn weights_are_inverse_noise_variances_averaging_one_per_coordinate() {
        let score = |j| FilmScore {
            j_e_m2: Some(j),
            own: ParameterValues::NONE,
            status: RunStatus::Ok,
            steps: 1,
            tolerance_m: None,
            implicit_method: None,
        };
        let films = [release("a", &[0.0]), release("b", &[0.0])];
        // Film a: σ² = 102/102 = 1; film b: σ² = 4·52/52 = 4.
        let scores = vec![
            vec![score(102.0), score(200.0)],
            vec![score(300.0), score(208.0)],
        ];
        let w = weights(&films, &scores, &[104, 54]).unwrap();
        assert!((w[0].sigma_m - 1.0).abs() < 1e-12 && (w[1].sigma_m - 2.0).abs() < 1e-12);
        assert!((w[0].weight / w[1].weight - 4.0).abs() < 1e-12);
        let per_coordinate = (104.0 * w[0].weight + 54.0 * w[1].weight) / 158.0;
        assert!((per_coordinate - 1.0).abs() < 1e-12);
        let shared = Grid::parse("4", "0,100", "0.8").unwrap();
        let joint = combine(&shared, &scores, &w);
        let expected = w[0].weight * 200.0 + w[1].weight * 208.0;
        assert!((joint[1].j_e_m2.unwrap() - expected).abs() < 1e-9);
        // A film that fits exactly cannot be weighed.
        let exact = vec![vec![score(0.0), score(1.0)], scores[1].clone()];
        let e = weights(&films, &exact, &[104, 54]).unwrap_err();
        assert!(e.to_string().contains("film a"), "{e}");
    }

    #[test]
    fn a_films_own_parameter_on_a_shared_axis_is_refused_and_named() {
        let shared = Grid::parse("4", "0", "0.8")
            .unwrap()
            .with_axis("release_time_s", "0,0.01")
            .unwrap();
        let e = release("steep", &[0.0]).grid(&shared).unwrap_err();
        assert!(e.to_string().contains("steep.release_time_s"), "{e}");
        let tether = FilmAxes {
            name: "a".into(),
            own: vec![AxisValues {
                axis: Axis::Parameter(Parameter::TipMassKg),
                values: vec![0.0],
            }],
        };
        let shared = Grid::parse("4", "0", "0.8").unwrap();
        let e = tether.grid(&shared).unwrap_err();
        assert!(e.to_string().contains("a.tip_mass_kg"), "{e}");
    }
}
