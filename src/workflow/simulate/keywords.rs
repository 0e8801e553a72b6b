//! `simulate`'s inputs ([`KEYWORDS`]), each named and described once
//! (`workflow::keywords`).

use crate::engine::Backend;
use crate::gpu::{LayoutRequest, Precision};
use crate::solver::SolverKind;
use crate::workflow::bodies::FormulationKind;
use crate::workflow::keywords::{Keyword, KeywordKind};

use super::inputs::SimulateScenario;
use KeywordKind as K;

/// `simulate`'s inputs, in the order the command line's help lists them.
/// A default that depends on the scenario is stated in the help, and
/// the keyword itself has none.
pub const KEYWORDS: &[Keyword] = &[
    Keyword::new("config", K::Config, "the experiment: scenario, [tether], [settings] and solver keys (a TOML file; Python: or a dict); the other inputs override it"),
    Keyword::choice::<SimulateScenario>("scenario", "the tether's drop or swing-up, or a constrained body (arm, robot); default drop"),
    Keyword::choice::<FormulationKind>("formulation", "the arm's constraint formulation; default modified-lagrange"),
    Keyword::new("feedback_gains", K::Numbers, "the constraint feedback K_P,K_D [1/s², 1/s]; 0,0: none; default arm 100,20, robot 4,4"),
    Keyword::new("alpha", K::Number, "the modified Lagrange form's penalty α; default 1000"),
    Keyword::new("curvature", K::Number, "the robot's programmed circle's curvature; default 0.5").unit("1/m"),
    Keyword::new("axis", K::Axes, "a constrained body's parameter swept, NAME=AXIS; out is then the sweep's table"),
    Keyword::new("tether", K::SwitchOrTable, "the arm carries a tether at its end point (Python: or a dict of [tether] keys)"),
    Keyword::new("start_offset_m", K::Number, "the robot's start off its circle (positive outside); default 0.2").unit("m"),
    Keyword::new("elements", K::Count, "ANCF elements n, 1..=1024; default 10"),
    Keyword::new("damping", K::Number, "Kelvin–Voigt damping D, ≥ 0; default 0").unit("Pa·s"),
    Keyword::new("drag_coefficient", K::Number, "air drag coefficient C_D, ≥ 0; default 0"),
    Keyword::new("tip_mass", K::Number, "point mass at the free end, ≥ 0; default 0 (swingup 0.021)").unit("kg"),
    Keyword::new("length", K::Number, "tether length L, > 0; default 0.6").unit("m"),
    Keyword::new("no_rotary_inertia", K::Switch, "leave the rotary-inertia term out of the mass matrix"),
    Keyword::choice::<SolverKind>("solver", "the solver; default explicit"),
    Keyword::new("step", K::Number, "the fixed step; must divide the sample interval; default from the model's highest eigenvalue").unit("s"),
    Keyword::new("tolerance", K::Number, "the reference solver's local error tolerance, in [1e-13, 1e-3]; default 1e-9 (a body: its relative tolerance, 1e-10)").unit("m"),
    Keyword::new("duration", K::Number, "simulated duration, a whole number of frame intervals; default drop 2, swingup 3, arm 1, robot 20").unit("s"),
    Keyword::new("winch_periods", K::Numbers, "the swing-up's winch move durations T1,T2,T3, each in [0.01, 100]; default 0.5,0.4,0.6").unit("s"),
    Keyword::new("winch_amplitude", K::Number, "the swing-up's winch amplitude A (waypoints 0, −A, +A, 0); default 0.2").unit("m"),
    Keyword::choice::<Backend>("backend", "where it runs: the faster of CPU and GPU (auto), or the one named").default("auto"),
    Keyword::choice::<Precision>("precision", "the GPU's precision").default("f32"),
    Keyword::new("adapter", K::Text, "the GPU adapter: its index, PCI address or part of its name"),
    Keyword::choice::<LayoutRequest>("gpu_layout", "the GPU layout: a simulation per invocation or per workgroup, or auto").default("auto"),
    Keyword::new("out", K::Path, "the track's file, .parquet or .csv (Python: None keeps it in memory)"),
    Keyword::new("state", K::SecondOutput, "also the nodal state at every frame, to this file (.parquet or .csv; on the CPU)"),
    Keyword::new("force", K::Switch, "replace an existing output file"),
    Keyword::new("settings", K::ConfigTable, "[settings] keys over the config's (or alone)"),
    Keyword::new("camera", K::ConfigTable, "[camera] keys over the config's (or alone)"),
];
