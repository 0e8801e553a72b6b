//! The refined optimum as text: its values with their standard errors,
//! the mesh's share, and each parameter's profile interval.

use super::super::sayln;
use crate::least_squares::profile::{Profile, ProfileEnd};
use crate::sweep::refine::MeshEdge;
use crate::sweep::refine::{MAX_EVERY_ELEMENTS, Refined};

/// Each refined value with its standard error.
pub fn refined_values(r: &Refined) -> Vec<String> {
    r.parameters
        .iter()
        .map(|p| {
            format!(
                "{} = {:.6} ± {:.2e}{}",
                p.name(),
                p.value,
                p.standard_error,
                if p.at_bound {
                    " (on the grid's bound)"
                } else {
                    ""
                }
            )
        })
        .collect()
}

pub fn write_refined(out: &mut String, r: &Refined) {
    let values = refined_values(r);
    let mut tried = r.elements_tried.clone();
    tried.sort_unstable();
    let tried: Vec<String> = tried.iter().map(|n| n.to_string()).collect();
    sayln!(
        out,
        "refined at n = {} (Levenberg–Marquardt on the reference solver from the grid's best at n = {}: {}, keeping the finest whose J_e is within σ² χ²₁ of the lowest; {} iterations, {} simulations): {}; J_e = {:.6e} m², σ ≈ {:.2} mm{}",
        r.elements,
        tried.join(", "),
        match r.every_elements {
            true if r.elements_tried.len() >= r.elements_offered.len() => "every n offered",
            true =>
                "every n, the grid's best J_e lying more than the confidence region's rise above the lowest refined one (too coarse to rank n)",
            false => "those within the confidence threshold and the finest",
        },
        r.iterations,
        r.simulations,
        values.join(", "),
        r.j_e_m2,
        r.sigma_m * 1e3,
        r.correlation
            .map_or(String::new(), |c| format!(", correlation {c:.2}"))
    );
    if let Some(why) = &r.undetermined {
        sayln!(out, "  ← not determined by the data: {why}");
    }
    if !r.films.is_empty() {
        let films: Vec<String> = r
            .films
            .iter()
            .map(|f| {
                format!(
                    "{} σ ≈ {:.3} mm (J_e = {:.6e} m²), weight {:.4}",
                    f.name,
                    f.sigma_m * 1e3,
                    f.j_e_m2,
                    f.weight
                )
            })
            .collect();
        sayln!(
            out,
            "  each film at the refined values, weighed by its own residual there: {}",
            films.join("; ")
        );
    }
    write_profiles(out, r);
    write_mesh(out, r);
}

/// Each refined n's J_e where every n was refined, and the parameters the
/// mesh moves by more than a standard error.
pub fn write_mesh(out: &mut String, r: &Refined) {
    let moves: Vec<String> = r
        .mesh_moves()
        .iter()
        .map(|m| {
            format!(
                "{} = {:.6} at n = {} ({:.1} standard errors away)",
                m.parameter, m.value, m.elements, m.standard_errors
            )
        })
        .collect();
    if r.per_elements.len() > 1 {
        sayln!(out, "  refined at each n:");
        for f in &r.per_elements {
            let values: Vec<String> = r
                .parameters
                .iter()
                .zip(&f.values)
                .map(|(p, v)| format!("{} = {v:.6}", p.name()))
                .collect();
            sayln!(
                out,
                "    n = {:>3}: J_e = {:.6e} m², {}",
                f.elements,
                f.j_e_m2,
                values.join(", ")
            );
        }
    }
    let refined: Vec<usize> = r.per_elements.iter().map(|f| f.elements).collect();
    let skipped: Vec<String> = r
        .elements_offered
        .iter()
        .filter(|n| !refined.contains(n))
        .map(|n| n.to_string())
        .collect();
    if !skipped.is_empty() {
        sayln!(
            out,
            "  not refined: n = {} ({})",
            skipped.join(", "),
            match r.elements_offered.len() > MAX_EVERY_ELEMENTS {
                true => format!(
                    "more than {MAX_EVERY_ELEMENTS} n offered: those whose grid J_e lies above the confidence threshold, where the grid ranks n, or with no candidate that ran"
                ),
                false => "no candidate of theirs ran".into(),
            }
        );
    }
    let advice = match r.mesh_edge() {
        Some((MeshEdge::Finest, n)) => format!(
            "the lowest refined J_e is at the finest n offered (n = {n}): add finer n to the grid (--elements) to see where the values settle"
        ),
        Some((MeshEdge::Coarsest, n)) => format!(
            "the lowest refined J_e is at the coarsest n offered (n = {n}): a finer mesh is nearer the continuum, so a coarse one fitting better absorbs another misfit (length, modulus, clock; see the goodness of fit); offer coarser n (--elements) to see where it settles, and free the suspect input (--axis)"
        ),
        None => "the refined J_e is lowest between the n offered: quote the values' span over the n the data cannot tell apart".into(),
    };
    if !moves.is_empty() {
        sayln!(
            out,
            "  note: the mesh moves the answer as much as the data's noise does: {}; {advice}",
            moves.join(", ")
        );
    } else if let Some((MeshEdge::Coarsest, _)) = r.mesh_edge() {
        sayln!(out, "  note: {advice}");
    }
    let spans = r.mesh_spans();
    if let (Some(first), false) = (spans.first(), moves.is_empty()) {
        let each: Vec<String> = spans
            .iter()
            .map(|m| format!("{} in [{:.6}, {:.6}]", m.parameter, m.lower, m.upper))
            .collect();
        let n: Vec<String> = first.elements.iter().map(|n| n.to_string()).collect();
        sayln!(
            out,
            "  n = {} fit alike (refined J_e within σ² χ²₁ of the lowest): their 95 % intervals joined, the mesh's share of the uncertainty in them: {}",
            n.join(", "),
            each.join(", ")
        );
    }
}

/// `value` with as many decimals as its standard error's leading digits
/// warrant (three significant digits of the error).
pub fn to_error_digits(value: f64, standard_error: f64) -> String {
    let decimals = if standard_error.is_finite() && standard_error > 0.0 {
        (2 - standard_error.log10().floor() as i32).max(0) as usize
    } else {
        6
    };
    format!("{value:.decimals$}")
}

/// The profile intervals, each beside the Gauss–Newton interval, and what
/// a user should know where they disagree or end on a bound.
/// What a profile's ends say beyond their values: a grid's bound
/// reached, an end not found, a floor below the refined fit.
pub fn write_profile_notes(out: &mut String, name: &str, profile: &Profile) {
    let bounds: Vec<String> = [("below", &profile.lower), ("above", &profile.upper)]
        .iter()
        .filter_map(|(side, end)| match end {
            ProfileEnd::Bound { value } => Some(format!("{side} {value}")),
            _ => None,
        })
        .collect();
    if !bounds.is_empty() {
        sayln!(
            out,
            "    ← J_e stays within the threshold to the grid's bound: the data do not bound {name} {} within the range searched; widen the grid to find the interval's end",
            bounds.join(" or ")
        );
    }
    for (side, end) in [("lower", &profile.lower), ("upper", &profile.upper)] {
        if let ProfileEnd::Unresolved { why, .. } = end {
            sayln!(out, "    ← the interval's {side} end was not found: {why}");
        }
    }
    if let Some(lowest) = profile.below_fit {
        sayln!(
            out,
            "    ← the profile found J_e = {lowest:.6e} m², below the refined J_e: the refinement had not reached the minimum, so this interval is measured from too high a floor"
        );
    }
}

pub fn write_profiles(out: &mut String, r: &Refined) {
    let profiled: Vec<_> = r
        .parameters
        .iter()
        .filter_map(|p| p.profile.as_ref().map(|profile| (p, profile)))
        .collect();
    if profiled.is_empty() {
        return;
    }
    let simulations: usize = profiled.iter().map(|(_, p)| p.evaluations).sum();
    sayln!(
        out,
        "{} % profile intervals (each parameter held, the others re-fitted, until J_e rises σ² χ²₁ = {:.3e} m² above the refined J_e; {simulations} simulations):",
        100.0 * r.confidence_level,
        r.profile_rise_m2
    );
    let width = profiled
        .iter()
        .map(|(p, _)| p.name().len())
        .max()
        .unwrap_or(0);
    for (p, profile) in &profiled {
        let show = |end: &ProfileEnd| match end {
            ProfileEnd::Crossed { value } => to_error_digits(*value, p.standard_error),
            ProfileEnd::Bound { value } => format!(
                "the grid's bound {}",
                to_error_digits(*value, p.standard_error)
            ),
            ProfileEnd::Unresolved { .. } => "not found".into(),
        };
        let (gn_lower, gn_upper) = p.gauss_newton_interval(r.confidence_level);
        sayln!(
            out,
            "  {:width$} in [{}, {}] (Gauss–Newton ±{:.2} SE: [{}, {}])",
            p.name(),
            show(&profile.lower),
            show(&profile.upper),
            crate::sweep::chi2_quantile(1, r.confidence_level).sqrt(),
            to_error_digits(gn_lower, p.standard_error),
            to_error_digits(gn_upper, p.standard_error),
        );
        write_profile_notes(out, &p.name(), profile);
    }
    let disagreements: Vec<String> = r
        .interval_disagreements()
        .iter()
        .map(|d| format!("{}'s {} side {:.1}×", d.parameter, d.side, d.ratio))
        .collect();
    if !disagreements.is_empty() {
        sayln!(
            out,
            "  note: the profile and Gauss–Newton intervals differ by more than a factor {} ({}, profile over Gauss–Newton): J_e is far from quadratic in that parameter, and the profile interval is the one to quote",
            crate::sweep::refine::DISAGREEMENT_FACTOR,
            disagreements.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::refine::ElementsFit;
    use crate::sweep::refine::tests::refined;

    /// The n offered but not refined are named, with the reason that fits
    /// how many were offered.
    #[test]
    fn each_n_offered_is_either_refined_or_named_with_why_not() {
        let fit = |elements, j_e_m2| ElementsFit {
            elements,
            j_e_m2,
            values: vec![2000.0, 0.8],
        };
        let mut r = refined(vec![fit(40, 1.1e-4), fit(50, 1e-4)]);
        let text = |r: &Refined| {
            let mut out = String::new();
            write_mesh(&mut out, r);
            out
        };
        assert!(text(&r).contains("refined at each n:"), "{}", text(&r));
        assert!(!text(&r).contains("not refined"), "{}", text(&r));
        r.elements_offered = vec![30, 40, 50];
        assert!(
            text(&r).contains("not refined: n = 30 (no candidate of theirs ran)"),
            "{}",
            text(&r)
        );
        r.elements_offered = (1..=9).map(|k| 10 * k).collect();
        let many = text(&r);
        assert!(
            many.contains("not refined: n = 10, 20, 30, 60, 70, 80, 90 (more than 8 n offered"),
            "{many}"
        );
    }
}
