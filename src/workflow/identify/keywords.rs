//! An identification's inputs ([`KEYWORDS`]), each named and described
//! once (`workflow::keywords`).

use crate::engine::Backend;
use crate::gpu::{LayoutRequest, Precision};
use crate::solver::SolverKind;
use crate::workflow::keywords::{Keyword, KeywordKind};

use KeywordKind as K;

/// `identify`'s inputs, in the order the command line's help lists them.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new(
        "measured",
        K::Film,
        "the film: marker tracks in a Parquet or CSV file (long or wide, as trackers export) or a table; default the shipped drop",
    ),
    Keyword::new("elements", K::Axis, "element counts n: start:stop:step (inclusive), a comma list or numbers").default("10:50:10"),
    Keyword::new("damping", K::Axis, "Kelvin–Voigt damping D: start:stop:step (inclusive), a comma list or numbers")
        .default("0:5000:250")
        .unit("Pa·s"),
    Keyword::new("drag_coefficient", K::Axis, "drag coefficient C_D: start:stop:step (inclusive), a comma list or numbers")
        .default("0.6:0.9:0.05"),
    Keyword::new(
        "axis",
        K::Axes,
        "grid axes over any parameter, NAME=AXIS (several films: FILM.NAME=AXIS for one film's own)",
    ),
    Keyword::new("surface", K::Text, "the surface figure's two axes, A,B").default("damping_pa_s,drag_coefficient").whole_run(),
    Keyword::new("grid", K::Grid, "the grid from a TOML file (keys elements, damping, drag_coefficient and parameter axes) instead"),
    Keyword::new("shard", K::Text, "run only shard K/N (default in a Slurm array job: its task)").whole_run(),
    Keyword::new("resume", K::Switch, "finish an interrupted run of the same inputs from its saved chunks").whole_run(),
    Keyword::new("chunk_size", K::Count, "candidates per saved chunk; default 16 per CPU thread, 1024 on a GPU").whole_run(),
    Keyword::choice::<SolverKind>("solver", "the solver of every candidate; default the job's (the reference on the CPU)"),
    Keyword::choice::<Backend>("backend", "where simulations run: the faster of CPU and GPU (auto), or the one named").default("auto"),
    Keyword::choice::<Precision>("precision", "the GPU's precision").default("f32"),
    Keyword::new("adapter", K::Text, "the GPU adapter: its index, PCI address or part of its name"),
    Keyword::choice::<LayoutRequest>("gpu_layout", "the GPU layout: a simulation per invocation or per workgroup, or auto").default("auto"),
    Keyword::new(
        "config",
        K::Configs,
        "the experiment: [tether], [settings] and [camera] (a TOML file; Python: or a dict); several for a joint fit of one tether's films",
    ),
    Keyword::new("tip_mass", K::Number, "tip mass of every candidate (not identified); default the config's, else 0").unit("kg"),
    Keyword::new("length", K::Number, "tether length of every candidate (not identified); default the config's, else 0.6").unit("m"),
    Keyword::new(
        "tolerance",
        K::Number,
        "the reference solver's local error tolerance, in [1e-13, 1e-3]; default chosen from the data's noise",
    )
    .unit("m"),
    Keyword::new("validate", K::Count, "candidates re-run on the f64 reference after a GPU or explicit sweep; 0 skips").default("3").whole_run(),
    Keyword::new("validate_marker_tolerance", K::Number, "the largest marker deviation the validation accepts")
        .default("0.0001")
        .unit("m")
        .whole_run(),
    Keyword::new("validate_j_e_tolerance", K::Number, "the largest relative J_e deviation the validation accepts").default("0.01").whole_run(),
    Keyword::new("no_refine", K::Switch, "skip refining the best candidate by Levenberg–Marquardt").whole_run(),
    Keyword::new("exhaustive", K::Switch, "score every candidate to the end of its film (no abandoning)").whole_run(),
    Keyword::new(
        "allow_implausible",
        K::Switch,
        "sweep a film far from every initial shape, and return a fit its noise cannot explain instead of failing",
    ),
    Keyword::new("csv", K::Switch, "also write results.csv").whole_run(),
    Keyword::new("out", K::Path, "the output folder").default("identify-results").whole_run(),
    Keyword::new("force", K::Switch, "replace earlier results and discard an interrupted run's chunks").whole_run(),
    Keyword::new("tether", K::ConfigTable, "[tether] keys over each config's (or alone)"),
    Keyword::new("settings", K::ConfigTable, "[settings] keys over each config's (or alone)"),
    Keyword::new("camera", K::ConfigTable, "[camera] keys over each config's (or alone)"),
];

/// The keyword named `name`.
pub fn keyword(name: &str) -> Option<&'static Keyword> {
    KEYWORDS.iter().find(|k| k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::validation::{DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M};

    #[test]
    fn the_table_states_the_library_defaults() {
        let default = |name| keyword(name).and_then(|k| k.default).unwrap();
        assert_eq!(
            default("validate_marker_tolerance").parse::<f64>(),
            Ok(DEFAULT_MARKER_TOLERANCE_M)
        );
        assert_eq!(
            default("validate_j_e_tolerance").parse::<f64>(),
            Ok(DEFAULT_J_E_TOLERANCE)
        );
        assert_eq!(
            keyword("backend").unwrap().choices(),
            ["auto", "gpu", "cpu"]
        );
        // The objective takes the study (film, experiment, grid, engine,
        // tolerance), not a whole run's outputs or passes.
        let objective: Vec<_> = KEYWORDS
            .iter()
            .filter(|k| !k.whole_run_only)
            .map(|k| k.name)
            .collect();
        assert!(objective.contains(&"tolerance") && objective.contains(&"config"));
        assert!(!objective.contains(&"out") && !objective.contains(&"resume"));
        let mut names: Vec<_> = KEYWORDS.iter().map(|k| k.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), KEYWORDS.len(), "one keyword per name");
    }
}
