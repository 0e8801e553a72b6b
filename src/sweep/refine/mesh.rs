//! What the mesh does to a refined answer: each refined n's fit, which
//! edge of the n offered the lowest lies on, the n the data cannot tell
//! apart and each parameter's interval joined over them, and the
//! parameters that move between n by more than their standard error
//! (docs/identify.md, "The mesh").

use serde::Serialize;

use super::Refined;
use crate::sweep::chi2_quantile;

/// One n's refinement: what the same data say at another mesh.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElementsFit {
    pub elements: usize,
    pub j_e_m2: f64,
    /// In [`Refined::parameters`]' order.
    pub values: Vec<f64>,
}

/// Which edge of the n offered the lowest refined J_e lies on: the way
/// the data would extend the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeshEdge {
    Coarsest,
    Finest,
}

/// A parameter's 95 % intervals over the refined n the data cannot tell
/// apart, joined: the uncertainty with the mesh's share in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshSpan {
    /// The parameter's name ([`RefinedParameter::name`](super::RefinedParameter::name)).
    pub parameter: String,
    /// The n joined.
    pub elements: Vec<usize>,
    pub lower: f64,
    pub upper: f64,
}

/// A refined parameter that moves between two refined n by more than its
/// standard error: the mesh's error is then comparable to the data's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshMove {
    /// The parameter's name ([`RefinedParameter::name`](super::RefinedParameter::name)).
    pub parameter: String,
    /// The other n, and the value there.
    pub elements: usize,
    pub value: f64,
    /// |its value there − the kept value| in the kept standard errors.
    pub standard_errors: f64,
}

impl Refined {
    /// For each refined parameter, the neighbouring refined n (the next
    /// coarser and the next finer than the kept) at which it lies furthest
    /// from the kept value, when that is more than one standard error
    /// away: the mesh's last step, an estimate of its error
    /// (docs/identify.md, "The mesh"). A far coarser n moving the answer
    /// says nothing of the kept one's.
    pub fn mesh_moves(&self) -> Vec<MeshMove> {
        let n = self.elements;
        let coarser = self
            .per_elements
            .iter()
            .map(|f| f.elements)
            .filter(|&m| m < n)
            .max();
        let finer = self
            .per_elements
            .iter()
            .map(|f| f.elements)
            .filter(|&m| m > n)
            .min();
        self.parameters
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                self.per_elements
                    .iter()
                    .filter(|f| Some(f.elements) == coarser || Some(f.elements) == finer)
                    .map(|f| MeshMove {
                        parameter: p.name(),
                        elements: f.elements,
                        value: f.values[i],
                        standard_errors: (f.values[i] - p.value).abs() / p.standard_error,
                    })
                    .filter(|m| m.standard_errors > 1.0)
                    .max_by(|a, b| a.standard_errors.total_cmp(&b.standard_errors))
            })
            .collect()
    }

    /// The n whose refined J_e the data cannot tell from the lowest (within
    /// its one-parameter rise, σ² χ²₁, as the kept n is chosen), and, when
    /// there are several, each parameter's Gauss–Newton intervals at their
    /// values (the kept fit's standard error) joined; empty otherwise.
    pub fn mesh_spans(&self) -> Vec<MeshSpan> {
        let Some(lowest) = self
            .per_elements
            .iter()
            .map(|f| f.j_e_m2)
            .min_by(f64::total_cmp)
        else {
            return Vec::new();
        };
        let alike: Vec<&ElementsFit> = self
            .per_elements
            .iter()
            .filter(|f| f.j_e_m2 <= lowest + self.profile_rise_m2)
            .collect();
        if alike.len() < 2 {
            return Vec::new();
        }
        let z = chi2_quantile(1, self.confidence_level).sqrt();
        self.parameters
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let half = z * p.standard_error;
                let ends = alike.iter().map(|f| f.values[i]);
                MeshSpan {
                    parameter: p.name(),
                    elements: alike.iter().map(|f| f.elements).collect(),
                    lower: ends.clone().fold(f64::INFINITY, f64::min) - half,
                    upper: ends.fold(f64::NEG_INFINITY, f64::max) + half,
                }
            })
            .collect()
    }

    /// Where the lowest refined J_e lies, with its n, when on an edge of
    /// the n offered and more than one n was refined.
    pub fn mesh_edge(&self) -> Option<(MeshEdge, usize)> {
        let (Some(&coarsest), Some(&finest)) = (
            self.elements_offered.iter().min(),
            self.elements_offered.iter().max(),
        ) else {
            return None;
        };
        if coarsest == finest || self.per_elements.len() < 2 {
            return None;
        }
        let lowest = self
            .per_elements
            .iter()
            .min_by(|a, b| a.j_e_m2.total_cmp(&b.j_e_m2))?
            .elements;
        match lowest {
            n if n == coarsest => Some((MeshEdge::Coarsest, n)),
            n if n == finest => Some((MeshEdge::Finest, n)),
            _ => None,
        }
    }
}
