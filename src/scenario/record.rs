//! The flat form a scenario is written and read in (output metadata):
//! the keys of a config's `[settings]`, each present only where the
//! experiment has it. Records written before the frames and the
//! experiments' settings were types of their own held every key; they
//! read back as what they meant (a film's times win over the interval and
//! duration beside them; the other experiment's keys are left unread).

use serde::{Deserialize, Serialize};

use super::{DropSettings, Experiment, Frames, Scenario, ScenarioKind, SwingupSettings};
use crate::scenario::WinchMotion;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScenarioRecord {
    kind: ScenarioKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    duration_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame_interval_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame_times_s: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    release_time_s: Option<f64>,
    marker_arc_lengths_m: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pin_m: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    initial_angle_deg: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    winch: Option<WinchMotion>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    objective_interval_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    objective_weights: Option<[f64; 2]>,
}

impl From<Scenario> for ScenarioRecord {
    fn from(scenario: Scenario) -> Self {
        let (duration_s, frame_interval_s, frame_times_s) = match scenario.frames {
            Frames::Every {
                interval_s,
                duration_s,
            } => (Some(duration_s), Some(interval_s), None),
            // A film's interval is its times' median unless it is a
            // release group's shared simulation, which keeps its film's.
            Frames::At {
                times_s,
                interval_s,
            } => (None, Some(interval_s), Some(times_s)),
        };
        let mut record = ScenarioRecord {
            kind: ScenarioKind::Drop,
            duration_s,
            frame_interval_s,
            frame_times_s,
            release_time_s: None,
            marker_arc_lengths_m: scenario.marker_arc_lengths_m,
            pin_m: None,
            initial_angle_deg: None,
            winch: None,
            objective_interval_s: None,
            objective_weights: None,
        };
        match scenario.experiment {
            Experiment::Drop(drop) => {
                record.release_time_s = Some(drop.release_time_s);
                record.pin_m = Some(drop.pin_m);
                record.initial_angle_deg = Some(drop.initial_angle_deg);
            }
            Experiment::Swingup(swingup) => {
                record.kind = ScenarioKind::Swingup;
                record.winch = Some(swingup.winch);
                record.objective_interval_s = Some(swingup.objective_interval_s);
                record.objective_weights = Some(swingup.objective_weights);
            }
        }
        record
    }
}

impl TryFrom<ScenarioRecord> for Scenario {
    type Error = String;

    fn try_from(record: ScenarioRecord) -> Result<Self, String> {
        let paper = Scenario::new(record.kind, 1.0);
        let frames = match (record.frame_times_s, record.duration_s) {
            (Some(times_s), _) => match record.frame_interval_s {
                Some(interval_s) if record.duration_s.is_none() => Frames::At {
                    times_s,
                    interval_s,
                },
                // Older records carried a duration and a meaningless
                // interval beside a film's times.
                _ => Frames::film(times_s),
            },
            (None, Some(duration_s)) => Frames::Every {
                interval_s: record.frame_interval_s.unwrap_or(paper.frame_interval_s()),
                duration_s,
            },
            (None, None) => return Err("a scenario needs duration_s or frame_times_s".into()),
        };
        let experiment = match record.kind {
            ScenarioKind::Drop => {
                let paper = DropSettings::paper();
                Experiment::Drop(DropSettings {
                    pin_m: record.pin_m.unwrap_or(paper.pin_m),
                    initial_angle_deg: record.initial_angle_deg.unwrap_or(paper.initial_angle_deg),
                    release_time_s: record.release_time_s.unwrap_or(paper.release_time_s),
                })
            }
            ScenarioKind::Swingup => {
                let paper = SwingupSettings::paper();
                Experiment::Swingup(SwingupSettings {
                    winch: record.winch.unwrap_or(paper.winch),
                    objective_interval_s: record
                        .objective_interval_s
                        .unwrap_or(paper.objective_interval_s),
                    objective_weights: record.objective_weights.unwrap_or(paper.objective_weights),
                })
            }
        };
        Ok(Scenario {
            experiment,
            frames,
            marker_arc_lengths_m: record.marker_arc_lengths_m,
        })
    }
}
