//! What the run's tables record in their metadata, and how it reads back.

use serde::Serialize;

use super::request::IdentifyRequest;
use crate::camera::Camera;
use crate::engine::EngineNames;
use crate::engine::choice::Choice;
use crate::io::IoError;
use crate::metadata::{self, Metadata, json};
use crate::model::TetherParams;
use crate::scenario::SolverSettings;
use crate::sweep::{AxisValues, Grid};
use crate::workflow::WorkflowError;
use crate::workflow::film::CheckedFilm;
use std::path::Path;

/// A film's record in the metadata of several films ([`metadata::FILMS`]).
#[derive(Serialize)]
pub(super) struct FilmRecord<'a> {
    pub(super) name: &'a str,
    pub(super) measured: String,
    pub(super) measured_sha256: &'a str,
    pub(super) scenario: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) camera: Option<&'a Camera>,
    pub(super) own: &'a [AxisValues],
    pub(super) observations: usize,
    /// Its lowest J_e over the grid \[m²\], noise estimate \[m\] and weight
    /// in the joint J_e ([`FilmWeight`]).
    pub(super) j_min_m2: f64,
    pub(super) sigma_m: f64,
    pub(super) weight: f64,
}

/// What every table of the run records: the grid, the tether, the solver
/// and the engine (a single film's: its film too).
pub(super) fn run_metadata(
    request: &IdentifyRequest,
    settings: &SolverSettings,
    choice: &Choice,
    films: &[CheckedFilm],
) -> Metadata {
    let mut metadata = metadata::base();
    metadata.insert(metadata::GRID.into(), json(&request.grid));
    if let Some(axes) = &request.surface_axes {
        metadata.insert(metadata::SURFACE_AXES.into(), json(axes));
    }
    if let Some(s) = &request.shard {
        metadata.insert(metadata::SHARD.into(), s.to_string());
    }
    metadata.insert(
        metadata::TETHER.into(),
        sweep_tether_json(&request.base, &request.grid),
    );
    metadata.insert(metadata::SOLVER_SETTINGS.into(), json(settings));
    crate::workflow::record_engine(&mut metadata, &request.engine, choice);
    if let [film] = films {
        record_film(&mut metadata, film);
    }
    metadata
}

/// A film's file, its hash, camera, experiment and noise in a table's
/// metadata: a single film's tables', or one film's shard part.
pub(super) fn record_film(metadata: &mut Metadata, f: &CheckedFilm) {
    metadata.insert(metadata::MEASURED.into(), f.film.measured.to_string());
    metadata.insert(metadata::MEASURED_SHA256.into(), f.measured_sha256.clone());
    if !f.film.camera.is_default() {
        metadata.insert(metadata::CAMERA.into(), json(&f.film.camera));
    }
    metadata.insert(metadata::SCENARIO.into(), f.scenario.record());
    if let Some(n) = &f.noise {
        metadata.insert(metadata::NOISE.into(), json(n));
    }
}

/// The tether every candidate shares, as metadata: every field the grid
/// sweeps (n, D, C_D and any parameter axis over the tether) null rather
/// than the base's value, which no candidate has.
pub fn sweep_tether_json(base: &TetherParams, grid: &Grid) -> String {
    let mut value = serde_json::to_value(base).expect("plain data serializes");
    let fields = value.as_object_mut().expect("a struct");
    for axis in grid.axes() {
        if let Some(field) = fields.get_mut(axis.axis.column()) {
            *field = serde_json::Value::Null;
        }
    }
    value.to_string()
}

/// The base tether back from [`sweep_tether_json`] (the swept fields at
/// their defaults: the grid sets them per candidate).
pub fn sweep_tether(text: &str) -> Result<TetherParams, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(text)?;
    let defaults = serde_json::to_value(TetherParams::default()).expect("plain data serializes");
    if let Some(fields) = value.as_object_mut() {
        for (key, field) in fields.iter_mut().filter(|(_, v)| v.is_null()) {
            *field = defaults[key.as_str()].clone();
        }
    }
    serde_json::from_value(value)
}

/// The engine names of a results table, from its metadata.
pub fn engine_names(metadata: &Metadata) -> Option<EngineNames> {
    serde_json::from_str(metadata.get(metadata::ENGINE)?).ok()
}

/// Removes the results table a `--force` run replaces (with its CSV twin),
/// as its output phase begins: from here until the new table is written,
/// the directory holds no complete set, and `--resume` finishes it from
/// the saved chunks. Before, a kill leaves the previous set whole.
pub(crate) fn remove_previous_table(table_path: &Path) -> Result<(), WorkflowError> {
    for path in [table_path.to_path_buf(), table_path.with_extension("csv")] {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(IoError::Write { path, error: e }.into());
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Axis;

    #[test]
    fn a_sweeps_tether_record_has_no_placeholder_axes_and_reads_back() {
        let base = TetherParams {
            tip_mass_kg: 0.01,
            length_m: 0.7,
            ..TetherParams::default()
        };
        let grid = Grid::parse("10", "0", "0.8").unwrap();
        let text = sweep_tether_json(&base, &grid);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        for axis in Axis::FIXED {
            assert!(value[axis.column()].is_null(), "{axis} in {text}");
        }
        assert_eq!(value["length_m"], 0.7);
        assert_eq!(sweep_tether(&text).unwrap(), base);
        // A swept length is recorded as swept, not as the base's.
        let swept = grid.with_axis("length_m", "0.6,0.8").unwrap();
        let text = sweep_tether_json(&base, &swept);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(value["length_m"].is_null(), "{text}");
        assert_eq!(value["tip_mass_kg"], 0.01);
    }
}
