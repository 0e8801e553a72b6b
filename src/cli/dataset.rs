//! `tether-sweep dataset synth`: a synthetic measured drop.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use tether_sweep::dataset::{GENERATOR, SynthSpec};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::{Scenario, ScenarioKind};
use tether_sweep::workflow::synth::{SynthRequest, run as synthesize};

#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Simulate the SPEC drop with the reference solver on a fine mesh and add
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
    #[arg(long, value_name = "KG", default_value_t = 0.0)]
    pub tip_mass: f64,
    /// Tether length L [m], > 0.
    #[arg(long, value_name = "M", default_value_t = 0.6)]
    pub length: f64,
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
    /// Output file (.parquet or .csv).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

pub fn run_synth(args: SynthArgs) -> Result<()> {
    let tether = TetherParams {
        elements: args.elements,
        damping_pa_s: args.damping,
        drag_coefficient: args.drag_coefficient,
        tip_mass_kg: args.tip_mass,
        length_m: args.length,
        rotary_inertia: !args.no_rotary_inertia,
        ..TetherParams::default()
    };
    let spec = SynthSpec {
        scenario: Scenario::new(ScenarioKind::Drop, tether.length_m),
        tether,
        noise_std_m: args.noise,
        seed: args.seed,
        tolerance_m: args.tolerance,
        generator: GENERATOR,
    };
    let report = synthesize(&SynthRequest {
        spec: spec.clone(),
        command: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        out: args.out.clone(),
        force: args.force,
    })
    .map_err(|e| super::args::name_flags(e, &super::args::TETHER_FLAGS))?;
    println!(
        "synthetic drop: n = {}, D = {} Pa·s, C_D = {}, noise σ = {} m, seed {} | {:.2} s",
        spec.tether.elements,
        spec.tether.damping_pa_s,
        spec.tether.drag_coefficient,
        spec.noise_std_m,
        spec.seed,
        report.wall_s
    );
    let track = &report.track;
    println!(
        "wrote {} rows ({} frames × {} markers) to {}",
        track.positions_m.len(),
        track.times_s.len(),
        track.markers(),
        args.out.display()
    );
    Ok(())
}
