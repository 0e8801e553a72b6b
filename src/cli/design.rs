//! `tether-sweep design`: plan the film before filming it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use toml::{Table, Value};

use super::UsageError;
use super::args::{TETHER_FLAGS, TetherArgs, config_error, name_flags, named};
use super::identify::say;
use crate::engine::{Backend, EngineOptions};
use crate::io::config::{self, ConfigError, FilmConfig};
use crate::scenario::SolverSettings;
use crate::sweep::design::{Design, Estimated, PlannedFilm};
use crate::sweep::{Axis, Parameter, ScopedAxis};
use crate::text::design as text;
use crate::workflow::WorkflowError;
use crate::workflow::design::{
    DesignRequest, PlannedRelease, planned_from_measured, require_drop, run as run_design,
};

#[derive(Debug, Args)]
pub struct DesignArgs {
    /// A planned film, as `simulate --config` takes it: [tether] and
    /// [settings] (initial_angle_deg, pin_m, release_time_s,
    /// marker_arc_lengths_m, and frame_interval_s with duration_s or
    /// frame_times_s), or the frames and markers of a film already taken,
    /// `measured = "FILE"` in [settings] (read through [camera]; its
    /// positions are not used). Repeat it for several films of one tether,
    /// each named by its file stem or `name = "…"` in [settings]. None: the
    /// paper's drop (docs/model.md §4.1).
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// The tether as you expect it: n, D and C_D (required, here or in
    /// the configs' [tether]), tip mass and length.
    #[command(flatten)]
    pub tether: TetherArgs,
    /// Standard deviation of the tracker's noise on each marker
    /// coordinate [m], > 0.
    #[arg(long, value_name = "M", default_value_t = 5e-4)]
    pub noise: f64,
    /// A design axis, NAME=AXIS (A:B:STEP or V1,V2,…): frame_interval_s,
    /// duration_s, markers (how many, evenly spaced from the pin to the
    /// free end) or any parameter (initial_angle_deg, tip_mass_kg,
    /// length_m, …), in every film, or in one as FILM.NAME. Repeatable:
    /// every combination is a design point.
    #[arg(long = "axis", value_name = "NAME=AXIS")]
    pub axes: Vec<String>,
    /// Also estimate this parameter (e.g. release_time_s: an unknown
    /// release widens the others' errors). A film's own parameter
    /// (release_time_s, initial_angle_deg, pin_x_m, pin_y_m) is one per
    /// film. D and C_D are always estimated.
    #[arg(long = "estimate", value_name = "NAME")]
    pub estimates: Vec<String>,
    /// Where the simulations run: `cpu` (the reference solver on every
    /// core), `gpu` (its fixed-step scheme in f64, even on a CPU emulation),
    /// or `auto`: the faster for this design, of the CPU and a hardware GPU.
    #[arg(long, value_parser = named::<Backend>(), default_value = "auto")]
    pub backend: Backend,
    /// GPU adapter: its index or part of its name (`tether-sweep adapters`).
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// The reference solver's local error tolerance [m] for the
    /// sensitivities on the CPU. [default: the solver's, 1e-9]
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub tolerance: Option<f64>,
    /// Output directory: design.parquet and the figure design (.svg, .png).
    #[arg(long, value_name = "DIR", default_value = "design-results")]
    pub out: PathBuf,
    /// Replace the results of an earlier run in DIR.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: DesignArgs) -> Result<()> {
    let request = args.request()?;
    let design = &request.design;
    say(|out| text::write_header(out, design));
    let report = run_design(&request).map_err(|e| match e {
        // A value a design axis set: named as the axis.
        WorkflowError::Input(input)
            if design.axes.iter().any(|a| a.axis().column() == input.field) =>
        {
            WorkflowError::flag(&format!("--axis {}", input.field), input)
        }
        other => name_flags(other, &FLAGS),
    })?;
    say(|out| text::write_report(out, design, &report));
    Ok(())
}

/// The flags of the values the workflow checks, by their field names.
const FLAGS: [(&str, &str); 3] = [
    ("noise", "--noise"),
    ("estimate", "--estimate"),
    ("axis", "--axis"),
];

impl DesignArgs {
    fn request(&self) -> Result<DesignRequest> {
        let films = self.films()?;
        let mut design = Design {
            films,
            axes: Vec::new(),
            estimated: vec![
                Estimated::shared(Axis::Damping),
                Estimated::shared(Axis::Drag),
            ],
            noise_m: self.noise,
        };
        for text in &self.axes {
            let axis = self.axis(&design, text)?;
            design.axes.push(axis);
        }
        for name in &self.estimates {
            let estimated = design
                .estimates(name)
                .map_err(|e| WorkflowError::flag("--estimate", e))?;
            design.estimated.extend(estimated);
        }
        let solver = SolverSettings::checked_reference(self.tolerance)
            .map_err(|e| WorkflowError::flag("--tolerance", e))?;
        Ok(DesignRequest {
            design,
            solver,
            engine: EngineOptions {
                backend: self.backend,
                adapter: self.adapter.clone(),
                ..EngineOptions::default()
            },
            out: self.out.clone(),
            force: self.force,
        })
    }

    /// One `--axis NAME=AXIS` (or `FILM.NAME=AXIS`).
    fn axis(&self, design: &Design, text: &str) -> Result<ScopedAxis> {
        let names: Vec<&str> = design.films.iter().map(|f| f.name.as_str()).collect();
        ScopedAxis::parse(text, &names, Axis::parse_design)
            .map_err(|e| WorkflowError::flag(&format!("--{}", e.field), e).into())
    }

    /// The planned films: each config's, or the paper's drop.
    fn films(&self) -> Result<Vec<PlannedFilm>> {
        let configs: Vec<Option<&Path>> = if self.config.is_empty() {
            vec![None]
        } else {
            self.config.iter().map(|p| Some(p.as_path())).collect()
        };
        configs.into_iter().map(|c| self.film(c)).collect()
    }

    fn film(&self, path: Option<&Path>) -> Result<PlannedFilm> {
        let mut table = match path {
            Some(p) => config::read_table(p)
                .and_then(|t| config::experiment_only(&t, p, "design", "--tolerance").map(|()| t))
                .map_err(|e| UsageError(e.to_string()))?,
            None => Table::new(),
        };
        self.require_assumed_values(&table, path)?;
        let tether = self.tether.table();
        let mut overrides = Table::new();
        overrides.insert("tether".into(), Value::Table(tether.clone()));
        config::merge(&mut table, overrides);
        let measured = table
            .get("settings")
            .and_then(Value::as_table)
            .is_some_and(|s| s.contains_key("measured"));
        let Some(path) = path else {
            let cfg = config::resolve(table).map_err(|e| match e {
                ConfigError::Input(input) => name_flags(input.into(), &TETHER_FLAGS).into(),
                other => anyhow::Error::from(UsageError(other.to_string())),
            })?;
            return Ok(PlannedFilm {
                name: "drop".into(),
                tether: cfg.tether,
                scenario: cfg.scenario,
            });
        };
        if measured {
            // A film already taken: read as identify reads it.
            let film = FilmConfig::from_table(table, path, Table::new())
                .map_err(|e| config_error(e, path, &TETHER_FLAGS, &tether))?;
            require_drop(&film.scenario, path)?;
            let release = match self.release_axis(&film.name) {
                Some(values) => PlannedRelease::Axis(values),
                None if film.release_given => PlannedRelease::Configured,
                None => PlannedRelease::FirstFrame,
            };
            let file = film.measured.as_ref().map(ToString::to_string);
            let planned = planned_from_measured(film, &release)
                .map_err(|e| UsageError(format!("{}: {e}", file.unwrap_or_default())))?;
            say(|out| text::write_release(out, &planned, &release, path));
            return Ok(planned);
        }
        // A film to be made: its frames are its config's.
        let (name, _) =
            config::film_keys(&mut table, path).map_err(|e| UsageError(e.to_string()))?;
        let cfg =
            config::resolve(table).map_err(|e| config_error(e, path, &TETHER_FLAGS, &tether))?;
        require_drop(&cfg.scenario, path)?;
        Ok(PlannedFilm {
            name,
            tether: cfg.tether,
            scenario: cfg.scenario,
        })
    }

    /// D and C_D are the values design predicts at: from the flags or the
    /// config's [tether].
    fn require_assumed_values(&self, table: &Table, path: Option<&Path>) -> Result<()> {
        let in_config = |key: &str| {
            table
                .get("tether")
                .and_then(Value::as_table)
                .is_some_and(|t| t.contains_key(key))
        };
        for (key, flag, given) in [
            (
                Axis::Damping.column(),
                "--damping",
                self.tether.damping.is_some(),
            ),
            (
                Axis::Drag.column(),
                "--drag-coefficient",
                self.tether.drag_coefficient.is_some(),
            ),
        ] {
            if !given && !in_config(key) {
                let place = path.map_or_else(String::new, |p| {
                    format!(" (or {key} in [tether] of {})", p.display())
                });
                Err(UsageError(format!(
                    "design predicts errors at the values you expect: give {flag}{place}"
                )))?;
            }
        }
        Ok(())
    }

    /// The values of an `--axis` over film `film`'s release time, its own
    /// (`FILM.release_time_s`) or every film's; one that does not parse is
    /// left to [`Self::axis`] to refuse.
    fn release_axis(&self, film: &str) -> Option<Vec<f64>> {
        let release = Axis::Parameter(Parameter::ReleaseTimeS);
        self.axes.iter().rev().find_map(|text| {
            let scoped = ScopedAxis::parse(text, &[film], Axis::parse_design).ok()?;
            (scoped.axis() == release).then_some(scoped.values.values)
        })
    }
}
