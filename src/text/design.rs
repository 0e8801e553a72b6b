//! A design's plan and report as text: each design point's predicted standard errors, their share of the assumed values, and the best point per parameter.

use super::sayln;
use crate::sweep::design::Design;
use crate::sweep::design::PlannedFilm;
use crate::workflow::design::DesignReport;
use crate::workflow::design::PlannedRelease;
use std::path::Path;

/// The design's points, films, estimated parameters and cost.
pub fn write_header(out: &mut String, design: &Design) {
    let estimated: Vec<String> = design
        .estimated
        .iter()
        .map(|e| design.estimate_name(e))
        .collect();
    let points = design.points().len();
    sayln!(
        out,
        "design: {} point{} × {} planned film{} ({}), estimating {}; σ = {} mm per coordinate; {} simulations",
        points,
        if points == 1 { "" } else { "s" },
        design.films.len(),
        if design.films.len() == 1 { "" } else { "s" },
        design
            .films
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        estimated.join(", "),
        design.noise_m * 1e3,
        points * design.simulations_per_point()
    );
}

/// `value` to three significant digits, in plain notation where that
/// reads well.
pub fn three_digits(value: f64) -> String {
    let magnitude = value.abs().log10().floor() as i32;
    if !(-3..5).contains(&magnitude) {
        return format!("{value:.2e}");
    }
    let decimals = (2 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

/// A standard error, with its share of the assumed value where that is
/// finite and not zero.
pub fn with_share(se: f64, assumed: f64) -> String {
    if !se.is_finite() {
        return "undetermined".into();
    }
    if assumed != 0.0 && assumed.is_finite() {
        format!(
            "{} ({} %)",
            three_digits(se),
            three_digits(100.0 * se / assumed.abs())
        )
    } else {
        three_digits(se)
    }
}

/// Each estimate's assumed value, the base of its share; NaN for a
/// reading (a release time, a pin's coordinate), whose error is not
/// relative to where the clock or the ruler starts.
pub fn share_bases(design: &Design) -> Vec<f64> {
    design
        .estimated
        .iter()
        .map(|e| match e.is_reading() {
            true => f64::NAN,
            false => design.assumed(e),
        })
        .collect()
}

/// A design point, as its axes' rounded values.
pub fn point_text(design: &Design, values: &[f64]) -> String {
    if design.axes.is_empty() {
        return "as planned".into();
    }
    design
        .axes
        .iter()
        .zip(values)
        .map(|(a, v)| design.point_label(a, *v))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn write_report(out: &mut String, design: &Design, report: &DesignReport) {
    let assumed = share_bases(design);
    let point = |values: &[f64]| point_text(design, values);
    const LISTED: usize = 40;
    for p in report.predictions.iter().take(LISTED) {
        let errors: Vec<String> = design
            .estimated
            .iter()
            .enumerate()
            .map(|(i, e)| {
                format!(
                    "SE {} {}",
                    design.estimate_name(e),
                    with_share(p.standard_errors[i], assumed[i])
                )
            })
            .collect();
        sayln!(
            out,
            "  {}: {}; correlation {:.2}",
            point(&p.values),
            errors.join(", "),
            p.correlation
        );
    }
    if report.predictions.len() > LISTED {
        sayln!(
            out,
            "  … {} more in design.parquet",
            report.predictions.len() - LISTED
        );
    }
    // One point (no axis): nothing to choose between.
    if !design.axes.is_empty() {
        for b in &report.best {
            let p = &report.predictions[b.point];
            let e = &design.estimated[b.estimated];
            sayln!(
                out,
                "best for {}: {} (SE {})",
                design.estimate_name(e),
                point(&p.values),
                with_share(p.standard_errors[b.estimated], assumed[b.estimated])
            );
        }
    }
    let names: Vec<String> = report
        .written
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    sayln!(
        out,
        "{} simulations in {:.1} s on {}; wrote {}",
        report.simulations,
        report.wall_s,
        report.engine,
        names.join(", ")
    );
}

/// Where a planned film from a measured file is released, when it was
/// not said: at the file's first frame.
pub fn write_release(
    out: &mut String,
    planned: &PlannedFilm,
    release: &PlannedRelease,
    config: &Path,
) {
    let release_s = planned.scenario.release_time_s();
    if *release == PlannedRelease::FirstFrame && release_s > 0.0 {
        sayln!(
            out,
            "film {}: released at its first frame, t = {release_s} s (release_time_s in [settings] of {}, or --axis {}.release_time_s=…, to say otherwise)",
            planned.name,
            config.display(),
            planned.name
        );
    }
}
