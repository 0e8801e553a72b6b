//! The refined optimum: from the grid's best candidate, a local
//! Levenberg–Marquardt fit ([`crate::least_squares`]) of the continuous grid
//! axes (D, C_D and the parameter axes, each when the grid varies it; n
//! stays the best's) to the measured marker coordinates (of several films
//! at once in a joint identification, each film's weighed by its noise and
//! its own axes refined with it: [`RefineFilm`]), on the reference
//! solver, bounded by the grid's range, with standard errors and the
//! correlation from the Gauss–Newton covariance, and each parameter's
//! profile-likelihood interval ([`crate::least_squares::profile`]). Each
//! residual evaluation is a simulation.

use serde::Serialize;

use super::axis::Axis;
use super::joint::{FilmScore, FilmWeight};
use super::{AxisValues, Candidate, Grid, chi2_quantile};
use crate::least_squares::Fit;
use crate::least_squares::profile::{Profile, ProfileEnd};
use crate::model::TetherParams;
use crate::scenario::{Scenario, SolverSettings, simulate};
use crate::solver::SolverError;
use crate::track::MeasuredTrack;

mod mesh;
mod problem;

pub use mesh::{ElementsFit, MeshEdge, MeshMove, MeshSpan};
use problem::Problem;

/// One refined parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedParameter {
    /// Its axis (written as its column in results.parquet).
    pub parameter: Axis,
    /// The film whose own parameter it is, in a joint identification
    /// (`sweep::joint`); None: the tether's, shared by every film.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub film: Option<String>,
    pub value: f64,
    /// From the Gauss–Newton covariance σ² (JᵀJ)⁻¹.
    pub standard_error: f64,
    /// From Newey–West's covariance over the frames
    /// ([`crate::least_squares::newey_west`], [`Refined::robust_lags`]):
    /// robust to residuals correlated in time, the error to quote when the
    /// residuals are not white. None when JᵀJ is singular.
    pub robust_standard_error: Option<f64>,
    /// The grid's best value at the refined n: where the refinement began.
    pub grid_best: f64,
    /// On the grid's bound: the data may want it beyond the range searched.
    pub at_bound: bool,
    /// Its profile-likelihood interval at [`Refined::confidence_level`]
    /// (the kept n's only).
    pub profile: Option<Profile>,
}

impl RefinedParameter {
    /// Its name: the axis's column, `FILM.NAME` for a film's own.
    pub fn name(&self) -> String {
        match &self.film {
            Some(film) => format!("{film}.{}", self.parameter.column()),
            None => self.parameter.column().to_string(),
        }
    }

    /// The Gauss–Newton interval at the profile's level: value ± √χ²₁ SE.
    pub fn gauss_newton_interval(&self, confidence_level: f64) -> (f64, f64) {
        let half = chi2_quantile(1, confidence_level).sqrt() * self.standard_error;
        (self.value - half, self.value + half)
    }
}

/// The refined optimum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refined {
    /// n: the grid's, of the refinement kept.
    pub elements: usize,
    /// The n refined (see [`refine_best`]); the one kept is `elements`.
    pub elements_tried: Vec<usize>,
    /// The n the grid offered.
    pub elements_offered: Vec<usize>,
    /// Whether every n's grid best was refined: every n offered (at most
    /// [`MAX_EVERY_ELEMENTS`]), or beyond that the grid being too coarse
    /// to rank n ([`grid_too_coarse_to_rank_n`]).
    pub every_elements: bool,
    pub parameters: Vec<RefinedParameter>,
    /// J_e at the refined values \[m²\].
    pub j_e_m2: f64,
    /// The frames over which [`RefinedParameter::robust_standard_error`]
    /// lets residuals correlate: where their pooled autocorrelation falls
    /// below [`ROBUST_CORRELATION_BELOW`] (1 for white residuals).
    pub robust_lags: usize,
    /// Compared coordinates and σ = √(J_e / (N − p)) \[m\].
    pub observations: usize,
    pub sigma_m: f64,
    /// σ² (JᵀJ)⁻¹ in the parameters' order.
    pub covariance: Vec<Vec<f64>>,
    /// Correlation of the first two parameters, when there are two.
    pub correlation: Option<f64>,
    pub iterations: usize,
    /// The fits' simulations (each profile counts its own).
    pub simulations: usize,
    /// Why a parameter is not determined by the data, if one is not: a
    /// near-singular JᵀJ, or an estimate on a bound.
    pub undetermined: Option<String>,
    /// Every refined n's own fit, the kept one included, by n.
    pub per_elements: Vec<ElementsFit>,
    /// The profile intervals' level, and the rise of J_e above the refined
    /// J_e that ends them: σ² χ²₁(level) \[m²\].
    pub confidence_level: f64,
    pub profile_rise_m2: f64,
    /// A joint refinement's films: each one's fit at the refined values
    /// and its final weight (empty for a single film).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub films: Vec<FilmWeight>,
}

/// A profile interval's side that is wider or narrower than the
/// Gauss–Newton interval's by more than [`DISAGREEMENT_FACTOR`]: the cost
/// is far from quadratic there, and the profile is the interval to trust.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntervalDisagreement {
    /// The parameter's name ([`RefinedParameter::name`]).
    pub parameter: String,
    /// "lower" or "upper".
    pub side: &'static str,
    /// |profile end − value| / |Gauss–Newton end − value|, the end of a
    /// side that reaches the grid's bound being the bound.
    pub ratio: f64,
}

/// The residuals' pooled autocorrelation below which frames this far apart
/// count as independent for the robust errors.
pub const ROBUST_CORRELATION_BELOW: f64 = 0.1;

/// A profile side this many times wider or narrower than the Gauss–Newton
/// side is reported.
pub const DISAGREEMENT_FACTOR: f64 = 2.0;

impl Refined {
    /// The profile sides that disagree with the Gauss–Newton interval by
    /// more than [`DISAGREEMENT_FACTOR`]; an end on a bound counts as
    /// wider when the bound lies beyond the Gauss–Newton end by the factor.
    pub fn interval_disagreements(&self) -> Vec<IntervalDisagreement> {
        let mut found = Vec::new();
        for p in &self.parameters {
            let Some(profile) = &p.profile else { continue };
            let (gn_lower, gn_upper) = p.gauss_newton_interval(self.confidence_level);
            for (side, end, gn) in [
                ("lower", &profile.lower, gn_lower),
                ("upper", &profile.upper, gn_upper),
            ] {
                let reach = match end {
                    ProfileEnd::Crossed { value } | ProfileEnd::Bound { value } => *value,
                    ProfileEnd::Unresolved { .. } => continue,
                };
                let ratio = (reach - p.value).abs() / (gn - p.value).abs();
                if !ratio.is_finite()
                    || ratio > DISAGREEMENT_FACTOR
                    || (ratio < 1.0 / DISAGREEMENT_FACTOR && !end.is_bound())
                {
                    found.push(IntervalDisagreement {
                        parameter: p.name(),
                        side,
                        ratio,
                    });
                }
            }
        }
        found
    }

    /// The refined candidate of film `film` (None: a single film's): its
    /// n, its refined shared values and the film's own, and `best`'s (the
    /// film's candidate) for the axes not refined.
    pub fn candidate(&self, best: &Candidate, film: Option<&str>) -> Candidate {
        let mut c = Candidate {
            elements: self.elements,
            ..*best
        };
        for p in &self.parameters {
            if p.film.is_none() || p.film.as_deref() == film {
                c.set(p.parameter, p.value);
            }
        }
        c
    }
}

/// The grid's continuous axes, in its order, each when it varies.
fn varied(grid: &Grid) -> Vec<Axis> {
    grid.axes()
        .iter()
        .filter(|a| a.axis.is_continuous() && a.values.len() > 1)
        .map(|a| a.axis)
        .collect()
}

fn values(axis: Axis, grid: &Grid) -> Vec<f64> {
    grid.values(axis).unwrap_or_default().to_vec()
}

fn get(axis: Axis, c: &Candidate) -> f64 {
    c.value(axis).expect("the candidate is on the grid")
}

/// The measured minus simulated coordinates of every compared sample
/// (x then y of each marker the measurement has, frame by frame): J_e is
/// their sum of squares.
pub fn residuals(
    measured: &MeasuredTrack,
    scenario: &Scenario,
    params: &TetherParams,
    settings: &SolverSettings,
) -> Result<Vec<f64>, SolverError> {
    let track = simulate(scenario, params, settings)?.track;
    let mut r = Vec::new();
    // Every frame but the first, as J_e (`Scenario::compared_frame_times_s`).
    for (f, &t) in track.times_s.iter().enumerate().skip(1) {
        for j in 0..track.markers() {
            if let Some(m) = measured.get(t, j) {
                let s = track.at(f, j);
                r.push(m[0] - s[0]);
                r.push(m[1] - s[1]);
            }
        }
    }
    Ok(r)
}

/// Refines the best candidate of every n offered, or beyond
/// [`MAX_EVERY_ELEMENTS`] of every n whose grid J_e lies within the
/// confidence region's threshold (the grid's best always) and of the
/// grid's finest n, keeps one refinement (`kept`), and profiles its
/// parameters. A coarse grid can favour the wrong n (its best (D, C_D)
/// point happens to lie closer, or the finest n's grid points all miss
/// its C_D), and the refined J_e of each n is the fair comparison. Up to
/// [`MAX_EVERY_ELEMENTS`] n, every n offered is refined (each n's values
/// are part of the answer); beyond, other n far outside the region are not
/// worth their simulations, unless the grid is too coarse to rank n at all
/// ([`grid_too_coarse_to_rank_n`]): then every n's grid best is refined.
pub fn refine_best(
    grid: &Grid,
    summary: &super::Summary,
    films: &[RefineFilm<'_>],
    base: &TetherParams,
    settings: &SolverSettings,
) -> Result<Option<Refined>, SolverError> {
    refine_best_tightened(grid, summary, films, base, settings, |_| None)
}

/// Every n offered is refined where there are at most this many (the
/// mesh is part of the answer: each n's refined J_e and values are
/// reported); beyond, those within the confidence threshold and the
/// finest, or every n where the grid cannot rank them.
pub const MAX_EVERY_ELEMENTS: usize = 8;

/// [`refine_best`], asking `tighter`, with the kept refinement before its
/// profiles, whether its own σ calls for tighter solver settings
/// (`sweep::accuracy::Chosen::tightened_for_refinement`): if so, the kept
/// refinement is fitted again at them from its own values (a joint one's
/// weights settled again) and profiled at them. The n kept is the first
/// settings' choice. Starting from the refined values, the second fit
/// takes a few iterations of one n, where refining every n afresh and
/// profiling at both settings took the whole time again (the joint
/// example of docs/identify.md: 12.3 s against 18.8 s, and 13.2 s at
/// 1e-9 m throughout).
pub fn refine_best_tightened(
    grid: &Grid,
    summary: &super::Summary,
    films: &[RefineFilm<'_>],
    base: &TetherParams,
    settings: &SolverSettings,
    tighter: impl FnOnce(&Refined) -> Option<SolverSettings>,
) -> Result<Option<Refined>, SolverError> {
    let (mut starts, every_offered) = starts(summary);
    let problem = Problem {
        grid,
        films,
        weights: films.iter().map(|f| f.weight).collect(),
        base,
        settings,
    };
    let mut fits: Vec<(Refined, Fit, Candidate)> = Vec::new();
    for start in &starts {
        if let Some((r, fit)) = problem.fit(start)? {
            fits.push((r, fit, *start));
        }
    }
    let lowest_refined_m2 = fits
        .iter()
        .map(|(r, _, _)| r.j_e_m2)
        .fold(f64::INFINITY, f64::min);
    // The n the threshold left out, refined too where the grid cannot
    // rank n.
    let too_coarse = grid_too_coarse_to_rank_n(summary, lowest_refined_m2);
    let others: Vec<Candidate> = summary
        .best_per_elements
        .iter()
        .filter(|r| too_coarse && r.j_e_m2.is_some() && !starts.contains(&r.candidate))
        .map(|r| r.candidate)
        .collect();
    let every_elements = (every_offered && starts.len() > 1) || !others.is_empty();
    for start in others {
        if let Some((r, fit)) = problem.fit(&start)? {
            fits.push((r, fit, start));
        }
        starts.push(start);
    }
    let simulations: usize = fits.iter().map(|(r, _, _)| r.simulations).sum();
    let mut per_elements: Vec<ElementsFit> = fits
        .iter()
        .flat_map(|(r, _, _)| r.per_elements.iter().cloned())
        .collect();
    per_elements.sort_by_key(|f| f.elements);
    let refinements: Vec<&Refined> = fits.iter().map(|(r, _, _)| r).collect();
    let Some(kept) = kept(&refinements) else {
        return Ok(None);
    };
    let (refined, fit, start) = fits.swap_remove(kept);
    let (problem, refined, fit, reweighing) = match films.len() {
        1 => (problem, refined, fit, 0),
        _ => {
            let (problem, refined, fit) = problem.reweighed(&start, refined, fit)?;
            let simulations = refined.simulations;
            (problem, refined, fit, simulations)
        }
    };
    let tight = tighter(&refined);
    let (problem, mut refined, fit, refitting) = match &tight {
        Some(settings) => Problem {
            settings,
            ..problem
        }
        .refit(&start, refined, &fit)?,
        None => (problem, refined, fit, 0),
    };
    let found = problem.profile(&start, &fit, refined.profile_rise_m2)?;
    for (p, profile) in refined.parameters.iter_mut().zip(found) {
        p.profile = Some(profile);
    }
    Ok(Some(Refined {
        simulations: simulations + reweighing + refitting,
        elements_tried: starts.iter().map(|c| c.elements).collect(),
        every_elements,
        per_elements,
        ..refined
    }))
}

/// `start` (a refined candidate, at its n) fitted again over the grid's
/// varied axes and the films' varied own axes, with no grid search before
/// it: what the films' data say when the run lets go an input it took as
/// known (an axis added to `grid`, or to one film's own). None when no
/// axis varies.
pub fn refit(
    grid: &Grid,
    start: &Candidate,
    films: &[RefineFilm<'_>],
    base: &TetherParams,
    settings: &SolverSettings,
) -> Result<Option<Refined>, SolverError> {
    let problem = Problem {
        grid,
        films,
        weights: films.iter().map(|f| f.weight).collect(),
        base,
        settings,
    };
    Ok(problem.fit(start)?.map(|(r, _)| r))
}

/// The grid points a refinement starts from: the grid's best, then every
/// other n's best where at most [`MAX_EVERY_ELEMENTS`] n have one (and
/// whether that is so), else those within the confidence threshold and
/// the finest n's.
fn starts(summary: &super::Summary) -> (Vec<Candidate>, bool) {
    let threshold = summary.confidence.threshold_m2;
    let scored = || {
        summary
            .best_per_elements
            .iter()
            .filter(|r| r.j_e_m2.is_some())
    };
    let finest = scored()
        .max_by_key(|r| r.candidate.elements)
        .map(|r| r.candidate);
    let every_offered = scored().count() <= MAX_EVERY_ELEMENTS;
    let mut starts = vec![summary.best.candidate];
    starts.extend(
        scored()
            .filter(|r| r.candidate != summary.best.candidate)
            .filter(|r| {
                every_offered
                    || r.j_e_m2.is_some_and(|j| j <= threshold)
                    || Some(r.candidate) == finest
            })
            .map(|r| r.candidate),
    );
    (starts, every_offered)
}

/// Whether the grid is too coarse to rank n: its best J_e lies more than
/// the confidence region's rise (σ² χ²₂) above the lowest refined J_e, so
/// its steps in some axis (often a release axis) inflate every n's grid
/// J_e by more than the data can tell n apart, and an n the threshold
/// left out may refine lower than the n it kept. Then every n's grid best
/// is refined, and the refined J_e ranks them.
pub fn grid_too_coarse_to_rank_n(summary: &super::Summary, lowest_refined_m2: f64) -> bool {
    let Some(grid_best_m2) = summary.best.j_e_m2 else {
        return false;
    };
    let rise_m2 = summary.confidence.threshold_m2 - grid_best_m2;
    grid_best_m2 - lowest_refined_m2 > rise_m2
}

/// Which refinement to keep: the finest n whose refined J_e the data
/// cannot tell from the lowest (within the lowest's one-parameter rise,
/// σ² χ²₁). A finer mesh is nearer the continuum, and a coarser one that
/// fits as well does so by the noise's chance, its discretization error
/// absorbed into the parameters.
fn kept(refinements: &[&Refined]) -> Option<usize> {
    let lowest = refinements
        .iter()
        .min_by(|a, b| a.j_e_m2.total_cmp(&b.j_e_m2))?;
    let indistinct = lowest.j_e_m2 + lowest.profile_rise_m2;
    refinements
        .iter()
        .enumerate()
        .filter(|(_, r)| r.j_e_m2 <= indistinct)
        .max_by_key(|(_, r)| r.elements)
        .map(|(i, _)| i)
}

/// One film a refinement fits.
#[derive(Clone)]
pub struct RefineFilm<'a> {
    /// Its name in a joint identification; None for a single film.
    pub name: Option<&'a str>,
    pub measured: &'a MeasuredTrack,
    pub scenario: &'a Scenario,
    /// Its weight in the joint J_e to start from (`sweep::joint::FilmWeight`;
    /// the refinement reweighs from its own residuals); 1 alone.
    pub weight: f64,
    /// Its own axes (each refined where it varies), and its best own values
    /// at each shared candidate, in the grid's order (`sweep::joint`);
    /// both empty for a single film.
    pub own: &'a [AxisValues],
    pub scores: &'a [FilmScore],
    /// Its own values to start from where the shared start is no grid
    /// point (a refit from a refined optimum); None: its best at the
    /// shared start's grid point.
    pub start: Option<Candidate>,
}

impl<'a> RefineFilm<'a> {
    /// The only film of an identification.
    pub fn single(measured: &'a MeasuredTrack, scenario: &'a Scenario) -> Self {
        Self {
            name: None,
            measured,
            scenario,
            weight: 1.0,
            own: &[],
            scores: &[],
            start: None,
        }
    }
}

/// A joint refinement's weights are settled when none moves by more than
/// this fraction between passes.
pub const REWEIGHING_TOLERANCE: f64 = 0.01;
/// Passes of reweighing at most (each a refit from the last values).
const MAX_REWEIGHINGS: usize = 4;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A refinement of the drop's D and C_D over `per_elements`, the n
    /// offered those refined (text tests use it too).
    pub(crate) fn refined(per_elements: Vec<ElementsFit>) -> Refined {
        let parameter = |axis, value, standard_error| RefinedParameter {
            parameter: axis,
            film: None,
            value,
            standard_error,
            robust_standard_error: None,
            grid_best: value,
            at_bound: false,
            profile: None,
        };
        Refined {
            elements: 50,
            elements_tried: per_elements.iter().map(|f| f.elements).collect(),
            elements_offered: per_elements.iter().map(|f| f.elements).collect(),
            every_elements: false,
            robust_lags: 1,
            parameters: vec![
                parameter(Axis::Damping, 2000.0, 500.0),
                parameter(Axis::Drag, 0.8, 1e-3),
            ],
            j_e_m2: 1e-4,
            observations: 100,
            sigma_m: 1e-3,
            covariance: vec![vec![0.0; 2]; 2],
            correlation: None,
            iterations: 3,
            simulations: 30,
            undetermined: None,
            per_elements,
            confidence_level: 0.95,
            profile_rise_m2: 3.84e-6,
            films: Vec::new(),
        }
    }

    #[test]
    fn a_grid_is_too_coarse_to_rank_n_when_a_refinement_drops_past_the_regions_rise() {
        use crate::sweep::{CandidateResult, Grid, summarize};
        let grid = Grid::parse("10", "0:1000:100", "0.6:0.9:0.1").unwrap();
        let results: Vec<CandidateResult> = grid
            .candidates()
            .into_iter()
            .map(|c| CandidateResult {
                candidate: c,
                j_e_m2: Some(1.0 + ((c.damping_pa_s - 500.0) / 100.0).powi(2) * 0.004),
                status: crate::status::RunStatus::Ok,
                step_s: None,
                steps: 1,
                gpu_layout: None,
                tolerance_m: None,
                implicit_method: None,
            })
            .collect();
        let summary = summarize(&grid, &results, 1002).unwrap();
        let best = summary.best.j_e_m2.unwrap();
        let rise = summary.confidence.threshold_m2 - best;
        assert!(rise > 0.0);
        // A refinement below the grid's best by less than the rise: the
        // grid ranks n; by more: it cannot.
        assert!(!grid_too_coarse_to_rank_n(&summary, best - 0.9 * rise));
        assert!(grid_too_coarse_to_rank_n(&summary, best - 1.1 * rise));
        assert!(!grid_too_coarse_to_rank_n(&summary, best));
    }

    #[test]
    fn a_parameter_that_moves_more_than_its_error_between_meshes_is_named() {
        let fit = |elements, damping, drag| ElementsFit {
            elements,
            j_e_m2: 1e-4,
            values: vec![damping, drag],
        };
        // From the kept n = 50 to the next coarser, 40: D moves 0.4 SE
        // (within its error), C_D 1.5 SE: C_D is named, with its n. n = 30
        // (C_D 3 SE off) is not the mesh's last step.
        let r = refined(vec![
            fit(30, 2400.0, 0.803),
            fit(40, 1800.0, 0.8015),
            fit(50, 2000.0, 0.8),
        ]);
        let moves = r.mesh_moves();
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!(moves[0].parameter, Axis::Drag.column());
        assert_eq!(moves[0].elements, 40);
        assert!((moves[0].standard_errors - 1.5).abs() < 1e-9);
        // Kept between two: both neighbours count, the larger move named.
        let mut between = refined(vec![
            fit(30, 2000.0, 0.803),
            fit(40, 2000.0, 0.8),
            fit(50, 2000.0, 0.8012),
        ]);
        between.elements = 40;
        let moves = between.mesh_moves();
        assert_eq!((moves.len(), moves[0].elements), (1, 30), "{moves:?}");
        // One n refined: nothing to compare.
        assert!(refined(vec![fit(50, 2000.0, 0.8)]).mesh_moves().is_empty());
    }

    #[test]
    fn the_n_that_fit_alike_join_their_intervals_and_the_lowest_names_an_edge() {
        let fit = |elements, j_e_m2, damping, drag| ElementsFit {
            elements,
            j_e_m2,
            values: vec![damping, drag],
        };
        // n = 40 and 50 alike (within the rise), n = 30 not: the spans join
        // 40's and 50's intervals (kept SE 500 and 1e-3, 1.96 of each).
        let mut r = refined(vec![
            fit(30, 1.1e-4, 2400.0, 0.803),
            fit(40, 1e-4 + 1e-6, 1800.0, 0.8015),
            fit(50, 1e-4, 2000.0, 0.8),
        ]);
        r.profile_rise_m2 = 3.84e-6;
        r.elements_offered = vec![30, 40, 50];
        let spans = r.mesh_spans();
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].elements, [40, 50]);
        let z = chi2_quantile(1, r.confidence_level).sqrt();
        assert!(
            (spans[0].lower - (1800.0 - z * 500.0)).abs() < 1e-9,
            "{spans:?}"
        );
        assert!(
            (spans[0].upper - (2000.0 + z * 500.0)).abs() < 1e-9,
            "{spans:?}"
        );
        assert!(
            (spans[1].upper - (0.8015 + z * 1e-3)).abs() < 1e-12,
            "{spans:?}"
        );
        assert_eq!(r.mesh_edge(), Some((MeshEdge::Finest, 50)));
        // The lowest at the coarsest n offered; one n alike: no span.
        r.per_elements[0].j_e_m2 = 0.5e-4;
        assert_eq!(r.mesh_edge(), Some((MeshEdge::Coarsest, 30)));
        assert!(r.mesh_spans().is_empty());
        // Between: no edge.
        r.per_elements[1].j_e_m2 = 0.4e-4;
        assert_eq!(r.mesh_edge(), None);
    }

    #[test]
    fn the_finest_n_that_fits_as_well_as_the_lowest_is_kept() {
        let at = |elements, j_e_m2| Refined {
            elements,
            j_e_m2,
            ..refined(vec![])
        };
        // Rise 3.84e-6: n = 12 is within it of n = 6's lowest J_e, n = 24
        // is not.
        let (coarse, fine, finer) = (at(6, 1e-4), at(12, 1e-4 + 3e-6), at(24, 1e-4 + 5e-6));
        assert_eq!(kept(&[&coarse, &fine]), Some(1));
        assert_eq!(kept(&[&coarse, &fine, &finer]), Some(1));
        assert_eq!(kept(&[&finer, &coarse]), Some(1));
        assert_eq!(kept(&[]), None);
    }

    #[test]
    fn a_profile_far_from_the_gauss_newton_interval_is_named() {
        let profile = |lower, upper| Profile {
            lower,
            upper,
            points: Vec::new(),
            below_fit: None,
            evaluations: 0,
        };
        let crossed = |value| ProfileEnd::Crossed { value };
        let mut r = refined(vec![]);
        // D = 2000 ± 500: Gauss–Newton ends 2000 ± 980. Its profile's lower
        // side is as wide, its upper side 3× wider; C_D's profile ends on
        // a bound inside the Gauss–Newton interval (the bound clips it: no
        // disagreement about the shape) and crosses a tenth as far above.
        r.parameters[0].profile = Some(profile(crossed(1100.0), crossed(2000.0 + 3.0 * 980.0)));
        r.parameters[1].profile = Some(profile(
            ProfileEnd::Bound { value: 0.7995 },
            crossed(0.8 + 0.1 * 1.96e-3),
        ));
        let found = r.interval_disagreements();
        let named: Vec<(&str, &str)> = found
            .iter()
            .map(|d| (d.parameter.as_str(), d.side))
            .collect();
        assert_eq!(
            named,
            [
                (Axis::Damping.column(), "upper"),
                (Axis::Drag.column(), "upper")
            ]
        );
        assert!((found[0].ratio - 3.0).abs() < 0.01, "{}", found[0].ratio);
        assert!((found[1].ratio - 0.1).abs() < 0.001, "{}", found[1].ratio);
        // A bound beyond twice the Gauss–Newton reach is wider.
        r.parameters[1].profile = Some(profile(ProfileEnd::Bound { value: 0.7 }, crossed(0.80196)));
        assert_eq!(r.interval_disagreements()[1].side, "lower");
    }
}
