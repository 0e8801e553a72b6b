//! The swing-up figures: fitness per generation (paper Fig. 9), the best
//! winch trajectory (Fig. 10), tip and winch against time (Fig. 11), tether
//! snapshots (Fig. 12) and the exhaustive J_a,min map over (T1, T2).

use std::path::Path;

use super::series::{Heatmap, Panel, Panels, Series, Shape, Snapshots};
use super::{PlotError, save};
use crate::ga::evaluate::Landscape;
use crate::ga::{GaRun, GeneCoding, Individual};
use crate::scenario::Scenario;
use crate::track::Track;

/// Best and mean J_a,min per generation, with the global optimum when known.
pub fn fitness(run: &GaRun, global_optimum_m: Option<f64>) -> Panels {
    let best: Vec<(f64, f64)> = run
        .generations
        .iter()
        .map(|g| (g.index as f64, g.best().evaluation.fitness()))
        .filter(|p| p.1.is_finite())
        .collect();
    let mean: Vec<(f64, f64)> = run
        .generations
        .iter()
        .filter_map(|g| g.mean_fitness().map(|m| (g.index as f64, m)))
        .collect();
    let mut series = vec![
        Series::new("best of generation", best),
        Series::new("mean of generation (finished runs)", mean),
    ];
    if let Some(j) = global_optimum_m {
        let last = run.generations.len().saturating_sub(1).max(1) as f64;
        series.push(Series {
            faint: true,
            ..Series::new("global optimum (exhaustive)", vec![(0.0, j), (last, j)])
        });
    }
    Panels {
        title: "Swing-up GA: fitness per generation".into(),
        x_label: "generation".into(),
        panels: vec![Panel {
            x_range: None,
            y_label: "J_a,min [m]".into(),
            series,
            marks: Vec::new(),
        }],
    }
}

fn sampled(duration_s: f64, f: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    let samples = 1500;
    (0..=samples)
        .map(|i| {
            let t = duration_s * i as f64 / samples as f64;
            (t, f(t))
        })
        .collect()
}

/// Winch position, velocity and acceleration of a swing-up.
pub fn winch(scenario: &Scenario, label: &str) -> Panels {
    let w = scenario.motion();
    let d = scenario.duration_s();
    let panel = |y_label: &str, name: &str, points| Panel {
        x_range: None,
        y_label: y_label.into(),
        series: vec![Series::new(name, points)],
        marks: Vec::new(),
    };
    Panels {
        title: format!("Best winch trajectory ({label})"),
        x_label: "t [s]".into(),
        panels: vec![
            panel("x_w [m]", "position", sampled(d, |t| w.position(t)[0])),
            panel("v_w [m/s]", "velocity", sampled(d, |t| w.velocity(t)[0])),
            panel(
                "a_w [m/s²]",
                "acceleration",
                sampled(d, |t| w.acceleration(t)[0]),
            ),
        ],
    }
}

/// The tip's x and y against time beside the winch's, with the time of
/// J_a,min marked.
pub fn tip(scenario: &Scenario, track: &Track, t_at_min_s: Option<f64>) -> Panels {
    let tip = track.markers() - 1;
    let tip_coordinate = |axis: usize| -> Vec<(f64, f64)> {
        track
            .times_s
            .iter()
            .enumerate()
            .map(|(f, &t)| (t, track.at(f, tip)[axis]))
            .collect()
    };
    let w = scenario.motion();
    let marks: Vec<(String, f64)> = t_at_min_s
        .map(|t| (format!("J_a,min at {t:.3} s"), t))
        .into_iter()
        .collect();
    Panels {
        title: "Tip and winch against time".into(),
        x_label: "t [s]".into(),
        panels: vec![
            Panel {
                x_range: None,
                y_label: "x [m]".into(),
                series: vec![
                    Series::new("tip", tip_coordinate(0)),
                    Series::new(
                        "winch",
                        sampled(scenario.duration_s(), |t| w.position(t)[0]),
                    ),
                ],
                marks: marks.clone(),
            },
            Panel {
                x_range: None,
                y_label: "y [m]".into(),
                series: vec![
                    Series::new("tip", tip_coordinate(1)),
                    Series::new(
                        "winch",
                        sampled(scenario.duration_s(), |t| w.position(t)[1]),
                    ),
                ],
                marks,
            },
        ],
    }
}

/// Tether shapes (through the markers) at `count` evenly spaced frames up
/// to `until_s`.
pub fn snapshots(scenario: &Scenario, track: &Track, until_s: f64, count: usize) -> Snapshots {
    let last = track
        .times_s
        .iter()
        .rposition(|&t| t <= until_s + 1e-9)
        .unwrap_or(0);
    let count = count.max(2);
    let motion = scenario.motion();
    let mut frames: Vec<usize> = (0..count).map(|k| k * last / (count - 1)).collect();
    frames.dedup();
    Snapshots {
        title: format!(
            "Tether during the swing-up, t = 0 … {:.2} s",
            track.times_s[last]
        ),
        shapes: frames
            .into_iter()
            .map(|f| {
                let t = track.times_s[f];
                let w = motion.position(t);
                Shape {
                    label: format!("t = {t:.2} s"),
                    line: frame_points(track, f),
                    points: Vec::new(),
                    dashed: Vec::new(),
                    pin: (w[0], w[1]),
                }
            })
            .collect(),
    }
}

/// The markers of frame `f` as plot points.
pub fn frame_points(track: &Track, f: usize) -> Vec<(f64, f64)> {
    (0..track.markers())
        .map(|j| {
            let p = track.at(f, j);
            (p[0], p[1])
        })
        .collect()
}

/// J_a,min over (T1, T2) at the given T3 gene.
pub fn landscape(landscape: &Landscape, coding: &GeneCoding, best: u32) -> Heatmap {
    let [_, _, x3] = coding.genes(best);
    let genes: Vec<u32> = (0..=coding.gene_max()).collect();
    let axis: Vec<f64> = genes.iter().map(|&x| coding.period_s(x)).collect();
    let values = genes
        .iter()
        .flat_map(|&x2| genes.iter().map(move |&x1| (x1, x2)))
        .map(|(x1, x2)| landscape.evaluations[coding.chromosome([x1, x2, x3]) as usize].j_a_min_m)
        .collect();
    let periods = coding.periods_s(best);
    Heatmap {
        title: format!(
            "J_a,min over (T1, T2) at T3 = {:.3} s (the optimum's); grey: diverged",
            periods[2]
        ),
        x_label: "T1 [s]".into(),
        y_label: "T2 [s]".into(),
        value_label: "J_a,min [m]".into(),
        x_values: axis.clone(),
        y_values: axis,
        values,
        marker: Some((periods[0], periods[1])),
        region_at_most: None,
    }
}

/// Draws every figure that the data allow into `dir` (SVG and PNG each):
/// fitness, winch, tip, snapshots, and landscape with an exhaustive run;
/// `best` is the answer (its tip figure marks its J_a,min).
pub fn save_all(
    dir: &Path,
    run: &GaRun,
    best: &Individual,
    best_scenario: &Scenario,
    best_track: Option<&Track>,
    exhaustive: Option<(&Landscape, &GeneCoding, u32)>,
) -> Result<Vec<String>, PlotError> {
    let mut written = Vec::new();
    let global = exhaustive.and_then(|(l, _, c)| l.evaluations[c as usize].j_a_min_m);
    let mut put =
        |name: &str, result: Result<(), PlotError>| result.map(|()| written.push(name.to_string()));
    put("fitness", save(&dir.join("fitness"), &fitness(run, global)))?;
    let label = {
        let periods = best_scenario
            .as_swingup()
            .map_or(&[][..], |s| &s.winch.periods_s[..]);
        let periods: Vec<String> = periods.iter().map(|t| format!("{t:.3}")).collect();
        format!("T = {} s", periods.join(", "))
    };
    put(
        "winch",
        save(&dir.join("winch"), &winch(best_scenario, &label)),
    )?;
    if let Some(track) = best_track {
        let t_min = best.evaluation.t_at_min_s;
        put(
            "tip",
            save(&dir.join("tip"), &tip(best_scenario, track, t_min)),
        )?;
        let until = t_min.unwrap_or(best_scenario.duration_s()).max(0.2);
        put(
            "snapshots",
            save(
                &dir.join("snapshots"),
                &snapshots(best_scenario, track, until, 8),
            ),
        )?;
    }
    if let Some((l, coding, best)) = exhaustive {
        put(
            "landscape",
            save(&dir.join("landscape"), &landscape(l, coding, best)),
        )?;
    }
    Ok(written)
}
