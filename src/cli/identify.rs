//! `tether-sweep identify`: the identification sweep (the work is
//! `tether_sweep::workflow::identify`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::UsageError;
use super::args::{EngineArgs, config_error, name_flags, number, numbers};
use super::progress::{ProgressBar, duration, interrupt_flag};
use toml::{Table, Value};

use tether_sweep::camera::{Camera, TimeUnit};
use tether_sweep::io::config::{self, FilmConfig};
use tether_sweep::least_squares::profile::{Profile, ProfileEnd};
use tether_sweep::model::TetherParams;
use tether_sweep::scenario::Scenario;
use tether_sweep::solver::SolverKind;
use tether_sweep::sweep::accuracy::Chosen;
use tether_sweep::sweep::refine::Refined;
use tether_sweep::sweep::validation::{
    DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M, Validation,
};
use tether_sweep::sweep::{Axis, CandidateResult, Grid, Parameter, Shard, Summary};
use tether_sweep::workflow::film::{Plausibility, TrackedPin};
use tether_sweep::workflow::fit::{
    GoodnessOfFit, OUTLIER_FLOOR_OF_LENGTH, OUTLIER_SIGMAS, Outlier,
};
use tether_sweep::workflow::identify::{
    IdentifyReport, IdentifyRequest, Plan, check_outcome, prepare, shipped_dataset,
};
use tether_sweep::workflow::{Estimate, Hooks, WorkflowError, count};

#[derive(Debug, Args)]
pub struct IdentifyArgs {
    /// Measured marker track, Parquet or CSV: long (columns t, marker, x, y)
    /// or wide (a time column and x/y columns per marker, as trackers
    /// export), in the model's frame or as --config's [camera] says
    /// (pixels, y down, a tilted camera, the pin, the clock:
    /// docs/conventions.md); frames and markers matched by value.
    /// [default: the shipped datasets/drop_synthetic.parquet, compiled
    /// into the binary]
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// Element counts n: start:stop:step (inclusive) or a comma list.
    /// [default: 10:50:10]
    #[arg(long, value_name = "AXIS", allow_hyphen_values = true)]
    pub elements: Option<String>,
    /// Damping D [Pa·s]: start:stop:step (inclusive) or a comma list.
    /// The paper's full axis is 0:10000:100.
    /// [default: 0:5000:250]
    #[arg(long, value_name = "AXIS", allow_hyphen_values = true)]
    pub damping: Option<String>,
    /// Drag coefficient C_D: start:stop:step (inclusive) or a comma list.
    /// [default: 0.6:0.9:0.05]
    #[arg(long, value_name = "AXIS", allow_hyphen_values = true)]
    pub drag_coefficient: Option<String>,
    /// A grid axis over any parameter, NAME=AXIS (repeatable): NAME is
    /// elements, damping_pa_s, drag_coefficient (the flags above) or a
    /// number of the config's [tether] or [settings]: length_m, width_m,
    /// thickness_m, youngs_modulus_pa, density_kg_m3, air_density_kg_m3,
    /// gravity_m_s2, tip_mass_kg, initial_angle_deg, release_time_s, pin_x_m,
    /// pin_y_m; AXIS as for --damping. results.parquet gets a column per
    /// axis, named as here. With several --config, a film's own parameter
    /// (release_time_s, initial_angle_deg, pin_x_m, pin_y_m) is one film's
    /// axis, FILM.NAME=AXIS.
    #[arg(long = "axis", value_name = "NAME=AXIS", allow_hyphen_values = true)]
    pub axes: Vec<String>,
    /// The surface figure's two axes, A,B (any two of the grid's).
    /// [default: damping_pa_s,drag_coefficient]
    #[arg(long, value_name = "A,B")]
    pub surface: Option<String>,
    /// The grid from a TOML file instead: keys elements, damping and
    /// drag_coefficient, each an axis string or an array of numbers, and
    /// any parameter axes under the parameter's name
    /// (examples/paper_grid.toml is the paper's grid, docs/model.md §6).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["elements", "damping", "drag_coefficient"])]
    pub grid: Option<PathBuf>,
    /// Run only shard K of N (interleaved by release group: the
    /// candidates that share one simulation, one each without a
    /// release_time_s axis; group g belongs to shard g mod N) and write
    /// DIR/shard=K/part.parquet (several films: one
    /// DIR/shard=K/film=FILM/part.parquet each); `summarize DIR` merges
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
    /// faster one for these grids (its step is not limited by D·n²); on the
    /// GPU `reference` runs the same adaptive scheme in the workgroup layout
    /// (docs/gpu.md). [default: reference on the CPU; on a hardware GPU the
    /// faster of `semi-implicit` and `reference` by the cost model, where
    /// it weighs `reference` (docs/gpu.md), on a CPU emulation
    /// `semi-implicit`]
    #[arg(long, value_enum)]
    pub solver: Option<SolverKind>,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// The experiment, as `simulate --config` and `dataset synth --config`
    /// take it: [tether] (every docs/model.md §1 parameter), [settings]
    /// (initial_angle_deg, pin_m, release_time_s, marker_arc_lengths_m) of
    /// a drop, and [camera] (how the measured file is written). The grid's
    /// axes and the flags below override it; the frames are the measured
    /// file's own (a config's duration_s, frame_interval_s or frame_times_s
    /// must agree with them), the duration runs to its last frame, and the
    /// markers are its `s` column when it has one. `measured = "FILE"` in
    /// [settings] names the film's file (relative to the config) when
    /// --measured does not. Repeat --config for a joint identification of
    /// several films of one tether (docs/identify.md, "Several films"):
    /// each config names its film's file, and `name = "…"` in [settings]
    /// (default: the file stem) names the film in `FILM.NAME` axes,
    /// columns and files.
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// Tip mass of every candidate [kg], ≥ 0 (not identified). [default: the
    /// config's, else 0]
    #[arg(long, value_name = "KG")]
    pub tip_mass: Option<f64>,
    /// Tether length of every candidate [m], > 0 (not identified). [default:
    /// the config's, else 0.6]
    #[arg(long, value_name = "M")]
    pub length: Option<f64>,
    /// The reference solver's local error tolerance [m], > 0, for the
    /// sweep, the best fit and the refinement alike. By default it is
    /// chosen from the data (docs/identify.md, "How accurately"): a first
    /// pass at 1e-7, then the candidates near the best, the best fit and
    /// the refinement at the tolerance whose track error moves J_e by a
    /// tenth of the confidence threshold. [default: from the data]
    #[arg(long, value_name = "M")]
    pub tolerance: Option<f64>,
    /// After a sweep on the GPU or the CPU explicit solver, re-run the best
    /// candidate and the best of up to K−1 other n on the f64 reference
    /// solver and fail if they disagree beyond the tolerances; 0: skip.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub validate: usize,
    /// Largest marker deviation the validation accepts [m].
    #[arg(long, value_name = "M", default_value_t = DEFAULT_MARKER_TOLERANCE_M)]
    pub validate_marker_tolerance: f64,
    /// Largest relative J_e deviation the validation accepts.
    #[arg(long, value_name = "R", default_value_t = DEFAULT_J_E_TOLERANCE)]
    pub validate_j_e_tolerance: f64,
    /// Skip the refined optimum: by default the best candidate's D and C_D
    /// (each when the grid varies it) are refined by Levenberg–Marquardt on
    /// the reference solver, with standard errors, into refined.parquet.
    #[arg(long)]
    pub no_refine: bool,
    /// Sweep even when the measured first frame (before the release) is
    /// more than 10 % of the tether's length from every initial shape the
    /// grid can make (by default an error, exit code 2: other units,
    /// mirrored axes, another length or release angle), and exit 0 when
    /// the best fit misses the data by more than 5 % of the length or 5×
    /// the film's own noise (by default exit code 4, the results written
    /// and marked implausible).
    #[arg(long)]
    pub allow_implausible: bool,
    /// Also write the results as CSV beside the Parquet table (no metadata:
    /// CSV has nowhere to keep it).
    #[arg(long)]
    pub csv: bool,
    /// Output directory: results.parquet (every candidate's J_e),
    /// best_fit.parquet (the best candidate's and the refined tracks),
    /// refined.parquet (the refined optimum with standard errors) and the
    /// figures surface, profile_NAME (one per continuous axis),
    /// per_elements, shapes and residuals (SVG and PNG); with --shard only
    /// DIR/shard=K/part.parquet. Several films: best_fit_FILM.parquet,
    /// shapes_FILM and residuals_FILM per film.
    #[arg(long, value_name = "DIR", default_value = "identify-results")]
    pub out: PathBuf,
    /// Replace an existing results table, and discard the saved chunks of
    /// an interrupted run.
    #[arg(long)]
    pub force: bool,
}

/// The tether parameters identify sets by flag when no axis sweeps them.
const TIP_MASS: Axis = Axis::Parameter(Parameter::TipMassKg);
const LENGTH: Axis = Axis::Parameter(Parameter::LengthM);

impl IdentifyArgs {
    /// `--surface A,B`: the surface figure's two axes.
    fn surface_axes(&self) -> Result<Option<[Axis; 2]>> {
        let Some(text) = &self.surface else {
            return Ok(None);
        };
        match text.split_once(',') {
            Some((a, b)) => {
                let axis =
                    |name: &str| Axis::parse(name).map_err(|e| WorkflowError::flag("--surface", e));
                Ok(Some([axis(a)?, axis(b)?]))
            }
            None => Err(UsageError(format!(
                "--surface '{text}': give two axes A,B, e.g. --surface damping_pa_s,release_time_s"
            ))
            .into()),
        }
    }

    pub(super) fn request(&self) -> Result<IdentifyRequest> {
        let grid = self.grid()?;
        let surface_axes = self.surface_axes()?;
        let shard = match &self.shard {
            Some(text) => Some(Shard::parse(text).map_err(|e| WorkflowError::flag("--shard", e))?),
            None => Shard::from_slurm(|name| std::env::var(name).ok())
                .map_err(|e| UsageError(e.to_string()))?,
        };
        // The config's film (the flag's measured file over its own), or
        // the shipped drop's experiment with the flags' tether.
        let request = match self.config.first() {
            Some(path) => {
                let mut film = self.film_of(path)?;
                if let Some(measured) = &self.measured {
                    film.measured = Some(measured.clone());
                }
                if film.measured.is_none() {
                    film.measured = Some(shipped_dataset()?);
                }
                IdentifyRequest::of_film(film, grid, &self.out)?
            }
            None => IdentifyRequest {
                base: TetherParams {
                    tip_mass_kg: self.tip_mass.unwrap_or(0.0),
                    length_m: self.length.unwrap_or(TetherParams::default().length_m),
                    ..TetherParams::default()
                },
                ..IdentifyRequest::new(
                    match &self.measured {
                        Some(path) => path.clone(),
                        None => shipped_dataset()?,
                    },
                    grid,
                    &self.out,
                )
            },
        };
        Ok(IdentifyRequest {
            shard,
            resume: self.resume,
            chunk_size: self.chunk_size,
            engine: self.engine.options(self.solver),
            tolerance_m: self.tolerance,
            validate: self.validate,
            validate_marker_tolerance_m: self.validate_marker_tolerance,
            validate_j_e_tolerance: self.validate_j_e_tolerance,
            allow_implausible: self.allow_implausible,
            surface_axes,
            refine: !self.no_refine,
            csv: self.csv,
            force: self.force,
            ..request
        })
    }

    /// The grid of `--grid` or the axis flags, with every `--axis`.
    fn grid(&self) -> Result<Grid> {
        let flags = [
            (&self.elements, "--elements", "10:50:10"),
            (&self.damping, "--damping", "0:5000:250"),
            (&self.drag_coefficient, "--drag-coefficient", "0.6:0.9:0.05"),
        ];
        let grid = match &self.grid {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    UsageError(format!("cannot read --grid {}: {e}", path.display()))
                })?;
                Grid::from_toml(&text)
                    .map_err(|e| UsageError(format!("--grid {}: {e}", path.display())))?
            }
            None => {
                let [elements, damping, drag] =
                    flags.map(|(given, _, default)| given.as_deref().unwrap_or(default));
                Grid::parse(elements, damping, drag).map_err(|e| {
                    let flag = Axis::parse(&e.field).ok().and_then(Axis::flag);
                    WorkflowError::flag(flag.unwrap_or("grid"), e)
                })?
            }
        };
        let grid = self.with_axes(grid, &flags)?;
        self.refuse_flags_beside_their_axes(&grid)?;
        Ok(grid)
    }

    /// `grid` with each `--axis NAME=AXIS` (a FILM.NAME axis left to the
    /// joint run), refusing one beside its own flag (`flags`).
    fn with_axes(
        &self,
        mut grid: Grid,
        flags: &[(&Option<String>, &str, &str); 3],
    ) -> Result<Grid> {
        for text in &self.axes {
            let Some((name, axis)) = text.split_once('=') else {
                return Err(UsageError(format!(
                    "--axis '{text}': give NAME=AXIS, e.g. --axis release_time_s=0:0.03:0.005"
                ))
                .into());
            };
            if name.contains('.') {
                if self.config.len() > 1 {
                    continue;
                }
                return Err(UsageError(format!(
                    "--axis '{text}': a FILM.NAME axis is one film's in a joint identification of several --config films; with one film write --axis {}=…",
                    name.rsplit('.').next().unwrap_or(name)
                ))
                .into());
            }
            let twin = Axis::parse(name.trim()).ok().and_then(|axis| {
                Axis::FIXED
                    .iter()
                    .position(|fixed| *fixed == axis)
                    .and_then(|i| flags[i].0.as_ref().map(|value| (flags[i].1, value)))
            });
            if let Some((flag, value)) = twin {
                return Err(UsageError(format!(
                    "{flag} {value} beside --axis {text}: both give that axis; give one or the other"
                ))
                .into());
            }
            // `--axis length_m`, not `--axis`, when a value is wrong.
            grid = grid.with_axis(name, axis).map_err(|e| {
                let flag = match e.field.as_str() {
                    "axis" => "--axis".to_string(),
                    field => format!("--axis {field}"),
                };
                WorkflowError::flag(&flag, e)
            })?;
        }
        Ok(grid)
    }

    /// A flag beside an axis over the same parameter would be silently
    /// overridden by the axis: say so instead.
    fn refuse_flags_beside_their_axes(&self, grid: &Grid) -> Result<()> {
        for (flag, value, parameter) in [
            ("--length", self.length, Parameter::LengthM),
            ("--tip-mass", self.tip_mass, Parameter::TipMassKg),
        ] {
            if let Some(value) = value
                && grid.parameters.iter().any(|a| a.parameter == parameter)
            {
                return Err(UsageError(format!(
                    "{flag} {value} beside a grid axis over {}: the axis sets it for every candidate; give one or the other",
                    parameter.name()
                ))
                .into());
            }
        }
        Ok(())
    }
}

/// The keys `identify --config` reads; the solver's are its `--solver`.
const CONFIG_KEYS: [&str; 4] = ["scenario", "tether", "settings", "camera"];

impl IdentifyArgs {
    /// The film of the config `path`, with the flags over its [tether].
    pub(super) fn film_of(&self, path: &std::path::Path) -> Result<FilmConfig> {
        let mut flags = Table::new();
        for (axis, value) in [(TIP_MASS, self.tip_mass), (LENGTH, self.length)] {
            if let Some(v) = value {
                flags.insert(axis.column().into(), Value::Float(v));
            }
        }
        let table = config::read_table(path).map_err(|e| UsageError(e.to_string()))?;
        if let Some(key) = table.keys().find(|k| !CONFIG_KEYS.contains(&k.as_str())) {
            return Err(UsageError(format!(
                "{}: `{key}` is not an identify setting: the config gives the experiment ({}), and --solver the solver",
                path.display(),
                CONFIG_KEYS.join(", ")
            ))
            .into());
        }
        let named = [TIP_MASS.column_and_flag(), LENGTH.column_and_flag()];
        FilmConfig::from_table(table, path, flags.clone())
            .map_err(|e| config_error(e, path, &named, &flags))
    }
}

/// One film's identification (several configs: [`super::joint::run`]).
pub fn run(args: IdentifyArgs) -> Result<()> {
    let request = args.request()?;
    let in_config = |key: &str| {
        args.config
            .first()
            .map(|path| format!("{key} (in {})", path.display()))
    };
    let (markers_in_config, release_in_config) = (
        in_config("marker_arc_lengths_m"),
        in_config("release_time_s"),
    );
    let mut flags = vec![
        TIP_MASS.column_and_flag(),
        LENGTH.column_and_flag(),
        ("chunk_size", "--chunk-size"),
        ("tolerance_m", "--tolerance"),
        ("validate_marker_tolerance_m", "--validate-marker-tolerance"),
        ("validate_j_e_tolerance", "--validate-j-e-tolerance"),
        ("surface", "--surface"),
    ];
    let axis_source = match &args.grid {
        Some(path) => format!("a parameter axis (--axis, or --grid {})", path.display()),
        None => "--axis".to_string(),
    };
    flags.push(("axis", axis_source.as_str()));
    if let (Some(markers), Some(release)) = (&markers_in_config, &release_in_config) {
        flags.push(("marker_arc_lengths_m", markers.as_str()));
        flags.push(("release_time_s", release.as_str()));
    }
    // Ctrl-C from here on stops the run cleanly, also while it prepares
    // (before the first chunk: nothing is kept).
    let cancel = interrupt_flag();
    let prepared = prepare(request.clone()).map_err(|e| name_flags(e, &flags))?;
    print_plan(&request, &prepared.plan, !args.config.is_empty());
    // Candidates, not simulations: a release axis's values share one.
    let progress = ProgressBar::new("candidates");
    let report = |done: u64, total: u64| progress.report(done, total);
    let estimate = |e: &Estimate| {
        progress.note(&format!(
            "estimate: {} left ≈ {} (the first {} took {:.1} s; scaled by each candidate's n)",
            count(e.left as usize, "candidate"),
            duration(e.left_s),
            e.finished,
            e.elapsed_s,
        ))
    };
    let result = prepared.run(Hooks {
        progress: Some(&report),
        cancel: Some(cancel),
        estimate: Some(&estimate),
    });
    progress.finish();
    let report = result?;
    print_report(&report);
    Ok(check_outcome(&report)?)
}

/// A sweep's solver in the header: `--tolerance` holds for the whole run,
/// else a reference-solver sweep is a first pass at the scouting
/// tolerance, `scout_tolerance_m` ([`tether_sweep::sweep::accuracy`]),
/// whose candidates near the best re-run at the data's: in this run, or
/// in `summarize`'s merge of a `shard`'s parts.
pub(super) fn sweep_solver_text(
    solver: &str,
    scout_tolerance_m: Option<f64>,
    tolerance_m: Option<f64>,
    shard: bool,
) -> String {
    match (tolerance_m, scout_tolerance_m) {
        (Some(t), _) => format!("{solver} solver at tolerance {t:e} m (--tolerance)"),
        (None, Some(scout)) if shard => format!(
            "{solver} solver, a first pass at tolerance {scout:e} m (summarize re-runs the candidates near the merged best at the data's)"
        ),
        (None, Some(scout)) => format!(
            "{solver} solver, a first pass at tolerance {scout:e} m, then the candidates near the best at the data's"
        ),
        (None, None) => format!("{solver} solver"),
    }
}

/// A best fit that misses the data as no fit of this experiment can,
/// accepted by `--allow-implausible`: said, since the run exits 0.
pub(super) fn print_allowed_implausible(warning: Option<&str>, allowed: bool) {
    if let Some(w) = warning.filter(|_| allowed) {
        println!("warning (--allow-implausible): {w}");
    }
}

/// The pin taken from the film's marker 0, where it was.
pub(super) fn print_tracked_pin(pin: Option<&TrackedPin>, camera: &Camera, indent: &str) {
    use tether_sweep::camera::LengthUnit;
    if let Some(p) = pin {
        // To a hundredth of a millimetre or so, in the file's unit.
        let decimals = match camera.unit {
            LengthUnit::Px => 2,
            LengthUnit::Mm => 2,
            LengthUnit::M => 5,
        };
        println!(
            "{indent}pin: from the film, marker 0 (at arc length 0) rests at ({:.decimals$}, {:.decimals$}) {} (its median; it wanders {:.2} mm RMS around it)",
            p.pin_file[0],
            p.pin_file[1],
            camera.unit.name(),
            1e3 * p.wander_m
        );
    }
}

/// The fit's σ against the film's noise (a joint run's: `film`'s).
pub(super) fn print_goodness(g: &GoodnessOfFit, film: Option<&str>) {
    println!(
        "goodness of fit{}: σ ≈ {:.3} mm against the noise's {:.3} mm ({}): {:.2}×, {}",
        film.map_or(String::new(), |f| format!(" of film {f}")),
        1e3 * g.fit_sigma_m,
        1e3 * g.noise.sigma_m,
        g.noise.how(),
        g.ratio,
        match g.explains {
            true if g.ratio > g.ratio_limit => format!(
                "beyond {}× but under {:.3} mm (a thousandth of the length): taken as explained",
                g.ratio_limit,
                1e3 * g.floor_m
            ),
            true => format!("within {}×: the model explains the data", g.ratio_limit),
            false => format!("beyond {}×: more than the noise explains", g.ratio_limit),
        }
    );
}

/// How the reference solver's tolerance was chosen, and what it re-ran.
pub(super) fn print_accuracy(chosen: &Chosen) {
    let Some(a) = &chosen.accuracy else {
        println!(
            "accuracy: --tolerance {:e} m for the sweep, the best fit and the refinement",
            chosen.tolerance_m
        );
        return;
    };
    let rerun = match &chosen.confirmation {
        Some(c) if c.confirmed > 0 => format!(
            "; {} near the best re-run at it after a first pass at {:e} m (largest J_e shift {:.1e} m², re-run to {:.1e} m² above the threshold)",
            count(c.confirmed, "candidate"),
            c.scout_tolerance_m,
            c.largest_shift_m2,
            c.margin_m2,
        ),
        Some(c) => format!(
            "; the first pass at {:e} m was already as accurate",
            c.scout_tolerance_m
        ),
        None => String::new(),
    };
    let what = match chosen.refinement {
        Some(_) => "the candidates near the best",
        None => "the best fit and the refinement",
    };
    println!(
        "accuracy: σ ≈ {:.2} mm over N = {} coordinates: a track error of {:.1e} m RMS moves J_e by a tenth of the region's threshold, so {what} run the reference solver at tolerance {:.1e} m{rerun}",
        a.noise_m * 1e3,
        a.observations,
        a.track_error_m,
        a.tolerance_m,
    );
    if let Some(r) = &chosen.refinement {
        println!(
            "  the refined σ ≈ {:.2} mm calls for tolerance {:.1e} m, under half of that: the refinement went on from its values at it, and the best fit ran at it",
            r.noise_m * 1e3,
            r.tolerance_m,
        );
    }
}

/// The grid's parameter axes and their lengths, as the headers list them
/// after n, D and C_D: ", release_time_s: 7".
pub(super) fn parameter_axes_text(grid: &Grid) -> String {
    grid.parameters
        .iter()
        .map(|a| format!(", {}: {}", a.parameter, a.values.len()))
        .collect()
}

/// The device a run's engine runs on: the GPU's adapter, or the CPU.
pub(super) fn device_text(adapter: Option<&str>) -> String {
    match adapter {
        Some(name) => format!("GPU {name}"),
        None => tether_sweep::engine::EngineKind::cpu_device_name(),
    }
}

fn print_plan(request: &IdentifyRequest, plan: &Plan, from_config: bool) {
    if let Some(reason) = &plan.engine_reason {
        eprintln!("{reason}");
    }
    let grid = &request.grid;
    println!(
        "identify: {} (n: {} values, D: {}, C_D: {}{}){} against {} | {}, {}, {}",
        count(grid.len(), "candidate"),
        grid.elements.len(),
        grid.damping_pa_s.len(),
        grid.drag_coefficient.len(),
        parameter_axes_text(grid),
        match &request.shard {
            Some(s) => format!(", shard {s}: {}", plan.films[0].candidates),
            None => String::new(),
        },
        request.film().measured,
        device_text(plan.adapter.as_deref()),
        sweep_solver_text(
            plan.engine.solver().name(),
            plan.scout_tolerance_m,
            request.tolerance_m,
            request.shard.is_some(),
        ),
        plan.engine.precision().name(),
    );
    let s = &plan.films[0].scenario;
    let camera = &request.film().camera;
    if from_config {
        let release_axis = grid
            .parameters
            .iter()
            .any(|a| a.parameter == Parameter::ReleaseTimeS);
        print_experiment(s, release_axis);
        if !camera.is_default() {
            println!("camera: {}", describe_camera(camera));
        }
        print_tracked_pin(plan.films[0].tracked_pin.as_ref(), camera, "");
    }
    print_film_checks(request, plan);
    if let Some(layout) = plan.engine.gpu_layout() {
        println!(
            "GPU layout: {}",
            match layout.fixed() {
                Some(l) => format!("{} (--gpu-layout)", l.name()),
                None => "auto: for each batch and scheme, by the cost model (gpu::cost)".into(),
            }
        );
    }
    let film = &plan.films[0];
    if film.resumed > 0 {
        println!(
            "resuming: {} from {} saved chunks, {} to run",
            count(film.resumed, "candidate"),
            film.saved_chunks,
            plan.to_run()
        );
    }
}

/// What the checks of the film found: its first frame far from the
/// initial shape, samples missing, rows not compared.
fn print_film_checks(request: &IdentifyRequest, plan: &Plan) {
    let plan = &plan.films[0];
    let s = &plan.scenario;
    if let Some(offset) = plan.start
        && offset.rms_m > Plausibility::START_WARNING * request.base.length_m
    {
        println!("warning: {}", offset.describe(s));
    }
    let missing = plan.coverage.missing();
    if missing > 0 {
        println!(
            "{} of the {} marker positions J_e compares are not in the file ({} with an empty or NaN position): skipped",
            count(missing, "sample"),
            plan.coverage.expected,
            plan.occluded_rows
        );
    }
    if plan.unused_rows > 0 {
        println!(
            "warning: {} of {} are not compared: their markers are beyond the experiment's {} (markers 0..{})",
            count(plan.unused_rows, "row"),
            request.film().measured,
            s.marker_arc_lengths_m.len(),
            s.marker_arc_lengths_m.len().saturating_sub(1)
        );
    }
}

/// The camera in words: what the file's numbers were turned from.
pub(super) fn describe_camera(camera: &Camera) -> String {
    use tether_sweep::camera::{LengthUnit, YAxis};
    let mut parts = vec![match camera.unit {
        LengthUnit::Px => format!("px of {} m", number(camera.scale_m())),
        unit => unit.name().to_string(),
    }];
    if camera.y_axis == YAxis::Down {
        parts.push("y down".into());
    }
    if camera.down.is_some() {
        parts.push(format!(
            "turned {:.2}° from the plumb line",
            camera.tilt_rad().to_degrees()
        ));
    }
    if let Some(pin) = camera.pin {
        parts.push(format!(
            "the pin at ({}, {}) {}",
            number(pin[0]),
            number(pin[1]),
            camera.unit.name()
        ));
    }
    parts.push(format!("clock in {}", camera.time_unit.name()));
    if let Some(lost) = camera.lost {
        parts.push(format!(
            "({}, {}) read as lost",
            number(lost[0]),
            number(lost[1])
        ));
    }
    if camera.first_marker != 0 {
        parts.push(format!("markers numbered from {}", camera.first_marker));
    }
    format!(
        "{} (turned into metres, y up, on the file's clock in seconds)",
        parts.join(", ")
    )
}

/// The experiment a config describes, as compared.
pub(super) fn print_experiment(s: &Scenario, release_axis: bool) {
    let times = s.frame_times_s();
    println!(
        "experiment: released at {}° from the pin at ({}, {}) m at {}, {} at s = {} m, {} from t = {} to {} s",
        number(s.as_drop().map_or(f64::NAN, |d| d.initial_angle_deg)),
        number(s.pin_m()[0]),
        number(s.pin_m()[1]),
        if release_axis {
            "the release axis's times".to_string()
        } else {
            format!("t = {} s", number(s.release_time_s()))
        },
        count(s.marker_arc_lengths_m.len(), "marker"),
        numbers(&s.marker_arc_lengths_m),
        count(times.len(), "frame"),
        number(times.first().copied().unwrap_or(0.0)),
        number(times.last().copied().unwrap_or(0.0)),
    );
}

/// What ran, how fast, and in which GPU layouts.
fn print_rate(report: &IdentifyReport) {
    let mut layouts = std::collections::BTreeMap::new();
    for layout in report.results.iter().filter_map(|r| r.gpu_layout) {
        *layouts.entry(layout.name()).or_insert(0) += 1;
    }
    let rate = report.simulations as f64 / report.wall_s;
    let layouts =
        super::args::layouts_text(&layouts).map_or(String::new(), |l| format!("; GPU {l}"));
    if report.simulations == report.scored {
        println!(
            "{} in {:.1} s ({rate:.1} simulations/s){layouts}",
            count(report.scored, "simulation"),
            report.wall_s,
        );
    } else {
        println!(
            "{} in {:.1} s by {} (candidates that differ only in the release time share one; {rate:.1} simulations/s){layouts}",
            count(report.scored, "candidate"),
            report.wall_s,
            count(report.simulations, "simulation"),
        );
    }
}

fn print_report(report: &IdentifyReport) {
    print_rate(report);
    if let Some(s) = &report.summary {
        print_summary(s, report.shard.is_some());
    }
    if let Some(c) = report.accuracy.as_ref().filter(|_| report.shard.is_none()) {
        print_accuracy(c);
    }
    print_allowed_implausible(report.fit_warning.as_deref(), report.implausible_allowed);
    for f in &report.outliers {
        print_outliers(&f.outliers, f.limit_m, &f.camera, "best_fit.parquet");
    }
    if let Some(r) = &report.refined {
        print_refined(r);
    }
    for g in &report.goodness {
        print_goodness(&g.test, None);
    }
    for (_, v) in &report.validations {
        print_validation(v);
    }
    match report.shard {
        None => println!(
            "wrote {}, best_fit.parquet{} and figures {} (.svg, .png)",
            report.table_path.display(),
            if report.refined.is_some() {
                ", refined.parquet"
            } else {
                ""
            },
            report.figures.join(", ")
        ),
        Some(_) => println!(
            "wrote {}; when every shard is done, `tether-sweep summarize {}` merges them",
            report.table_path.display(),
            report.out.display()
        ),
    }
}

/// Samples far beyond the noise from the best fit, ten at most by name,
/// with the time and marker number the file has them under.
pub(super) fn print_outliers(outliers: &[Outlier], limit_m: f64, camera: &Camera, fit_file: &str) {
    const LISTED: usize = 10;
    let Some(first) = outliers.first() else {
        return;
    };
    let listed: Vec<String> = outliers
        .iter()
        .take(LISTED)
        .map(|o| {
            let time = match camera.time_unit {
                TimeUnit::Frame => format!("frame {}", number(o.t_file)),
                unit => format!("t = {} {}", number(o.t_file), unit.name()),
            };
            format!(
                "{time} marker {} ({:.1} mm)",
                o.marker_file,
                1e3 * o.distance_m
            )
        })
        .collect();
    println!(
        "warning: {} more than {:.2} mm ({} σ, at least {} % of the tether's length) from the best fit, up to {:.1} mm (a lost marker written as a number, a tracking jump?): {}{}; all in {fit_file}'s metadata ({})",
        count(outliers.len(), "sample"),
        1e3 * limit_m,
        OUTLIER_SIGMAS,
        100.0 * OUTLIER_FLOOR_OF_LENGTH,
        1e3 * first.distance_m,
        listed.join(", "),
        if outliers.len() > LISTED { ", …" } else { "" },
        tether_sweep::metadata::OUTLIERS
    );
}

/// Each refined value with its standard error.
fn refined_values(r: &Refined) -> Vec<String> {
    r.parameters
        .iter()
        .map(|p| {
            format!(
                "{} = {:.6} ± {:.2e}{}",
                p.name(),
                p.value,
                p.standard_error,
                if p.at_bound {
                    " (on the grid's bound)"
                } else {
                    ""
                }
            )
        })
        .collect()
}

pub fn print_refined(r: &Refined) {
    let values = refined_values(r);
    let mut tried = r.elements_tried.clone();
    tried.sort_unstable();
    let tried: Vec<String> = tried.iter().map(|n| n.to_string()).collect();
    println!(
        "refined at n = {} (Levenberg–Marquardt on the reference solver from the grid's best at n = {}: {}, keeping the finest whose J_e is within σ² χ²₁ of the lowest; {} iterations, {} simulations): {}; J_e = {:.6e} m², σ ≈ {:.2} mm{}",
        r.elements,
        tried.join(", "),
        match r.every_elements {
            true =>
                "every n, the grid's best J_e lying more than the confidence region's rise above the lowest refined one (too coarse to rank n)",
            false => "those within the confidence threshold and the finest",
        },
        r.iterations,
        r.simulations,
        values.join(", "),
        r.j_e_m2,
        r.sigma_m * 1e3,
        r.correlation
            .map_or(String::new(), |c| format!(", correlation {c:.2}"))
    );
    if let Some(why) = &r.undetermined {
        println!("  ← not determined by the data: {why}");
    }
    if !r.films.is_empty() {
        let films: Vec<String> = r
            .films
            .iter()
            .map(|f| {
                format!(
                    "{} σ ≈ {:.3} mm (J_e = {:.6e} m²), weight {:.4}",
                    f.name,
                    f.sigma_m * 1e3,
                    f.j_e_m2,
                    f.weight
                )
            })
            .collect();
        println!(
            "  each film at the refined values, weighed by its own residual there: {}",
            films.join("; ")
        );
    }
    print_profiles(r);
    print_mesh(r);
}

/// Each refined n's J_e where every n was refined, and the parameters the
/// mesh moves by more than a standard error.
fn print_mesh(r: &Refined) {
    let moves: Vec<String> = r
        .mesh_moves()
        .iter()
        .map(|m| {
            format!(
                "{} = {:.6} at n = {} ({:.1} standard errors away)",
                m.parameter, m.value, m.elements, m.standard_errors
            )
        })
        .collect();
    if r.every_elements {
        let per_n: Vec<String> = r
            .per_elements
            .iter()
            .map(|f| format!("n = {}: {:.6e} m²", f.elements, f.j_e_m2))
            .collect();
        println!("  refined J_e per n: {}", per_n.join(", "));
    }
    if !moves.is_empty() {
        println!(
            "  note: the mesh moves the answer as much as the data's noise does: {}; add finer n to the grid (--elements) to see where the values settle",
            moves.join(", ")
        );
    }
}

/// `value` with as many decimals as its standard error's leading digits
/// warrant (three significant digits of the error).
fn to_error_digits(value: f64, standard_error: f64) -> String {
    let decimals = if standard_error.is_finite() && standard_error > 0.0 {
        (2 - standard_error.log10().floor() as i32).max(0) as usize
    } else {
        6
    };
    format!("{value:.decimals$}")
}

/// The profile intervals, each beside the Gauss–Newton interval, and what
/// a user should know where they disagree or end on a bound.
/// What a profile's ends say beyond their values: a grid's bound
/// reached, an end not found, a floor below the refined fit.
fn print_profile_notes(name: &str, profile: &Profile) {
    let bounds: Vec<String> = [("below", &profile.lower), ("above", &profile.upper)]
        .iter()
        .filter_map(|(side, end)| match end {
            ProfileEnd::Bound { value } => Some(format!("{side} {value}")),
            _ => None,
        })
        .collect();
    if !bounds.is_empty() {
        println!(
            "    ← J_e stays within the threshold to the grid's bound: the data do not bound {name} {} within the range searched; widen the grid to find the interval's end",
            bounds.join(" or ")
        );
    }
    for (side, end) in [("lower", &profile.lower), ("upper", &profile.upper)] {
        if let ProfileEnd::Unresolved { why, .. } = end {
            println!("    ← the interval's {side} end was not found: {why}");
        }
    }
    if let Some(lowest) = profile.below_fit {
        println!(
            "    ← the profile found J_e = {lowest:.6e} m², below the refined J_e: the refinement had not reached the minimum, so this interval is measured from too high a floor"
        );
    }
}

fn print_profiles(r: &Refined) {
    let profiled: Vec<_> = r
        .parameters
        .iter()
        .filter_map(|p| p.profile.as_ref().map(|profile| (p, profile)))
        .collect();
    if profiled.is_empty() {
        return;
    }
    let simulations: usize = profiled.iter().map(|(_, p)| p.evaluations).sum();
    println!(
        "{} % profile intervals (each parameter held, the others re-fitted, until J_e rises σ² χ²₁ = {:.3e} m² above the refined J_e; {simulations} simulations):",
        100.0 * r.confidence_level,
        r.profile_rise_m2
    );
    let width = profiled
        .iter()
        .map(|(p, _)| p.name().len())
        .max()
        .unwrap_or(0);
    for (p, profile) in &profiled {
        let show = |end: &ProfileEnd| match end {
            ProfileEnd::Crossed { value } => to_error_digits(*value, p.standard_error),
            ProfileEnd::Bound { value } => format!(
                "the grid's bound {}",
                to_error_digits(*value, p.standard_error)
            ),
            ProfileEnd::Unresolved { .. } => "not found".into(),
        };
        let (gn_lower, gn_upper) = p.gauss_newton_interval(r.confidence_level);
        println!(
            "  {:width$} in [{}, {}] (Gauss–Newton ±{:.2} SE: [{}, {}])",
            p.name(),
            show(&profile.lower),
            show(&profile.upper),
            tether_sweep::sweep::chi2_quantile(1, r.confidence_level).sqrt(),
            to_error_digits(gn_lower, p.standard_error),
            to_error_digits(gn_upper, p.standard_error),
        );
        print_profile_notes(&p.name(), profile);
    }
    let disagreements: Vec<String> = r
        .interval_disagreements()
        .iter()
        .map(|d| format!("{}'s {} side {:.1}×", d.parameter, d.side, d.ratio))
        .collect();
    if !disagreements.is_empty() {
        println!(
            "  note: the profile and Gauss–Newton intervals differ by more than a factor {} ({}, profile over Gauss–Newton): J_e is far from quadratic in that parameter, and the profile interval is the one to quote",
            tether_sweep::sweep::refine::DISAGREEMENT_FACTOR,
            disagreements.join(", ")
        );
    }
}

/// A candidate and its J_e, as the summary lists them.
fn candidate_line(r: &CandidateResult) -> String {
    let parameters: String = r
        .candidate
        .parameters
        .iter()
        .map(|(p, v)| format!(", {p} = {v}"))
        .collect();
    format!(
        "n = {:>3}, D = {:>7.1} Pa·s, C_D = {:.3}{parameters}: J_e = {:.6e} m²",
        r.candidate.elements,
        r.candidate.damping_pa_s,
        r.candidate.drag_coefficient,
        r.j_e_m2.unwrap_or(f64::NAN)
    )
}

pub fn print_summary(s: &Summary, shard_only: bool) {
    let show = candidate_line;
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
    for p in &c.parameters {
        let (lo, hi) = p.range;
        let unit = p.parameter.unit();
        println!(
            "  {} in [{lo}, {hi}] {unit}{}",
            p.parameter,
            flag(p.at_grid_edge)
        );
    }
    if s.diverged > 0 {
        println!(
            "{} diverged (status = diverged, no J_e)",
            count(s.diverged, "candidate")
        );
    }
}

pub fn print_validation(v: &Validation) {
    println!(
        "validation against the f64 reference solver ({}): max marker deviation {:.2e} m (tolerance {:.0e}), max J_e deviation {:.2e} relative (tolerance {:.0e}){}",
        count(v.candidates.len(), "candidate"),
        v.max_marker_deviation_m,
        v.marker_tolerance_m,
        v.max_j_e_relative_deviation,
        v.j_e_tolerance,
        if v.passed { "" } else { "  ← FAILED" }
    );
}
