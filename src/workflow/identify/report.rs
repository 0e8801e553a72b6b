//! What a prepared identification will do ([`Plan`]) and what it found
//! and wrote ([`IdentifyReport`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::camera::Camera;
use crate::engine::{EngineKind, EngineNames};
use crate::io::track::Measured;
use crate::scenario::Scenario;
use crate::sweep::abandon::AbandonBounds;
use crate::sweep::accuracy::Chosen;
use crate::sweep::joint::{FilmAxes, FilmScore, FilmWeight};
use crate::sweep::refine::Refined;
use crate::sweep::validation::Validation;
use crate::sweep::{AxisValues, CandidateResult, Coverage, Shard, Summary};
use crate::track::NoiseEstimate;
use crate::workflow::film::{StartOffset, TrackedPin};
use crate::workflow::fit::{FilmGoodness, Outlier};

/// What a prepared identification will do.
#[derive(Debug, Clone)]
pub struct Plan {
    pub films: Vec<FilmPlan>,
    /// The shared grid's candidates: the results' rows.
    pub candidates: usize,
    pub engine: EngineKind,
    /// The adapter's name when the GPU runs.
    pub adapter: Option<String>,
    /// Why `--backend auto` chose the engine.
    pub engine_reason: Option<String>,
    /// The results table (a shard: its directory of parts).
    pub table_path: PathBuf,
    /// The tolerance of the sweep's first pass \[m\] when the run then
    /// re-runs the candidates near the best at the data's
    /// ([`crate::sweep::accuracy::confirm`]); None: the sweep is final.
    pub scout_tolerance_m: Option<f64>,
}

/// One film's part of the plan.
#[derive(Debug, Clone)]
pub struct FilmPlan {
    pub name: String,
    pub measured: Measured,
    /// The experiment compared: frames, markers, duration.
    pub scenario: Scenario,
    /// The samples J_e compares, and those it skips.
    pub coverage: Coverage,
    /// How far the measured first frame is from the initial shape.
    pub start: Option<StartOffset>,
    /// Rows of the measured file that no frame and marker of the experiment
    /// compares (markers beyond its own; every frame is compared).
    pub unused_rows: usize,
    /// Rows of the file with an empty or NaN position (occluded markers).
    pub occluded_rows: usize,
    /// Its candidates in this run (shared × own; a shard's), those found
    /// finished in saved chunks and the chunks they were in, and the
    /// simulations they all take (a release axis's values share one).
    pub candidates: usize,
    pub resumed: usize,
    pub saved_chunks: usize,
    pub simulations: usize,
    pub own: Vec<AxisValues>,
    /// Its pin, where its tracked marker gave it
    /// ([`crate::workflow::film::take_pin_from_film`]).
    pub tracked_pin: Option<TrackedPin>,
    /// Its noise, which its fit is tested against
    /// ([`crate::misfit::GoodnessOfFit`]);
    /// None when the film is too short to tell.
    pub noise: Option<NoiseEstimate>,
}

impl Plan {
    /// Candidates of every film this run still runs.
    pub fn to_run(&self) -> usize {
        self.films.iter().map(|f| f.candidates - f.resumed).sum()
    }
}

/// What an identification found and wrote (a shard: its parts).
#[derive(Debug, Clone)]
pub struct IdentifyReport {
    /// The films, by name (one: a single film's layout).
    pub films: Vec<String>,
    /// One per shared candidate: its J_e (several films': the joint J_e).
    pub results: Vec<CandidateResult>,
    /// Several films: each film's best over its own axes at each shared
    /// candidate, and each film's noise and weight (empty for one film).
    pub scores: Vec<Vec<FilmScore>>,
    pub weights: Vec<FilmWeight>,
    /// None for a shard whose every candidate diverged.
    pub summary: Option<Summary>,
    /// The refined optimum (not for a shard, or with `refine` off).
    pub refined: Option<Refined>,
    /// The reference solver's tolerance for the best fit and the
    /// refinement, and how it was chosen (None: no candidate had a J_e).
    pub accuracy: Option<Chosen>,
    /// Each film's validation (by its name), when the sweep ran on another
    /// solver than the reference; `summarize`: each shard's.
    pub validations: Vec<(String, Validation)>,
    /// The engine that swept.
    pub engine: EngineNames,
    /// Film candidates scored by this invocation, the simulations they
    /// took (fewer where a release axis's values share one), and their
    /// wall time \[s\].
    pub scored: usize,
    pub simulations: usize,
    pub wall_s: f64,
    /// The bounds hopeless candidates were abandoned at (this run's
    /// sweep; none with `--exhaustive`, several films or a release axis).
    pub abandon: Option<AbandonBounds>,
    pub table_path: PathBuf,
    /// The figures drawn (none for a shard).
    pub figures: Vec<String>,
    /// Set when a best fit misses the data by more than
    /// [`crate::workflow::film::Plausibility::FIT_WARNING`] of the tether's length,
    /// or by more than the film's noise explains ([`GoodnessOfFit`](crate::misfit::GoodnessOfFit)).
    pub fit_warning: Option<String>,
    /// Each film's fit against its noise (none for a shard, or a film too
    /// short to estimate its noise).
    pub goodness: Vec<FilmGoodness>,
    /// When a single film's fit does not explain it: each known input
    /// freed in turn ([`super::FreedInput`]).
    pub freed: Vec<super::FreedInput>,
    /// `--allow-implausible`: a fit warning does not fail the run.
    pub implausible_allowed: bool,
    /// Each film's samples far beyond the noise from its best fit.
    pub outliers: Vec<FilmOutliers>,
    pub out: PathBuf,
    /// The shard this run was, and the parts it wrote.
    pub shard: Option<Shard>,
    pub parts: Vec<PathBuf>,
}

/// A film's samples far beyond its noise from its best fit
/// ([`find_outliers`](crate::workflow::fit::find_outliers)).
#[derive(Debug, Clone)]
pub struct FilmOutliers {
    pub film: String,
    pub outliers: Vec<Outlier>,
    /// The distance beyond which they are listed \[m\] ([`outlier_limit_m`](crate::workflow::fit::outlier_limit_m)).
    pub limit_m: f64,
    /// How its file is written, to name them as the file has them.
    pub camera: Camera,
}

/// A shard part's film ([`metadata::FILM`](crate::metadata::FILM)) where there are several: its
/// place among the films (their order is the refinement's and the
/// columns'), its name and own axes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FilmKey {
    pub index: usize,
    #[serde(flatten)]
    pub axes: FilmAxes,
}

/// What the films' sweeps return: each film's results in its grid's
/// order, the film candidates scored here, and the simulations they took.
pub(super) struct Swept {
    pub(super) results: Vec<Vec<CandidateResult>>,
    pub(super) scored: usize,
    pub(super) simulations: usize,
    pub(super) wall_s: f64,
    /// The bounds hopeless candidates were abandoned at, where they were.
    pub(super) abandon: Option<AbandonBounds>,
}
