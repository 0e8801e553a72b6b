//! A benchmark's columns and outcome as text.

use super::sayln;
use crate::workflow::bench::BenchOutcome;

pub fn gflops(p: Option<f64>) -> String {
    p.map_or("-".to_string(), |p| format!("{p:.1}"))
}

fn seconds(s: Option<f64>) -> String {
    s.map_or("-".to_string(), |s| format!("{s:.3}"))
}

/// The table's header, as `print_outcome` fills its rows.
pub fn write_columns(out: &mut String) {
    sayln!(
        out,
        "{:<21} {:<9} {:>4} {:>6} {:>9} {:>12} {:>10} {:>14} {:>8} {:>7} {:>8} {:>7} {:>9} {:>10} {:>9} {:>8} {:>6}",
        "engine",
        "layout",
        "n",
        "batch",
        "wall s",
        "element-steps",
        "sims/s",
        "el-steps/s",
        "GFLOP/s",
        "% peak",
        "setup s",
        "S×T",
        "B/sim",
        "chain/step",
        "device s",
        "host s",
        "subs"
    );
}

pub fn write_outcome(out: &mut String, outcome: &BenchOutcome) {
    match outcome {
        BenchOutcome::Skipped {
            engine,
            elements,
            batch,
            reason,
        } => sayln!(
            out,
            "{:<21} {:<9} {:>4} {:>6} skipped: {reason}",
            engine.bench_name(),
            engine.gpu_layout().map_or("-", |l| l.name()),
            elements,
            batch
        ),
        BenchOutcome::Measured(r) => sayln!(
            out,
            "{:<21} {:<9} {:>4} {:>6} {:>9.3} {:>12.3e} {:>10.2} {:>14.3e} {:>8} {:>7} {:>8} {:>7} {:>9} {:>10} {:>9} {:>8} {:>6}",
            r.engine.bench_name(),
            r.layout.map_or("-", |l| l.layout.name()),
            r.elements,
            r.batch,
            r.wall_s,
            r.element_steps as f64,
            r.simulations_per_s,
            r.element_steps_per_s,
            r.gflops.map_or("-".into(), |g| format!("{g:.2}")),
            r.peak_fraction
                .map_or("-".into(), |f| format!("{:.1}", 100.0 * f)),
            r.setup_s.map_or("-".into(), |s| format!("{s:.3}")),
            r.layout.map_or("-".into(), |l| format!(
                "{}×{}",
                l.sims_per_workgroup, l.lanes
            )),
            r.layout
                .map_or("-".into(), |l| l.workgroup_bytes_per_sim.to_string()),
            r.layout
                .map_or("-".into(), |l| l.chain_flops_per_step.to_string()),
            seconds(r.stages.and_then(|s| s.device_s)),
            seconds(r.stages.and_then(|s| s.host_s())),
            r.stages.map_or("-".into(), |s| s.submissions.to_string()),
        ),
    }
}
