//! Command-line interface: parse, call the library, print.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use toml::{Table, Value};

use tether_sweep::gpu::{Backend, Gpu, Precision};
use tether_sweep::io::config::{self, SimulationConfig};
use tether_sweep::io::track::{track_batch, write_batch};
use tether_sweep::io::{PendingFile, TableFormat};
use tether_sweep::scenario::{ScenarioKind, SimulationOutput, SolverReport, simulate};
use tether_sweep::solver::{FixedStepScheme, SolverKind};

mod identify;
mod swingup;

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
    /// Linearize about the hanging equilibrium: modes, state space and the
    /// winch-to-tip frequency response, as Parquet tables and plots.
    #[command(allow_negative_numbers = true)]
    Linearize(LinearizeArgs),
    /// Identify D and C_D (and the best n) from a measured drop by exhaustive
    /// grid search, on all CPU cores. Defaults: the shipped dataset and a grid
    /// that takes about a minute on 2 cores.
    #[command(allow_negative_numbers = true)]
    Identify(identify::IdentifyArgs),
    /// Merge the parts of `identify --shard K/N` runs (DIR/shard=K/part.parquet)
    /// into one results table, summary, best fit and figures.
    Summarize(identify::SummarizeArgs),
    /// Design the swing-up winch trajectory with the genetic algorithm of
    /// SPEC §7 (J_a,min fitness), optionally scoring every chromosome
    /// (--exhaustive) to rank the GA's answer. Parquet tables and figures.
    #[command(allow_negative_numbers = true)]
    Swingup(swingup::SwingupArgs),
    /// Datasets: `dataset synth` makes a synthetic measured drop.
    #[command(subcommand)]
    Dataset(DatasetCommand),
    /// Redraw an identification's figures from its Parquet tables.
    Plot(PlotArgs),
    /// List the GPU adapters wgpu can open (for --adapter).
    Adapters,
    /// Throughput of the GPU engine (f32, f64) and the CPU solvers on batches
    /// of drops: simulations/s, element-steps/s, GFLOP/s against the
    /// device's measured multiply-add peak. Terminal table and Parquet.
    Bench(BenchArgs),
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Element counts n, comma-separated.
    #[arg(
        long,
        value_name = "N,..",
        value_delimiter = ',',
        default_value = "10,40"
    )]
    pub elements: Vec<usize>,
    /// Batch sizes, comma-separated; a batch spreads D over 0–10000 Pa·s and
    /// C_D over 0.6–0.9.
    #[arg(
        long,
        value_name = "B,..",
        value_delimiter = ',',
        default_value = "1,8,64"
    )]
    pub batch: Vec<usize>,
    /// Simulated time per drop [s], a whole number of frames (0.04 s).
    #[arg(long, value_name = "S", default_value_t = 0.04)]
    pub duration: f64,
    /// Timed runs per configuration (1–100); the fastest is reported. On a
    /// shared machine, whose neighbours only ever slow a run down, 3 or
    /// more.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub repeats: usize,
    /// Engines to run, comma-separated. [default: all that this machine has]
    #[arg(long, value_enum, value_delimiter = ',')]
    pub engines: Option<Vec<tether_sweep::bench::Engine>>,
    /// GPU adapter: its index or part of its name.
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// Parquet file for the results.
    #[arg(long, value_name = "FILE", default_value = "bench.parquet")]
    pub out: PathBuf,
}

/// Where simulations run.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// `auto`: where this command was measured fastest: the CPU for
    /// simulate, identify and a GA alone, a hardware GPU (if any) for the
    /// exhaustive swing-up landscape; `gpu`: the GPU engine even on a CPU
    /// emulation (lavapipe); `cpu`: CPU only.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// GPU precision: `f32` (displacement form, SPEC §8) or `f64` (needs the
    /// adapter's SHADER_F64).
    #[arg(long, value_enum, default_value = "f32")]
    pub precision: Precision,
    /// GPU adapter: its index or part of its name (`tether-sweep adapters`).
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
}

impl EngineArgs {
    /// Opens the GPU the flags ask for (None: run on the CPU), printing a
    /// one-line notice when `auto` falls back and the adapter that will run.
    fn open(&self) -> Result<Option<Gpu>> {
        let (gpu, notice) = tether_sweep::gpu::select(self.backend, self.adapter.as_deref())?;
        if let Some(n) = notice {
            eprintln!("{n}");
        }
        if let Some(g) = &gpu {
            println!("GPU: {} ({})", g.adapter, self.precision.name());
        }
        Ok(gpu)
    }

    /// The GPU engine runs the fixed-step schemes only: `--backend gpu` with
    /// the CPU-only reference solver named is a usage error, found before
    /// any output is claimed.
    pub(crate) fn check_solver(&self, solver: Option<SolverKind>) -> Result<()> {
        if self.backend == Backend::Gpu && solver == Some(SolverKind::Reference) {
            Err(UsageError(
                "--solver reference runs on the CPU only (the GPU engine runs the explicit and semi-implicit schemes): use --backend cpu, or --solver explicit or semi-implicit".into(),
            ))?;
        }
        Ok(())
    }

    /// The scheme the GPU runs for a job's `--solver`: the one named, else
    /// the semi-implicit scheme, whose step D·n² does not bound.
    pub(crate) fn gpu_scheme(solver: Option<SolverKind>) -> FixedStepScheme {
        solver
            .and_then(SolverKind::fixed_step_scheme)
            .unwrap_or(FixedStepScheme::SemiImplicit)
    }

    /// As [`EngineArgs::open`], except that `auto` keeps the job on the CPU,
    /// saying `why`: for jobs where the CPU solvers are measured faster than
    /// the GPU engine even on a hardware GPU (BENCHMARKS.md).
    pub(crate) fn open_unless_auto(&self, why: &str) -> Result<Option<Gpu>> {
        if self.backend == Backend::Auto {
            eprintln!(
                "backend auto: {why}; running on the CPU (--backend gpu runs the GPU engine)"
            );
            return Ok(None);
        }
        self.open()
    }
}

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A directory written by `identify`: the figures are redrawn from its
    /// results.parquet (and best_fit.parquet, when present).
    pub dir: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Simulate the SPEC drop with the reference solver on a fine mesh and add
    /// seeded Gaussian marker noise: a "measured" track with known truth.
    /// Defaults: n = 80, D = 2000 Pa·s, C_D = 0.8, noise 0.5 mm, seed 2010.
    #[command(allow_negative_numbers = true)]
    Synth(SynthArgs),
}

#[derive(Debug, Args)]
pub struct SynthArgs {
    #[command(flatten)]
    pub tether: TetherArgs,
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
}

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
    /// bode.{svg,png}, mode_shapes.{svg,png}. Existing files are replaced.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// TOML file with scenario, tether and solver settings; flags override it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Experiment: `drop` (released from 45°, pinned) or `swingup` (winch-driven). [default: drop]
    #[arg(long, value_enum)]
    pub scenario: Option<ScenarioKind>,
    #[command(flatten)]
    pub tether: TetherArgs,
    /// Solver: `explicit` (fixed step), `semi-implicit` (fixed step with the
    /// damping implicit, so not limited by D·n²), both on the CPU or the GPU,
    /// or `reference` (adaptive implicit generalized-α with error control,
    /// CPU only). [default: explicit]
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
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output file: `.parquet` (with units and provenance metadata) or `.csv`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Tether options shared by the commands; each overrides SPEC Table 1.
#[derive(Debug, Args)]
pub struct TetherArgs {
    /// Number of ANCF elements n (1..=1024). [default: 10]
    #[arg(long, value_name = "N")]
    pub elements: Option<i64>,
    /// Kelvin–Voigt material damping D [Pa·s], ≥ 0. [default: 0]
    #[arg(long, value_name = "D")]
    pub damping: Option<f64>,
    /// Air drag coefficient C_D [-], ≥ 0. [default: 0]
    #[arg(long, value_name = "CD")]
    pub drag_coefficient: Option<f64>,
    /// Point mass at the free end [kg], ≥ 0. [default: 0 for the drop; 0.021 (the swing-up's body) for swingup and linearize]
    #[arg(long, value_name = "KG")]
    pub tip_mass: Option<f64>,
    /// Tether length L [m], > 0. [default: 0.6]
    #[arg(long, value_name = "M")]
    pub length: Option<f64>,
    /// Leave the rotary-inertia term ρ I ∫ S_xᵀ S_x ds out of the mass matrix.
    #[arg(long)]
    pub no_rotary_inertia: bool,
}

impl TetherArgs {
    /// The options as a `[tether]` table of the config layout.
    fn table(&self) -> Table {
        let mut tether = Table::new();
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
                tether.insert(key.into(), Value::Float(v));
            }
        }
        if self.no_rotary_inertia {
            tether.insert("rotary_inertia".into(), Value::Boolean(false));
        }
        tether
    }
}

impl SimulateArgs {
    /// The flags as a TOML table in the config file's layout.
    fn overrides(&self) -> Table {
        let mut root = Table::new();
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
        root.insert("tether".into(), Value::Table(self.tether.table()));
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

/// A library error that the user's input caused, as a usage error (exit 2).
pub(crate) fn usage(e: impl std::fmt::Display) -> UsageError {
    UsageError(e.to_string())
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Simulate(args) => run_simulate(args),
        Command::Linearize(args) => run_linearize(args),
        Command::Dataset(DatasetCommand::Synth(args)) => run_synth(args),
        Command::Identify(args) => identify::run_identify(args),
        Command::Summarize(args) => identify::run_summarize(args),
        Command::Swingup(args) => swingup::run(args),
        Command::Plot(args) => run_plot(args),
        Command::Bench(args) => run_bench(args),
        Command::Adapters => {
            let adapters = tether_sweep::gpu::device::list_adapters();
            if adapters.is_empty() {
                println!("{}", tether_sweep::gpu::GpuError::NoAdapter);
            }
            for a in adapters {
                println!(
                    "{a}{}{}",
                    if a.hardware { "" } else { " [CPU emulation]" },
                    if a.shader_f64 { " [f64]" } else { "" }
                );
            }
            Ok(())
        }
    }
}

fn run_plot(args: PlotArgs) -> Result<()> {
    use tether_sweep::io::results::{read_best_fit, read_results};
    let results_path = args.dir.join("results.parquet");
    if !results_path.exists() {
        Err(UsageError(format!(
            "{} not found: `plot` redraws the figures of an `identify` output directory (swingup draws its own)",
            results_path.display()
        )))?;
    }
    let results = read_results(&results_path)?;
    let fit_path = args.dir.join("best_fit.parquet");
    let fit = if fit_path.exists() {
        Some(read_best_fit(&fit_path)?)
    } else {
        None
    };
    let figures = tether_sweep::plot::identify::save_all(&args.dir, &results, fit.as_ref())?;
    println!(
        "redrew {} (.svg, .png) in {} from {} candidates",
        figures.join(", "),
        args.dir.display(),
        results.len()
    );
    Ok(())
}

/// Creates the output directory `dir` and returns `dir/main_file`, refusing
/// to replace an earlier run's `main_file` without `force`. Runs before any
/// simulation, so that a bad output path costs nothing.
fn claim_output(
    dir: &std::path::Path,
    main_file: &str,
    force: bool,
) -> Result<PathBuf, UsageError> {
    let path = dir.join(main_file);
    if path.exists() && !force {
        return Err(UsageError(format!(
            "{} exists: choose another --out or pass --force to replace it",
            path.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        UsageError(format!(
            "cannot create output directory {}: {e}",
            dir.display()
        ))
    })?;
    Ok(path)
}

/// Ctrl-C during a run: the engine stops between dispatches, what finished
/// is written, and the exit code is 130.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Interrupted(pub String);

/// The flag Ctrl-C sets. The handler is installed on first use, by the paths
/// that have stopping points (GPU dispatches, the swing-up's CPU batches);
/// elsewhere Ctrl-C keeps its default meaning.
fn interrupt_flag() -> &'static std::sync::atomic::AtomicBool {
    use std::sync::atomic::{AtomicBool, Ordering};
    static FLAG: AtomicBool = AtomicBool::new(false);
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let result = ctrlc::set_handler(|| {
            if FLAG.swap(true, Ordering::Relaxed) {
                // A second Ctrl-C: stop at once.
                std::process::exit(130);
            }
            eprintln!(
                "\ninterrupt: stopping after the running simulations or GPU dispatch (Ctrl-C again to quit now)"
            );
        });
        if let Err(e) = result {
            eprintln!("warning: Ctrl-C will not stop the run cleanly: {e}");
        }
    });
    &FLAG
}

/// Defaults of the shipped dataset's tether: a finer mesh than any grid
/// candidate (≤ 50) and the paper's identified D and C_D.
const SYNTH_DEFAULTS: [(&str, f64); 3] = [
    ("elements", 80.0),
    ("damping_pa_s", 2000.0),
    ("drag_coefficient", 0.8),
];

fn run_synth(args: SynthArgs) -> Result<()> {
    use tether_sweep::dataset::{GENERATOR, SynthSpec, synthesize};
    let mut tether = Table::new();
    for (key, value) in SYNTH_DEFAULTS {
        let v = if key == "elements" {
            Value::Integer(value as i64)
        } else {
            Value::Float(value)
        };
        tether.insert(key.into(), v);
    }
    config::merge(&mut tether, args.tether.table());
    let mut table = Table::new();
    table.insert("scenario".into(), Value::String("drop".into()));
    table.insert("tether".into(), Value::Table(tether));
    let cfg = config::resolve(table).map_err(usage)?;
    let spec = SynthSpec {
        tether: cfg.tether,
        scenario: cfg.scenario,
        noise_std_m: args.noise,
        seed: args.seed,
        tolerance_m: args.tolerance,
        generator: GENERATOR,
    };
    spec.validate().map_err(usage)?;
    TableFormat::from_path(&args.out).map_err(usage)?;
    let mut pending = PendingFile::create(&args.out).map_err(usage)?;
    let started = Instant::now();
    let (track, clean) = synthesize(&spec).context("simulating the synthetic drop")?;
    let mut metadata = tether_sweep::io::track_metadata();
    metadata.insert("tether_sweep.dataset".into(), serde_json::to_string(&spec)?);
    metadata.insert(
        "tether_sweep.solver_report".into(),
        serde_json::to_string(&clean.report)?,
    );
    metadata.insert(
        "tether_sweep.command".into(),
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
    );
    write_batch(&mut pending, &track_batch(&track, &metadata), &metadata)?;
    pending.commit()?;
    println!(
        "synthetic drop: n = {}, D = {} Pa·s, C_D = {}, noise σ = {} m, seed {} | {:.2} s",
        spec.tether.elements,
        spec.tether.damping_pa_s,
        spec.tether.drag_coefficient,
        spec.noise_std_m,
        spec.seed,
        started.elapsed().as_secs_f64()
    );
    println!(
        "wrote {} rows ({} frames × {} markers) to {}",
        track.positions_m.len(),
        track.times_s.len(),
        track.markers(),
        args.out.display()
    );
    Ok(())
}

fn run_linearize(args: LinearizeArgs) -> Result<()> {
    use tether_sweep::error::InputError;
    use tether_sweep::io::linear::{nodal_shape, write_linear_analysis};
    use tether_sweep::model::Tether;
    use tether_sweep::plot::linear::{BodePlot, ModeShapePlot};
    use tether_sweep::solver::linear_model::{LinearModel, OUTPUTS, log_spaced};
    use tether_sweep::solver::modal::modes;

    if !(args.frequency_min.is_finite() && args.frequency_min > 0.0) {
        Err(usage(InputError::new(
            "frequency-min",
            args.frequency_min,
            "a frequency > 0 Hz",
        )))?;
    }
    if !(args.frequency_max.is_finite() && args.frequency_max > args.frequency_min) {
        Err(usage(InputError::new(
            "frequency-max",
            args.frequency_max,
            format!(
                "a frequency above frequency-min = {} Hz",
                args.frequency_min
            ),
        )))?;
    }
    if !(2..=100_000).contains(&args.frequency_points) {
        Err(usage(InputError::new(
            "frequency-points",
            args.frequency_points,
            "from 2 to 100000",
        )))?;
    }
    if args.modes == 0 {
        Err(usage(InputError::new("modes", 0, "at least 1")))?;
    }
    // The swing-up's defaults (tip mass 21 g): this model is for designing it.
    let mut table = Table::new();
    table.insert("scenario".into(), Value::String("swingup".into()));
    table.insert("tether".into(), Value::Table(args.tether.table()));
    let params = config::resolve(table).map_err(usage)?.tether;
    std::fs::create_dir_all(&args.out).map_err(|e| {
        UsageError(format!(
            "cannot create output directory {}: {e}",
            args.out.display()
        ))
    })?;

    let started = Instant::now();
    let tether = Tether::new(params.clone())?;
    let pin = [0.0, 0.0];
    let model =
        LinearModel::about_hanging_equilibrium(&tether, pin).context("linearization failed")?;
    let all_modes = modes(&tether, &model.equilibrium)?;
    let state_space = model.state_space()?;
    let frequencies = log_spaced(
        args.frequency_min,
        args.frequency_max,
        args.frequency_points,
    );
    let responses = model.frequency_responses(&frequencies)?;
    let wall = started.elapsed().as_secs_f64();

    let mut metadata = tether_sweep::io::base_metadata();
    metadata.insert(
        "tether_sweep.tether".into(),
        serde_json::to_string(&params)?,
    );
    metadata.insert(
        "tether_sweep.linearization".into(),
        serde_json::json!({
            "about": "hanging static equilibrium, winch at (0, 0), at rest",
            "input": "winch position x_0 [m]",
            "outputs": OUTPUTS,
            "damping_ratio": "modal: phi^T C phi / (2 omega) with mass-normalised undamped modes",
            "air_drag": "quadratic in velocity, so its linearization at rest is zero: only Kelvin-Voigt damping enters C",
        })
        .to_string(),
    );
    let paths = write_linear_analysis(
        &args.out,
        &tether,
        &all_modes,
        &state_space,
        &frequencies,
        &responses,
        &metadata,
    )?;

    let two_pi = 2.0 * std::f64::consts::PI;
    let shown: Vec<_> = all_modes.iter().take(args.modes).collect();
    let label = format!(
        "n = {}, D = {} Pa·s, tip mass {} kg",
        params.elements, params.damping_pa_s, params.tip_mass_kg
    );
    let bode = BodePlot {
        title: format!("Winch position to tip ({label})"),
        frequencies_hz: frequencies.clone(),
        responses: OUTPUTS
            .iter()
            .enumerate()
            .map(|(k, name)| (name.to_string(), responses.iter().map(|r| r[k]).collect()))
            .collect(),
        natural_frequencies_hz: all_modes.iter().map(|m| m.omega_rad_s / two_pi).collect(),
    };
    tether_sweep::plot::save(&args.out.join("bode"), &bode)?;
    let shapes = ModeShapePlot {
        title: format!("Lowest modes, hanging equilibrium ({label})"),
        modes: shown
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let points = nodal_shape(&tether, m)
                    .into_iter()
                    .map(|(node, dx, _)| (dx, model.equilibrium[4 * node + 1]))
                    .collect();
                (
                    format!("mode {}: {:.3} Hz", k + 1, m.omega_rad_s / two_pi),
                    points,
                )
            })
            .collect(),
    };
    tether_sweep::plot::save(&args.out.join("mode_shapes"), &shapes)?;

    let stretch = -model.equilibrium[tether.tip_index() + 1] - params.length_m;
    println!(
        "linearized about the hanging equilibrium | {label}, C_D = {} (drag linearizes to zero at rest) | {wall:.3} s",
        params.drag_coefficient
    );
    println!(
        "static stretch of the tip: {stretch:.6e} m; {} modes",
        all_modes.len()
    );
    println!(
        "{:>5} {:>14} {:>12} {:>14}",
        "mode", "omega [rad/s]", "f [Hz]", "damping ratio"
    );
    for (k, m) in shown.iter().enumerate() {
        println!(
            "{:>5} {:>14.5} {:>12.5} {:>14.4e}",
            k + 1,
            m.omega_rad_s,
            m.omega_rad_s / two_pi,
            m.damping_ratio
        );
    }
    let top = all_modes.last().expect("at least one mode");
    println!(
        "highest: {:.4e} rad/s (damping ratio {:.3}); the explicit solver's step follows from it",
        top.omega_rad_s, top.damping_ratio
    );
    let peak = responses
        .iter()
        .zip(&frequencies)
        .max_by(|a, b| a.0[0].norm().total_cmp(&b.0[0].norm()))
        .expect("at least two frequencies");
    println!(
        "tip x / winch x: {:.4} at {:.3} Hz (static gain 1); largest {:.1} at {:.3} Hz",
        responses[0][0].norm(),
        frequencies[0],
        peak.0[0].norm(),
        peak.1
    );
    for p in paths.iter().map(|p| p.display().to_string()).chain(
        ["bode", "mode_shapes"]
            .iter()
            .map(|f| format!("{}/{f}.{{svg,png}}", args.out.display())),
    ) {
        println!("wrote {p}");
    }
    Ok(())
}

fn run_simulate(args: SimulateArgs) -> Result<()> {
    let mut table = match &args.config {
        Some(path) => config::read_table(path).map_err(usage)?,
        None => Table::new(),
    };
    config::merge(&mut table, args.overrides());
    let cfg = config::resolve(table).map_err(usage)?;
    TableFormat::from_path(&args.out).map_err(usage)?;
    // Claim the output before simulating: an unwritable path fails at once.
    let mut pending = PendingFile::create(&args.out).map_err(usage)?;

    // The GPU runs the fixed-step schemes; `auto` keeps the reference
    // solver on the CPU, `gpu` with it is a contradiction.
    let on_gpu = match (args.engine.backend, cfg.solver.kind.fixed_step_scheme()) {
        (Backend::Gpu, None) => Err(UsageError(
            "--backend gpu runs the explicit and semi-implicit schemes: use --solver explicit or semi-implicit, or --backend cpu for the reference solver".into(),
        ))?,
        // One simulation is one GPU invocation: no GPU beats a CPU core at
        // that, so `auto` means the CPU here.
        (_, None) | (Backend::Auto, _) => None,
        (_, Some(scheme)) => args.engine.open()?.map(|gpu| (gpu, scheme)),
    };
    print_header(&cfg);
    let started = Instant::now();
    let output = match &on_gpu {
        Some((gpu, scheme)) => tether_sweep::scenario::batch::simulate_gpu(
            gpu,
            &cfg.scenario,
            &cfg.tether,
            *scheme,
            cfg.solver.step_s,
            args.engine.precision,
        )
        .context("simulation failed")?,
        None => simulate(&cfg.scenario, &cfg.tether, &cfg.solver).context("simulation failed")?,
    };
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
    fn json<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_string(value).expect("plain data serializes")
    }
    let mut m = tether_sweep::io::track_metadata();
    m.insert("tether_sweep.tether".into(), json(&cfg.tether));
    m.insert("tether_sweep.scenario".into(), json(&cfg.scenario));
    m.insert("tether_sweep.solver_settings".into(), json(&cfg.solver));
    m.insert("tether_sweep.solver_report".into(), json(&out.report));
    if let Some(obj) = &out.swingup {
        m.insert("tether_sweep.swingup_objective".into(), json(obj));
    }
    m
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
        SolverReport::FixedStep {
            scheme,
            step_s,
            steps,
        } => println!(
            "{}: step {step_s:.4e} s, {steps} steps, {wall_s:.3} s wall",
            scheme.name()
        ),
        SolverReport::Gpu {
            scheme,
            step_s,
            steps,
            precision,
        } => println!(
            "GPU {} ({}): step {step_s:.4e} s, {steps} steps, {wall_s:.3} s wall",
            scheme.name(),
            precision.name()
        ),
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

fn run_bench(args: BenchArgs) -> Result<()> {
    use tether_sweep::bench::{self, Engine, Peaks};
    use tether_sweep::io::table::{Column, write_columns};
    for &n in &args.elements {
        if !(1..=tether_sweep::model::params::MAX_ELEMENTS).contains(&n) {
            Err(UsageError(format!(
                "--elements {n}: allowed 1..={}",
                tether_sweep::model::params::MAX_ELEMENTS
            )))?;
        }
    }
    if args.batch.contains(&0) {
        Err(UsageError("--batch: sizes must be ≥ 1".into()))?;
    }
    if !(1..=100).contains(&args.repeats) {
        Err(UsageError(format!(
            "--repeats: {} runs; allowed 1–100",
            args.repeats
        )))?;
    }
    let scenario = bench::scenario(args.duration);
    scenario
        .validate(tether_sweep::model::TetherParams::default().length_m)
        .map_err(|e| UsageError(format!("--duration: {e}")))?;
    TableFormat::from_path(&args.out).map_err(usage)?;
    let gpu = match tether_sweep::gpu::select(Backend::Gpu, args.adapter.as_deref()) {
        Ok((gpu, _)) => gpu,
        Err(e) if args.engines.is_none() => {
            eprintln!("no GPU engines: {e}");
            None
        }
        Err(e) => Err(e)?,
    };
    let engines = args.engines.clone().unwrap_or_else(|| {
        let mut all = Vec::new();
        if let Some(g) = &gpu {
            all.extend([Engine::GpuF32, Engine::GpuSemiImplicitF32]);
            if g.adapter.shader_f64 {
                all.extend([Engine::GpuF64, Engine::GpuSemiImplicitF64]);
            }
        }
        all.extend([
            Engine::CpuExplicit,
            Engine::CpuSemiImplicit,
            Engine::CpuReference,
        ]);
        all
    });
    if engines.iter().any(|e| e.gpu().is_some()) && gpu.is_none() {
        Err(tether_sweep::gpu::GpuError::NoAdapter)?;
    }
    let peaks = Peaks::measure(gpu.as_ref())?;
    if let Some(g) = &gpu {
        println!("GPU: {} (workgroup {})", g.adapter, g.workgroup_size);
    }
    let fmt_peak = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}"));
    println!(
        "measured multiply-add peak [GFLOP/s]: GPU f32 {}, GPU f64 {}, CPU f64 {}; flops per element-step: explicit {}, GPU semi-implicit {}",
        fmt_peak(peaks.gpu_f32),
        fmt_peak(peaks.gpu_f64),
        fmt_peak(peaks.cpu_f64),
        tether_sweep::gpu::flops::PER_ELEMENT_STEP,
        tether_sweep::gpu::flops::SEMI_IMPLICIT_PER_ELEMENT_STEP,
    );
    if args.repeats > 1 {
        println!("wall s: the fastest of {} runs", args.repeats);
    }
    println!(
        "{:<21} {:>4} {:>6} {:>9} {:>12} {:>10} {:>14} {:>8} {:>7} {:>8}",
        "engine",
        "n",
        "batch",
        "wall s",
        "element-steps",
        "sims/s",
        "el-steps/s",
        "GFLOP/s",
        "% peak",
        "setup s"
    );
    let mut rows = Vec::new();
    for &n in &args.elements {
        for &b in &args.batch {
            for &engine in &engines {
                if let Some((precision, scheme)) = engine.gpu() {
                    let limit =
                        tether_sweep::gpu::layout::max_gpu_elements(precision.real_bytes(), scheme);
                    if n > limit {
                        println!(
                            "{:<21} {:>4} {:>6} skipped: the engine takes n ≤ {limit}",
                            engine.name(),
                            n,
                            b
                        );
                        continue;
                    }
                }
                let r = bench::run(
                    engine,
                    gpu.as_ref(),
                    &scenario,
                    (n, b),
                    args.repeats,
                    &peaks,
                )
                .with_context(|| format!("{} n={n} batch={b}", engine.name()))?;
                println!(
                    "{:<21} {:>4} {:>6} {:>9.3} {:>12.3e} {:>10.2} {:>14.3e} {:>8} {:>7} {:>8}",
                    engine.name(),
                    n,
                    b,
                    r.wall_s,
                    r.element_steps as f64,
                    r.simulations_per_s,
                    r.element_steps_per_s,
                    r.gflops.map_or("-".into(), |g| format!("{g:.2}")),
                    r.peak_fraction
                        .map_or("-".into(), |f| format!("{:.1}", 100.0 * f)),
                    r.setup_s.map_or("-".into(), |s| format!("{s:.3}")),
                );
                rows.push(r);
            }
        }
    }
    // The peak again, after the runs: the fractions above are against the
    // first measurement, and a noisy neighbour then would flatter them.
    let peaks_after = Peaks::measure(gpu.as_ref())?;
    let shortfall = peaks.shortfall_against(&peaks_after);
    println!(
        "multiply-add peak again after the runs [GFLOP/s]: GPU f32 {}, GPU f64 {}",
        fmt_peak(peaks_after.gpu_f32),
        fmt_peak(peaks_after.gpu_f64),
    );
    if shortfall > 0.05 {
        println!(
            "warning: the peak measured {:.0} % higher after the runs than before; the % peak column may be that much too high (a busy machine?). Rerun, or use --repeats.",
            100.0 * shortfall
        );
    }
    let mut metadata = tether_sweep::io::base_metadata();
    metadata.insert(
        "tether_sweep.scenario".into(),
        serde_json::to_string(&scenario)?,
    );
    metadata.insert(
        "tether_sweep.peaks_gflops".into(),
        serde_json::to_string(&peaks)?,
    );
    metadata.insert(
        "tether_sweep.peaks_after_runs_gflops".into(),
        serde_json::to_string(&peaks_after)?,
    );
    metadata.insert(
        "tether_sweep.flops_per_element_step".into(),
        serde_json::json!({
            "explicit": tether_sweep::gpu::flops::PER_ELEMENT_STEP,
            "semi-implicit (GPU)": tether_sweep::gpu::flops::SEMI_IMPLICIT_PER_ELEMENT_STEP,
        })
        .to_string(),
    );
    if let Some(g) = &gpu {
        metadata.insert(
            "tether_sweep.adapter".into(),
            serde_json::to_string(&g.adapter)?,
        );
    }
    write_columns(
        &args.out,
        vec![
            Column::text(
                "engine",
                rows.iter().map(|r| r.engine.name().to_string()).collect(),
            ),
            Column::text("device", rows.iter().map(|r| r.device.clone()).collect()),
            Column::i32("elements", rows.iter().map(|r| r.elements as i32).collect()),
            Column::i32("batch", rows.iter().map(|r| r.batch as i32).collect()),
            Column::f64("wall_s", "s", rows.iter().map(|r| r.wall_s).collect()),
            Column::i32("repeats", rows.iter().map(|r| r.repeats as i32).collect()),
            Column::i64(
                "element_steps",
                rows.iter().map(|r| r.element_steps as i64).collect(),
            ),
            Column::f64(
                "simulations_per_s",
                "1/s",
                rows.iter().map(|r| r.simulations_per_s).collect(),
            ),
            Column::f64(
                "element_steps_per_s",
                "1/s",
                rows.iter().map(|r| r.element_steps_per_s).collect(),
            ),
            Column::optional_f64("gflops", "GFLOP/s", rows.iter().map(|r| r.gflops).collect()),
            Column::optional_f64(
                "peak_gflops",
                "GFLOP/s",
                rows.iter().map(|r| r.peak_gflops).collect(),
            ),
            Column::optional_f64(
                "peak_fraction",
                "1",
                rows.iter().map(|r| r.peak_fraction).collect(),
            ),
            Column::optional_f64("setup_s", "s", rows.iter().map(|r| r.setup_s).collect()),
        ],
        &metadata,
    )?;
    println!("wrote {}", args.out.display());
    Ok(())
}
