//! `dataset synth`'s inputs ([`KEYWORDS`]), each named and described once
//! (`workflow::keywords`).

use crate::io::track::TrackLayout;
use crate::workflow::keywords::{Keyword, KeywordKind};
use KeywordKind as K;

/// `dataset synth`'s inputs, in the order the command line's help lists
/// them; the tether's defaults are the shipped dataset's (a finer mesh
/// than any grid candidate, the paper's identified D and C_D).
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new("elements", K::Count, "ANCF elements n, 1..=1024").default("80"),
    Keyword::new("damping", K::Number, "Kelvin–Voigt damping D, ≥ 0").default("2000").unit("Pa·s"),
    Keyword::new("drag_coefficient", K::Number, "air drag coefficient C_D, ≥ 0").default("0.8"),
    Keyword::new("tip_mass", K::Number, "point mass at the free end, ≥ 0; default the config's, else 0").unit("kg"),
    Keyword::new("length", K::Number, "tether length L, > 0; default the config's, else 0.6").unit("m"),
    Keyword::new("no_rotary_inertia", K::Switch, "leave the rotary-inertia term out of the mass matrix"),
    Keyword::new("noise", K::Number, "standard deviation of the noise on each marker coordinate, ≥ 0").default("0.0005").unit("m"),
    Keyword::new("seed", K::Count, "the noise generator's seed (ChaCha8); same seed, same file").default("2010"),
    Keyword::new("tolerance", K::Number, "the reference solver's local error tolerance").default("0.0000000001").unit("m"),
    Keyword::choice::<TrackLayout>("layout", "the table's layout: a row per frame and marker (long), or per frame (wide), as trackers export").default("long"),
    Keyword::new("out", K::Path, "the file, .parquet or .csv (Python: None keeps the table in memory)"),
    Keyword::new("config", K::Config, "a filmed drop of your own: [tether], [settings] and [camera] (a TOML file; Python: or a dict)"),
    Keyword::new("force", K::Switch, "replace an existing output file"),
    Keyword::new("tether", K::ConfigTable, "[tether] keys over the config's (or alone)"),
    Keyword::new("settings", K::ConfigTable, "[settings] keys over the config's (or alone)"),
    Keyword::new("camera", K::ConfigTable, "[camera] keys over the config's (or alone)"),
];
