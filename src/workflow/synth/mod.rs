//! A synthetic measured drop: the paper's drop on the reference solver with
//! seeded marker noise, a "measured" track with known truth (the shipped
//! dataset is one). Its inputs as either door gives them: `inputs`, each
//! named and described in `keywords`.

mod inputs;
mod keywords;

pub use inputs::SynthInputs;
pub use keywords::KEYWORDS;

use std::path::PathBuf;
use std::time::Instant;

use super::{WorkflowError, refuse_to_replace, usage};
use crate::camera::Camera;
use crate::dataset::{SynthSpec, synthesize};
use crate::io::PendingFile;
use crate::io::track::{TrackLayout, film_batch, write_batch};
use crate::metadata::{self, json};
use crate::track::Track;

/// A synthetic drop, as the user asked for it.
#[derive(Debug, Clone)]
pub struct SynthRequest {
    pub spec: SynthSpec,
    /// How the file is written: the model's frame by default, or as a
    /// tracker would (`[camera]`: unit, y axis, tilt, pin, clock).
    pub camera: Camera,
    /// Long (a row per frame and marker) or wide (a row per frame).
    pub layout: TrackLayout,
    /// The command line (or the Python call), recorded in the file.
    pub command: String,
    pub out: PathBuf,
    pub force: bool,
}

#[derive(Debug, Clone)]
pub struct SynthReport {
    pub track: Track,
    pub wall_s: f64,
}

pub fn run(request: &SynthRequest) -> Result<SynthReport, WorkflowError> {
    let spec = &request.spec;
    spec.validate()?;
    request.camera.validate()?;
    if request.camera.columns != crate::camera::Columns::default() {
        // The names are a tracker's; the file written here has its own,
        // which identify finds without them.
        return Err(crate::error::InputError::new(
            "[camera] columns",
            "given",
            "left out for dataset synth, which writes t, marker, s, x, y (long) or t, x0, y0, x1, y1, … (wide); keep them in the config that reads a tracker's file",
        )
        .into());
    }
    super::output_format(&request.out)?;
    refuse_to_replace(&request.out, request.force)?;
    let mut pending = PendingFile::create(&request.out).map_err(usage)?;
    let started = Instant::now();
    let (track, clean) =
        synthesize(spec).map_err(super::solver("simulating the synthetic drop"))?;
    let mut metadata = crate::io::track_metadata();
    metadata.insert(metadata::DATASET.into(), json(spec));
    metadata.insert(metadata::SOLVER_REPORT.into(), json(&clean.report));
    metadata.insert(metadata::COMMAND.into(), request.command.clone());
    if !request.camera.is_default() {
        metadata.insert(metadata::CAMERA.into(), json(&request.camera));
    }
    let batch = film_batch(
        &track,
        &request.camera,
        spec.scenario.pin_m(),
        request.layout,
        &metadata,
    );
    write_batch(&mut pending, &batch, &metadata)?;
    pending.commit()?;
    Ok(SynthReport {
        track,
        wall_s: started.elapsed().as_secs_f64(),
    })
}
