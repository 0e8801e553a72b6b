//! The adaptive stage's shape: simulations per workgroup and lanes per
//! simulation, chosen within what a device bounds. Its own module because
//! the stage's batches ([`super::adaptive`]), the shader source
//! ([`super::shader`]) and the device's pipeline cache
//! ([`super::device`]) all need it, and the stage needs them.

use std::convert::Infallible;

use super::layout::TARGET_INVOCATIONS;
use super::{Gpu, GpuError, Precision, cost};

/// Simulations per workgroup and invocations per simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AdaptiveShape {
    pub sims: u32,
    pub lanes: u32,
}

impl AdaptiveShape {
    /// The shape for simulations of up to `max_elements` elements with the
    /// most lanes: a lane per element up to 64
    /// ([`super::layout::adaptive_lanes_for`]).
    pub fn for_elements(max_elements: usize) -> Self {
        Self::with_lanes(super::layout::adaptive_lanes_for(max_elements))
    }

    /// `lanes` lanes a simulation, and as many simulations as make 64
    /// invocations.
    pub fn with_lanes(lanes: u32) -> Self {
        let lanes = lanes.clamp(1, TARGET_INVOCATIONS);
        Self {
            sims: TARGET_INVOCATIONS / lanes,
            lanes,
        }
    }

    /// The most lanes worth giving a simulation of up to `largest` elements
    /// on `gpu` ([`Self::most_within`] its [`ShapeBounds`]).
    pub fn most_for(gpu: &Gpu, largest: usize) -> Self {
        Self::most_within(ShapeBounds::of(gpu), largest)
    }

    /// [`Self::for_elements`], no more lanes than `bounds` allow.
    pub fn most_within(bounds: ShapeBounds, largest: usize) -> Self {
        Self::with_lanes(Self::for_elements(largest).lanes.min(bounds.most_lanes))
    }

    /// The shape the stage runs simulations of `elements` elements in on
    /// `gpu`: [`Self::choose`] within the adapter's bounds, at the rates
    /// it has for the stage ([`Gpu::adaptive_rates`]).
    pub fn for_batch(
        gpu: &Gpu,
        precision: Precision,
        elements: &[usize],
    ) -> Result<Self, GpuError> {
        Self::choose(elements, ShapeBounds::of(gpu), || {
            gpu.adaptive_rates(precision)
        })
    }

    /// The shape for a batch of simulations of `elements` elements on a
    /// device with `bounds`: the most lanes ([`Self::most_within`]) for a
    /// batch that fits in one workgroup with them (fewer lanes would only
    /// lengthen its one chain, and a single simulation needs no rates
    /// measured), else the lanes the cost model chooses at `rates`
    /// ([`cost::adaptive_lanes`]), no more than the most, and no fewer
    /// workgroups than the bounds' threads where the most lanes give that
    /// many. The run and the cost model's estimate both take their shape
    /// from here.
    pub fn choose<E>(
        elements: &[usize],
        bounds: ShapeBounds,
        rates: impl FnOnce() -> Result<cost::AdaptiveRates, E>,
    ) -> Result<Self, E> {
        let largest = elements.iter().copied().max().unwrap_or(1);
        let most = Self::most_within(bounds, largest);
        if elements.len() <= most.sims as usize {
            return Ok(most);
        }
        let chosen = cost::adaptive_lanes(elements, rates()?).min(most.lanes);
        let workgroups = |shape: Self| elements.len().div_ceil(shape.sims as usize);
        let mut shape = Self::with_lanes(chosen);
        while shape.lanes < most.lanes && workgroups(shape) < bounds.threads {
            shape = Self::with_lanes(2 * shape.lanes);
        }
        Ok(shape)
    }

    /// [`Self::choose`] at rates already at hand.
    pub fn choose_at(elements: &[usize], bounds: ShapeBounds, rates: cost::AdaptiveRates) -> Self {
        let Ok(shape) = Self::choose(elements, bounds, || Ok::<_, Infallible>(rates));
        shape
    }
}

/// What of a device besides its rates bounds the adaptive stage's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeBounds {
    /// The most lanes a simulation.
    pub most_lanes: u32,
    /// Threads that each run a whole workgroup, which a batch should keep
    /// busy.
    pub threads: usize,
}

impl ShapeBounds {
    /// A GPU: up to a workgroup's lanes a simulation, workgroups spread
    /// over its multiprocessors.
    pub const HARDWARE: Self = Self {
        most_lanes: TARGET_INVOCATIONS,
        threads: 1,
    };

    /// `gpu`'s: [`Self::HARDWARE`], except that a CPU emulation runs a
    /// workgroup on one of its threads, a subgroup (SIMD vector) at a
    /// time, so that lanes beyond a subgroup do not run at once (on
    /// lavapipe, ten drops at n = 40 took 0.85–0.93 s with 64 lanes and
    /// 0.56 s with 8), and a batch of fewer workgroups than threads leaves
    /// threads idle.
    pub fn of(gpu: &Gpu) -> Self {
        if gpu.adapter.hardware {
            return Self::HARDWARE;
        }
        Self {
            most_lanes: gpu
                .adapter
                .subgroup_width
                .max(super::layout::MIN_ADAPTIVE_LANES),
            threads: std::thread::available_parallelism().map_or(1, |t| t.get()),
        }
    }
}
