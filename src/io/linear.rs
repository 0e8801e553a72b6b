//! Tables of the linearized model (`tether-sweep linearize`): modes, mode
//! shapes, state-space matrices and the frequency response, each a Parquet
//! file with units in the field metadata and provenance in the footer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::IoError;
use super::table::{Column, write_columns};
use crate::model::Tether;
use crate::model::tether::{NODE_DOFS, PRESCRIBED_DOFS};
use crate::solver::linear_model::{OUTPUTS, StateSpace};
use crate::solver::modal::Mode;

/// Node-position part of a mode shape, normalised so the largest nodal
/// displacement is 1 and the tip moves towards +x: (node, dx, dy).
pub fn nodal_shape(tether: &Tether, mode: &Mode) -> Vec<(usize, f64, f64)> {
    let mut nodes: Vec<(usize, f64, f64)> = (0..=tether.elements())
        .map(|i| {
            let at = |k: usize| {
                (NODE_DOFS * i + k)
                    .checked_sub(PRESCRIBED_DOFS)
                    .map_or(0.0, |d| mode.shape[d])
            };
            (i, at(0), at(1))
        })
        .collect();
    let largest = nodes.iter().fold(0.0f64, |m, &(_, x, y)| m.max(x.hypot(y)));
    let tip = nodes.last().expect("at least two nodes");
    let sign = if tip.1 < 0.0 || (tip.1 == 0.0 && tip.2 < 0.0) {
        -1.0
    } else {
        1.0
    };
    let scale = if largest > 0.0 { sign / largest } else { 0.0 };
    for n in &mut nodes {
        n.1 *= scale;
        n.2 *= scale;
    }
    nodes
}

/// File names written by `write_linear_analysis`, in order.
pub const FILES: [&str; 4] = [
    "modes.parquet",
    "mode_shapes.parquet",
    "statespace.parquet",
    "frequency_response.parquet",
];

/// Writes the four tables into `dir`; returns their paths.
pub fn write_linear_analysis(
    dir: &Path,
    tether: &Tether,
    modes: &[Mode],
    state_space: &StateSpace,
    frequencies_hz: &[f64],
    responses: &[[nalgebra::Complex<f64>; 2]],
    metadata: &BTreeMap<String, String>,
) -> Result<Vec<PathBuf>, IoError> {
    let paths: Vec<PathBuf> = FILES.iter().map(|f| dir.join(f)).collect();
    write_columns(&paths[0], mode_columns(modes), metadata)?;
    write_columns(&paths[1], mode_shape_columns(tether, modes), metadata)?;
    let mut state_space_metadata = metadata.clone();
    state_space_metadata.insert(
        crate::metadata::STATESPACE.into(),
        state_space_description(state_space),
    );
    write_columns(
        &paths[2],
        state_space_columns(state_space),
        &state_space_metadata,
    )?;
    write_columns(
        &paths[3],
        response_columns(frequencies_hz, responses),
        metadata,
    )?;
    Ok(paths)
}

const TWO_PI: f64 = 2.0 * std::f64::consts::PI;

/// modes.parquet: each mode's frequency and damping ratio.
fn mode_columns(modes: &[Mode]) -> Vec<Column> {
    vec![
        Column::i32("mode", (1..=modes.len() as i32).collect()),
        Column::f64(
            "omega_rad_s",
            "rad/s",
            modes.iter().map(|m| m.omega_rad_s).collect(),
        ),
        Column::f64(
            "frequency_hz",
            "Hz",
            modes.iter().map(|m| m.omega_rad_s / TWO_PI).collect(),
        ),
        Column::f64(
            "damping_ratio",
            "1",
            modes.iter().map(|m| m.damping_ratio).collect(),
        ),
    ]
}

/// mode_shapes.parquet: each mode's nodal displacement, long format.
fn mode_shape_columns(tether: &Tether, modes: &[Mode]) -> Vec<Column> {
    let le = tether.kernel().length_m;
    let (mut mode_col, mut node_col, mut s_col, mut dx_col, mut dy_col) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (k, mode) in modes.iter().enumerate() {
        for (node, dx, dy) in nodal_shape(tether, mode) {
            mode_col.push(k as i32 + 1);
            node_col.push(node as i32);
            s_col.push(node as f64 * le);
            dx_col.push(dx);
            dy_col.push(dy);
        }
    }
    vec![
        Column::i32("mode", mode_col),
        Column::i32("node", node_col),
        Column::f64("s", "m", s_col),
        Column::f64("dx", "1", dx_col),
        Column::f64("dy", "1", dy_col),
    ]
}

/// What statespace.parquet's entries mean, for its metadata.
fn state_space_description(state_space: &StateSpace) -> String {
    serde_json::json!({
        "form": "dx/dt = A x + B u, y = C x + D u",
        "input": "u = winch position deviation x_0 [m]",
        "states": state_space.state_names,
        "state_definition": "x1 = dq_d + M^-1 m_u u (dynamic coordinates, m for positions and 1 for slopes, shifted by the winch's inertial coupling); x2 = dx1/dt - M^-1 (C M^-1 m_u - c_u) u",
        "outputs": ["tip_x deviation [m]", "tip_y deviation [m]"],
        "shapes": {
            "A": [state_space.a.nrows(), state_space.a.ncols()],
            "B": [state_space.b.nrows(), state_space.b.ncols()],
            "C": [state_space.c.nrows(), state_space.c.ncols()],
            "D": [state_space.d.nrows(), state_space.d.ncols()],
        },
        "storage": "nonzero entries only, 0-based row and col",
    })
    .to_string()
}

/// statespace.parquet: the nonzero entries of A, B, C and D.
fn state_space_columns(state_space: &StateSpace) -> Vec<Column> {
    let (mut names, mut rows, mut cols, mut values) = (vec![], vec![], vec![], vec![]);
    for (name, m) in [
        ("A", &state_space.a),
        ("B", &state_space.b),
        ("C", &state_space.c),
        ("D", &state_space.d),
    ] {
        for j in 0..m.ncols() {
            for i in 0..m.nrows() {
                if m[(i, j)] != 0.0 {
                    names.push(name.to_string());
                    rows.push(i as i32);
                    cols.push(j as i32);
                    values.push(m[(i, j)]);
                }
            }
        }
    }
    vec![
        Column::text("matrix", names),
        Column::i32("row", rows),
        Column::i32("col", cols),
        Column::f64("value", "mixed (see metadata)", values),
    ]
}

/// frequency_response.parquet: each output's gain at each frequency.
fn response_columns(
    frequencies_hz: &[f64],
    responses: &[[nalgebra::Complex<f64>; 2]],
) -> Vec<Column> {
    let (mut f, mut w, mut out, mut mag, mut phase, mut re, mut im) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for (&hz, gains) in frequencies_hz.iter().zip(responses) {
        for (k, g) in gains.iter().enumerate() {
            f.push(hz);
            w.push(hz * TWO_PI);
            out.push(OUTPUTS[k].to_string());
            mag.push(g.norm());
            phase.push(g.arg().to_degrees());
            re.push(g.re);
            im.push(g.im);
        }
    }
    vec![
        Column::f64("frequency_hz", "Hz", f),
        Column::f64("omega_rad_s", "rad/s", w),
        Column::text("output", out),
        Column::f64("magnitude", "m/m", mag),
        Column::f64("phase_deg", "deg", phase),
        Column::f64("real", "m/m", re),
        Column::f64("imag", "m/m", im),
    ]
}
