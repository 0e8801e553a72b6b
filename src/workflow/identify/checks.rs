//! The request's checks before anything is claimed or simulated: its
//! numbers, its films' names, each film against its experiment and grid.

use std::collections::HashSet;

use super::engine::sweep_settings;
use super::request::IdentifyRequest;
use crate::engine::Backend;
use crate::error::InputError;
use crate::solver::SolverKind;
use crate::sweep::joint::FilmAxes;
use crate::sweep::{Axis, Grid};
use crate::workflow::WorkflowError;
use crate::workflow::film::{CheckedFilm, Film};

/// Film names name columns (`FILM.j_e_m2`) and files (`best_fit_FILM`)
/// where there are several.
pub(super) fn check_names(films: &[Film]) -> Result<(), WorkflowError> {
    if films.is_empty() {
        return Err(WorkflowError::Usage(
            "an identification fits one film or more; none given".into(),
        ));
    }
    if films.len() == 1 {
        return Ok(());
    }
    let mut seen = HashSet::new();
    for f in films {
        let plain = !f.name.is_empty()
            && f.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !plain {
            return Err(WorkflowError::Usage(format!(
                "film name '{}': letters, digits, _ and - only (it names columns and files); give name = \"…\" in the config's [settings]",
                f.name
            )));
        }
        if !seen.insert(f.name.as_str()) {
            return Err(WorkflowError::Usage(format!(
                "two films are named '{}': give each config its own name = \"…\" in [settings]",
                f.name
            )));
        }
    }
    Ok(())
}

pub(super) fn film_names(request: &IdentifyRequest) -> Vec<String> {
    request.films.iter().map(|f| f.name.clone()).collect()
}

/// A film's grid: a single film's is the request's (its axes are all the
/// grid's); one of several films has the shared axes, then its own.
pub(crate) fn film_grid(request: &IdentifyRequest, film: &Film) -> Result<Grid, WorkflowError> {
    if !request.single() {
        return Ok(film_axes(film).grid(&request.grid)?);
    }
    if let Some(axis) = film.own.first() {
        return Err(InputError::new(
            "axis",
            format!("{}.{}", film.name, axis.axis),
            "an axis of the grid: a single film's axes are all the grid's (write it without the film's name)",
        )
        .into());
    }
    Ok(request.grid.clone())
}

pub(super) fn film_axes(film: &Film) -> FilmAxes {
    FilmAxes {
        name: film.name.clone(),
        own: film.own.clone(),
    }
}

/// Checks every film against its experiment and its grid; an error in
/// one of several names the film.
pub(super) fn check_films(request: &IdentifyRequest) -> Result<Vec<CheckedFilm>, WorkflowError> {
    check_names(&request.films)?;
    if let Some(axes) = &request.surface_axes {
        check_surface_axes(&request.grid, axes)?;
    }
    let mut checked = Vec::with_capacity(request.films.len());
    for film in &request.films {
        let named = |e| match request.single() {
            true => e,
            false => named(e, film),
        };
        let grid = film_grid(request, film).map_err(named)?;
        checked.push(
            crate::workflow::film::check(film, &grid, &request.base, request.allow_implausible)
                .map_err(named)?,
        );
    }
    Ok(checked)
}

/// An error in one film's checks, with the film named.
pub(super) fn named(e: WorkflowError, film: &Film) -> WorkflowError {
    let place = format!("film {} ({})", film.name, film.measured);
    match e {
        WorkflowError::Usage(m) => WorkflowError::Usage(format!("{place}: {m}")),
        WorkflowError::Input(i) => WorkflowError::Usage(format!("{place}: {i}")),
        other => other,
    }
}

/// The surface figure's axes must be two different axes of the grid.
pub(super) fn check_surface_axes(grid: &Grid, axes: &[Axis; 2]) -> Result<(), WorkflowError> {
    let on_grid: Vec<Axis> = grid.axes().iter().map(|a| a.axis).collect();
    for axis in axes {
        if !on_grid.contains(axis) {
            return Err(InputError::new(
                "surface",
                format!("'{axis}'"),
                format!(
                    "two of the grid's axes: {}",
                    on_grid
                        .iter()
                        .map(|a| a.column())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .into());
        }
    }
    if axes[0] == axes[1] {
        return Err(InputError::new(
            "surface",
            format!("'{}' twice", axes[0]),
            "two different axes",
        )
        .into());
    }
    Ok(())
}

/// The request's own numbers and combinations, before anything is read.
pub(crate) fn check_settings(request: &IdentifyRequest) -> Result<(), WorkflowError> {
    if request.chunk_size == Some(0) {
        return Err(InputError::new("chunk_size", 0, "at least 1 candidate").into());
    }
    request.base.validate()?;
    for (field, value) in [
        (
            "validate_marker_tolerance_m",
            request.validate_marker_tolerance_m,
        ),
        ("validate_j_e_tolerance", request.validate_j_e_tolerance),
    ] {
        crate::error::require_positive(field, value)?;
    }
    if let Some(t) = request.tolerance_m {
        crate::solver::reference::check_tolerance_m("tolerance_m", t)?;
        // Refused before anything is claimed where the flags already
        // name another solver (`--backend gpu` sweeps a fixed-step
        // scheme); `auto`'s choice is checked once it is made.
        let named = match request.engine.backend {
            Backend::Gpu => request.engine.solver.unwrap_or(SolverKind::SemiImplicit),
            _ => request.engine.solver.unwrap_or(SolverKind::Reference),
        };
        sweep_settings(request.tolerance_m, named, false)?;
    }
    Ok(())
}
