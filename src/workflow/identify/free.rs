//! Which known input to free: when a refined fit does not explain the
//! data (a single film's, or any film's of a joint fit), each input the
//! run took as known (the tether's length, modulus, density and
//! thickness, over every film at once; each film's release angle, pin and
//! release time, for that film alone) is let go in turn, alone, from the
//! refined optimum, and the refit judged by the same goodness-of-fit
//! test, every film's. The run's answer is
//! never changed: the finding is a suggestion, an `--axis` to add.

use serde::Serialize;

use super::finish::{Combination, Combined};
use crate::io::results::BestFit;
use crate::metadata::{self, json};
use crate::misfit::GoodnessOfFit;
use crate::scenario::{SolverSettings, simulate};
use crate::sweep::refine::{RefineFilm, Refined, refit};
use crate::sweep::{Axis, AxisValues, Candidate, Parameter};
use crate::workflow::WorkflowError;
use crate::workflow::fit::{FilmGoodness, test_film};

/// The inputs tried, in this order.
const FREED: [Parameter; 8] = [
    Parameter::LengthM,
    Parameter::YoungsModulusPa,
    Parameter::DensityKgM3,
    Parameter::ThicknessM,
    Parameter::InitialAngleDeg,
    Parameter::PinXM,
    Parameter::PinYM,
    Parameter::ReleaseTimeS,
];

/// One input let go: where the data put it, and whether the fit then
/// explains them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreedInput {
    /// Its name, as an `--axis` (`FILM.NAME` for a joint fit's film's
    /// own) and a config key.
    pub input: String,
    /// The run's value, and the refit's \[its unit\].
    pub given: f64,
    pub fitted: f64,
    pub standard_error: f64,
    /// The refit's σ over the film's noise (the largest over a joint
    /// fit's films), and its verdict (every film's).
    pub ratio: f64,
    pub explains: bool,
    /// The axis to add (a fine one around the refit value).
    pub suggested_axis: String,
}

/// The range an input may move over when let go, around its `value`: a
/// quarter for the tether's material and size, 10° for the angle, a tenth
/// of the length for the pin, 50 ms for the release.
fn freed_range(p: Parameter, value: f64, length_m: f64) -> (f64, f64) {
    match p {
        Parameter::InitialAngleDeg => (value - 10.0, value + 10.0),
        Parameter::PinXM | Parameter::PinYM => (value - 0.1 * length_m, value + 0.1 * length_m),
        Parameter::ReleaseTimeS => ((value - 0.05).max(0.0), value + 0.05),
        _ => (0.75 * value, 1.25 * value),
    }
}

/// `x` to six significant digits, as a number prints.
pub(crate) fn significant(x: f64) -> f64 {
    format!("{x:.5e}").parse().unwrap_or(x)
}

/// An axis's values around `value`, four steps over a span a tenth of the
/// range it was freed over, `(low, high)`, and inside it: `a:b:step`.
fn suggested_values(value: f64, (low, high): (f64, f64)) -> String {
    // The step first, so that four of them reach the end as written.
    let step = significant(0.1 * (high - low) / 4.0);
    let a = significant((value - 2.0 * step).max(low).min(high - 4.0 * step));
    format!("{a}:{}:{step}", significant(a + 4.0 * step))
}

/// One input to let go: a parameter, and in a joint fit the film whose
/// own it is (None: the tether's, every film's).
#[derive(Debug, Clone, Copy)]
struct Freeing {
    parameter: Parameter,
    film: Option<usize>,
}

impl Combination {
    /// The inputs to let go, in [`FREED`]'s order: a single film's every
    /// one; a joint fit's shared ones over all its films, then each film's
    /// own (release angle, pin, release time) for that film alone. None
    /// the grid (or the film's own axes) already has, nor a pin the
    /// film's camera fixes.
    fn to_free(&self) -> Vec<Freeing> {
        let joint = self.films.len() > 1;
        let mut to_free = Vec::new();
        for parameter in FREED {
            let axis = Axis::Parameter(parameter);
            let pin = matches!(parameter, Parameter::PinXM | Parameter::PinYM);
            if !joint || !parameter.is_films_own() {
                let fixed = pin && self.films[0].film.camera.pin.is_some();
                if !self.request.grid.has(axis) && !fixed {
                    to_free.push(Freeing {
                        parameter,
                        film: None,
                    });
                }
                continue;
            }
            for (k, f) in self.films.iter().enumerate() {
                let fixed = pin && f.film.camera.pin.is_some();
                if !f.film.own.iter().any(|a| a.axis == axis) && !fixed {
                    to_free.push(Freeing {
                        parameter,
                        film: Some(k),
                    });
                }
            }
        }
        to_free
    }

    /// When a refined fit does not explain its film (or, jointly, one of
    /// its films): each known input freed in turn (module docs), recorded
    /// in the metadata. Empty otherwise.
    pub(super) fn free_inputs(
        &mut self,
        best: &Candidate,
        refined: Option<&Refined>,
        combined: &Combined,
        goodness: &[FilmGoodness],
        settings: &SolverSettings,
    ) -> Result<Vec<FreedInput>, WorkflowError> {
        let flagged = goodness
            .iter()
            .any(|g| !g.test.explains && g.test.whiteness.is_some());
        let (Some(refined), true) = (refined, flagged) else {
            return Ok(Vec::new());
        };
        if self.films.iter().any(|f| f.scenario.as_drop().is_none()) {
            return Ok(Vec::new());
        }
        // Each film's own values (its release) from the refined optimum.
        let films: Vec<RefineFilm> = self
            .refine_films(combined)
            .into_iter()
            .map(|f| RefineFilm {
                start: Some(refined.candidate(best, f.name)),
                ..f
            })
            .collect();
        let start = refined.candidate(best, None);
        let mut found = Vec::new();
        for freeing in self.to_free() {
            // A value the solver cannot simulate ends that input's refit,
            // not the run.
            if let Some(f) = self.free_one(freeing, &start, &films, settings) {
                found.push(f);
            }
        }
        if !found.is_empty() {
            self.metadata.insert(metadata::FREED.into(), json(&found));
        }
        Ok(found)
    }

    /// One input let go from the refined optimum `start` (each film's own
    /// start in `films`), refitted and judged; None where the refit cannot
    /// be made or judged.
    fn free_one(
        &self,
        freeing: Freeing,
        start: &Candidate,
        films: &[RefineFilm<'_>],
        settings: &SolverSettings,
    ) -> Option<FreedInput> {
        let Freeing { parameter: p, film } = freeing;
        let axis = Axis::Parameter(p);
        let base = &self.request.base;
        let given = p.get(base, &self.films[film.unwrap_or(0)].scenario);
        let (mut low, high) = freed_range(p, given, base.length_m);
        if p == Parameter::LengthM {
            // No shorter than any film's farthest marker.
            let reach = self
                .films
                .iter()
                .flat_map(|f| &f.scenario.marker_arc_lengths_m);
            low = reach.copied().fold(low, f64::max);
        }
        let freed = AxisValues {
            axis,
            values: vec![low, high],
        };
        let mut grid = self.request.grid.clone();
        let mut from = *start;
        // A film's own input goes on that film's own axes, the tether's
        // on the grid that every film shares.
        let own: Vec<AxisValues>;
        let mut films = films.to_vec();
        let name = match film {
            None => {
                from.set(axis, given);
                grid = grid.with(freed).ok()?;
                None
            }
            Some(k) => {
                own = films[k].own.iter().cloned().chain([freed]).collect();
                let mut own_start = films[k].start.unwrap_or(from);
                own_start.set(axis, given);
                films[k] = RefineFilm {
                    own: &own,
                    start: Some(own_start),
                    ..films[k].clone()
                };
                films[k].name
            }
        };
        let refit = refit(&grid, &from, &films, base, settings).ok()??;
        let fitted = refit
            .parameters
            .iter()
            .find(|q| q.parameter == axis && q.film.as_deref() == name)?;
        let tests = self.judge_refit(&refit, &from, &films, settings)?;
        let worst = tests.iter().map(|t| t.ratio).fold(0.0, f64::max);
        let input = match name {
            Some(film) => format!("{film}.{}", p.name()),
            None => p.name().to_string(),
        };
        let value = significant(fitted.value);
        Some(FreedInput {
            suggested_axis: format!("{input}={}", suggested_values(value, (low, high))),
            input,
            given,
            fitted: value,
            standard_error: fitted.standard_error,
            ratio: worst,
            explains: tests.iter().all(|t| t.explains),
        })
    }

    /// Each film's goodness of fit at a refit, by the same test as the
    /// run's (its σ the refit's, its residuals from its best fit there);
    /// None where a film cannot be simulated at it or has no noise
    /// estimate.
    fn judge_refit(
        &self,
        refit: &Refined,
        from: &Candidate,
        films: &[RefineFilm<'_>],
        settings: &SolverSettings,
    ) -> Option<Vec<GoodnessOfFit>> {
        let joint = self.films.len() > 1;
        self.films
            .iter()
            .zip(films)
            .enumerate()
            .map(|(k, (film, refine_film))| {
                let candidate = refit.candidate(from, refine_film.name);
                let (tether, scenario) = candidate.experiment(&self.request.base, &film.scenario);
                let output = simulate(&scenario, &tether, settings).ok()?;
                let fit = BestFit::new(&film.measured, &output.track).with_refined(&output.track);
                // A single film's σ and count are the refit's own; a joint
                // fit's, each film's share.
                let (sigma_m, observations) = match refit.films.get(k) {
                    Some(f) if joint => (f.sigma_m, film.coverage.observations()),
                    _ => (refit.sigma_m, refit.observations),
                };
                let noise = film.noise?;
                let counts = (observations, refit.parameters.len());
                Some(test_film(sigma_m, counts, noise, &fit))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suggested_axis_brackets_the_refit_value_inside_its_range() {
        let range = |p, v| freed_range(p, v, 0.5);
        assert_eq!(
            suggested_values(8e6, range(Parameter::YoungsModulusPa, 8e6)),
            "7800000:8200000:100000"
        );
        assert_eq!(
            suggested_values(30.0, range(Parameter::InitialAngleDeg, 30.0)),
            "29:31:0.5"
        );
        // A length no shorter than the farthest marker at 0.5 m.
        assert_eq!(
            suggested_values(0.5001, (0.5, 0.625)),
            "0.5:0.5125:0.003125"
        );
        assert_eq!(
            freed_range(Parameter::ReleaseTimeS, 0.01, 0.5),
            (0.0, 0.060000000000000005)
        );
    }
}
