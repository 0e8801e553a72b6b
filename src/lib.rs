//! tether-sweep: batch simulation of planar ANCF tethers.
//!
//! Layers, each using only those before it:
//! `error`, `metadata`, `linalg`, `scheme`, `track`, `model` (physics, f64) →
//! `solver` (CPU integrators, equilibrium, linearization) and `gpu` (device,
//! shaders, batch engine) → `objective` → `scenario` → `engine` (which
//! engine runs a job, and `--backend auto`) → `sweep`, `ga`, `dataset`,
//! `bench` → `io` (Parquet, CSV, TOML) → `plot` → `workflow` (the jobs:
//! typed requests in, files and typed reports out).
//! The binary (`src/main.rs`, `src/cli.rs`, `src/cli/`) parses, calls one
//! workflow and prints; `tests/layering.rs` holds the order.
//!
//! The authoritative definition of the physics is `SPEC.md` of the project's
//! shared folder; the doc comments cite its sections.

pub mod bench;
pub mod dataset;
pub mod engine;
pub mod error;
pub mod ga;
pub mod gpu;
pub mod io;
pub mod linalg;
pub mod metadata;
pub mod model;
pub mod objective;
pub mod plot;
pub mod scenario;
pub mod scheme;
pub mod solver;
pub mod sweep;
pub mod track;
pub mod workflow;

/// Engine version recorded in every output file's metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
