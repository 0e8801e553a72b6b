//! Experiment design: before filming, how well would a film determine the
//! parameters an identification refines? At assumed values of the tether
//! and a marker noise σ, the Fisher information of the marker tracks is
//! JᵀJ/σ², J the sensitivities of every compared coordinate (every frame
//! but the first, as J_e compares them) to the estimated parameters, by
//! central differences on the reference solver: the Jacobian the
//! refinement ([`super::refine`]) uses, here at the assumed values and
//! without data. Its inverse is the covariance a later refinement would
//! report (to first order, for a model that fits), so the standard errors
//! of each planned film, or set of films, can be compared before filming.
//!
//! Several films of one tether add their information: the tether's
//! parameters are shared, and a film's own parameters (its release time,
//! angle, pin), when estimated, are one per film.

use rayon::prelude::*;
use serde::Serialize;

use super::axis::{Axis, ScopedAxis};
use super::parameter::Parameter;
use crate::error::InputError;
use crate::least_squares::{LmSettings, covariance};
use crate::model::TetherParams;
use crate::scenario::{Frames, Scenario, SolverSettings, simulate};
use crate::solver::SolverError;
use crate::track::Track;

/// One planned film: its tether at the assumed values and its experiment
/// (frames and markers as it will be filmed).
#[derive(Debug, Clone)]
pub struct PlannedFilm {
    /// Its name in column names (`a.release_time_s`): the config's stem.
    pub name: String,
    pub tether: TetherParams,
    pub scenario: Scenario,
}

/// Sets `axis` to `value` in a planned film: a tether or experiment
/// parameter, n, D or C_D, or the film's shape (its frame interval with its
/// duration kept, its duration with its interval kept, or its markers,
/// evenly spaced from the pin to the free end: s = L j / (M − 1)). The
/// value is one the axis takes ([`Axis::check`]).
fn set_in(axis: Axis, value: f64, film: &mut PlannedFilm) {
    let scenario = &mut film.scenario;
    match axis {
        Axis::Elements => film.tether.elements = value as usize,
        Axis::Damping => film.tether.damping_pa_s = value,
        Axis::Drag => film.tether.drag_coefficient = value,
        Axis::Parameter(p) => p.set(value, &mut film.tether, scenario),
        Axis::FrameIntervalS => {
            let duration_s = scenario.duration_s();
            *scenario = scenario
                .clone()
                .with_frames(Frames::every(value, duration_s));
        }
        Axis::DurationS => *scenario = scenario.clone().with_duration_s(value),
        Axis::Markers => {
            let (count, length_m) = (value as usize, film.tether.length_m);
            scenario.marker_arc_lengths_m = (0..count)
                .map(|j| length_m * j as f64 / (count - 1) as f64)
                .collect();
        }
    }
}

/// A parameter the later identification would estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Estimated {
    /// D, C_D or a parameter.
    pub axis: Axis,
    /// The film whose own parameter it is (one per film); None: the
    /// tether's, shared by every film.
    pub film: Option<usize>,
}

impl Estimated {
    /// Whether its value is a reading on a clock or a ruler (a release
    /// time, a pin's coordinate): a standard error is then no share of it.
    pub fn is_reading(&self) -> bool {
        matches!(
            self.axis,
            Axis::Parameter(Parameter::ReleaseTimeS | Parameter::PinXM | Parameter::PinYM)
        )
    }

    /// A parameter of the tether, shared by every film.
    pub const fn shared(axis: Axis) -> Self {
        Self { axis, film: None }
    }

    /// Its value in a film.
    pub fn value_in(self, film: &PlannedFilm) -> f64 {
        match self.axis {
            Axis::Damping => film.tether.damping_pa_s,
            Axis::Drag => film.tether.drag_coefficient,
            Axis::Parameter(p) => p.get(&film.tether, &film.scenario),
            _ => unreachable!("only D, C_D and parameters are estimated"),
        }
    }

    fn set(self, value: f64, film: &mut PlannedFilm) {
        set_in(self.axis, value, film)
    }

    /// Its difference step at `value`: a hundredth of the value, as the
    /// refinement's is a hundredth of the grid's range, with a floor for a
    /// value at or near zero; the release's a tenth of a millisecond
    /// (markers move ~1 m/s, so ~0.1 mm: far above the solver's error).
    fn difference_step(self, value: f64) -> f64 {
        let floor = match self.axis {
            Axis::Damping => 1.0,
            Axis::Drag => 1e-3,
            Axis::Parameter(Parameter::ReleaseTimeS) => return 1e-4,
            Axis::Parameter(Parameter::InitialAngleDeg) => 0.1,
            Axis::Parameter(Parameter::PinXM | Parameter::PinYM) => 1e-4,
            _ => 1e-9,
        };
        (1e-2 * value.abs()).max(floor)
    }

    /// Whether it must stay at or above zero (a one-sided difference there).
    fn non_negative(self) -> bool {
        !matches!(
            self.axis,
            Axis::Parameter(Parameter::InitialAngleDeg | Parameter::PinXM | Parameter::PinYM)
        )
    }
}

/// What one design point predicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// Its values on the design axes, in their order.
    pub values: Vec<f64>,
    /// Each estimated parameter's standard error, in their order; NaN
    /// where the information matrix is singular.
    pub standard_errors: Vec<f64>,
    /// The correlation of the first two estimated parameters (D and C_D).
    pub correlation: f64,
    /// Compared coordinates, over every film.
    pub observations: usize,
}

/// The design: films, axes, estimates, noise.
#[derive(Debug, Clone)]
pub struct Design {
    pub films: Vec<PlannedFilm>,
    pub axes: Vec<ScopedAxis>,
    pub estimated: Vec<Estimated>,
    /// σ of each marker coordinate \[m\].
    pub noise_m: f64,
}

impl Design {
    /// `FILM.NAME` → (that film, NAME); `NAME` → (None, NAME). `field`
    /// names the input refused when no film has that name.
    pub fn film_and_name<'a>(
        &self,
        text: &'a str,
        field: &str,
    ) -> Result<(Option<usize>, &'a str), InputError> {
        let Some((film, name)) = text.split_once('.') else {
            return Ok((None, text));
        };
        let names: Vec<&str> = self.films.iter().map(|f| f.name.as_str()).collect();
        match names.iter().position(|&f| f == film) {
            Some(i) => Ok((Some(i), name)),
            None => Err(InputError::new(
                field,
                text,
                format!(
                    "NAME or FILM.NAME of a planned film (the films: {})",
                    names.join(", ")
                ),
            )),
        }
    }

    /// The parameter estimated by `text` (`NAME`, or `FILM.NAME`): once
    /// for each film whose own it is where no film is named.
    pub fn estimates(&self, text: &str) -> Result<Vec<Estimated>, InputError> {
        let (film, name) = self.film_and_name(text, "estimate")?;
        let parameter = Parameter::parse(name).map_err(|e| InputError {
            field: "estimate".into(),
            ..e
        })?;
        let films: Vec<Option<usize>> = match film {
            Some(f) => vec![Some(f)],
            None if parameter.is_films_own() && self.films.len() > 1 => {
                (0..self.films.len()).map(Some).collect()
            }
            None => vec![None],
        };
        Ok(films
            .into_iter()
            .map(|film| Estimated {
                axis: Axis::Parameter(parameter),
                film,
            })
            .collect())
    }

    /// A design axis's column: its variable's name, after its film's
    /// (`a.initial_angle_deg`) when it applies to one film of several.
    pub fn axis_column(&self, axis: &ScopedAxis) -> String {
        self.with_film(axis.film, axis.axis().column())
    }

    /// A design axis at `value`, for a legend or a line of text: rounded
    /// to four significant digits, a frame interval as its frame rate
    /// (`a.120 fps`, not `a.frame_interval_s = 0.008333333333333333`).
    pub fn point_label(&self, axis: &ScopedAxis, value: f64) -> String {
        let significant = |v: f64| {
            if v == 0.0 || !v.is_finite() {
                return v.to_string();
            }
            let decimals = (3 - v.abs().log10().floor() as i32).max(0) as usize;
            let text = format!("{v:.decimals$}");
            match text.contains('.') {
                true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
                false => text,
            }
        };
        match axis.axis() {
            Axis::FrameIntervalS => {
                self.with_film(axis.film, &format!("{} fps", significant(1.0 / value)))
            }
            _ => format!("{} = {}", self.axis_column(axis), significant(value)),
        }
    }

    /// An estimated parameter's name, after its film's when it is one
    /// film's of several (`b.release_time_s`).
    pub fn estimate_name(&self, estimated: &Estimated) -> String {
        self.with_film(estimated.film, &estimated.axis.to_string())
    }

    fn with_film(&self, film: Option<usize>, name: &str) -> String {
        match film {
            Some(f) if self.films.len() > 1 => format!("{}.{name}", self.films[f].name),
            _ => name.to_string(),
        }
    }

    /// An estimated parameter's assumed value (in its own film, or the
    /// first film for the tether's).
    pub fn assumed(&self, estimated: &Estimated) -> f64 {
        estimated.value_in(&self.films[estimated.film.unwrap_or(0)])
    }

    /// The design points: every combination of the axes' values, the
    /// last axis fastest.
    pub fn points(&self) -> Vec<Vec<f64>> {
        let mut points = vec![Vec::new()];
        for axis in &self.axes {
            points = points
                .into_iter()
                .flat_map(|p| {
                    axis.values.values.iter().map(move |&v| {
                        let mut q = p.clone();
                        q.push(v);
                        q
                    })
                })
                .collect();
        }
        points
    }

    /// The films at a design point, each checked, their frames fixed on
    /// the camera's clock: an estimate's difference (a later release) must
    /// move the tether, not the camera.
    pub fn films_at(&self, point: &[f64]) -> Result<Vec<PlannedFilm>, InputError> {
        let mut films = self.films.clone();
        // The markers last: they are spread over the length the point sets.
        let mut axes: Vec<(&ScopedAxis, f64)> =
            self.axes.iter().zip(point.iter().copied()).collect();
        axes.sort_by_key(|(a, _)| a.axis() == Axis::Markers);
        for (axis, value) in axes {
            axis.axis().check(value)?;
            for (i, film) in films.iter_mut().enumerate() {
                if axis.film.is_none_or(|f| f == i) {
                    set_in(axis.axis(), value, film);
                }
            }
        }
        for film in &mut films {
            film.tether.validate()?;
            film.scenario.validate(film.tether.length_m)?;
            film.scenario.check_track_memory()?;
            let times = film.scenario.frame_times_s();
            film.scenario = film.scenario.clone().with_frames(Frames::film(times));
        }
        Ok(films)
    }

    /// Each estimate's (film, difference step) pairs it perturbs.
    fn columns(&self, films: &[PlannedFilm]) -> Vec<Vec<(usize, f64, f64)>> {
        self.estimated
            .iter()
            .map(|e| {
                (0..films.len())
                    .filter(|&f| e.film.is_none_or(|g| g == f))
                    .map(|f| {
                        let value = e.value_in(&films[f]);
                        (f, value, e.difference_step(value))
                    })
                    .collect()
            })
            .collect()
    }

    /// Simulations a design point takes: two per estimate and film it
    /// belongs to.
    pub fn simulations_per_point(&self) -> usize {
        self.columns(&self.films).iter().map(|c| 2 * c.len()).sum()
    }

    /// Every simulation the design takes: at each point, for each
    /// estimate and film it belongs to, the film with the estimate a step
    /// up and a step down.
    pub fn runs(&self) -> Result<DesignRuns, DesignError> {
        let points = self.points();
        let films: Vec<Vec<PlannedFilm>> = points
            .iter()
            .map(|p| self.films_at(p))
            .collect::<Result<_, _>>()?;
        let mut tasks = Vec::new();
        let mut experiments = Vec::new();
        for (p, point_films) in films.iter().enumerate() {
            for (e, column) in self.columns(point_films).into_iter().enumerate() {
                for (f, value, step) in column {
                    let estimate = self.estimated[e];
                    let down = if estimate.non_negative() {
                        (value - step).max(0.0)
                    } else {
                        value - step
                    };
                    let up = value + step;
                    for v in [up, down] {
                        let mut film = point_films[f].clone();
                        estimate.set(v, &mut film);
                        experiments.push((film.scenario, film.tether));
                    }
                    tasks.push(Task {
                        point: p,
                        estimate: e,
                        film: f,
                        span: up - down,
                    });
                }
            }
        }
        Ok(DesignRuns {
            points,
            films,
            tasks,
            experiments,
        })
    }

    /// The prediction at every design point, all simulations in parallel
    /// on the CPU cores with `settings` (the reference solver).
    pub fn predict(&self, settings: &SolverSettings) -> Result<Vec<Prediction>, DesignError> {
        let runs = self.runs()?;
        let tracks = runs
            .experiments
            .par_iter()
            .map(|(scenario, tether)| Ok(simulate(scenario, tether, settings)?.track))
            .collect::<Result<Vec<Track>, SolverError>>()
            .map_err(DesignError::Solver)?;
        Ok(self.predict_from(runs, &tracks))
    }

    /// The prediction at every design point from the tracks of its
    /// [`Design::runs`], in their order (from any engine).
    pub fn predict_from(&self, runs: DesignRuns, tracks: &[Track]) -> Vec<Prediction> {
        let DesignRuns {
            points,
            films,
            tasks,
            ..
        } = runs;
        let derivatives: Vec<Vec<f64>> = tasks
            .iter()
            .zip(tracks.chunks(2))
            .map(|(task, pair)| {
                let (a, b) = (
                    compared_coordinates(&pair[0]),
                    compared_coordinates(&pair[1]),
                );
                a.iter().zip(&b).map(|(x, y)| (x - y) / task.span).collect()
            })
            .collect();
        let mut predictions = Vec::with_capacity(points.len());
        let mut next = 0;
        for (p, point) in points.into_iter().enumerate() {
            let observations = films[p]
                .iter()
                .map(|f| {
                    f.scenario.compared_frame_times_s().len()
                        * 2
                        * f.scenario.marker_arc_lengths_m.len()
                })
                .sum();
            let k = self.estimated.len();
            let mut jtj = nalgebra::DMatrix::zeros(k, k);
            // Columns per film: (estimate, derivative) of this point.
            let mut by_film: Vec<Vec<(usize, &Vec<f64>)>> = vec![Vec::new(); films[p].len()];
            while next < tasks.len() && tasks[next].point == p {
                let t = &tasks[next];
                by_film[t.film].push((t.estimate, &derivatives[next]));
                next += 1;
            }
            for columns in &by_film {
                for (a, ca) in columns {
                    for (b, cb) in columns {
                        jtj[(*a, *b)] += ca.iter().zip(cb.iter()).map(|(x, y)| x * y).sum::<f64>();
                    }
                }
            }
            let sigma2 = self.noise_m * self.noise_m;
            let (cov, _) = covariance(&jtj, sigma2, LmSettings::DEFAULT.singular_ratio);
            let standard_errors = (0..k)
                .map(|i| cov.as_ref().map_or(f64::NAN, |c| c[(i, i)].sqrt()))
                .collect();
            let correlation = cov
                .as_ref()
                .filter(|_| k >= 2)
                .map_or(f64::NAN, |c| c[(0, 1)] / (c[(0, 0)] * c[(1, 1)]).sqrt());
            predictions.push(Prediction {
                values: point,
                standard_errors,
                correlation,
                observations,
            });
        }
        predictions
    }
}

/// One difference quotient of a design: an estimate's in one film at one
/// point, over `span` (its step up less its step down).
#[derive(Debug, Clone, Copy)]
struct Task {
    point: usize,
    estimate: usize,
    film: usize,
    span: f64,
}

/// The simulations of a design ([`Design::runs`]): `experiments`, two per
/// difference quotient (up, then down), for an engine to run with their
/// tracks kept.
#[derive(Debug, Clone)]
pub struct DesignRuns {
    points: Vec<Vec<f64>>,
    films: Vec<Vec<PlannedFilm>>,
    tasks: Vec<Task>,
    pub experiments: Vec<(Scenario, TetherParams)>,
}

/// The compared marker coordinates of a film, in J_e's order (every frame
/// but the first, each marker's x then y).
fn compared_coordinates(track: &Track) -> Vec<f64> {
    let mut r = Vec::with_capacity(2 * track.markers() * track.times_s.len());
    for f in 1..track.times_s.len() {
        for j in 0..track.markers() {
            let s = track.at(f, j);
            r.push(s[0]);
            r.push(s[1]);
        }
    }
    r
}

#[derive(Debug, thiserror::Error)]
pub enum DesignError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("simulating a design point: {0}")]
    Solver(SolverError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioKind;
    use crate::sweep::AxisValues;

    fn film(name: &str) -> PlannedFilm {
        PlannedFilm {
            name: name.into(),
            tether: TetherParams::default(),
            scenario: Scenario::new(ScenarioKind::Drop, 0.6),
        }
    }

    #[test]
    fn labels_round_values_and_say_frame_rates_and_readings_have_no_share() {
        let axis = |film, axis| ScopedAxis {
            film,
            values: AxisValues {
                axis,
                values: Vec::new(),
            },
        };
        let design = Design {
            films: vec![film("a"), film("b")],
            axes: Vec::new(),
            estimated: Vec::new(),
            noise_m: 5e-4,
        };
        let interval = axis(Some(0), Axis::FrameIntervalS);
        assert_eq!(design.point_label(&interval, 1.0 / 120.0), "a.120 fps");
        assert_eq!(design.point_label(&interval, 0.04), "a.25 fps");
        let shared = axis(None, Axis::FrameIntervalS);
        assert_eq!(design.point_label(&shared, 1.0 / 29.97), "29.97 fps");
        let angle = axis(None, Axis::Parameter(Parameter::InitialAngleDeg));
        assert_eq!(design.point_label(&angle, 45.0), "initial_angle_deg = 45");
        let duration = axis(None, Axis::DurationS);
        assert_eq!(
            design.point_label(&duration, 2.0 / 3.0),
            "duration_s = 0.6667"
        );
        let release = Estimated {
            axis: Axis::Parameter(Parameter::ReleaseTimeS),
            film: Some(1),
        };
        assert!(release.is_reading());
        assert!(!Estimated::shared(Axis::Damping).is_reading());
    }

    #[test]
    fn points_are_every_combination_and_a_films_own_names_carry_its_name() {
        let axis = |film, axis, values: &[f64]| ScopedAxis {
            film,
            values: AxisValues::new(axis, values.to_vec()).unwrap(),
        };
        let angle = Axis::Parameter(Parameter::InitialAngleDeg);
        let mut design = Design {
            films: vec![film("a"), film("b")],
            axes: vec![
                axis(None, Axis::DurationS, &[1.0, 2.0]),
                axis(Some(1), angle, &[45.0, 60.0, 90.0]),
            ],
            estimated: vec![
                Estimated::shared(Axis::Damping),
                Estimated {
                    axis: Axis::Parameter(Parameter::ReleaseTimeS),
                    film: Some(1),
                },
            ],
            noise_m: 5e-4,
        };
        let points = design.points();
        assert_eq!(points.len(), 6);
        assert_eq!(points[0], [1.0, 45.0]);
        assert_eq!(points[1], [1.0, 60.0]);
        assert_eq!(points[5], [2.0, 90.0]);
        assert_eq!(design.axis_column(&design.axes[1]), "b.initial_angle_deg");
        assert_eq!(design.axis_column(&design.axes[0]), "duration_s");
        assert_eq!(
            design.estimate_name(&design.estimated[1]),
            "b.release_time_s"
        );
        // The axis set each film it names, and only those; frames become
        // the camera's times.
        let films = design.films_at(&points[5]).unwrap();
        let angle_of = |f: &PlannedFilm| f.scenario.as_drop().unwrap().initial_angle_deg;
        assert_eq!(angle_of(&films[1]), 90.0);
        assert_eq!(angle_of(&films[0]), angle_of(&design.films[0]));
        assert_eq!(films[0].scenario.frame_times_s().len(), 51);
        assert!(matches!(films[0].scenario.frames, Frames::At { .. }));
        // D for every film, the release for b only: 2 + 2 + 2 per point.
        assert_eq!(design.simulations_per_point(), 6);
        // With one film, no film's name in the columns.
        design.films.truncate(1);
        design.estimated[1].film = Some(0);
        assert_eq!(design.estimate_name(&design.estimated[1]), "release_time_s");
    }
}
