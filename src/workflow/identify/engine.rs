//! The sweep's engine and solver settings, its chunks' size, and whether
//! (and against what) its results are validated.

use std::collections::HashSet;
use std::sync::Arc;

use super::request::IdentifyRequest;
use crate::engine::choice::Choice;
use crate::engine::request::EngineRequest;
use crate::engine::{Engine, EngineKind};
use crate::error::InputError;
use crate::model::TetherParams;
use crate::scenario::batch::StepCache;
use crate::scenario::{Scenario, SolverSettings};
use crate::solver::SolverKind;
use crate::sweep::accuracy::SCOUT_TOLERANCE_M;
use crate::sweep::{Candidate, Grid, Selection};
use crate::workflow::WorkflowError;

/// Candidates in a GPU chunk, each saved before the next starts: enough
/// that a chunk fills a GPU in the thread layout (an H100 holds about
/// 2,000 invocations per multiprocessor), few enough that an interrupted
/// run loses seconds.
pub const GPU_CHUNK_CANDIDATES: usize = 1024;

/// Release groups the engine choice counts: all of them up to here, an
/// even sample of this many beyond, whose estimate is scaled to the whole
/// job, so that counting costs no more time and memory on a grid of
/// millions. Over five times the paper's grid (3,535), so the jobs of the
/// docs and benchmarks are counted whole.
pub const CHOICE_SAMPLE_GROUPS: usize = 20_000;

/// Candidates per CPU thread in a chunk: enough that the threads share the
/// slow candidates (low D, large n), few enough that Ctrl-C saves often.
pub const CPU_CHUNK_CANDIDATES_PER_THREAD: usize = 16;

/// The sweep's solver settings: `kind`, at the given `tolerance_m`, else
/// (the reference solver's first pass, `scout`) at the scouting tolerance
/// ([`crate::sweep::accuracy`]); an error when a tolerance is given for
/// another solver than the reference (`--backend auto` chose a GPU: it
/// would not be used).
pub(super) fn sweep_settings(
    tolerance_m: Option<f64>,
    kind: SolverKind,
    scout: bool,
) -> Result<SolverSettings, WorkflowError> {
    let mut settings = SolverSettings {
        kind,
        ..Default::default()
    };
    if scout && kind == SolverKind::Reference {
        settings.reference.tolerance_m = SCOUT_TOLERANCE_M;
    }
    if let Some(t) = tolerance_m {
        if kind != SolverKind::Reference {
            return Err(InputError::new(
                "tolerance_m",
                t,
                format!(
                    "given only for a sweep on the reference solver; this sweep runs {} (add --backend cpu)",
                    kind.name()
                ),
            )
            .into());
        }
        settings.reference.tolerance_m = t;
    }
    Ok(settings)
}

/// Whether a run's reference-solver sweep is a first pass at the
/// scouting tolerance, confirmed at the data's ([`confirm`]): a run
/// without `--tolerance`. A shard cannot know the grid's best, so
/// `summarize` confirms the merged parts as a whole run confirms its own.
pub(super) fn scouts(request: &IdentifyRequest) -> bool {
    request.tolerance_m.is_none()
}

/// The simulations of release groups (each its candidates): one a group.
pub(super) fn release_simulations(
    groups: &[Vec<Candidate>],
    base: &TetherParams,
    scenario: &Scenario,
) -> Vec<(Scenario, TetherParams)> {
    groups
        .iter()
        .map(|members| {
            let (tether, shared) =
                crate::sweep::release::shared_experiment(members, base, scenario);
            (shared, tether)
        })
        .collect()
}

/// The engine for every film's simulations (`--backend auto` weighs this
/// shard's simulations of every film, one per release group, or an even
/// sample of them on a grid of millions; the steps it counts are kept for
/// the run), and the sweep's solver settings on it with the first pass's
/// tolerance where the run scouts on the reference solver: the engine's
/// own, the scouting tolerance or, for the GPU's adaptive scheme in f32,
/// f32's first-pass one where that is looser
/// (`engine::choice::adaptive_reference`).
pub(crate) fn choose_sweep_engine(
    request: &IdentifyRequest,
    films: &[(&Grid, &Scenario)],
) -> Result<(Choice, SolverSettings, Option<f64>), WorkflowError> {
    let Some((first_grid, _)) = films.first() else {
        return Err(WorkflowError::Usage(
            "an identification fits one film or more; none given".into(),
        ));
    };
    let per_film = (CHOICE_SAMPLE_GROUPS / films.len()).max(1);
    let mut simulations = Vec::new();
    let mut groups = 0;
    for (grid, scenario) in films {
        let (sample, count) =
            Selection::new((*grid).clone(), request.shard, HashSet::new()).sample_groups(per_film);
        simulations.extend(release_simulations(&sample, &request.base, scenario));
        groups += count;
    }
    let steps = Arc::new(StepCache::default());
    let choice = crate::workflow::choose_engine(
        EngineRequest {
            options: &request.engine,
            cpu: sweep_settings(
                request.tolerance_m,
                request.engine.solver.unwrap_or(SolverKind::Reference),
                scouts(request),
            )?,
            simulations: groups,
            scouting: scouts(request),
        },
        &crate::workflow::count(groups, "drop"),
        &simulations,
        // A chunk's candidates, a release axis's values sharing a drop.
        (request.chunk_size.unwrap_or(GPU_CHUNK_CANDIDATES) / first_grid.release_run()).max(1),
        &steps,
    )?;
    let kind = choice.engine.kind().solver();
    let mut settings = sweep_settings(request.tolerance_m, kind, scouts(request))?;
    let scout_tolerance_m = (scouts(request) && kind == SolverKind::Reference)
        .then(|| choice.engine.tolerance_m().unwrap_or(SCOUT_TOLERANCE_M));
    if let Some(t) = scout_tolerance_m {
        settings.reference.tolerance_m = t;
    }
    Ok((choice, settings, scout_tolerance_m))
}

/// Candidates per chunk: the request's, else the engine's default in
/// whole runs of a release axis, whose values share one simulation when
/// they share a chunk.
pub(super) fn chunk_size(request: &IdentifyRequest, engine: EngineKind, grid: &Grid) -> usize {
    request.chunk_size.unwrap_or_else(|| {
        let size = match engine.is_gpu() {
            true => GPU_CHUNK_CANDIDATES,
            false => CPU_CHUNK_CANDIDATES_PER_THREAD * rayon::current_num_threads(),
        };
        size.next_multiple_of(grid.release_run())
    })
}

/// Whether a sweep on `engine` is checked against the f64 reference
/// solver: any engine but the CPU's reference solver, unless the request
/// asks for no check.
pub(super) fn validates(engine: &Engine, request: &IdentifyRequest) -> bool {
    let kind = engine.kind();
    (kind.is_gpu() || kind.solver() != SolverKind::Reference) && request.validate > 0
}

/// The settings of the GPU's reference solver, which [`validate`]
/// compares with the CPU's at the same settings; None for a fixed-step
/// engine.
pub(super) fn validation_reference(engine: &EngineKind) -> Option<SolverSettings> {
    match engine {
        EngineKind::GpuAdaptive { reference, .. } => Some(SolverSettings {
            kind: SolverKind::Reference,
            step_s: None,
            reference: *reference,
        }),
        _ => None,
    }
}
