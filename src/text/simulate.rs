//! A simulation's plan and report as text: the header, the run's summary and each solver's.

use super::sayln;
use crate::scenario::ScenarioKind;
use crate::scenario::SolverReport;
use crate::solver::ImplicitMethod;
use crate::workflow::simulate::SimulateReport;
use crate::workflow::simulate::SimulateRequest;
use std::path::Path;

pub fn write_header(out: &mut String, request: &SimulateRequest) {
    let cfg = &request.config;
    let t = &cfg.tether;
    sayln!(
        out,
        "{} | n = {}, D = {} Pa·s, C_D = {}, tip mass = {} kg, rotary inertia {} | {:.3} s | solver: {}",
        match cfg.scenario.kind() {
            ScenarioKind::Drop => "drop",
            ScenarioKind::Swingup => "swingup",
        },
        t.elements,
        t.damping_pa_s,
        t.drag_coefficient,
        t.tip_mass_kg,
        if t.rotary_inertia { "on" } else { "off" },
        cfg.scenario.duration_s(),
        cfg.solver.kind.name(),
    );
}

pub fn write_summary(
    out: &mut String,
    request: &SimulateRequest,
    report: &SimulateReport,
    path: &Path,
) {
    let output = &report.output;
    write_solver(out, request, &output.report, report.wall_s);
    let track = &output.track;
    let last = track.times_s.len() - 1;
    let tip = track.at(last, track.markers() - 1);
    sayln!(
        out,
        "tip (marker {}) at t = {:.3} s: x = {:.6} m, y = {:.6} m",
        track.markers() - 1,
        track.times_s[last],
        tip[0],
        tip[1]
    );
    if let Some(obj) = &output.swingup {
        sayln!(
            out,
            "J_a,min = {:.6} m at t = {:.3} s",
            obj.j_a_min,
            obj.t_at_min_s
        );
    }
    sayln!(
        out,
        "wrote {} rows ({} frames × {} markers) to {}",
        track.positions_m.len(),
        track.times_s.len(),
        track.markers(),
        path.display()
    );
    if let Some(state) = &request.state {
        let nodes = request.config.tether.elements + 1;
        sayln!(
            out,
            "wrote the nodal state, {} rows ({} frames × {nodes} nodes: x, y, slopes and their rates), to {}",
            track.times_s.len() * nodes,
            track.times_s.len(),
            state.display()
        );
    }
}

/// A note where `[camera]` is given: it says how a measured file of this
/// experiment is written, and a simulation's own track stays in the
/// model's frame.
pub fn camera_note(request: &SimulateRequest) -> Option<&'static str> {
    (!request.config.camera.is_default()).then_some(
        "note: [camera] applies to measured files (identify, dataset synth); the simulated track is written in the model's frame (metres, y up)",
    )
}

/// What the solver did, by its kind.
pub fn write_solver(
    out: &mut String,
    request: &SimulateRequest,
    solver: &SolverReport,
    wall_s: f64,
) {
    match *solver {
        SolverReport::FixedStep {
            scheme,
            step_s,
            steps,
        } => sayln!(
            out,
            "{}: step {step_s:.4e} s, {steps} steps, {wall_s:.3} s wall",
            scheme.name()
        ),
        SolverReport::Gpu {
            scheme,
            step_s,
            steps,
            precision,
            layout,
        } => sayln!(
            out,
            "GPU {} ({}, {} layout): step {step_s:.4e} s, {steps} steps, {wall_s:.3} s wall",
            scheme.name(),
            precision.name(),
            layout.name()
        ),
        SolverReport::GpuAdaptive {
            precision,
            tolerance_m,
            steps,
            rejected_steps,
            newton_iterations,
            factorizations,
            max_local_error_m,
        } => sayln!(
            out,
            "GPU reference ({}): {steps} steps ({rejected_steps} rejected), {newton_iterations} Newton iterations, {factorizations} factorizations; \
             local error ≤ {max_local_error_m:.1e} m (tolerance {tolerance_m:.1e} m); {wall_s:.3} s wall",
            precision.name()
        ),
        SolverReport::Reference(s) => sayln!(
            out,
            "reference{}: {} steps ({} rejected), step {:.2e}..{:.2e} s, {} Newton iterations, {} factorizations; \
             local error ≤ {:.1e} m (tolerance {:.1e} m); {wall_s:.3} s wall",
            match request.config.solver.reference.method {
                ImplicitMethod::GeneralizedAlpha => String::new(),
                other => format!(" ({other})"),
            },
            s.steps,
            s.rejected_steps,
            s.min_step_s,
            s.max_step_s,
            s.newton_iterations,
            s.factorizations,
            s.max_local_error_m,
            request.config.solver.reference.tolerance_m
        ),
    }
}
