//! Marker tracks as tables: one row per (frame, marker) with columns
//! `t` \[s\], `marker` (index), `s` \[m\], `x` \[m\], `y` \[m\].

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int32Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::{IoError, PendingFile, TableFormat};
use crate::objective::MeasuredTrack;
use crate::track::Track;

/// Key under which units are stored in each Arrow field's metadata.
pub const UNIT_KEY: &str = "unit";

fn field(name: &str, data_type: DataType, unit: &str) -> Field {
    Field::new(name, data_type, false).with_metadata([(UNIT_KEY, unit)])
}

/// The schema of a marker track; `metadata` goes into the schema (and so the
/// Parquet footer) as key-value pairs.
pub fn track_schema(metadata: &BTreeMap<String, String>) -> Schema {
    Schema::new(vec![
        field("t", DataType::Float64, "s"),
        field("marker", DataType::Int32, "1"),
        field("s", DataType::Float64, "m"),
        field("x", DataType::Float64, "m"),
        field("y", DataType::Float64, "m"),
    ])
    .with_metadata(metadata.clone())
}

pub fn track_batch(track: &Track, metadata: &BTreeMap<String, String>) -> RecordBatch {
    let markers = track.markers();
    let rows = track.positions_m.len();
    let t: Float64Array = (0..rows).map(|r| track.times_s[r / markers]).collect();
    let marker: Int32Array = (0..rows).map(|r| (r % markers) as i32).collect();
    let s: Float64Array = (0..rows)
        .map(|r| track.marker_arc_lengths_m[r % markers])
        .collect();
    let x: Float64Array = track.positions_m.iter().map(|p| p[0]).collect();
    let y: Float64Array = track.positions_m.iter().map(|p| p[1]).collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(t),
        Arc::new(marker),
        Arc::new(s),
        Arc::new(x),
        Arc::new(y),
    ];
    RecordBatch::try_new(Arc::new(track_schema(metadata)), columns)
        .expect("columns match the schema")
}

/// Writes a record batch into `pending` as Parquet (with `metadata` in the
/// footer) or CSV (header row; CSV has nowhere to keep metadata).
pub fn write_batch(
    pending: &mut PendingFile,
    batch: &RecordBatch,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let format = TableFormat::from_path(pending.target())?;
    let target = pending.target().to_owned();
    let fmt_err = |e: &dyn std::fmt::Display| IoError::Format {
        path: target.clone(),
        message: e.to_string(),
    };
    match format {
        TableFormat::Parquet => {
            let props = WriterProperties::builder()
                .set_key_value_metadata(Some(
                    metadata
                        .iter()
                        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                        .collect(),
                ))
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let mut writer = ArrowWriter::try_new(pending.file(), batch.schema(), Some(props))
                .map_err(|e| fmt_err(&e))?;
            writer.write(batch).map_err(|e| fmt_err(&e))?;
            writer.close().map_err(|e| fmt_err(&e))?;
        }
        TableFormat::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(pending.file());
            writer.write(batch).map_err(|e| fmt_err(&e))?;
        }
    }
    Ok(())
}

/// Reads a table (Parquet or CSV by extension) into one record batch.
pub fn read_table(path: &Path) -> Result<RecordBatch, IoError> {
    let format = TableFormat::from_path(path)?;
    let read_err = |error| IoError::Read {
        path: path.to_owned(),
        error,
    };
    let fmt_err = |e: &dyn std::fmt::Display| IoError::Format {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let batches: Vec<RecordBatch> = match format {
        TableFormat::Parquet => {
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).map_err(read_err)?)
                .and_then(|b| b.build())
                .map_err(|e| fmt_err(&e))?
                .collect::<Result<_, _>>()
                .map_err(|e| fmt_err(&e))?
        }
        TableFormat::Csv => {
            // Read whole: cleaned (`comma_separated`) before arrow sees it.
            let text = std::fs::read_to_string(path).map_err(read_err)?;
            let text = comma_separated(&text).map_err(|m| fmt_err(&m))?;
            let csv_format = arrow::csv::reader::Format::default().with_header(true);
            let (schema, _) = csv_format
                .infer_schema(std::io::Cursor::new(text.as_bytes()), None)
                .map_err(|e| fmt_err(&e))?;
            arrow::csv::ReaderBuilder::new(Arc::new(schema))
                .with_format(csv_format)
                .build(std::io::Cursor::new(text.as_bytes()))
                .map_err(|e| fmt_err(&e))?
                .collect::<Result<_, _>>()
                .map_err(|e| fmt_err(&e))?
        }
    };
    let schema = batches
        .first()
        .map(|b| b.schema())
        .ok_or_else(|| fmt_err(&"the table has no rows"))?;
    arrow::compute::concat_batches(&schema, &batches).map_err(|e| fmt_err(&e))
}

/// A CSV as spreadsheets and trackers write it, made plain: every cell
/// trimmed (`t, marker, x` names the columns `t`, `marker`, `x`). Files
/// the reader would misread are refused with what to change: `;` or tab
/// separators, and rows with more cells than the header (decimal commas,
/// `0,04`). A file with quoted cells is left as it is.
fn comma_separated(text: &str) -> Result<String, String> {
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("");
    for (separator, name) in [(';', "semicolons"), ('\t', "tabs")] {
        if header.contains(separator) && !header.contains(',') {
            return Err(format!(
                "the header `{}` is separated by {name}: write the file with commas between cells and points as decimal marks (a spreadsheet's \"CSV (comma delimited)\" export with an English number format)",
                header.trim()
            ));
        }
    }
    if text.contains('"') {
        return Ok(text.to_string());
    }
    let cells = header.split(',').count();
    let mut out = String::with_capacity(text.len());
    for (row, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let trimmed: Vec<&str> = line.split(',').map(str::trim).collect();
        if trimmed.len() > cells {
            return Err(format!(
                "line {} has {} cells against the header's {cells} (`{}`): decimal commas? write points as decimal marks (0.04, not 0,04)",
                row + 1,
                trimmed.len(),
                line.trim()
            ));
        }
        out.push_str(&trimmed.join(","));
        out.push('\n');
    }
    Ok(out)
}

/// A column converted to f64, or an error naming it: every value finite.
fn f64_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<f64>, IoError> {
    column_values(batch, name, path, false)
}

/// A column converted to f64, with empty values and NaN as NaN (a marker the
/// camera did not see); infinities are still an error.
fn f64_column_with_gaps(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<f64>, IoError> {
    column_values(batch, name, path, true)
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
        .ok_or_else(|| err(format!("missing column `{name}` (need t, marker, x, y)")))?;
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

/// Reads a measured track (columns t, marker, x, y; others ignored).
pub fn read_measured(path: &Path) -> Result<MeasuredTrack, IoError> {
    let batch = read_table(path)?;
    let t = f64_column(&batch, "t", path)?;
    let marker = f64_column(&batch, "marker", path)?;
    // An occluded marker: x or y empty or NaN. Its row is counted, not
    // compared.
    let x = f64_column_with_gaps(&batch, "x", path)?;
    let y = f64_column_with_gaps(&batch, "y", path)?;
    let mut measured = MeasuredTrack::default();
    // Each marker's latest time so far and its row: a marker's rows go
    // forward in time, one per frame. A clock that jumps back, or a row
    // repeated, would otherwise replace a sample without a word.
    let mut latest: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
    for i in 0..t.len() {
        if marker[i] < 0.0 || marker[i].fract() != 0.0 {
            return Err(IoError::Format {
                path: path.to_owned(),
                message: format!(
                    "column `marker` must hold marker indices 0, 1, …; row {i} has {}",
                    marker[i]
                ),
            });
        }
        if !t[i].is_finite() {
            return Err(IoError::Format {
                path: path.to_owned(),
                message: format!("column `t` must hold finite times; row {i} has {}", t[i]),
            });
        }
        let m = marker[i] as usize;
        if let Some(&(before, row)) = latest.get(&m)
            && t[i] <= before
        {
            return Err(IoError::Format {
                path: path.to_owned(),
                message: format!(
                    "the times of marker {m} go backwards or repeat: row {i} has t = {} s after row {row}'s {before} s (each marker's rows in time order, one per frame)",
                    t[i]
                ),
            });
        }
        latest.insert(m, (t[i], i));
        if x[i].is_nan() || y[i].is_nan() {
            measured.occluded_rows += 1;
            measured.occluded_markers.insert(m);
        } else {
            measured.insert(t[i], marker[i] as usize, [x[i], y[i]]);
        }
    }
    if batch.column_by_name("s").is_some() {
        let s = f64_column(&batch, "s", path)?;
        measured.marker_arc_lengths_m = Some(marker_arc_lengths(&marker, &s, path)?);
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
        return Err(format(format!(
            "markers must be numbered 0, 1, … without a gap; the file has {:?}",
            by_marker.keys().collect::<Vec<_>>()
        )));
    }
    Ok(arcs)
}

/// Reads the key-value metadata of a Parquet file.
pub fn read_parquet_metadata(path: &Path) -> Result<BTreeMap<String, String>, IoError> {
    let file = std::fs::File::open(path).map_err(|source| IoError::Read {
        path: path.to_owned(),
        error: source,
    })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| IoError::Format {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    Ok(builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Track {
        Track {
            times_s: vec![0.0, 0.04],
            marker_arc_lengths_m: vec![0.0, 0.3, 0.6],
            positions_m: (0..6).map(|i| [0.1 * i as f64, -0.2 * i as f64]).collect(),
        }
    }

    #[test]
    fn parquet_and_csv_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let meta: BTreeMap<String, String> = [("k".to_string(), "v".to_string())].into();
        for name in ["a.parquet", "a.csv"] {
            let path = dir.path().join(name);
            let mut pending = PendingFile::create(&path).unwrap();
            write_batch(&mut pending, &track_batch(&sample(), &meta), &meta).unwrap();
            assert!(!path.exists(), "nothing at the target before commit");
            pending.commit().unwrap();
            let measured = read_measured(&path).unwrap();
            let m = MeasuredTrack::from_track(&sample());
            for (f, &t) in sample().times_s.iter().enumerate() {
                for j in 0..3 {
                    assert_eq!(
                        measured.get(t, j),
                        m.get(t, j),
                        "{name} frame {f} marker {j}"
                    );
                }
            }
        }
        let md = read_parquet_metadata(&dir.path().join("a.parquet")).unwrap();
        assert_eq!(md.get("k").map(String::as_str), Some("v"));
    }

    #[test]
    fn uncommitted_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.parquet");
        {
            let _pending = PendingFile::create(&path).unwrap();
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn missing_columns_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.csv");
        std::fs::write(&path, "t,marker,x\n0.04,0,1.0\n").unwrap();
        let err = read_measured(&path).unwrap_err().to_string();
        assert!(err.contains("missing column `y`"), "{err}");
    }
}
