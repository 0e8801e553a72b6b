//! Command-line interface: parse, call the library, print.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use toml::{Table, Value};

use tether_sweep::io::config::{self, SimulationConfig};
use tether_sweep::io::track::{track_batch, write_batch};
use tether_sweep::io::{PendingFile, TableFormat};
use tether_sweep::scenario::{ScenarioKind, SimulationOutput, SolverReport, simulate};
use tether_sweep::solver::SolverKind;

#[derive(Debug, Parser)]
#[command(name = "tether-sweep", version, about = "Batch simulation of flexible ANCF tethers", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate one tether and write its marker track (Parquet or CSV).
    #[command(allow_negative_numbers = true)]
    Simulate(SimulateArgs),
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// TOML file with scenario, tether and solver settings; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Experiment: `drop` (released from 45°, pinned) or `swingup` (winch-driven). [default: drop]
    #[arg(long, value_enum)]
    pub scenario: Option<ScenarioKind>,
    /// Number of ANCF elements n (1..=1024). [default: 10]
    #[arg(long, value_name = "N")]
    pub elements: Option<i64>,
    /// Kelvin–Voigt material damping D [Pa·s], ≥ 0. [default: 0]
    #[arg(long, value_name = "D")]
    pub damping: Option<f64>,
    /// Air drag coefficient C_D [-], ≥ 0. [default: 0]
    #[arg(long, value_name = "CD")]
    pub drag_coefficient: Option<f64>,
    /// Point mass at the free end [kg], ≥ 0. [default: 0 for drop, 0.021 for swingup]
    #[arg(long, value_name = "KG")]
    pub tip_mass: Option<f64>,
    /// Tether length L [m], > 0. [default: 0.6]
    #[arg(long, value_name = "M")]
    pub length: Option<f64>,
    /// Leave the rotary-inertia term ρ I ∫ S_xᵀ S_x ds out of the mass matrix.
    #[arg(long)]
    pub no_rotary_inertia: bool,
    /// CPU solver: `explicit` (fixed step, the GPU's scheme) or `reference`
    /// (adaptive implicit generalized-α with error control). [default: explicit]
    #[arg(long, value_enum)]
    pub solver: Option<SolverKind>,
    /// Explicit step [s]; must divide the sample interval (drop: frame
    /// interval 0.04 s; swingup: 1 ms). [default: from the model's highest
    /// eigenvalue with safety factor 0.9]
    #[arg(long, value_name = "S")]
    pub step: Option<f64>,
    /// Reference solver's local error tolerance per step [m], in (0, 1e-3]. [default: 1e-9]
    #[arg(long, value_name = "M")]
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
    /// Output file: `.parquet` (with units and provenance metadata) or `.csv`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

impl SimulateArgs {
    /// The flags as a TOML table in the config file's layout.
    fn overrides(&self) -> Table {
        let mut root = Table::new();
        let mut tether = Table::new();
        let mut settings = Table::new();
        let float = |v: f64| Value::Float(v);
        if let Some(s) = self.scenario {
            root.insert("scenario".into(), Value::String(scenario_name(s).into()));
        }
        if let Some(s) = self.solver {
            root.insert("solver".into(), Value::String(s.name().into()));
        }
        if let Some(v) = self.step {
            root.insert("step_s".into(), float(v));
        }
        if let Some(v) = self.tolerance {
            root.insert("tolerance_m".into(), float(v));
        }
        if let Some(n) = self.elements {
            tether.insert("elements".into(), Value::Integer(n));
        }
        for (key, value) in [
            ("damping_pa_s", self.damping),
            ("drag_coefficient", self.drag_coefficient),
            ("tip_mass_kg", self.tip_mass),
            ("length_m", self.length),
        ] {
            if let Some(v) = value {
                tether.insert(key.into(), float(v));
            }
        }
        if self.no_rotary_inertia {
            tether.insert("rotary_inertia".into(), Value::Boolean(false));
        }
        if let Some(v) = self.duration {
            settings.insert("duration_s".into(), float(v));
        }
        if let Some(v) = self.winch_amplitude {
            settings.insert("winch_amplitude_m".into(), float(v));
        }
        if let Some(p) = &self.winch_periods {
            settings.insert(
                "winch_periods_s".into(),
                Value::Array(p.iter().map(|&v| float(v)).collect()),
            );
        }
        root.insert("tether".into(), Value::Table(tether));
        root.insert("settings".into(), Value::Table(settings));
        root
    }
}

fn scenario_name(kind: ScenarioKind) -> &'static str {
    match kind {
        ScenarioKind::Drop => "drop",
        ScenarioKind::Swingup => "swingup",
    }
}

/// Errors that are the user's to fix: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Simulate(args) => run_simulate(args),
    }
}

fn run_simulate(args: SimulateArgs) -> Result<()> {
    let mut table = match &args.config {
        Some(path) => config::read_table(path).map_err(|e| UsageError(e.to_string()))?,
        None => Table::new(),
    };
    config::merge(&mut table, args.overrides());
    let cfg = config::resolve(table).map_err(|e| UsageError(e.to_string()))?;
    TableFormat::from_path(&args.out).map_err(|e| UsageError(e.to_string()))?;
    // Claim the output before simulating: an unwritable path fails at once.
    let mut pending = PendingFile::create(&args.out).map_err(|e| UsageError(e.to_string()))?;

    print_header(&cfg);
    let started = Instant::now();
    let output = simulate(&cfg.scenario, &cfg.tether, &cfg.solver).context("simulation failed")?;
    let wall = started.elapsed();

    let metadata = provenance(&cfg, &output);
    write_batch(
        &mut pending,
        &track_batch(&output.track, &metadata),
        &metadata,
    )?;
    pending.commit()?;
    print_summary(&cfg, &output, wall.as_secs_f64(), &args.out);
    Ok(())
}

/// Key-value metadata stored with every track: units, inputs and what the
/// solver did, so a file explains itself.
fn provenance(cfg: &SimulationConfig, out: &SimulationOutput) -> BTreeMap<String, String> {
    let json = |v: &dyn erased::Json| v.to_json();
    let mut m = BTreeMap::new();
    m.insert("tether_sweep.version".into(), tether_sweep::VERSION.into());
    m.insert(
        "tether_sweep.units".into(),
        r#"{"t":"s","marker":"index","s":"m","x":"m","y":"m"}"#.into(),
    );
    m.insert("tether_sweep.tether".into(), json(&cfg.tether));
    m.insert("tether_sweep.scenario".into(), json(&cfg.scenario));
    m.insert("tether_sweep.solver_settings".into(), json(&cfg.solver));
    m.insert("tether_sweep.solver_report".into(), json(&out.report));
    if let Some(obj) = &out.swingup {
        m.insert("tether_sweep.swingup_objective".into(), json(obj));
    }
    m
}

mod erased {
    /// serde_json for trait objects, so `provenance` reads as a list.
    pub trait Json {
        fn to_json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> String {
            serde_json::to_string(self).expect("plain data serializes")
        }
    }
}

fn print_header(cfg: &SimulationConfig) {
    let t = &cfg.tether;
    println!(
        "{} | n = {}, D = {} Pa·s, C_D = {}, tip mass = {} kg, rotary inertia {} | {:.3} s | solver: {}",
        scenario_name(cfg.scenario.kind),
        t.elements,
        t.damping_pa_s,
        t.drag_coefficient,
        t.tip_mass_kg,
        if t.rotary_inertia { "on" } else { "off" },
        cfg.scenario.duration_s,
        cfg.solver.kind.name(),
    );
}

fn print_summary(
    cfg: &SimulationConfig,
    out: &SimulationOutput,
    wall_s: f64,
    path: &std::path::Path,
) {
    match out.report {
        SolverReport::Explicit { step_s, steps } => {
            println!("explicit: step {step_s:.4e} s, {steps} steps, {wall_s:.3} s wall")
        }
        SolverReport::Reference(s) => println!(
            "reference: {} steps ({} rejected), step {:.2e}..{:.2e} s, {} Newton iterations, {} factorizations; \
             local error ≤ {:.1e} m (tolerance {:.1e} m); {wall_s:.3} s wall",
            s.steps,
            s.rejected_steps,
            s.min_step_s,
            s.max_step_s,
            s.newton_iterations,
            s.factorizations,
            s.max_local_error_m,
            cfg.solver.reference.tolerance_m
        ),
    }
    let track = &out.track;
    let last = track.times_s.len() - 1;
    let tip = track.at(last, track.markers() - 1);
    println!(
        "tip (marker {}) at t = {:.3} s: x = {:.6} m, y = {:.6} m",
        track.markers() - 1,
        track.times_s[last],
        tip[0],
        tip[1]
    );
    if let Some(obj) = &out.swingup {
        println!(
            "J_a,min = {:.6} m at t = {:.3} s",
            obj.j_a_min, obj.t_at_min_s
        );
    }
    println!(
        "wrote {} rows ({} frames × {} markers) to {}",
        track.positions_m.len(),
        track.times_s.len(),
        track.markers(),
        path.display()
    );
}
