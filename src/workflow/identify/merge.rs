//! A sharded identification's parts merged and finished as a whole run
//! finishes its own sweep (`summarize`).

use super::checks::check_films;
use super::finish::Combination;
use super::report::IdentifyReport;
use super::report::Swept;
use super::request::IdentifyRequest;
use crate::engine::EngineNames;
use crate::io::lock::OutputLock;
use crate::metadata::{self, Metadata};
use crate::sweep::CandidateResult;
use crate::sweep::validation::Validation;
use crate::workflow::{WorkflowError, claim_output};

/// Merges a sharded identification (`summarize`): `results`, each film's
/// parts merged in its grid's order, combined, summarized, refined and
/// written as a whole run's; `shard_validations`, each part's check of its
/// engine, become the report's validations.
pub fn merge(
    request: IdentifyRequest,
    results: Vec<Vec<CandidateResult>>,
    names: EngineNames,
    metadata: Metadata,
    wall_s: f64,
    shard_validations: Vec<(String, Validation)>,
) -> Result<IdentifyReport, WorkflowError> {
    let films = check_films(&request)?;
    for (f, r) in films.iter().zip(&results) {
        if r.len() != f.grid.len() {
            return Err(WorkflowError::Usage(format!(
                "film {}: {} merged rows, not its grid's {} candidates",
                f.film.name,
                r.len(),
                f.grid.len()
            )));
        }
    }
    let _lock = OutputLock::acquire(&request.out)?;
    let table_path = claim_output(&request.out, "results.parquet", request.force)?;
    // The shards' first pass, confirmed here as a whole run confirms its own.
    let scout_tolerance_m = metadata
        .get(metadata::SCOUT_TOLERANCE)
        .map(|t| serde_json::from_str(t))
        .transpose()
        .map_err(crate::workflow::usage)?;
    // Every shard's pilot is the whole grid's: one bound for all.
    let abandon = metadata
        .get(metadata::ABANDON)
        .and_then(|t| serde_json::from_str(t).ok());
    Combination {
        request,
        films,
        names,
        engine: None,
        metadata,
        table_path,
        scout_tolerance_m,
    }
    .finish(
        Swept {
            results,
            scored: 0,
            simulations: 0,
            wall_s,
            abandon,
        },
        None,
    )
    .map(|report| IdentifyReport {
        validations: shard_validations,
        ..report
    })
}
