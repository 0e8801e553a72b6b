//! A run's nodal state as a table: one row per frame and node, each
//! node's absolute coordinates and their rates (docs/model.md §2), for a
//! user who wants the whole state (to restart from, to compare with
//! another ANCF code) rather than the markers.

use super::table::Column;
use crate::metadata::{self, Metadata};
use crate::model::tether::NODE_DOFS;
use crate::scenario::NodalStates;

/// The columns and their units, in order.
const UNITS: [(&str, &str); 11] = [
    ("t", "s"),
    ("node", "index"),
    ("s", "m"),
    ("x", "m"),
    ("y", "m"),
    ("slope_x", "1"),
    ("slope_y", "1"),
    ("vx", "m/s"),
    ("vy", "m/s"),
    ("slope_rate_x", "1/s"),
    ("slope_rate_y", "1/s"),
];

/// The table's metadata: `base` with the columns' units.
pub fn state_metadata(base: &Metadata) -> Metadata {
    let mut m = base.clone();
    let units: serde_json::Map<String, serde_json::Value> = UNITS
        .iter()
        .map(|(c, u)| (c.to_string(), serde_json::Value::from(*u)))
        .collect();
    m.insert(
        metadata::UNITS.into(),
        serde_json::Value::Object(units).to_string(),
    );
    m
}

/// The table's columns: for each frame, each node's t, index, arc
/// length, x, y, slopes ∂x/∂s, ∂y/∂s and their rates.
pub fn state_columns(states: &NodalStates) -> Vec<Column> {
    let nodes = states.node_arc_lengths_m.len();
    let rows = states.times_s.len() * nodes;
    let mut t = Vec::with_capacity(rows);
    let mut node = Vec::with_capacity(rows);
    let mut s = Vec::with_capacity(rows);
    let mut values: [Vec<f64>; 8] = std::array::from_fn(|_| Vec::with_capacity(rows));
    for (f, &time) in states.times_s.iter().enumerate() {
        for (k, &arc) in states.node_arc_lengths_m.iter().enumerate() {
            t.push(time);
            node.push(k as i32);
            s.push(arc);
            for d in 0..NODE_DOFS {
                values[d].push(states.q[f][NODE_DOFS * k + d]);
                values[NODE_DOFS + d].push(states.v[f][NODE_DOFS * k + d]);
            }
        }
    }
    let mut columns = vec![
        Column::f64("t", UNITS[0].1, t),
        Column::i32("node", node),
        Column::f64("s", UNITS[2].1, s),
    ];
    // The eight coordinates and rates, named and united as UNITS lists them.
    columns.extend(
        UNITS[3..]
            .iter()
            .zip(values)
            .map(|(&(name, unit), v)| Column::f64(name, unit, v)),
    );
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_one_frame_and_node_in_the_states_order() {
        // Two nodes, two frames: q's value at (frame f, node k, dof d) is
        // 100 f + 10 k + d, v's its negative.
        let frame = |f: usize| -> Vec<f64> {
            (0..8)
                .map(|i| (100 * f + 10 * (i / 4) + i % 4) as f64)
                .collect()
        };
        let states = NodalStates {
            times_s: vec![0.0, 0.5],
            node_arc_lengths_m: vec![0.0, 0.6],
            q: vec![frame(0), frame(1)],
            v: vec![
                frame(0).iter().map(|x| -x).collect(),
                frame(1).iter().map(|x| -x).collect(),
            ],
        };
        let columns = state_columns(&states);
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_ref()).collect();
        assert_eq!(names, UNITS.map(|(c, _)| c));
        let f64s = |i: usize| {
            columns[i]
                .values
                .as_any()
                .downcast_ref::<arrow::array::Float64Array>()
                .unwrap()
                .values()
                .to_vec()
        };
        assert_eq!(f64s(0), [0.0, 0.0, 0.5, 0.5]);
        assert_eq!(f64s(2), [0.0, 0.6, 0.0, 0.6]);
        // Frame 1, node 1: x = 110, slope_y = 113, vx = −110.
        assert_eq!(f64s(3)[3], 110.0);
        assert_eq!(f64s(6)[3], 113.0);
        assert_eq!(f64s(7)[3], -110.0);
        let units = state_metadata(&Metadata::new());
        assert!(units[metadata::UNITS].contains(r#""slope_rate_x":"1/s""#));
    }
}
