//! Experiment design: the standard errors a later identification would
//! report, predicted for each planned film (or set of films) and each
//! point of the design axes from the Fisher information of the marker
//! tracks (`sweep::design`), with no measured data; design.parquet, a
//! figure, and the best design for each parameter. Its inputs as either
//! door gives them: `inputs`, each named and described in `keywords`.

mod inputs;
mod keywords;

pub use inputs::{DesignInputs, ReleaseNote};
pub use keywords::KEYWORDS;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::film::{Film, FilmContext};
use super::{WorkflowError, claim_output};
use crate::engine::request::EngineRequest;
use crate::engine::{Backend, EngineOptions, RunHooks, Simulation};
use crate::error::InputError;
use crate::gpu::Precision;
use crate::io::config::FilmConfig;
use crate::io::design::write_design;
use crate::metadata::{self, Metadata, json};
use crate::scenario::batch::StepCache;
use crate::scenario::{Scenario, ScenarioKind, SolverSettings};
use crate::sweep::design::{Design, DesignError, PlannedFilm, Prediction};
use crate::sweep::{Axis, AxisValues, Grid, Parameter};

/// Where a planned film made from a film already taken is released on
/// that file's clock.
#[derive(Debug, Clone, PartialEq)]
pub enum PlannedRelease {
    /// At its config's `release_time_s`.
    Configured,
    /// At each value of a design axis over it (each checked against the
    /// file's clock as an identification's release axis is).
    Axis(Vec<f64>),
    /// Neither given: at the file's first frame, where a film starts.
    FirstFrame,
}

/// Design plans drops, the experiment identify fits: a config of another
/// experiment is refused, naming its file.
pub fn require_drop(scenario: &Scenario, path: &Path) -> Result<(), WorkflowError> {
    match scenario.kind() {
        ScenarioKind::Drop => Ok(()),
        _ => Err(WorkflowError::Usage(format!(
            "{}: design plans drops (scenario = \"drop\"), the experiment identify fits",
            path.display()
        ))),
    }
}

/// A planned film whose frames and markers are those of a film already
/// taken (a [`FilmConfig`] with its `measured` file): its times and its
/// markers' arc lengths, read through its camera and checked against its
/// experiment as `identify` checks a film (the same checks,
/// [`super::film::check_measured`]), released where `release` says. The
/// file's positions are not used.
pub fn planned_from_measured(
    film: FilmConfig,
    release: &PlannedRelease,
) -> Result<PlannedFilm, WorkflowError> {
    let t = &film.tether;
    let mut grid = Grid::of_fixed(
        vec![t.elements as f64],
        vec![t.damping_pa_s],
        vec![t.drag_coefficient],
    )?;
    if let PlannedRelease::Axis(values) = release {
        let release = Axis::Parameter(Parameter::ReleaseTimeS);
        grid = grid.with(AxisValues::new(release, values.clone())?)?;
    }
    let (name, tether) = (film.name.clone(), film.tether.clone());
    let given = Film::of_config(&film)?;
    let context = |film| FilmContext {
        film,
        grid: &grid,
        base: &tether,
        allow_implausible: false,
    };
    let loaded = super::film::load(&given)?;
    let measured = super::film::read(&context(&given), &loaded)?;
    let mut given = given.clone();
    if *release == PlannedRelease::FirstFrame
        && let (Some(&first_s), Some(scenario)) =
            (measured.times_s().first(), given.scenario.as_mut())
    {
        scenario.set_release_time_s(first_s);
    }
    let checked = super::film::check_measured(&context(&given), measured, loaded.sha256)?;
    Ok(PlannedFilm {
        name,
        tether,
        scenario: checked.scenario,
    })
}

/// Design points at most: each costs two reference simulations per
/// estimated parameter and film.
pub const MAX_DESIGN_POINTS: usize = 10_000;

/// A design, as the user asked for it.
#[derive(Debug, Clone)]
pub struct DesignRequest {
    pub design: Design,
    /// The reference solver's settings for the sensitivities on the CPU.
    pub solver: SolverSettings,
    /// Where the design's simulations run: the CPU cores (the reference
    /// solver), or the GPU's fixed-step scheme in f64 (the precision asked
    /// for is not used: a difference quotient subtracts tracks a few
    /// micrometres apart, below f32's resolution of a coordinate).
    pub engine: EngineOptions,
    pub out: PathBuf,
    pub force: bool,
}

/// The design point with the smallest standard error of one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct BestDesign {
    /// Its index in [`Design::estimated`].
    pub estimated: usize,
    /// Its index in [`DesignReport::predictions`].
    pub point: usize,
}

#[derive(Debug, Clone)]
pub struct DesignReport {
    /// The engine that ran the simulations, in words.
    pub engine: String,
    pub predictions: Vec<Prediction>,
    /// Per estimated parameter with a finite standard error somewhere.
    pub best: Vec<BestDesign>,
    pub simulations: usize,
    pub wall_s: f64,
    pub written: Vec<PathBuf>,
}

impl DesignRequest {
    fn validate(&self) -> Result<(), InputError> {
        let d = &self.design;
        if !(d.noise_m.is_finite() && d.noise_m > 0.0) {
            return Err(InputError::new(
                "noise",
                d.noise_m,
                "a standard deviation > 0 m",
            ));
        }
        if d.estimated.is_empty() {
            return Err(InputError::new(
                "estimate",
                "nothing",
                "at least one parameter",
            ));
        }
        for axis in &d.axes {
            // Built from values, not parsed: checked as a parsed one is.
            AxisValues::new(axis.axis(), axis.values.values.clone()).map_err(|e| InputError {
                field: format!("axis {}", d.axis_column(axis)),
                ..e
            })?;
        }
        let points = d
            .axes
            .iter()
            .map(|a| a.values.values.len())
            .product::<usize>();
        if points > MAX_DESIGN_POINTS {
            return Err(InputError::new(
                "axis",
                format!("{points} design points"),
                format!("at most {MAX_DESIGN_POINTS}"),
            ));
        }
        let mut names: Vec<&str> = d.films.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(InputError::new(
                "config",
                format!("two films named '{}'", w[0]),
                "one name per film (the config's file stem, or name = \"…\" in [settings])",
            ));
        }
        Ok(())
    }
}

/// The predictions on the engine the request chooses, and that engine in
/// words (recorded in `metadata` when it was chosen).
fn predict(
    request: &DesignRequest,
    metadata: &mut Metadata,
) -> Result<(Vec<Prediction>, String), WorkflowError> {
    let design = &request.design;
    let failed = |e| match e {
        DesignError::Input(e) => WorkflowError::Input(e),
        DesignError::Solver(error) => WorkflowError::Solver {
            context: "simulating a design point",
            error,
        },
    };
    let on_cpu = |design: &Design| {
        let predictions = design.predict(&request.solver).map_err(failed)?;
        let engine = format!(
            "{}, reference solver (f64)",
            crate::engine::EngineKind::cpu_device_name()
        );
        Ok((predictions, engine))
    };
    if request.engine.backend == Backend::Cpu {
        return on_cpu(design);
    }
    let runs = design.runs().map_err(failed)?;
    let options = EngineOptions {
        precision: Precision::F64,
        ..request.engine.clone()
    };
    let count = runs.experiments.len();
    let choice = super::choose_engine(
        EngineRequest {
            options: &options,
            cpu: request.solver,
            simulations: count,
            scouting: false,
        },
        &super::count(count, "simulation"),
        &runs.experiments,
        count,
        &Arc::new(StepCache::default()),
    )?;
    if !choice.engine.kind().is_gpu() {
        return on_cpu(design);
    }
    super::record_engine(metadata, &options, &choice);
    let simulations: Vec<Simulation> = runs
        .experiments
        .iter()
        .map(|(scenario, params)| Simulation {
            scenario: scenario.clone(),
            params: params.clone(),
            keep_track: true,
            abandon_above_m2: None,
        })
        .collect();
    let outcomes = choice
        .engine
        .run(&simulations, None, RunHooks::default())
        .map_err(super::batch("simulating the design points on the GPU"))?;
    let tracks = outcomes
        .into_iter()
        .zip(&simulations)
        .map(|(o, s)| {
            o.output.map(|out| out.track).ok_or_else(|| {
                WorkflowError::Failed(format!(
                    "a design simulation did not finish on the GPU ({:?}: n = {}, D = {} Pa·s, C_D = {}); --backend cpu runs the reference solver",
                    o.status,
                    s.params.elements,
                    s.params.damping_pa_s,
                    s.params.drag_coefficient
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let kind = choice.engine.kind();
    let engine = format!(
        "GPU {}, {} scheme ({})",
        choice.engine.adapter_name().unwrap_or("?"),
        kind.solver().name(),
        kind.precision().name()
    );
    Ok((design.predict_from(runs, &tracks), engine))
}

pub fn run(request: &DesignRequest) -> Result<DesignReport, WorkflowError> {
    request.validate()?;
    let design = &request.design;
    // Every design point's films checked before anything is written.
    for point in design.points() {
        design.films_at(&point)?;
    }
    let path = claim_output(&request.out, "design.parquet", request.force)?;
    let started = Instant::now();
    let mut metadata = metadata::base();
    let (predictions, engine) = predict(request, &mut metadata)?;
    let wall_s = started.elapsed().as_secs_f64();
    metadata.insert(
        metadata::DESIGN.into(),
        serde_json::json!({
            "films": design.films.iter().map(|f| serde_json::json!({
                "name": f.name,
                "tether": f.tether,
                "scenario": f.scenario.record(),
            })).collect::<Vec<_>>(),
            "axes": design.axes.iter().map(|a| design.axis_column(a)).collect::<Vec<_>>(),
            "estimated": design.estimated.iter().map(|e| design.estimate_name(e)).collect::<Vec<_>>(),
            "noise_m": design.noise_m,
            "method": "Fisher information J^T J / sigma^2 of the compared marker coordinates (every frame but the first), J by central differences at the assumed values (the engine in tether_sweep.engine, else the reference solver)",
        })
        .to_string(),
    );
    metadata.insert(metadata::SOLVER_SETTINGS.into(), json(&request.solver));
    metadata.insert(metadata::WALL_S.into(), wall_s.to_string());
    write_design(&path, design, &predictions, &metadata)?;
    let mut written = vec![path];
    if let Some(figure) = crate::plot::design::standard_errors(design, &predictions) {
        let stem = request.out.join("design");
        crate::plot::save(&stem, &figure)?;
        written.extend(["svg", "png"].map(|ext| stem.with_extension(ext)));
    }
    let best = (0..design.estimated.len())
        .filter_map(|i| {
            predictions
                .iter()
                .enumerate()
                .filter(|(_, p)| p.standard_errors[i].is_finite())
                .min_by(|(_, a), (_, b)| a.standard_errors[i].total_cmp(&b.standard_errors[i]))
                .map(|(point, _)| BestDesign {
                    estimated: i,
                    point,
                })
        })
        .collect();
    Ok(DesignReport {
        engine,
        simulations: predictions.len() * design.simulations_per_point(),
        predictions,
        best,
        wall_s,
        written,
    })
}
