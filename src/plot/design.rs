//! The design figure: each estimated parameter's predicted standard error
//! over the design axes.

use super::series::{Panel, Panels, Series};
use crate::sweep::design::{Design, Prediction};

/// One panel per estimated parameter, its standard error against the first
/// design axis, a line per combination of the other axes' values. None
/// without a design axis (one point: the terminal says it all).
pub fn standard_errors(design: &Design, predictions: &[Prediction]) -> Option<Panels> {
    let first = design.axes.first()?;
    let others = &design.axes[1..];
    // The other axes' values of each point, as a line's name.
    let line_of = |p: &Prediction| -> String {
        others
            .iter()
            .zip(&p.values[1..])
            .map(|(a, v)| design.point_label(a, *v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut lines: Vec<String> = Vec::new();
    for p in predictions {
        let name = line_of(p);
        if !lines.contains(&name) {
            lines.push(name);
        }
    }
    let panels = design
        .estimated
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let unit = e.axis.display_unit();
            Panel {
                x_range: None,
                y_label: if unit.is_empty() {
                    format!("SE of {}", design.estimate_name(e))
                } else {
                    format!("SE of {} [{unit}]", design.estimate_name(e))
                },
                series: lines
                    .iter()
                    .map(|line| {
                        let mut s = Series::new(
                            if line.is_empty() {
                                "predicted standard error".to_string()
                            } else {
                                line.clone()
                            },
                            predictions
                                .iter()
                                .filter(|p| line_of(p) == *line)
                                .map(|p| (p.values[0], p.standard_errors[i]))
                                .collect(),
                        );
                        s.dots = true;
                        s
                    })
                    .collect(),
                marks: Vec::new(),
            }
        })
        .collect();
    let unit = first.axis().unit();
    Some(Panels {
        title: format!(
            "Predicted standard errors at {} planned film{} (σ = {} mm per coordinate; Fisher information of the marker tracks)",
            design.films.len(),
            if design.films.len() == 1 { "" } else { "s" },
            design.noise_m * 1e3
        ),
        x_label: format!("{} [{unit}]", design.axis_column(first)),
        panels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TetherParams;
    use crate::scenario::{Scenario, ScenarioKind};
    use crate::sweep::Axis;
    use crate::sweep::design::{Estimated, PlannedFilm};
    use crate::sweep::parameter::Parameter;
    use crate::sweep::{AxisValues, ScopedAxis};

    #[test]
    fn a_panel_per_parameter_and_a_line_per_other_axis_value() {
        let film = PlannedFilm {
            name: "a".into(),
            tether: TetherParams::default(),
            scenario: Scenario::new(ScenarioKind::Drop, 0.6),
        };
        let design = Design {
            films: vec![film],
            axes: vec![
                ScopedAxis {
                    film: None,
                    values: AxisValues::new(
                        Axis::Parameter(Parameter::InitialAngleDeg),
                        vec![45.0, 90.0],
                    )
                    .unwrap(),
                },
                ScopedAxis {
                    film: None,
                    values: AxisValues::new(Axis::DurationS, vec![1.0, 2.0]).unwrap(),
                },
            ],
            estimated: vec![
                Estimated::shared(Axis::Damping),
                Estimated::shared(Axis::Drag),
            ],
            noise_m: 5e-4,
        };
        let predictions: Vec<Prediction> = design
            .points()
            .into_iter()
            .map(|values| Prediction {
                standard_errors: vec![values[0] + values[1], 1.0],
                values,
                correlation: 0.0,
                observations: 10,
            })
            .collect();
        let p = standard_errors(&design, &predictions).unwrap();
        assert_eq!(p.panels.len(), 2);
        assert_eq!(p.panels[0].y_label, "SE of damping_pa_s [Pa·s]");
        let d = &p.panels[0].series;
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].name, "duration_s = 1");
        assert_eq!(d[0].points, vec![(45.0, 46.0), (90.0, 91.0)]);
        assert_eq!(p.x_label, "initial_angle_deg [deg]");
        let mut none = design.clone();
        none.axes.clear();
        assert!(standard_errors(&none, &predictions).is_none());
    }
}
