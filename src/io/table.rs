//! Tables of named, unit-carrying columns written as one Parquet file.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{Field, Schema};

use super::track::{UNIT_KEY, write_batch};
use super::{IoError, PendingFile};

/// One column: name, unit, values.
pub struct Column {
    /// Fixed names mostly; a design axis's or a film's parameter is named
    /// at run time.
    pub name: Cow<'static, str>,
    pub unit: &'static str,
    pub values: ArrayRef,
}

impl Column {
    pub fn f64(name: impl Into<Cow<'static, str>>, unit: &'static str, values: Vec<f64>) -> Self {
        Self {
            name: name.into(),
            unit,
            values: Arc::new(Float64Array::from(values)),
        }
    }
    pub fn i32(name: impl Into<Cow<'static, str>>, values: Vec<i32>) -> Self {
        Self {
            name: name.into(),
            unit: "1",
            values: Arc::new(Int32Array::from(values)),
        }
    }
    /// f64 with missing values (e.g. J_e of a diverged simulation).
    pub fn optional_f64(
        name: impl Into<Cow<'static, str>>,
        unit: &'static str,
        values: Vec<Option<f64>>,
    ) -> Self {
        Self {
            name: name.into(),
            unit,
            values: Arc::new(Float64Array::from(values)),
        }
    }
    pub fn i64(name: impl Into<Cow<'static, str>>, values: Vec<i64>) -> Self {
        Self {
            name: name.into(),
            unit: "1",
            values: Arc::new(Int64Array::from(values)),
        }
    }
    /// Booleans as Arrow's boolean type, so that readers filter with them
    /// (`r[r.at_bound]` in pandas) instead of comparing text.
    pub fn boolean(name: impl Into<Cow<'static, str>>, values: Vec<bool>) -> Self {
        Self {
            name: name.into(),
            unit: "",
            values: Arc::new(BooleanArray::from(values)),
        }
    }
    pub fn text(name: impl Into<Cow<'static, str>>, values: Vec<String>) -> Self {
        Self {
            name: name.into(),
            unit: "",
            values: Arc::new(StringArray::from(values)),
        }
    }
    /// Text with missing values (e.g. the GPU layout of a CPU run).
    pub fn optional_text(name: impl Into<Cow<'static, str>>, values: Vec<Option<&str>>) -> Self {
        Self {
            name: name.into(),
            unit: "",
            values: Arc::new(StringArray::from(values)),
        }
    }
}

/// Writes columns as one Parquet table at `path`, atomically.
pub fn write_columns(
    path: &Path,
    columns: Vec<Column>,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let mut pending = PendingFile::create(path)?;
    write_columns_to(&mut pending, columns, metadata)?;
    pending.commit()
}

/// [`write_columns`] into a file already claimed, left to its caller to
/// commit (with the job's other outputs).
pub fn write_columns_to(
    pending: &mut PendingFile,
    columns: Vec<Column>,
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let path = pending.target().to_owned();
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| {
            let nullable = c.values.null_count() > 0;
            let field = Field::new(c.name.as_ref(), c.values.data_type().clone(), nullable);
            if c.unit.is_empty() {
                field
            } else {
                field.with_metadata([(UNIT_KEY, c.unit)])
            }
        })
        .collect();
    let schema = Arc::new(Schema::new(fields).with_metadata(metadata.clone()));
    let batch = RecordBatch::try_new(schema, columns.into_iter().map(|c| c.values).collect())
        .map_err(|e| IoError::Format {
            path,
            message: e.to_string(),
        })?;
    write_batch(pending, &batch, metadata)
}
