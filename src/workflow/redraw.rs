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
    let metadata = crate::io::track::read_parquet_metadata(&results_path)?;
    let annotations = crate::plot::identify::Annotations::from_metadata(&metadata);
    let mut figures = crate::plot::identify::save_all(dir, &results, fit.as_ref(), &annotations)?;
    figures.extend(redraw_films(dir, &metadata, &results)?);
    Ok(RedrawReport {
        figures,
        candidates: results.len(),
    })
}

/// A joint identification's per-film figures, from each film's
/// best_fit_FILM.parquet (none for a single film's run).
fn redraw_films(
    dir: &Path,
    metadata: &crate::metadata::Metadata,
    results: &[crate::sweep::CandidateResult],
) -> Result<Vec<String>, WorkflowError> {
    #[derive(serde::Deserialize)]
    struct FilmName {
        name: String,
    }
    let Some(films) = metadata
        .get(crate::metadata::FILMS)
        .and_then(|text| serde_json::from_str::<Vec<FilmName>>(text).ok())
    else {
        return Ok(Vec::new());
    };
    let Some(best) = results
        .iter()
        .filter(|r| r.j_e_m2.is_some())
        .min_by(|a, b| a.j_e_m2.unwrap().total_cmp(&b.j_e_m2.unwrap()))
    else {
        return Ok(Vec::new());
    };
    let mut figures = Vec::new();
    for film in films {
        let path = super::identify::best_fit_path(dir, &film.name);
        if path.exists() {
            let fit = read_best_fit(&path)?;
            figures.extend(crate::plot::identify::save_fit(
                dir,
                &fit,
                &best.candidate,
                &format!("_{}", film.name),
            )?);
        }
    }
    Ok(figures)
}
