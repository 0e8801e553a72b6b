//! `tether-sweep identify`: the identification sweep (the work is
//! `crate::workflow::identify`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::{EngineArgs, named};
use crate::jobs::progress::{ProgressBar, interrupt_flag};

use crate::io::track::Measured;
use crate::solver::SolverKind;
use crate::sweep::validation::{DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M};
use crate::workflow::identify::{AxisInput, GridInput, IdentifyInputs, check_outcome};
use crate::workflow::keywords::{ConfigInput, Door};
use crate::workflow::{Estimate, Hooks, count};

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

impl IdentifyArgs {
    /// The library's inputs these flags give (the builder Python fills
    /// too).
    pub fn inputs(&self) -> IdentifyInputs {
        IdentifyInputs {
            measured: self.measured.clone().map(Measured::File),
            elements: self.elements.clone().map(AxisInput::Text),
            damping: self.damping.clone().map(AxisInput::Text),
            drag_coefficient: self.drag_coefficient.clone().map(AxisInput::Text),
            axes: self.axes.clone(),
            surface: self.surface.clone(),
            grid: self.grid.clone().map(GridInput::File),
            shard: self.shard.clone(),
            resume: self.resume,
            chunk_size: self.chunk_size,
            engine: self.engine.options(self.solver),
            configs: self.config.iter().cloned().map(ConfigInput::File).collect(),
            overlays: toml::Table::new(),
            tip_mass_kg: self.tip_mass,
            length_m: self.length,
            tolerance_m: self.tolerance,
            validate: self.validate,
            validate_marker_tolerance_m: self.validate_marker_tolerance,
            validate_j_e_tolerance: self.validate_j_e_tolerance,
            no_refine: self.no_refine,
            exhaustive: self.exhaustive,
            allow_implausible: self.allow_implausible,
            csv: self.csv,
            out: self.out.clone(),
            force: self.force,
        }
    }
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
    let result = crate::jobs::identify::execute(
        &args.inputs(),
        Door::CommandLine,
        Hooks {
            progress: Some(&report),
            cancel: Some(interrupt_flag()),
            estimate: Some(&estimate),
        },
    );
    progress.finish();
    Ok(check_outcome(&result?)?)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::cli::Cli;
    use crate::workflow::keywords::{Keyword, KeywordKind};

    /// The flags are the library's keywords: the same names, defaults and
    /// choices, so that what Python's signatures say (written from the
    /// keywords) is what the command line takes.
    #[test]
    fn the_flags_are_the_librarys_keywords() {
        flags_are(&["identify"], crate::workflow::identify::KEYWORDS);
        flags_are(&["simulate"], crate::workflow::simulate::KEYWORDS);
        flags_are(&["linearize"], crate::workflow::linearize::KEYWORDS);
        flags_are(&["dataset", "synth"], crate::workflow::synth::KEYWORDS);
        flags_are(&["swingup"], crate::workflow::swingup::KEYWORDS);
        flags_are(&["design"], crate::workflow::design::KEYWORDS);
        flags_are(&["summarize"], crate::workflow::summarize::KEYWORDS);
        flags_are(&["plot"], &[]);
    }

    fn flags_are(command: &[&str], keywords: &[Keyword]) {
        let mut cli = Cli::command();
        cli.build();
        let command = command
            .iter()
            .fold(&cli, |c, name| c.find_subcommand(name).unwrap());
        let mut flags: Vec<_> = command
            .get_arguments()
            .filter_map(|a| Some((a.get_long()?.replace('-', "_"), a)))
            .filter(|(name, _)| name != "help")
            .collect();
        // In the order the help lists them (a command's `mut_arg` moves a
        // shared flag to the end of `get_arguments`, not of its help).
        flags.sort_by_key(|(_, a)| a.get_display_order());
        let keywords: Vec<_> = keywords.iter().filter(|k| k.on_command_line()).collect();
        let names = |v: Vec<&str>| v.join(" ");
        assert_eq!(
            names(flags.iter().map(|(n, _)| n.as_str()).collect()),
            names(keywords.iter().map(|k| k.name).collect()),
            "flags and keywords in one order"
        );
        for ((_, flag), keyword) in flags.iter().zip(keywords) {
            flag_is(flag, keyword);
        }
    }

    /// One flag is its keyword: its default and its choices.
    fn flag_is(flag: &clap::Arg, keyword: &Keyword) {
        let default: Vec<_> = flag
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy())
            .collect();
        match (keyword.kind, keyword.default) {
            (KeywordKind::Switch | KeywordKind::SwitchOrTable, _) => {}
            (_, Some(text)) if !default.is_empty() => {
                assert_eq!(default, [text], "{}'s default", keyword.name)
            }
            // The three axes' and the surface's defaults are in their
            // help ([default: …]): the flag itself is unset.
            (_, Some(text)) => assert!(
                flag.get_long_help()
                    .or(flag.get_help())
                    .is_some_and(|h| h.to_string().contains(text)),
                "{}'s help names its default {text}",
                keyword.name
            ),
            (_, None) => assert!(default.is_empty(), "{} has no default", keyword.name),
        }
        if matches!(
            keyword.kind,
            KeywordKind::Switch | KeywordKind::SwitchOrTable
        ) {
            assert!(
                !flag.get_action().takes_values(),
                "{} is a switch",
                keyword.name
            );
            return;
        }
        let choices: Vec<String> = flag
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(choices, keyword.choices(), "{}'s choices", keyword.name);
    }
}
