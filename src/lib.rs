//! tether-sweep: batch simulation of planar ANCF tethers.
//!
//! Layers, each using only those before it:
//! `linalg`, `scheme`, `model` (physics, f64) → `solver` (CPU integrators, equilibrium,
//! linearization) and `gpu` (device, shaders, batch engine) → `scenario`, `objective` → `sweep`, `ga`, `dataset`, `bench` → `io` (Parquet, CSV, TOML) → `plot`.
//! The binary (`src/main.rs`, `src/cli.rs`) parses, calls and prints.
//!
//! The authoritative definition of the physics is `SPEC.md` of the project's
//! shared folder; the doc comments cite its sections.

pub mod bench;
pub mod dataset;
pub mod error;
pub mod ga;
pub mod gpu;
pub mod io;
pub mod linalg;
pub mod model;
pub mod objective;
pub mod plot;
pub mod scenario;
pub mod scheme;
pub mod solver;
pub mod sweep;

/// Engine version recorded in every output file's metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
