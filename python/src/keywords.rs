//! Python's keywords as the library's inputs: each value converted by its
//! keyword's kind (`tether_sweep::workflow::identify::KEYWORDS`) straight
//! into `IdentifyInputs`, with no command-line text and no file between
//! them. A film given as a table (a pyarrow Table; the package converts
//! pandas and polars frames) crosses through the Arrow C data interface;
//! a config given as a dict becomes its TOML table in memory.

use std::path::PathBuf;

use arrow::compute::concat_batches;
use arrow::pyarrow::{FromPyArrow, Table as ArrowTable};
use arrow::record_batch::RecordBatch;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use tether_sweep::engine::Backend;
use tether_sweep::gpu::{LayoutRequest, Precision};
use tether_sweep::io::track::Measured;
use tether_sweep::named::Named;
use tether_sweep::solver::SolverKind;
use tether_sweep::workflow::identify::{self, AxisInput, GridInput, IdentifyInputs};
use tether_sweep::workflow::keywords::{ConfigInput, KeywordKind};
use tether_sweep::workflow::simulate;
use toml::{Table, Value};

/// A command's keywords described for Python (`identify`'s, which
/// `Objective` shares, or `simulate`'s): each name, kind, default (the
/// command line's text), unit, line of help, choices, and whether only a
/// whole identification takes it (not `Objective`), in order.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn keywords(
    command: &str,
) -> PyResult<
    Vec<(
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        &'static str,
        Vec<&'static str>,
        bool,
    )>,
> {
    let table = match command {
        "identify" => identify::KEYWORDS,
        "simulate" => simulate::KEYWORDS,
        "linearize" => tether_sweep::workflow::linearize::KEYWORDS,
        "dataset_synth" => tether_sweep::workflow::synth::KEYWORDS,
        "swingup" => tether_sweep::workflow::swingup::KEYWORDS,
        "design" => tether_sweep::workflow::design::KEYWORDS,
        "summarize" => tether_sweep::workflow::summarize::KEYWORDS,
        "plot" => &[],
        other => return Err(PyValueError::new_err(format!("no keywords for {other}"))),
    };
    Ok(table
        .iter()
        .map(|k| {
            let kind = match k.kind {
                KeywordKind::Switch => "switch",
                KeywordKind::Count => "count",
                KeywordKind::Number => "number",
                KeywordKind::Numbers => "numbers",
                KeywordKind::Text => "text",
                KeywordKind::Path => "path",
                KeywordKind::SecondOutput => "second_output",
                KeywordKind::Axis => "axis",
                KeywordKind::Axes => "axes",
                KeywordKind::Names => "names",
                KeywordKind::Choice => "choice",
                KeywordKind::Film => "film",
                KeywordKind::Config => "config",
                KeywordKind::Configs => "configs",
                KeywordKind::Grid => "grid",
                KeywordKind::ConfigTable => "table",
                KeywordKind::SwitchOrTable => "switch_or_table",
            };
            (
                k.name,
                kind,
                k.default,
                k.unit,
                k.help,
                k.choices(),
                k.whole_run_only,
            )
        })
        .collect())
}

/// The inputs `keywords` give (None values left unset), writing into
/// `out`.
pub fn inputs_of(keywords: &Bound<'_, PyDict>, out: PathBuf) -> PyResult<IdentifyInputs> {
    let mut inputs = IdentifyInputs {
        out,
        ..IdentifyInputs::default()
    };
    for (key, value) in keywords.iter() {
        let name: String = key.extract()?;
        if value.is_none() {
            continue;
        }
        let Some(keyword) = identify::keyword(&name) else {
            return Err(PyTypeError::new_err(format!(
                "identify() got an unexpected keyword '{name}'"
            )));
        };
        set(&mut inputs, keyword.name, keyword.kind, &value)?;
    }
    Ok(inputs)
}

fn set(
    inputs: &mut IdentifyInputs,
    name: &str,
    kind: KeywordKind,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    match (name, kind) {
        ("measured", _) => inputs.measured = Some(film(value, "measured")?),
        ("elements", _) => inputs.elements = Some(axis(name, value)?),
        ("damping", _) => inputs.damping = Some(axis(name, value)?),
        ("drag_coefficient", _) => inputs.drag_coefficient = Some(axis(name, value)?),
        ("axis", _) => inputs.axes = texts(name, value)?,
        ("surface", _) => inputs.surface = Some(text(name, value)?),
        ("grid", _) => {
            inputs.grid = Some(match value.cast::<PyDict>() {
                Ok(dict) => GridInput::Table(table_of(dict, "grid")?),
                Err(_) => GridInput::File(path(name, value)?),
            })
        }
        ("shard", _) => inputs.shard = Some(text(name, value)?),
        ("chunk_size", _) => inputs.chunk_size = Some(count(name, value)?),
        ("validate", _) => inputs.validate = count(name, value)?,
        ("solver", _) => inputs.engine.solver = Some(choice::<SolverKind>(name, value)?),
        ("backend", _) => inputs.engine.backend = choice::<Backend>(name, value)?,
        ("precision", _) => inputs.engine.precision = choice::<Precision>(name, value)?,
        ("gpu_layout", _) => inputs.engine.gpu_layout = choice::<LayoutRequest>(name, value)?,
        ("adapter", _) => inputs.engine.adapter = Some(adapter(name, value)?),
        ("config", _) => inputs.configs = configs(value)?,
        ("tip_mass", _) => inputs.tip_mass_kg = Some(number(name, value)?),
        ("length", _) => inputs.length_m = Some(number(name, value)?),
        ("tolerance", _) => inputs.tolerance_m = Some(number(name, value)?),
        ("validate_marker_tolerance", _) => {
            inputs.validate_marker_tolerance_m = number(name, value)?
        }
        ("validate_j_e_tolerance", _) => inputs.validate_j_e_tolerance = number(name, value)?,
        ("out", _) => inputs.out = path(name, value)?,
        (_, KeywordKind::Switch) => {
            let on = switch(name, value)?;
            match name {
                "resume" => inputs.resume = on,
                "no_refine" => inputs.no_refine = on,
                "exhaustive" => inputs.exhaustive = on,
                "allow_implausible" => inputs.allow_implausible = on,
                "csv" => inputs.csv = on,
                "force" => inputs.force = on,
                _ => unreachable!("every switch is set above: {name}"),
            }
        }
        (table, KeywordKind::ConfigTable) => {
            let dict = value.cast::<PyDict>().map_err(|_| {
                wrong(
                    name,
                    value,
                    &format!("a dict of the config's [{table}] keys"),
                )
            })?;
            let keys = table_of(dict, table)?;
            inputs.overlays.insert(table.into(), Value::Table(keys));
        }
        _ => unreachable!("every keyword is set above: {name}"),
    }
    Ok(())
}

/// An adapter: its index or its name's text.
pub(crate) fn adapter(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.is_instance_of::<PyInt>() {
        true => Ok(value.extract::<i64>()?.to_string()),
        false => text(name, value),
    }
}

/// A TypeError: `name` takes `what`, and was given `value`'s type.
pub(crate) fn wrong(name: &str, value: &Bound<'_, PyAny>, what: &str) -> PyErr {
    let given = value
        .get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string());
    PyTypeError::new_err(format!("{name} takes {what}, not {given}"))
}

pub(crate) fn switch(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    match value.is_instance_of::<PyBool>() {
        true => value.extract(),
        false => Err(wrong(name, value, "True or False")),
    }
}

pub(crate) fn number(name: &str, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    if value.is_instance_of::<PyBool>() || value.is_instance_of::<PyString>() {
        return Err(wrong(name, value, "a number"));
    }
    value
        .extract::<f64>()
        .map_err(|_| wrong(name, value, "a number"))
}

/// A whole number ≥ 0; a negative one is a ValueError naming its range.
pub(crate) fn count(name: &str, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if value.is_instance_of::<PyBool>() || !value.hasattr("__index__")? {
        return Err(wrong(name, value, "a whole number"));
    }
    let n: i128 = value
        .extract()
        .map_err(|_| wrong(name, value, "a whole number"))?;
    usize::try_from(n).map_err(|_| {
        PyValueError::new_err(format!(
            "invalid {name} = {n}: must be a whole number, 0 or more"
        ))
    })
}

pub(crate) fn text(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    match value.is_instance_of::<PyString>() {
        true => value.extract(),
        false => Err(wrong(name, value, "text")),
    }
}

/// Whether `value` is text or a path (`os.PathLike`).
pub(crate) fn is_path(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(value.is_instance_of::<PyString>() || value.hasattr("__fspath__")?)
}

pub(crate) fn path(name: &str, value: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    match is_path(value)? {
        true => value.extract(),
        false => Err(wrong(name, value, "a path (str or os.PathLike)")),
    }
}

pub(crate) fn texts(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if value.is_instance_of::<PyString>() {
        return Ok(vec![value.extract()?]);
    }
    let items = sequence(value).ok_or_else(|| wrong(name, value, "text or a list of text"))?;
    items.iter().map(|item| text(name, item)).collect()
}

/// The items of a list, a tuple, a range or an array (through its
/// `tolist`); None for anything else.
pub(crate) fn sequence<'py>(value: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = value.cast::<PyList>() {
        return Some(list.iter().collect());
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return Some(tuple.iter().collect());
    }
    if value.hasattr("tolist").ok()? {
        let list = value.call_method0("tolist").ok()?;
        // A 0-d array's tolist is its number.
        return match list.cast::<PyList>() {
            Ok(list) => Some(list.iter().collect()),
            Err(_) => Some(vec![list]),
        };
    }
    let range = value.py().get_type::<pyo3::types::PyRange>();
    if value.is_instance(&range).ok()? {
        return Some(value.try_iter().ok()?.filter_map(Result::ok).collect());
    }
    None
}

/// An axis: its text, a number, or numbers (a list, a range, an array).
fn axis(name: &str, value: &Bound<'_, PyAny>) -> PyResult<AxisInput> {
    if value.is_instance_of::<PyString>() {
        return Ok(AxisInput::Text(value.extract()?));
    }
    let what = "an axis: text (\"0:5000:250\"), a number or numbers";
    if value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyInt>() {
        return Ok(AxisInput::Values(vec![number(name, value)?]));
    }
    let items = sequence(value).ok_or_else(|| wrong(name, value, what))?;
    let values = items
        .iter()
        .map(|item| number(name, item).map_err(|_| wrong(name, item, what)))
        .collect::<PyResult<Vec<f64>>>()?;
    Ok(AxisInput::Values(values))
}

pub(crate) fn choice<T: Named>(name: &str, value: &Bound<'_, PyAny>) -> PyResult<T> {
    let given = text(name, value)?;
    T::parse_name(&given).map_err(|e| {
        PyValueError::new_err(format!(
            "invalid {name} = {}: must be {}",
            e.value, e.allowed
        ))
    })
}

/// A film: its file's path, or its table (a pyarrow Table, or anything
/// pyarrow reads through the Arrow C stream interface), named `label` in
/// messages.
fn film(value: &Bound<'_, PyAny>, label: &str) -> PyResult<Measured> {
    if is_path(value)? {
        return Ok(Measured::File(value.extract()?));
    }
    let table = ArrowTable::from_pyarrow_bound(value).map_err(|_| {
        wrong(
            label,
            value,
            "a file's path or a table (pandas, polars or pyarrow)",
        )
    })?;
    let (batches, schema) = table.into_inner();
    let batch = match batches.as_slice() {
        [] => RecordBatch::new_empty(schema),
        [one] => one.clone(),
        _ => concat_batches(&schema, &batches)
            .map_err(|e| PyValueError::new_err(format!("{label}: {e}")))?,
    };
    Ok(Measured::Table {
        name: label.to_string(),
        table: batch,
    })
}

/// Configs: a file's path or a dict, or a list of them.
pub(crate) fn configs(value: &Bound<'_, PyAny>) -> PyResult<Vec<ConfigInput>> {
    let one = |item: &Bound<'_, PyAny>, label: String| -> PyResult<ConfigInput> {
        match item.cast::<PyDict>() {
            Ok(dict) => config_tables(dict, label),
            Err(_) if is_path(item)? => Ok(ConfigInput::File(item.extract()?)),
            Err(_) => Err(wrong(
                &label,
                item,
                "a config's path or a dict of its tables",
            )),
        }
    };
    if value.is_instance_of::<PyDict>() || is_path(value)? {
        return Ok(vec![one(value, "config".into())?]);
    }
    let items = sequence(value).ok_or_else(|| {
        wrong(
            "config",
            value,
            "a config (a path or a dict) or a list of them",
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(k, item)| one(item, format!("config[{k}]")))
        .collect()
}

/// A config given as a dict of its tables; a film given as a table in its
/// `settings` (`measured`) is kept beside them.
pub(crate) fn config_tables(dict: &Bound<'_, PyDict>, label: String) -> PyResult<ConfigInput> {
    let mut measured = None;
    let mut table = Table::new();
    for (key, value) in dict.iter() {
        let key: String = key.extract()?;
        let at = format!("{label}[{key:?}]");
        let settings = value.cast::<PyDict>().ok().filter(|_| key == "settings");
        let converted = match settings {
            Some(settings) => {
                let mut keys = Table::new();
                for (k, v) in settings.iter() {
                    let k: String = k.extract()?;
                    match k.as_str() {
                        "measured" if !is_path(&v)? => {
                            measured = Some(film(&v, &format!("{at}[\"measured\"]"))?)
                        }
                        _ => {
                            keys.insert(k.clone(), toml_of(&v, &format!("{at}[{k:?}]"))?);
                        }
                    }
                }
                Value::Table(keys)
            }
            None => toml_of(&value, &at)?,
        };
        table.insert(key, converted);
    }
    Ok(ConfigInput::Tables {
        label,
        table,
        measured,
    })
}

pub(crate) fn table_of(dict: &Bound<'_, PyDict>, at: &str) -> PyResult<Table> {
    dict.iter()
        .map(|(k, v)| {
            let k: String = k
                .extract()
                .map_err(|_| wrong(at, &k, "a dict with text keys"))?;
            let value = toml_of(&v, &format!("{at}[{k:?}]"))?;
            Ok((k, value))
        })
        .collect()
}

/// A Python value as a TOML value: booleans, whole numbers, numbers, text
/// and paths, dicts and sequences (NumPy's scalars and arrays too).
fn toml_of(value: &Bound<'_, PyAny>, at: &str) -> PyResult<Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(Value::Integer(value.extract()?));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(value.extract()?));
    }
    if is_path(value)? {
        let path: PathBuf = value.extract()?;
        return Ok(Value::String(path.to_string_lossy().into_owned()));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        return Ok(Value::Table(table_of(dict, at)?));
    }
    // NumPy's scalars (and 0-d arrays): their Python value.
    let zero_d = value
        .getattr("ndim")
        .and_then(|n| n.extract::<usize>())
        .is_ok_and(|n| n == 0);
    if zero_d && value.hasattr("item")? {
        return toml_of(&value.call_method0("item")?, at);
    }
    match sequence(value) {
        Some(items) => items
            .iter()
            .map(|item| toml_of(item, at))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array),
        None => Err(wrong(at, value, "a number, text, a list or a dict")),
    }
}
