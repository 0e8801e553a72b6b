//! Swing-up design tables: the GA's generations, the exhaustive landscape
//! and the best individual's winch and tip motion.

use std::collections::BTreeMap;
use std::path::Path;

use super::IoError;
use super::table::{Column, write_columns};
use crate::ga::evaluate::Landscape;
use crate::ga::{Evaluation, GaRun, GeneCoding};
use crate::scenario::Scenario;
use crate::track::Track;

/// Columns shared by every table of chromosomes; `j_a_min_confirmed_m`
/// is a chromosome's J_a,min re-run at the confirmation tolerance
/// (`ga::confirm`), null where it was not re-run.
fn chromosome_columns<'a>(
    coding: &GeneCoding,
    rows: impl Iterator<Item = (u32, &'a Evaluation)> + Clone,
    confirmed: &BTreeMap<u32, Evaluation>,
) -> Vec<Column> {
    let period = |gene: usize| -> Vec<f64> {
        rows.clone()
            .map(|(c, _)| coding.periods_s(c)[gene])
            .collect()
    };
    vec![
        Column::i64("chromosome", rows.clone().map(|(c, _)| c as i64).collect()),
        Column::text(
            "bits",
            rows.clone().map(|(c, _)| coding.bit_string(c)).collect(),
        ),
        Column::f64("t1_s", "s", period(0)),
        Column::f64("t2_s", "s", period(1)),
        Column::f64("t3_s", "s", period(2)),
        Column::optional_f64(
            "j_a_min_m",
            "m",
            rows.clone().map(|(_, e)| e.j_a_min_m).collect(),
        ),
        Column::optional_f64(
            "t_at_min_s",
            "s",
            rows.clone().map(|(_, e)| e.t_at_min_s).collect(),
        ),
        Column::optional_f64(
            "j_a_min_confirmed_m",
            "m",
            rows.clone()
                .map(|(c, _)| confirmed.get(&c).and_then(|e| e.j_a_min_m))
                .collect(),
        ),
        Column::text(
            "status",
            rows.map(|(_, e)| e.status.name().to_string()).collect(),
        ),
    ]
}

/// `generations.parquet`: one row per individual of every generation, with
/// `generation`, `individual` (0 is the previous generation's elite),
/// `chromosome`, `bits`, `t1_s`, `t2_s`, `t3_s`, `j_a_min_m`, `t_at_min_s`
/// (the search's; null unless ok), `j_a_min_confirmed_m` and `status`.
pub fn write_generations(
    path: &Path,
    run: &GaRun,
    coding: &GeneCoding,
    confirmed: &BTreeMap<u32, Evaluation>,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let rows: Vec<(usize, usize, u32, &Evaluation)> = run
        .generations
        .iter()
        .flat_map(|g| {
            g.individuals
                .iter()
                .enumerate()
                .map(move |(i, ind)| (g.index, i, ind.chromosome, &ind.evaluation))
        })
        .collect();
    let mut columns = vec![
        Column::i32("generation", rows.iter().map(|r| r.0 as i32).collect()),
        Column::i32("individual", rows.iter().map(|r| r.1 as i32).collect()),
    ];
    columns.extend(chromosome_columns(
        coding,
        rows.iter().map(|&(_, _, c, e)| (c, e)),
        confirmed,
    ));
    write_columns(path, columns, metadata)
}

/// `landscape.parquet`: every chromosome, in chromosome order, with the
/// columns of the generations table (less generation and individual) and
/// `rank` by the search's J_a,min (1 = the fittest; ties share a rank).
pub fn write_landscape(
    path: &Path,
    landscape: &Landscape,
    coding: &GeneCoding,
    confirmed: &BTreeMap<u32, Evaluation>,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let mut order: Vec<usize> = (0..landscape.evaluations.len()).collect();
    order.sort_by(|&a, &b| {
        landscape.evaluations[a]
            .fitness()
            .total_cmp(&landscape.evaluations[b].fitness())
    });
    let mut rank = vec![0i64; order.len()];
    for (position, &c) in order.iter().enumerate() {
        let tied = position > 0
            && landscape.evaluations[order[position - 1]].fitness()
                == landscape.evaluations[c].fitness();
        rank[c] = if tied {
            rank[order[position - 1]]
        } else {
            position as i64 + 1
        };
    }
    let mut columns = chromosome_columns(
        coding,
        landscape
            .evaluations
            .iter()
            .enumerate()
            .map(|(c, e)| (c as u32, e)),
        confirmed,
    );
    columns.push(Column::i64("rank", rank));
    write_columns(path, columns, metadata)
}

/// `best_motion.parquet`: at every frame of `track`, the winch's position,
/// velocity and acceleration and the tip's position (the last marker).
pub fn write_motion(
    path: &Path,
    scenario: &Scenario,
    track: &Track,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let winch = scenario.motion();
    let times = &track.times_s;
    let tip = track.markers() - 1;
    let each = |f: &dyn Fn(usize, f64) -> f64| -> Vec<f64> {
        times.iter().enumerate().map(|(i, &t)| f(i, t)).collect()
    };
    write_columns(
        path,
        vec![
            Column::f64("t", "s", times.clone()),
            Column::f64("winch_x_m", "m", each(&|_, t| winch.position(t)[0])),
            Column::f64("winch_y_m", "m", each(&|_, t| winch.position(t)[1])),
            Column::f64(
                "winch_velocity_m_s",
                "m/s",
                each(&|_, t| winch.velocity(t)[0]),
            ),
            Column::f64(
                "winch_acceleration_m_s2",
                "m/s^2",
                each(&|_, t| winch.acceleration(t)[0]),
            ),
            Column::f64("tip_x_m", "m", each(&|i, _| track.at(i, tip)[0])),
            Column::f64("tip_y_m", "m", each(&|i, _| track.at(i, tip)[1])),
        ],
        metadata,
    )
}
