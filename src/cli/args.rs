//! Flags that several commands share, and the step from a workflow's error
//! to what the user typed.

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::engine::{Backend, EngineOptions};
use crate::gpu::{LayoutRequest, Precision};
use crate::named::Named;
use crate::solver::SolverKind;
use crate::workflow::WorkflowError;
use crate::workflow::keywords::TetherInputs;

/// A flag's parser for one of the library's named values: their names and
/// help as its possible values, each parsed by the library's `FromStr`.
pub fn named<T: Named>() -> impl TypedValueParser<Value = T> {
    let values = T::ALL
        .iter()
        .map(|v| PossibleValue::new(v.name()).help(v.help()));
    PossibleValuesParser::new(values).try_map(|text| T::parse_name(&text))
}

/// Where simulations run.
#[derive(Debug, Args)]
pub struct EngineArgs {
    /// `auto`: the faster of the CPU and a hardware GPU for this job,
    /// estimated from the work it counts and the rates it measures (the
    /// reason is printed); `gpu`: the GPU engine even on a CPU emulation
    /// (lavapipe); `cpu`: CPU only.
    #[arg(long, value_parser = named::<Backend>(), default_value = "auto")]
    pub backend: Backend,
    /// GPU precision: `f32` (displacement form, docs/model.md §8) or `f64` (needs the
    /// adapter's SHADER_F64).
    #[arg(long, value_parser = named::<Precision>(), default_value = "f32")]
    pub precision: Precision,
    /// GPU adapter: its index, its PCI address or part of its name
    /// (`tether-sweep adapters`).
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// GPU layout: `thread` (a simulation per invocation), `workgroup` (a
    /// simulation's elements spread over a workgroup's invocations), or
    /// `auto`: for each batch and scheme, the faster by the cost model of `gpu::cost` (the
    /// thread layout on a CPU emulation).
    #[arg(long, value_parser = named::<LayoutRequest>(), default_value = "auto")]
    pub gpu_layout: LayoutRequest,
}

impl EngineArgs {
    /// The engine options these flags and a command's `--solver` give.
    pub fn options(&self, solver: Option<SolverKind>) -> EngineOptions {
        EngineOptions {
            backend: self.backend,
            adapter: self.adapter.clone(),
            precision: self.precision,
            gpu_layout: self.gpu_layout,
            solver,
        }
    }
}

/// Tether options shared by the commands; each overrides docs/model.md §1.
#[derive(Debug, Args)]
pub struct TetherArgs {
    /// Number of ANCF elements n (1..=1024). [default: 10]
    #[arg(long, value_name = "N")]
    pub elements: Option<i64>,
    /// Kelvin–Voigt material damping D [Pa·s], ≥ 0. [default: 0]
    #[arg(long, value_name = "D")]
    pub damping: Option<f64>,
    /// Air drag coefficient C_D [-], ≥ 0. [default: 0]
    #[arg(long, value_name = "CD")]
    pub drag_coefficient: Option<f64>,
    /// Point mass at the free end [kg], ≥ 0. [default: 0 for the drop; 0.021 (the swing-up's body) for swingup and linearize]
    #[arg(long, value_name = "KG")]
    pub tip_mass: Option<f64>,
    /// Tether length L [m], > 0. [default: 0.6]
    #[arg(long, value_name = "M")]
    pub length: Option<f64>,
    /// Leave the rotary-inertia term ρ I ∫ S_xᵀ S_x ds out of the mass matrix.
    #[arg(long)]
    pub no_rotary_inertia: bool,
}

impl TetherArgs {
    /// The library's tether inputs these flags give.
    pub fn inputs(&self) -> TetherInputs {
        TetherInputs {
            elements: self.elements,
            damping_pa_s: self.damping,
            drag_coefficient: self.drag_coefficient,
            tip_mass_kg: self.tip_mass,
            length_m: self.length,
            no_rotary_inertia: self.no_rotary_inertia,
        }
    }
}

/// A workflow error whose field is one of `flags`' keys, renamed to the
/// flag the user typed (`length_m` → `--length`).
pub fn name_flags(e: WorkflowError, flags: &[(&str, &str)]) -> WorkflowError {
    crate::workflow::keywords::rename(e, flags)
}
