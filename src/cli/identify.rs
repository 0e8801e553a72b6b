//! `tether-sweep identify`: the identification sweep (the work is
//! `crate::workflow::identify`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::UsageError;
use super::args::{EngineArgs, config_error, name_flags, named};
use super::progress::{ProgressBar, interrupt_flag};
use toml::{Table, Value};

use crate::io::config::{self, FilmConfig};
use crate::model::TetherParams;
use crate::solver::SolverKind;
use crate::sweep::validation::{DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M};
use crate::sweep::{Axis, Grid, Parameter, Shard};
use crate::text::identify as text;
use crate::workflow::identify::{
    IdentifyReport, IdentifyRequest, check_outcome, prepare, shipped_dataset,
};
use crate::workflow::{Estimate, Hooks, WorkflowError, count};

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
    #[arg(long, value_name = "K/N", allow_hyphen_values = true)]
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
    #[arg(long, value_parser = named::<SolverKind>())]
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
    /// The reference solver's local error tolerance [m], in [1e-13, 1e-3], for the
    /// sweep, the best fit and the refinement alike. By default it is
    /// chosen from the data (docs/identify.md, "How accurately"): a first
    /// pass at 1e-7, then the candidates near the best, the best fit and
    /// the refinement at the tolerance whose track error moves J_e by a
    /// tenth of the confidence threshold. [default: from the data]
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
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
    /// Score every candidate to the end of the film. By default one that
    /// cannot come within 100 confidence thresholds of its n's best stops
    /// where it passes them, its J_e a lower bound (status `abandoned`;
    /// docs/identify.md, "Hopeless candidates"); the answers are the same.
    #[arg(long)]
    pub exhaustive: bool,
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
    pub(super) fn request(&self) -> Result<IdentifyRequest> {
        let grid = self.grid()?;
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
        let mut request = IdentifyRequest {
            shard: self.shard()?,
            resume: self.resume,
            chunk_size: self.chunk_size,
            engine: self.engine.options(self.solver),
            tolerance_m: self.tolerance,
            exhaustive: self.exhaustive,
            validate: self.validate,
            validate_marker_tolerance_m: self.validate_marker_tolerance,
            validate_j_e_tolerance: self.validate_j_e_tolerance,
            allow_implausible: self.allow_implausible,
            surface_axes: (self.surface.as_deref().map(Axis::parse_pair).transpose())
                .map_err(|e| WorkflowError::flag("--surface", e))?,
            refine: !self.no_refine,
            csv: self.csv,
            force: self.force,
            ..request
        };
        // Several films' axes go on once the films are known.
        if self.config.len() <= 1 {
            self.add_axes(&mut request)?;
        }
        Ok(request)
    }

    /// `--shard K/N`, else Slurm's array task.
    fn shard(&self) -> Result<Option<Shard>> {
        Ok(match &self.shard {
            Some(text) => Some(Shard::parse(text).map_err(|e| WorkflowError::flag("--shard", e))?),
            None => Shard::from_slurm(|name| std::env::var(name).ok())
                .map_err(|e| UsageError(e.to_string()))?,
        })
    }

    /// The grid of `--grid` or the axis flags (`--axis`: [`Self::add_axes`]).
    fn grid(&self) -> Result<Grid> {
        let flags = [
            (&self.elements, "--elements", "10:50:10"),
            (&self.damping, "--damping", "0:5000:250"),
            (&self.drag_coefficient, "--drag-coefficient", "0.6:0.9:0.05"),
        ];
        Ok(match &self.grid {
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
        })
    }

    /// Each `--axis NAME=AXIS` onto `request` (`FILM.NAME=AXIS` onto its
    /// film: [`IdentifyRequest::add_axis`]), refusing one beside its own
    /// flag, and a flag beside an axis over its parameter.
    pub(super) fn add_axes(&self, request: &mut IdentifyRequest) -> Result<()> {
        let flags = [
            (&self.elements, "--elements"),
            (&self.damping, "--damping"),
            (&self.drag_coefficient, "--drag-coefficient"),
        ];
        for text in &self.axes {
            let name = text.split_once('=').map_or("", |(name, _)| name.trim());
            let twin = Axis::parse(name).ok().and_then(|axis| {
                let i = Axis::FIXED.iter().position(|fixed| *fixed == axis)?;
                flags[i].0.as_ref().map(|value| (flags[i].1, value))
            });
            if let Some((flag, value)) = twin {
                return Err(UsageError(format!(
                    "{flag} {value} beside --axis {text}: both give that axis; give one or the other"
                ))
                .into());
            }
            request
                .add_axis(text)
                .map_err(|e| WorkflowError::flag(&format!("--{}", e.field), e))?;
        }
        self.refuse_flags_beside_their_axes(&request.grid)
    }

    /// A flag beside an axis over the same parameter would be silently
    /// overridden by the axis: say so instead.
    fn refuse_flags_beside_their_axes(&self, grid: &Grid) -> Result<()> {
        for (flag, value, parameter) in [
            ("--length", self.length, Parameter::LengthM),
            ("--tip-mass", self.tip_mass, Parameter::TipMassKg),
        ] {
            if let Some(value) = value
                && grid.has(Axis::Parameter(parameter))
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

    /// The request of several films: the single film's shared settings
    /// (grid, engine, tether, checks, output), and one film per config.
    fn films_request(&self) -> Result<IdentifyRequest> {
        if self.measured.is_some() {
            Err(UsageError(
                "--measured names one film's file; with several --config, give each config its file as measured = \"FILE\" in [settings]".into(),
            ))?;
        }
        let single = self.request()?;
        let mut configs = Vec::with_capacity(self.config.len());
        for path in &self.config {
            let config = self.film_of(path)?;
            if config.measured.is_none() {
                Err(UsageError(format!(
                    "{}: no measured = \"FILE\" in [settings]: with several --config, each names its film's file",
                    path.display()
                )))?
            }
            configs.push(config);
        }
        let films = IdentifyRequest::of_configs(configs, single.grid.clone(), &single.out)?.films;
        let mut request = IdentifyRequest { films, ..single };
        self.add_axes(&mut request)?;
        Ok(request)
    }

    /// The library's field names of what the flags and the first config
    /// set, by the flag or the config key the user typed (a film of
    /// several is named by the workflow's messages).
    fn flag_names(&self, several: bool) -> Vec<(&'static str, String)> {
        let mut flags: Vec<(&'static str, String)> = [
            TIP_MASS.column_and_flag(),
            LENGTH.column_and_flag(),
            ("chunk_size", "--chunk-size"),
            ("tolerance_m", "--tolerance"),
            ("validate_marker_tolerance_m", "--validate-marker-tolerance"),
            ("validate_j_e_tolerance", "--validate-j-e-tolerance"),
            ("surface", "--surface"),
        ]
        .map(|(k, f)| (k, f.to_string()))
        .to_vec();
        flags.push((
            "axis",
            match &self.grid {
                Some(path) => format!("a parameter axis (--axis, or --grid {})", path.display()),
                None => "--axis".to_string(),
            },
        ));
        if let (Some(path), false) = (self.config.first(), several) {
            for key in ["marker_arc_lengths_m", "release_time_s"] {
                flags.push((key, format!("{key} (in {})", path.display())));
            }
        }
        flags
    }
}

/// The request these flags make: one film, or several configs.
pub fn request_of(args: &IdentifyArgs) -> Result<IdentifyRequest> {
    match args.config.len() > 1 {
        true => args.films_request(),
        false => args.request(),
    }
}

/// An identification of one film, or of several configs' films of one
/// tether: the request these flags make, checked and prepared (an error
/// names the flag or config key the user typed), then run with `hooks`,
/// its plan and report said through `text::console` (the terminal, or the
/// Python package's kept text). The command below and the Python
/// package's `identify` both run it; whether the outcome is plausible is
/// theirs to say ([`check_outcome`]).
pub fn execute(args: &IdentifyArgs, hooks: Hooks) -> Result<IdentifyReport> {
    let request = request_of(args)?;
    let flags = args.flag_names(args.config.len() > 1);
    let flags: Vec<(&str, &str)> = flags.iter().map(|(k, f)| (*k, f.as_str())).collect();
    let prepared = prepare(request.clone()).map_err(|e| name_flags(e, &flags))?;
    if let Some(reason) = &prepared.plan.engine_reason {
        noteln!("{reason}");
    }
    say(|out| text::write_plan(out, &request, &prepared.plan, !args.config.is_empty()));
    let report = prepared.run(hooks)?;
    say(|out| text::write_report(out, &report));
    Ok(report)
}

pub fn run(args: IdentifyArgs) -> Result<()> {
    // Candidates, not simulations: a release axis's values share one.
    let (noun, nouns) = match args.config.len() > 1 {
        true => ("film candidate", "film candidates"),
        false => ("candidate", "candidates"),
    };
    let progress = ProgressBar::new(nouns);
    let report = |done: u64, total: u64| progress.report(done, total);
    let estimate = |e: &Estimate| {
        progress.note(&format!(
            "estimate: {} left ≈ {} (the first {} took {:.1} s; scaled by each candidate's n)",
            count(e.left as usize, noun),
            crate::text::duration(e.left_s),
            e.finished,
            e.elapsed_s,
        ))
    };
    // Ctrl-C from here on stops the run cleanly, also while it prepares
    // (before the first chunk: nothing is kept).
    let result = execute(
        &args,
        Hooks {
            progress: Some(&report),
            cancel: Some(interrupt_flag()),
            estimate: Some(&estimate),
        },
    );
    progress.finish();
    Ok(check_outcome(&result?)?)
}

/// Prints what `write` writes.
pub(super) fn say(write: impl FnOnce(&mut String)) {
    let mut out = String::new();
    write(&mut out);
    crate::text::console::print_text(&out);
}
