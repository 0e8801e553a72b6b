//! Marker tracks as tables: one row per (frame, marker) with columns
//! `t` \[s\], `marker` (index), `s` \[m\], `x` \[m\], `y` \[m\].

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::tracker::film_from_batch;
use super::{IoError, PendingFile, TableFormat};
use crate::camera::Camera;
use crate::named::{Named, display_and_parse_by_name};
use crate::track::MeasuredTrack;
use crate::track::Track;

/// Key under which units are stored in each Arrow field's metadata.
pub const UNIT_KEY: &str = "unit";

fn field(name: &str, data_type: DataType, unit: &str) -> Field {
    Field::new(name, data_type, false).with_metadata([(UNIT_KEY, unit)])
}

/// A track in the model's frame (columns `t` \[s\], `marker`, `s`, `x`,
/// `y` \[m\]): [`film_batch`] with no camera.
pub fn track_batch(track: &Track, metadata: &BTreeMap<String, String>) -> RecordBatch {
    film_batch(
        track,
        &Camera::default(),
        [0.0, 0.0],
        TrackLayout::Long,
        metadata,
    )
}

/// How a film's table is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TrackLayout {
    /// One row per frame and marker: t, marker, s, x, y.
    #[default]
    Long,
    /// One row per frame: t, then x and y per marker (x0, y0, x1, y1, …),
    /// as most trackers export.
    Wide,
}

impl Named for TrackLayout {
    const WHAT: &'static str = "layout";
    const ALL: &'static [Self] = &[TrackLayout::Long, TrackLayout::Wide];

    fn name(self) -> &'static str {
        match self {
            TrackLayout::Long => "long",
            TrackLayout::Wide => "wide",
        }
    }

    fn help(self) -> &'static str {
        match self {
            TrackLayout::Long => "One row per frame and marker: t, marker, s, x, y",
            TrackLayout::Wide => {
                "One row per frame: t, then x and y per marker (x0, y0, x1, y1, …), as most trackers export"
            }
        }
    }
}

display_and_parse_by_name!(TrackLayout);

impl TrackLayout {
    /// The rows `track` takes in this layout.
    pub fn rows(self, track: &Track) -> usize {
        match self {
            TrackLayout::Long => track.positions_m.len(),
            TrackLayout::Wide => track.times_s.len(),
        }
    }
}

/// A track as a camera would have written it: `t` in the camera's time
/// unit, markers from its first number, lengths in its unit and frame, for
/// a drop pinned at `model_pin_m`; long (with `s`) or wide.
pub fn film_batch(
    track: &Track,
    camera: &Camera,
    model_pin_m: [f64; 2],
    layout: TrackLayout,
    metadata: &BTreeMap<String, String>,
) -> RecordBatch {
    let map = camera.map(model_pin_m);
    let markers = track.markers();
    let length = camera.unit.name();
    let file: Vec<[f64; 2]> = track.positions_m.iter().map(|&p| map.to_file(p)).collect();
    let time = field("t", DataType::Float64, camera.time_unit.name());
    let (fields, columns): (Vec<Field>, Vec<ArrayRef>) = match layout {
        TrackLayout::Long => {
            let rows = file.len();
            let t: Float64Array = (0..rows)
                .map(|r| camera.file_time(track.times_s[r / markers]))
                .collect();
            let marker: Int32Array = (0..rows)
                .map(|r| (r % markers + camera.first_marker) as i32)
                .collect();
            let s: Float64Array = (0..rows)
                .map(|r| map.file_length(track.marker_arc_lengths_m[r % markers]))
                .collect();
            let x: Float64Array = file.iter().map(|p| p[0]).collect();
            let y: Float64Array = file.iter().map(|p| p[1]).collect();
            (
                vec![
                    time,
                    field("marker", DataType::Int32, "1"),
                    field("s", DataType::Float64, length),
                    field("x", DataType::Float64, length),
                    field("y", DataType::Float64, length),
                ],
                vec![
                    Arc::new(t),
                    Arc::new(marker),
                    Arc::new(s),
                    Arc::new(x),
                    Arc::new(y),
                ],
            )
        }
        TrackLayout::Wide => {
            let t: Float64Array = track.times_s.iter().map(|&t| camera.file_time(t)).collect();
            let mut fields = vec![time];
            let mut columns: Vec<ArrayRef> = vec![Arc::new(t)];
            for j in 0..markers {
                let number = j + camera.first_marker;
                for (axis, name) in ["x", "y"].into_iter().enumerate() {
                    fields.push(field(&format!("{name}{number}"), DataType::Float64, length));
                    let values: Float64Array = file
                        .iter()
                        .skip(j)
                        .step_by(markers)
                        .map(|p| p[axis])
                        .collect();
                    columns.push(Arc::new(values));
                }
            }
            (fields, columns)
        }
    };
    let schema = Schema::new(fields).with_metadata(metadata.clone());
    RecordBatch::try_new(Arc::new(schema), columns).expect("columns match the schema")
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
    super::capture::offer(&target, batch, metadata);
    if !super::capture::writes_files() {
        return Ok(());
    }
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
            let parquet_err = |e: parquet::errors::ParquetError| match e {
                parquet::errors::ParquetError::External(e) => {
                    match e.downcast::<std::io::Error>() {
                        Ok(error) => IoError::Write {
                            path: target.clone(),
                            error: *error,
                        },
                        Err(e) => fmt_err(&e),
                    }
                }
                e => fmt_err(&e),
            };
            let mut writer = ArrowWriter::try_new(pending.file(), batch.schema(), Some(props))
                .map_err(parquet_err)?;
            writer.write(batch).map_err(parquet_err)?;
            writer.close().map_err(parquet_err)?;
        }
        TableFormat::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(pending.file());
            writer.write(batch).map_err(|e| match e {
                arrow::error::ArrowError::IoError(_, error) => IoError::Write {
                    path: target.clone(),
                    error,
                },
                e => fmt_err(&e),
            })?;
        }
    }
    Ok(())
}

/// The largest measured film read \[bytes\]: 128 MiB, some three million
/// rows of a long CSV. A larger file, or a stream that does not end (a
/// pipe, `/dev/zero`), is refused once that much is read, so that no input
/// can take more memory than this.
pub const MAX_FILM_BYTES: u64 = 128 << 20;

/// Reads a table (Parquet or CSV by extension) into one record batch.
pub fn read_table(path: &Path) -> Result<RecordBatch, IoError> {
    read_table_within(path, u64::MAX)
}

/// [`read_table`] of a file of at most `limit` bytes: a larger regular
/// file is refused before it is read, anything else once `limit` bytes
/// are.
fn read_table_within(path: &Path, limit: u64) -> Result<RecordBatch, IoError> {
    let (format, bytes) = read_bytes_within(path, limit)?;
    table_from_bytes(path, format, bytes)
}

/// The message of a file larger than a film may be.
fn too_large(path: &Path, limit: u64) -> IoError {
    IoError::Format {
        path: path.to_owned(),
        message: format!(
            "larger than the {} MiB a measured film may be: is it the tracker's export?",
            limit >> 20
        ),
    }
}

/// A table file's format and bytes, at most `limit` of them: a larger
/// regular file is refused before it is read, anything else (a pipe,
/// `/dev/zero`) once `limit` bytes are, and a file of neither format
/// unread.
fn read_bytes_within(path: &Path, limit: u64) -> Result<(TableFormat, Vec<u8>), IoError> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > limit) {
        return Err(too_large(path, limit));
    }
    let format = TableFormat::from_path(path)?;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit.saturating_add(1)).read_to_end(&mut bytes))
        .map_err(|error| IoError::Read {
            path: path.to_owned(),
            error,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok((format, bytes))
}

/// The table in a file's `bytes` as one record batch; `path` names it.
fn table_from_bytes(
    path: &Path,
    format: TableFormat,
    bytes: Vec<u8>,
) -> Result<RecordBatch, IoError> {
    let fmt_err = |e: &dyn std::fmt::Display| IoError::Format {
        path: path.to_owned(),
        message: e.to_string(),
    };
    // The schema too: a table of no rows (an empty shard's part) is a
    // table, with its columns.
    let (schema, batches): (SchemaRef, Vec<RecordBatch>) = match format {
        TableFormat::Parquet => {
            let builder = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(bytes))
                .map_err(|e| fmt_err(&e))?;
            let schema = builder.schema().clone();
            let batches = builder
                .build()
                .map_err(|e| fmt_err(&e))?
                .collect::<Result<_, _>>()
                .map_err(|e| fmt_err(&e))?;
            (schema, batches)
        }
        TableFormat::Csv => {
            // Cleaned (`comma_separated`) before arrow sees it.
            let text = String::from_utf8(bytes).map_err(|e| {
                fmt_err(&format!(
                    "not UTF-8 text (byte {} of the file): save it as CSV in UTF-8",
                    e.utf8_error().valid_up_to()
                ))
            })?;
            let text = comma_separated(&text).map_err(|m| fmt_err(&m))?;
            let csv_format = arrow::csv::reader::Format::default().with_header(true);
            let (schema, _) = csv_format
                .infer_schema(std::io::Cursor::new(text.as_bytes()), None)
                .map_err(|e| fmt_err(&e))?;
            let schema = Arc::new(schema);
            let batches = arrow::csv::ReaderBuilder::new(schema.clone())
                .with_format(csv_format)
                .build(std::io::Cursor::new(text.as_bytes()))
                .map_err(|e| fmt_err(&e))?
                .collect::<Result<_, _>>()
                .map_err(|e| fmt_err(&e))?;
            (schema, batches)
        }
    };
    let schema = batches.first().map_or(schema, |b| b.schema());
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

/// A measured film as a study is given it: a file (Parquet or CSV), or a
/// table in memory in a file's layout (an Arrow `RecordBatch` from a
/// notebook, or columns of values), named for messages and metadata.
/// Either is read once ([`Measured::load`]), then through the film's camera.
#[derive(Debug, Clone)]
pub enum Measured {
    File(PathBuf),
    Table { name: String, table: RecordBatch },
}

impl Measured {
    /// A long table of samples in the file's numbers: time, marker,
    /// x and y per row (the columns `t`, `marker`, `x`, `y` of a long
    /// file), refused unless the four have one length.
    pub fn from_columns(
        name: impl Into<String>,
        t: Vec<f64>,
        marker: Vec<i64>,
        x: Vec<f64>,
        y: Vec<f64>,
    ) -> Result<Self, IoError> {
        let name = name.into();
        let rows = t.len();
        if [marker.len(), x.len(), y.len()].iter().any(|&n| n != rows) {
            return Err(IoError::Format {
                path: PathBuf::from(&name),
                message: format!(
                    "columns of one length: t has {rows} values, marker {}, x {}, y {}",
                    marker.len(),
                    x.len(),
                    y.len()
                ),
            });
        }
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("t", Arc::new(Float64Array::from(t))),
            ("marker", Arc::new(Int64Array::from(marker))),
            ("x", Arc::new(Float64Array::from(x))),
            ("y", Arc::new(Float64Array::from(y))),
        ];
        let table = RecordBatch::try_from_iter(columns).map_err(|e| IoError::Format {
            path: PathBuf::from(&name),
            message: e.to_string(),
        })?;
        Ok(Self::Table { name, table })
    }

    /// Reads it once: a file's bytes (at most [`MAX_FILM_BYTES`]), hashed
    /// and parsed from that one buffer; a table as it is (as large at
    /// most), hashed by its values. The film is then read through any
    /// camera without reading the file again ([`LoadedFilm::read`]).
    pub fn load(&self) -> Result<LoadedFilm, IoError> {
        match self {
            Self::File(path) => {
                let (format, bytes) = read_bytes_within(path, MAX_FILM_BYTES)?;
                let sha256 = super::sha256_bytes(&bytes);
                Ok(LoadedFilm {
                    name: path.clone(),
                    table: table_from_bytes(path, format, bytes)?,
                    sha256,
                })
            }
            Self::Table { name, table } => {
                let path = PathBuf::from(name);
                if table.get_array_memory_size() as u64 > MAX_FILM_BYTES {
                    return Err(IoError::Format {
                        path,
                        message: format!(
                            "larger than the {} MiB a measured film may be",
                            MAX_FILM_BYTES >> 20
                        ),
                    });
                }
                // Its header and every value, written exactly: a resume
                // continues only the same film.
                let mut bytes = Vec::new();
                let mut writer = arrow::csv::WriterBuilder::new().build(&mut bytes);
                writer.write(table).map_err(|e| IoError::Format {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                drop(writer);
                Ok(LoadedFilm {
                    name: path,
                    table: table.clone(),
                    sha256: super::sha256_bytes(&bytes),
                })
            }
        }
    }

    /// Its file, where it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::File(path) => Some(path),
            Self::Table { .. } => None,
        }
    }
}

/// A file's path, or a table's name.
impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Table { name, .. } => write!(f, "{name}"),
        }
    }
}

impl<P: Into<PathBuf>> From<P> for Measured {
    fn from(path: P) -> Self {
        Self::File(path.into())
    }
}

/// A measured film read once ([`Measured::load`]): its table, and the
/// SHA-256 that keys its saved chunks (a file's bytes, a table's values).
#[derive(Debug, Clone)]
pub struct LoadedFilm {
    /// The file, or the table's name, for messages.
    name: PathBuf,
    table: RecordBatch,
    pub sha256: String,
}

impl LoadedFilm {
    /// The film in the model's frame and clock through `camera`, for a
    /// drop pinned at `model_pin_m` ([`read_film`]'s reading).
    pub fn read(&self, camera: &Camera, model_pin_m: [f64; 2]) -> Result<MeasuredTrack, IoError> {
        film_from_batch(&self.table, camera, model_pin_m, &self.name)
    }
}

/// Reads a measured track in the model's frame (columns t, marker, x, y,
/// and optionally s; others ignored): [`read_film`] with no `[camera]`.
pub fn read_measured(path: &Path) -> Result<MeasuredTrack, IoError> {
    read_film(path, &Camera::default(), [0.0, 0.0])
}

/// Reads a tracker's export of a filmed drop into the model's frame and
/// clock through `camera` (a drop pinned at `model_pin_m`): a long file
/// (`t`, `marker`, `x`, `y` per row) or a wide one (a time column and an x
/// and a y column per marker), CSV or Parquet. Empty cells, NaN and the
/// camera's `lost` code are an occluded marker: counted, not compared.
pub fn read_film(
    path: &Path,
    camera: &Camera,
    model_pin_m: [f64; 2],
) -> Result<MeasuredTrack, IoError> {
    let batch = read_table_within(path, MAX_FILM_BYTES)?;
    film_from_batch(&batch, camera, model_pin_m, path)
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
    use crate::camera::OneOrMany;

    #[test]
    fn a_film_given_as_columns_reads_as_a_file_would_and_is_hashed_by_value() {
        let columns = |x0: f64| {
            Measured::from_columns(
                "film",
                vec![0.0, 0.0, 0.1, 0.1],
                vec![0, 1, 0, 1],
                vec![x0, 0.3, 0.0, 0.25],
                vec![0.0, -0.3, 0.0, -0.31],
            )
            .unwrap()
        };
        let film = columns(0.0);
        let track = film
            .load()
            .unwrap()
            .read(&Camera::default(), [0.0, 0.0])
            .unwrap();
        assert_eq!(track.times_s(), [0.0, 0.1]);
        assert_eq!(track.marker_count(), 2);
        assert_eq!(track.get(0.1, 1), Some([0.25, -0.31]));
        let sha256 = |m: Measured| m.load().unwrap().sha256;
        assert_eq!(sha256(film.clone()), sha256(columns(0.0)));
        assert_ne!(sha256(film.clone()), sha256(columns(1e-9)));
        assert_eq!(film.to_string(), "film");
        let e = Measured::from_columns("film", vec![0.0], vec![0, 1], vec![0.0], vec![0.0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("t has 1 values, marker 2"), "{e}");
    }

    #[test]
    fn a_file_loaded_once_hashes_its_bytes_and_reads_as_read_film() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["film.parquet", "film.csv"] {
            let path = dir.path().join(name);
            let meta = BTreeMap::new();
            let mut pending = PendingFile::create(&path).unwrap();
            write_batch(&mut pending, &track_batch(&sample(), &meta), &meta).unwrap();
            pending.commit().unwrap();
            let loaded = Measured::File(path.clone()).load().unwrap();
            assert_eq!(loaded.sha256, crate::io::sha256_hex(&path).unwrap());
            let camera = Camera::default();
            let once = loaded.read(&camera, [0.0, 0.0]).unwrap();
            let again = read_film(&path, &camera, [0.0, 0.0]).unwrap();
            assert_eq!(once.times_s(), again.times_s());
            for t in again.times_s() {
                for j in 0..3 {
                    assert_eq!(
                        once.get(t, j),
                        again.get(t, j),
                        "{name} at {t} s, marker {j}"
                    );
                }
            }
        }
        // Not UTF-8: named as such, not read as something else.
        let path = dir.path().join("latin1.csv");
        std::fs::write(&path, b"t,marker,x,y\n0,0,0.5\xb5,0\n").unwrap();
        let e = Measured::File(path).load().unwrap_err().to_string();
        assert!(e.contains("not UTF-8") && e.contains("byte 20"), "{e}");
    }

    #[test]
    fn a_coordinate_beyond_any_camera_and_a_column_of_no_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("film.csv");
        std::fs::write(&path, "t,marker,x,y\n0,0,0.1,0\n0,1,1e300,0\n").unwrap();
        let e = read_measured(&path).unwrap_err().to_string();
        assert!(e.contains("column `x` holds 1e300 in row 1"), "{e}");
        std::fs::write(&path, "t,marker,x,y\n0,0,nan,0\n0,1,,0\n").unwrap();
        let e = read_measured(&path).unwrap_err().to_string();
        assert!(e.contains("column `x` has no values"), "{e}");
        // An occluded marker is no error.
        std::fs::write(&path, "t,marker,x,y\n0,0,0.1,0\n0,1,,0\n").unwrap();
        read_measured(&path).unwrap();
    }

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

    /// `text` written to a CSV in a temporary directory, read through
    /// `camera` (a drop pinned at the origin).
    fn film(text: &str, camera: &Camera) -> Result<MeasuredTrack, IoError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("film.csv");
        std::fs::write(&path, text).unwrap();
        read_film(&path, camera, [0.0, 0.0])
    }

    #[test]
    fn two_clocks_are_refused_unless_the_camera_names_one() {
        for (layout, text) in [
            ("wide", "time,x0,y0,t\n0.0,0.0,0.0,7.0\n0.04,0.1,0.0,7.04\n"),
            (
                "long",
                "t,marker,x,y,time\n0.0,0,0.0,0.0,7.0\n0.04,0,0.1,0.0,7.04\n",
            ),
        ] {
            let e = film(text, &Camera::default()).unwrap_err().to_string();
            assert!(
                e.contains("two time columns") && e.contains("columns.t"),
                "{layout}: {e}"
            );
            let mut camera = Camera::default();
            camera.columns.t = Some("t".into());
            let m = film(text, &camera).unwrap_or_else(|e| panic!("{layout}: {e}"));
            assert_eq!(
                m.times_s()[0],
                if layout == "wide" { 7.0 } else { 0.0 },
                "{layout}"
            );
        }
    }

    #[test]
    fn wide_columns_are_guessed_from_tracker_names() {
        for (name, header) in [
            ("x0, y0", "time,x0,y0,x1,y1"),
            ("spaced", "Time (s), X 0 , Y 0, X 1, Y 1"),
            ("marker_x", "t,marker0_x,marker0_y,marker1_x,marker1_y"),
            (
                "DLTdv",
                "frame time,pt0_cam1_X,pt0_cam1_Y,pt1_cam1_X,pt1_cam1_Y",
            ),
        ] {
            let m = film(
                &format!("{header}\n0.0,0.0,0.0,0.3,-0.4\n0.04,0.0,0.0,0.31,-0.39\n"),
                &Camera::default(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.len(), 4, "{name}");
            assert_eq!(m.get(0.04, 1), Some([0.31, -0.39]), "{name}");
        }
    }

    #[test]
    fn a_camera_turns_pixels_into_the_model_frame() {
        // 1 mm a pixel, y down, the pin at (100, 50) px, ms, numbered from
        // 1, a lost marker written as 0,0.
        let camera = Camera {
            unit: crate::camera::LengthUnit::Px,
            metres_per_unit: Some(1e-3),
            y_axis: crate::camera::YAxis::Down,
            pin: Some([100.0, 50.0]),
            time_unit: crate::camera::TimeUnit::Ms,
            lost: Some([0.0, 0.0]),
            first_marker: 1,
            ..Camera::default()
        };
        let m = film(
            "t,marker,x,y\n0,1,100,50\n0,2,100,650\n40,1,100,50\n40,2,0,0\n",
            &camera,
        )
        .unwrap();
        assert_eq!(m.get(0.0, 0), Some([0.0, 0.0]));
        assert_eq!(m.get(0.0, 1), Some([0.0, -0.6]));
        assert_eq!(m.get(0.04, 1), None);
        assert_eq!(m.occluded_rows, 1);
        // A marker 0 where the file numbers from 1 names the setting.
        let e = film(
            "t,marker,x,y\n0,0,0.1,0.2\n",
            &Camera {
                first_marker: 1,
                ..Camera::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("first_marker = 1"), "{e}");
    }

    #[test]
    fn wide_files_that_cannot_be_read_say_what_to_name() {
        let e = film("time,x0,y0,x1\n0,0,0,1\n", &Camera::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("marker 1 has an x column but no y column"),
            "{e}"
        );
        let e = film("time,a,b\n0,0,0\n", &Camera::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("[camera] columns"), "{e}");
        // Named in [camera] columns: the i-th pair is marker i.
        let camera = Camera {
            columns: crate::camera::Columns {
                t: Some("clock".into()),
                x: Some(OneOrMany::Many(vec!["A_h".into(), "B_h".into()])),
                y: Some(OneOrMany::Many(vec!["A_v".into(), "B_v".into()])),
                marker: None,
            },
            ..Camera::default()
        };
        let m = film("clock,A_h,A_v,B_h,B_v\n0,0,0,0.3,-0.5\n", &camera).unwrap();
        assert_eq!(m.get(0.0, 1), Some([0.3, -0.5]));
    }
}
