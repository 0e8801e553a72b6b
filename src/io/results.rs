//! The identification results table: one row per candidate.

use std::collections::BTreeMap;
use std::path::Path;

use super::IoError;
use super::table::{Column, write_columns};
use crate::sweep::CandidateResult;

/// Writes `results` with the documented schema: `elements`, `damping_pa_s`,
/// `drag_coefficient`, `j_e_m2` (null unless ok), `status` (ok | diverged),
/// `step_s` (null for the adaptive reference solver), `steps`, `backend`,
/// `precision`, `solver`.
pub fn write_results(
    path: &Path,
    results: &[CandidateResult],
    backend: &str,
    precision: &str,
    solver: &str,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let rows = results.len();
    write_columns(
        path,
        vec![
            Column::i32(
                "elements",
                results
                    .iter()
                    .map(|r| r.candidate.elements as i32)
                    .collect(),
            ),
            Column::f64(
                "damping_pa_s",
                "Pa*s",
                results.iter().map(|r| r.candidate.damping_pa_s).collect(),
            ),
            Column::f64(
                "drag_coefficient",
                "1",
                results
                    .iter()
                    .map(|r| r.candidate.drag_coefficient)
                    .collect(),
            ),
            Column::optional_f64("j_e_m2", "m^2", results.iter().map(|r| r.j_e_m2).collect()),
            Column::text(
                "status",
                results
                    .iter()
                    .map(|r| r.status.name().to_string())
                    .collect(),
            ),
            Column::optional_f64("step_s", "s", results.iter().map(|r| r.step_s).collect()),
            Column::i64("steps", results.iter().map(|r| r.steps as i64).collect()),
            Column::text("backend", vec![backend.to_string(); rows]),
            Column::text("precision", vec![precision.to_string(); rows]),
            Column::text("solver", vec![solver.to_string(); rows]),
        ],
        metadata,
    )
}
