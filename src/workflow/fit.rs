//! Does the fit explain the data? The tests a finished fit meets before a
//! run exits 0: its misfit against the tether's length (plainly not this
//! experiment) and against the film's own noise and along its frames
//! ([`GoodnessOfFit`], [`crate::misfit`]), and the samples far beyond that
//! noise ([`find_outliers`]).

use std::path::Path;

use serde::Serialize;

use super::WorkflowError;
use super::film::Plausibility;
use crate::camera::Camera;
use crate::io::results::BestFit;
use crate::metadata::{self, Metadata, json};
use crate::misfit::GoodnessOfFit;
use crate::misfit::Residuals;
use crate::model::TetherParams;
use crate::sweep::joint::FilmWeight;
use crate::sweep::refine::Refined;
use crate::sweep::{Axis, Grid, Summary};
use crate::track::NoiseEstimate;

/// Why the best fit is no fit of this experiment, when it misses the data
/// by more than [`Plausibility::FIT_WARNING`] of the tether's length (RMS
/// a coordinate).
pub fn fit_warning(
    summary: &Summary,
    refined: Option<&Refined>,
    base: &TetherParams,
) -> Option<String> {
    let length_m = best_length_m(summary, base);
    let sigma = fit_sigma_m(summary, refined);
    (sigma > Plausibility::FIT_WARNING * length_m).then(|| {
        format!(
            "the best candidate misses the data by σ ≈ {sigma:.4} m RMS a coordinate, more than {} % of the tether's {length_m} m: the data may not be this experiment (units, axes, length, release, markers)",
            100.0 * Plausibility::FIT_WARNING
        )
    })
}

/// The best candidate's own length where the grid sweeps it \[m\].
pub(super) fn best_length_m(summary: &Summary, base: &TetherParams) -> f64 {
    summary
        .best
        .candidate
        .value(Axis::Parameter(crate::sweep::Parameter::LengthM))
        .unwrap_or(base.length_m)
}

/// The fit's noise level σ of one coordinate \[m\]: the refined optimum's
/// where there is one, else the grid best's.
pub fn fit_sigma_m(summary: &Summary, refined: Option<&Refined>) -> f64 {
    refined.map_or(summary.confidence.sigma2_m2.sqrt(), |r| r.sigma_m)
}

/// The fit's compared coordinates N and fitted parameters p: the
/// refinement's, else the grid best's (every axis with more than one
/// value).
pub fn fit_counts(grid: &Grid, refined: Option<&Refined>, observations: usize) -> (usize, usize) {
    match refined {
        Some(r) => (r.observations, r.parameters.len()),
        None => (
            observations,
            grid.parameter_axes()
                .iter()
                .filter(|a| a.values.len() > 1)
                .count(),
        ),
    }
}

/// A best fit's residuals for the whiteness test: the refined track's,
/// which is an optimum; None without one (the grid best's residuals hold
/// the grid's own step from the optimum).
pub fn optimum_residuals(fit: &BestFit) -> Option<Vec<[f64; 2]>> {
    let refined = fit.refined_m.as_ref()?;
    Some(
        fit.measured_m
            .iter()
            .zip(refined)
            .map(|(m, f)| [m[0] - f[0], m[1] - f[1]])
            .collect(),
    )
}

/// One film's goodness-of-fit test ([`GoodnessOfFit`]), its σ
/// `fit_sigma_m` over the counts `(N, p)`, its residuals from `fit`.
pub fn test_film(
    fit_sigma_m: f64,
    (observations, parameters): (usize, usize),
    noise: NoiseEstimate,
    fit: &BestFit,
) -> GoodnessOfFit {
    let residuals = optimum_residuals(fit);
    GoodnessOfFit::test(
        fit_sigma_m,
        observations,
        parameters,
        noise,
        residuals.as_deref().map(|r| Residuals {
            times_s: &fit.times_s,
            markers: &fit.markers,
            residuals_m: r,
        }),
    )
}

/// The goodness-of-fit test of a single film's best `fit` and the run's
/// warning (the 5 %-of-length rule first, plainly not the experiment,
/// then the fit against the noise), recorded in `metadata`.
pub fn judge_fit(
    metadata: &mut Metadata,
    summary: &Summary,
    refined: Option<&Refined>,
    counts: (usize, usize),
    noise: Option<NoiseEstimate>,
    base: &TetherParams,
    fit: &BestFit,
) -> (Option<GoodnessOfFit>, Option<String>) {
    let goodness = noise.map(|noise| test_film(fit_sigma_m(summary, refined), counts, noise, fit));
    let warning = fit_warning(summary, refined, base)
        .or_else(|| goodness.as_ref().and_then(GoodnessOfFit::warning));
    record_judgement(metadata, goodness.as_ref(), warning.as_ref());
    (goodness, warning)
}

/// Records the test (a single film's, or a joint run's list of films')
/// and the warning in the tables' metadata.
pub fn record_judgement<T: serde::Serialize>(
    metadata: &mut Metadata,
    goodness: Option<&T>,
    warning: Option<&String>,
) {
    if let Some(g) = goodness {
        metadata.insert(metadata::GOODNESS_OF_FIT.into(), json(g));
    }
    if let Some(w) = warning {
        metadata.insert(metadata::PLAUSIBILITY.into(), w.clone());
    }
}

/// The error a run ends with when `fit_warning` is set and not allowed:
/// exit code 4, the results in `out` kept and marked.
pub fn implausible(
    fit_warning: Option<&String>,
    allowed: bool,
    out: &Path,
) -> Result<(), WorkflowError> {
    match fit_warning {
        Some(warning) if !allowed => Err(WorkflowError::Implausible(format!(
            "implausible: {warning}. The results are written to {} and marked so in their metadata ({}); --allow-implausible accepts them",
            out.display(),
            metadata::PLAUSIBILITY
        ))),
        _ => Ok(()),
    }
}

/// A measured sample far from the best fit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outlier {
    /// On the file's clock \[s\], and in the model's marker numbering.
    pub time_s: f64,
    pub marker: usize,
    /// As the file writes them (`[camera] time_unit` and `first_marker`),
    /// to find the sample in the tracker.
    pub t_file: f64,
    pub marker_file: usize,
    /// Its distance from the fit \[m\].
    pub distance_m: f64,
}

/// How many noise levels σ (of one coordinate) a sample's distance from the
/// best fit may reach before it is listed: Gaussian marker noise exceeds
/// 5σ in distance with probability e^(−12.5) ≈ 4e-6 a sample, so a
/// thousand-sample film lists none by chance, while a tracker's lost-marker
/// code written as a position, or a jump to another marker, stands out.
pub const OUTLIER_SIGMAS: f64 = 5.0;
/// …and at least this fraction of the tether's length: where the data fit
/// to a fraction of a micrometre (a synthetic film without noise), the
/// model's own discretization is not Gaussian and passes 5σ; a lost marker
/// or a jump is millimetres to decimetres.
pub const OUTLIER_FLOOR_OF_LENGTH: f64 = 1e-3;

/// The distance \[m\] beyond which a sample is listed: [`OUTLIER_SIGMAS`] σ
/// and [`OUTLIER_FLOOR_OF_LENGTH`] of the tether's length.
pub fn outlier_limit_m(sigma_m: f64, length_m: f64) -> f64 {
    (OUTLIER_SIGMAS * sigma_m).max(OUTLIER_FLOOR_OF_LENGTH * length_m)
}

/// The samples of `fit` (the refined fit where there is one) farther than
/// `limit_m` from it, farthest first.
pub fn find_outliers(fit: &BestFit, limit_m: f64, camera: &Camera) -> Vec<Outlier> {
    let fitted = fit.refined_m.as_ref().unwrap_or(&fit.fitted_m);
    let mut outliers: Vec<Outlier> = (0..fit.times_s.len())
        .filter_map(|r| {
            let (m, f) = (fit.measured_m[r], fitted[r]);
            let distance_m = (m[0] - f[0]).hypot(m[1] - f[1]);
            (distance_m > limit_m).then_some(Outlier {
                time_s: fit.times_s[r],
                marker: fit.markers[r],
                t_file: camera.file_time(fit.times_s[r]),
                marker_file: fit.markers[r] + camera.first_marker,
                distance_m,
            })
        })
        .collect();
    outliers.sort_by(|a, b| b.distance_m.total_cmp(&a.distance_m));
    outliers
}

/// Why a film's own best fit is no fit of this experiment, when its
/// σ (`sigmas_m`, one a film) is more than [`Plausibility::FIT_WARNING`]
/// of the tether's `length_m`.
pub(super) fn film_fit_warning(
    weights: &[FilmWeight],
    sigmas_m: &[f64],
    length_m: f64,
) -> Option<String> {
    weights
        .iter()
        .zip(sigmas_m)
        .find(|&(_, &sigma_m)| sigma_m > Plausibility::FIT_WARNING * length_m)
        .map(|(w, sigma_m)| {
            format!(
                "film {}'s best candidate misses its data by σ ≈ {sigma_m:.4} m RMS a coordinate, more than {} % of the tether's {length_m} m: that film may not be this experiment (units, axes, length, release, markers)",
                w.name,
                100.0 * Plausibility::FIT_WARNING
            )
        })
}

/// One film's [`GoodnessOfFit`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FilmGoodness {
    pub film: String,
    #[serde(flatten)]
    pub test: GoodnessOfFit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outliers_are_named_as_the_file_has_them() {
        let fit = BestFit {
            times_s: vec![7.5, 7.5, 7.6],
            markers: vec![0, 3, 3],
            measured_m: vec![[0.0, 0.0], [0.2, -0.3], [0.0, 0.0]],
            fitted_m: vec![[0.0, 0.0], [0.0, -0.3], [0.001, 0.0]],
            refined_m: None,
        };
        let camera = Camera {
            time_unit: crate::camera::TimeUnit::Ms,
            first_marker: 1,
            ..Camera::default()
        };
        let outliers = find_outliers(&fit, 0.01, &camera);
        assert_eq!(outliers.len(), 1);
        let o = &outliers[0];
        assert_eq!((o.time_s, o.marker), (7.5, 3));
        assert_eq!((o.t_file, o.marker_file), (7500.0, 4));
        assert!((o.distance_m - 0.2).abs() < 1e-15);
        let plain = find_outliers(&fit, 0.01, &Camera::default());
        assert_eq!((plain[0].t_file, plain[0].marker_file), (7.5, 3));
    }
}
