//! `tether-sweep simulate`: one simulation, its marker track written.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toml::{Table, Value};

use super::args::{EngineArgs, TetherArgs, named, resolved};
use super::identify::say;
use crate::scenario::ScenarioKind;
use crate::solver::SolverKind;
use crate::text::simulate as text;
use crate::workflow::simulate::{SimulateRequest, prepare};

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// TOML file with scenario, tether and solver settings; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Experiment: `drop` (released from 45°, pinned) or `swingup` (winch-driven). [default: drop]
    #[arg(long, value_parser = named::<ScenarioKind>())]
    pub scenario: Option<ScenarioKind>,
    #[command(flatten)]
    pub tether: TetherArgs,
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
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
}

/// Config keys outside `[tether]` that flags set, and the flags.
const SETTING_FLAGS: [(&str, &str); 7] = [
    ("step_s", "--step"),
    ("tolerance_m", "--tolerance"),
    ("duration_s", "--duration"),
    ("winch_amplitude_m", "--winch-amplitude"),
    ("winch_periods_s", "--winch-periods"),
    ("winch_waypoints_m", "--winch-amplitude"),
    ("scenario", "--scenario"),
];

impl SimulateArgs {
    /// The flags as a TOML table in the config file's layout.
    fn overrides(&self) -> Table {
        let mut root = Table::new();
        let mut settings = Table::new();
        if let Some(s) = self.scenario {
            let name = match s {
                ScenarioKind::Drop => "drop",
                ScenarioKind::Swingup => "swingup",
            };
            root.insert("scenario".into(), Value::String(name.into()));
        }
        if let Some(s) = self.solver {
            root.insert("solver".into(), Value::String(s.name().into()));
        }
        for (key, value) in [("step_s", self.step), ("tolerance_m", self.tolerance)] {
            if let Some(v) = value {
                root.insert(key.into(), Value::Float(v));
            }
        }
        for (key, value) in [
            ("duration_s", self.duration),
            ("winch_amplitude_m", self.winch_amplitude),
        ] {
            if let Some(v) = value {
                settings.insert(key.into(), Value::Float(v));
            }
        }
        if let Some(p) = &self.winch_periods {
            settings.insert(
                "winch_periods_s".into(),
                Value::Array(p.iter().map(|&v| Value::Float(v)).collect()),
            );
        }
        root.insert("tether".into(), Value::Table(self.tether.table()));
        root.insert("settings".into(), Value::Table(settings));
        root
    }

    fn request(&self) -> Result<SimulateRequest> {
        let cfg = resolved(self.config.as_deref(), self.overrides(), &SETTING_FLAGS)?;
        Ok(SimulateRequest {
            config: cfg,
            engine: self.engine.options(self.solver),
            out: self.out.clone(),
            force: self.force,
        })
    }
}

pub fn run(args: SimulateArgs) -> Result<()> {
    let request = args.request()?;
    let prepared = prepare(request.clone())?;
    if let Some(reason) = prepared.choice().reason.as_deref() {
        noteln!("{reason}");
    }
    if let Some(adapter) = prepared.choice().engine.adapter_name() {
        outln!("GPU: {adapter} ({})", request.engine.precision.name());
    }
    say(|out| text::write_header(out, &request));
    if !request.config.camera.is_default() {
        // [camera] says how a measured file of this experiment is written;
        // a simulation's own track stays in the model's frame.
        noteln!(
            "note: [camera] applies to measured files (identify, dataset synth); the simulated track is written in the model's frame (metres, y up)"
        );
    }
    let report = prepared.run()?;
    say(|out| text::write_summary(out, &request, &report, &args.out));
    Ok(())
}
