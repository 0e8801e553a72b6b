//! A swing-up search's plan and report as text: the header, the searched and confirmed answer, the global optimum found.

use super::{number, numbers, sayln};
use crate::ga::Evaluation;
use crate::ga::GeneCoding;
use crate::ga::Individual;
use crate::ga::confirm::SwingupConfirmation;
use crate::workflow::swingup::Answer;
use crate::workflow::swingup::GlobalOptimum;
use crate::workflow::swingup::SwingupReport;
use crate::workflow::swingup::SwingupRequest;
use crate::workflow::swingup::periods_at_bounds;

pub fn periods_text(t: &[f64]) -> String {
    format!("T = {:.3}, {:.3}, {:.3} s", t[0], t[1], t[2])
}

pub fn fitness_text(e: &Evaluation) -> String {
    match (e.j_a_min_m, e.t_at_min_s) {
        (Some(j), Some(t)) => format!("J_a,min = {j:.6} m at t = {t:.3} s"),
        _ => e.status.name().to_string(),
    }
}

pub fn write_header(
    out: &mut String,
    request: &SwingupRequest,
    prepared: &crate::workflow::swingup::PreparedSwingup,
) {
    let problem = &request.problem;
    let coding = &problem.coding;
    let p = &problem.params;
    let engine = prepared.choice().engine.kind();
    sayln!(
        out,
        "swingup: n = {}, D = {} Pa·s, C_D = {}, tip mass = {} kg | waypoints {} m | {} bits ({} chromosomes), T in [{}, {}] s | {:.2} s horizon | {}, {} solver, {}",
        p.elements,
        number(p.damping_pa_s),
        number(p.drag_coefficient),
        number(p.tip_mass_kg),
        numbers(
            problem
                .scenario
                .as_swingup()
                .map_or(&[][..], |s| &s.winch.waypoints_m[..]),
        ),
        coding.bits(),
        coding.space_size(),
        coding.period_min_s,
        coding.period_max_s,
        problem.scenario.duration_s(),
        match prepared.choice().engine.adapter_name() {
            Some(name) => format!("GPU {name}"),
            None => crate::engine::EngineKind::cpu_device_name(),
        },
        engine.solver().name(),
        engine.precision().name()
    );
}

/// The answer, how it was confirmed, and whether its periods sit on the
/// searched range's bounds.
pub fn write_answer(
    out: &mut String,
    coding: &GeneCoding,
    searched_best: &Individual,
    answer: &Answer,
) {
    let best = &answer.best;
    sayln!(
        out,
        "best: {} {} — {}",
        coding.bit_string(best.chromosome),
        periods_text(&coding.periods_s(best.chromosome)),
        fitness_text(&best.evaluation)
    );
    if let Some(c) = &answer.confirmation {
        sayln!(out, "  {}", confirmation_text(c, &answer.search));
        if best.chromosome != searched_best.chromosome {
            sayln!(
                out,
                "  the search ranked {} first ({}); on {} at {:e} m this one is fitter",
                coding.bit_string(searched_best.chromosome),
                fitness_text(&searched_best.evaluation),
                c.method,
                c.tolerance_m
            );
        }
    }
    let at_bounds = periods_at_bounds(coding, best.chromosome);
    if !at_bounds.is_empty() {
        let genes: Vec<String> = at_bounds.iter().map(|g| format!("T{g}")).collect();
        sayln!(
            out,
            "  ← {} on the bound of [--period-min, --period-max] = [{}, {}] s: the optimum may lie beyond the range searched",
            genes.join(", "),
            coding.period_min_s,
            coding.period_max_s
        );
    }
}

/// The landscape's optimum and the GA answer's rank among all.
pub fn write_global(out: &mut String, coding: &GeneCoding, best: &Individual, g: &GlobalOptimum) {
    sayln!(
        out,
        "global optimum ({} chromosomes): {} {} — {}",
        coding.space_size(),
        coding.bit_string(g.best.chromosome),
        periods_text(&coding.periods_s(g.best.chromosome)),
        fitness_text(&g.best.evaluation)
    );
    sayln!(
        out,
        "the GA's answer ranks {} of {}{}",
        g.ga_rank,
        coding.space_size(),
        if best.chromosome == g.best.chromosome {
            ": it is the global optimum"
        } else {
            ""
        }
    );
}

/// How the answer was confirmed, beside the search's score.
pub fn confirmation_text(c: &SwingupConfirmation, search: &Evaluation) -> String {
    format!(
        "confirmed at {:e} m on the reference solver's {}: the {} fittest re-run ({} round{}), largest change {:.1e} m; the search gave J_a,min = {}",
        c.tolerance_m,
        c.method,
        c.rerun,
        c.rounds,
        if c.rounds == 1 { "" } else { "s" },
        c.largest_shift_m,
        search
            .j_a_min_m
            .map_or("none".to_string(), |j| format!("{j:.6} m"))
    )
}

pub fn write_report(out: &mut String, request: &SwingupRequest, report: &SwingupReport) {
    let coding = &request.problem.coding;
    let run = &report.run;
    let answer = &report.answer;
    let best = &answer.best;
    if let Some(l) = &report.landscape {
        sayln!(
            out,
            "exhaustive: {} simulations in {:.1} s ({:.1}/s), wrote {}",
            coding.space_size(),
            l.wall_s,
            coding.space_size() as f64 / l.wall_s,
            l.path.display()
        );
    }
    write_answer(out, coding, &run.best, answer);
    sayln!(
        out,
        "found in generation {} (generations 0–{}); {} distinct chromosomes {} in {:.1} s",
        answer.found_in,
        run.generations.len() - 1,
        run.evaluations,
        if report.landscape.is_some() {
            "looked up in the landscape"
        } else {
            "simulated"
        },
        report.ga_wall_s
    );
    if let Some(layouts) = super::layouts_text(&report.gpu_layouts) {
        sayln!(out, "GPU simulations, {layouts}");
    }
    if let Some(g) = &answer.global {
        write_global(out, coding, best, g);
    }
    sayln!(
        out,
        "wrote {} (and {}{}.svg/.png) in {:.1} s",
        report.generations_path.display(),
        if report.replayed {
            "best_track.parquet, best_motion.parquet, "
        } else {
            ""
        },
        report.figures.join(".svg/.png, "),
        report.wall_s
    );
}
