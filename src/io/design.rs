//! design.parquet: one row per design point.

use std::collections::BTreeMap;
use std::path::Path;

use super::IoError;
use super::table::{Column, write_columns};
use crate::sweep::design::{Design, Prediction};

/// Writes the predictions: each design axis's value (named as
/// [`Design::axis_column`], in its unit), each estimated parameter's
/// predicted standard error `se_NAME` (in the parameter's unit; null
/// where the films do not determine the parameters apart), the
/// correlation of the first two (D and C_D) and the compared coordinates.
pub fn write_design(
    path: &Path,
    design: &Design,
    predictions: &[Prediction],
    metadata: &BTreeMap<String, String>,
) -> Result<(), IoError> {
    let mut columns = Vec::new();
    for (i, axis) in design.axes.iter().enumerate() {
        columns.push(Column::f64(
            design.axis_column(axis),
            axis.axis().unit(),
            predictions.iter().map(|p| p.values[i]).collect(),
        ));
    }
    let finite = |v: f64| v.is_finite().then_some(v);
    for (i, e) in design.estimated.iter().enumerate() {
        columns.push(Column::optional_f64(
            format!("se_{}", design.estimate_name(e)),
            e.axis.unit(),
            predictions
                .iter()
                .map(|p| finite(p.standard_errors[i]))
                .collect(),
        ));
    }
    columns.push(Column::optional_f64(
        "correlation",
        "1",
        predictions.iter().map(|p| finite(p.correlation)).collect(),
    ));
    columns.push(Column::i64(
        "observations",
        predictions.iter().map(|p| p.observations as i64).collect(),
    ));
    write_columns(path, columns, metadata)
}
