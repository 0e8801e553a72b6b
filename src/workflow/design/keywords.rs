//! `design`'s inputs ([`KEYWORDS`]), each named and described once
//! (`workflow::keywords`).

use crate::engine::Backend;
use crate::workflow::keywords::{Keyword, KeywordKind};
use KeywordKind as K;

/// `design`'s inputs, in the order the command line's help lists them.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new("config", K::Configs, "a planned film ([tether], [settings]), or a film already taken (measured in [settings]): a TOML file (Python: or a dict); several for several films of one tether; default the paper's drop"),
    Keyword::new("elements", K::Count, "ANCF elements n, 1..=1024 (here or in the configs' [tether])"),
    Keyword::new("damping", K::Number, "the Kelvin–Voigt damping D you expect, ≥ 0 (required: here or in every config's [tether])").unit("Pa·s"),
    Keyword::new("drag_coefficient", K::Number, "the air drag coefficient C_D you expect, ≥ 0 (required: here or in every config's [tether])"),
    Keyword::new("tip_mass", K::Number, "point mass at the free end, ≥ 0; default the config's, else 0").unit("kg"),
    Keyword::new("length", K::Number, "tether length L, > 0; default the config's, else 0.6").unit("m"),
    Keyword::new("no_rotary_inertia", K::Switch, "leave the rotary-inertia term out of the mass matrix"),
    Keyword::new("noise", K::Number, "standard deviation of the tracker's noise on each marker coordinate, > 0").default("0.0005").unit("m"),
    Keyword::new("axis", K::Axes, "design axes NAME=AXIS (frame_interval_s, duration_s, markers or any parameter; FILM.NAME for one film's): every combination is a design point"),
    Keyword::new("estimate", K::Names, "also estimate these parameters (D and C_D always are; a film's own, such as release_time_s, one per film)"),
    Keyword::choice::<Backend>("backend", "where the simulations run: the faster of CPU and GPU (auto), or the one named").default("auto"),
    Keyword::new("adapter", K::Text, "the GPU adapter: its index or part of its name"),
    Keyword::new("tolerance", K::Number, "the reference solver's local error tolerance for the sensitivities on the CPU; default 1e-9").unit("m"),
    Keyword::new("out", K::Path, "the output folder (Python: None keeps the table and figure in memory)").default("design-results"),
    Keyword::new("force", K::Switch, "replace the results of an earlier run in the folder"),
    Keyword::new("tether", K::ConfigTable, "[tether] keys over each config's (or alone)"),
    Keyword::new("settings", K::ConfigTable, "[settings] keys over each config's (or alone)"),
    Keyword::new("camera", K::ConfigTable, "[camera] keys over each config's (or alone)"),
];
