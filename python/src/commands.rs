//! Python's keywords as the inputs of the commands besides `identify`
//! (`simulate`, `linearize`, `dataset synth`, `swingup`, `design`,
//! `summarize`): each value converted by
//! its keyword's kind (`keywords`) straight into the command's library
//! builder, with no command-line text and no file between them.

use std::path::PathBuf;

use pyo3::exceptions::PyTypeError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use tether_sweep::engine::{Backend, EngineOptions};
use tether_sweep::gpu::{LayoutRequest, Precision};
use tether_sweep::io::track::TrackLayout;
use tether_sweep::solver::SolverKind;
use tether_sweep::workflow::bodies::FormulationKind;
use tether_sweep::workflow::design::{self, DesignInputs};
use tether_sweep::workflow::keywords::{ConfigInput, TetherInputs};
use tether_sweep::workflow::linearize::{self, LinearizeInputs};
use tether_sweep::workflow::simulate::{self, SimulateInputs, SimulateScenario};
use tether_sweep::workflow::summarize::{self, SummarizeRequest};
use tether_sweep::workflow::swingup::{self, SwingupInputs};
use tether_sweep::workflow::synth::{self, SynthInputs};
use toml::Value;

use crate::keywords::{
    adapter, choice, config_tables, configs, count, number, path, sequence, switch, table_of,
    texts, wrong,
};

/// `simulate`'s inputs `keywords` give (None values left unset),
/// writing to `out`.
pub fn simulate_inputs_of(keywords: &Bound<'_, PyDict>, out: PathBuf) -> PyResult<SimulateInputs> {
    let mut inputs = SimulateInputs {
        out,
        ..SimulateInputs::default()
    };
    each_given(keywords, simulate::KEYWORDS, "simulate", |name, value| {
        match name {
            _ if set_engine(&mut inputs.engine, name, value)? => {}
            "config" => inputs.config = Some(config(name, value)?),
            "scenario" => inputs.scenario = Some(choice::<SimulateScenario>(name, value)?),
            "formulation" => inputs.formulation = Some(choice::<FormulationKind>(name, value)?),
            "feedback_gains" => inputs.feedback_gains = Some(numbers(name, value)?),
            "alpha" => inputs.alpha = Some(number(name, value)?),
            "curvature" => inputs.curvature_per_m = Some(number(name, value)?),
            "axis" => inputs.axes = texts(name, value)?,
            "tether" => match value.cast::<PyDict>() {
                Ok(_) => overlay(&mut inputs.overlays, name, value)?,
                Err(_) => {
                    inputs.tether = switch(name, value)
                        .map_err(|_| wrong(name, value, "True, False or a dict of [tether] keys"))?
                }
            },
            "start_offset_m" => inputs.start_offset_m = Some(number(name, value)?),
            _ if set_tether(&mut inputs.tether_inputs, name, value)? => {}
            "step" => inputs.step_s = Some(number(name, value)?),
            "tolerance" => inputs.tolerance = Some(number(name, value)?),
            "duration" => inputs.duration_s = Some(number(name, value)?),
            "winch_periods" => inputs.winch_periods_s = Some(numbers(name, value)?),
            "winch_amplitude" => inputs.winch_amplitude_m = Some(number(name, value)?),
            "out" => inputs.out = path(name, value)?,
            "state" => inputs.state = Some(path(name, value)?),
            "force" => inputs.force = switch(name, value)?,
            table @ ("settings" | "camera") => overlay(&mut inputs.overlays, table, value)?,
            _ => unreachable!("every keyword is set above: {name}"),
        }
        Ok(())
    })?;
    Ok(inputs)
}

/// One of the engine's inputs (`solver`, `backend`, `precision`,
/// `gpu_layout`, `adapter`) onto `engine`; false for any other keyword.
fn set_engine(engine: &mut EngineOptions, name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    match name {
        "solver" => engine.solver = Some(choice::<SolverKind>(name, value)?),
        "backend" => engine.backend = choice::<Backend>(name, value)?,
        "precision" => engine.precision = choice::<Precision>(name, value)?,
        "gpu_layout" => engine.gpu_layout = choice::<LayoutRequest>(name, value)?,
        "adapter" => engine.adapter = Some(adapter(name, value)?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// One of the tether's own inputs (`elements`, …, `no_rotary_inertia`)
/// onto `tether`; false for any other keyword.
fn set_tether(tether: &mut TetherInputs, name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    match name {
        "elements" => {
            let n = count(name, value)?;
            tether.elements = Some(i64::try_from(n).unwrap_or(i64::MAX));
        }
        "damping" => tether.damping_pa_s = Some(number(name, value)?),
        "drag_coefficient" => tether.drag_coefficient = Some(number(name, value)?),
        "tip_mass" => tether.tip_mass_kg = Some(number(name, value)?),
        "length" => tether.length_m = Some(number(name, value)?),
        "no_rotary_inertia" => tether.no_rotary_inertia = switch(name, value)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Numbers: a list, a tuple or an array of them, or their comma list.
fn numbers(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let what = "numbers (a list, or their comma list \"1,2\")";
    if value.is_instance_of::<PyString>() {
        let text: String = value.extract()?;
        return text
            .split(',')
            .map(|v| {
                v.trim().parse::<f64>().map_err(|_| {
                    PyValueError::new_err(format!("invalid {name} = '{text}': must be {what}"))
                })
            })
            .collect();
    }
    let items = sequence(value).ok_or_else(|| wrong(name, value, what))?;
    items.iter().map(|item| number(name, item)).collect()
}

/// `set` with each keyword of `keywords` given (None values are unset),
/// named as `command`'s `table` names it; any other is a TypeError.
fn each_given<'py>(
    keywords: &Bound<'py, PyDict>,
    table: &[tether_sweep::workflow::keywords::Keyword],
    command: &str,
    mut set: impl FnMut(&'static str, &Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    for (key, value) in keywords.iter() {
        let name: String = key.extract()?;
        if !value.is_none() {
            set(known(table, command, &name)?, &value)?;
        }
    }
    Ok(())
}

/// The keyword `name` of `command`'s `table`, or a TypeError.
fn known(
    table: &[tether_sweep::workflow::keywords::Keyword],
    command: &str,
    name: &str,
) -> PyResult<&'static str> {
    table
        .iter()
        .find(|k| k.name == name)
        .map(|k| k.name)
        .ok_or_else(|| {
            PyTypeError::new_err(format!("{command}() got an unexpected keyword '{name}'"))
        })
}

/// `linearize`'s inputs `keywords` give (None values left unset),
/// writing into `out`.
pub fn linearize_inputs_of(
    keywords: &Bound<'_, PyDict>,
    out: PathBuf,
) -> PyResult<LinearizeInputs> {
    let mut inputs = LinearizeInputs {
        out,
        ..LinearizeInputs::default()
    };
    each_given(keywords, linearize::KEYWORDS, "linearize", |name, value| {
        match name {
            _ if set_tether(&mut inputs.tether_inputs, name, value)? => {}
            "frequency_min" => inputs.frequency_min_hz = number(name, value)?,
            "frequency_max" => inputs.frequency_max_hz = number(name, value)?,
            "frequency_points" => inputs.frequency_points = count(name, value)?,
            "modes" => inputs.modes = count(name, value)?,
            "out" => inputs.out = path(name, value)?,
            "force" => inputs.force = switch(name, value)?,
            _ => unreachable!("every keyword is set above: {name}"),
        }
        Ok(())
    })?;
    Ok(inputs)
}

/// `dataset synth`'s inputs `keywords` give (None values left unset),
/// writing to `out`, the call recorded as `command`.
pub fn synth_inputs_of(
    keywords: &Bound<'_, PyDict>,
    out: PathBuf,
    command: String,
) -> PyResult<SynthInputs> {
    let mut inputs = SynthInputs {
        out,
        command,
        ..SynthInputs::default()
    };
    each_given(keywords, synth::KEYWORDS, "dataset_synth", |name, value| {
        match name {
            _ if set_tether(&mut inputs.tether_inputs, name, value)? => {}
            "noise" => inputs.noise_m = number(name, value)?,
            "seed" => {
                let seed = count(name, value)?;
                inputs.seed = u64::try_from(seed).unwrap_or(u64::MAX);
            }
            "tolerance" => inputs.tolerance_m = number(name, value)?,
            "layout" => inputs.layout = choice::<TrackLayout>(name, value)?,
            "config" => inputs.config = Some(config(name, value)?),
            "out" => inputs.out = path(name, value)?,
            "force" => inputs.force = switch(name, value)?,
            table @ ("tether" | "settings" | "camera") => {
                overlay(&mut inputs.overlays, table, value)?
            }
            _ => unreachable!("every keyword is set above: {name}"),
        }
        Ok(())
    })?;
    Ok(inputs)
}

/// A config: a file's path, or a dict of its tables.
fn config(name: &str, value: &Bound<'_, PyAny>) -> PyResult<ConfigInput> {
    match value.cast::<PyDict>() {
        Ok(dict) => config_tables(dict, "config".into()),
        Err(_) => Ok(ConfigInput::File(path(name, value).map_err(|_| {
            wrong(name, value, "a config's path or a dict of its tables")
        })?)),
    }
}

/// A config's table given as a dict (`settings={...}`), over the config's.
fn overlay(overlays: &mut toml::Table, table: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let dict = value.cast::<PyDict>().map_err(|_| {
        wrong(
            table,
            value,
            &format!("a dict of the config's [{table}] keys"),
        )
    })?;
    let keys = table_of(dict, table)?;
    overlays.insert(table.into(), Value::Table(keys));
    Ok(())
}

/// `swingup`'s inputs `keywords` give (None values left unset), writing
/// into `out`.
pub fn swingup_inputs_of(keywords: &Bound<'_, PyDict>, out: PathBuf) -> PyResult<SwingupInputs> {
    let mut inputs = SwingupInputs {
        out,
        ..SwingupInputs::default()
    };
    each_given(keywords, swingup::KEYWORDS, "swingup", |name, value| {
        match name {
            _ if set_engine(&mut inputs.engine, name, value)? => {}
            "elements" => inputs.elements = count(name, value)?,
            "damping" => inputs.damping_pa_s = number(name, value)?,
            "drag_coefficient" => inputs.drag_coefficient = number(name, value)?,
            "tip_mass" => inputs.tip_mass_kg = number(name, value)?,
            "winch_amplitude" => inputs.winch_amplitude_m = number(name, value)?,
            "waypoints" => inputs.waypoints_m = Some(numbers(name, value)?),
            "duration" => inputs.duration_s = number(name, value)?,
            "bits_per_gene" => {
                let bits = count(name, value)?;
                inputs.bits_per_gene = u32::try_from(bits).unwrap_or(u32::MAX);
            }
            "period_min" => inputs.period_min_s = number(name, value)?,
            "period_max" => inputs.period_max_s = number(name, value)?,
            "population" => inputs.population = count(name, value)?,
            "generations" => inputs.generations = count(name, value)?,
            "seed" => inputs.seed = u64::try_from(count(name, value)?).unwrap_or(u64::MAX),
            "tournament_size" => inputs.tournament_size = count(name, value)?,
            "crossover_rate" => inputs.crossover_rate = number(name, value)?,
            "mutation_rate" => inputs.mutation_rate = Some(number(name, value)?),
            "exhaustive" => inputs.exhaustive = switch(name, value)?,
            "tolerance" => inputs.tolerance_m = number(name, value)?,
            "out" => inputs.out = path(name, value)?,
            "force" => inputs.force = switch(name, value)?,
            _ => unreachable!("every keyword is set above: {name}"),
        }
        Ok(())
    })?;
    Ok(inputs)
}

/// `design`'s inputs `keywords` give (None values left unset), writing
/// into `out`.
pub fn design_inputs_of(keywords: &Bound<'_, PyDict>, out: PathBuf) -> PyResult<DesignInputs> {
    let mut inputs = DesignInputs {
        out,
        ..DesignInputs::default()
    };
    each_given(keywords, design::KEYWORDS, "design", |name, value| {
        match name {
            _ if set_tether(&mut inputs.tether_inputs, name, value)? => {}
            "config" => inputs.configs = configs(value)?,
            "noise" => inputs.noise_m = number(name, value)?,
            "axis" => inputs.axes = texts(name, value)?,
            "estimate" => inputs.estimates = texts(name, value)?,
            "backend" => inputs.backend = choice::<Backend>(name, value)?,
            "adapter" => inputs.adapter = Some(adapter(name, value)?),
            "tolerance" => inputs.tolerance_m = Some(number(name, value)?),
            "out" => inputs.out = path(name, value)?,
            "force" => inputs.force = switch(name, value)?,
            table @ ("tether" | "settings" | "camera") => {
                overlay(&mut inputs.overlays, table, value)?
            }
            _ => unreachable!("every keyword is set above: {name}"),
        }
        Ok(())
    })?;
    Ok(inputs)
}

/// `summarize`'s request for the folder `dir` and its `keywords` (None
/// values left unset).
pub fn summarize_request_of(
    dir: PathBuf,
    keywords: &Bound<'_, PyDict>,
) -> PyResult<SummarizeRequest> {
    let mut request = SummarizeRequest {
        dir,
        measured: None,
        out: None,
        refine: true,
        allow_implausible: false,
        force: false,
    };
    each_given(keywords, summarize::KEYWORDS, "summarize", |name, value| {
        match name {
            "measured" => request.measured = Some(path(name, value)?),
            "out" => request.out = Some(path(name, value)?),
            "no_refine" => request.refine = !switch(name, value)?,
            "allow_implausible" => request.allow_implausible = switch(name, value)?,
            "force" => request.force = switch(name, value)?,
            _ => unreachable!("every keyword is set above: {name}"),
        }
        Ok(())
    })?;
    Ok(request)
}
