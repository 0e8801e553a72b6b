//! The identification figures: J_e over (D, C_D) at the best n (the
//! paper's Fig. 5), min J_e per n (Fig. 6) and measured against best-fit
//! tether shapes (Fig. 7). Everything is drawn from the results tables, so
//! `tether-sweep plot DIR` can redraw it.

use std::path::Path;

use super::series::{Heatmap, Panel, Panels, Series, Shape, Snapshots};
use super::{PlotError, save};
use crate::io::results::BestFit;
use crate::sweep::CandidateResult;

fn sorted_unique(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The best finished candidate.
fn best(results: &[CandidateResult]) -> Option<&CandidateResult> {
    results
        .iter()
        .filter(|r| r.j_e_m2.is_some())
        .min_by(|a, b| a.j_e_m2.unwrap().total_cmp(&b.j_e_m2.unwrap()))
}

/// log10 J_e over (D, C_D) at the best n (Fig. 5).
pub fn surface(results: &[CandidateResult]) -> Option<Heatmap> {
    let best = best(results)?;
    let n = best.candidate.elements;
    let at_n: Vec<&CandidateResult> = results
        .iter()
        .filter(|r| r.candidate.elements == n)
        .collect();
    let damping = sorted_unique(at_n.iter().map(|r| r.candidate.damping_pa_s));
    let drag = sorted_unique(at_n.iter().map(|r| r.candidate.drag_coefficient));
    let mut values = vec![None; damping.len() * drag.len()];
    for r in &at_n {
        let ix = damping
            .iter()
            .position(|&d| d == r.candidate.damping_pa_s)
            .expect("from the same rows");
        let iy = drag
            .iter()
            .position(|&c| c == r.candidate.drag_coefficient)
            .expect("from the same rows");
        values[iy * damping.len() + ix] = r.j_e_m2.map(f64::log10);
    }
    Some(Heatmap {
        title: format!(
            "J_e over (D, C_D) at n = {n}; best D = {} Pa·s, C_D = {:.3}; grey: diverged",
            best.candidate.damping_pa_s, best.candidate.drag_coefficient
        ),
        x_label: "D [Pa·s]".into(),
        y_label: "C_D".into(),
        value_label: "log10 J_e [m²]".into(),
        x_values: damping,
        y_values: drag,
        values,
        marker: Some((best.candidate.damping_pa_s, best.candidate.drag_coefficient)),
    })
}

/// The smallest J_e for each n (Fig. 6).
pub fn per_elements(results: &[CandidateResult]) -> Panels {
    let ns = sorted_unique(results.iter().map(|r| r.candidate.elements as f64));
    let points = ns
        .iter()
        .filter_map(|&n| {
            results
                .iter()
                .filter(|r| r.candidate.elements as f64 == n)
                .filter_map(|r| r.j_e_m2)
                .min_by(f64::total_cmp)
                .map(|j| (n, j))
        })
        .collect();
    Panels {
        title: "Smallest J_e for each number of elements".into(),
        x_label: "n (elements)".into(),
        panels: vec![Panel {
            y_label: "min J_e [m²]".into(),
            series: vec![Series::new("min over (D, C_D)", points)],
            marks: Vec::new(),
        }],
    }
}

/// Measured markers (crosses) and the best fit (lines) at `count` evenly
/// spaced frames (Fig. 7).
pub fn shapes(fit: &BestFit, label: &str, count: usize) -> Snapshots {
    let times = sorted_unique(fit.times_s.iter().copied());
    let count = count.clamp(2, times.len().max(2));
    let mut chosen: Vec<f64> = (0..count)
        .map(|k| times[k * (times.len() - 1) / (count - 1)])
        .collect();
    chosen.dedup();
    Snapshots {
        title: format!("Measured markers (×) and the best fit ({label})"),
        shapes: chosen
            .into_iter()
            .map(|t| {
                let mut rows: Vec<usize> = (0..fit.times_s.len())
                    .filter(|&r| fit.times_s[r] == t)
                    .collect();
                rows.sort_by_key(|&r| fit.markers[r]);
                let xy = |p: [f64; 2]| (p[0], p[1]);
                let line: Vec<(f64, f64)> = rows.iter().map(|&r| xy(fit.fitted_m[r])).collect();
                Shape {
                    label: format!("t = {t:.2} s"),
                    pin: line.first().copied().unwrap_or((0.0, 0.0)),
                    points: rows.iter().map(|&r| xy(fit.measured_m[r])).collect(),
                    line,
                }
            })
            .collect(),
    }
}

/// Draws the figures the data allow into `dir`: `surface`, `per_elements`,
/// and `shapes` when a best fit is given. Returns the names drawn.
pub fn save_all(
    dir: &Path,
    results: &[CandidateResult],
    fit: Option<&BestFit>,
) -> Result<Vec<String>, PlotError> {
    let mut written = Vec::new();
    if let Some(s) = surface(results) {
        save(&dir.join("surface"), &s)?;
        written.push("surface".to_string());
    }
    save(&dir.join("per_elements"), &per_elements(results))?;
    written.push("per_elements".to_string());
    if let (Some(fit), Some(b)) = (fit, best(results)) {
        let label = format!(
            "n = {}, D = {} Pa·s, C_D = {:.3}",
            b.candidate.elements, b.candidate.damping_pa_s, b.candidate.drag_coefficient
        );
        save(&dir.join("shapes"), &shapes(fit, &label, 6))?;
        written.push("shapes".to_string());
    }
    Ok(written)
}
