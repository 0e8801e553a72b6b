//! The pin where the tracker saw it: a film whose camera gives no pin,
//! and whose marker 0 sits at arc length 0, has its pin taken from that
//! marker's median position.

use super::{FilmContext, WorkflowError, measured_track_error};
use crate::error::InputError;
use crate::io::track::LoadedFilm;

/// A pin taken from the film: the marker it tracks at arc length 0.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct TrackedPin {
    /// Its median position, in the file's coordinates: what `[camera] pin`
    /// would say.
    pub pin_file: [f64; 2],
    /// The marker's RMS distance from it over the frames \[m\].
    pub wander_m: f64,
}

/// A tracked pin may wander this fraction of the tether's length (RMS)
/// around its median and still be the pin: 6 mm on the paper's 0.6 m
/// tether, over ten times a tracker's typical noise, where a marker on the
/// swinging tether wanders by tens of percent.
pub const PIN_WANDER_OF_LENGTH: f64 = 0.01;

/// Where a `[camera]` table gives no pin, the film tracks marker 0 and
/// marker 0 is at arc length 0 (the config's or the file's arc lengths,
/// or the default markers), that marker's median position is the pin: it
/// is written into the film's camera ([`check`](super::check)), as if the user had typed
/// it, so that every table, the best fit's file-frame columns and
/// `summarize` use it. Refused, naming `[camera] pin`, when the marker wanders more
/// than [`PIN_WANDER_OF_LENGTH`] of the length. Nothing without a camera
/// table (the file is then in the model's frame), with a pin given, or
/// with a pin axis.
pub fn take_pin_from_film(
    context: &FilmContext<'_>,
    loaded: &LoadedFilm,
) -> Result<Option<TrackedPin>, WorkflowError> {
    let pin_axis = context.grid.parameters().any(|(p, _)| {
        matches!(
            p,
            crate::sweep::Parameter::PinXM | crate::sweep::Parameter::PinYM
        )
    });
    let camera = &context.film.camera;
    if camera.is_default() || camera.pin.is_some() || pin_axis {
        return Ok(None);
    }
    camera.validate()?;
    let measured = loaded
        .read(camera, [0.0, 0.0])
        .map_err(measured_track_error)?;
    let first_arc_m = context
        .film
        .marker_arc_lengths_m
        .as_ref()
        .or(measured.marker_arc_lengths_m.as_ref())
        .and_then(|a| a.first().copied())
        .unwrap_or(0.0);
    let Some((place_m, wander_m)) = measured.resting_place(0).filter(|_| first_arc_m == 0.0) else {
        return Ok(None);
    };
    let length_m = context.base.length_m;
    if wander_m > PIN_WANDER_OF_LENGTH * length_m {
        return Err(InputError::new(
            "[camera] pin",
            "not given",
            format!(
                "the pin where the tracker saw it: the film's marker 0, at arc length 0, wanders {:.1} mm RMS around its median, more than {} % of the tether's {length_m} m, so it is no pin to take the pin from",
                1e3 * wander_m,
                100.0 * PIN_WANDER_OF_LENGTH
            ),
        )
        .into());
    }
    let pin_file = camera.map([0.0, 0.0]).to_file(place_m);
    Ok(Some(TrackedPin { pin_file, wander_m }))
}
