//! Hopeless candidates abandoned (`sweep::abandon`): the same answers as
//! scoring every candidate to the end, each abandoned row's J_e below its
//! whole film's, and the same rows abandoned however the work is cut.

mod common;

use std::path::Path;

use tether_sweep::engine::{Backend, EngineOptions};
use tether_sweep::io::results::read_results;
use tether_sweep::plot::identify::{DEFAULT_SURFACE_AXES, surface};
use tether_sweep::status::RunStatus;
use tether_sweep::sweep::{Grid, Shard};
use tether_sweep::workflow::Hooks;
use tether_sweep::workflow::identify::{IdentifyReport, IdentifyRequest, shipped_dataset};
use tether_sweep::workflow::summarize::{self, SummarizeRequest};

/// 2 × 17 × 7 = 238 candidates, a pilot of 2 × 5 × 4 = 40, on the
/// shipped film.
fn request(out: &Path) -> IdentifyRequest {
    IdentifyRequest {
        engine: EngineOptions::cpu(),
        ..IdentifyRequest::new(
            shipped_dataset().unwrap(),
            Grid::parse("3,4", "0:4000:250", "0.6:0.9:0.05").unwrap(),
            out,
        )
    }
}

fn run(request: IdentifyRequest) -> IdentifyReport {
    request.run(Hooks::default()).unwrap()
}

/// Compares a run that abandons with the exhaustive one row by row: a
/// row not abandoned is the same bit for bit, an abandoned one's J_e lies
/// below the whole film's and it stopped early. Returns how many were
/// abandoned.
fn same_rows_or_bounds(exhaustive: &IdentifyReport, abandoning: &IdentifyReport) -> usize {
    let mut abandoned = 0;
    assert_eq!(exhaustive.results.len(), abandoning.results.len());
    for (e, a) in exhaustive.results.iter().zip(&abandoning.results) {
        assert_eq!(e.candidate, a.candidate);
        assert_eq!(e.status, RunStatus::Ok, "{e:?}");
        match a.status {
            RunStatus::Abandoned { time_s } => {
                abandoned += 1;
                let (bound, whole) = (a.j_e_m2.unwrap(), e.j_e_m2.unwrap());
                assert!(bound < whole, "a lower bound: {bound} against {whole}");
                // Stopped before its last frame: fewer steps.
                assert!(time_s > 0.0 && a.steps < e.steps, "{a:?} against {e:?}");
            }
            // Bit for bit.
            _ => {
                assert_eq!(a.j_e_m2.map(f64::to_bits), e.j_e_m2.map(f64::to_bits));
                assert_eq!(a, e);
            }
        }
    }
    abandoned
}

#[test]
fn on_lavapipe_too_the_rows_and_answers_are_the_exhaustive_runs() {
    if !common::gpu_tests_run("the GPU half of the abandoning test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let on_gpu = |out: &str, exhaustive: bool| {
        let base = request(&dir.path().join(out));
        run(IdentifyRequest {
            engine: EngineOptions {
                backend: Backend::Gpu,
                ..EngineOptions::default()
            },
            exhaustive,
            refine: false,
            validate: 0,
            ..base
        })
    };
    let exhaustive = on_gpu("exhaustive", true);
    let abandoning = on_gpu("abandoning", false);
    assert_eq!(abandoning.engine.backend, "gpu");
    let abandoned = same_rows_or_bounds(&exhaustive, &abandoning);
    eprintln!(
        "{abandoned} of {} abandoned on the GPU",
        abandoning.results.len()
    );
    assert!(
        abandoned * 3 > abandoning.results.len(),
        "only {abandoned} of {} abandoned: the test shows little",
        abandoning.results.len()
    );
    assert_eq!(abandoning.summary, exhaustive.summary);
}

#[test]
fn abandoning_hopeless_candidates_changes_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let exhaustive = run(IdentifyRequest {
        exhaustive: true,
        ..request(&dir.path().join("exhaustive"))
    });
    let abandoning = run(request(&dir.path().join("abandoning")));
    assert!(exhaustive.abandon.is_none());
    let bounds = abandoning.abandon.clone().expect("a single film abandons");
    assert_eq!(bounds.pilot, 40);

    let abandoned = same_rows_or_bounds(&exhaustive, &abandoning);
    assert!(
        abandoned * 3 > abandoning.results.len(),
        "only {abandoned} of {} abandoned: the test shows little",
        abandoning.results.len()
    );
    assert!(
        abandoning
            .results
            .iter()
            .filter(|r| r.status.abandoned_at().is_some())
            .all(|a| { a.j_e_m2.unwrap() > bounds.of(&a.candidate).unwrap() })
    );
    // The answers: the best, each n's best, the region, the refined values
    // with their profile intervals, and what the surface figure shows.
    assert_eq!(abandoning.summary, exhaustive.summary);
    assert_eq!(abandoning.refined, exhaustive.refined);
    assert!(
        abandoning
            .refined
            .as_ref()
            .unwrap()
            .parameters
            .iter()
            .all(|p| p.profile.is_some()),
        "profile intervals compared"
    );
    let threshold = exhaustive.summary.as_ref().unwrap().confidence.threshold_m2;
    let drawn = |r: &IdentifyReport| {
        surface(&r.results, DEFAULT_SURFACE_AXES, Some(threshold))
            .unwrap()
            .values
    };
    assert_eq!(drawn(&abandoning), drawn(&exhaustive));

    // The table says which rows are bounds, and where they stopped.
    let table = read_results(&dir.path().join("abandoning/results.parquet")).unwrap();
    assert_eq!(table, abandoning.results);
}

#[test]
fn shards_chunks_and_a_merge_abandon_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let single = run(request(&dir.path().join("single")));
    let chunked = run(IdentifyRequest {
        chunk_size: Some(7),
        ..request(&dir.path().join("chunked"))
    });
    assert_eq!(chunked.results, single.results);

    let sharded = dir.path().join("sharded");
    for index in 0..3 {
        run(IdentifyRequest {
            shard: Some(Shard { index, count: 3 }),
            ..request(&sharded)
        });
    }
    let merged = summarize::run(&SummarizeRequest {
        dir: sharded.clone(),
        measured: None,
        out: None,
        refine: false,
        allow_implausible: false,
        force: false,
    })
    .unwrap()
    .identification;
    assert_eq!(merged.summary, single.summary);
    assert_eq!(merged.abandon, single.abandon);
    let statuses = |r: &IdentifyReport| -> Vec<RunStatus> {
        r.results.iter().map(|r| r.status.clone()).collect()
    };
    assert_eq!(statuses(&merged), statuses(&single));
    // Rows the merge did not re-run near the best are the single run's.
    for (m, s) in merged.results.iter().zip(&single.results) {
        if m.tolerance_m == s.tolerance_m {
            assert_eq!(m, s);
        }
    }
}
