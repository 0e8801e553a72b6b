//! `tether-sweep identify` and `tether-sweep summarize`: the identification
//! sweep, run whole or as one shard of N, chunk by chunk so that a killed
//! run can `--resume`, and the merge of a sharded run's parts.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use super::{EngineArgs, Interrupted, UsageError, claim_output, interrupt_flag, usage};
use tether_sweep::gpu::{Gpu, Precision};
use tether_sweep::io::checkpoint::{CHUNKS_DIR, CheckpointError, ChunkStore};
use tether_sweep::io::results::{BestFit, read_results, write_best_fit, write_results};
use tether_sweep::io::track::read_parquet_metadata;
use tether_sweep::model::TetherParams;
use tether_sweep::objective::MeasuredTrack;
use tether_sweep::scenario::{Scenario, ScenarioKind, SolverSettings, simulate};
use tether_sweep::solver::{FixedStepScheme, SolverKind};
use tether_sweep::sweep::validation::Validation;
use tether_sweep::sweep::{CandidateResult, Grid, Shard, Status, Summary, summarize};

#[derive(Debug, Args)]
pub struct IdentifyArgs {
    /// Measured marker track (Parquet or CSV with columns t, marker, x, y;
    /// frames and markers matched by value).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "datasets/drop_synthetic.parquet"
    )]
    pub measured: PathBuf,
    /// Element counts n: start:stop:step (inclusive) or a comma list.
    #[arg(long, value_name = "AXIS", default_value = "10:50:10")]
    pub elements: String,
    /// Damping D [Pa·s]: start:stop:step (inclusive) or a comma list.
    /// SPEC §6's full axis is 0:10000:100.
    #[arg(long, value_name = "AXIS", default_value = "0:5000:250")]
    pub damping: String,
    /// Drag coefficient C_D: start:stop:step (inclusive) or a comma list.
    #[arg(long, value_name = "AXIS", default_value = "0.6:0.9:0.05")]
    pub drag_coefficient: String,
    /// The grid from a TOML file instead: keys elements, damping and
    /// drag_coefficient, each an axis string or an array of numbers
    /// (examples/spec_grid.toml is SPEC §6's grid).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["elements", "damping", "drag_coefficient"])]
    pub grid: Option<PathBuf>,
    /// Run only shard K of N (interleaved: candidate i belongs to shard
    /// i mod N) and write DIR/shard=K/part.parquet; `summarize DIR` merges
    /// the parts. Default in a Slurm array job: SLURM_ARRAY_TASK_ID −
    /// SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Finish an interrupted run of the same command from its saved chunks.
    #[arg(long)]
    pub resume: bool,
    /// Candidates per saved chunk (what a killed run may have to redo).
    /// Default: 16 per CPU thread, or 1024 on the GPU.
    #[arg(long, value_name = "COUNT")]
    pub chunk_size: Option<usize>,
    /// Solver for every candidate. On the CPU the reference solver is the
    /// faster one for these grids (its step is not limited by D·n²); the GPU
    /// runs `explicit` or `semi-implicit` (`reference` there is refused).
    /// [default: reference on the CPU, semi-implicit on the GPU]
    #[arg(long, value_enum)]
    pub solver: Option<SolverKind>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Tip mass of every candidate [kg], ≥ 0 (not identified).
    #[arg(long, value_name = "KG", default_value_t = 0.0)]
    pub tip_mass: f64,
    /// Tether length of every candidate [m], > 0 (not identified).
    #[arg(long, value_name = "M", default_value_t = 0.6)]
    pub length: f64,
    /// After a sweep on the GPU or the CPU explicit solver, re-run the best
    /// candidate and the best of up to K−1 other n on the f64 reference
    /// solver and fail if they disagree beyond the tolerances; 0: skip.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub validate: usize,
    /// Largest marker deviation the validation accepts [m].
    #[arg(long, value_name = "M", default_value_t = tether_sweep::sweep::validation::DEFAULT_MARKER_TOLERANCE_M)]
    pub validate_marker_tolerance: f64,
    /// Largest relative J_e deviation the validation accepts.
    #[arg(long, value_name = "R", default_value_t = tether_sweep::sweep::validation::DEFAULT_J_E_TOLERANCE)]
    pub validate_j_e_tolerance: f64,
    /// Also write the results as CSV beside the Parquet table (no metadata:
    /// CSV has nowhere to keep it).
    #[arg(long)]
    pub csv: bool,
    /// Output directory: results.parquet, best_fit.parquet and the figures
    /// surface, per_elements and shapes (SVG and PNG); with --shard only
    /// DIR/shard=K/part.parquet.
    #[arg(long, value_name = "DIR", default_value = "identify-results")]
    pub out: PathBuf,
    /// Replace an existing results table, and discard the saved chunks of
    /// an interrupted run.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// A directory of `identify --shard K/N` runs: DIR/shard=K/part.parquet
    /// for every K from 0 to N−1.
    pub dir: PathBuf,
    /// The measured track, when it is no longer at the path the shards
    /// recorded (its SHA-256 must match).
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// Output directory of the merged results.parquet, best_fit.parquet and
    /// figures. Default DIR/_summary (the leading underscore keeps Hive
    /// readers of DIR from taking it for data).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace an existing merged results.parquet.
    #[arg(long)]
    pub force: bool,
}

/// Why `--backend auto` sweeps on the CPU even where there is a GPU.
const CPU_FASTER_FOR_SWEEPS: &str = "the CPU reference solver beat the GPU engine's explicit scheme on sweeps (H100 machine: default grid 20 s on 16 cores, over 200 s on the GPU; BENCHMARKS.md), and its semi-implicit scheme is not yet timed on a hardware GPU";

/// Metadata keys that identify and summarize share.
const KEY_GRID: &str = "tether_sweep.grid";
const KEY_SHARD: &str = "tether_sweep.shard";
const KEY_MEASURED: &str = "tether_sweep.measured";
const KEY_MEASURED_SHA256: &str = "tether_sweep.measured_sha256";
const KEY_TETHER: &str = "tether_sweep.tether";
const KEY_SCENARIO: &str = "tether_sweep.scenario";
const KEY_ENGINE: &str = "tether_sweep.engine";
const KEY_VALIDATION: &str = "tether_sweep.validation";

/// backend, precision and solver of the results table's columns.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct EngineNames {
    backend: String,
    precision: String,
    solver: String,
}

impl EngineNames {
    fn tuple(&self) -> (&str, &str, &str) {
        (&self.backend, &self.precision, &self.solver)
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes")
}

/// Compared coordinates of a drop: 2 per marker and frame after t = 0.
fn observations(scenario: &Scenario) -> usize {
    let frames = (scenario.duration_s / scenario.frame_interval_s).round() as usize;
    2 * frames * scenario.marker_arc_lengths_m.len()
}

pub fn run_identify(args: IdentifyArgs) -> Result<()> {
    use tether_sweep::io::track::read_measured;
    use tether_sweep::sweep::{check_coverage, run_cpu};

    let grid = match &args.grid {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| UsageError(format!("cannot read --grid {}: {e}", path.display())))?;
            Grid::from_toml(&text)
                .map_err(|e| UsageError(format!("--grid {}: {e}", path.display())))?
        }
        None => {
            Grid::parse(&args.elements, &args.damping, &args.drag_coefficient).map_err(usage)?
        }
    };
    let shard = match &args.shard {
        Some(text) => Some(Shard::parse(text).map_err(usage)?),
        None => Shard::from_slurm(|name| std::env::var(name).ok()).map_err(usage)?,
    };
    if args.chunk_size == Some(0) {
        Err(usage(tether_sweep::error::InputError::new(
            "chunk-size",
            0,
            "at least 1 candidate",
        )))?;
    }
    let measured = read_measured(&args.measured).map_err(usage)?;
    let base = TetherParams {
        tip_mass_kg: args.tip_mass,
        length_m: args.length,
        ..TetherParams::default()
    };
    base.validate().map_err(usage)?;
    for (field, value) in [
        ("validate_marker_tolerance", args.validate_marker_tolerance),
        ("validate_j_e_tolerance", args.validate_j_e_tolerance),
    ] {
        tether_sweep::error::require_positive(field, value).map_err(usage)?;
    }
    args.engine.check_solver(args.solver)?;
    let measured_sha256 = tether_sweep::io::sha256_hex(&args.measured)?;
    let scenario = Scenario::new(ScenarioKind::Drop, base.length_m);
    check_coverage(&measured, &scenario).map_err(usage)?;
    let (table_dir, table_name) = match &shard {
        Some(s) => (args.out.join(s.directory()), "part.parquet"),
        None => (args.out.clone(), "results.parquet"),
    };
    let table_path = claim_output(&table_dir, table_name, args.force)?;
    let gpu = args.engine.open_unless_auto(CPU_FASTER_FOR_SWEEPS)?;
    // What the GPU runs, when it runs.
    let gpu_scheme = EngineArgs::gpu_scheme(args.solver);
    let (backend, precision, solver) = match &gpu {
        Some(_) => ("gpu", args.engine.precision, SolverKind::from(gpu_scheme)),
        None => (
            "cpu",
            Precision::F64,
            args.solver.unwrap_or(SolverKind::Reference),
        ),
    };
    let engine = EngineNames {
        backend: backend.into(),
        precision: precision.name().into(),
        solver: solver.name().into(),
    };
    let settings = SolverSettings {
        kind: solver,
        ..Default::default()
    };

    let mut metadata = tether_sweep::io::base_metadata();
    metadata.insert(KEY_GRID.into(), json(&grid));
    if let Some(s) = &shard {
        metadata.insert(KEY_SHARD.into(), s.to_string());
    }
    metadata.insert(KEY_MEASURED.into(), args.measured.display().to_string());
    metadata.insert(KEY_MEASURED_SHA256.into(), measured_sha256.clone());
    metadata.insert(KEY_TETHER.into(), json(&base));
    metadata.insert(KEY_SCENARIO.into(), json(&scenario));
    metadata.insert("tether_sweep.solver_settings".into(), json(&settings));
    metadata.insert(KEY_ENGINE.into(), json(&engine));
    if let Some(g) = &gpu {
        metadata.insert("tether_sweep.adapter".into(), json(&g.adapter));
    }
    // Everything that decides the results: a resume must continue the same run.
    let run_key = json(&(
        &grid,
        &shard,
        &measured_sha256,
        &base,
        &scenario,
        &settings,
        &engine,
    ));
    let (mut store, done) = ChunkStore::open(&table_dir, &run_key, args.resume, args.force)
        .map_err(|e| match e {
            CheckpointError::Io(io) => anyhow::Error::from(io),
            other => usage(&other).into(),
        })?;

    let selected: Vec<usize> = (0..grid.len())
        .filter(|&i| shard.is_none_or(|s| s.contains(i)))
        .collect();
    let done_indices: HashSet<usize> = done
        .iter()
        .filter_map(|r| grid.index_of(&r.candidate))
        .collect();
    let candidates = grid.candidates();
    let todo: Vec<_> = selected
        .iter()
        .filter(|i| !done_indices.contains(i))
        .map(|&i| candidates[i])
        .collect();
    println!(
        "identify: {} candidates (n: {} values, D: {}, C_D: {}){} against {} | {}, {} solver, {}",
        grid.len(),
        grid.elements.len(),
        grid.damping_pa_s.len(),
        grid.drag_coefficient.len(),
        match &shard {
            Some(s) => format!(", shard {s}: {}", selected.len()),
            None => String::new(),
        },
        args.measured.display(),
        match &gpu {
            Some(g) => format!("GPU {}", g.adapter.name),
            None => format!("CPU, {} threads", rayon::current_num_threads()),
        },
        solver.name(),
        precision.name()
    );
    if !done.is_empty() {
        println!(
            "resuming: {} candidates from {} saved chunks, {} to run",
            done.len(),
            store.chunks(),
            todo.len()
        );
    }

    let chunk_size = args.chunk_size.unwrap_or(match &gpu {
        Some(_) => 1024,
        None => 16 * rayon::current_num_threads(),
    });
    let started = Instant::now();
    // On stderr, and only when it is a terminal: logs and pipes stay clean.
    let progress = indicatif::ProgressBar::new(todo.len() as u64).with_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} simulations, {elapsed} elapsed, ETA {eta}",
        )
        .expect("valid template"),
    );
    let mut results = done;
    let mut interrupted = false;
    for chunk in todo.chunks(chunk_size) {
        let finished = match &gpu {
            Some(gpu) => run_gpu_chunk(
                gpu, gpu_scheme, chunk, &measured, &base, &scenario, precision, &progress,
            )?,
            None => run_cpu(chunk, &measured, &base, &scenario, &settings, &progress),
        };
        if finished.iter().any(|r| r.status == Status::Cancelled) {
            interrupted = true;
            break;
        }
        store.save(&finished, engine.tuple(), &metadata)?;
        results.extend(finished);
    }
    progress.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    if interrupted {
        Err(Interrupted(format!(
            "interrupted: {} of {} candidates are finished and saved in {}; run the same command with --resume to finish",
            results.len(),
            selected.len(),
            table_dir.join(CHUNKS_DIR).display()
        )))?;
    }
    results.sort_by_key(|r| grid.index_of(&r.candidate));

    metadata.insert("tether_sweep.wall_s".into(), format!("{wall:.3}"));
    let summary = summarize(&grid, &results, observations(&scenario));
    if let Some(s) = &summary {
        metadata.insert("tether_sweep.summary".into(), json(s));
    }
    // The best fit always comes from the f64 reference solver; the
    // validation's reference runs provide it when there is one.
    let mut validation = None;
    let mut best_reference = None;
    if let Some(s) = &summary {
        use tether_sweep::scenario::batch::simulate_gpu;
        use tether_sweep::sweep::validation::{pick, validate};
        let needs_validation = gpu.is_some() || solver != SolverKind::Reference;
        if needs_validation && args.validate > 0 {
            let rerun = |params: &TetherParams| match &gpu {
                Some(g) => simulate_gpu(g, &scenario, params, gpu_scheme, None, precision),
                None => Ok(simulate(&scenario, params, &settings)?),
            };
            println!(
                "validating {} candidates against the f64 reference solver…",
                args.validate.min(1 + s.best_per_elements.len())
            );
            let (v, references) = validate(
                &pick(s, args.validate),
                &base,
                &scenario,
                &measured,
                &rerun,
                args.validate_marker_tolerance,
                args.validate_j_e_tolerance,
            )
            .context("validation run failed")?;
            metadata.insert(KEY_VALIDATION.into(), json(&v));
            validation = Some(v);
            best_reference = references.into_iter().next();
        }
    }
    let csv_path = args.csv.then(|| table_path.with_extension("csv"));
    for path in std::iter::once(&table_path).chain(&csv_path) {
        write_results(
            path,
            &results,
            backend,
            precision.name(),
            solver.name(),
            &metadata,
        )?;
    }
    // A shard's part is all it writes: its best is only a shard's best, and
    // anything else under DIR would break reading DIR as one dataset.
    let figures = match (&summary, &shard) {
        (Some(s), None) => {
            let reference = match best_reference {
                Some(r) => r,
                None => best_fit_run(s, &base, &scenario)?,
            };
            let fit = BestFit::new(&measured, &reference.track);
            write_best_fit(&args.out.join("best_fit.parquet"), &fit, &metadata)?;
            Some(tether_sweep::plot::identify::save_all(
                &args.out,
                &results,
                Some(&fit),
            )?)
        }
        _ => None,
    };
    store.finish()?;

    println!(
        "{} simulations in {wall:.1} s ({:.1} simulations/s)",
        results.len() - done_indices.len(),
        (results.len() - done_indices.len()) as f64 / wall
    );
    let Some(s) = summary else {
        anyhow::bail!(
            "every candidate diverged: no J_e to compare (results in {})",
            table_path.display()
        );
    };
    print_summary(&s, shard.is_some());
    if let Some(v) = &validation {
        print_validation(v);
    }
    match figures {
        Some(f) => println!(
            "wrote {}, best_fit.parquet and figures {} (.svg, .png)",
            table_path.display(),
            f.join(", ")
        ),
        None => println!(
            "wrote {}; when every shard is done, `tether-sweep summarize {}` merges them",
            table_path.display(),
            args.out.display()
        ),
    }
    if let Some(v) = validation.filter(|v| !v.passed) {
        anyhow::bail!(
            "validation failed: the sweep's engine deviates from the f64 reference solver by up to {:.2e} m at the markers and {:.2e} in J_e (tolerances {:.0e} m, {:.0e}); details in the metadata key {KEY_VALIDATION} of {}{}",
            v.max_marker_deviation_m,
            v.max_j_e_relative_deviation,
            v.marker_tolerance_m,
            v.j_e_tolerance,
            table_path.display(),
            if gpu.is_some() && precision == Precision::F32 {
                ". Try --precision f64, which agrees with the CPU explicit solver to 1e-14 m"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// One chunk on the GPU, with the progress bar advanced by the chunk's
/// share of element-steps and Ctrl-C stopping between dispatches.
#[allow(clippy::too_many_arguments)]
fn run_gpu_chunk(
    gpu: &Gpu,
    scheme: FixedStepScheme,
    chunk: &[tether_sweep::sweep::Candidate],
    measured: &MeasuredTrack,
    base: &TetherParams,
    scenario: &Scenario,
    precision: Precision,
    progress: &indicatif::ProgressBar,
) -> Result<Vec<CandidateResult>> {
    let start = progress.position();
    let report = |done: u64, total: u64| {
        progress.set_position(start + (chunk.len() as u64 * done) / total.max(1));
    };
    let results = tether_sweep::sweep::run_gpu(
        gpu,
        scheme,
        chunk,
        measured,
        base,
        scenario,
        &tether_sweep::gpu::BatchOptions {
            precision,
            progress: Some(&report),
            cancel: Some(interrupt_flag()),
            ..Default::default()
        },
    )
    .context("GPU sweep failed")?;
    progress.set_position(start + chunk.len() as u64);
    Ok(results)
}

fn best_fit_run(
    s: &Summary,
    base: &TetherParams,
    scenario: &Scenario,
) -> Result<tether_sweep::scenario::SimulationOutput> {
    simulate(
        scenario,
        &s.best.candidate.params(base),
        &SolverSettings::reference(),
    )
    .context("best-fit run on the reference solver failed")
}

fn print_summary(s: &Summary, shard_only: bool) {
    let show = |r: &CandidateResult| {
        format!(
            "n = {:>3}, D = {:>7.1} Pa·s, C_D = {:.3}: J_e = {:.6e} m²",
            r.candidate.elements,
            r.candidate.damping_pa_s,
            r.candidate.drag_coefficient,
            r.j_e_m2.unwrap_or(f64::NAN)
        )
    };
    let scope = if shard_only { " (of this shard)" } else { "" };
    println!("best{scope}: {}", show(&s.best));
    println!("best per n{scope}:");
    for r in &s.best_per_elements {
        println!("  {}", show(r));
    }
    let c = &s.confidence;
    println!(
        "≈95 % confidence region at n = {} (Gaussian marker noise, σ² = J_min/(N−2) = {:.3e} m², σ ≈ {:.2} mm, N = {}){}:",
        c.elements,
        c.sigma2_m2,
        c.sigma2_m2.sqrt() * 1e3,
        c.observations,
        if shard_only {
            ", over this shard's candidates only: `summarize` gives the whole grid's"
        } else {
            ""
        }
    );
    let flag = |edge: bool| {
        if edge {
            "  ← reaches the grid's edge: not pinned down by the data within this grid"
        } else {
            ""
        }
    };
    println!(
        "  D   in [{}, {}] Pa·s{}",
        c.damping_pa_s.0,
        c.damping_pa_s.1,
        flag(c.damping_at_grid_edge)
    );
    println!(
        "  C_D in [{:.3}, {:.3}]{}",
        c.drag_coefficient.0,
        c.drag_coefficient.1,
        flag(c.drag_at_grid_edge)
    );
    if s.diverged > 0 {
        println!(
            "{} candidates diverged (status = diverged, no J_e)",
            s.diverged
        );
    }
}

fn print_validation(v: &Validation) {
    println!(
        "validation against the f64 reference solver ({} candidates): max marker deviation {:.2e} m (tolerance {:.0e}), max J_e deviation {:.2e} relative (tolerance {:.0e}){}",
        v.candidates.len(),
        v.max_marker_deviation_m,
        v.marker_tolerance_m,
        v.max_j_e_relative_deviation,
        v.j_e_tolerance,
        if v.passed { "" } else { "  ← FAILED" }
    );
}

/// One shard's part: where it is, its metadata and its rows.
struct Part {
    path: PathBuf,
    metadata: BTreeMap<String, String>,
    results: Vec<CandidateResult>,
}

fn shard_parts(dir: &Path) -> Result<Vec<(usize, Part)>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", dir.display())))?;
    let mut parts = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(k) = name.strip_prefix("shard=") else {
            continue;
        };
        let path = entry.path().join("part.parquet");
        let index: usize = k.parse().map_err(|_| {
            UsageError(format!(
                "{}: not a shard=K directory",
                entry.path().display()
            ))
        })?;
        if !path.exists() {
            Err(UsageError(format!(
                "{} is missing: shard {index} has not finished (rerun it, with --resume if it was interrupted)",
                path.display()
            )))?;
        }
        parts.push((
            index,
            Part {
                metadata: read_parquet_metadata(&path)?,
                results: read_results(&path)?,
                path,
            },
        ));
    }
    parts.sort_by_key(|(k, _)| *k);
    Ok(parts)
}

pub fn run_summarize(args: SummarizeArgs) -> Result<()> {
    let parts = shard_parts(&args.dir)?;
    let Some((_, first)) = parts.first() else {
        Err(UsageError(format!(
            "no shard=K/part.parquet in {}: `summarize` merges the parts of `identify --shard K/N --out {}`",
            args.dir.display(),
            args.dir.display()
        )))?
    };
    let key = |part: &Part, key: &str| -> Result<String> {
        part.metadata.get(key).cloned().ok_or_else(|| {
            UsageError(format!(
                "{}: no metadata key {key}: not written by identify --shard",
                part.path.display()
            ))
            .into()
        })
    };
    // Every part must come from the same sweep.
    for (_, part) in &parts {
        for k in [
            KEY_GRID,
            KEY_MEASURED_SHA256,
            KEY_TETHER,
            KEY_SCENARIO,
            KEY_ENGINE,
        ] {
            if key(part, k)? != key(first, k)? {
                Err(UsageError(format!(
                    "{} and {} differ in {k}: they are shards of different sweeps",
                    first.path.display(),
                    part.path.display()
                )))?;
            }
        }
    }
    let count = Shard::parse(&key(first, KEY_SHARD)?).map_err(usage)?.count;
    let present: Vec<usize> = parts.iter().map(|(k, _)| *k).collect();
    let missing: Vec<String> = (0..count)
        .filter(|k| !present.contains(k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() || present.iter().any(|&k| k >= count) {
        Err(UsageError(format!(
            "{} holds shards {present:?} of {count}; missing: {}",
            args.dir.display(),
            missing.join(", ")
        )))?;
    }
    let parse = |k: &str| -> Result<String> { key(first, k) };
    let grid: Grid = serde_json::from_str(&parse(KEY_GRID)?)?;
    let base: TetherParams = serde_json::from_str(&parse(KEY_TETHER)?)?;
    let scenario: Scenario = serde_json::from_str(&parse(KEY_SCENARIO)?)?;
    let engine: EngineNames = serde_json::from_str(&parse(KEY_ENGINE)?)?;
    let mut results: Vec<CandidateResult> = parts
        .iter()
        .flat_map(|(_, p)| p.results.iter().cloned())
        .collect();
    results.sort_by_key(|r| grid.index_of(&r.candidate));
    let indices: Vec<Option<usize>> = results
        .iter()
        .map(|r| grid.index_of(&r.candidate))
        .collect();
    if indices != (0..grid.len()).map(Some).collect::<Vec<_>>() {
        Err(UsageError(format!(
            "the parts in {} hold {} rows, not the grid's {} candidates once each",
            args.dir.display(),
            results.len(),
            grid.len()
        )))?;
    }
    let measured_path = match &args.measured {
        Some(p) => p.clone(),
        None => PathBuf::from(parse(KEY_MEASURED)?),
    };
    let sha = tether_sweep::io::sha256_hex(&measured_path).map_err(|e| {
        UsageError(format!(
            "{e} (pass --measured FILE if the measured track has moved)"
        ))
    })?;
    if sha != parse(KEY_MEASURED_SHA256)? {
        Err(UsageError(format!(
            "{} is not the measured track the shards used (SHA-256 differs)",
            measured_path.display()
        )))?;
    }
    let measured = tether_sweep::io::track::read_measured(&measured_path).map_err(usage)?;

    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.dir.join("_summary"));
    let results_path = claim_output(&out, "results.parquet", args.force)?;
    let summary = summarize(&grid, &results, observations(&scenario));
    let mut metadata = first.metadata.clone();
    metadata.remove(KEY_SHARD);
    metadata.remove(KEY_VALIDATION);
    metadata.remove("tether_sweep.wall_s");
    metadata.insert("tether_sweep.shards".into(), count.to_string());
    let validations: Vec<Validation> = parts
        .iter()
        .filter_map(|(_, p)| p.metadata.get(KEY_VALIDATION))
        .map(|v| serde_json::from_str(v))
        .collect::<Result<_, _>>()?;
    if !validations.is_empty() {
        metadata.insert("tether_sweep.shard_validations".into(), json(&validations));
    }
    metadata.remove("tether_sweep.summary");
    let fit = match &summary {
        Some(s) => {
            metadata.insert("tether_sweep.summary".into(), json(s));
            Some(BestFit::new(
                &measured,
                &best_fit_run(s, &base, &scenario)?.track,
            ))
        }
        None => None,
    };
    write_results(
        &results_path,
        &results,
        &engine.backend,
        &engine.precision,
        &engine.solver,
        &metadata,
    )?;
    let (Some(s), Some(fit)) = (summary, fit) else {
        anyhow::bail!(
            "every candidate diverged: no J_e to compare (results in {})",
            results_path.display()
        );
    };
    write_best_fit(&out.join("best_fit.parquet"), &fit, &metadata)?;
    let figures = tether_sweep::plot::identify::save_all(&out, &results, Some(&fit))?;
    println!(
        "summarize: {} shards, {} candidates of {} | {}",
        count,
        results.len(),
        args.dir.display(),
        json(&engine)
    );
    print_summary(&s, false);
    for v in &validations {
        print_validation(v);
    }
    println!(
        "wrote {}, best_fit.parquet and figures {} (.svg, .png)",
        results_path.display(),
        figures.join(", ")
    );
    if validations.iter().any(|v| !v.passed) {
        anyhow::bail!(
            "the validation of at least one shard failed (metadata key tether_sweep.shard_validations)"
        );
    }
    Ok(())
}
