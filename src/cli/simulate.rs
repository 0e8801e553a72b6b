//! `tether-sweep simulate`: one simulation, its marker track written.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use toml::{Table, Value};

use super::args::{EngineArgs, TetherArgs, name_flags, named, resolved};
use super::identify::say;
use crate::named::Named;
use crate::scenario::ScenarioKind;
use crate::solver::SolverKind;
use crate::text::simulate as text;
use crate::workflow::WorkflowError;
use crate::workflow::bodies::{self, BodyInputs, BodyKind, BodyOutcome, FormulationKind};
use crate::workflow::simulate::{SimulateRequest, prepare};

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// TOML file with scenario, tether and solver settings; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Experiment: `drop` (released from 45°, pinned) or `swingup`
    /// (winch-driven) of the tether; or a constrained body, `arm` or
    /// `robot` (docs/constrained.md). [default: drop]
    #[arg(long, value_parser = scenario_parser())]
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
        if let Some(SimulateScenario::Tether(s)) = self.scenario {
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
        root.insert("tether".into(), Value::Table(self.tether_args.table()));
        root.insert("settings".into(), Value::Table(settings));
        root
    }

    fn request(&self) -> Result<SimulateRequest> {
        let cfg = resolved(self.config.as_deref(), self.overrides(), &SETTING_FLAGS)?;
        Ok(SimulateRequest {
            config: cfg,
            engine: self.engine.options(self.solver),
            out: self.out.clone(),
            state: self.state.clone(),
            force: self.force,
        })
    }
}

/// `--scenario`: one of the tether's experiments, or a constrained body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimulateScenario {
    Tether(ScenarioKind),
    Body(BodyKind),
}

fn scenario_parser() -> impl clap::builder::TypedValueParser<Value = SimulateScenario> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let tether = ScenarioKind::ALL.iter().map(|v| (v.name(), v.help()));
    let bodies = BodyKind::ALL.iter().map(|v| (v.name(), v.help()));
    let values: Vec<PossibleValue> = tether
        .chain(bodies)
        .map(|(name, help)| PossibleValue::new(name).help(help))
        .collect();
    PossibleValuesParser::new(values).map(|text| match BodyKind::parse_name(&text) {
        Ok(body) => SimulateScenario::Body(body),
        Err(_) => SimulateScenario::Tether(
            ScenarioKind::parse_name(&text).expect("one of the possible values"),
        ),
    })
}

pub fn run(args: SimulateArgs) -> Result<()> {
    let body = match args.scenario {
        Some(SimulateScenario::Body(body)) => Some(body),
        _ => None,
    };
    refuse_misplaced_flags(&args, body.is_some())?;
    if let Some(body) = body {
        return run_body(&args, body);
    }
    let request = args.request()?;
    let prepared = prepare(request.clone())?;
    if let Some(reason) = prepared.choice().reason.as_deref() {
        noteln!("{reason}");
    }
    if let Some(adapter) = prepared.choice().engine.adapter_name() {
        outln!("GPU: {adapter} ({})", request.engine.precision.name());
    }
    say(|out| text::write_header(out, &request));
    if let Some(note) = text::camera_note(&request) {
        noteln!("{note}");
    }
    let report = prepared.run()?;
    say(|out| text::write_summary(out, &request, &report, &args.out));
    Ok(())
}

/// A flag of the other kind of run refused (a body's beside the tether's
/// runs, theirs and the GPU's beside a body; the tether's own but --tether).
fn refuse_misplaced_flags(args: &SimulateArgs, body: bool) -> Result<()> {
    const BODY: &str = "is a constrained body's (--scenario arm or robot), not the tether's";
    const OWN: &str =
        "is the tether's: a constrained body takes it only with --tether (the arm carrying it)";
    const RUNS: &str = "is the tether's drop or swing-up run's, not a constrained body's";
    const GPU: &str = "is the GPU engine's; the constrained bodies run on the CPU (f64), the tether an arm carries (--tether) on either";
    let (t, e, a) = (&args.tether_args, &args.engine, args);
    let (tether, bare) = (!body, body && !args.tether);
    #[rustfmt::skip]
    let given = [
        ("--axis", tether && !a.axes.is_empty(), BODY),
        ("--formulation", tether && a.formulation.is_some(), BODY),
        ("--feedback-gains", tether && a.feedback_gains.is_some(), BODY),
        ("--alpha", tether && a.alpha.is_some(), BODY),
        ("--curvature", tether && a.curvature.is_some(), BODY),
        ("--start-offset-m", tether && a.start_offset_m.is_some(), BODY),
        ("--tether", tether && a.tether, BODY),
        ("--config", bare && a.config.is_some(), OWN),
        ("--elements", bare && t.elements.is_some(), OWN),
        ("--damping", bare && t.damping.is_some(), OWN),
        ("--drag-coefficient", bare && t.drag_coefficient.is_some(), OWN),
        ("--tip-mass", bare && t.tip_mass.is_some(), OWN),
        ("--length", bare && t.length.is_some(), OWN),
        ("--no-rotary-inertia", bare && t.no_rotary_inertia, OWN),
        ("--solver", body && a.solver.is_some(), RUNS),
        ("--step", body && a.step.is_some(), RUNS),
        ("--winch-periods", body && a.winch_periods.is_some(), RUNS),
        ("--winch-amplitude", body && a.winch_amplitude.is_some(), RUNS),
        ("--state", body && a.state.is_some(), RUNS),
        ("--backend gpu", bare && e.backend == crate::engine::Backend::Gpu, GPU),
        ("--precision", bare && e.precision != crate::gpu::Precision::F32, GPU),
        ("--adapter", bare && e.adapter.is_some(), GPU),
        ("--gpu-layout", bare && e.gpu_layout != crate::gpu::LayoutRequest::Auto, GPU),
    ];
    match given.iter().find(|(_, given, _)| *given) {
        Some((flag, _, why)) => Err(super::UsageError(format!("{flag} {why}")).into()),
        None => Ok(()),
    }
}

/// The tether the arm carries: the drop's tether with the tether's
/// flags and --config's [tether] applied.
fn carried_tether(args: &SimulateArgs) -> Result<Option<crate::model::TetherParams>> {
    if !args.tether {
        return Ok(None);
    }
    let mut overrides = Table::new();
    overrides.insert("tether".into(), Value::Table(args.tether_args.table()));
    let config = resolved(args.config.as_deref(), overrides, &SETTING_FLAGS)?;
    Ok(Some(config.tether))
}

/// `--scenario arm|robot`: a constrained body's run
/// (`workflow::bodies`), its failure exit code 3.
fn run_body(args: &SimulateArgs, body: BodyKind) -> Result<()> {
    let inputs = BodyInputs {
        formulation: args.formulation,
        feedback_gains: args.feedback_gains.clone(),
        alpha: args.alpha,
        curvature_per_m: args.curvature,
        start_offset_m: args.start_offset_m,
        duration_s: args.duration,
        tolerance: args.tolerance,
        tether: carried_tether(args)?,
        engine: args.engine.options(None),
        axes: args.axes.clone(),
        out: args.out.clone(),
        force: args.force,
    };
    let flags = [
        ("duration", "--duration"),
        ("tolerance", "--tolerance"),
        ("feedback_gains", "--feedback-gains"),
        ("alpha", "--alpha"),
        ("curvature", "--curvature"),
        ("start_offset_m", "--start-offset-m"),
        ("out", "--out"),
    ];
    // A field is named by its flag; a swept value by its axis.
    let named = |e: WorkflowError| match e {
        WorkflowError::Input(input) if input.field.split(' ').next() == Some("axis") => {
            WorkflowError::flag(&format!("--{}", input.field), input)
        }
        other => name_flags(other, &flags),
    };
    let report = match bodies::execute(&inputs, body).map_err(named)? {
        BodyOutcome::Sweep(report) => {
            let out = &args.out;
            say(|o| crate::text::bodies::write_sweep(o, body.name(), &report, out));
            return Ok(());
        }
        BodyOutcome::Run(report) => report,
    };
    say(|out| crate::text::bodies::write_summary(out, &report));
    match crate::text::bodies::failure(&report) {
        Some(message) => Err(WorkflowError::NothingSimulated(message).into()),
        None => Ok(()),
    }
}
