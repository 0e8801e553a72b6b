//! One simulation, its marker track written as Parquet or CSV with the
//! tether, scenario, solver settings and what the solver did in the
//! metadata. Its inputs as either door gives them: `inputs`, each named
//! and described in `keywords`.

mod inputs;
mod keywords;

pub use inputs::{SimulateInputs, SimulateJob, SimulateScenario};
pub use keywords::KEYWORDS;

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::choice::Choice;
use crate::engine::request::EngineRequest;
use crate::engine::{Backend, EngineKind, EngineOptions};
use crate::io::PendingFile;
use crate::io::config::SimulationConfig;
use crate::io::states::{state_columns, state_metadata};
use crate::io::table::write_columns_to;
use crate::io::track::{track_batch, write_batch};
use crate::metadata::{self, Metadata, json};
use crate::scenario::SimulationOutput;
use crate::workflow::keywords::Door;
use crate::workflow::{WorkflowError, refuse_to_replace, usage};

/// A simulation, as the user asked for it.
#[derive(Debug, Clone)]
pub struct SimulateRequest {
    /// Scenario, tether and solver (from the config file and the flags).
    pub config: SimulationConfig,
    /// Where and how it runs (its `solver` is the config's: `prepare`
    /// sets it).
    pub engine: EngineOptions,
    /// `.parquet` or `.csv`.
    pub out: PathBuf,
    /// Where the nodal state at every frame goes (`.parquet` or `.csv`;
    /// `io::states`), if asked: the run is then the CPU's.
    pub state: Option<PathBuf>,
    pub force: bool,
}

/// What ran and what it wrote.
#[derive(Debug, Clone)]
pub struct SimulateReport {
    pub output: SimulationOutput,
    pub engine: EngineKind,
    pub engine_reason: Option<String>,
    pub adapter: Option<String>,
    pub wall_s: f64,
}

/// Checks the request and chooses the engine before anything runs; then
/// [`PreparedSimulation::run`] simulates and writes.
pub struct PreparedSimulation {
    request: SimulateRequest,
    choice: Choice,
    pending: PendingFile,
    /// The state's file, claimed.
    state: Option<PendingFile>,
}

/// An error names the input as `door`'s user wrote it.
pub fn prepare(request: SimulateRequest, door: Door) -> Result<PreparedSimulation, WorkflowError> {
    crate::workflow::output_format(&request.out)?;
    refuse_to_replace(&request.out, request.force)?;
    let mut request = request;
    // The config's solver (with `--solver` already applied) is the one.
    request.engine.solver = Some(request.config.solver.kind);
    if let Some(state) = request.state.clone() {
        check_state(&mut request, state, door)?;
    }
    let cfg = &request.config;
    cfg.scenario.check_track_memory()?;
    let choice = crate::workflow::choose_engine(
        EngineRequest {
            options: &request.engine,
            cpu: cfg.solver,
            simulations: 1,
            scouting: false,
        },
        "1 simulation",
        &[(cfg.scenario.clone(), cfg.tether.clone())],
        usize::MAX,
        &Default::default(),
    )?;
    // Claim the outputs before simulating: an unwritable path fails at once.
    let pending = PendingFile::create(&request.out).map_err(usage)?;
    let state = match &request.state {
        Some(path) => Some(PendingFile::create(path).map_err(usage)?),
        None => None,
    };
    Ok(PreparedSimulation {
        request,
        choice,
        pending,
        state,
    })
}

/// The nodal state asked for at `path`: a table of its own (not the
/// track's file), within memory, recorded by the CPU's solvers (`auto`
/// chooses the CPU; the GPU engine reads back markers only).
fn check_state(
    request: &mut SimulateRequest,
    path: PathBuf,
    door: Door,
) -> Result<(), WorkflowError> {
    let state = door.key("state");
    crate::io::TableFormat::from_path(&path)
        .map_err(|e| WorkflowError::Usage(format!("{state} {e}")))?;
    if path == request.out {
        return Err(WorkflowError::Usage(format!(
            "{state} {} is the track's {}: give the state a file of its own",
            path.display(),
            door.key("out")
        )));
    }
    refuse_to_replace(&path, request.force)?;
    match request.engine.backend {
        Backend::Gpu => {
            return Err(WorkflowError::Usage(format!(
                "{state} is recorded by the CPU's solvers; the GPU engine reads back markers only: {} or auto",
                door.given("backend", "cpu")
            )));
        }
        Backend::Auto | Backend::Cpu => request.engine.backend = Backend::Cpu,
    }
    let cfg = &request.config;
    cfg.scenario
        .check_state_memory(cfg.tether.elements + 1)
        .map_err(|e| WorkflowError::flag(&state, e))
}

impl PreparedSimulation {
    /// The engine chosen, the GPU it runs on and why.
    pub fn choice(&self) -> &Choice {
        &self.choice
    }

    pub fn run(mut self) -> Result<SimulateReport, WorkflowError> {
        let adapter = self.choice.engine.adapter_name().map(str::to_string);
        let cfg = &self.request.config;
        let started = Instant::now();
        let engine = self.choice.engine.clone().with_step(cfg.solver.step_s);
        let (output, states) = match self.state.is_some() {
            // `prepare` keeps a state's run on the CPU.
            true => engine
                .simulate_with_states(&cfg.scenario, &cfg.tether)
                .ok_or_else(|| {
                    WorkflowError::Usage(
                        "the nodal state: the GPU engine reads back markers only".into(),
                    )
                })?
                .map(|(output, states)| (output, Some(states))),
            false => engine
                .simulate(&cfg.scenario, &cfg.tether)
                .map(|output| (output, None)),
        }
        .map_err(crate::workflow::batch("simulation failed"))?;
        let wall_s = started.elapsed().as_secs_f64();
        let mut metadata = provenance(cfg, &output);
        crate::workflow::record_engine(&mut metadata, &self.request.engine, &self.choice);
        if let crate::scenario::SolverReport::Gpu { layout, .. } = &output.report {
            let ran = std::collections::BTreeMap::from([(layout.name(), 1)]);
            metadata.insert(metadata::GPU_LAYOUTS_RAN.into(), json(&ran));
        }
        write_batch(
            &mut self.pending,
            &track_batch(&output.track, &metadata),
            &metadata,
        )?;
        if let (Some(mut pending), Some(states)) = (self.state, states.as_ref()) {
            let metadata = state_metadata(&metadata);
            write_columns_to(&mut pending, state_columns(states), &metadata)?;
            pending.commit()?;
        }
        self.pending.commit()?;
        Ok(SimulateReport {
            output,
            engine: self.choice.engine.kind(),
            engine_reason: self.choice.reason.clone(),
            adapter,
            wall_s,
        })
    }
}

/// Key-value metadata stored with every track: units, inputs and what the
/// solver did, so a file explains itself.
fn provenance(cfg: &SimulationConfig, out: &SimulationOutput) -> Metadata {
    let mut m = crate::io::track_metadata();
    m.insert(metadata::TETHER.into(), json(&cfg.tether));
    m.insert(metadata::SCENARIO.into(), cfg.scenario.record());
    m.insert(metadata::SOLVER_SETTINGS.into(), json(&cfg.solver));
    m.insert(metadata::SOLVER_REPORT.into(), json(&out.report));
    if let Some(obj) = &out.swingup {
        m.insert(metadata::SWINGUP_OBJECTIVE.into(), json(obj));
    }
    m
}
