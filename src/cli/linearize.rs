//! `tether-sweep linearize`: the linearized model about the hanging
//! equilibrium.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toml::{Table, Value};

use super::UsageError;
use super::args::{TETHER_FLAGS, TetherArgs, name_flags};
use tether_sweep::io::config::{self, ConfigError};
use tether_sweep::workflow::linearize::{LinearizeReport, LinearizeRequest, run as linearize};

#[derive(Debug, Args)]
pub struct LinearizeArgs {
    #[command(flatten)]
    pub tether: TetherArgs,
    /// Lowest frequency of the frequency response [Hz], > 0.
    #[arg(long, value_name = "HZ", default_value_t = 0.05)]
    pub frequency_min: f64,
    /// Highest frequency of the frequency response [Hz], > frequency-min.
    #[arg(long, value_name = "HZ", default_value_t = 50.0)]
    pub frequency_max: f64,
    /// Number of log-spaced frequencies, 2..=100000.
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub frequency_points: usize,
    /// How many of the lowest modes to print and draw, ≥ 1.
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub modes: usize,
    /// Output directory (created if missing): modes.parquet,
    /// mode_shapes.parquet, statespace.parquet, frequency_response.parquet,
    /// bode.{svg,png}, mode_shapes.{svg,png}.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace the results of an earlier run in DIR.
    #[arg(long)]
    pub force: bool,
}

/// The flags of the values the linearization checks, by the library's
/// field names.
const FLAGS: [(&str, &str); 4] = [
    ("frequency_min_hz", "--frequency-min"),
    ("frequency_max_hz", "--frequency-max"),
    ("frequency_points", "--frequency-points"),
    ("modes", "--modes"),
];

pub fn run(args: LinearizeArgs) -> Result<()> {
    // The swing-up's defaults (tip mass 21 g): this model is for designing it.
    let mut table = Table::new();
    table.insert("scenario".into(), Value::String("swingup".into()));
    table.insert("tether".into(), Value::Table(args.tether.table()));
    let params = match config::resolve(table) {
        Ok(cfg) => cfg.tether,
        Err(ConfigError::Input(e)) => Err(name_flags(e.into(), &TETHER_FLAGS))?,
        Err(e) => Err(UsageError(e.to_string()))?,
    };
    let report = linearize(&LinearizeRequest {
        params,
        frequency_min_hz: args.frequency_min,
        frequency_max_hz: args.frequency_max,
        frequency_points: args.frequency_points,
        modes: args.modes,
        out: args.out.clone(),
        force: args.force,
    })
    .map_err(|e| name_flags(e, &FLAGS))?;
    print_report(&report, args.modes);
    Ok(())
}

fn print_report(report: &LinearizeReport, modes: usize) {
    let p = &report.params;
    let two_pi = 2.0 * std::f64::consts::PI;
    println!(
        "linearized about the hanging equilibrium | n = {}, D = {} Pa·s, tip mass {} kg, C_D = {} (drag linearizes to zero at rest) | {:.3} s",
        p.elements, p.damping_pa_s, p.tip_mass_kg, p.drag_coefficient, report.wall_s
    );
    println!(
        "static stretch of the tip: {:.6e} m; {} modes",
        report.stretch_m,
        report.modes.len()
    );
    println!(
        "{:>5} {:>14} {:>12} {:>14}",
        "mode", "omega [rad/s]", "f [Hz]", "damping ratio"
    );
    for (k, m) in report.modes.iter().take(modes).enumerate() {
        println!(
            "{:>5} {:>14.5} {:>12.5} {:>14.4e}",
            k + 1,
            m.omega_rad_s,
            m.omega_rad_s / two_pi,
            m.damping_ratio
        );
    }
    let top = report.modes.last().expect("at least one mode");
    println!(
        "highest: {:.4e} rad/s (damping ratio {:.3}); the explicit solver's step follows from it",
        top.omega_rad_s, top.damping_ratio
    );
    let (responses, frequencies) = (&report.responses, &report.frequencies_hz);
    let peak = responses
        .iter()
        .zip(frequencies)
        .max_by(|a, b| a.0[0].norm().total_cmp(&b.0[0].norm()))
        .expect("at least two frequencies");
    println!(
        "tip x / winch x: {:.4} at {:.3} Hz (static gain 1); largest {:.1} at {:.3} Hz",
        responses[0][0].norm(),
        frequencies[0],
        peak.0[0].norm(),
        peak.1
    );
    for p in &report.written {
        println!("wrote {}", p.display());
    }
}
