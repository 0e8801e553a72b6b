//! `tether-sweep dataset synth`: a synthetic measured drop.

use super::args::named;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use toml::{Table, Value};

use super::UsageError;
use crate::camera::Camera;
use crate::dataset::{GENERATOR, SynthSpec};
use crate::io::track::TrackLayout;
use crate::model::TetherParams;
use crate::scenario::{Scenario, ScenarioKind};
use crate::sweep::{Axis, Parameter};
use crate::workflow::synth::{SynthRequest, run as synthesize};

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

/// The drop to synthesize: the config's, or the paper's, with the flags' tether.
fn experiment(args: &SynthArgs) -> Result<(TetherParams, Scenario, Camera)> {
    let mut flags = Table::new();
    flags.insert(
        Axis::Elements.column().into(),
        Value::Integer(args.elements as i64),
    );
    flags.insert(Axis::Damping.column().into(), Value::Float(args.damping));
    flags.insert(
        Axis::Drag.column().into(),
        Value::Float(args.drag_coefficient),
    );
    flags.insert(
        "rotary_inertia".into(),
        Value::Boolean(!args.no_rotary_inertia),
    );
    let (tip_mass, length) = (
        Axis::Parameter(Parameter::TipMassKg),
        Axis::Parameter(Parameter::LengthM),
    );
    for (axis, value) in [(tip_mass, args.tip_mass), (length, args.length)] {
        if let Some(v) = value {
            flags.insert(axis.column().into(), Value::Float(v));
        }
    }
    let mut overrides = Table::new();
    overrides.insert("tether".into(), Value::Table(flags));
    let cfg = super::args::resolved(args.config.as_deref(), overrides, &[])?;
    if cfg.scenario.kind() != ScenarioKind::Drop {
        return Err(UsageError(
            "dataset synth makes a drop: scenario = \"drop\" (the default)".into(),
        )
        .into());
    }
    Ok((cfg.tether, cfg.scenario, cfg.camera))
}

pub fn run_synth(args: SynthArgs) -> Result<()> {
    let (tether, scenario, camera) = experiment(&args)?;
    let spec = SynthSpec {
        scenario,
        tether,
        noise_std_m: args.noise,
        seed: args.seed,
        tolerance_m: args.tolerance,
        generator: GENERATOR,
    };
    let in_model_frame = camera.is_default();
    let report = synthesize(&SynthRequest {
        spec: spec.clone(),
        camera,
        layout: args.layout,
        command: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        out: args.out.clone(),
        force: args.force,
    })
    .map_err(|e| super::args::name_flags(e, &super::args::TETHER_FLAGS))
    .map_err(|e| super::args::name_flags(e, &[("noise", "--noise")]))?;
    outln!(
        "synthetic drop: n = {}, D = {} Pa·s, C_D = {}, noise σ = {} m, seed {} | {:.2} s",
        spec.tether.elements,
        spec.tether.damping_pa_s,
        spec.tether.drag_coefficient,
        spec.noise_std_m,
        spec.seed,
        report.wall_s
    );
    let track = &report.track;
    let rows = args.layout.rows(track);
    let frame = match in_model_frame {
        true => "",
        false => " in the [camera]'s frame, unit and clock",
    };
    outln!(
        "wrote {rows} rows ({} frames × {} markers, {} layout) to {}{frame}",
        track.times_s.len(),
        track.markers(),
        args.layout,
        args.out.display()
    );
    Ok(())
}
