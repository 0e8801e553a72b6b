//! An identification's plan and report as text: the header, the film's
//! checks, the summary, the data's tolerance, the refinement with its
//! profiles, the goodness of fit, the validation and the files written;
//! several films' with each film's noise, weight and own values.

use super::{layouts_text, number, numbers, say, sayln};
use crate::camera::Camera;
use crate::scenario::Scenario;
use crate::sweep::abandon::ABANDON_THRESHOLDS;
use crate::sweep::validation::Validation;
use crate::sweep::{Axis, CandidateResult, Grid, Parameter, Summary};
use crate::workflow::count;
use crate::workflow::film::{Plausibility, TrackedPin};
use crate::workflow::identify::{FilmPlan, IdentifyReport, IdentifyRequest, Plan};
use crate::workflow::summarize::SummarizeReport;

mod fit;
mod joint;
mod refined;

use joint::{write_joint, write_joint_plan, write_joint_report, write_own_at_best};

pub use fit::{write_accuracy, write_freed, write_goodness, write_outliers, write_robust};
pub use refined::{
    refined_values, to_error_digits, write_mesh, write_profile_notes, write_profiles, write_refined,
};

/// What an identification will do: a single film's header and its
/// checks (`from_config`: its experiment and camera too), or several
/// films' header and each film's.
pub fn write_plan(out: &mut String, request: &IdentifyRequest, plan: &Plan, from_config: bool) {
    match request.single() {
        true => write_single_plan(out, request, plan, from_config),
        false => write_joint_plan(out, request, plan),
    }
}

/// What an identification found and wrote (a shard: its parts).
pub fn write_report(out: &mut String, report: &IdentifyReport) {
    match report.films.len() {
        1 => write_single_report(out, report),
        _ => write_joint_report(out, report),
    }
}

/// A sweep's solver in the header: `--tolerance` holds for the whole run,
/// else a reference-solver sweep is a first pass at the scouting
/// tolerance, `scout_tolerance_m` ([`crate::sweep::accuracy`]),
/// whose candidates near the best re-run at the data's: in this run, or
/// in `summarize`'s merge of a `shard`'s parts.
pub fn sweep_solver_text(
    solver: &str,
    scout_tolerance_m: Option<f64>,
    tolerance_m: Option<f64>,
    shard: bool,
) -> String {
    match (tolerance_m, scout_tolerance_m) {
        (Some(t), _) => format!("{solver} solver at tolerance {t:e} m (--tolerance)"),
        (None, Some(scout)) if shard => format!(
            "{solver} solver, a first pass at tolerance {scout:e} m (summarize re-runs the candidates near the merged best at the data's)"
        ),
        (None, Some(scout)) => format!(
            "{solver} solver, a first pass at tolerance {scout:e} m, then the candidates near the best at the data's"
        ),
        (None, None) => format!("{solver} solver"),
    }
}

/// A best fit that misses the data as no fit of this experiment can,
/// accepted by `--allow-implausible`: said, since the run exits 0.
pub fn write_allowed_implausible(out: &mut String, warning: Option<&str>, allowed: bool) {
    if let Some(w) = warning.filter(|_| allowed) {
        sayln!(out, "warning (--allow-implausible): {w}");
    }
}

/// The pin taken from the film's marker 0, where it was.
pub fn write_tracked_pin(
    out: &mut String,
    pin: Option<&TrackedPin>,
    camera: &Camera,
    indent: &str,
) {
    use crate::camera::LengthUnit;
    if let Some(p) = pin {
        // To a hundredth of a millimetre or so, in the file's unit.
        let decimals = match camera.unit {
            LengthUnit::Px => 2,
            LengthUnit::Mm => 2,
            LengthUnit::M => 5,
        };
        sayln!(
            out,
            "{indent}pin: from the film, marker 0 (at arc length 0) rests at ({:.decimals$}, {:.decimals$}) {} (its median; it wanders {:.2} mm RMS around it)",
            p.pin_file[0],
            p.pin_file[1],
            camera.unit.name(),
            1e3 * p.wander_m
        );
    }
}

/// The grid's parameter axes and their lengths, as the headers list them
/// after n, D and C_D: ", release_time_s: 7".
pub fn parameter_axes_text(grid: &Grid) -> String {
    grid.parameter_axes()
        .iter()
        .map(|a| format!(", {}: {}", a.axis, a.values.len()))
        .collect()
}

/// How many values n, D and C_D each have.
fn fixed_lengths(grid: &Grid) -> [usize; 3] {
    Axis::FIXED.map(|axis| grid.values(axis).map_or(0, <[f64]>::len))
}

/// The device a run's engine runs on: the GPU's adapter, or the CPU.
pub fn device_text(adapter: Option<&str>) -> String {
    match adapter {
        Some(name) => format!("GPU {name}"),
        None => crate::engine::EngineKind::cpu_device_name(),
    }
}

fn write_single_plan(out: &mut String, request: &IdentifyRequest, plan: &Plan, from_config: bool) {
    let (Some(film), Some(given)) = (plan.films.first(), request.films.first()) else {
        return;
    };
    let grid = &request.grid;
    let [device, solver, precision] = engine_words(request, plan);
    sayln!(
        out,
        "identify: {} (n: {} values, D: {}, C_D: {}{}){} against {} | {device}, {solver}, {precision}",
        count(grid.len(), "candidate"),
        fixed_lengths(grid)[0],
        fixed_lengths(grid)[1],
        fixed_lengths(grid)[2],
        parameter_axes_text(grid),
        match &request.shard {
            Some(s) => format!(", shard {s}: {}", film.candidates),
            None => String::new(),
        },
        film.measured,
    );
    let s = &film.scenario;
    let camera = &given.camera;
    if from_config {
        let release_axis = grid.has(Axis::Parameter(Parameter::ReleaseTimeS));
        write_experiment(out, s, release_axis);
        if !camera.is_default() {
            sayln!(out, "camera: {}", describe_camera(camera));
        }
        write_tracked_pin(out, film.tracked_pin.as_ref(), camera, "");
    }
    write_film_checks(out, request, plan);
    if let Some(layout) = plan.engine.gpu_layout() {
        sayln!(
            out,
            "GPU layout: {}",
            match layout.fixed() {
                Some(l) => format!("{} (--gpu-layout)", l.name()),
                None => "auto: for each batch and scheme, by the cost model (gpu::cost)".into(),
            }
        );
    }
    if film.resumed > 0 {
        sayln!(
            out,
            "resuming: {} from {} saved chunks, {} to run",
            count(film.resumed, "candidate"),
            film.saved_chunks,
            plan.to_run()
        );
    }
}

/// What the checks of the film found: its first frame far from the
/// initial shape, samples missing, rows not compared.
pub fn write_film_checks(out: &mut String, request: &IdentifyRequest, plan: &Plan) {
    let Some(plan) = plan.films.first() else {
        return;
    };
    let s = &plan.scenario;
    if let Some(offset) = plan.start
        && offset.rms_m > Plausibility::START_WARNING * request.base.length_m
    {
        sayln!(out, "warning: {}", offset.describe(s));
    }
    write_missing(out, plan, "");
    if plan.unused_rows > 0 {
        sayln!(
            out,
            "warning: {} of {} are not compared: their markers are beyond the experiment's {} (markers 0..{})",
            count(plan.unused_rows, "row"),
            plan.measured,
            s.marker_arc_lengths_m.len(),
            s.marker_arc_lengths_m.len().saturating_sub(1)
        );
    }
}

/// The camera in words: what the file's numbers were turned from.
pub fn describe_camera(camera: &Camera) -> String {
    use crate::camera::{LengthUnit, YAxis};
    let mut parts = vec![match camera.unit {
        LengthUnit::Px => format!("px of {} m", number(camera.scale_m())),
        unit => unit.name().to_string(),
    }];
    if camera.y_axis == YAxis::Down {
        parts.push("y down".into());
    }
    if camera.down.is_some() {
        parts.push(format!(
            "turned {:.2}° from the plumb line",
            camera.tilt_rad().to_degrees()
        ));
    }
    if let Some(pin) = camera.pin {
        parts.push(format!(
            "the pin at ({}, {}) {}",
            number(pin[0]),
            number(pin[1]),
            camera.unit.name()
        ));
    }
    parts.push(format!("clock in {}", camera.time_unit.name()));
    if let Some(lost) = camera.lost {
        parts.push(format!(
            "({}, {}) read as lost",
            number(lost[0]),
            number(lost[1])
        ));
    }
    if camera.first_marker != 0 {
        parts.push(format!("markers numbered from {}", camera.first_marker));
    }
    format!(
        "{} (turned into metres, y up, on the file's clock in seconds)",
        parts.join(", ")
    )
}

/// The experiment a config describes, as compared.
pub fn write_experiment(out: &mut String, s: &Scenario, release_axis: bool) {
    let times = s.frame_times_s();
    sayln!(
        out,
        "experiment: released at {}° from the pin at ({}, {}) m at {}, {} at s = {} m, {} from t = {} to {} s",
        number(s.as_drop().map_or(f64::NAN, |d| d.initial_angle_deg)),
        number(s.pin_m()[0]),
        number(s.pin_m()[1]),
        if release_axis {
            "the release axis's times".to_string()
        } else {
            format!("t = {} s", number(s.release_time_s()))
        },
        count(s.marker_arc_lengths_m.len(), "marker"),
        numbers(&s.marker_arc_lengths_m),
        count(times.len(), "frame"),
        number(times.first().copied().unwrap_or(0.0)),
        number(times.last().copied().unwrap_or(0.0)),
    );
}

/// What ran, how fast, and in which GPU layouts.
pub fn write_rate(out: &mut String, report: &IdentifyReport) {
    let mut layouts = std::collections::BTreeMap::new();
    for layout in report.results.iter().filter_map(|r| r.gpu_layout) {
        *layouts.entry(layout.name()).or_insert(0) += 1;
    }
    let rate = report.simulations as f64 / report.wall_s;
    let layouts = layouts_text(&layouts).map_or(String::new(), |l| format!("; GPU {l}"));
    if report.simulations == report.scored {
        sayln!(
            out,
            "{} in {:.1} s ({rate:.1} simulations/s){layouts}",
            count(report.scored, "simulation"),
            report.wall_s,
        );
    } else {
        sayln!(
            out,
            "{} in {:.1} s by {} (candidates that differ only in the release time share one; {rate:.1} simulations/s){layouts}",
            count(report.scored, "candidate"),
            report.wall_s,
            count(report.simulations, "simulation"),
        );
    }
}

/// How many hopeless candidates stopped early, and where.
pub fn write_abandoned(out: &mut String, report: &IdentifyReport) {
    let stopped: Vec<f64> = report
        .results
        .iter()
        .filter_map(|r| r.status.abandoned_at())
        .collect();
    let (Some(bounds), false) = (&report.abandon, stopped.is_empty()) else {
        return;
    };
    let mean_s = stopped.iter().sum::<f64>() / stopped.len() as f64;
    sayln!(
        out,
        "abandoned: {} of {} ({:.0} %), past {ABANDON_THRESHOLDS} thresholds ({:.3e} m²) above their n's best of a {}-candidate pilot, at t = {mean_s:.2} s on average: their J_e is a lower bound (status abandoned; --exhaustive scores every candidate to the end)",
        stopped.len(),
        count(report.results.len(), "candidate"),
        100.0 * stopped.len() as f64 / report.results.len().max(1) as f64,
        bounds.threshold_m2,
        bounds.pilot,
    );
}

fn write_single_report(out: &mut String, report: &IdentifyReport) {
    write_rate(out, report);
    write_abandoned(out, report);
    write_findings(out, report);
}

/// A candidate and its J_e, as the summary lists them.
pub fn candidate_line(r: &CandidateResult) -> String {
    let parameters: String = r
        .candidate
        .parameters
        .iter()
        .map(|(p, v)| format!(", {p} = {v}"))
        .collect();
    format!(
        "n = {:>3}, D = {:>7.1} Pa·s, C_D = {:.3}{parameters}: J_e = {:.6e} m²",
        r.candidate.elements,
        r.candidate.damping_pa_s,
        r.candidate.drag_coefficient,
        r.j_e_m2.unwrap_or(f64::NAN)
    )
}

pub fn write_summary(out: &mut String, s: &Summary, shard_only: bool) {
    let show = candidate_line;
    let scope = if shard_only { " (of this shard)" } else { "" };
    sayln!(out, "best{scope}: {}", show(&s.best));
    sayln!(out, "best per n{scope}:");
    for r in &s.best_per_elements {
        sayln!(out, "  {}", show(r));
    }
    let c = &s.confidence;
    sayln!(
        out,
        "≈95 % confidence region at n = {} (Gaussian marker noise, σ² = J_min/(N−2) = {:.3e} m², σ ≈ {:.2} mm, N = {}){}:",
        c.elements,
        c.sigma2_m2,
        c.sigma2_m2.sqrt() * 1e3,
        c.observations,
        if shard_only {
            ", over this shard's candidates only: `summarize` gives the whole grid's"
        } else {
            ""
        }
    );
    let flag = |edge: bool| {
        if edge {
            "  ← reaches the grid's edge: not pinned down by the data within this grid"
        } else {
            ""
        }
    };
    sayln!(
        out,
        "  D   in [{}, {}] Pa·s{}",
        c.damping_pa_s.0,
        c.damping_pa_s.1,
        flag(c.damping_at_grid_edge)
    );
    sayln!(
        out,
        "  C_D in [{:.3}, {:.3}]{}",
        c.drag_coefficient.0,
        c.drag_coefficient.1,
        flag(c.drag_at_grid_edge)
    );
    for p in &c.parameters {
        let (lo, hi) = p.range;
        let unit = p.parameter.unit();
        sayln!(
            out,
            "  {} in [{lo}, {hi}] {unit}{}",
            p.parameter,
            flag(p.at_grid_edge)
        );
    }
    if s.diverged > 0 {
        sayln!(
            out,
            "{} diverged (status = diverged, no J_e)",
            count(s.diverged, "candidate")
        );
    }
}

pub fn write_validation(out: &mut String, v: &Validation) {
    sayln!(
        out,
        "validation against the f64 reference solver ({}): max marker deviation {:.2e} m (tolerance {:.0e}), max J_e deviation {:.2e} relative (tolerance {:.0e}){}",
        count(v.candidates.len(), "candidate"),
        v.max_marker_deviation_m,
        v.marker_tolerance_m,
        v.max_j_e_relative_deviation,
        v.j_e_tolerance,
        if v.passed { "" } else { "  ← FAILED" }
    );
}

/// A merge's (`summarize`) findings: a single film's as `identify` says
/// its run's, several films' as a joint run's.
pub fn write_merge(out: &mut String, merged: &SummarizeReport, dir: &std::path::Path) {
    let report = &merged.identification;
    if report.films.len() > 1 {
        sayln!(
            out,
            "summarize: a joint identification of {} films ({}), {} shared candidates of {}",
            report.weights.len(),
            report
                .weights
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            report.results.len(),
            dir.display(),
        );
        write_joint(out, report);
    } else {
        write_single_merge(out, merged, dir);
    }
}

/// A single film's merge, as `identify` prints its run.
fn write_single_merge(out: &mut String, merged: &SummarizeReport, dir: &std::path::Path) {
    let report = &merged.identification;
    let e = &report.engine;
    sayln!(
        out,
        "summarize: {} shards, {} of {} | {} {} solver, {}",
        merged.shards,
        count(report.results.len(), "candidate"),
        dir.display(),
        e.backend.to_uppercase(),
        e.solver,
        e.precision
    );
    write_findings(out, report);
}

/// The samples J_e compares that the film lacks, when there are any.
fn write_missing(out: &mut String, f: &FilmPlan, indent: &str) {
    let missing = f.coverage.missing();
    if missing > 0 {
        sayln!(
            out,
            "{indent}{} of the {} marker positions J_e compares are not in the file ({} with an empty or NaN position): skipped",
            count(missing, "sample"),
            f.coverage.expected,
            f.occluded_rows
        );
    }
}

/// The device, the sweep's solver and the precision, for a plan's header.
fn engine_words(request: &IdentifyRequest, plan: &Plan) -> [String; 3] {
    [
        device_text(plan.adapter.as_deref()),
        sweep_solver_text(
            plan.engine.solver().name(),
            plan.scout_tolerance_m,
            request.tolerance_m,
            request.shard.is_some(),
        ),
        plan.engine.precision().name().to_string(),
    ]
}

/// What a run (or a merge) found, for one film or jointly: the summary,
/// the accuracy, the refinement, the goodness of fit, what was freed, the
/// validations and the files written. Written once for every report, so
/// that a merge says what the run it completes would have said.
fn write_findings(out: &mut String, report: &IdentifyReport) {
    let joint = report.films.len() > 1;
    let shard = report.shard.is_some();
    if let Some(s) = &report.summary {
        write_summary(out, s, shard);
        if joint {
            write_own_at_best(out, report);
        }
    }
    if let Some(c) = report.accuracy.as_ref().filter(|_| !shard) {
        write_accuracy(out, c);
    }
    write_allowed_implausible(
        out,
        report.fit_warning.as_deref(),
        report.implausible_allowed,
    );
    for f in &report.outliers {
        let file = match joint {
            true => format!("best_fit_{}.parquet", f.film),
            false => "best_fit.parquet".to_string(),
        };
        write_outliers(out, &f.outliers, f.limit_m, &f.camera, &file);
    }
    if let Some(r) = &report.refined {
        write_refined(out, r);
    }
    for g in &report.goodness {
        write_goodness(out, &g.test, joint.then_some(g.film.as_str()));
    }
    if let (Some(r), [g], false) = (&report.refined, &report.goodness[..], joint) {
        write_robust(out, r, &g.test);
    }
    write_freed(out, &report.freed, joint);
    write_validations(out, report);
    write_written(out, report);
}

/// Each film's validation (named when there are several).
fn write_validations(out: &mut String, report: &IdentifyReport) {
    for (name, v) in &report.validations {
        if report.films.len() > 1 {
            say!(out, "film {name}: ");
        }
        write_validation(out, v);
    }
}

/// The files a run wrote: a shard's part (and how to merge them), or a
/// whole run's results, best fits, refinement and figures.
fn write_written(out: &mut String, report: &IdentifyReport) {
    if let Some(shard) = report.shard {
        if report.results.is_empty() && report.films.len() == 1 {
            sayln!(
                out,
                "shard {shard} is empty: the grid has fewer candidates than shards, so this one has none to run"
            );
        }
        let parts: Vec<String> = match report.films.len() {
            1 => vec![report.table_path.display().to_string()],
            _ => report
                .parts
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
        };
        sayln!(
            out,
            "wrote {}; when every shard is done, `tether-sweep summarize {}` merges them",
            parts.join(", "),
            report.out.display()
        );
        return;
    }
    let fits: Vec<String> = match report.films.len() {
        1 => vec!["best_fit.parquet".to_string()],
        _ => (report.weights.iter())
            .map(|w| format!("best_fit_{}.parquet", w.name))
            .collect(),
    };
    sayln!(
        out,
        "wrote {}, {}{} and figures {} (.svg, .png)",
        report.table_path.display(),
        fits.join(", "),
        if report.refined.is_some() {
            ", refined.parquet"
        } else {
            ""
        },
        report.figures.join(", ")
    );
}
