//! `tether-sweep dataset synth`: a synthetic measured drop.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use super::args::named;
use crate::io::track::TrackLayout;
use crate::workflow::keywords::{ConfigInput, Door, TetherInputs};
use crate::workflow::synth::SynthInputs;

#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Simulate the paper's drop with the reference solver on a fine mesh and add
    /// seeded Gaussian marker noise: a "measured" track with known truth.
    /// Defaults: n = 80, D = 2000 Pa·s, C_D = 0.8, noise 0.5 mm, seed 2010.
    #[command(allow_negative_numbers = true)]
    Synth(SynthArgs),
}

/// The shipped dataset's tether: a finer mesh than any grid candidate
/// (≤ 50) and the paper's identified D and C_D.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Number of ANCF elements n (1..=1024).
    #[arg(long, value_name = "N", default_value_t = 80)]
    pub elements: usize,
    /// Kelvin–Voigt material damping D [Pa·s], ≥ 0.
    #[arg(long, value_name = "D", default_value_t = 2000.0)]
    pub damping: f64,
    /// Air drag coefficient C_D [-], ≥ 0.
    #[arg(long, value_name = "CD", default_value_t = 0.8)]
    pub drag_coefficient: f64,
    /// Point mass at the free end [kg], ≥ 0.
    #[arg(long, value_name = "KG")]
    pub tip_mass: Option<f64>,
    /// Tether length L [m], > 0.
    #[arg(long, value_name = "M")]
    pub length: Option<f64>,
    /// Leave the rotary-inertia term ρ I ∫ S_xᵀ S_x ds out of the mass matrix.
    #[arg(long)]
    pub no_rotary_inertia: bool,
    /// Standard deviation of the noise on each marker coordinate [m], ≥ 0.
    #[arg(long, value_name = "M", default_value_t = 5e-4)]
    pub noise: f64,
    /// Seed of the noise generator (ChaCha8); same seed, same file.
    #[arg(long, default_value_t = 2010)]
    pub seed: u64,
    /// Reference solver's local error tolerance [m].
    #[arg(long, value_name = "M", default_value_t = 1e-10)]
    pub tolerance: f64,
    /// The table's layout: long (t, marker, s, x, y per row) or wide (t,
    /// then x0, y0, x1, y1, … per frame, as trackers export). Either is in
    /// the config's [camera] frame, unit and clock.
    #[arg(long, value_parser = named::<TrackLayout>(), default_value_t = TrackLayout::Long)]
    pub layout: TrackLayout,
    /// Output file (.parquet or .csv).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// A filmed drop of your own, as `simulate --config` takes it:
    /// [tether] (every docs/model.md §1 parameter), [settings] (pin_m,
    /// initial_angle_deg, marker_arc_lengths_m, release_time_s, and
    /// frame_times_s or frame_interval_s with duration_s) and [camera]
    /// (the file's unit, y axis, gravity, pin and clock:
    /// docs/conventions.md). The flags above set n, D, C_D and override the
    /// tip mass and length.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

impl SynthArgs {
    /// The library's inputs these flags give (the builder Python fills
    /// too).
    pub fn inputs(&self) -> SynthInputs {
        SynthInputs {
            tether_inputs: TetherInputs {
                elements: Some(self.elements as i64),
                damping_pa_s: Some(self.damping),
                drag_coefficient: Some(self.drag_coefficient),
                tip_mass_kg: self.tip_mass,
                length_m: self.length,
                no_rotary_inertia: self.no_rotary_inertia,
            },
            noise_m: self.noise,
            seed: self.seed,
            tolerance_m: self.tolerance,
            layout: self.layout,
            config: self.config.clone().map(ConfigInput::File),
            overlays: toml::Table::new(),
            command: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
            out: self.out.clone(),
            force: self.force,
        }
    }
}

pub fn run_synth(args: SynthArgs) -> Result<()> {
    crate::jobs::synth::execute(&args.inputs(), Door::CommandLine)
}
