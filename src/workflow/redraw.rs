//! An identification's figures drawn again from its Parquet tables.

use std::path::Path;

use super::WorkflowError;
use crate::io::results::{read_best_fit, read_results};

/// The figures redrawn and from how many candidates.
#[derive(Debug, Clone)]
pub struct RedrawReport {
    pub figures: Vec<String>,
    pub candidates: usize,
}

/// Redraws the figures of the `identify` output directory `dir` from its
/// results.parquet (and best_fit.parquet, when present).
pub fn run(dir: &Path) -> Result<RedrawReport, WorkflowError> {
    let results_path = dir.join("results.parquet");
    if !results_path.exists() {
        return Err(WorkflowError::Usage(format!(
            "{} not found: `plot` redraws the figures of an `identify` output directory (swingup draws its own)",
            results_path.display()
        )));
    }
    let results = read_results(&results_path)?;
    let fit_path = dir.join("best_fit.parquet");
    let fit = if fit_path.exists() {
        Some(read_best_fit(&fit_path)?)
    } else {
        None
    };
    let annotations = crate::plot::identify::Annotations::from_metadata(
        &crate::io::track::read_parquet_metadata(&results_path)?,
    );
    let figures = crate::plot::identify::save_all(dir, &results, fit.as_ref(), &annotations)?;
    Ok(RedrawReport {
        figures,
        candidates: results.len(),
    })
}
