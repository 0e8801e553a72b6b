//! `tether-sweep identify --config a.toml --config b.toml`: one tether
//! fitted to several films (the work is `tether_sweep::workflow::identify`).

use anyhow::Result;

use super::UsageError;
use super::args::{name_flags, number};
use super::identify::{
    IdentifyArgs, describe_camera, device_text, parameter_axes_text, print_accuracy,
    print_allowed_implausible, print_experiment, print_goodness, print_outliers, print_refined,
    print_summary, print_tracked_pin, print_validation, sweep_solver_text,
};
use super::progress::{ProgressBar, interrupt_flag};
use tether_sweep::sweep::grid::parse_axis;
use tether_sweep::sweep::{Parameter, ParameterAxis};
use tether_sweep::workflow::film::Film;
use tether_sweep::workflow::identify::{
    FilmPlan, IdentifyReport, IdentifyRequest, Plan, check_outcome, prepare,
};
use tether_sweep::workflow::{Hooks, WorkflowError, count};

/// The flags of the values the workflow checks, by their field names.
const FLAGS: [(&str, &str); 6] = [
    ("chunk_size", "--chunk-size"),
    ("tolerance_m", "--tolerance"),
    ("validate_marker_tolerance_m", "--validate-marker-tolerance"),
    ("validate_j_e_tolerance", "--validate-j-e-tolerance"),
    ("surface", "--surface"),
    ("axis", "--axis"),
];

pub fn run(args: &IdentifyArgs) -> Result<()> {
    let request = joint_request(args)?;
    let cancel = interrupt_flag();
    let prepared = prepare(request.clone()).map_err(|e| name_flags(e, &FLAGS))?;
    print_plan(&request, &prepared.plan);
    let progress = ProgressBar::new("film candidates");
    let report = |done: u64, total: u64| progress.report(done, total);
    let result = prepared.run(Hooks {
        progress: Some(&report),
        cancel: Some(cancel),
        estimate: None,
    });
    progress.finish();
    let report = result?;
    print_report(&report);
    Ok(check_outcome(&report)?)
}

/// The joint request: the single-film request's shared settings (grid,
/// engine, tether, checks, output), and one film per config.
fn joint_request(args: &IdentifyArgs) -> Result<IdentifyRequest> {
    if args.measured.is_some() {
        Err(UsageError(
            "--measured names one film's file; with several --config, give each config its file as measured = \"FILE\" in [settings]".into(),
        ))?;
    }
    let single = args.request()?;
    let mut configs = Vec::with_capacity(args.config.len());
    for path in &args.config {
        let config = args.film_of(path)?;
        if config.measured.is_none() {
            Err(UsageError(format!(
                "{}: no measured = \"FILE\" in [settings]: with several --config, each names its film's file",
                path.display()
            )))?
        }
        configs.push(config);
    }
    let mut request = IdentifyRequest::of_configs(configs, single.grid.clone(), &single.out)?;
    add_film_axes(args, &mut request.films)?;
    Ok(IdentifyRequest {
        films: request.films,
        ..single
    })
}

/// Each `--axis FILM.NAME=AXIS` onto its film.
fn add_film_axes(args: &IdentifyArgs, films: &mut [Film]) -> Result<()> {
    for text in &args.axes {
        let Some((name, values)) = text.split_once('=') else {
            continue;
        };
        let Some((film, parameter)) = name.split_once('.') else {
            continue;
        };
        let names = || {
            films
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(k) = films.iter().position(|f| f.name == film) else {
            Err(UsageError(format!(
                "--axis {name}: no film is named '{film}' (the films: {})",
                names()
            )))?
        };
        let flag = format!("--axis {name}");
        let parameter = Parameter::parse(parameter).map_err(|e| WorkflowError::flag(&flag, e))?;
        let values = parse_axis(name, values).map_err(|e| WorkflowError::flag(&flag, e))?;
        if films[k].own.iter().any(|a| a.parameter == parameter) {
            Err(UsageError(format!("--axis {name} given twice")))?;
        }
        films[k].own.push(ParameterAxis { parameter, values });
    }
    Ok(())
}

fn print_plan(request: &IdentifyRequest, plan: &Plan) {
    if let Some(reason) = &plan.engine_reason {
        eprintln!("{reason}");
    }
    print_header(request, plan);
    let resumed: usize = plan.films.iter().map(|f| f.resumed).sum();
    if resumed > 0 {
        println!(
            "resuming: {resumed} film candidates from saved chunks, {} to run",
            plan.films.iter().map(|f| f.candidates).sum::<usize>() - resumed
        );
    }
}

fn print_header(request: &IdentifyRequest, plan: &Plan) {
    let grid = &request.grid;
    let simulations: usize = plan.films.iter().map(|f| f.simulations).sum();
    println!(
        "joint identification of {} films of one tether: {} shared candidates (n: {}, D: {}, C_D: {}{}), {}{} film candidates by {} on {}, {} ({})",
        plan.films.len(),
        plan.candidates,
        grid.elements.len(),
        grid.damping_pa_s.len(),
        grid.drag_coefficient.len(),
        parameter_axes_text(grid),
        match &request.shard {
            Some(s) => format!("shard {s}: "),
            None => String::new(),
        },
        plan.films.iter().map(|f| f.candidates).sum::<usize>(),
        count(simulations, "simulation"),
        device_text(plan.adapter.as_deref()),
        sweep_solver_text(
            plan.engine.solver().name(),
            plan.scout_tolerance_m,
            request.tolerance_m,
            request.shard.is_some(),
        ),
        plan.engine.precision().name(),
    );
    for (f, given) in plan.films.iter().zip(&request.films) {
        print_film(f, given);
    }
}

/// One film of the plan: its file, candidates, experiment and camera.
fn print_film(f: &FilmPlan, given: &Film) {
    let own: Vec<String> = f
        .own
        .iter()
        .map(|a| format!("{}.{} ({} values)", f.name, a.parameter, a.values.len()))
        .collect();
    println!(
        "film {}: {}, {} candidates by {}{}",
        f.name,
        f.measured,
        f.candidates,
        count(f.simulations, "simulation"),
        if own.is_empty() {
            String::new()
        } else {
            format!("; its own axes {}", own.join(", "))
        }
    );
    print!("  ");
    print_experiment(&f.scenario, !f.own.is_empty());
    if !given.camera.is_default() {
        println!("  camera: {}", describe_camera(&given.camera));
    }
    print_tracked_pin(f.tracked_pin.as_ref(), &given.camera, "  ");
    let missing = f.coverage.missing();
    if missing > 0 {
        println!(
            "  {} of the {} marker positions J_e compares are not in the file ({} with an empty or NaN position): skipped",
            count(missing, "sample"),
            f.coverage.expected,
            f.occluded_rows
        );
    }
}

fn print_report(report: &IdentifyReport) {
    println!(
        "{} film candidates in {:.1} s by {} ({:.1} simulations/s)",
        report.scored,
        report.wall_s,
        count(report.simulations, "simulation"),
        report.simulations as f64 / report.wall_s
    );
    if report.shard.is_some() {
        let parts: Vec<String> = report
            .parts
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        for (name, v) in &report.validations {
            print!("film {name}: ");
            print_validation(v);
        }
        println!(
            "wrote {}; when every shard is done, `tether-sweep summarize {}` merges them",
            parts.join(", "),
            report.out.display()
        );
        return;
    }
    print_joint(report);
}

/// A whole joint run's (or a merge's) findings: each film's noise and
/// weight, the summary, the refinement, the validations and the files.
pub(super) fn print_joint(report: &IdentifyReport) {
    println!(
        "each film's noise from its own best candidate, σ = √(J_min/(N−2)), and its weight in the joint J_e (the inverse of σ², averaging 1 a coordinate):"
    );
    for w in &report.weights {
        println!(
            "  {}: σ ≈ {:.3} mm over {} coordinates (J_min = {:.6e} m²), weight {}",
            w.name,
            w.sigma_m * 1e3,
            w.observations,
            w.j_min_m2,
            number((w.weight * 1e4).round() / 1e4)
        );
    }
    if let Some(s) = &report.summary {
        print_summary(s, false);
        print_own_at_best(report);
    }
    if let Some(c) = &report.accuracy {
        print_accuracy(c);
    }
    print_allowed_implausible(report.fit_warning.as_deref(), report.implausible_allowed);
    for f in &report.outliers {
        let file = format!("best_fit_{}.parquet", f.film);
        print_outliers(&f.outliers, f.limit_m, &f.camera, &file);
    }
    if let Some(r) = &report.refined {
        print_refined(r);
    }
    for g in &report.goodness {
        print_goodness(&g.test, Some(&g.film));
    }
    for (name, v) in &report.validations {
        print!("film {name}: ");
        print_validation(v);
    }
    let fits: Vec<String> = report
        .weights
        .iter()
        .map(|w| format!("best_fit_{}.parquet", w.name))
        .collect();
    println!(
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

/// Each film's own values at the joint best, where it has own axes.
fn print_own_at_best(report: &IdentifyReport) {
    let Some(s) = &report.summary else { return };
    let Some(at) = report
        .results
        .iter()
        .position(|r| r.candidate == s.best.candidate)
    else {
        return;
    };
    let own: Vec<String> = report
        .weights
        .iter()
        .zip(&report.scores)
        .flat_map(|(w, scores)| {
            let film_score = &scores[at];
            film_score
                .own
                .iter()
                .map(move |(p, v)| format!("{}.{p} = {v}", w.name))
                .chain(std::iter::once(format!(
                    "{}'s J_e = {:.6e} m²",
                    w.name,
                    film_score.j_e_m2.unwrap_or(f64::NAN)
                )))
        })
        .collect();
    println!("at the best: {}", own.join(", "));
}
