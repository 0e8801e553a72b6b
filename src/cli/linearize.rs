//! `tether-sweep linearize`: the linearized model about the hanging
//! equilibrium.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::TetherArgs;
use crate::workflow::keywords::Door;
use crate::workflow::linearize::LinearizeInputs;

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

impl LinearizeArgs {
    /// The library's inputs these flags give (the builder Python fills
    /// too).
    pub fn inputs(&self) -> LinearizeInputs {
        LinearizeInputs {
            tether_inputs: self.tether.inputs(),
            frequency_min_hz: self.frequency_min,
            frequency_max_hz: self.frequency_max,
            frequency_points: self.frequency_points,
            modes: self.modes,
            out: self.out.clone(),
            force: self.force,
        }
    }
}

pub fn run(args: LinearizeArgs) -> Result<()> {
    crate::jobs::linearize::execute(&args.inputs(), Door::CommandLine)
}
