//! Does the fit explain the data? Two tests of a fit's residuals against
//! the film's own noise, each at a stated false-alarm rate, whose union is
//! the verdict (docs/identify.md, "Does the fit explain the data?"):
//!
//! - **variance**: the fit's σ² over the noise estimate's σ₀². When the
//!   model explains the film, the fit's sum of squares is σ² χ²(N − p) and
//!   the noise estimate σ² χ²(ν)/ν, ν its effective degrees of freedom
//!   ([`NoiseEstimate::degrees_of_freedom`]), so their ratio is F(N − p,
//!   ν): the limit is its upper [`VARIANCE_FALSE_ALARM`] quantile, wider
//!   for a noise estimate from few differences, exact for a declared one.
//! - **whiteness**: a model that explains a film leaves the tracker's
//!   noise, independent from frame to frame; a wrong length, modulus,
//!   clock or unit leaves a misfit that is smooth in time. Over every
//!   marker and coordinate, the products eₜ eₜ₊₁ of residuals at
//!   consecutive frames are uncorrelated with mean zero under that noise
//!   (whatever its size, marker by marker), so Σ eₜeₜ₊₁ / √Σ (eₜeₜ₊₁)² is
//!   standard normal; a smooth misfit makes it large and positive. The
//!   pooled statistic is tested at [`POOLED_FALSE_ALARM`] and each marker's
//!   own at [`MARKERS_FALSE_ALARM`] shared by the markers (Bonferroni: a
//!   misfit of one marker — its arc length — is diluted in the pool).
//!
//! By the union bound the three tests together raise a false alarm on a
//! model that explains its film at most at [`FALSE_ALARM`]; the rate
//! measured over films of known truth is in BENCHMARKS.md.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, FisherSnedecor, Normal};

use crate::track::NoiseEstimate;

/// The variance test's false-alarm rate.
pub const VARIANCE_FALSE_ALARM: f64 = 0.005;
/// The pooled whiteness test's.
pub const POOLED_FALSE_ALARM: f64 = 0.0025;
/// The markers' own whiteness tests', all markers together.
pub const MARKERS_FALSE_ALARM: f64 = 0.0025;
/// All three: the verdict's false-alarm rate at most.
pub const FALSE_ALARM: f64 = VARIANCE_FALSE_ALARM + POOLED_FALSE_ALARM + MARKERS_FALSE_ALARM;
/// Without a refined optimum (`--no-refine`) the grid best's σ holds the
/// grid's own step from the optimum as well as any misfit, so no rate can
/// be stated: only a misfit of √(5² − 1) ≈ 4.9 noise levels beyond the
/// noise is flagged (a tether 8 % too long gives 11, a release a frame
/// late 28).
pub const UNREFINED_RATIO_LIMIT: f64 = 5.0;
/// A marker with fewer pairs of consecutive frames than this is not tested
/// on its own (a normal approximation over fewer is not worth its level);
/// its pairs still count in the pool.
pub const MIN_MARKER_PAIRS: usize = 20;

/// One film's residuals at the fit: a row per measured sample.
#[derive(Debug, Clone, Copy)]
pub struct Residuals<'a> {
    pub times_s: &'a [f64],
    pub markers: &'a [usize],
    /// Measured − fitted \[m\].
    pub residuals_m: &'a [[f64; 2]],
}

/// The whiteness test of a fit's residuals along the frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Whiteness {
    /// Pairs of a marker's coordinate at consecutive frames.
    pub pairs: usize,
    /// Σ eₜeₜ₊₁ / Σ eₜ²: the residuals' pooled lag-one autocorrelation
    /// (0 for white noise, near 1 for a smooth misfit).
    pub lag_one_correlation: f64,
    /// The pooled statistic and its limit.
    pub z: f64,
    pub z_limit: f64,
    /// The marker whose own statistic is largest, that statistic, and the
    /// limit each marker's is held to (None: no marker has
    /// [`MIN_MARKER_PAIRS`]).
    pub worst_marker: Option<usize>,
    pub worst_marker_z: Option<f64>,
    pub marker_z_limit: Option<f64>,
    pub white: bool,
}

/// Does the fit explain the data? The variance test against the film's
/// noise, and the whiteness test of the residuals (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoodnessOfFit {
    /// \[m\], one coordinate: √(J_e / (N − p)).
    pub fit_sigma_m: f64,
    pub noise: NoiseEstimate,
    /// The compared coordinates N and the fitted parameters p.
    pub observations: usize,
    pub parameters: usize,
    /// ν of the noise estimate; None: declared, taken as exact.
    pub noise_degrees_of_freedom: Option<f64>,
    /// fit_sigma_m / noise.sigma_m, and the largest the variance test
    /// allows: √ of F(N − p, ν)'s upper [`VARIANCE_FALSE_ALARM`] quantile;
    /// without a refined optimum, [`UNREFINED_RATIO_LIMIT`].
    pub ratio: f64,
    pub ratio_limit: f64,
    /// None: not tested — the fit was not refined, so its residuals hold
    /// the grid's own step from the optimum, smooth by nature.
    pub whiteness: Option<Whiteness>,
    /// The verdict's false-alarm rate at most ([`FALSE_ALARM`]); None
    /// without a refined optimum, where only gross misfits are screened.
    pub false_alarm_rate: Option<f64>,
    pub explains: bool,
}

impl GoodnessOfFit {
    /// The test of a fit of σ `fit_sigma_m` over `observations`
    /// coordinates with `parameters` fitted, against `noise`; `residuals`
    /// for the whiteness test, where the fit is an optimum.
    pub fn test(
        fit_sigma_m: f64,
        observations: usize,
        parameters: usize,
        noise: NoiseEstimate,
        residuals: Option<Residuals<'_>>,
    ) -> Self {
        let ratio = fit_sigma_m / noise.sigma_m;
        let nu = noise.degrees_of_freedom();
        let whiteness = residuals.map(whiteness);
        let ratio_limit = match whiteness {
            Some(_) => variance_ratio_limit(observations.saturating_sub(parameters), nu),
            None => UNREFINED_RATIO_LIMIT,
        };
        // NaN (a zero noise and a zero misfit) explains: both say nothing
        // is left.
        let variance_ok = ratio <= ratio_limit || ratio.is_nan();
        let explains = variance_ok && whiteness.as_ref().is_none_or(|w| w.white);
        Self {
            fit_sigma_m,
            noise,
            observations,
            parameters,
            noise_degrees_of_freedom: nu,
            ratio,
            ratio_limit,
            false_alarm_rate: whiteness.is_some().then_some(FALSE_ALARM),
            whiteness,
            explains,
        }
    }

    /// Why the fit does not explain the data, in words; None when it does.
    pub fn warning(&self) -> Option<String> {
        if self.explains {
            return None;
        }
        let mut found = Vec::new();
        if self.ratio > self.ratio_limit {
            found.push(format!(
                "it misses the data by σ ≈ {:.3} mm RMS a coordinate, {:.2}× the film's noise of {:.3} mm ({}), beyond the {:.2}× {}",
                1e3 * self.fit_sigma_m,
                self.ratio,
                1e3 * self.noise.sigma_m,
                self.noise.how(),
                self.ratio_limit,
                match self.whiteness {
                    Some(_) => format!(
                        "that noise reaches at a false-alarm rate of {}",
                        percent(VARIANCE_FALSE_ALARM)
                    ),
                    None => "that screens an unrefined fit for gross misfits".into(),
                }
            ));
        }
        if let Some(w) = self.whiteness.as_ref().filter(|w| !w.white) {
            found.push(w.describe());
        }
        Some(format!(
            "the best fit does not explain the data: {}; the model is not this film's experiment. Check the tether's length and parameters (free one with --axis), the clock and the release time, the camera (unit, scale, y axis, pin), the markers' arc lengths and any samples listed far from the fit, and the mesh (n)",
            found.join("; and ")
        ))
    }
}

impl Whiteness {
    /// What the test found, in words.
    pub fn describe(&self) -> String {
        let pooled = format!(
            "its residuals are smooth in time (lag-one autocorrelation {:.2} over {} pairs of consecutive frames, z = {:.1} against {:.1} at a false-alarm rate of {})",
            self.lag_one_correlation,
            self.pairs,
            self.z,
            self.z_limit,
            percent(POOLED_FALSE_ALARM)
        );
        let marker = match (self.worst_marker, self.worst_marker_z, self.marker_z_limit) {
            (Some(m), Some(z), Some(limit)) if z > limit => Some(format!(
                "marker {m}'s own residuals are smooth in time (z = {z:.1} against {limit:.1}, its share of a false-alarm rate of {} over the markers)",
                percent(MARKERS_FALSE_ALARM)
            )),
            _ => None,
        };
        let pooled = (self.z > self.z_limit).then_some(pooled);
        [pooled, marker]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn percent(rate: f64) -> String {
    format!("{} %", 100.0 * rate)
}

/// The largest σ/σ₀ a model that explains its film reaches at
/// [`VARIANCE_FALSE_ALARM`]: √ of F(`dof`, ν)'s upper quantile (χ²(dof)/dof
/// for a declared noise, ν None).
pub fn variance_ratio_limit(dof: usize, nu: Option<f64>) -> f64 {
    use statrs::distribution::ChiSquared;
    let dof = dof.max(1) as f64;
    let q = match nu {
        Some(nu) => FisherSnedecor::new(dof, nu.max(1.0))
            .map(|f| f.inverse_cdf(1.0 - VARIANCE_FALSE_ALARM))
            .ok(),
        // F(dof, ∞) is χ²(dof)/dof (and statrs' F takes ages to invert
        // at a huge ν).
        None => ChiSquared::new(dof)
            .map(|c| c.inverse_cdf(1.0 - VARIANCE_FALSE_ALARM) / dof)
            .ok(),
    };
    q.unwrap_or(f64::INFINITY).sqrt()
}

/// The standard normal's upper `rate` quantile.
fn normal_upper(rate: f64) -> f64 {
    Normal::standard().inverse_cdf(1.0 - rate)
}

/// The whiteness test of `r` (module docs): pairs are a marker's samples at
/// consecutive frames of the film (the frames any marker is seen at); a
/// frame a marker lacks breaks its run.
pub fn whiteness(r: Residuals<'_>) -> Whiteness {
    let mut frames: Vec<f64> = r.times_s.to_vec();
    frames.sort_by(f64::total_cmp);
    frames.dedup();
    let frame_of = |t: f64| frames.partition_point(|&f| f < t);
    // Each marker's samples in frame order.
    let mut rows: Vec<usize> = (0..r.times_s.len()).collect();
    rows.sort_by(|&a, &b| {
        r.markers[a]
            .cmp(&r.markers[b])
            .then(r.times_s[a].total_cmp(&r.times_s[b]))
    });
    // Per marker: Σ eₜeₜ₊₁, Σ (eₜeₜ₊₁)², pairs; and the pool's Σ eₜ².
    let mut per_marker: std::collections::BTreeMap<usize, (f64, f64, usize)> = Default::default();
    let (mut products, mut products_sq, mut squares, mut pairs) = (0.0, 0.0, 0.0, 0);
    for w in rows.windows(2) {
        let (a, b) = (w[0], w[1]);
        if r.markers[a] != r.markers[b] || frame_of(r.times_s[b]) != frame_of(r.times_s[a]) + 1 {
            continue;
        }
        let entry = per_marker.entry(r.markers[a]).or_default();
        for axis in 0..2 {
            let p = r.residuals_m[a][axis] * r.residuals_m[b][axis];
            products += p;
            products_sq += p * p;
            squares += r.residuals_m[a][axis].powi(2);
            entry.0 += p;
            entry.1 += p * p;
            entry.2 += 1;
            pairs += 1;
        }
    }
    let z = match products_sq > 0.0 {
        true => products / products_sq.sqrt(),
        false => 0.0,
    };
    let z_limit = normal_upper(POOLED_FALSE_ALARM);
    let tested: Vec<(usize, f64)> = per_marker
        .iter()
        .filter(|(_, (_, sq, n))| *n >= MIN_MARKER_PAIRS && *sq > 0.0)
        .map(|(&m, &(p, sq, _))| (m, p / sq.sqrt()))
        .collect();
    let marker_z_limit =
        (!tested.is_empty()).then(|| normal_upper(MARKERS_FALSE_ALARM / tested.len() as f64));
    let worst = tested.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
    let white =
        z <= z_limit && !matches!((worst, marker_z_limit), (Some((_, zm)), Some(l)) if zm > l);
    Whiteness {
        pairs,
        lag_one_correlation: match squares > 0.0 {
            true => products / squares,
            false => 0.0,
        },
        z,
        z_limit,
        worst_marker: worst.map(|w| w.0),
        worst_marker_z: worst.map(|w| w.1),
        marker_z_limit,
        white,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal as Gaussian};

    /// `markers` markers over `frames` frames: white noise of σ, plus a
    /// smooth misfit of amplitude `smooth` (a slow sine) on every marker,
    /// or on `only` alone.
    fn film(
        seed: u64,
        frames: usize,
        markers: usize,
        smooth: f64,
        only: Option<usize>,
    ) -> (Vec<f64>, Vec<usize>, Vec<[f64; 2]>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let noise = Gaussian::new(0.0, 1e-3).unwrap();
        let (mut t, mut m, mut e) = (Vec::new(), Vec::new(), Vec::new());
        for f in 0..frames {
            for j in 0..markers {
                let time = f as f64 / 60.0;
                let drift = match only {
                    Some(o) if o != j => 0.0,
                    _ => smooth * (3.0 * time + j as f64).sin(),
                };
                t.push(time);
                m.push(j);
                e.push([
                    noise.sample(&mut rng) + drift,
                    noise.sample(&mut rng) - drift,
                ]);
            }
        }
        (t, m, e)
    }

    fn test_of(f: &(Vec<f64>, Vec<usize>, Vec<[f64; 2]>)) -> Whiteness {
        whiteness(Residuals {
            times_s: &f.0,
            markers: &f.1,
            residuals_m: &f.2,
        })
    }

    #[test]
    fn white_noise_passes_at_about_its_rate_and_a_smooth_misfit_fails() {
        // 400 films of white noise: the pooled and marker tests' 0.5 %
        // together leave at most a few false alarms (0.5 % of 400 is 2;
        // 8 or more has a chance under 0.2 %).
        let alarms = (0..400)
            .filter(|&s| !test_of(&film(s, 60, 5, 0.0, None)).white)
            .count();
        assert!(alarms < 8, "{alarms} false alarms in 400");
        // A smooth misfit of a third of the noise, on every marker.
        let w = test_of(&film(1, 120, 8, 0.5e-3, None));
        assert!(!w.white && w.z > w.z_limit, "{w:?}");
        assert!(w.lag_one_correlation > 0.05, "{w:?}");
        // Or on one marker alone: the pool dilutes it, its own test finds it.
        let one = test_of(&film(2, 300, 10, 1.0e-3, Some(4)));
        assert!(!one.white, "{one:?}");
        assert_eq!(one.worst_marker, Some(4));
        assert!(one.describe().contains("marker 4"), "{}", one.describe());
    }

    #[test]
    fn a_frame_a_marker_lacks_breaks_its_run() {
        // Two markers on alternate frames only: no pair is consecutive.
        let t = vec![0.0, 0.1, 0.2, 0.3];
        let m = vec![0, 1, 0, 1];
        let e = vec![[1.0, 1.0]; 4];
        let w = whiteness(Residuals {
            times_s: &t,
            markers: &m,
            residuals_m: &e,
        });
        assert_eq!(w.pairs, 0);
        assert!(w.white);
    }

    #[test]
    fn the_variance_limit_widens_with_a_rough_noise_estimate() {
        let exact = variance_ratio_limit(400, None);
        let rough = variance_ratio_limit(400, Some(40.0));
        let fine = variance_ratio_limit(400, Some(4000.0));
        // χ²(400)/400's 99.5 % point is about 1.19: σ ratio 1.09.
        assert!((exact - 1.19f64.sqrt()).abs() < 0.01, "{exact}");
        assert!(exact < fine && fine < rough, "{exact} {fine} {rough}");
        // ν = 40: the estimate alone spreads σ₀² by √(2/40) = 22 %.
        assert!(rough > 1.3, "{rough}");
    }

    #[test]
    fn a_ratio_within_its_limit_but_smooth_residuals_do_not_explain() {
        let f = film(3, 120, 8, 0.6e-3, None);
        let noise = NoiseEstimate::declared(1e-3);
        let residuals = Residuals {
            times_s: &f.0,
            markers: &f.1,
            residuals_m: &f.2,
        };
        let g = GoodnessOfFit::test(1.02e-3, f.2.len() * 2, 3, noise, Some(residuals));
        assert!(g.ratio <= g.ratio_limit, "{g:?}");
        assert!(!g.explains);
        let w = g.warning().unwrap();
        assert!(w.contains("smooth in time"), "{w}");
        assert!(!w.contains("misses the data"), "{w}");
        // Without residuals (no refinement), the gross screen alone.
        let alone = GoodnessOfFit::test(1.02e-3, f.2.len() * 2, 3, noise, None);
        assert!(alone.explains && alone.warning().is_none());
        assert_eq!(alone.false_alarm_rate, None);
        assert_eq!(alone.ratio_limit, UNREFINED_RATIO_LIMIT);
        assert!(!GoodnessOfFit::test(5.1e-3, f.2.len() * 2, 3, noise, None).explains);
    }
}
