//! Bounded nonlinear least squares: Levenberg–Marquardt over any residual
//! function of a few parameters, the Jacobian by central differences (each
//! column's two evaluations run in parallel), and the Gauss–Newton
//! covariance σ² (JᵀJ)⁻¹ at the optimum; and profile-likelihood intervals
//! ([`profile`]).
//!
//! Written here rather than taken from the `levenberg-marquardt` crate: its
//! releases build on other nalgebra versions than this crate's, and a few
//! parameters need a small dense solve, not a general trust-region code.

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

pub mod profile;

/// How the iteration moves and when it stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LmSettings {
    /// Jacobian evaluations at most (each an iteration).
    pub max_iterations: usize,
    /// Damped steps tried per iteration before giving up on it.
    pub max_tries: usize,
    /// λ at the start, relative to JᵀJ's diagonal (Marquardt's scaling).
    pub initial_lambda: f64,
    /// λ is divided by this after an accepted step …
    pub lambda_decrease: f64,
    /// … multiplied by this after a rejected one …
    pub lambda_increase: f64,
    /// … and by this when the damped system cannot be solved.
    pub lambda_singular_increase: f64,
    /// λ never falls below this: a pure Gauss–Newton step overshoots on a
    /// curved valley.
    pub lambda_min: f64,
    /// Difference step of each parameter, as a fraction of its bounds'
    /// width: far above a solver's error in what it moves, far below the
    /// scale the cost curves on.
    pub difference_step: f64,
    /// An accepted step that moves every parameter by less than this
    /// fraction of its difference step …
    pub min_move: f64,
    /// … or lowers the cost by less than this fraction ends the iteration.
    pub min_gain: f64,
    /// JᵀJ scaled to a unit diagonal is singular when its smallest
    /// eigenvalue is at most this fraction of its largest.
    pub singular_ratio: f64,
}

impl LmSettings {
    /// The identification's: thirty iterations are far more than a fit of
    /// a few parameters from a grid's best point takes (four on the shipped
    /// drop, as `identify` prints).
    pub const DEFAULT: LmSettings = LmSettings {
        max_iterations: 30,
        max_tries: 8,
        initial_lambda: 1e-3,
        lambda_decrease: 3.0,
        lambda_increase: 4.0,
        lambda_singular_increase: 10.0,
        lambda_min: 1e-9,
        difference_step: 1e-2,
        min_move: 1e-3,
        min_gain: 1e-9,
        singular_ratio: 1e-10,
    };
}

impl Default for LmSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub values: Vec<f64>,
    /// Σ r² at `values`.
    pub cost: f64,
    /// Residuals at `values`.
    pub observations: usize,
    /// cost / (observations − parameters).
    pub sigma2: f64,
    /// σ² (JᵀJ)⁻¹; None when JᵀJ is singular.
    pub covariance: Option<DMatrix<f64>>,
    /// The scaled JᵀJ's smallest and largest eigenvalues, when it is
    /// singular (a direction the residuals do not determine).
    pub singular: Option<(f64, f64)>,
    /// Each value on one of its bounds.
    pub at_bound: Vec<bool>,
    pub iterations: usize,
    /// Residual evaluations.
    pub evaluations: usize,
    /// J's columns and r at `values`, for covariances other than the
    /// Gauss–Newton one ([`newey_west`]).
    pub jacobian: Vec<Vec<f64>>,
    pub residuals: Vec<f64>,
}

/// The minimum the iteration reached, without the covariance.
#[derive(Debug, Clone, PartialEq)]
pub struct Minimum {
    pub values: Vec<f64>,
    /// Σ r² at `values`.
    pub cost: f64,
    /// r at `values`.
    pub residuals: Vec<f64>,
    pub iterations: usize,
    /// Residual evaluations.
    pub evaluations: usize,
}

/// Minimizes Σ r(p)² over `bounds` from `start` (inside them), with the
/// Gauss–Newton covariance at the minimum.
pub fn levenberg_marquardt<E: Send>(
    residuals: impl Fn(&[f64]) -> Result<Vec<f64>, E> + Sync,
    start: &[f64],
    bounds: &[(f64, f64)],
    settings: &LmSettings,
) -> Result<Fit, E> {
    let m = minimize(&residuals, start, bounds, settings)?;
    let k = start.len();
    let columns = central_differences(&residuals, &m.values, bounds, &steps(bounds, settings))?;
    let (jtj, _) = normal_equations(&columns, &m.residuals);
    let observations = m.residuals.len();
    let sigma2 = m.cost / (observations.saturating_sub(k).max(1)) as f64;
    let (covariance, singular) = covariance(&jtj, sigma2, settings.singular_ratio);
    let at_bound = on_bounds(&m.values, bounds);
    Ok(Fit {
        values: m.values,
        cost: m.cost,
        observations,
        sigma2,
        covariance,
        singular,
        at_bound,
        iterations: m.iterations,
        evaluations: m.evaluations + 2 * k,
        jacobian: columns,
        residuals: m.residuals,
    })
}

/// The values' covariance robust to residuals correlated within a block
/// (a frame's markers) and between blocks up to `lags` apart (neighbouring
/// frames): Newey–West's (JᵀJ)⁻¹ S (JᵀJ)⁻¹, S = Σ_t g_t g_tᵀ + Σ_{l=1..L}
/// (1 − l/(L+1)) Σ_t (g_t g_{t−l}ᵀ + g_{t−l} g_tᵀ), g_t = Σ J_iᵀ r_i over
/// block t's rows. With white residuals it is σ² (JᵀJ)⁻¹ on average; a
/// misfit smooth in time makes neighbouring g_t alike and widens it.
/// `blocks[i]`: row i's block, in order. None when JᵀJ is singular or the
/// rows do not match.
pub fn newey_west(
    columns: &[Vec<f64>],
    residuals: &[f64],
    blocks: &[usize],
    lags: usize,
) -> Option<DMatrix<f64>> {
    let k = columns.len();
    if columns.iter().any(|c| c.len() != residuals.len()) || blocks.len() != residuals.len() {
        return None;
    }
    let count = blocks.iter().max().map_or(0, |b| b + 1);
    let mut g = vec![DVector::<f64>::zeros(k); count];
    for (i, (&b, &r)) in blocks.iter().zip(residuals).enumerate() {
        for (a, column) in columns.iter().enumerate() {
            g[b][a] += column[i] * r;
        }
    }
    let mut meat = DMatrix::<f64>::zeros(k, k);
    for t in 0..count {
        meat += &g[t] * g[t].transpose();
        for l in 1..=lags.min(t) {
            let w = 1.0 - l as f64 / (lags + 1) as f64;
            let cross = &g[t] * g[t - l].transpose();
            meat += w * (&cross + cross.transpose());
        }
    }
    let (jtj, _) = normal_equations(columns, residuals);
    let bread = jtj.try_inverse()?;
    Some(&bread * meat * &bread)
}

/// The lag at which the residuals' pooled autocorrelation along their
/// series first falls below `below` (a marker's coordinate from frame to
/// frame: `series[i]` and `blocks[i]` name row i's), searched up to
/// `max_lag`: how many frames a misfit stays alike. 1 for white residuals.
pub fn correlation_length(
    residuals: &[f64],
    series: &[usize],
    blocks: &[usize],
    below: f64,
    max_lag: usize,
) -> usize {
    use std::collections::HashMap;
    let at: HashMap<(usize, usize), f64> = series
        .iter()
        .zip(blocks)
        .zip(residuals)
        .map(|((&s, &b), &r)| ((s, b), r))
        .collect();
    let squares: f64 = residuals.iter().map(|r| r * r).sum();
    if squares <= 0.0 {
        return 1;
    }
    for lag in 1..=max_lag.max(1) {
        let products: f64 = series
            .iter()
            .zip(blocks)
            .zip(residuals)
            .filter_map(|((&s, &b), &r)| Some(r * at.get(&(s, b + lag))?))
            .sum();
        if products / squares < below {
            return lag;
        }
    }
    max_lag.max(1)
}

/// Each parameter's difference step: a fraction of its bounds' width.
fn steps(bounds: &[(f64, f64)], settings: &LmSettings) -> Vec<f64> {
    bounds
        .iter()
        .map(|(lo, hi)| settings.difference_step * (hi - lo))
        .collect()
}

/// Minimizes Σ r(p)² over `bounds` from `start` (inside them): the
/// Levenberg–Marquardt iteration alone, for fits that need no covariance
/// (a profile's re-fits, [`profile`]).
pub fn minimize<E: Send>(
    residuals: &(impl Fn(&[f64]) -> Result<Vec<f64>, E> + Sync),
    start: &[f64],
    bounds: &[(f64, f64)],
    settings: &LmSettings,
) -> Result<Minimum, E> {
    let k = start.len();
    let steps = steps(bounds, settings);
    let clamp = |p: &[f64]| -> Vec<f64> {
        p.iter()
            .zip(bounds)
            .map(|(v, (lo, hi))| v.clamp(*lo, *hi))
            .collect()
    };
    let mut evaluations = 0usize;
    let cost = |r: &[f64]| r.iter().map(|x| x * x).sum::<f64>();

    let mut p = start.to_vec();
    let mut r = residuals(&p)?;
    evaluations += 1;
    let mut j_p = cost(&r);
    let mut lambda = settings.initial_lambda;
    let mut iterations = 0;
    for _ in 0..settings.max_iterations {
        iterations += 1;
        let columns = central_differences(residuals, &p, bounds, &steps)?;
        evaluations += 2 * k;
        let (jtj, jtr) = normal_equations(&columns, &r);
        let mut improved = false;
        for _ in 0..settings.max_tries {
            let mut damped = jtj.clone();
            for d in 0..k {
                damped[(d, d)] += lambda * jtj[(d, d)].max(f64::MIN_POSITIVE);
            }
            // The step of r(p + δ) ≈ r + J δ toward zero: J δ = −r.
            let Some(delta) = damped.lu().solve(&(-&jtr)) else {
                lambda *= settings.lambda_singular_increase;
                continue;
            };
            let trial = clamp(
                &p.iter()
                    .zip(delta.iter())
                    .map(|(a, b)| a + b)
                    .collect::<Vec<_>>(),
            );
            let r_trial = residuals(&trial)?;
            evaluations += 1;
            let j_trial = cost(&r_trial);
            if j_trial < j_p {
                let moved = trial
                    .iter()
                    .zip(&p)
                    .zip(&steps)
                    .any(|((a, b), h)| (a - b).abs() > settings.min_move * h);
                let gain = (j_p - j_trial) / j_p.max(f64::MIN_POSITIVE);
                p = trial;
                r = r_trial;
                j_p = j_trial;
                lambda = (lambda / settings.lambda_decrease).max(settings.lambda_min);
                improved = moved && gain > settings.min_gain;
                break;
            }
            lambda *= settings.lambda_increase;
        }
        if !improved {
            break;
        }
    }
    Ok(Minimum {
        values: p,
        cost: j_p,
        residuals: r,
        iterations,
        evaluations,
    })
}

/// J's columns by central differences: r at p ± h e_i (one-sided at a
/// bound), each column's pair evaluated in parallel.
fn central_differences<E: Send>(
    residuals: &(impl Fn(&[f64]) -> Result<Vec<f64>, E> + Sync),
    p: &[f64],
    bounds: &[(f64, f64)],
    steps: &[f64],
) -> Result<Vec<Vec<f64>>, E> {
    (0..p.len())
        .into_par_iter()
        .map(|i| {
            let mut up = p.to_vec();
            let mut down = p.to_vec();
            up[i] = (p[i] + steps[i]).min(bounds[i].1);
            down[i] = (p[i] - steps[i]).max(bounds[i].0);
            let (ru, rd) = (residuals(&up)?, residuals(&down)?);
            let width = up[i] - down[i];
            Ok(ru.iter().zip(&rd).map(|(a, b)| (a - b) / width).collect())
        })
        .collect()
}

/// Each value on one of its bounds (to a billionth of their width).
fn on_bounds(p: &[f64], bounds: &[(f64, f64)]) -> Vec<bool> {
    p.iter()
        .zip(bounds)
        .map(|(v, (lo, hi))| (v - lo).abs() < 1e-9 * (hi - lo) || (hi - v).abs() < 1e-9 * (hi - lo))
        .collect()
}

/// JᵀJ and Jᵀr from J's columns.
fn normal_equations(columns: &[Vec<f64>], r: &[f64]) -> (DMatrix<f64>, DVector<f64>) {
    let k = columns.len();
    let jtj = DMatrix::from_fn(k, k, |a, b| {
        columns[a]
            .iter()
            .zip(&columns[b])
            .map(|(x, y)| x * y)
            .sum::<f64>()
    });
    let jtr = DVector::from_fn(k, |a, _| {
        columns[a].iter().zip(r).map(|(x, y)| x * y).sum::<f64>()
    });
    (jtj, jtr)
}

/// σ² (JᵀJ)⁻¹, or the eigenvalues that make it singular. Singular is
/// judged on JᵀJ scaled to unit diagonal (the columns' correlation
/// matrix): parameters' units may differ by orders of magnitude (D in Pa·s
/// moves a marker by ~1e-7 m per unit, a release time by ~1 m per second),
/// and only collinearity, or a column of zeros, leaves a direction
/// undetermined.
pub fn covariance(
    jtj: &DMatrix<f64>,
    sigma2: f64,
    singular_ratio: f64,
) -> (Option<DMatrix<f64>>, Option<(f64, f64)>) {
    let k = jtj.nrows();
    let scale: Vec<f64> = (0..k).map(|i| jtj[(i, i)].sqrt()).collect();
    let scaled = DMatrix::from_fn(k, k, |a, b| jtj[(a, b)] / (scale[a] * scale[b]));
    let eigen = scaled.clone().symmetric_eigen().eigenvalues;
    let (small, large) = eigen
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(s, l), &e| (s.min(e), l.max(e)));
    // NaN eigenvalues (a zero column, a broken Jacobian) count as singular.
    if small.is_nan() || small <= singular_ratio * large {
        return (None, Some((small, large)));
    }
    let covariance = scaled
        .try_inverse()
        .map(|inv| DMatrix::from_fn(k, k, |a, b| sigma2 * inv[(a, b)] / (scale[a] * scale[b])));
    (covariance, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straight line through noise along 400 frames: Newey–West's
    /// variance of the intercept is the Gauss–Newton one for white noise,
    /// and many times it for noise correlated from frame to frame (AR(1),
    /// φ = 0.9: the long-run variance is (1 + φ)/(1 − φ) = 19 times).
    #[test]
    fn newey_west_matches_white_noise_and_widens_for_correlated() {
        use rand::SeedableRng;
        use rand_distr::{Distribution, Normal};
        let frames = 400;
        let t: Vec<f64> = (0..frames).map(|i| i as f64 / frames as f64).collect();
        let columns = vec![vec![1.0; frames], t.clone()];
        let blocks: Vec<usize> = (0..frames).collect();
        let series = vec![0; frames];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let normal = Normal::new(0.0, 1.0).unwrap();
        let white: Vec<f64> = (0..frames).map(|_| normal.sample(&mut rng)).collect();
        let mut correlated = vec![0.0; frames];
        for i in 1..frames {
            correlated[i] = 0.9 * correlated[i - 1] + normal.sample(&mut rng);
        }
        let gauss_newton = |r: &[f64]| {
            let sigma2 = r.iter().map(|x| x * x).sum::<f64>() / (frames - 2) as f64;
            let (jtj, _) = normal_equations(&columns, r);
            sigma2 * jtj.try_inverse().unwrap()[(0, 0)]
        };
        let lags = correlation_length(&white, &series, &blocks, 0.1, 100);
        assert_eq!(lags, 1);
        let robust = newey_west(&columns, &white, &blocks, lags).unwrap()[(0, 0)];
        let ratio = robust / gauss_newton(&white);
        assert!((0.7..1.3).contains(&ratio), "{ratio}");
        let lags = correlation_length(&correlated, &series, &blocks, 0.1, 100);
        assert!(lags > 10, "{lags}");
        let robust = newey_west(&columns, &correlated, &blocks, lags).unwrap()[(0, 0)];
        let ratio = robust / gauss_newton(&correlated);
        assert!(ratio > 5.0, "{ratio}");
        // Rows that do not match the blocks: none.
        assert!(newey_west(&columns, &white, &blocks[1..], 1).is_none());
    }

    /// A straight line through noisy points: the fit is the linear least
    /// squares answer, and its covariance σ² (XᵀX)⁻¹.
    #[test]
    fn a_line_is_fitted_as_linear_least_squares_fits_it() {
        let x: Vec<f64> = (0..20).map(|i| i as f64 * 0.5).collect();
        let noise = |i: usize| ((i * 7919) % 13) as f64 / 13.0 - 0.5;
        let y: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, &x)| 2.0 + 3.0 * x + 0.1 * noise(i))
            .collect();
        let residuals = |p: &[f64]| -> Result<Vec<f64>, ()> {
            Ok(x.iter().zip(&y).map(|(x, y)| y - p[0] - p[1] * x).collect())
        };
        let fit = levenberg_marquardt(
            residuals,
            &[0.0, 0.0],
            &[(-10.0, 10.0), (-10.0, 10.0)],
            &LmSettings::DEFAULT,
        )
        .unwrap();
        let design = DMatrix::from_fn(x.len(), 2, |i, j| if j == 0 { 1.0 } else { x[i] });
        let xtx = design.transpose() * &design;
        let exact =
            xtx.clone().try_inverse().unwrap() * design.transpose() * DVector::from_vec(y.clone());
        assert!((fit.values[0] - exact[0]).abs() < 1e-6, "{:?}", fit.values);
        assert!((fit.values[1] - exact[1]).abs() < 1e-6, "{:?}", fit.values);
        let covariance = xtx.try_inverse().unwrap() * fit.sigma2;
        let got = fit.covariance.unwrap();
        for (a, b) in got.iter().zip(covariance.iter()) {
            assert!((a / b - 1.0).abs() < 1e-6, "{got} against {covariance}");
        }
        assert_eq!(fit.at_bound, vec![false, false]);
    }

    /// An optimum beyond a bound stops on it, and two parameters that only
    /// act as their sum are singular.
    #[test]
    fn bounds_hold_and_collinear_parameters_are_singular() {
        let bounded = levenberg_marquardt(
            |p: &[f64]| -> Result<Vec<f64>, ()> { Ok(vec![p[0] - 5.0]) },
            &[0.0],
            &[(-1.0, 1.0)],
            &LmSettings::DEFAULT,
        )
        .unwrap();
        assert_eq!(bounded.values, vec![1.0]);
        assert_eq!(bounded.at_bound, vec![true]);
        let collinear = levenberg_marquardt(
            |p: &[f64]| -> Result<Vec<f64>, ()> {
                Ok((0..5).map(|i| i as f64 * (p[0] + p[1]) - 1.0).collect())
            },
            &[0.1, 0.1],
            &[(-1.0, 1.0), (-1.0, 1.0)],
            &LmSettings::DEFAULT,
        )
        .unwrap();
        assert!(collinear.singular.is_some() && collinear.covariance.is_none());
    }
}
