//! A constrained body's run as text: what ran, its cost, and its drift or
//! its tracking error.

use super::sayln;
use crate::constrained::integrate::Ending;
use crate::named::Named;
use crate::workflow::bodies::{BodyReport, BodySweepReport, SETTLED_M};

pub fn write_summary(out: &mut String, r: &BodyReport) {
    sayln!(
        out,
        "{}{}: {} output times, {} steps ({} evaluations), wrote {} and its figure",
        r.body.name(),
        r.formulation
            .map(|f| format!(" ({})", f.name()))
            .unwrap_or_default(),
        r.rows,
        r.steps,
        r.evaluations,
        r.out.display()
    );
    if let (Some(d), Some(v)) = (r.max_drift_m, r.max_drift_rate_m_s) {
        sayln!(
            out,
            "constraint drift: |Φ| ≤ {d:.2e} m, |Φ̇| ≤ {v:.2e} m/s over the outputs"
        );
    }
    if let Some(pull) = r.max_pull_n {
        sayln!(
            out,
            "carried tether: its pull on the end point peaks at {pull:.4} N (in the torques; its markers in the table)"
        );
    }
    if let Some(solver) = &r.tether_solver {
        sayln!(out, "carried tether run by the {solver}");
    }
    if let (Some(max), Some(last)) = (r.max_tracking_error_m, r.final_tracking_error_m) {
        let settled = match r.settled_at_s {
            Some(t) => format!("under {} mm from t = {t:.2} s on", SETTLED_M * 1e3),
            None => format!("not under {} mm by the end", SETTLED_M * 1e3),
        };
        sayln!(
            out,
            "tracking error: largest {max:.4} m, last {last:.2e} m; {settled}"
        );
    }
}

/// Why a run failed, for its error: where, why, and what was kept.
pub fn failure(r: &BodyReport) -> Option<String> {
    match &r.ending {
        Ending::Finished => None,
        Ending::Failed { t_s, reason } => Some(format!(
            "{} failed at t = {t_s:.6} s: {reason} ({} rows up to there written to {})",
            r.formulation.map_or(r.body.name(), |f| f.name()),
            r.rows,
            r.out.display()
        )),
    }
}

pub fn write_sweep(out: &mut String, body: &str, r: &BodySweepReport, path: &std::path::Path) {
    sayln!(
        out,
        "{body} sweep: {} candidates in {:.2} s on all cores, {} failed; wrote {} (one row each, with its evaluation columns)",
        r.candidates,
        r.wall_s,
        r.failed,
        path.display()
    );
    if let Some(solver) = &r.tether_solver {
        sayln!(out, "carried tethers run by the {solver}");
    }
}
