//! Several films' plan and report: the joint header, each film's checks,
//! each film's noise and weight, and its own values at the joint best.

use super::{
    describe_camera, engine_words, fixed_lengths, parameter_axes_text, write_experiment,
    write_findings, write_missing, write_tracked_pin, write_validations, write_written,
};
use crate::text::{number, say, sayln};
use crate::workflow::count;
use crate::workflow::film::Film;
use crate::workflow::identify::{FilmPlan, IdentifyReport, IdentifyRequest, Plan};

pub(super) fn write_joint_plan(out: &mut String, request: &IdentifyRequest, plan: &Plan) {
    write_joint_header(out, request, plan);
    let resumed: usize = plan.films.iter().map(|f| f.resumed).sum();
    if resumed > 0 {
        sayln!(
            out,
            "resuming: {resumed} film candidates from saved chunks, {} to run",
            plan.films.iter().map(|f| f.candidates).sum::<usize>() - resumed
        );
    }
}

pub fn write_joint_header(out: &mut String, request: &IdentifyRequest, plan: &Plan) {
    let grid = &request.grid;
    let simulations: usize = plan.films.iter().map(|f| f.simulations).sum();
    let [device, solver, precision] = engine_words(request, plan);
    sayln!(
        out,
        "joint identification of {} films of one tether: {} shared candidates (n: {}, D: {}, C_D: {}{}), {}{} film candidates by {} on {device}, {solver} ({precision})",
        plan.films.len(),
        plan.candidates,
        fixed_lengths(grid)[0],
        fixed_lengths(grid)[1],
        fixed_lengths(grid)[2],
        parameter_axes_text(grid),
        match &request.shard {
            Some(s) => format!("shard {s}: "),
            None => String::new(),
        },
        plan.films.iter().map(|f| f.candidates).sum::<usize>(),
        count(simulations, "simulation"),
    );
    for (f, given) in plan.films.iter().zip(&request.films) {
        write_joint_film(out, f, given);
    }
}

/// One film of the plan: its file, candidates, experiment and camera.
pub fn write_joint_film(out: &mut String, f: &FilmPlan, given: &Film) {
    let own: Vec<String> = f
        .own
        .iter()
        .map(|a| format!("{}.{} ({} values)", f.name, a.axis, a.values.len()))
        .collect();
    sayln!(
        out,
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
    say!(out, "  ");
    write_experiment(out, &f.scenario, !f.own.is_empty());
    if !given.camera.is_default() {
        sayln!(out, "  camera: {}", describe_camera(&given.camera));
    }
    write_tracked_pin(out, f.tracked_pin.as_ref(), &given.camera, "  ");
    write_missing(out, f, "  ");
}

pub(super) fn write_joint_report(out: &mut String, report: &IdentifyReport) {
    sayln!(
        out,
        "{} film candidates in {:.1} s by {} ({:.1} simulations/s)",
        report.scored,
        report.wall_s,
        count(report.simulations, "simulation"),
        report.simulations as f64 / report.wall_s
    );
    if report.shard.is_some() {
        // A joint shard's films are combined only when the parts are
        // merged: it has validations and parts, no findings yet.
        write_validations(out, report);
        write_written(out, report);
        return;
    }
    write_joint(out, report);
}

/// A whole joint run's (or a merge's) findings, from each film's noise and
/// weight on.
pub(super) fn write_joint(out: &mut String, report: &IdentifyReport) {
    sayln!(
        out,
        "each film's noise from its own best candidate, σ = √(J_min/(N−2)), and its weight in the joint J_e (the inverse of σ², averaging 1 a coordinate):"
    );
    for w in &report.weights {
        sayln!(
            out,
            "  {}: σ ≈ {:.3} mm over {} coordinates (J_min = {:.6e} m²), weight {}",
            w.name,
            w.sigma_m * 1e3,
            w.observations,
            w.j_e_m2,
            number((w.weight * 1e4).round() / 1e4)
        );
    }
    write_findings(out, report);
}

/// Each film's own values at the joint best, where it has own axes.
pub fn write_own_at_best(out: &mut String, report: &IdentifyReport) {
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
    sayln!(out, "at the best: {}", own.join(", "));
}
