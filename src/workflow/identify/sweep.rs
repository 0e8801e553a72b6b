//! The chunked sweep: the output claimed, the saved chunks opened (and
//! resumed), every film's candidates run chunk by chunk, each chunk saved
//! before the next starts.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::checks::{check_films, check_settings};
use super::engine::{choose_sweep_engine, chunk_size};
use super::finish::Combination;
use super::record::run_metadata;
use super::report::{FilmPlan, IdentifyReport, Plan, Swept};
use super::request::IdentifyRequest;
use crate::engine::{Engine, RunHooks};
use crate::io::CHUNKS_DIR;
use crate::io::checkpoint::ChunkStore;
use crate::io::lock::OutputLock;
use crate::metadata::{self, Metadata, json};
use crate::scenario::Scenario;
use crate::status::RunStatus;
use crate::sweep::abandon::{self, AbandonBounds, Pilot};
use crate::sweep::{Candidate, CandidateResult, Grid, Selection, run};
use crate::workflow::film::CheckedFilm;
use crate::workflow::{Estimate, Hooks, WorkflowError, batch, claim_output};

/// An identification ready to run.
pub struct PreparedIdentification {
    pub(super) request: IdentifyRequest,
    pub plan: Plan,
    pub(super) films: Vec<PreparedFilm>,
    pub(super) engine: Engine,
    pub(super) metadata: Metadata,
    /// The directory of the run's table or parts, and of its saved chunks.
    pub(super) table_dir: PathBuf,
    /// The directories claiming the output made (innermost first), which
    /// a run stopped before saving anything removes.
    pub(super) made_dirs: Vec<PathBuf>,
    /// No other live run writes there while this one does (None once
    /// released to remove `made_dirs`).
    pub(super) lock: Option<OutputLock>,
}

/// A film ready to sweep.
pub(super) struct PreparedFilm {
    pub(super) checked: CheckedFilm,
    /// Its saved chunks, the results they hold, and the positions in its
    /// grid this run still runs (a shard's part of them).
    pub(super) store: ChunkStore,
    pub(super) done: Vec<CandidateResult>,
    pub(super) todo: Vec<usize>,
    /// Where a shard writes the film's part.
    pub(super) part_path: Option<PathBuf>,
}

/// Checks the request, claims the output, opens the saved chunks and
/// chooses the engine. Nothing is simulated yet, except that `--backend
/// auto` with a hardware GPU times one candidate on the CPU.
pub fn prepare(request: IdentifyRequest) -> Result<PreparedIdentification, WorkflowError> {
    check_settings(&request)?;
    let checked = check_films(&request)?;
    let table_dir = match &request.shard {
        Some(s) => request.out.join(s.directory()),
        None => request.out.clone(),
    };
    let made_dirs: Vec<PathBuf> = table_dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    let lock = OutputLock::acquire(&table_dir)?;
    let table_path = match (&request.shard, request.single()) {
        (Some(_), true) => claim_output(&table_dir, "part.parquet", request.force)?,
        (Some(_), false) => table_dir.clone(),
        (None, _) => claim_output(&request.out, "results.parquet", request.force)?,
    };
    let experiments: Vec<(&Grid, &Scenario)> =
        checked.iter().map(|f| (&f.grid, &f.scenario)).collect();
    let (choice, settings, scout_tolerance_m) = choose_sweep_engine(&request, &experiments)?;
    let names = choice.engine.kind().names();
    let mut metadata = run_metadata(&request, &settings, &choice, &checked);
    if let Some(t) = scout_tolerance_m {
        metadata.insert(metadata::SCOUT_TOLERANCE.into(), json(&t));
    }
    let engine_key = json(&(&settings, &names, &request.shard));
    let films = open_chunks(&request, checked, &table_dir, &table_path, &engine_key)?;
    let plan = Plan {
        films: films.iter().map(PreparedFilm::plan).collect(),
        candidates: request.grid.len(),
        engine: choice.engine.kind(),
        adapter: choice.engine.adapter_name().map(str::to_string),
        engine_reason: choice.reason,
        table_path,
        scout_tolerance_m,
    };
    Ok(PreparedIdentification {
        request,
        plan,
        films,
        engine: choice.engine,
        metadata,
        table_dir,
        made_dirs,
        lock: Some(lock),
    })
}

impl PreparedFilm {
    pub(super) fn plan(&self) -> FilmPlan {
        let f = &self.checked;
        let candidates = self.done.len() + self.todo.len();
        FilmPlan {
            name: f.film.name.clone(),
            measured: f.film.measured.clone(),
            scenario: f.scenario.clone(),
            coverage: f.coverage,
            start: f.start,
            unused_rows: f.unused_rows,
            occluded_rows: f.measured.occluded_rows,
            candidates,
            resumed: self.done.len(),
            saved_chunks: self.store.chunks(),
            simulations: candidates / f.grid.release_run(),
            own: f.film.own.clone(),
            tracked_pin: f.tracked_pin,
            noise: f.noise,
        }
    }
}

/// Each checked film with its saved chunks opened (resumed, or refused
/// without `--resume`: a single film's in `.chunks/`, each of several
/// films' in `.chunks/film=NAME/`), the positions of its grid this run
/// runs (a shard's), and, for a shard, its part claimed. `engine_key` is
/// the sweep's solver settings, engine and shard, which decide the results
/// as much as the film does.
pub(super) fn open_chunks(
    request: &IdentifyRequest,
    checked: Vec<CheckedFilm>,
    table_dir: &Path,
    table_path: &Path,
    engine_key: &str,
) -> Result<Vec<PreparedFilm>, WorkflowError> {
    let single = request.single();
    let mut films = Vec::with_capacity(checked.len());
    for f in checked {
        let part_path = match (&request.shard, single) {
            (None, _) => None,
            (Some(_), true) => Some(table_path.to_path_buf()),
            (Some(_), false) => Some(claim_output(
                &table_dir.join(format!("film={}", f.film.name)),
                "part.parquet",
                request.force,
            )?),
        };
        // Everything that decides the film's results: a resume must
        // continue the same run.
        let run_key = json(&(
            &request.grid,
            &f.grid,
            &f.measured_sha256,
            &f.film.camera,
            &request.base,
            &f.scenario,
            engine_key,
            request.exhaustive,
        ));
        let (store, done) = match single {
            true => ChunkStore::open(table_dir, &run_key, request.resume, request.force)?,
            false => ChunkStore::open_film(
                table_dir,
                &f.film.name,
                &run_key,
                request.resume,
                request.force,
            )?,
        };
        let finished: HashSet<usize> = done
            .iter()
            .filter_map(|r| f.grid.index_of(&r.candidate))
            .collect();
        let todo = Selection::new(f.grid.clone(), request.shard, finished)
            .positions()
            .collect();
        films.push(PreparedFilm {
            checked: f,
            store,
            done,
            todo,
            part_path,
        });
    }
    Ok(films)
}

/// The work candidates cost, for the first estimate of a sweep's time: n.
pub(super) fn candidates_work(candidates: impl Iterator<Item = Candidate>) -> f64 {
    candidates.map(|c| c.elements as f64).sum()
}

/// The error of an interrupted sweep, `kept` its films' finished results
/// so far (the resumed ones included). Err: nothing was saved, so nothing
/// is left behind (the caller removes what it made).
pub(super) fn interrupted(
    kept: &[Vec<CandidateResult>],
    plan: &Plan,
    table_dir: &Path,
) -> Result<WorkflowError, WorkflowError> {
    let saved: usize = kept.iter().map(Vec::len).sum();
    let all: usize = plan.films.iter().map(|f| f.candidates).sum();
    let noun = match plan.films.len() {
        1 => "candidate",
        _ => "film candidate",
    };
    if saved == 0 {
        return Err(WorkflowError::Interrupted(format!(
            "interrupted before the first chunk of {} was saved: nothing to resume, nothing written",
            crate::workflow::count(all, noun)
        )));
    }
    Ok(WorkflowError::Interrupted(format!(
        "interrupted: {saved} of {} are finished and saved in {}; run the same command with --resume to finish",
        crate::workflow::count(all, noun),
        table_dir.join(CHUNKS_DIR).display()
    )))
}

impl PreparedIdentification {
    /// Sweeps every film's candidates still to run, chunk by chunk (each
    /// chunk saved before the next starts), then combines, summarizes,
    /// refines, validates and writes; a shard writes each film's part.
    pub fn run(mut self, hooks: Hooks<'_>) -> Result<IdentifyReport, WorkflowError> {
        let swept = self.sweep(hooks)?;
        let stores: Vec<ChunkStore>;
        let report = match self.request.shard {
            Some(shard) => {
                let report = self.write_parts(shard, &swept)?;
                stores = self.films.into_iter().map(|f| f.store).collect();
                report
            }
            None => {
                let (checked, kept): (Vec<CheckedFilm>, Vec<ChunkStore>) =
                    self.films.into_iter().map(|f| (f.checked, f.store)).unzip();
                stores = kept;
                Combination {
                    request: self.request,
                    films: checked,
                    names: self.plan.engine.names(),
                    engine: Some(self.engine),
                    metadata: self.metadata,
                    table_path: self.plan.table_path,
                    scout_tolerance_m: self.plan.scout_tolerance_m,
                }
                .finish(swept, hooks.cancel)?
            }
        };
        // Every file is written: the chunks are no longer needed.
        for store in stores {
            store.finish()?;
        }
        Ok(report)
    }

    /// Every film's candidates still to run, film by film, chunk by chunk,
    /// each chunk saved before the next starts (the film's resumed ones
    /// first); an interruption is an error once the finished chunks are
    /// saved.
    pub(super) fn sweep(&mut self, hooks: Hooks<'_>) -> Result<Swept, WorkflowError> {
        let started = Instant::now();
        let total: u64 = self.films.iter().map(|f| f.todo.len() as u64).sum();
        let work_at_start = candidates_work(
            self.films
                .iter()
                .flat_map(|f| f.todo.iter().map(|&i| f.checked.grid.candidate(i))),
        );
        let names = self.plan.engine.names();
        let mut finished = 0u64;
        let mut simulations = 0;
        let mut all = Vec::with_capacity(self.films.len());
        let mut cancelled = false;
        // One film only: a joint best may lie far above a film's own.
        let abandons = !self.request.exhaustive && self.films.len() == 1;
        let mut abandon = None;
        let failed = match self.engine.gpu() {
            Some(_) => "GPU sweep failed",
            None => "sweep failed",
        };
        'films: for f in &mut self.films {
            let chunk_size = chunk_size(&self.request, self.plan.engine, &f.checked.grid);
            let mut results = std::mem::take(&mut f.done);
            let c = &f.checked;
            let study = c.study(&self.request.base);
            // A release group's shared simulation runs to the end.
            let pilot = (abandons && c.grid.release_axis().is_none()).then(|| Pilot::of(&c.grid));
            let (chunks, pilot_chunks) = abandon::chunks(pilot.as_ref(), &f.todo, chunk_size);
            let on = (&self.engine, &c.grid, study, hooks.cancel);
            let pilot_bounds = |p: &Pilot, results: &[CandidateResult]| {
                p.bounds(on, results, c.coverage.observations())
                    .map_err(batch("the pilot bounding hopeless candidates failed"))
            };
            // None until the pilot's rows are in.
            let mut bounds: Option<Option<AbandonBounds>> = None;
            for (k, positions) in chunks.enumerate() {
                if let (Some(p), true) = (&pilot, Some(k) == pilot_chunks) {
                    bounds = Some(pilot_bounds(p, &results)?);
                }
                let chunk: Vec<Candidate> =
                    positions.iter().map(|&i| c.grid.candidate(i)).collect();
                let offset = finished;
                let report = |done: u64, of: u64| {
                    if let Some(p) = hooks.progress {
                        p(offset + (chunk.len() as u64 * done) / of.max(1), total);
                    }
                };
                let scored = run(
                    &self.engine,
                    &chunk,
                    study,
                    c.grid.release_axis(),
                    bounds.as_ref().and_then(Option::as_ref),
                    RunHooks {
                        progress: Some(&report),
                        cancel: hooks.cancel,
                    },
                )
                .map_err(batch(failed))?;
                if scored.iter().any(|r| r.status == RunStatus::Cancelled) {
                    all.push(std::mem::take(&mut results));
                    cancelled = true;
                    break 'films;
                }
                f.store
                    .save(&scored, (&names.backend, &names.precision, &names.solver))?;
                simulations += crate::sweep::release::group_by_release(&chunk).len();
                finished += chunk.len() as u64;
                results.extend(scored);
                if let Some(tell) = hooks
                    .estimate
                    .filter(|_| finished == chunk.len() as u64 && finished < total)
                {
                    let share = candidates_work(chunk.iter().copied()) / work_at_start;
                    tell(&Estimate::after(started, finished, total, share));
                }
            }
            // A resumed run with nothing left past its pilot still says
            // the bounds its rows were abandoned at.
            if let (Some(p), None) = (&pilot, &bounds) {
                bounds = Some(pilot_bounds(p, &results)?);
            }
            abandon = bounds.flatten();
            results.sort_by_key(|r| c.grid.index_of(&r.candidate));
            all.push(results);
        }
        if cancelled {
            return Err(self.stopped(&all));
        }
        Ok(Swept {
            results: all,
            scored: finished as usize,
            simulations,
            wall_s: started.elapsed().as_secs_f64(),
            abandon,
        })
    }

    /// The error of a sweep interrupted with `kept` finished: with
    /// nothing saved, nothing is left behind.
    pub(super) fn stopped(&mut self, kept: &[Vec<CandidateResult>]) -> WorkflowError {
        match interrupted(kept, &self.plan, &self.table_dir) {
            Ok(e) => e,
            Err(nothing_saved) => {
                for f in &self.films {
                    f.store.discard_empty();
                }
                self.lock = None;
                for dir in &self.made_dirs {
                    // Only empty ones: nothing else was there.
                    let _ = std::fs::remove_dir(dir);
                }
                nothing_saved
            }
        }
    }
}

impl IdentifyRequest {
    /// Checks it, then runs it ([`prepare`], then [`PreparedIdentification::run`]).
    pub fn run(self, hooks: Hooks<'_>) -> Result<IdentifyReport, WorkflowError> {
        prepare(self)?.run(hooks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_without_films_is_refused_not_a_panic() {
        let grid = Grid::parse("4", "1000", "0.8").unwrap();
        let out = std::env::temp_dir().join("tether-sweep-no-films");
        let request = IdentifyRequest::of_films(Vec::new(), grid, &out);
        let e = prepare(request.clone()).err().expect("refused");
        assert!(e.to_string().contains("one film or more"), "{e}");
        let e = crate::workflow::objective::Objective::new(&request)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("one film or more"), "{e}");
        assert!(!out.exists());
    }
}
