//! `linearize`'s inputs ([`KEYWORDS`]), each named and described once
//! (`workflow::keywords`).

use crate::workflow::keywords::{Keyword, KeywordKind};
use KeywordKind as K;

/// `linearize`'s inputs, in the order the command line's help lists them.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new(
        "elements",
        K::Count,
        "ANCF elements n, 1..=1024; default 10",
    ),
    Keyword::new(
        "damping",
        K::Number,
        "Kelvin–Voigt damping D, ≥ 0; default 0",
    )
    .unit("Pa·s"),
    Keyword::new(
        "drag_coefficient",
        K::Number,
        "air drag coefficient C_D, ≥ 0; default 0 (the model is linearized without it)",
    ),
    Keyword::new(
        "tip_mass",
        K::Number,
        "point mass at the free end, ≥ 0; default 0.021 (the swing-up's body)",
    )
    .unit("kg"),
    Keyword::new("length", K::Number, "tether length L, > 0; default 0.6").unit("m"),
    Keyword::new(
        "no_rotary_inertia",
        K::Switch,
        "leave the rotary-inertia term out of the mass matrix",
    ),
    Keyword::new(
        "frequency_min",
        K::Number,
        "the frequency response's lowest frequency, > 0",
    )
    .default("0.05")
    .unit("Hz"),
    Keyword::new(
        "frequency_max",
        K::Number,
        "the frequency response's highest frequency, > frequency_min",
    )
    .default("50")
    .unit("Hz"),
    Keyword::new(
        "frequency_points",
        K::Count,
        "log-spaced frequencies, 2..=100000",
    )
    .default("400"),
    Keyword::new(
        "modes",
        K::Count,
        "how many of the lowest modes to print and draw, ≥ 1",
    )
    .default("4"),
    Keyword::new(
        "out",
        K::Path,
        "the output folder (Python: None keeps the tables and figures in memory)",
    ),
    Keyword::new(
        "force",
        K::Switch,
        "replace the results of an earlier run in the folder",
    ),
];
