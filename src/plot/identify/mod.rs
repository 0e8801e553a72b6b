//! The identification figures: J_e over (D, C_D) at the best n (the
//! paper's Fig. 5), min J_e per n (Fig. 6) and measured against best-fit
//! tether shapes (Fig. 7). Everything is drawn from the results tables, so
//! `tether-sweep plot DIR` can redraw it.

use std::path::Path;

use super::series::{Heatmap, Panel, Panels, Series, Shape, Snapshots};
use super::{PlotError, save};
use crate::io::results::BestFit;
use crate::sweep::abandon::ABANDON_THRESHOLDS;
use crate::sweep::{Axis, CandidateResult};

mod profile;

pub use profile::{Annotations, RefitProfile, profile};

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

/// An axis's symbol and unit for a figure's labels.
fn axis_label(axis: Axis) -> (String, String) {
    (axis.symbol().to_string(), axis.display_unit().to_string())
}

/// "symbol [unit]", or the symbol alone.
fn axis_title(axis: Axis) -> String {
    match axis_label(axis) {
        (symbol, unit) if unit.is_empty() => symbol,
        (symbol, unit) => format!("{symbol} [{unit}]"),
    }
}

/// The symbols of the axes that vary among `results`, besides `shown`:
/// what a figure minimized over.
fn other_axes(results: &[&CandidateResult], shown: &[Axis]) -> Vec<String> {
    let Some(first) = results.first() else {
        return Vec::new();
    };
    let axes = Axis::FIXED.into_iter().chain(
        first
            .candidate
            .parameters
            .iter()
            .map(|(p, _)| Axis::Parameter(p)),
    );
    axes.filter(|axis| !shown.contains(axis))
        .filter(|&axis| {
            let mut values = results.iter().filter_map(|r| r.candidate.value(axis));
            let first = values.next();
            values.any(|v| Some(v) != first)
        })
        .map(|axis| axis_label(axis).0)
        .collect()
}

/// The candidates a figure over `axes` draws: those at the best n, unless
/// n is one of the axes.
fn at_best_n<'a>(
    results: &'a [CandidateResult],
    best: &CandidateResult,
    axes: &[Axis],
) -> Vec<&'a CandidateResult> {
    results
        .iter()
        .filter(|r| {
            axes.contains(&Axis::Elements) || r.candidate.elements == best.candidate.elements
        })
        .collect()
}

/// The axes the surface figure shows by default: D and C_D (the paper's
/// Fig. 5).
pub const DEFAULT_SURFACE_AXES: [Axis; 2] = [Axis::Damping, Axis::Drag];

/// J_e over two axes (by default (D, C_D), the paper's Fig. 5) at the best
/// n, each cell the smallest J_e over the grid's other axes, coloured by
/// its height above the minimum in units of the confidence threshold's
/// (log10 J_e without a threshold). None when the results lack an axis.
pub fn surface(
    results: &[CandidateResult],
    axes: [Axis; 2],
    threshold_m2: Option<f64>,
) -> Option<Heatmap> {
    let best = best(results)?;
    let [x_axis, y_axis] = axes;
    let (bx, by) = (best.candidate.value(x_axis)?, best.candidate.value(y_axis)?);
    let rows = at_best_n(results, best, &axes);
    let xs = sorted_unique(rows.iter().filter_map(|r| r.candidate.value(x_axis)));
    let ys = sorted_unique(rows.iter().filter_map(|r| r.candidate.value(y_axis)));
    // A cell: the smallest J_e over the other axes; None (grey) when every
    // candidate in it diverged.
    let mut values: Vec<Option<f64>> = vec![None; xs.len() * ys.len()];
    for r in &rows {
        let (Some(x), Some(y)) = (r.candidate.value(x_axis), r.candidate.value(y_axis)) else {
            continue;
        };
        let ix = xs.iter().position(|&v| v == x).expect("from the same rows");
        let iy = ys.iter().position(|&v| v == y).expect("from the same rows");
        let cell = &mut values[iy * xs.len() + ix];
        if let Some(j) = r.j_e_m2 {
            *cell = Some(cell.map_or(j, |c| c.min(j)));
        }
    }
    // Coloured by log10 J_e, the drag's steep walls span decades and the
    // region's structure within one row is a single shade. Measured from
    // the minimum in units of the threshold's height instead, with
    // log10(1 + u): 0 at the best, log10 2 on the region's edge, and the
    // far walls compressed, up to the height past which a candidate is
    // abandoned (its J_e then a lower bound): beyond it one colour, so
    // that a run that abandons and one that does not draw the same.
    let j_min = values
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let height = threshold_m2.map(|t| t - j_min).filter(|h| *h > 0.0);
    let colour = |j: f64| match height {
        Some(h) => (1.0 + ((j - j_min) / h).min(ABANDON_THRESHOLDS)).log10(),
        None => j.log10(),
    };
    let values: Vec<Option<f64>> = values.into_iter().map(|v| v.map(colour)).collect();
    let diverged = if values.iter().any(Option::is_none) {
        "; grey: diverged"
    } else {
        ""
    };
    let region = if threshold_m2.is_some() {
        "; white: ≈95 % confidence region"
    } else {
        ""
    };
    let others = if best.candidate.parameters.is_empty() && !axes.contains(&Axis::Elements) {
        String::new()
    } else {
        ", min over the other axes".to_string()
    };
    let (x_symbol, x_unit) = axis_label(x_axis);
    let (y_symbol, y_unit) = axis_label(y_axis);
    let n_text = if axes.contains(&Axis::Elements) {
        String::new()
    } else {
        format!(" at n = {}", best.candidate.elements)
    };
    Some(Heatmap {
        title: format!(
            "J_e over ({x_symbol}, {y_symbol}){n_text}{others}; best {x_symbol} = {bx}{}, {y_symbol} = {by}{}{region}{diverged}",
            if x_unit.is_empty() {
                String::new()
            } else {
                format!(" {x_unit}")
            },
            if y_unit.is_empty() {
                String::new()
            } else {
                format!(" {y_unit}")
            },
        ),
        x_label: axis_title(x_axis),
        y_label: axis_title(y_axis),
        value_label: match height {
            Some(_) => format!(
                "log10(1 + (J_e − J_min)/(threshold − J_min)), to {ABANDON_THRESHOLDS} thresholds"
            ),
            None => "log10 J_e [m²]".into(),
        },
        x_values: xs,
        y_values: ys,
        values,
        marker: Some((bx, by)),
        region_at_most: threshold_m2.map(colour),
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
    let others = other_axes(&results.iter().collect::<Vec<_>>(), &[Axis::Elements]);
    Panels {
        title: "Smallest J_e for each number of elements".into(),
        x_label: "n (elements)".into(),
        panels: vec![Panel {
            x_range: None,
            y_label: "min J_e [m²]".into(),
            series: vec![Series {
                dots: true,
                ..Series::new(format!("min over {}", others.join(", ")), points)
            }],
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
    // The refined fit is the answer: drawn solid, the grid's best beside
    // it dashed.
    let (solid, dashed) = match &fit.refined_m {
        Some(refined) => (refined, Some(&fit.fitted_m)),
        None => (&fit.fitted_m, None),
    };
    Snapshots {
        title: match dashed {
            Some(_) => format!(
                "Measured markers (×), the refined fit (solid) and the grid's best ({label}, dashed grey)"
            ),
            None => format!("Measured markers (×) and the best fit ({label})"),
        },
        shapes: chosen
            .into_iter()
            .map(|t| {
                let mut rows: Vec<usize> = (0..fit.times_s.len())
                    .filter(|&r| fit.times_s[r] == t)
                    .collect();
                rows.sort_by_key(|&r| fit.markers[r]);
                let xy = |p: [f64; 2]| (p[0], p[1]);
                let line: Vec<(f64, f64)> = rows.iter().map(|&r| xy(solid[r])).collect();
                Shape {
                    label: format!("t = {t:.2} s"),
                    pin: line.first().copied().unwrap_or((0.0, 0.0)),
                    points: rows.iter().map(|&r| xy(fit.measured_m[r])).collect(),
                    line,
                    dashed: dashed
                        .map_or_else(Vec::new, |d| rows.iter().map(|&r| xy(d[r])).collect()),
                }
            })
            .collect(),
    }
}

/// The fit's misfit against time: the RMS over the markers of each
/// frame's distance from the measurement, and the largest, in mm; the
/// refined fit's where there is one (the answer), with the grid's best
/// faint beside it. A systematic drift shows here where the shapes cannot
/// show it.
pub fn residuals(fit: &BestFit) -> Panels {
    let times = sorted_unique(fit.times_s.iter().copied());
    let per_frame = |fitted: &[[f64; 2]]| {
        let (mut rms, mut worst) = (Vec::new(), Vec::new());
        for &t in &times {
            let distances: Vec<f64> = (0..fit.times_s.len())
                .filter(|&r| fit.times_s[r] == t)
                .map(|r| {
                    let (m, f) = (fit.measured_m[r], fitted[r]);
                    1e3 * (m[0] - f[0]).hypot(m[1] - f[1])
                })
                .collect();
            let mean_square = distances.iter().map(|d| d * d).sum::<f64>() / distances.len() as f64;
            rms.push((t, mean_square.sqrt()));
            worst.push((t, distances.iter().copied().fold(0.0, f64::max)));
        }
        (rms, worst)
    };
    let (fitted, which) = match &fit.refined_m {
        Some(refined) => (refined, "refined fit"),
        None => (&fit.fitted_m, "best fit"),
    };
    let (rms, worst) = per_frame(fitted);
    let mut largest = Series::new("largest over the markers", worst);
    largest.faint = true;
    let mut series = vec![Series::new("RMS over the markers", rms), largest];
    if fit.refined_m.is_some() {
        let mut grid = Series::new("the grid's best, RMS", per_frame(&fit.fitted_m).0);
        grid.faint = true;
        series.push(grid);
    }
    Panels {
        title: format!("The {which} against the measurement, frame by frame"),
        x_label: "t [s]".into(),
        panels: vec![Panel {
            x_range: None,
            y_label: "distance [mm]".into(),
            series,
            marks: Vec::new(),
        }],
    }
}

/// Draws the figures the data allow into `dir`: `surface`, a profile per
/// continuous axis (`profile_damping`, `profile_drag`), `per_elements`,
/// and `shapes` and `residuals` when a best fit is given. Returns the names
/// drawn.
pub fn save_all(
    dir: &Path,
    results: &[CandidateResult],
    fit: Option<&BestFit>,
    annotations: &Annotations,
) -> Result<Vec<String>, PlotError> {
    let mut written = Vec::new();
    let axes = annotations.surface_axes.unwrap_or(DEFAULT_SURFACE_AXES);
    if let Some(s) = surface(results, axes, annotations.threshold_m2) {
        save(&dir.join("surface"), &s)?;
        written.push("surface".to_string());
    }
    let mut profiles = vec![
        (Axis::Damping, "profile_damping".to_string()),
        (Axis::Drag, "profile_drag".to_string()),
    ];
    if let Some(first) = results.first() {
        profiles.extend(
            first
                .candidate
                .parameters
                .iter()
                .map(|(p, _)| (Axis::Parameter(p), format!("profile_{}", p.name()))),
        );
    }
    for (column, name) in profiles {
        if let Some(p) = profile(results, column, annotations) {
            save(&dir.join(&name), &p)?;
            written.push(name);
        }
    }
    save(&dir.join("per_elements"), &per_elements(results))?;
    written.push("per_elements".to_string());
    if let (Some(fit), Some(b)) = (fit, best(results)) {
        written.extend(save_fit(dir, fit, &b.candidate, "")?);
    }
    Ok(written)
}

/// Draws a best fit's `shapes` and `residuals` (each name followed by
/// `suffix`: a joint run's `_FILM`) into `dir`, labelled with `best`, the
/// candidate it shows. Returns the names drawn.
pub fn save_fit(
    dir: &Path,
    fit: &BestFit,
    best: &crate::sweep::Candidate,
    suffix: &str,
) -> Result<Vec<String>, PlotError> {
    let label = std::iter::once(format!(
        "n = {}, D = {} Pa·s, C_D = {}",
        best.elements, best.damping_pa_s, best.drag_coefficient
    ))
    .chain(best.parameters.iter().map(|(p, v)| {
        let (symbol, unit) = axis_label(Axis::Parameter(p));
        format!("{symbol} = {v} {unit}")
    }))
    .collect::<Vec<_>>()
    .join(", ");
    let (shapes_name, residuals_name) = (format!("shapes{suffix}"), format!("residuals{suffix}"));
    save(&dir.join(&shapes_name), &shapes(fit, &label, 6))?;
    save(&dir.join(&residuals_name), &residuals(fit))?;
    Ok(vec![shapes_name, residuals_name])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::RunStatus;
    use crate::sweep::{Candidate, Grid};

    pub(super) fn results(diverged: Option<usize>) -> Vec<CandidateResult> {
        Grid::parse("10", "0:1000:250", "0.7,0.8")
            .unwrap()
            .candidates()
            .into_iter()
            .enumerate()
            .map(|(i, candidate): (usize, Candidate)| {
                let ok = Some(i) != diverged;
                CandidateResult {
                    candidate,
                    j_e_m2: ok.then(|| {
                        1.0 + ((candidate.damping_pa_s - 500.0) / 250.0).powi(2)
                            + 10.0 * (candidate.drag_coefficient - 0.8).abs()
                    }),
                    status: if ok {
                        RunStatus::Ok
                    } else {
                        RunStatus::diverged("test")
                    },
                    step_s: None,
                    steps: 1,
                    gpu_layout: None,
                    tolerance_m: None,
                    implicit_method: None,
                }
            })
            .collect()
    }

    #[test]
    fn the_surface_mentions_divergence_only_when_there_was_some() {
        assert!(
            !surface(&results(None), DEFAULT_SURFACE_AXES, None)
                .unwrap()
                .title
                .contains("diverged")
        );
        assert!(
            surface(&results(Some(3)), DEFAULT_SURFACE_AXES, None)
                .unwrap()
                .title
                .contains("grey: diverged")
        );
    }

    /// A figure drawn under a capture is kept as drawn (a PNG, an SVG),
    /// and with nothing written to memory only no file is made.
    #[test]
    fn a_captured_figure_is_its_files_and_memory_only_writes_none() {
        use crate::io::capture::{Captured, Keep, capturing};
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("per_elements");
        for keep in [Keep::Files, Keep::MemoryOnly] {
            let (saved, Captured { figures, tables }) = capturing(keep, || {
                crate::plot::save(&stem, &per_elements(&results(None)))
            });
            saved.unwrap();
            assert!(tables.is_empty());
            assert_eq!(figures.len(), 1);
            assert_eq!(figures[0].stem, stem);
            assert!(figures[0].png.starts_with(b"\x89PNG\r\n\x1a\n"));
            assert!(
                figures[0].svg.starts_with("<svg"),
                "{}",
                &figures[0].svg[..40]
            );
            let png = stem.with_extension("png");
            match keep {
                Keep::Files => assert_eq!(std::fs::read(&png).unwrap(), figures[0].png),
                Keep::MemoryOnly => assert!(!png.exists()),
            }
            let _ = std::fs::remove_file(&png);
        }
    }

    #[test]
    fn the_surface_measures_from_the_minimum_in_threshold_heights() {
        // J_e = 1 + ((D − 500)/250)² + 10 |C_D − 0.8|: minimum 1 at
        // (500, 0.8); threshold 2 (one height above it).
        let s = surface(&results(None), DEFAULT_SURFACE_AXES, Some(2.0)).unwrap();
        let value = |d: f64, c: f64| {
            let ix = s.x_values.iter().position(|&x| x == d).unwrap();
            let iy = s.y_values.iter().position(|&y| y == c).unwrap();
            s.values[iy * s.x_values.len() + ix].unwrap()
        };
        assert_eq!(value(500.0, 0.8), 0.0);
        // (250, 0.8): J = 2, on the region's edge, log10(1 + 1).
        assert!((value(250.0, 0.8) - 2f64.log10()).abs() < 1e-12);
        assert!((s.region_at_most.unwrap() - 2f64.log10()).abs() < 1e-12);
        // Heights beyond those at which candidates are abandoned are one
        // colour: (1000, 0.8) is 4 above the minimum, 40,000 heights of 1e-4.
        let tight = surface(&results(None), DEFAULT_SURFACE_AXES, Some(1.0001)).unwrap();
        let top = (1.0 + ABANDON_THRESHOLDS).log10();
        let highest = tight.values.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
        assert_eq!(highest, top);
        // Without a threshold: log10 J_e.
        let plain = surface(&results(None), DEFAULT_SURFACE_AXES, None).unwrap();
        assert_eq!(plain.region_at_most, None);
        assert!(plain.values.iter().flatten().any(|&v| v == 0.0));
    }

    #[test]
    fn long_titles_are_wrapped_inside_the_figure() {
        let long = "J_e over (damping_pa_s, release_time_s) at n = 50, min over the other axes; \
                    best D = 2000 Pa·s, release_time_s = 0.02 s; white: ≈95 % confidence region; \
                    grey: diverged";
        let mut heatmap = surface(&results(Some(3)), DEFAULT_SURFACE_AXES, Some(2.0)).unwrap();
        heatmap.title = long.into();
        crate::plot::tests::assert_title_fits(&heatmap);
        let mut panels = per_elements(&results(None));
        panels.title = long.into();
        crate::plot::tests::assert_title_fits(&panels);
    }

    #[test]
    fn residuals_are_each_frames_rms_and_largest_distance_in_mm() {
        let fit = BestFit {
            times_s: vec![0.04, 0.04, 0.08, 0.08],
            markers: vec![0, 1, 0, 1],
            measured_m: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 0.0]],
            fitted_m: vec![[0.003, 0.004], [1.0, 0.0], [0.001, 0.0], [1.0, 0.001]],
            refined_m: None,
        };
        let p = residuals(&fit);
        let rms = &p.panels[0].series[0].points;
        let largest = &p.panels[0].series[1].points;
        // Frame 0.04: distances 5 mm and 0; frame 0.08: 1 mm and 1 mm.
        assert!((rms[0].1 - (12.5f64).sqrt()).abs() < 1e-9, "{rms:?}");
        assert!((rms[1].1 - 1.0).abs() < 1e-9, "{rms:?}");
        assert!((largest[0].1 - 5.0).abs() < 1e-9 && (largest[1].1 - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_refined_fit_is_the_one_drawn_and_the_grids_best_faint_beside_it() {
        let fit = BestFit {
            times_s: vec![0.04, 0.04],
            markers: vec![0, 1],
            measured_m: vec![[0.0, 0.0], [1.0, 0.0]],
            fitted_m: vec![[0.003, 0.004], [1.0, 0.0]],
            refined_m: Some(vec![[0.0, 0.001], [1.0, 0.0]]),
        };
        let p = residuals(&fit);
        assert!(p.title.contains("refined fit"), "{}", p.title);
        let series = &p.panels[0].series;
        // Refined: 1 mm and 0; the grid's best: 5 mm and 0.
        assert!((series[0].points[0].1 - 0.5f64.sqrt()).abs() < 1e-9);
        assert!(series[2].faint && (series[2].points[0].1 - 12.5f64.sqrt()).abs() < 1e-9);
        let s = shapes(&fit, "n = 6", 2);
        assert_eq!(s.shapes[0].line[0], (0.0, 0.001), "the refined fit, solid");
        assert_eq!(
            s.shapes[0].dashed[0],
            (0.003, 0.004),
            "the grid's best, dashed"
        );
    }
}
