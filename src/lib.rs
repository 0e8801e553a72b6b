//! tether-sweep: batch simulation of planar ANCF tethers.
//!
//! Layers, each using only those before it:
//! `error`, `metadata`, `named`, `linalg`, `least_squares`, `scheme`, `status`, `track` → `camera` (a
//! tracker's frame and clock) → `model` (physics, f64) →
//! `solver` (CPU integrators, equilibrium, linearization), `gpu` (device,
//! shaders, batch engine) and `constrained` (rigid bodies kept on their
//! constraints: the arm, the mobile robot) → `objective` → `scenario` → `engine` (the
//! engine that runs every batch, and `--backend auto`) → `sweep`, `ga`, `dataset`,
//! `throughput` → `io` (Parquet, CSV, TOML) → `plot` → `workflow` (the jobs:
//! typed requests in, files and typed reports out) → `text` (their plans and
//! reports as a terminal says them).
//! The command line (`cli`, above them all; the binary `src/main.rs` calls
//! it, and the Python package parses its keywords with the same parsers)
//! parses, calls one workflow and prints; `tests/layering.rs` holds the
//! order.
//!
//! The model (the tether, its experiments and objectives) is defined in
//! `docs/model.md`; the doc comments cite its sections as `docs/model.md §N`.
//!
//! Every job the command line runs is a library function with a typed
//! request and report. The main job, from Rust: an identification built
//! from values (a film's file, or its samples as columns or an Arrow table
//! through `io::track::Measured`; its camera and experiment on
//! `workflow::film::Film`; several films of one tether are a `Vec`), run
//! small enough to run here:
//!
//! ```
//! use tether_sweep::engine::{Backend, EngineOptions};
//! use tether_sweep::sweep::Grid;
//! use tether_sweep::workflow::Hooks;
//! use tether_sweep::workflow::identify::IdentifyRequest;
//!
//! // n = 4; D = 1500 and 2500 Pa·s; C_D = 0.8 (the docs' default grid:
//! // Grid::parse("10:50:10", "0:5000:250", "0.6:0.9:0.05")).
//! let grid = Grid::parse("4", "1500,2500", "0.8")?;
//! let out = std::env::temp_dir().join("tether-sweep-doc-identify");
//! let request = IdentifyRequest {
//!     engine: EngineOptions { backend: Backend::Cpu, ..Default::default() },
//!     refine: false,
//!     force: true,
//!     ..IdentifyRequest::new("datasets/drop_synthetic.parquet", grid, &out)
//! };
//! let report = request.run(Hooks::default())?;
//! let best = &report.summary.as_ref().expect("a candidate ran").best;
//! println!("best: n = {}, D = {} Pa·s, C_D = {}: J_e = {:?} m²",
//!     best.candidate.elements, best.candidate.damping_pa_s,
//!     best.candidate.drag_coefficient, best.j_e_m2);
//! assert_eq!(report.results.len(), 2);
//! assert!(out.join("results.parquet").exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A film's config is a TOML text (or file: `FilmConfig::read`) as
//! `identify --config` takes it (several films' configs:
//! `IdentifyRequest::of_configs`); the batched objective, for optimizers
//! and samplers, gives J_e of any list of candidates against the films,
//! run as one batch a film on the engine the identification would choose
//! (`workflow::objective`; several films: `Objective::candidates` and
//! `Objective::scores`, each film's J_e beside the joint one):
//!
//! ```
//! use std::path::Path;
//! use tether_sweep::engine::{Backend, EngineOptions};
//! use tether_sweep::io::config::FilmConfig;
//! use tether_sweep::sweep::Grid;
//! use tether_sweep::workflow::identify::IdentifyRequest;
//! use tether_sweep::workflow::objective::Objective;
//!
//! // The shipped drop's config, as if written beside the checkout's
//! // datasets/ (`measured` is relative to the config).
//! let text = r#"
//!     [tether]
//!     length_m = 0.6
//!     [settings]
//!     measured = "datasets/drop_synthetic.parquet"
//!     initial_angle_deg = 45.0
//! "#;
//! let film = FilmConfig::from_toml(text, Path::new("drop.toml"))?;
//! // The grid's axes name the candidates' parameters: n, D, C_D.
//! let grid = Grid::parse("10", "2000", "0.8")?;
//! let request = IdentifyRequest {
//!     engine: EngineOptions { backend: Backend::Cpu, ..Default::default() },
//!     tolerance_m: Some(1e-6),
//!     ..IdentifyRequest::of_film(film, grid, "identify-results")?
//! };
//! let objective = Objective::new(&request)?;
//! println!("candidates give {:?}", objective.parameters()); // n, D, C_D as results columns
//! let candidates = [
//!     objective.candidate(&[10.0, 1500.0, 0.8])?,
//!     objective.candidate(&[10.0, 2500.0, 0.8])?,
//! ];
//! let j_e_m2 = objective.j_e_m2(&candidates)?;
//! assert!(j_e_m2.iter().all(|j| j.is_some_and(|j| j > 0.0)));
//! // Measured minus simulated coordinates, for least-squares fitters.
//! let residuals_m = objective.residuals_m(&candidates[0])?;
//! assert_eq!(residuals_m.len(), objective.observations());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// A line of a job's text: to stdout, or kept for the Python package's
/// result (`text::console::print_text`).
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::text::console::print_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// A note beside the text: to stderr, or kept with it (`text::console::note`).
macro_rules! noteln {
    ($($arg:tt)*) => {
        $crate::text::console::note(&format!($($arg)*))
    };
}

pub mod camera;
#[doc(hidden)]
pub mod cli;
pub mod constrained;
pub mod dataset;
pub mod engine;
pub mod error;
pub mod ga;
pub mod gpu;
pub mod io;
// Not API: the doors' layer: a job run and said for the command line or the Python package.
#[doc(hidden)]
pub mod jobs;
// Not API: the refinement's internals (examples reach them).
#[doc(hidden)]
pub mod least_squares;
// Not API: the solvers' banded algebra (the benchmarks reach it).
#[doc(hidden)]
pub mod linalg;
pub mod metadata;
pub mod misfit;
pub mod model;
pub mod named;
pub mod objective;
pub mod plot;
pub mod scenario;
pub mod scheme;
pub mod solver;
pub mod status;
pub mod sweep;
// Not API: the jobs' terminal text (the Python package keeps it).
#[doc(hidden)]
pub mod text;
// Not API: the benchmarks' rates against the device's peak.
#[doc(hidden)]
pub mod throughput;
pub mod track;
pub mod workflow;

// The types a user of the library needs, at its top level: each job's
// builder (the inputs as a door gives them), its request and its report,
// where its jobs run, and the objective other programs call.
pub use engine::{Backend, EngineOptions};
pub use gpu::{LayoutRequest, Precision};
pub use solver::SolverKind;
pub use workflow::WorkflowError;
pub use workflow::design::{DesignInputs, DesignReport, DesignRequest};
pub use workflow::identify::{IdentifyInputs, IdentifyReport, IdentifyRequest};
pub use workflow::keywords::{ConfigInput, Door, TetherInputs};
pub use workflow::linearize::{LinearizeInputs, LinearizeReport, LinearizeRequest};
pub use workflow::objective::Objective;
pub use workflow::simulate::{SimulateInputs, SimulateReport, SimulateRequest};
pub use workflow::summarize::{SummarizeReport, SummarizeRequest};
pub use workflow::swingup::{SwingupInputs, SwingupReport, SwingupRequest};
pub use workflow::synth::{SynthInputs, SynthReport, SynthRequest};

/// The engine's version, recorded in every output file's metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit this crate was built from (`build.rs`).
pub const GIT_COMMIT: &str = env!("TETHER_SWEEP_GIT_COMMIT");
