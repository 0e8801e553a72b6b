//! A linearized model's report as text: its equilibrium and modes.

use super::sayln;
use crate::workflow::linearize::LinearizeReport;

pub fn write_report(out: &mut String, report: &LinearizeReport, modes: usize) {
    let p = &report.params;
    let two_pi = 2.0 * std::f64::consts::PI;
    sayln!(
        out,
        "linearized about the hanging equilibrium | n = {}, D = {} Pa·s, tip mass {} kg, C_D = {} (drag linearizes to zero at rest) | {:.3} s",
        p.elements,
        p.damping_pa_s,
        p.tip_mass_kg,
        p.drag_coefficient,
        report.wall_s
    );
    sayln!(
        out,
        "static stretch of the tip: {:.6e} m; {} modes",
        report.stretch_m,
        report.modes.len()
    );
    sayln!(
        out,
        "{:>5} {:>14} {:>12} {:>14}",
        "mode",
        "omega [rad/s]",
        "f [Hz]",
        "damping ratio"
    );
    for (k, m) in report.modes.iter().take(modes).enumerate() {
        sayln!(
            out,
            "{:>5} {:>14.5} {:>12.5} {:>14.4e}",
            k + 1,
            m.omega_rad_s,
            m.omega_rad_s / two_pi,
            m.damping_ratio
        );
    }
    let top = report.modes.last().expect("at least one mode");
    sayln!(
        out,
        "highest: {:.4e} rad/s (damping ratio {:.3}); the explicit solver's step follows from it",
        top.omega_rad_s,
        top.damping_ratio
    );
    let (responses, frequencies) = (&report.responses, &report.frequencies_hz);
    let peak = responses
        .iter()
        .zip(frequencies)
        .max_by(|a, b| a.0[0].norm().total_cmp(&b.0[0].norm()))
        .expect("at least two frequencies");
    sayln!(
        out,
        "tip x / winch x: {:.4} at {:.3} Hz (static gain 1); largest {:.1} at {:.3} Hz",
        responses[0][0].norm(),
        frequencies[0],
        peak.0[0].norm(),
        peak.1
    );
    for p in &report.written {
        sayln!(out, "wrote {}", p.display());
    }
}
