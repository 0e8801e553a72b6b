//! Command-line interface: one file per command in `cli/`, each of which
//! parses its flags into the job's typed inputs (the library's builder,
//! which the Python package fills too) and calls the job that runs and
//! says it (`crate::jobs`). This file only names the commands and
//! dispatches. Public for the binary (`main.rs`) and for the Python
//! package's view of the flags (`tether_sweep.flags`), not as library API.

// clap shows these doc comments as `--help`, where a unit reads `[kg]`;
// rustdoc would take each one for a link, and escaping them would print
// the backslashes in `--help`.
#![allow(rustdoc::broken_intra_doc_links)]

use anyhow::Result;
use clap::{Parser, Subcommand};

pub mod adapters;
pub mod args;
pub mod bench;
pub mod dataset;
pub mod design;
pub mod identify;
pub mod linearize;
pub mod plot;
pub mod simulate;
pub mod summarize;
pub mod swingup;

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
    Simulate(simulate::SimulateArgs),
    /// Linearize about the hanging equilibrium: modes, state space and the
    /// winch-to-tip frequency response, as Parquet tables and plots.
    #[command(allow_negative_numbers = true)]
    Linearize(linearize::LinearizeArgs),
    /// Identify D and C_D (and the best n) from a measured drop by exhaustive
    /// grid search, on all CPU cores or a GPU (--backend). Defaults: the
    /// shipped dataset and a 735-candidate grid that sweeps in about 6 s on
    /// 2 cores (README.md).
    #[command(allow_negative_numbers = true)]
    Identify(identify::IdentifyArgs),
    /// Merge the parts of `identify --shard K/N` runs (DIR/shard=K/part.parquet)
    /// into one results table, summary, best fit and figures.
    Summarize(summarize::SummarizeArgs),
    /// Design the swing-up winch trajectory with the genetic algorithm of
    /// docs/model.md §7 (J_a,min fitness), optionally scoring every chromosome
    /// (--exhaustive) to rank the GA's answer. Parquet tables and figures.
    #[command(allow_negative_numbers = true)]
    Swingup(swingup::SwingupArgs),
    /// Plan a film before filming it: the standard errors of D, C_D (and
    /// any --estimate) that identify would report, for each planned film or
    /// set of films and each point of the design axes, from the Fisher
    /// information of the marker tracks at the values you expect.
    #[command(
        allow_negative_numbers = true,
        // The shared tether flags' defaults are not design's: it predicts
        // at the values the user expects, and guesses none.
        mut_arg("damping", |a| a.help("Kelvin–Voigt material damping D you expect [Pa·s], ≥ 0 (required: here or in every config's [tether])")),
        mut_arg("drag_coefficient", |a| a.help("Air drag coefficient C_D you expect [-], ≥ 0 (required: here or in every config's [tether])"))
    )]
    Design(design::DesignArgs),
    /// Datasets: `dataset synth` makes a synthetic measured drop.
    #[command(subcommand)]
    Dataset(dataset::DatasetCommand),
    /// Redraw an identification's figures from its Parquet tables.
    Plot(plot::PlotArgs),
    /// List the GPU adapters wgpu can open (for --adapter).
    Adapters,
    /// Throughput of the GPU engine (f32, f64) and the CPU solvers on batches
    /// of drops: simulations/s, element-steps/s, GFLOP/s against the
    /// device's measured multiply-add peak. Terminal table and Parquet.
    Bench(bench::BenchArgs),
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Simulate(args) => simulate::run(args),
        Command::Linearize(args) => linearize::run(args),
        Command::Dataset(dataset::DatasetCommand::Synth(args)) => dataset::run_synth(args),
        Command::Identify(args) => identify::run(args),
        Command::Summarize(args) => summarize::run(args),
        Command::Design(args) => design::run(args),
        Command::Swingup(args) => swingup::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Adapters => adapters::run(),
    }
}
