//! `tether-sweep swingup`: GA design of the winch trajectory (docs/model.md §7), with
//! the exhaustive landscape on request (the work is
//! `crate::workflow::swingup`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::args::{EngineArgs, named};
use crate::scenario::SWINGUP_TIP_MASS_KG;
use crate::solver::SolverKind;
use crate::workflow::keywords::Door;
use crate::workflow::swingup::SwingupInputs;

#[derive(Debug, Args)]
pub struct SwingupArgs {
    /// Number of ANCF elements n (1..=1024; ≤ 128 on the GPU).
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub elements: usize,
    /// Kelvin–Voigt damping D [Pa·s], ≥ 0 (the identified value).
    #[arg(long, value_name = "D", default_value_t = 2000.0)]
    pub damping: f64,
    /// Drag coefficient C_D, ≥ 0 (the identified value).
    #[arg(long, value_name = "CD", default_value_t = 0.8)]
    pub drag_coefficient: f64,
    /// Tip mass [kg], ≥ 0.
    #[arg(long, value_name = "KG", default_value_t = SWINGUP_TIP_MASS_KG)]
    pub tip_mass: f64,
    /// Winch amplitude A [m]: waypoints 0, −A, +A, 0.
    #[arg(long, value_name = "M", default_value_t = 0.2)]
    pub winch_amplitude: f64,
    /// Winch waypoints w0,w1,w2,w3 [m] (overrides --winch-amplitude).
    #[arg(long, value_name = "W0,W1,W2,W3", value_delimiter = ',')]
    pub waypoints: Option<Vec<f64>>,
    /// Simulated horizon [s] over which J_a is minimised; a multiple of 0.04 s.
    #[arg(long, value_name = "S", default_value_t = 3.0)]
    pub duration: f64,
    /// Bits per gene b (1..=10): T_i = T_min + (T_max − T_min) x_i/(2^b − 1).
    #[arg(long, value_name = "B", default_value_t = 5)]
    pub bits_per_gene: u32,
    /// Shortest winch move T_min [s], in [0.01, 100].
    #[arg(long, value_name = "S", default_value_t = 0.25)]
    pub period_min: f64,
    /// Longest winch move T_max [s], in [0.01, 100] and > T_min.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub period_max: f64,
    /// Individuals per generation, ≥ 2.
    #[arg(long, value_name = "P", default_value_t = 10)]
    pub population: usize,
    /// Generations, ≥ 1 (generation 0 is the random start).
    #[arg(long, value_name = "G", default_value_t = 30)]
    pub generations: usize,
    /// Seed of the GA's generator (ChaCha8): same seed, same run.
    #[arg(long, default_value_t = 2010)]
    pub seed: u64,
    /// Individuals per selection tournament, ≥ 1.
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub tournament_size: usize,
    /// Probability of one-point crossover, in [0, 1].
    #[arg(long, value_name = "P", default_value_t = 0.8)]
    pub crossover_rate: f64,
    /// Per-bit mutation probability, in [0, 1]. [default: 1/bits]
    #[arg(long, value_name = "P")]
    pub mutation_rate: Option<f64>,
    /// Also score every chromosome (2^(3b)) and rank the GA's answer.
    #[arg(long)]
    pub exhaustive: bool,
    /// Solver. On the CPU the reference solver is the faster one here at
    /// n = 40 (its step is not limited by D·n²); on the GPU `reference`
    /// runs the same adaptive scheme in the workgroup layout (docs/gpu.md).
    /// [default: reference on the CPU; on a hardware GPU the faster of
    /// `semi-implicit` and `reference` by the cost model, where it weighs
    /// `reference` (docs/gpu.md), on a CPU emulation `semi-implicit`]
    #[arg(long, value_parser = named::<SolverKind>())]
    pub solver: Option<SolverKind>,
    /// The search's reference solver tolerance [m], in [1e-13, 1e-3]. At 1e-7 m
    /// the fittest chromosomes' J_a,min move by about 2e-5 m (2.6× faster
    /// than 1e-9 m), so the fittest are re-run at 1e-10 m and the answer is
    /// printed at that tolerance (docs/swingup.md).
    #[arg(
        long,
        value_name = "M",
        default_value_t = 1e-7,
        allow_hyphen_values = true
    )]
    pub tolerance: f64,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Output directory: generations.parquet, landscape.parquet (with
    /// --exhaustive), best_track.parquet, best_motion.parquet and figures.
    #[arg(long, value_name = "DIR", default_value = "swingup-results")]
    pub out: PathBuf,
    /// Replace the results of an earlier run in DIR.
    #[arg(long)]
    pub force: bool,
}

impl SwingupArgs {
    /// The library's inputs these flags give (the builder Python fills
    /// too).
    pub fn inputs(&self) -> SwingupInputs {
        SwingupInputs {
            elements: self.elements,
            damping_pa_s: self.damping,
            drag_coefficient: self.drag_coefficient,
            tip_mass_kg: self.tip_mass,
            winch_amplitude_m: self.winch_amplitude,
            waypoints_m: self.waypoints.clone(),
            duration_s: self.duration,
            bits_per_gene: self.bits_per_gene,
            period_min_s: self.period_min,
            period_max_s: self.period_max,
            population: self.population,
            generations: self.generations,
            seed: self.seed,
            tournament_size: self.tournament_size,
            crossover_rate: self.crossover_rate,
            mutation_rate: self.mutation_rate,
            exhaustive: self.exhaustive,
            engine: self.engine.options(self.solver),
            tolerance_m: self.tolerance,
            out: self.out.clone(),
            force: self.force,
        }
    }
}

pub fn run(args: SwingupArgs) -> Result<()> {
    crate::jobs::swingup::execute(&args.inputs(), Door::CommandLine)
}
