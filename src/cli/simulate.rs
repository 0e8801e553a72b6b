//! `tether-sweep simulate`: one simulation, its marker track written.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::{EngineArgs, TetherArgs, named};
use crate::solver::SolverKind;
use crate::workflow::bodies::FormulationKind;
use crate::workflow::keywords::{ConfigInput, Door};
use crate::workflow::simulate::{SimulateInputs, SimulateScenario};

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// TOML file with scenario, tether and solver settings; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Experiment: `drop` (released from 45°, pinned) or `swingup`
    /// (winch-driven) of the tether; or a constrained body, `arm` or
    /// `robot` (docs/constrained.md). [default: drop]
    #[arg(long, value_parser = named::<SimulateScenario>())]
    pub scenario: Option<SimulateScenario>,
    /// The arm's formulation: `baumgarte` or `modified-lagrange`.
    /// [default: modified-lagrange]
    #[arg(long, value_parser = named::<FormulationKind>())]
    pub formulation: Option<FormulationKind>,
    /// The constraint feedback K_P,K_D [1/s², 1/s] (arm: K_P I and K_D I
    /// of the stabilisation; robot: the program constraint's); `0,0`: no
    /// feedback. [default: arm 100,20; robot 4,4]
    #[arg(
        long,
        value_name = "KP,KD",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub feedback_gains: Option<Vec<f64>>,
    /// The modified Lagrange form's penalty α (B = α I). [default: 1000]
    #[arg(long, value_name = "ALPHA")]
    pub alpha: Option<f64>,
    /// The robot's programmed circle's curvature [1/m]. [default: 0.5]
    #[arg(long, value_name = "PER_M")]
    pub curvature: Option<f64>,
    /// A constrained body's parameter swept, NAME=AXIS (repeatable;
    /// `start:stop:step` inclusive or a comma list): the arm's kp_per_s2,
    /// kd_per_s, alpha, speed_m_s; the robot's kp_per_s2, kd_per_s,
    /// speed_m_s, curvature_per_m, start_offset_m. --out is then the
    /// sweep's table: one row per candidate with its evaluation functions.
    #[arg(long = "axis", value_name = "NAME=AXIS", allow_hyphen_values = true)]
    pub axes: Vec<String>,
    /// The arm carries a tether at its end point (docs/constrained.md §5):
    /// the tether's flags (--elements, --damping, --drag-coefficient,
    /// --tip-mass, --length, --no-rotary-inertia) or --config's [tether]
    /// set it; its pull loads the arm, its markers join the table.
    #[arg(long)]
    pub tether: bool,
    /// The robot's start off the circle [m] (positive outside). [default: 0.2]
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub start_offset_m: Option<f64>,
    #[command(flatten)]
    pub tether_args: TetherArgs,
    /// Solver: `explicit` (fixed step), `semi-implicit` (fixed step with the
    /// damping implicit, so not limited by D·n²), or `reference` (adaptive
    /// implicit generalized-α with error control; on the GPU in the
    /// workgroup layout), each on the CPU or the GPU. [default: explicit]
    #[arg(long, value_parser = named::<SolverKind>())]
    pub solver: Option<SolverKind>,
    /// Explicit step [s]; must divide the sample interval (drop: frame
    /// interval 0.04 s; swingup: 1 ms). [default: from the model's highest
    /// eigenvalue with safety factor 0.9]
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub step: Option<f64>,
    /// Reference solver's local error tolerance per step [m], in [1e-13, 1e-3]. [default: 1e-9]
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub tolerance: Option<f64>,
    /// Simulated duration [s]; a whole number of frame intervals. [default: 2 for drop, 3 for swingup]
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Swing-up winch move durations T1,T2,T3 [s], each in [0.01, 100]. [default: 0.5,0.4,0.6]
    #[arg(long, value_name = "T1,T2,T3", value_delimiter = ',')]
    pub winch_periods: Option<Vec<f64>>,
    /// Swing-up winch amplitude A [m]: waypoints 0, −A, +A, 0. [default: 0.2]
    #[arg(long, value_name = "M")]
    pub winch_amplitude: Option<f64>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output file: `.parquet` (with units and provenance metadata) or `.csv`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Also write the nodal state at every frame (each node's x, y, slopes and their rates; on the CPU) to FILE, `.parquet` or `.csv`.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

impl SimulateArgs {
    /// The library's inputs these flags give (the builder Python fills
    /// too).
    pub fn inputs(&self) -> SimulateInputs {
        SimulateInputs {
            config: self.config.clone().map(ConfigInput::File),
            scenario: self.scenario,
            formulation: self.formulation,
            feedback_gains: self.feedback_gains.clone(),
            alpha: self.alpha,
            curvature_per_m: self.curvature,
            axes: self.axes.clone(),
            tether: self.tether,
            start_offset_m: self.start_offset_m,
            tether_inputs: self.tether_args.inputs(),
            step_s: self.step,
            tolerance: self.tolerance,
            duration_s: self.duration,
            winch_periods_s: self.winch_periods.clone(),
            winch_amplitude_m: self.winch_amplitude,
            engine: self.engine.options(self.solver),
            overlays: toml::Table::new(),
            out: self.out.clone(),
            state: self.state.clone(),
            force: self.force,
        }
    }
}

pub fn run(args: SimulateArgs) -> Result<()> {
    crate::jobs::simulate::execute(&args.inputs(), Door::CommandLine)
}
