//! The identification figures: J_e over (D, C_D) at the best n (the
//! paper's Fig. 5), min J_e per n (Fig. 6) and measured against best-fit
//! tether shapes (Fig. 7). Everything is drawn from the results tables, so
//! `tether-sweep plot DIR` can redraw it.

use std::path::Path;

use super::series::{Heatmap, Panel, Panels, Series, Shape, Snapshots};
use super::{PlotError, save};
use crate::io::results::BestFit;
use crate::least_squares::profile::Profile;
use crate::sweep::abandon::ABANDON_THRESHOLDS;
use crate::sweep::{Axis, CandidateResult};

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

/// What the identification found beyond the table, for the figures: the
/// confidence region's J_e threshold and the refined values, read from the
/// results' metadata (so `plot DIR` draws them too).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    pub threshold_m2: Option<f64>,
    /// (axis, refined value).
    pub refined: Vec<(Axis, f64)>,
    /// The refined parameters' profiles (the others re-fitted).
    pub profiles: Vec<RefitProfile>,
    /// The surface figure's axes (`--surface`); None: [`DEFAULT_SURFACE_AXES`].
    pub surface_axes: Option<[Axis; 2]>,
}

/// A refined parameter's profile, as the metadata records it.
#[derive(Debug, Clone, PartialEq)]
pub struct RefitProfile {
    pub axis: Axis,
    /// The refined n.
    pub elements: usize,
    /// (value, J_e) with the others re-fitted, by value.
    pub points: Vec<(f64, f64)>,
    /// The refined J_e plus the profile's rise, and its level.
    pub threshold_m2: f64,
    pub confidence_level: f64,
    /// The interval's ends where the profile crosses the threshold.
    pub lower: Option<f64>,
    pub upper: Option<f64>,
}

/// The part of the metadata's refined optimum (`sweep::refine::Refined`
/// as JSON) the profile figures draw.
#[derive(serde::Deserialize)]
struct RefinedRecord {
    elements: usize,
    j_e_m2: f64,
    profile_rise_m2: f64,
    confidence_level: f64,
    parameters: Vec<RefinedParameterRecord>,
}

#[derive(serde::Deserialize)]
struct RefinedParameterRecord {
    parameter: String,
    /// A film's own parameter (a joint run): no axis of the results.
    #[serde(default)]
    film: Option<String>,
    profile: Option<Profile>,
}

impl RefitProfile {
    /// Every profiled parameter of the metadata's refined optimum.
    fn from_refined(text: &str) -> Vec<RefitProfile> {
        let Ok(r) = serde_json::from_str::<RefinedRecord>(text) else {
            return Vec::new();
        };
        r.parameters
            .into_iter()
            .filter(|p| p.film.is_none())
            .filter_map(|p| {
                let profile = p.profile?;
                Some(RefitProfile {
                    axis: Axis::parse(&p.parameter).ok()?,
                    elements: r.elements,
                    points: profile.points.iter().map(|q| (q.value, q.cost)).collect(),
                    threshold_m2: r.j_e_m2 + r.profile_rise_m2,
                    confidence_level: r.confidence_level,
                    lower: profile.lower.crossed(),
                    upper: profile.upper.crossed(),
                })
            })
            .collect()
    }
}

impl Annotations {
    pub fn from_metadata(metadata: &std::collections::BTreeMap<String, String>) -> Self {
        let parse = |key: &str| {
            metadata
                .get(key)
                .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        };
        let threshold_m2 =
            parse(crate::metadata::SUMMARY).and_then(|s| s["confidence"]["threshold_m2"].as_f64());
        let profiles = metadata
            .get(crate::metadata::REFINED)
            .map(|text| RefitProfile::from_refined(text))
            .unwrap_or_default();
        let refined = parse(crate::metadata::REFINED)
            .and_then(|r| {
                r["parameters"].as_array().map(|ps| {
                    ps.iter()
                        .filter(|p| p["film"].is_null())
                        .filter_map(|p| {
                            let axis = Axis::parse(p["parameter"].as_str()?).ok()?;
                            Some((axis, p["value"].as_f64()?))
                        })
                        .collect()
                })
            })
            .unwrap_or_default();
        let surface_axes = metadata
            .get(crate::metadata::SURFACE_AXES)
            .and_then(|text| serde_json::from_str::<[Axis; 2]>(text).ok());
        Self {
            threshold_m2,
            refined,
            profiles,
            surface_axes,
        }
    }
}

/// J_e against one continuous axis at the best n, minimized over the other
/// axes, with the confidence region's threshold and the refined value: how
/// sharply the data pin that parameter down. None unless the axis varies.
pub fn profile(
    results: &[CandidateResult],
    column: Axis,
    annotations: &Annotations,
) -> Option<Panels> {
    let best = best(results)?;
    let n = best.candidate.elements;
    let at_n = at_best_n(results, best, &[column]);
    let axis = sorted_unique(at_n.iter().filter_map(|r| r.candidate.value(column)));
    if axis.len() < 2 {
        return None;
    }
    let points: Vec<(f64, f64)> = axis
        .iter()
        .filter_map(|&x| {
            at_n.iter()
                .filter(|r| r.candidate.value(column) == Some(x))
                .filter_map(|r| r.j_e_m2)
                .min_by(f64::total_cmp)
                .map(|j| (x, j))
        })
        .collect();
    let others = other_axes(&at_n, &[column]);
    let refit = annotations.profiles.iter().find(|p| p.axis == column);
    // Labelled apart from the re-fitted profile: the grid's points miss the
    // optimum in the other axes, so its curve lies above the profile.
    let curve_name = match (others.is_empty(), refit.is_some()) {
        (true, _) => "the grid's J_e".to_string(),
        (false, false) => format!("min J_e over {}", others.join(", ")),
        (false, true) => format!(
            "the grid's J_e, min over its {} (above the re-fitted profile where its points miss the optimum)",
            others.join(", ")
        ),
    };
    let (label, unit) = axis_label(column);
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let grid_best = best.candidate.value(column)?;
    let mut marks = vec![(format!("grid best {label} = {grid_best}{unit}"), grid_best)];
    if let Some((_, v)) = annotations.refined.iter().find(|(c, _)| *c == column) {
        marks.push((
            format!("refined {label} = {}{unit}", significant(*v, 5)),
            *v,
        ));
    }
    let threshold = |threshold: f64| {
        let mut line = Series::new(
            "≈95 % region threshold (grid, two parameters)",
            vec![(axis[0], threshold), (axis[axis.len() - 1], threshold)],
        );
        line.faint = true;
        line
    };
    let refit_series =
        |clip: Option<f64>| refit.map_or_else(Vec::new, |p| refit_series(p, &unit, clip));
    let mut panels = vec![Panel {
        x_range: None,
        y_label: "J_e [m²]".into(),
        series: vec![Series::new(curve_name.clone(), points.clone())],
        marks: marks.clone(),
    }];
    if let Some(t) = annotations.threshold_m2 {
        panels[0].series.push(threshold(t));
        panels[0].series.extend(refit_series(None));
        panels.extend(near_minimum(
            &points,
            curve_name,
            (threshold(t), t),
            refit.map(|p| (p, unit.as_str())),
            marks,
        ));
    }
    Some(Panels {
        title: format!(
            "J_e against {label} at n = {n}{}",
            if others.is_empty() {
                String::new()
            } else {
                format!(", minimized over {}", others.join(", "))
            }
        ),
        x_label: axis_title(column),
        panels,
    })
}

/// A second panel where the grid's curve spans far more than the
/// threshold's height above its minimum (a release time's steep walls),
/// so that the first lays the threshold on the axis: the neighbourhood of
/// the re-fitted profile's minimum where there is one (the grid's curve
/// may lie wholly above it, and is then left out), else the grid's.
fn near_minimum(
    points: &[(f64, f64)],
    curve_name: String,
    (threshold, threshold_m2): (Series, f64),
    refit: Option<(&RefitProfile, &str)>,
    marks: Vec<(String, f64)>,
) -> Option<Panel> {
    let lowest = |p: &[(f64, f64)]| p.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let j_min = lowest(points);
    let j_max = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let height = threshold_m2 - j_min;
    if !(height > 0.0 && j_max - j_min > ZOOM_BEYOND_THRESHOLDS * height) {
        return None;
    }
    let (floor, rise) = match refit {
        Some((p, _)) => (lowest(&p.points), p.threshold_m2 - lowest(&p.points)),
        None => (j_min, height),
    };
    let top = floor + ZOOM_THRESHOLDS * rise;
    // Every series in its place, drawn or not, so that each keeps the
    // first panel's colour (an empty one draws nothing and no legend).
    let mut series = vec![Series::new(curve_name, clip_above(points, top))];
    series.push(match threshold_m2 <= top {
        true => threshold,
        false => Series::new(threshold.name, Vec::new()),
    });
    if let Some((p, unit)) = refit {
        series.extend(refit_series(p, unit, Some(top)));
    }
    // The re-fitted profile's x span (its interval's ends and beyond), with
    // a margin: a release time's interval is a hundredth of its axis.
    let x_range = refit.map(|(p, _)| {
        let xs = p.points.iter().map(|q| q.0);
        let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        let pad = 0.1 * (hi - lo);
        (lo - pad, hi + pad)
    });
    Some(Panel {
        x_range,
        y_label: match refit {
            Some(_) => "J_e [m²], near the re-fitted minimum".into(),
            None => "J_e [m²], near the minimum".into(),
        },
        series,
        marks,
    })
}

/// The re-fitted profile (cut above `clip`) and its interval, drawn at its
/// own threshold's height (one parameter, from the refined J_e): where the
/// curve stays below it. An end that is not crossed is the farthest point
/// (the grid's bound, or where the walk stopped).
fn refit_series(p: &RefitProfile, unit: &str, clip: Option<f64>) -> Vec<Series> {
    let points = match clip {
        Some(top) => clip_above(&p.points, top),
        None => p.points.clone(),
    };
    let mut curve = Series::new(
        format!("J_e, the others re-fitted (n = {})", p.elements),
        points,
    );
    curve.dots = true;
    let (first, last) = (p.points[0].0, p.points[p.points.len() - 1].0);
    let (lower, upper) = (p.lower.unwrap_or(first), p.upper.unwrap_or(last));
    let show = |end: Option<f64>, v: f64| match end {
        Some(_) => significant(v, 4),
        None => format!("{} (not crossed)", significant(v, 4)),
    };
    let line = Series::new(
        format!(
            "{} % profile interval [{}, {}]{unit}: J_e ≤ refined + σ² χ²₁",
            100.0 * p.confidence_level,
            show(p.lower, lower),
            show(p.upper, upper),
        ),
        vec![(lower, p.threshold_m2), (upper, p.threshold_m2)],
    );
    vec![curve, line]
}

/// `value` to `digits` significant digits (1982.4, 0.80008).
fn significant(value: f64, digits: i32) -> String {
    if value == 0.0 || !value.is_finite() {
        return value.to_string();
    }
    let decimals = (digits - 1 - value.abs().log10().floor() as i32).max(0) as usize;
    format!("{value:.decimals$}")
}

/// A profile gets a zoomed panel when it rises more than this many
/// threshold heights (threshold − J_min) above its minimum…
const ZOOM_BEYOND_THRESHOLDS: f64 = 20.0;
/// …and that panel shows this many threshold heights above the minimum.
const ZOOM_THRESHOLDS: f64 = 3.0;

/// The polyline `points` where its y is at most `limit`: crossings are
/// interpolated onto the limit, and a point with y = NaN breaks the line
/// where it leaves.
fn clip_above(points: &[(f64, f64)], limit: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let crossing = |a: (f64, f64), b: (f64, f64)| {
        let f = (limit - a.1) / (b.1 - a.1);
        (a.0 + f * (b.0 - a.0), limit)
    };
    for (k, &p) in points.iter().enumerate() {
        let inside = p.1 <= limit;
        if let Some(&q) = k.checked_sub(1).map(|j| &points[j]) {
            let was_inside = q.1 <= limit;
            if was_inside && !inside {
                out.push(crossing(q, p));
                out.push((p.0, f64::NAN));
            } else if !was_inside && inside {
                out.push(crossing(q, p));
            }
        }
        if inside {
            out.push(p);
        }
    }
    out
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

    fn results(diverged: Option<usize>) -> Vec<CandidateResult> {
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

    #[test]
    fn a_profile_minimizes_over_the_other_axis_and_marks_the_refined_value() {
        let annotations = Annotations {
            threshold_m2: Some(2.5),
            refined: vec![(Axis::Damping, 510.0)],
            profiles: Vec::new(),
            surface_axes: None,
        };
        let p = profile(&results(None), Axis::Damping, &annotations).unwrap();
        let panel = &p.panels[0];
        // Five D values, each at its best C_D (0.8): 1 + ((D − 500)/250)².
        assert_eq!(
            panel.series[0].points,
            vec![
                (0.0, 5.0),
                (250.0, 2.0),
                (500.0, 1.0),
                (750.0, 2.0),
                (1000.0, 5.0)
            ]
        );
        assert_eq!(panel.series[1].points, vec![(0.0, 2.5), (1000.0, 2.5)]);
        assert_eq!(
            panel.marks,
            vec![
                ("grid best D = 500 Pa·s".to_string(), 500.0),
                ("refined D = 510.00 Pa·s".to_string(), 510.0)
            ]
        );
        // The curve rises 4 threshold heights: one panel shows it all.
        assert_eq!(p.panels.len(), 1);
        assert_eq!(p.title, "J_e against D at n = 10, minimized over C_D");
        // A threshold 0.1 above the minimum, which the curve exceeds 40
        // times: a second panel shows 3 heights above the minimum, the
        // curve cut where it leaves.
        let steep = Annotations {
            threshold_m2: Some(1.1),
            ..annotations.clone()
        };
        let p = profile(&results(None), Axis::Damping, &steep).unwrap();
        assert_eq!(p.panels.len(), 2);
        let zoomed = &p.panels[1].series[0].points;
        assert!(
            zoomed
                .iter()
                .filter(|q| q.1.is_finite())
                .all(|q| q.1 <= 1.3 + 1e-12)
        );
        assert!(
            zoomed.iter().any(|q| q.0 == 500.0 && q.1 == 1.0),
            "{zoomed:?}"
        );
        // One C_D value fewer than two: no profile of an axis that does not vary.
        let one = Grid::parse("10", "0:1000:250", "0.8").unwrap();
        let flat: Vec<CandidateResult> = results(None)
            .into_iter()
            .filter(|r| one.index_of(&r.candidate).is_some())
            .collect();
        assert!(profile(&flat, Axis::Drag, &annotations).is_none());
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
    fn clipping_interpolates_the_crossings_and_breaks_the_line() {
        let points = [(0.0, 3.0), (1.0, 1.0), (2.0, 3.0), (3.0, 1.0)];
        let clipped = clip_above(&points, 2.0);
        assert_eq!(clipped[0], (0.5, 2.0));
        assert_eq!(clipped[1], (1.0, 1.0));
        assert_eq!(clipped[2], (1.5, 2.0));
        assert!(clipped[3].1.is_nan());
        assert_eq!(&clipped[4..], &[(2.5, 2.0), (3.0, 1.0)]);
        assert_eq!(significant(1982.367618, 5), "1982.4");
        assert_eq!(significant(0.800082, 5), "0.80008");
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

    #[test]
    fn annotations_come_from_the_metadata_the_workflow_writes() {
        let metadata = std::collections::BTreeMap::from([
            (
                crate::metadata::SUMMARY.to_string(),
                r#"{"confidence":{"threshold_m2":2.5e-4}}"#.to_string(),
            ),
            (
                crate::metadata::REFINED.to_string(),
                format!(
                    r#"{{"parameters":[{{"parameter":"{}","value":0.8001}}]}}"#,
                    Axis::Drag.column()
                ),
            ),
        ]);
        let a = Annotations::from_metadata(&metadata);
        assert_eq!(a.threshold_m2, Some(2.5e-4));
        assert_eq!(a.refined, vec![(Axis::Drag, 0.8001)]);
        assert_eq!(
            Annotations::from_metadata(&Default::default()),
            Annotations::default()
        );
    }

    #[test]
    fn the_refitted_profile_is_drawn_with_its_interval_at_its_threshold() {
        use crate::least_squares::profile::{self as refit, ProfileEnd, ProfilePoint};
        let point = |value, cost| ProfilePoint {
            value,
            cost,
            others: vec![0.8],
        };
        // As the workflow writes it: the profile serialized by serde.
        let refitted = refit::Profile {
            lower: ProfileEnd::Bound { value: 0.0 },
            upper: ProfileEnd::Crossed { value: 800.0 },
            points: vec![point(0.0, 1.5), point(510.0, 1.0), point(800.0, 2.0)],
            below_fit: None,
            evaluations: 9,
        };
        let refined = serde_json::json!({
            (Axis::Elements.column()): 10,
            "j_e_m2": 1.0,
            "profile_rise_m2": 1.0,
            "confidence_level": 0.95,
            "parameters": [{
                "parameter": Axis::Damping.column(),
                "value": 510.0,
                "profile": serde_json::to_value(&refitted).unwrap(),
            }],
        });
        let metadata = std::collections::BTreeMap::from([
            (
                crate::metadata::SUMMARY.to_string(),
                r#"{"confidence":{"threshold_m2":2.5}}"#.to_string(),
            ),
            (crate::metadata::REFINED.to_string(), refined.to_string()),
        ]);
        let a = Annotations::from_metadata(&metadata);
        assert_eq!(
            a.profiles,
            vec![RefitProfile {
                axis: Axis::Damping,
                elements: 10,
                points: vec![(0.0, 1.5), (510.0, 1.0), (800.0, 2.0)],
                threshold_m2: 2.0,
                confidence_level: 0.95,
                lower: None,
                upper: Some(800.0),
            }]
        );
        let p = profile(&results(None), Axis::Damping, &a).unwrap();
        let series = &p.panels[0].series;
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names[2..],
            [
                "J_e, the others re-fitted (n = 10)",
                "95 % profile interval [0 (not crossed), 800.0] Pa·s: J_e ≤ refined + σ² χ²₁"
            ]
        );
        // The interval at its threshold's height, from the bound to the
        // crossing.
        assert_eq!(series[3].points, vec![(0.0, 2.0), (800.0, 2.0)]);
        // No profile for an axis that was not profiled.
        let drag = profile(&results(None), Axis::Drag, &a).unwrap();
        assert_eq!(drag.panels[0].series.len(), 2);
    }
}
