//! A tracker's export as the model's samples: a long file (`t`, `marker`,
//! `x`, `y` per row) or a wide one (a time column and an x and a y column
//! per marker, named as trackers name them), its columns found, its cells
//! checked (numbers, occlusions, bounds), mapped through the camera into
//! the model's frame and clock.

use std::collections::BTreeMap;
use std::path::Path;

use arrow::array::{Array, Float64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::DataType;

use super::IoError;
use crate::camera::{Camera, Columns, OneOrMany};
use crate::track::MeasuredTrack;

/// A column converted to f64, or an error naming it: every value finite.
fn f64_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<f64>, IoError> {
    column_values(batch, name, path, false)
}

/// The largest coordinate a film may hold, in its own unit: a trillion
/// pixels, micrometres or metres is no position a camera saw, and beyond
/// it the model's arithmetic (squares of differences) overflows.
pub const MAX_COORDINATE: f64 = 1e12;

/// A coordinate column converted to f64, with empty values and NaN as NaN
/// (a marker the camera did not see); infinities, and values beyond
/// [`MAX_COORDINATE`], are an error.
fn f64_column_with_gaps(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<f64>, IoError> {
    let values = column_values(batch, name, path, true)?;
    if let Some(row) = values.iter().position(|v| v.abs() > MAX_COORDINATE) {
        return Err(IoError::Format {
            path: path.to_owned(),
            message: format!(
                "column `{name}` holds {} in row {row}, beyond the {MAX_COORDINATE:e} any coordinate may be",
                crate::error::number(values[row])
            ),
        });
    }
    Ok(values)
}

fn column_values(
    batch: &RecordBatch,
    name: &str,
    path: &Path,
    gaps: bool,
) -> Result<Vec<f64>, IoError> {
    let err = |message: String| IoError::Format {
        path: path.to_owned(),
        message,
    };
    let column = batch
        .column_by_name(name)
        .ok_or_else(|| err(format!("missing column `{name}` (a long file needs t, marker, x, y; a wide one a time column and x/y columns per marker)")))?;
    // Text where numbers belong: name the first cell that is not one (a
    // marker labelled `A`, a unit in the cell), rather than the empty
    // values a cast would leave.
    if let Some(text) = column.as_any().downcast_ref::<arrow::array::StringArray>()
        && let Some((row, cell)) = text
            .iter()
            .enumerate()
            .filter_map(|(row, cell)| Some((row, cell?)))
            .find(|(_, cell)| !cell.is_empty() && cell.parse::<f64>().is_err())
    {
        return Err(err(format!(
            "column `{name}` holds `{cell}` in row {row}, which is not a number{}",
            if name == "marker" {
                " (markers are numbered 0, 1, …)"
            } else {
                ""
            }
        )));
    }
    let converted =
        cast(column, &DataType::Float64).map_err(|e| err(format!("column `{name}`: {e}")))?;
    let values = converted
        .as_any()
        .downcast_ref::<Float64Array>()
        .expect("cast to Float64 gives Float64Array");
    if values.null_count() > 0 && !gaps {
        return Err(err(format!("column `{name}` has empty values")));
    }
    let out: Vec<f64> = (0..values.len())
        .map(|i| {
            if values.is_valid(i) {
                values.value(i)
            } else {
                f64::NAN
            }
        })
        .collect();
    let bad = |v: &f64| {
        if gaps {
            v.is_infinite()
        } else {
            !v.is_finite()
        }
    };
    if let Some(row) = out.iter().position(bad) {
        return Err(err(format!(
            "column `{name}` has a{} value in row {row}",
            if gaps { "n infinite" } else { " non-finite" }
        )));
    }
    Ok(out)
}

/// A measured file's samples in its own numbers, one per (frame, marker):
/// a long file's rows, or a wide file's cells.
struct FileSamples {
    t: Vec<f64>,
    marker: Vec<f64>,
    x: Vec<f64>,
    y: Vec<f64>,
    /// A long file's `s` column, in the file's unit.
    s: Option<Vec<f64>>,
    /// What a row is, for messages: "row" of a long file, "frame row" of a
    /// wide one (whose rows hold every marker).
    row_name: &'static str,
    /// Samples per file row: 1 in a long file, the markers in a wide one.
    per_row: usize,
}

/// [`read_film`] of a table already in memory, `path` naming it in
/// messages.
pub(super) fn film_from_batch(
    batch: &RecordBatch,
    camera: &Camera,
    model_pin_m: [f64; 2],
    path: &Path,
) -> Result<MeasuredTrack, IoError> {
    let columns = &camera.columns;
    check_one_clock(batch, columns, path)?;
    let long = match &columns.x {
        Some(OneOrMany::One(_)) => true,
        Some(OneOrMany::Many(_)) => false,
        None => {
            columns.marker.is_some()
                || column_named(batch, "marker").is_some()
                || column_named(batch, "x").is_some()
        }
    };
    let samples = if long {
        long_samples(batch, columns, path)?
    } else {
        wide_samples(batch, columns, camera.first_marker, path)?
    };
    measured_from_samples(samples, camera, model_pin_m, path)
}

/// A column name's words, lower case: `Time (s)` is `time`, `s`.
fn name_words(name: &str) -> Vec<String> {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// Two clocks (a tracker's `time` beside a spreadsheet's `t`), in a long
/// or a wide file, are refused unless the camera names one: the wrong one
/// would shift every frame.
fn check_one_clock(batch: &RecordBatch, columns: &Columns, path: &Path) -> Result<(), IoError> {
    let schema = batch.schema();
    let clocks: Vec<&String> = schema
        .fields()
        .iter()
        .map(|f| f.name())
        .filter(|n| name_words(n).iter().any(|w| w == "t" || w == "time"))
        .collect();
    match (&columns.t, clocks.as_slice()) {
        (None, [first, second, ..]) => Err(IoError::Format {
            path: path.to_owned(),
            message: format!(
                "two time columns, `{first}` and `{second}`: say which is the clock in [camera] columns.t"
            ),
        }),
        _ => Ok(()),
    }
}

/// The batch's column whose name is `name` once trimmed, any case.
fn column_named(batch: &RecordBatch, name: &str) -> Option<String> {
    batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .find(|n| n.trim().eq_ignore_ascii_case(name))
}

fn long_samples(
    batch: &RecordBatch,
    columns: &Columns,
    path: &Path,
) -> Result<FileSamples, IoError> {
    let name = |given: Option<&String>, default: &str| {
        given
            .cloned()
            .or_else(|| column_named(batch, default))
            .unwrap_or_else(|| default.to_string())
    };
    let one = |c: &Option<OneOrMany>| match c {
        Some(OneOrMany::One(n)) => Some(n.clone()),
        _ => None,
    };
    let t = f64_column(batch, &name(columns.t.as_ref(), "t"), path)?;
    let marker = f64_column(batch, &name(columns.marker.as_ref(), "marker"), path)?;
    let x_name = name(one(&columns.x).as_ref(), "x");
    let y_name = name(one(&columns.y).as_ref(), "y");
    let x = f64_column_with_gaps(batch, &x_name, path)?;
    let y = f64_column_with_gaps(batch, &y_name, path)?;
    for (name, values) in [(&x_name, &x), (&y_name, &y)] {
        if values.iter().all(|v| v.is_nan()) {
            return Err(IoError::Format {
                path: path.to_owned(),
                message: format!(
                    "column `{name}` has no values: each of its {} cells is empty or NaN",
                    values.len()
                ),
            });
        }
    }
    let s = match column_named(batch, "s") {
        Some(s) => Some(f64_column(batch, &s, path)?),
        None => None,
    };
    Ok(FileSamples {
        t,
        marker,
        x,
        y,
        s,
        row_name: "row",
        per_row: 1,
    })
}

/// A wide column's marker number and axis from its name: the name's
/// words and numbers (`x3`, `X_3`, `marker3_x`, `pt3_cam1_X`, `3 y`)
/// hold exactly one `x` or `y` and a number, the first of which is the
/// marker's.
fn wide_column(name: &str) -> Option<(usize, usize)> {
    let mut tokens: Vec<String> = Vec::new();
    let mut current = String::new();
    for c in name.trim().chars() {
        let boundary = current
            .chars()
            .last()
            .is_some_and(|last| last.is_ascii_digit() != c.is_ascii_digit());
        if (!c.is_ascii_alphanumeric() || boundary) && !current.is_empty() {
            tokens.push(std::mem::take(&mut current));
        }
        if c.is_ascii_alphanumeric() {
            current.push(c.to_ascii_lowercase());
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    let axes: Vec<usize> = tokens
        .iter()
        .filter_map(|t| match t.as_str() {
            "x" => Some(0),
            "y" => Some(1),
            _ => None,
        })
        .collect();
    let number = tokens.iter().find_map(|t| t.parse::<usize>().ok())?;
    match axes[..] {
        [axis] => Some((number, axis)),
        _ => None,
    }
}

fn wide_samples(
    batch: &RecordBatch,
    columns: &Columns,
    first_marker: usize,
    path: &Path,
) -> Result<FileSamples, IoError> {
    let format = |message: String| IoError::Format {
        path: path.to_owned(),
        message,
    };
    let names: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    // A column with the word `t` or `time` (`Time (s)`, `frame time`),
    // else one with `frame` (frame numbers, with time_unit = "frame").
    let named_with = |accepted: &[&str]| {
        names
            .iter()
            .find(|n| name_words(n).iter().any(|w| accepted.contains(&w.as_str())))
            .cloned()
    };
    let time_name = match &columns.t {
        Some(t) => t.clone(),
        None => named_with(&["t", "time"])
            .or_else(|| named_with(&["frame"]))
            .ok_or_else(|| {
                format(format!(
                    "no time column among {names:?}: name it `t` or `time`, or give [camera] columns.t"
                ))
            })?,
    };
    // (file marker number, x column, y column), in the file's marker order.
    let pairs: Vec<(usize, String, String)> = match (&columns.x, &columns.y) {
        (Some(OneOrMany::Many(x)), Some(OneOrMany::Many(y))) => x
            .iter()
            .zip(y)
            .enumerate()
            // Listed pairs are the file's markers in order from its first.
            .map(|(i, (x, y))| (i + first_marker, x.clone(), y.clone()))
            .collect(),
        _ => guessed_pairs(&names, path)?,
    };
    let times = f64_column(batch, &time_name, path)?;
    let rows = times.len();
    let mut samples = FileSamples {
        t: Vec::with_capacity(rows * pairs.len()),
        marker: Vec::with_capacity(rows * pairs.len()),
        x: Vec::with_capacity(rows * pairs.len()),
        y: Vec::with_capacity(rows * pairs.len()),
        s: None,
        row_name: "frame row",
        per_row: pairs.len(),
    };
    let mut per_marker = Vec::new();
    for (number, x, y) in &pairs {
        per_marker.push((
            *number,
            f64_column_with_gaps(batch, x, path)?,
            f64_column_with_gaps(batch, y, path)?,
        ));
    }
    for (row, &t) in times.iter().enumerate() {
        for (number, x, y) in &per_marker {
            samples.t.push(t);
            samples.marker.push(*number as f64);
            samples.x.push(x[row]);
            samples.y.push(y[row]);
        }
    }
    Ok(samples)
}

/// The x and y column of every marker a wide file's names show.
fn guessed_pairs(names: &[String], path: &Path) -> Result<Vec<(usize, String, String)>, IoError> {
    let mut by_marker: BTreeMap<usize, [Option<String>; 2]> = BTreeMap::new();
    for name in names {
        if let Some((number, axis)) = wide_column(name) {
            let slot = &mut by_marker.entry(number).or_default()[axis];
            if let Some(other) = slot {
                return Err(IoError::Format {
                    path: path.to_owned(),
                    message: format!(
                        "columns `{other}` and `{name}` both look like marker {number}'s {}: name the columns in [camera] columns (x = [...], y = [...], one per marker)",
                        ["x", "y"][axis]
                    ),
                });
            }
            *slot = Some(name.clone());
        }
    }
    let mut pairs = Vec::new();
    for (number, [x, y]) in by_marker {
        match (x, y) {
            (Some(x), Some(y)) => pairs.push((number, x, y)),
            (x, _) => {
                return Err(IoError::Format {
                    path: path.to_owned(),
                    message: format!(
                        "marker {number} has a{} column but no {} column: a wide file needs an x and a y column per marker (or name them in [camera] columns)",
                        if x.is_some() { "n x" } else { " y" },
                        if x.is_some() { "y" } else { "x" },
                    ),
                });
            }
        }
    }
    if pairs.is_empty() {
        return Err(IoError::Format {
            path: path.to_owned(),
            message: format!(
                "neither a long file (columns t, marker, x, y) nor a wide one (a time column and x/y columns per marker such as x0, y0 or marker0_x, marker0_y); its columns are {names:?}: name them in [camera] columns"
            ),
        });
    }
    Ok(pairs)
}

/// The samples in the model's frame and clock, checked as a tracker's
/// rows go wrong: a marker's times go forward, one row per frame.
fn measured_from_samples(
    samples: FileSamples,
    camera: &Camera,
    model_pin_m: [f64; 2],
    path: &Path,
) -> Result<MeasuredTrack, IoError> {
    let format = |message: String| IoError::Format {
        path: path.to_owned(),
        message,
    };
    let map = camera.map(model_pin_m);
    let FileSamples {
        t,
        marker,
        x,
        y,
        s,
        row_name,
        per_row,
    } = samples;
    let first = camera.first_marker as f64;
    let mut measured = MeasuredTrack::default();
    // Each marker's latest time so far and its row: a clock that jumps
    // back, or a row repeated, would otherwise replace a sample without a
    // word.
    let mut latest: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
    let mut model_markers = Vec::with_capacity(marker.len());
    for i in 0..t.len() {
        let row = i / per_row;
        if marker[i] < first || marker[i].fract() != 0.0 {
            return Err(format(format!(
                "column `marker` must hold marker numbers {first}, {}, … (first_marker = {first} in [camera]); {row_name} {row} has {}",
                first + 1.0,
                marker[i]
            )));
        }
        if !t[i].is_finite() {
            return Err(format(format!(
                "the time column must hold finite times; {row_name} {row} has {}",
                t[i]
            )));
        }
        let m = (marker[i] - first) as usize;
        let time_s = camera.seconds(t[i]);
        if let Some(&(before, earlier)) = latest.get(&m)
            && time_s <= before
        {
            return Err(format(format!(
                "the times of marker {} go backwards or repeat: {row_name} {row} has t = {} after {row_name} {earlier}'s {} (each marker's rows in time order, one per frame)",
                marker[i],
                t[i],
                camera.file_time(before)
            )));
        }
        latest.insert(m, (time_s, row));
        model_markers.push(m as f64);
        let p = [x[i], y[i]];
        if p[0].is_nan() || p[1].is_nan() || camera.is_lost(p) {
            measured.occluded_rows += 1;
            measured.occluded_markers.insert(m);
        } else {
            measured.insert(time_s, m, map.to_model(p));
        }
    }
    if let Some(s) = s {
        let s_m: Vec<f64> = s.iter().map(|&v| map.metres(v)).collect();
        measured.marker_arc_lengths_m = Some(marker_arc_lengths(&model_markers, &s_m, path)?);
    }
    Ok(measured)
}

/// Each marker's arc length from an `s` column: one value per marker index
/// (to 1e-9 m), the indices 0, 1, … without a gap.
fn marker_arc_lengths(marker: &[f64], s: &[f64], path: &Path) -> Result<Vec<f64>, IoError> {
    let format = |message: String| IoError::Format {
        path: path.to_owned(),
        message,
    };
    let mut by_marker: BTreeMap<usize, f64> = BTreeMap::new();
    for (i, (&m, &arc)) in marker.iter().zip(s).enumerate() {
        if !arc.is_finite() {
            return Err(format(format!("column `s` is not finite in row {i}")));
        }
        let first = *by_marker.entry(m as usize).or_insert(arc);
        if (first - arc).abs() > 1e-9 {
            return Err(format(format!(
                "column `s` gives marker {} two arc lengths, {first} and {arc} m (row {i}): one marker, one place on the tether",
                m as usize
            )));
        }
    }
    let arcs: Vec<f64> = by_marker.values().copied().collect();
    if by_marker.keys().enumerate().any(|(i, &m)| i != m) {
        let numbers: Vec<usize> = by_marker.keys().copied().collect();
        return Err(format(format!(
            "markers must be numbered 0, 1, … without a gap; the file has {numbers:?}{}",
            if numbers.first() == Some(&1) {
                " (numbered from 1: say so with first_marker = 1 in [camera] of --config)"
            } else {
                ""
            }
        )));
    }
    Ok(arcs)
}
