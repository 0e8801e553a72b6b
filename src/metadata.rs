//! The key-value metadata that every output file carries (Parquet's file
//! metadata): the keys, in one place, so that a writer and a reader cannot
//! spell one differently, and the one way values are written (JSON).
//!
//! A user reads these with `pyarrow.parquet.read_schema(path).metadata`;
//! the keys are part of the file format, so a key's name never changes.

use std::collections::BTreeMap;

use serde::Serialize;

/// The metadata of one file: key → value (JSON unless the key says
/// otherwise).
pub type Metadata = BTreeMap<String, String>;

/// EngineKind version (`CARGO_PKG_VERSION`), plain text.
pub const VERSION: &str = "tether_sweep.version";
/// The git commit the writing binary was built from (`+modified`: with
/// uncommitted changes; `unknown`: built outside a git checkout).
pub const GIT_COMMIT: &str = "tether_sweep.git_commit";
/// The command line of the process that wrote the file, shell-quoted.
pub const COMMAND_LINE: &str = "tether_sweep.command_line";
/// Units of the columns: JSON object column → unit.
pub const UNITS: &str = "tether_sweep.units";
/// The tether's parameters (`TetherParams`, units in the names).
pub const TETHER: &str = "tether_sweep.tether";
/// The experiment (`Scenario`).
pub const SCENARIO: &str = "tether_sweep.scenario";
/// The CPU solver's settings (`SolverSettings`).
pub const SOLVER_SETTINGS: &str = "tether_sweep.solver_settings";
/// What the solver did (`SolverReport`).
pub const SOLVER_REPORT: &str = "tether_sweep.solver_report";
/// J_a,min and its time of a swing-up (`SwingupObjective`).
pub const SWINGUP_OBJECTIVE: &str = "tether_sweep.swingup_objective";
/// How a synthetic dataset was made (`SynthSpec`).
pub const DATASET: &str = "tether_sweep.dataset";
/// The command line that made the file, plain text.
pub const COMMAND: &str = "tether_sweep.command";
/// What the linearized model is about and what it leaves out.
pub const LINEARIZATION: &str = "tether_sweep.linearization";
/// The state space's states, inputs, outputs and matrix shapes.
pub const STATESPACE: &str = "tether_sweep.statespace";
/// The engine that ran the simulations (`EngineKind`).
pub const ENGINE: &str = "tether_sweep.engine";
/// The GPU adapter that ran them (`AdapterSummary`).
/// The engine options the run was given (`--backend`, `--adapter`,
/// `--precision`, `--gpu-layout`, `--solver`), whole.
pub const ENGINE_OPTIONS: &str = "tether_sweep.engine_options";
pub const ADAPTER: &str = "tether_sweep.adapter";
/// Why `--backend auto` chose the engine it chose, plain text.
pub const ENGINE_CHOICE: &str = "tether_sweep.engine_choice";
/// Wall time of the run \[s\], plain text.
pub const WALL_S: &str = "tether_sweep.wall_s";
/// The job's summary (identification or GA).
pub const SUMMARY: &str = "tether_sweep.summary";
/// The bounds hopeless candidates were abandoned at (`sweep::abandon`).
pub const ABANDON: &str = "tether_sweep.abandon";
/// Identification: the grid (`Grid`).
pub const GRID: &str = "tether_sweep.grid";
/// Identification: this file's shard, `K/N`.
pub const SHARD: &str = "tether_sweep.shard";
/// Identification: the number of shards merged by `summarize`.
pub const SHARDS: &str = "tether_sweep.shards";
/// Identification: the measured track's path as given, plain text.
pub const MEASURED: &str = "tether_sweep.measured";
/// Identification: the measured track's SHA-256, lowercase hex.
pub const MEASURED_SHA256: &str = "tether_sweep.measured_sha256";
/// Identification: the check against the f64 reference solver (`Validation`).
pub const VALIDATION: &str = "tether_sweep.validation";
/// The reference solver's tolerances and why (`sweep::accuracy::Chosen`).
pub const ACCURACY: &str = "tether_sweep.accuracy";
/// Identification: the tolerance \[m\] of a reference-solver sweep that is
/// a first pass, whose candidates near the best are re-run at the data's
/// tolerance (by the run, or by `summarize` for a shard's part).
pub const SCOUT_TOLERANCE: &str = "tether_sweep.scout_tolerance_m";
/// `summarize`: every shard's validation.
pub const SHARD_VALIDATIONS: &str = "tether_sweep.shard_validations";
/// A saved chunk: everything that decides the results of the run it
/// belongs to, so that `--resume` continues only the same run.
pub const RUN_KEY: &str = "tether_sweep.run_key";
/// Swing-up GA: the chromosome's coding (`GeneCoding`).
pub const CODING: &str = "tether_sweep.coding";
/// Swing-up GA: its settings (`GaSettings`).
pub const GA: &str = "tether_sweep.ga";
/// Swing-up GA: wall time of the GA \[s\], plain text.
pub const GA_WALL_S: &str = "tether_sweep.ga_wall_s";
/// Swing-up GA: wall time of the exhaustive landscape \[s\], plain text.
pub const LANDSCAPE_WALL_S: &str = "tether_sweep.landscape_wall_s";
/// Swing-up GA: the best individual's scenario (`Scenario`).
pub const BEST_SCENARIO: &str = "tether_sweep.best_scenario";
/// Bench: the multiply-add peaks measured before the runs [GFLOP/s].
pub const PEAKS_GFLOPS: &str = "tether_sweep.peaks_gflops";
/// Bench: the same peaks measured after the runs [GFLOP/s].
pub const PEAKS_AFTER_RUNS_GFLOPS: &str = "tether_sweep.peaks_after_runs_gflops";
/// Bench: the flops counted per element-step of each scheme.
pub const FLOPS_PER_ELEMENT_STEP: &str = "tether_sweep.flops_per_element_step";
/// `--gpu-layout` as asked (`auto`, `thread`, `workgroup`), on the GPU.
pub const GPU_LAYOUT_REQUESTED: &str = "tether_sweep.gpu_layout_requested";
/// The layouts the GPU simulations ran in, with how many ran in each.
pub const GPU_LAYOUTS_RAN: &str = "tether_sweep.gpu_layouts_ran";
/// Identify: why the data may not be the experiment, when a check says so.
pub const PLAUSIBILITY: &str = "tether_sweep.plausibility";
/// Identify: the film's noise on one coordinate (`NoiseEstimate`: σ in
/// metres and how it was found, or the `[camera] noise` declared), as JSON.
pub const NOISE: &str = "tether_sweep.noise";
/// Identify: the goodness-of-fit test (`GoodnessOfFit`: the fit's σ
/// against the film's noise, the ratio and its limit, the verdict), as
/// JSON; per film in a joint run.
pub const GOODNESS_OF_FIT: &str = "tether_sweep.goodness_of_fit";
/// Identify: each known input freed in turn when the fit does not explain
/// the data (`FreedInput`: the refit value, σ ratio, verdict and the axis
/// to add).
pub const FREED: &str = "tether_sweep.freed_inputs";
/// Identify, in best_fit.parquet: the samples far beyond the noise from
/// the fit (`Outlier`: time, marker, distance), a lost marker written as a
/// number or a tracking jump.
pub const OUTLIERS: &str = "tether_sweep.outliers";
/// Identify: the refined optimum (values, standard errors, J_e, σ,
/// covariance).
pub const REFINED: &str = "tether_sweep.refined";
/// Identify, dataset synth: how the measured file is written (the
/// `[camera]` table: unit, y axis, gravity, pin, clock), as JSON; absent
/// for a file in the model's frame.
pub const CAMERA: &str = "tether_sweep.camera";
/// Identify: the surface figure's two axes (`--surface`), as a JSON array
/// of their results columns.
pub const SURFACE_AXES: &str = "tether_sweep.surface_axes";
/// Design: the planned films (tether at the assumed values, experiment),
/// the design axes, the estimated parameters and the noise.
pub const DESIGN: &str = "tether_sweep.design";
/// A joint identification's films (`sweep::joint`): each film's name,
/// measured file and its SHA-256, experiment, camera, own axes, compared
/// coordinates, noise estimate and weight in the joint J_e.
pub const FILMS: &str = "tether_sweep.films";
/// A joint identification's shard part: its film's name and own axes
/// (`sweep::joint::FilmAxes`).
pub const FILM: &str = "tether_sweep.film";

/// A metadata value: the JSON of `value`. The values are plain data
/// (parameters, summaries), which always serialize.
pub fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serializes")
}

/// The metadata every output file starts with: the engine version, the
/// git commit it was built from, and the command line of the process that
/// wrote the file (the `tether-sweep` command as typed, or the program
/// that called the library).
pub fn base() -> Metadata {
    let command_line: Vec<String> = std::env::args().map(|a| shell_word(&a)).collect();
    Metadata::from([
        (VERSION.to_string(), crate::VERSION.to_string()),
        (GIT_COMMIT.to_string(), crate::GIT_COMMIT.to_string()),
        (COMMAND_LINE.to_string(), command_line.join(" ")),
    ])
}

/// `word` as a POSIX shell reads it back: bare where it holds only safe
/// characters, else in single quotes.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_key_is_namespaced_and_distinct() {
        let keys = [
            super::VERSION,
            super::GIT_COMMIT,
            super::COMMAND_LINE,
            super::UNITS,
            super::TETHER,
            super::SCENARIO,
            super::SOLVER_SETTINGS,
            super::SOLVER_REPORT,
            super::SWINGUP_OBJECTIVE,
            super::DATASET,
            super::COMMAND,
            super::LINEARIZATION,
            super::STATESPACE,
            super::ENGINE,
            super::ADAPTER,
            super::ENGINE_CHOICE,
            super::WALL_S,
            super::SUMMARY,
            super::GRID,
            super::SHARD,
            super::SHARDS,
            super::MEASURED,
            super::MEASURED_SHA256,
            super::VALIDATION,
            super::SHARD_VALIDATIONS,
            super::RUN_KEY,
            super::CODING,
            super::GA,
            super::GA_WALL_S,
            super::LANDSCAPE_WALL_S,
            super::GPU_LAYOUT_REQUESTED,
            super::GPU_LAYOUTS_RAN,
            super::PLAUSIBILITY,
            super::NOISE,
            super::GOODNESS_OF_FIT,
            super::OUTLIERS,
            super::REFINED,
            super::DESIGN,
            super::BEST_SCENARIO,
            super::PEAKS_GFLOPS,
            super::PEAKS_AFTER_RUNS_GFLOPS,
            super::FLOPS_PER_ELEMENT_STEP,
        ];
        let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len());
        for key in keys {
            assert!(key.starts_with("tether_sweep."), "{key}");
        }
    }

    #[test]
    fn the_command_line_reads_back_in_a_shell() {
        assert_eq!(super::shell_word("--damping"), "--damping");
        assert_eq!(super::shell_word("a b"), "'a b'");
        assert_eq!(super::shell_word("it's"), "'it'\\''s'");
        assert_eq!(super::shell_word(""), "''");
        let base = super::base();
        assert!(!base[super::GIT_COMMIT].is_empty());
        assert!(!base[super::COMMAND_LINE].is_empty());
    }
}
