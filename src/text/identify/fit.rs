//! Whether a fit explains its film, as text: the goodness of fit, the
//! errors robust to correlated residuals, which known input to free, the
//! outlying samples, and the tolerance the data chose.

use super::super::{fixed, number, sayln};
use super::refined::to_error_digits;
use crate::camera::{Camera, TimeUnit};
use crate::misfit::GoodnessOfFit;
use crate::sweep::accuracy::{Chosen, REFINEMENT_RERUN_FRACTION, describe};
use crate::sweep::refine::Refined;
use crate::workflow::count;
use crate::workflow::fit::{OUTLIER_FLOOR_OF_LENGTH, OUTLIER_SIGMAS, Outlier};
use crate::workflow::identify::FreedInput;

/// The fit's σ against the film's noise and its residuals' whiteness (a
/// joint run's: `film`'s).
pub fn write_goodness(out: &mut String, g: &GoodnessOfFit, film: Option<&str>) {
    let whiteness = match &g.whiteness {
        Some(w) => format!(
            "; residuals' lag-one autocorrelation {} (z = {}, limit {:.1})",
            fixed(w.lag_one_correlation, 2),
            fixed(w.z, 1),
            w.z_limit
        ),
        None => "; no refined optimum: screened for gross misfits only".into(),
    };
    sayln!(
        out,
        "goodness of fit{}: σ ≈ {:.3} mm against the noise's {:.3} mm ({}): {:.2}× (limit {:.2}×){whiteness}: {}",
        film.map_or(String::new(), |f| format!(" of film {f}")),
        1e3 * g.fit_sigma_m,
        1e3 * g.noise.sigma_m,
        g.noise.how(),
        g.ratio,
        g.ratio_limit,
        match g.explains {
            true => match g.false_alarm_rate {
                Some(rate) => format!(
                    "the model explains the data (tests' false-alarm rate {} %)",
                    100.0 * rate
                ),
                None => "no gross misfit".into(),
            },
            false => "more than the noise explains".into(),
        }
    );
}

/// When the residuals are not white, the errors to quote: robust to their
/// correlation in time (Newey–West), beside the Gauss–Newton ones.
pub fn write_robust(out: &mut String, r: &Refined, g: &GoodnessOfFit) {
    if g.whiteness.as_ref().is_none_or(|w| w.white) {
        return;
    }
    let z = crate::sweep::chi2_quantile(1, r.confidence_level).sqrt();
    let each: Vec<String> = r
        .parameters
        .iter()
        .filter_map(|p| {
            let robust = p.robust_standard_error?;
            Some(format!(
                "{} = {} ± {:.2e} (95 %: [{}, {}]; Gauss–Newton ± {:.2e})",
                p.name(),
                to_error_digits(p.value, robust),
                robust,
                to_error_digits(p.value - z * robust, robust),
                to_error_digits(p.value + z * robust, robust),
                p.standard_error
            ))
        })
        .collect();
    if each.is_empty() {
        return;
    }
    sayln!(
        out,
        "the residuals are not white, so the errors above, which assume they are, do not hold: robust to their correlation over {} (Newey–West), quote {}",
        count(r.robust_lags, "frame"),
        each.join(", ")
    );
}

/// Each known input freed in turn, when the fit does not explain the data:
/// which one alone would, as an axis to add; the answer above unchanged.
pub fn write_freed(out: &mut String, freed: &[FreedInput], joint: bool) {
    if freed.is_empty() {
        return;
    }
    sayln!(
        out,
        "which known input to free (each alone, refitted from the refined optimum; the answer above is unchanged):"
    );
    let width = freed.iter().map(|f| f.input.len()).fold(18, usize::max);
    for f in freed {
        sayln!(
            out,
            "  {:<width$} {} → {} ± {:.2e}: σ {:.2}× the noise{}, {}",
            f.input,
            f.given,
            f.fitted,
            f.standard_error,
            f.ratio,
            if joint { " (the worst film's)" } else { "" },
            match f.explains {
                true => "explains the data",
                false => "still more than the noise explains",
            }
        );
    }
    let explaining: Vec<&FreedInput> = freed.iter().filter(|f| f.explains).collect();
    match &explaining[..] {
        [] => {
            sayln!(
                out,
                "  no input alone brings the fit within the noise: look for two, the mesh (n), or the data"
            );
            let nearest = freed.iter().min_by(|a, b| a.ratio.total_cmp(&b.ratio));
            if let Some(f) = nearest.filter(|f| f.ratio < 2.0) {
                sayln!(
                    out,
                    "  nearest: --axis {} (σ {:.2}× the noise; the rest is along its frames or in the mesh: offer finer n with it)",
                    f.suggested_axis,
                    f.ratio
                );
            }
        }
        some => sayln!(
            out,
            "  → try {}",
            some.iter()
                .map(|f| format!("--axis {}", f.suggested_axis))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

/// How the reference solver's method and tolerance were chosen, and what
/// they re-ran.
pub fn write_accuracy(out: &mut String, chosen: &Chosen) {
    let Some(a) = &chosen.accuracy else {
        sayln!(
            out,
            "accuracy: --tolerance {:e} m for the sweep, the best fit and the refinement",
            chosen.tolerance_m
        );
        return;
    };
    let rerun = match &chosen.confirmation {
        Some(c) if c.confirmed > 0 => format!(
            "; {} near the best re-run on it after a first pass on generalized-alpha at {:e} m (largest J_e shift {:.1e} m², re-run to {:.1e} m² above the threshold)",
            count(c.confirmed, "candidate"),
            c.scout_tolerance_m,
            c.largest_shift_m2,
            c.margin_m2,
        ),
        Some(c) => format!(
            "; the first pass on generalized-alpha at {:e} m was already as accurate",
            c.scout_tolerance_m
        ),
        None => String::new(),
    };
    let what = match chosen.refinement {
        Some(_) => "the candidates near the best",
        None => "the best fit and the refinement",
    };
    sayln!(
        out,
        "accuracy: σ ≈ {:.2} mm over N = {} coordinates: a track error of {:.1e} m RMS moves J_e by a tenth of the region's threshold, so {what} run the reference solver's {}{rerun}",
        a.noise_m * 1e3,
        a.observations,
        a.track_error_m,
        describe(a.method, a.tolerance_m),
    );
    if let Some(r) = &chosen.refinement {
        sayln!(
            out,
            "  the refined σ ≈ {:.2} mm asks a track error of {:.1e} m, under {:.2} of that: the refinement went on from its values on {}, and the best fit ran so",
            r.noise_m * 1e3,
            r.track_error_m,
            REFINEMENT_RERUN_FRACTION,
            describe(r.method, r.tolerance_m),
        );
    }
}

/// Samples far beyond the noise from the best fit, ten at most by name,
/// with the time and marker number the file has them under.
pub fn write_outliers(
    out: &mut String,
    outliers: &[Outlier],
    limit_m: f64,
    camera: &Camera,
    fit_file: &str,
) {
    const LISTED: usize = 10;
    let Some(first) = outliers.first() else {
        return;
    };
    let listed: Vec<String> = outliers
        .iter()
        .take(LISTED)
        .map(|o| {
            let time = match camera.time_unit {
                TimeUnit::Frame => format!("frame {}", number(o.t_file)),
                unit => format!("t = {} {}", number(o.t_file), unit.name()),
            };
            format!(
                "{time} marker {} ({:.1} mm)",
                o.marker_file,
                1e3 * o.distance_m
            )
        })
        .collect();
    sayln!(
        out,
        "warning: {} more than {:.2} mm ({} σ, at least {} % of the tether's length) from the best fit, up to {:.1} mm (a lost marker written as a number, a tracking jump?): {}{}; all in {fit_file}'s metadata ({})",
        count(outliers.len(), "sample"),
        1e3 * limit_m,
        OUTLIER_SIGMAS,
        100.0 * OUTLIER_FLOOR_OF_LENGTH,
        1e3 * first.distance_m,
        listed.join(", "),
        if outliers.len() > LISTED { ", …" } else { "" },
        crate::metadata::OUTLIERS
    );
}
