//! The identification as the user asks for it: its films, grid and
//! settings, and its builders.

use std::path::PathBuf;

use crate::engine::EngineOptions;
use crate::error::InputError;
use crate::io::config::FilmConfig;
use crate::io::track::Measured;
use crate::model::TetherParams;
use crate::sweep::validation::{DEFAULT_J_E_TOLERANCE, DEFAULT_MARKER_TOLERANCE_M};
use crate::sweep::{Axis, Grid, ScopedAxis, Shard};
use crate::workflow::WorkflowError;
use crate::workflow::film::Film;

/// An identification, as the user asked for it: the films, the grid they
/// share, and how to run and check it.
#[derive(Debug, Clone)]
pub struct IdentifyRequest {
    /// One film, or several of one tether (each with its own experiment,
    /// camera and own axes).
    pub films: Vec<Film>,
    /// The shared axes: n, D, C_D and any parameter (a single film's
    /// release time too; several films' own parameters are their own axes).
    pub grid: Grid,
    /// Run only this shard (its parts are all it writes; `summarize`
    /// merges them).
    pub shard: Option<Shard>,
    /// Finish an interrupted run of the same request from its saved chunks.
    pub resume: bool,
    /// Candidates per saved chunk; default 16 per CPU thread, 1024 on a GPU.
    pub chunk_size: Option<usize>,
    /// Where and how the candidates run.
    pub engine: EngineOptions,
    /// Every parameter the grid does not vary (tip mass, length, …).
    pub base: TetherParams,
    /// The reference solver's local error tolerance \[m\] for the sweep,
    /// the best fit and the refinement alike (`--tolerance`). None:
    /// chosen from the data ([`crate::sweep::accuracy`]): a first pass at
    /// the scouting tolerance, then the candidates near the best, the best
    /// fit and the refinement at the tolerance whose track error moves J_e
    /// by a tenth of the confidence threshold.
    pub tolerance_m: Option<f64>,
    /// Candidates (per film) re-run on the reference solver after a sweep
    /// on another solver; 0 skips the check.
    pub validate: usize,
    pub validate_marker_tolerance_m: f64,
    pub validate_j_e_tolerance: f64,
    /// Score every candidate to the end of its film (`--exhaustive`)
    /// instead of abandoning the hopeless ([`crate::sweep::abandon`]).
    pub exhaustive: bool,
    /// After the grid, refine the best candidate's continuous axes (and
    /// every film's own) by Levenberg–Marquardt on the reference solver
    /// (`sweep::refine`) and write refined.parquet.
    pub refine: bool,
    /// Sweep even when a measured first frame is far from the
    /// experiment's initial shape, and exit 0 with a fit that does not
    /// explain the data.
    pub allow_implausible: bool,
    /// The surface figure's two axes (results columns); None: D and C_D.
    pub surface_axes: Option<[Axis; 2]>,
    /// Also write results.csv.
    pub csv: bool,
    pub out: PathBuf,
    pub force: bool,
}

impl IdentifyRequest {
    /// The identification of the film in `measured` (in the model's frame,
    /// of docs/model.md §4.1's drop) over `grid` into `out`, with the
    /// CLI's defaults: `--backend auto`, f32 on a GPU, the job's default
    /// solver, docs/model.md §1 for the parameters the grid does not vary,
    /// three candidates validated, no CSV, no shard, no resume, no
    /// overwrite.
    pub fn new(measured: impl Into<Measured>, grid: Grid, out: impl Into<PathBuf>) -> Self {
        Self::of_films(vec![Film::new(measured)], grid, out)
    }

    /// The identification of `films` (one, or several of one tether) over
    /// `grid` into `out`, with [`Self::new`]'s defaults.
    pub fn of_films(films: Vec<Film>, grid: Grid, out: impl Into<PathBuf>) -> Self {
        Self {
            films,
            grid,
            shard: None,
            resume: false,
            chunk_size: None,
            engine: EngineOptions::default(),
            base: TetherParams::default(),
            tolerance_m: None,
            exhaustive: false,
            validate: 3,
            validate_marker_tolerance_m: DEFAULT_MARKER_TOLERANCE_M,
            validate_j_e_tolerance: DEFAULT_J_E_TOLERANCE,
            allow_implausible: false,
            surface_axes: None,
            refine: true,
            csv: false,
            out: out.into(),
            force: false,
        }
    }

    /// The identification of a config's film ([`FilmConfig`]: its measured
    /// file, experiment, tether, camera and declared frames) over `grid`
    /// into `out`, with [`Self::new`]'s defaults otherwise. A film whose
    /// config names no measured file is refused.
    pub fn of_film(
        config: FilmConfig,
        grid: Grid,
        out: impl Into<PathBuf>,
    ) -> Result<Self, WorkflowError> {
        Self::of_configs(vec![config], grid, out)
    }

    /// The identification of several configs' films of one tether (or
    /// one config's), each config with its measured file, experiment,
    /// camera and declared frames, over `grid` into `out`, with
    /// [`Self::new`]'s defaults otherwise. Configs that describe different
    /// tethers are refused, naming the keys that differ.
    pub fn of_configs(
        configs: Vec<FilmConfig>,
        grid: Grid,
        out: impl Into<PathBuf>,
    ) -> Result<Self, WorkflowError> {
        let Some(first) = configs.first() else {
            return Err(WorkflowError::Usage(
                "an identification fits one film or more; no config given".into(),
            ));
        };
        if let Some(other) = configs.iter().find(|c| c.tether != first.tether) {
            return Err(WorkflowError::Usage(format!(
                "film {} describes another tether than film {} ([tether] {}): the films of one identification share one tether",
                other.name,
                first.name,
                differing_keys(&other.tether, &first.tether)
            )));
        }
        let films = configs
            .iter()
            .map(Film::of_config)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            base: first.tether.clone(),
            ..Self::of_films(films, grid, out)
        })
    }

    /// Adds an axis given as text (`--axis`'s): `NAME=AXIS` on the grid (n,
    /// D, C_D or any parameter: `release_time_s=0:0.03:0.005`),
    /// `FILM.NAME=AXIS` on that film's own axes where there are several
    /// films (`shallow.release_time_s=0:0.03:0.005`; with one film, on the
    /// grid as without its name). An error names the axis (`axis`, or
    /// `axis NAME` for a value of it).
    pub fn add_axis(&mut self, text: &str) -> Result<(), InputError> {
        let names: Vec<&str> = self.films.iter().map(|f| f.name.as_str()).collect();
        let scoped = ScopedAxis::parse(text, &names, Axis::parse)?;
        self.add(scoped)
    }

    /// Adds an axis: on the grid, or on its film's own axes where there
    /// are several films.
    pub fn add(&mut self, scoped: ScopedAxis) -> Result<(), InputError> {
        let axis = scoped.values;
        let column = axis.axis.column();
        let film = match scoped.film {
            Some(k) if !self.single() => k,
            _ => {
                self.grid = self
                    .grid
                    .clone()
                    .with(axis)
                    .map_err(|e| match e.field.as_str() {
                        "axis" => e,
                        _ => InputError {
                            field: format!("axis {column}"),
                            ..e
                        },
                    })?;
                return Ok(());
            }
        };
        let Some(film) = self.films.get_mut(film) else {
            return Err(InputError::new(
                "axis",
                column,
                "an axis of one of the films",
            ));
        };
        if film.own.iter().any(|a| a.axis == axis.axis) {
            return Err(InputError::new(
                "axis",
                format!("{}.{column}", film.name),
                "each film's parameter on one axis",
            ));
        }
        film.own.push(axis);
        Ok(())
    }

    /// Whether its tables keep a single film's layout: one film.
    pub fn single(&self) -> bool {
        self.films.len() == 1
    }
}

/// The [tether] keys whose values differ between two tethers.
fn differing_keys(a: &TetherParams, b: &TetherParams) -> String {
    let (a, b) = (json_value(a), json_value(b));
    let keys: Vec<String> = a
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, v)| b.get(k.as_str()) != Some(v))
        .map(|(k, v)| format!("{k} = {v} against {}", b[k.as_str()]))
        .collect();
    keys.join(", ")
}

fn json_value(t: &TetherParams) -> serde_json::Value {
    serde_json::to_value(t).expect("plain data serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_given_as_text_go_on_the_grid_or_their_film() {
        let grid = Grid::parse("4", "1000", "0.8").unwrap();
        let mut one = IdentifyRequest::new("a.csv", grid.clone(), "out");
        one.add_axis("release_time_s=0:0.01:0.005").unwrap();
        assert_eq!(one.grid.len(), 3);
        let e = one.add_axis("release_time_s").unwrap_err();
        assert_eq!(e.field, "axis");
        assert!(e.allowed.contains("NAME=AXIS"), "{e}");
        // One film may be named, as design's advice names it: its axes
        // are the grid's.
        let mut named = IdentifyRequest::new("a.csv", grid.clone(), "out");
        named.add_axis("a.release_time_s=0,0.01").unwrap();
        assert_eq!((named.grid.len(), named.films[0].own.len()), (2, 0));
        let e = named.add_axis("b.release_time_s=0").unwrap_err();
        assert!(e.allowed.contains("no film is named 'b'"), "{e}");
        let e = one.add_axis("length_m=abc").unwrap_err();
        assert_eq!(e.field, "axis length_m");

        let films = vec![Film::new("shallow.csv"), Film::new("steep.csv")];
        let mut two = IdentifyRequest::of_films(films, grid, "out");
        two.add_axis("steep.release_time_s=0,0.01").unwrap();
        assert_eq!(two.films[1].own.len(), 1);
        assert_eq!(two.grid.len(), 1, "a film's axis is not the grid's");
        let e = two.add_axis("steep.release_time_s=0").unwrap_err();
        assert!(e.allowed.contains("one axis"), "{e}");
        let e = two.add_axis("flat.release_time_s=0").unwrap_err();
        assert!(e.allowed.contains("the films: shallow, steep"), "{e}");
    }
}
