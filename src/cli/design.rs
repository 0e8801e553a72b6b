//! `tether-sweep design`: plan the film before filming it.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::{TetherArgs, named};
use crate::engine::Backend;
use crate::workflow::design::DesignInputs;
use crate::workflow::keywords::{ConfigInput, Door};

#[derive(Debug, Args)]
pub struct DesignArgs {
    /// A planned film, as `simulate --config` takes it: [tether] and
    /// [settings] (initial_angle_deg, pin_m, release_time_s,
    /// marker_arc_lengths_m, and frame_interval_s with duration_s or
    /// frame_times_s), or the frames and markers of a film already taken,
    /// `measured = "FILE"` in [settings] (read through [camera]; its
    /// positions are not used). Repeat it for several films of one tether,
    /// each named by its file stem or `name = "…"` in [settings]. None: the
    /// paper's drop (docs/model.md §4.1).
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// The tether as you expect it: n, D and C_D (required, here or in
    /// the configs' [tether]), tip mass and length.
    #[command(flatten)]
    pub tether: TetherArgs,
    /// Standard deviation of the tracker's noise on each marker
    /// coordinate [m], > 0.
    #[arg(long, value_name = "M", default_value_t = 5e-4)]
    pub noise: f64,
    /// A design axis, NAME=AXIS (A:B:STEP or V1,V2,…): frame_interval_s,
    /// duration_s, markers (how many, evenly spaced from the pin to the
    /// free end) or any parameter (initial_angle_deg, tip_mass_kg,
    /// length_m, …), in every film, or in one as FILM.NAME. Repeatable:
    /// every combination is a design point.
    #[arg(long = "axis", value_name = "NAME=AXIS")]
    pub axes: Vec<String>,
    /// Also estimate this parameter (e.g. release_time_s: an unknown
    /// release widens the others' errors). A film's own parameter
    /// (release_time_s, initial_angle_deg, pin_x_m, pin_y_m) is one per
    /// film. D and C_D are always estimated.
    #[arg(long = "estimate", value_name = "NAME")]
    pub estimates: Vec<String>,
    /// Where the simulations run: `cpu` (the reference solver on every
    /// core), `gpu` (its fixed-step scheme in f64, even on a CPU emulation),
    /// or `auto`: the faster for this design, of the CPU and a hardware GPU.
    #[arg(long, value_parser = named::<Backend>(), default_value = "auto")]
    pub backend: Backend,
    /// GPU adapter: its index or part of its name (`tether-sweep adapters`).
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// The reference solver's local error tolerance [m] for the
    /// sensitivities on the CPU. [default: the solver's, 1e-9]
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub tolerance: Option<f64>,
    /// Output directory: design.parquet and the figure design (.svg, .png).
    #[arg(long, value_name = "DIR", default_value = "design-results")]
    pub out: PathBuf,
    /// Replace the results of an earlier run in DIR.
    #[arg(long)]
    pub force: bool,
}

impl DesignArgs {
    /// The library's inputs these flags give (the builder Python fills
    /// too).
    pub fn inputs(&self) -> DesignInputs {
        DesignInputs {
            configs: self.config.iter().cloned().map(ConfigInput::File).collect(),
            tether_inputs: self.tether.inputs(),
            noise_m: self.noise,
            axes: self.axes.clone(),
            estimates: self.estimates.clone(),
            backend: self.backend,
            adapter: self.adapter.clone(),
            tolerance_m: self.tolerance,
            overlays: toml::Table::new(),
            out: self.out.clone(),
            force: self.force,
        }
    }
}

pub fn run(args: DesignArgs) -> Result<()> {
    crate::jobs::design::execute(&args.inputs(), Door::CommandLine)
}
