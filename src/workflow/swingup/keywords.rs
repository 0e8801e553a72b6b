//! `swingup`'s inputs ([`KEYWORDS`]), each named and described once
//! (`workflow::keywords`).

use crate::engine::Backend;
use crate::gpu::{LayoutRequest, Precision};
use crate::solver::SolverKind;
use crate::workflow::keywords::{Keyword, KeywordKind};
use KeywordKind as K;

/// `swingup`'s inputs, in the order the command line's help lists them.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new(
        "elements",
        K::Count,
        "ANCF elements n, 1..=1024 (≤ 128 on the GPU)",
    )
    .default("40"),
    Keyword::new(
        "damping",
        K::Number,
        "Kelvin–Voigt damping D, ≥ 0 (the identified value)",
    )
    .default("2000")
    .unit("Pa·s"),
    Keyword::new(
        "drag_coefficient",
        K::Number,
        "drag coefficient C_D, ≥ 0 (the identified value)",
    )
    .default("0.8"),
    Keyword::new("tip_mass", K::Number, "tip mass, ≥ 0")
        .default("0.021")
        .unit("kg"),
    Keyword::new(
        "winch_amplitude",
        K::Number,
        "winch amplitude A: waypoints 0, −A, +A, 0",
    )
    .default("0.2")
    .unit("m"),
    Keyword::new(
        "waypoints",
        K::Numbers,
        "winch waypoints w0,w1,w2,w3 (over winch_amplitude)",
    )
    .unit("m"),
    Keyword::new(
        "duration",
        K::Number,
        "the horizon over which J_a is minimised, a multiple of 0.04 s",
    )
    .default("3")
    .unit("s"),
    Keyword::new("bits_per_gene", K::Count, "bits per gene b, 1..=10").default("5"),
    Keyword::new(
        "period_min",
        K::Number,
        "the shortest winch move T_min, in [0.01, 100]",
    )
    .default("0.25")
    .unit("s"),
    Keyword::new(
        "period_max",
        K::Number,
        "the longest winch move T_max, in [0.01, 100] and > T_min",
    )
    .default("1")
    .unit("s"),
    Keyword::new("population", K::Count, "individuals per generation, ≥ 2").default("10"),
    Keyword::new(
        "generations",
        K::Count,
        "generations, ≥ 1 (generation 0 is the random start)",
    )
    .default("30"),
    Keyword::new(
        "seed",
        K::Count,
        "the GA's generator's seed (ChaCha8): same seed, same run",
    )
    .default("2010"),
    Keyword::new(
        "tournament_size",
        K::Count,
        "individuals per selection tournament, ≥ 1",
    )
    .default("2"),
    Keyword::new(
        "crossover_rate",
        K::Number,
        "probability of one-point crossover, in [0, 1]",
    )
    .default("0.8"),
    Keyword::new(
        "mutation_rate",
        K::Number,
        "per-bit mutation probability, in [0, 1]; default 1/bits",
    ),
    Keyword::new(
        "exhaustive",
        K::Switch,
        "also score every chromosome (2^(3b)) and rank the GA's answer",
    ),
    Keyword::choice::<SolverKind>(
        "solver",
        "the solver; default the reference on the CPU, the faster by the cost model on a GPU",
    ),
    Keyword::new(
        "tolerance",
        K::Number,
        "the search's reference solver tolerance, in [1e-13, 1e-3]",
    )
    .default("0.0000001")
    .unit("m"),
    Keyword::choice::<Backend>(
        "backend",
        "where it runs: the faster of CPU and GPU (auto), or the one named",
    )
    .default("auto"),
    Keyword::choice::<Precision>("precision", "the GPU's precision").default("f32"),
    Keyword::new(
        "adapter",
        K::Text,
        "the GPU adapter: its index, PCI address or part of its name",
    ),
    Keyword::choice::<LayoutRequest>(
        "gpu_layout",
        "the GPU layout: a simulation per invocation or per workgroup, or auto",
    )
    .default("auto"),
    Keyword::new(
        "out",
        K::Path,
        "the output folder (Python: None keeps the tables and figures in memory)",
    )
    .default("swingup-results"),
    Keyword::new(
        "force",
        K::Switch,
        "replace the results of an earlier run in the folder",
    ),
];
