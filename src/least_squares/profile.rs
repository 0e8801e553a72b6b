//! Profile-likelihood intervals: one parameter held at values on either
//! side of the estimate while the others are re-fitted, until the cost
//! has risen by a given amount (σ² χ²₁ at the confidence level, for a
//! least-squares cost with Gaussian residuals).
//!
//! The Gauss–Newton interval θ̂ ± √(χ²₁) SE assumes the cost is quadratic
//! in the parameters; where it is not (a weakly determined damping, an
//! estimate near a bound) the profile's ends are asymmetric, and they are
//! what identification tools report (Venzon and Moolgavkar 1988; lmfit's
//! `conf_interval`, pyPESTO, Data2Dynamics).
//!
//! Each side is a root search on h(θ) = √(P(θ) − P(θ̂)) − √rise, P the
//! profile: h is linear in θ where the cost is quadratic, so the first
//! point, the Gauss–Newton prediction, is the end there, and a secant
//! step (regula falsi once bracketed) finds it in a few re-fits
//! elsewhere. Each re-fit starts from the last point's others moved along
//! the covariance's valley (the others' regression on θ).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Fit, LmSettings, minimize};

/// How far each side walks and how closely it places the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileSettings {
    /// Profile points per side at most (each one re-fit of the others).
    pub max_points: usize,
    /// An end is placed where the profile's rise is within this fraction
    /// of the rise sought: near the end the rise grows as 2·rise·δθ/(θ −
    /// θ̂), so 2 % of the rise is 1 % of the interval's half-width.
    pub rise_tolerance: f64,
    /// An extrapolation moves at most this many times the last step.
    pub max_growth: f64,
    /// The re-fits' iteration.
    pub lm: LmSettings,
}

impl ProfileSettings {
    pub const DEFAULT: ProfileSettings = ProfileSettings {
        max_points: 8,
        rise_tolerance: 0.02,
        max_growth: 4.0,
        // A re-fit starts near its minimum: few damped tries are worth
        // making, and a gain of a millionth of the cost is far below the
        // rise tolerance (the rise is ~χ²₁/N of the cost, N the residuals).
        lm: LmSettings {
            max_tries: 4,
            min_gain: 1e-6,
            ..LmSettings::DEFAULT
        },
    };
}

impl Default for ProfileSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One end of a profile interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum ProfileEnd {
    /// The profile rises through the threshold at `value`.
    Crossed { value: f64 },
    /// The profile stays below the threshold up to this bound of the
    /// range searched: the data allow values beyond it.
    Bound { value: f64 },
    /// No end was found: the profile rose too slowly for the points
    /// allowed, or a re-fit failed (`why`); `value` is the farthest
    /// point still below the threshold.
    Unresolved { value: f64, why: String },
}

impl ProfileEnd {
    /// The end's value, when the profile crosses the threshold there.
    pub fn crossed(&self) -> Option<f64> {
        match self {
            ProfileEnd::Crossed { value } => Some(*value),
            _ => None,
        }
    }

    pub fn is_bound(&self) -> bool {
        matches!(self, ProfileEnd::Bound { .. })
    }
}

/// A point of the profile: the parameter held at `value`, the others
/// re-fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfilePoint {
    pub value: f64,
    pub cost: f64,
    /// The re-fitted others, in the fit's order without the held one.
    pub others: Vec<f64>,
}

/// One parameter's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub lower: ProfileEnd,
    pub upper: ProfileEnd,
    /// Every point evaluated, the estimate's included, by value.
    pub points: Vec<ProfilePoint>,
    /// The lowest cost the profile found, when it lies below the fit's by
    /// more than the rise tolerance: the fit had not reached the minimum,
    /// and the interval is measured from the wrong height.
    pub below_fit: Option<f64>,
    /// Residual evaluations.
    pub evaluations: usize,
}

/// The profile of every parameter of `fit`, all sides in parallel.
///
/// `rise`: the cost's rise above `fit.cost` that ends an interval.
/// `recoverable`: whether an evaluation's error only ends that side (a
/// simulation that diverges far from the estimate) rather than the whole
/// profile (bad input, a cancelled run).
pub fn profiles<E: Send + std::fmt::Display>(
    residuals: &(impl Fn(&[f64]) -> Result<Vec<f64>, E> + Sync),
    fit: &Fit,
    bounds: &[(f64, f64)],
    rise: f64,
    recoverable: &(impl Fn(&E) -> bool + Sync),
    settings: &ProfileSettings,
) -> Result<Vec<Profile>, E> {
    let k = fit.values.len();
    let walks: Vec<Walk> = (0..2 * k)
        .into_par_iter()
        .map(|s| {
            let direction = if s % 2 == 0 { -1.0 } else { 1.0 };
            walk(
                residuals,
                fit,
                s / 2,
                direction,
                bounds,
                rise,
                recoverable,
                settings,
            )
        })
        .collect::<Result<_, E>>()?;
    let mut walks = walks.into_iter();
    Ok((0..k)
        .map(|i| {
            let (lower, upper) = (walks.next().expect("2k"), walks.next().expect("2k"));
            let estimate = ProfilePoint {
                value: fit.values[i],
                cost: fit.cost,
                others: others(&fit.values, i),
            };
            let mut points: Vec<ProfilePoint> = lower
                .points
                .into_iter()
                .chain(std::iter::once(estimate))
                .chain(upper.points)
                .collect();
            points.sort_by(|a, b| a.value.total_cmp(&b.value));
            let lowest = points.iter().map(|p| p.cost).fold(f64::INFINITY, f64::min);
            Profile {
                lower: lower.end,
                upper: upper.end,
                below_fit: (lowest < fit.cost - settings.rise_tolerance * rise).then_some(lowest),
                points,
                evaluations: lower.evaluations + upper.evaluations,
            }
        })
        .collect())
}

/// The values without the `i`-th.
fn others(values: &[f64], i: usize) -> Vec<f64> {
    values
        .iter()
        .enumerate()
        .filter(|&(o, _)| o != i)
        .map(|(_, &v)| v)
        .collect()
}

/// One side's walk.
struct Walk {
    end: ProfileEnd,
    points: Vec<ProfilePoint>,
    evaluations: usize,
}

/// A point of the walk with h(θ) = √(P − P̂) − √rise.
#[derive(Clone)]
struct Probe {
    value: f64,
    h: f64,
    others: Vec<f64>,
}

/// Where the line through `a` and `b` (in h) crosses zero.
fn secant_root(a: &Probe, b: &Probe) -> f64 {
    a.value - a.h * (b.value - a.value) / (b.h - a.h)
}

/// The Gauss–Newton distance to the end (a tenth of the range `width`
/// without a covariance), and the others' regression on θ: the valley the
/// re-fits follow.
fn valley(fit: &Fit, i: usize, indices: &[usize], rise: f64, width: f64) -> (f64, Vec<f64>) {
    let variance = fit.covariance.as_ref().map(|c| c[(i, i)]);
    let distance = variance
        .map(f64::sqrt)
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(0.1 * width, |se| (rise / fit.sigma2).sqrt() * se);
    let slope = indices
        .iter()
        .map(|&o| match (&fit.covariance, variance) {
            (Some(c), Some(v)) if v > 0.0 && c[(o, i)].is_finite() => c[(o, i)] / v,
            _ => 0.0,
        })
        .collect();
    (distance, slope)
}

/// The next value after `inside`, a point still below the threshold
/// reached from `previous`: within the bracket when one is known, else an
/// extrapolation toward the crossing no farther than `max_growth` times
/// the last step (a flat profile).
fn next_inside(previous: &Probe, inside: &Probe, outside: Option<&Probe>, max_growth: f64) -> f64 {
    if let Some(out) = outside {
        return secant_root(inside, out);
    }
    let reach = max_growth * (inside.value - previous.value);
    let step = if inside.h > previous.h {
        secant_root(previous, inside) - inside.value
    } else {
        reach
    };
    inside.value
        + if step.abs() > reach.abs() {
            reach
        } else {
            step
        }
}

#[allow(clippy::too_many_arguments)]
fn walk<E: Send + std::fmt::Display>(
    residuals: &(impl Fn(&[f64]) -> Result<Vec<f64>, E> + Sync),
    fit: &Fit,
    i: usize,
    direction: f64,
    bounds: &[(f64, f64)],
    rise: f64,
    recoverable: &(impl Fn(&E) -> bool + Sync),
    settings: &ProfileSettings,
) -> Result<Walk, E> {
    let (lo, hi) = bounds[i];
    let limit = if direction > 0.0 { hi } else { lo };
    let estimate = fit.values[i];
    let mut walk = Walk {
        end: ProfileEnd::Bound { value: limit },
        points: Vec::new(),
        evaluations: 0,
    };
    if (limit - estimate).abs() <= 1e-9 * (hi - lo) {
        return Ok(walk);
    }
    let target = rise.sqrt();
    let indices: Vec<usize> = (0..fit.values.len()).filter(|&o| o != i).collect();
    let (first_distance, slope) = valley(fit, i, &indices, rise, hi - lo);
    let mut inside = Probe {
        value: estimate,
        h: -target,
        others: others(&fit.values, i),
    };
    let mut outside: Option<Probe> = None;
    // The Gauss–Newton end first: the end itself where J_e is quadratic.
    let mut next = estimate + direction * first_distance;
    for _ in 0..settings.max_points {
        let value = next.clamp(lo, hi);
        let refitted = refit(
            residuals,
            i,
            value,
            &indices,
            (&inside, &slope),
            bounds,
            settings,
        );
        let (cost, refitted) = match refitted {
            Ok((cost, refitted, evaluations)) => {
                walk.evaluations += evaluations;
                (cost, refitted)
            }
            Err(e) if recoverable(&e) => {
                walk.end = ProfileEnd::Unresolved {
                    value: inside.value,
                    why: format!("the re-fit at {value} failed: {e}"),
                };
                return Ok(walk);
            }
            Err(e) => return Err(e),
        };
        walk.points.push(ProfilePoint {
            value,
            cost,
            others: refitted.clone(),
        });
        let rose = cost - fit.cost;
        let probe = Probe {
            value,
            h: rose.max(0.0).sqrt() - target,
            others: refitted,
        };
        if (rose - rise).abs() <= settings.rise_tolerance * rise {
            // Close enough to stop; the secant through the last point
            // inside places the end closer still, at no cost.
            walk.end = ProfileEnd::Crossed {
                value: secant_root(&inside, &probe).clamp(lo, hi),
            };
            return Ok(walk);
        }
        if probe.h < 0.0 {
            if value == limit {
                walk.end = ProfileEnd::Bound { value: limit };
                return Ok(walk);
            }
            let previous = std::mem::replace(&mut inside, probe);
            next = next_inside(&previous, &inside, outside.as_ref(), settings.max_growth);
        } else {
            next = secant_root(&inside, &probe);
            outside = Some(probe);
        }
    }
    walk.end = exhausted(&inside, outside.as_ref(), settings.max_points);
    Ok(walk)
}

/// The end of a side whose points ran out: when bracketed, the secant's
/// root between the last two; else not found.
fn exhausted(inside: &Probe, outside: Option<&Probe>, points: usize) -> ProfileEnd {
    match outside {
        Some(out) => ProfileEnd::Crossed {
            value: secant_root(inside, out),
        },
        None => ProfileEnd::Unresolved {
            value: inside.value,
            why: format!("the profile had not risen to the threshold after {points} re-fits"),
        },
    }
}

/// The cost with parameter `i` held at `value` and the others (`indices`)
/// re-fitted, starting from a point's others moved along the valley's
/// `slope`: (cost, the others, evaluations).
fn refit<E: Send>(
    residuals: &(impl Fn(&[f64]) -> Result<Vec<f64>, E> + Sync),
    i: usize,
    value: f64,
    indices: &[usize],
    (from, slope): (&Probe, &[f64]),
    bounds: &[(f64, f64)],
    settings: &ProfileSettings,
) -> Result<(f64, Vec<f64>, usize), E> {
    let start: Vec<f64> = indices
        .iter()
        .zip(&from.others)
        .zip(slope)
        .map(|((&o, &v), &s)| (v + s * (value - from.value)).clamp(bounds[o].0, bounds[o].1))
        .collect();
    let full = |others: &[f64]| {
        let mut p = vec![0.0; indices.len() + 1];
        p[i] = value;
        for (&o, &v) in indices.iter().zip(others) {
            p[o] = v;
        }
        p
    };
    if indices.is_empty() {
        let r = residuals(&full(&[]))?;
        return Ok((r.iter().map(|x| x * x).sum(), Vec::new(), 1));
    }
    let held = |others: &[f64]| residuals(&full(others));
    let sub_bounds: Vec<(f64, f64)> = indices.iter().map(|&o| bounds[o]).collect();
    let m = minimize(&held, &start, &sub_bounds, &settings.lm)?;
    Ok((m.cost, m.values, m.evaluations))
}

#[cfg(test)]
mod tests {
    use super::super::levenberg_marquardt;
    use super::*;

    /// Noisy samples of y = a e^(−b x): a model nonlinear in b.
    fn decay() -> (Vec<f64>, Vec<f64>) {
        let x: Vec<f64> = (0..30).map(|i| i as f64 * 0.2).collect();
        let noise = |i: usize| ((i * 7919) % 17) as f64 / 17.0 - 0.5;
        let y = x
            .iter()
            .enumerate()
            .map(|(i, &x)| 2.0 * (-0.7 * x).exp() + 0.5 * noise(i))
            .collect();
        (x, y)
    }

    /// The profile's value at `b` by brute force: the best `a` for that b
    /// is linear least squares.
    fn brute_profile(x: &[f64], y: &[f64], b: f64) -> f64 {
        let e: Vec<f64> = x.iter().map(|&x| (-b * x).exp()).collect();
        let a =
            e.iter().zip(y).map(|(e, y)| e * y).sum::<f64>() / e.iter().map(|e| e * e).sum::<f64>();
        e.iter().zip(y).map(|(e, y)| (y - a * e).powi(2)).sum()
    }

    /// The crossing of the brute-force profile, by bisection.
    fn brute_end(x: &[f64], y: &[f64], inside: f64, outside: f64, threshold: f64) -> f64 {
        let (mut a, mut b) = (inside, outside);
        for _ in 0..100 {
            let m = 0.5 * (a + b);
            if brute_profile(x, y, m) < threshold {
                a = m;
            } else {
                b = m;
            }
        }
        0.5 * (a + b)
    }

    #[test]
    fn a_nonlinear_models_profile_ends_are_its_brute_force_crossings() {
        let (x, y) = decay();
        let residuals = |p: &[f64]| -> Result<Vec<f64>, String> {
            Ok(x.iter()
                .zip(&y)
                .map(|(&x, &y)| y - p[0] * (-p[1] * x).exp())
                .collect())
        };
        let bounds = [(0.1, 5.0), (0.01, 3.0)];
        let fit =
            levenberg_marquardt(residuals, &[1.0, 1.0], &bounds, &LmSettings::DEFAULT).unwrap();
        // A wide rise (χ²₁ at 99.99 %) makes the profile clearly
        // asymmetric in b.
        let rise = 15.1 * fit.sigma2;
        let found = profiles(
            &residuals,
            &fit,
            &bounds,
            rise,
            &|_: &String| false,
            &ProfileSettings::DEFAULT,
        )
        .unwrap();
        let b = &found[1];
        let threshold = fit.cost + rise;
        let b_hat = fit.values[1];
        let lower = brute_end(&x, &y, b_hat, 0.01, threshold);
        let upper = brute_end(&x, &y, b_hat, 3.0, threshold);
        let (got_lower, got_upper) = (b.lower.crossed().unwrap(), b.upper.crossed().unwrap());
        // Within 1 % of the half-widths (the rise tolerance's promise).
        assert!(
            (got_lower - lower).abs() < 0.01 * (b_hat - lower),
            "{got_lower} vs {lower}"
        );
        assert!(
            (got_upper - upper).abs() < 0.01 * (upper - b_hat),
            "{got_upper} vs {upper}"
        );
        // Asymmetric, as the Gauss–Newton interval cannot be.
        let ratio = (upper - b_hat) / (b_hat - lower);
        assert!((ratio - 1.0).abs() > 0.2, "{ratio}");
        // Every point's re-fitted a is the brute force's best a.
        for p in &b.points {
            assert!(
                (p.cost - brute_profile(&x, &y, p.value)).abs() < 1e-3 * rise,
                "{p:?}"
            );
        }
        assert!(b.below_fit.is_none());
        // A few re-fits per side, not a scan.
        assert!(b.evaluations < 80, "{}", b.evaluations);
    }

    #[test]
    fn a_profile_flat_to_a_bound_ends_on_the_bound_and_a_failure_ends_its_side() {
        // r depends on p[1] only as it does on p[0] (collinear: no
        // covariance), so p[0] absorbs it and its profile stays flat to
        // both bounds.
        let residuals = |p: &[f64]| -> Result<Vec<f64>, String> {
            if p[0] > 1.0 {
                return Err("diverged".into());
            }
            Ok((0..10)
                .map(|i| i as f64 * 0.1 - p[0] + 1e-6 * p[1] + 0.01 * (i % 3) as f64)
                .collect())
        };
        let bounds = [(-3.0, 3.0), (-1.0, 1.0)];
        let fit =
            levenberg_marquardt(residuals, &[0.3, 0.0], &bounds, &LmSettings::DEFAULT).unwrap();
        let rise = 100.0 * fit.sigma2;
        let found = profiles(
            &residuals,
            &fit,
            &bounds,
            rise,
            &|e: &String| e == "diverged",
            &ProfileSettings::DEFAULT,
        )
        .unwrap();
        assert_eq!(found[1].lower, ProfileEnd::Bound { value: -1.0 });
        assert_eq!(found[1].upper, ProfileEnd::Bound { value: 1.0 });
        // p[0]'s upper side reaches the failing region before its rise.
        assert!(
            matches!(found[0].upper, ProfileEnd::Unresolved { ref why, .. } if why.contains("diverged")),
            "{:?}",
            found[0].upper
        );
        assert!(found[0].lower.crossed().is_some(), "{:?}", found[0].lower);
        // An error that is not recoverable ends the profile.
        let fatal = profiles(
            &residuals,
            &fit,
            &bounds,
            rise,
            &|_: &String| false,
            &ProfileSettings::DEFAULT,
        );
        assert_eq!(fatal.unwrap_err(), "diverged");
    }
}
