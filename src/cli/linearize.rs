//! `tether-sweep linearize`: the linearized model about the hanging
//! equilibrium.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toml::{Table, Value};

use super::UsageError;
use super::args::{TETHER_FLAGS, TetherArgs, name_flags};
use super::identify::say;
use crate::io::config::{self, ConfigError};
use crate::text::linearize as text;
use crate::workflow::linearize::{LinearizeRequest, run as linearize};

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
    say(|out| text::write_report(out, &report, args.modes));
    Ok(())
}
