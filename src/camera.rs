//! What the camera saw: a tracker's coordinates and clock, and the map
//! into the model's frame (docs/conventions.md, "The model's frame and the
//! camera").
//!
//! The model's frame is metres, x to the right, y up, gravity along −y,
//! the pin at P0. A tracker writes p in its own frame: a unit (m, mm, px
//! with a scale s in metres per unit), y up or down, its origin anywhere,
//! the camera turned by a small angle φ from the plumb line. With F =
//! diag(1, −1) when the file's y points down and R(φ) the rotation that
//! turns the true downward vertical into the file's (un-flipped) `down`:
//!
//! ```text
//! model = P0 + R(φ)ᵀ F s (p − p_pin)
//! ```
//!
//! Without `pin`, the file's origin is the model's origin (p_pin = 0 and P0
//! left out), so a file already in the model's frame needs no `[camera]`.

use serde::{Deserialize, Serialize};

use crate::error::InputError;

/// The unit of the file's lengths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LengthUnit {
    #[default]
    M,
    Mm,
    /// Pixels: `metres_per_unit` gives the scale.
    Px,
}

impl LengthUnit {
    /// As the TOML writes it, and as the tables' unit metadata.
    pub fn name(self) -> &'static str {
        match self {
            LengthUnit::M => "m",
            LengthUnit::Mm => "mm",
            LengthUnit::Px => "px",
        }
    }
}

/// Where the file's y axis points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum YAxis {
    #[default]
    Up,
    /// An image's rows: y grows downward from the top-left corner.
    Down,
}

/// The unit of the file's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    #[default]
    S,
    Ms,
    /// Frame numbers: `frames_per_second` gives the clock.
    Frame,
}

impl TimeUnit {
    /// As the TOML writes it, and as the tables' unit metadata.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Frame => "frame",
        }
    }
}

/// A file's column names where they are not the reader's guess. In a long
/// file `x` and `y` are one column each beside `marker`; in a wide file
/// they list one column per marker, the i-th pair being marker i.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Columns {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<OneOrMany>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<OneOrMany>,
}

/// One column name (a long file's) or one per marker (a wide file's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The `[camera]` table of an experiment's TOML: how the measured file's
/// numbers become the model's. The default is the model's own frame.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Camera {
    #[serde(default)]
    pub unit: LengthUnit,
    /// Metres per file unit; required for px, implied by m and mm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metres_per_unit: Option<f64>,
    #[serde(default)]
    pub y_axis: YAxis,
    /// The direction of gravity in the file's coordinates (a plumb line,
    /// or the hanging tether); default straight down in the file's frame.
    /// Absorbs a camera that is not level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<[f64; 2]>,
    /// The pin where the tracker saw it, in the file's units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<[f64; 2]>,
    #[serde(default)]
    pub time_unit: TimeUnit,
    /// Required for `time_unit = "frame"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames_per_second: Option<f64>,
    /// A tracker's lost-marker code (often `[0, 0]`), read as missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<[f64; 2]>,
    /// The first marker's number in the file (0 or 1); the marker at the
    /// pin's end of the tether is the model's marker 0.
    #[serde(default)]
    pub first_marker: usize,
    #[serde(default, skip_serializing_if = "is_default")]
    pub columns: Columns,
    /// The tracker's noise on one coordinate, in the file's unit, where the
    /// user knows it: it replaces the film's own estimate in the
    /// goodness-of-fit test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<f64>,
}

fn is_default(columns: &Columns) -> bool {
    *columns == Columns::default()
}

/// A camera turned further than this from the plumb line is a mistake in
/// `y_axis` or `down` (an upside-down frame), not a tilted tripod.
pub const MAX_TILT_DEG: f64 = 45.0;

/// The field name of a `[camera]` key in errors.
fn key(name: &str) -> String {
    format!("[camera] {name}")
}

impl Camera {
    /// True when no key is set: a file in the model's frame and clock, its
    /// usual columns, no lost code, markers from 0. Any other camera is
    /// recorded in the metadata, so that `summarize` reads the file the
    /// shards read (named columns included).
    pub fn is_default(&self) -> bool {
        *self == Camera::default()
    }

    pub fn validate(&self) -> Result<(), InputError> {
        self.validate_units()?;
        self.validate_points()?;
        self.validate_columns()
    }

    /// The scale and the clock: each unit with its own number.
    fn validate_units(&self) -> Result<(), InputError> {
        match (self.unit, self.metres_per_unit) {
            (LengthUnit::Px, None) => {
                return Err(InputError::new(
                    key("metres_per_unit"),
                    "not given",
                    "the scale of unit = \"px\" in metres per pixel (a length known in metres over its length in pixels)",
                ));
            }
            (LengthUnit::Px, Some(s)) if !(s.is_finite() && s > 0.0) => {
                return Err(InputError::new(
                    key("metres_per_unit"),
                    s,
                    "a finite number > 0 (metres per pixel)",
                ));
            }
            (LengthUnit::M | LengthUnit::Mm, Some(s)) => {
                return Err(InputError::new(
                    key("metres_per_unit"),
                    s,
                    "given only with unit = \"px\" (m and mm carry their own scale)",
                ));
            }
            _ => {}
        }
        match (self.time_unit, self.frames_per_second) {
            (TimeUnit::Frame, None) => {
                return Err(InputError::new(
                    key("frames_per_second"),
                    "not given",
                    "the frame rate of time_unit = \"frame\" (frames per second)",
                ));
            }
            (TimeUnit::Frame, Some(f)) if !(f.is_finite() && f > 0.0) => {
                return Err(InputError::new(
                    key("frames_per_second"),
                    f,
                    "a finite number > 0",
                ));
            }
            (TimeUnit::S | TimeUnit::Ms, Some(f)) => {
                return Err(InputError::new(
                    key("frames_per_second"),
                    f,
                    "given only with time_unit = \"frame\"",
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// The points, the first marker's number and the tilt.
    fn validate_points(&self) -> Result<(), InputError> {
        for (name, point) in [("pin", self.pin), ("lost", self.lost), ("down", self.down)] {
            if let Some(p) = point
                && !(p[0].is_finite() && p[1].is_finite())
            {
                return Err(InputError::new(
                    key(name),
                    format!("[{}, {}]", p[0], p[1]),
                    "two finite numbers",
                ));
            }
        }
        if let Some(noise) = self.noise
            && !(noise.is_finite() && noise > 0.0)
        {
            return Err(InputError::new(
                key("noise"),
                noise,
                "a finite number > 0: the tracker's noise on one coordinate, in the file's unit",
            ));
        }
        if self.first_marker > 1 {
            return Err(InputError::new(
                key("first_marker"),
                self.first_marker,
                "0 or 1: the number the file gives the marker at the pin's end",
            ));
        }
        if let Some(down) = self.down {
            if down[0] == 0.0 && down[1] == 0.0 {
                return Err(InputError::new(
                    key("down"),
                    "[0, 0]",
                    "the direction of gravity in the file's coordinates, not zero",
                ));
            }
            let tilt = self.tilt_rad().to_degrees();
            if tilt.abs() > MAX_TILT_DEG {
                return Err(InputError::new(
                    key("down"),
                    format!("[{}, {}]", down[0], down[1]),
                    format!(
                        "within {MAX_TILT_DEG}° of straight down in the file's frame (it is {tilt:.1}° off with y_axis = \"{}\"): in an image whose y axis points down, down is [0, 1]",
                        match self.y_axis {
                            YAxis::Up => "up",
                            YAxis::Down => "down",
                        }
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Named columns: one x and one y, or as many of each.
    fn validate_columns(&self) -> Result<(), InputError> {
        let columns = &self.columns;
        if let (Some(x), Some(y)) = (&columns.x, &columns.y) {
            let count = |c: &OneOrMany| match c {
                OneOrMany::One(_) => None,
                OneOrMany::Many(v) => Some(v.len()),
            };
            if count(x) != count(y) || count(x) == Some(0) {
                return Err(InputError::new(
                    key("columns"),
                    "x and y of different shapes",
                    "one column each (a long file's x and y beside its marker column), or as many x columns as y columns, one pair per marker (a wide file's)",
                ));
            }
        } else if columns.x.is_some() != columns.y.is_some() {
            return Err(InputError::new(
                key("columns"),
                "x or y alone",
                "both x and y",
            ));
        }
        Ok(())
    }

    /// Metres per file unit.
    pub fn scale_m(&self) -> f64 {
        match self.unit {
            LengthUnit::M => 1.0,
            LengthUnit::Mm => 1e-3,
            LengthUnit::Px => self.metres_per_unit.unwrap_or(f64::NAN),
        }
    }

    /// `noise` in metres.
    pub fn declared_noise_m(&self) -> Option<f64> {
        self.noise.map(|n| n * self.scale_m())
    }

    /// y's sign from the file's frame to the model's: −1 when the file's y
    /// points down.
    fn flip(&self) -> f64 {
        match self.y_axis {
            YAxis::Up => 1.0,
            YAxis::Down => -1.0,
        }
    }

    /// φ: the angle from the true downward vertical to the file's `down`,
    /// after the flip, counter-clockwise positive \[rad\]. With F·down/|down|
    /// = (sin φ, −cos φ).
    pub fn tilt_rad(&self) -> f64 {
        let Some(down) = self.down else {
            return 0.0;
        };
        let (x, y) = (down[0], self.flip() * down[1]);
        x.atan2(-y)
    }

    /// Seconds on the file's clock from a time in its unit.
    pub fn seconds(&self, file_time: f64) -> f64 {
        match self.time_unit {
            TimeUnit::S => file_time,
            TimeUnit::Ms => file_time * 1e-3,
            TimeUnit::Frame => file_time / self.frames_per_second.unwrap_or(f64::NAN),
        }
    }

    /// A time in the file's unit from seconds on its clock.
    pub fn file_time(&self, seconds: f64) -> f64 {
        match self.time_unit {
            TimeUnit::S => seconds,
            TimeUnit::Ms => seconds * 1e3,
            TimeUnit::Frame => seconds * self.frames_per_second.unwrap_or(f64::NAN),
        }
    }

    /// A tracker's lost-marker code: exactly the numbers it writes.
    pub fn is_lost(&self, p: [f64; 2]) -> bool {
        self.lost.is_some_and(|lost| lost == p)
    }

    /// The map between the file's coordinates and the model's, for a drop
    /// pinned at `model_pin_m` (P0).
    pub fn map(&self, model_pin_m: [f64; 2]) -> CameraMap {
        let phi = self.tilt_rad();
        CameraMap {
            scale_m: self.scale_m(),
            flip: self.flip(),
            cos: phi.cos(),
            sin: phi.sin(),
            pin_file: self.pin.unwrap_or([0.0, 0.0]),
            pin_model_m: if self.pin.is_some() {
                model_pin_m
            } else {
                [0.0, 0.0]
            },
        }
    }
}

/// [`Camera::map`]: model = P0 + R(φ)ᵀ F s (p − p_pin), and its inverse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraMap {
    scale_m: f64,
    flip: f64,
    cos: f64,
    sin: f64,
    pin_file: [f64; 2],
    pin_model_m: [f64; 2],
}

impl CameraMap {
    /// The model's position \[m\] of a file's point.
    pub fn to_model(&self, p: [f64; 2]) -> [f64; 2] {
        let u = [
            self.scale_m * (p[0] - self.pin_file[0]),
            self.flip * self.scale_m * (p[1] - self.pin_file[1]),
        ];
        // Rᵀ(φ) u, with R(φ) = [[cos, −sin], [sin, cos]].
        [
            self.pin_model_m[0] + self.cos * u[0] + self.sin * u[1],
            self.pin_model_m[1] - self.sin * u[0] + self.cos * u[1],
        ]
    }

    /// The file's point of a model position \[m\]: p = p_pin + F R(φ) (model − P0) / s.
    pub fn to_file(&self, model_m: [f64; 2]) -> [f64; 2] {
        let d = [
            model_m[0] - self.pin_model_m[0],
            model_m[1] - self.pin_model_m[1],
        ];
        let r = [
            self.cos * d[0] - self.sin * d[1],
            self.sin * d[0] + self.cos * d[1],
        ];
        [
            self.pin_file[0] + r[0] / self.scale_m,
            self.pin_file[1] + self.flip * r[1] / self.scale_m,
        ]
    }

    /// A length in metres from one in the file's unit.
    pub fn metres(&self, file_length: f64) -> f64 {
        file_length * self.scale_m
    }

    /// A length in the file's unit from metres.
    pub fn file_length(&self, metres: f64) -> f64 {
        metres / self.scale_m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker() -> Camera {
        Camera {
            unit: LengthUnit::Px,
            metres_per_unit: Some(0.5e-3),
            y_axis: YAxis::Down,
            // 1.5° of tilt: gravity slightly toward +x in the image.
            down: Some([1.5f64.to_radians().sin(), 1.5f64.to_radians().cos()]),
            pin: Some([640.0, 120.0]),
            ..Camera::default()
        }
    }

    #[test]
    fn the_default_is_the_model_frame() {
        let camera = Camera::default();
        assert!(camera.is_default());
        camera.validate().unwrap();
        let map = camera.map([0.1, 0.2]);
        for p in [[0.0, 0.0], [0.3, -0.4], [-1.25, 7.5]] {
            assert_eq!(map.to_model(p), p);
            assert_eq!(map.to_file(p), p);
        }
    }

    #[test]
    fn the_pin_maps_to_p0_and_gravity_to_minus_y() {
        let camera = tracker();
        camera.validate().unwrap();
        let map = camera.map([0.1, -0.05]);
        let pin = map.to_model([640.0, 120.0]);
        assert!((pin[0] - 0.1).abs() < 1e-15 && (pin[1] + 0.05).abs() < 1e-15);
        // A plumb line from the pin, 200 px along the file's `down`, is
        // 0.1 m straight below P0 in the model.
        let down = camera.down.unwrap();
        let bob = map.to_model([640.0 + 200.0 * down[0], 120.0 + 200.0 * down[1]]);
        assert!((bob[0] - 0.1).abs() < 1e-12, "{bob:?}");
        assert!((bob[1] - (-0.05 - 0.1)).abs() < 1e-12, "{bob:?}");
        // And to the right in the image is to the right in the model
        // (nearly: the camera is turned by 1.5°).
        let right = map.to_model([740.0, 120.0]);
        assert!(right[0] > 0.1 + 0.049 && (right[1] + 0.05).abs() < 0.002);
    }

    #[test]
    fn the_file_map_inverts_the_model_map() {
        let map = tracker().map([0.1, -0.05]);
        for p in [[0.0, 0.0], [12.5, 700.25], [1919.0, 1079.0]] {
            let back = map.to_file(map.to_model(p));
            assert!((back[0] - p[0]).abs() < 1e-9 && (back[1] - p[1]).abs() < 1e-9);
        }
    }

    #[test]
    fn clocks_and_lengths() {
        let ms = Camera {
            time_unit: TimeUnit::Ms,
            unit: LengthUnit::Mm,
            ..Camera::default()
        };
        assert_eq!(ms.seconds(7500.0), 7.5);
        assert_eq!(ms.file_time(0.04), 40.0);
        assert_eq!(ms.map([0.0, 0.0]).to_model([600.0, -20.0]), [0.6, -0.02]);
        let frames = Camera {
            time_unit: TimeUnit::Frame,
            frames_per_second: Some(60.0),
            ..Camera::default()
        };
        assert_eq!(frames.seconds(450.0), 7.5);
    }

    #[test]
    fn settings_that_cannot_be_a_camera_are_named() {
        let err = |camera: Camera| camera.validate().unwrap_err().to_string();
        let e = err(Camera {
            unit: LengthUnit::Px,
            ..Camera::default()
        });
        assert!(e.contains("[camera] metres_per_unit"), "{e}");
        let e = err(Camera {
            metres_per_unit: Some(0.001),
            ..Camera::default()
        });
        assert!(e.contains("only with unit = \"px\""), "{e}");
        // y down, and a `down` that points up in that frame.
        let e = err(Camera {
            y_axis: YAxis::Down,
            down: Some([0.0, -1.0]),
            ..Camera::default()
        });
        assert!(e.contains("[camera] down") && e.contains("180.0°"), "{e}");
        let e = err(Camera {
            first_marker: 2,
            ..Camera::default()
        });
        assert!(e.contains("[camera] first_marker"), "{e}");
        let e = err(Camera {
            time_unit: TimeUnit::Frame,
            ..Camera::default()
        });
        assert!(e.contains("frames_per_second"), "{e}");
    }
}
