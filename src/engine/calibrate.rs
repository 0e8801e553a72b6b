//! The rates the estimates use, measured on this adapter's own pipelines
//! (each layout's step stage, the adaptive stage) and on one core; saved
//! for later runs by [`super::calibration`].

use std::time::Instant;

use super::request::ChoiceError;
use crate::gpu::adaptive::{AdaptiveBatch, AdaptiveRun, run_adaptive_batch};
use crate::gpu::cost::{self, AdaptiveRates, AdaptiveWork, GpuRates, LayoutRates};
use crate::gpu::layout::GpuLayout;
use crate::gpu::placement::layout_holds;
use crate::gpu::shape::AdaptiveShape;
use crate::gpu::{BatchOptions, Gpu, Precision, run_batch};
use crate::model::TetherParams;
use crate::scenario::batch::{StepCache, adaptive_landings, adaptive_options, gpu_simulation};
use crate::scenario::{Frames, Scenario, ScenarioKind};
use crate::scheme::FixedStepScheme;
use crate::solver::ReferenceOptions;

/// The calibration drops' duration and frame interval \[s\]: 163
/// semi-implicit steps at n = 50, so that measuring costs a small part of
/// a job, and enough that a submission's fixed cost is a few per cent of a
/// lone drop's time.
pub(super) const PROBE_DURATION_S: f64 = 0.004;

/// How often the longer calibration drop may double (to 32 times the
/// short one's duration: 5,200 steps at n = 50).
pub(super) const PROBE_DOUBLINGS: u32 = 5;

/// The most drops in the filled measurement, the landscape's count: an
/// H100 fills better the more it is given (thread layout at n = 40: 2.2 %
/// of its peak with 1,024 drops, 7.7 % with 8,192); a job with fewer is
/// measured at its own count.
pub const PROBE_BATCH_MAX: usize = 32_768;

/// The calibration drops' tether: the identification's typical candidate.
pub(super) fn calibration_tether(elements: usize) -> TetherParams {
    TetherParams {
        elements,
        damping_pa_s: 2000.0,
        drag_coefficient: 0.8,
        ..TetherParams::default()
    }
}

/// A calibration drop of `duration_s`, a frame every [`PROBE_DURATION_S`].
pub(super) fn calibration_drop(duration_s: f64) -> Scenario {
    Scenario::new(ScenarioKind::Drop, TetherParams::default().length_m)
        .with_frames(Frames::every(PROBE_DURATION_S, duration_s))
}

/// The cost model's rates of each layout that can run drops of `elements`
/// elements on `gpu`, measured on the step pipeline itself: one drop alone
/// gives the chain's rate (a step's counted chain over a step's wall time),
/// `batch` drops at once the device's (their counted lanes × chains over a
/// step's wall time). A step's wall time is the difference between drops
/// of two durations. A layout that cannot hold the drop keeps the peak
/// stage's rates. They are kept in `gpu` for the engine's own layout
/// choice.
pub fn calibrate_layouts(
    gpu: &Gpu,
    precision: Precision,
    scheme: FixedStepScheme,
    elements: usize,
    batch: usize,
) -> Result<LayoutRates, ChoiceError> {
    // Its step, like every drop's on the semi-implicit scheme, is set by
    // elasticity.
    let params = calibration_tether(elements);
    let steps = StepCache::default();
    let calibration = |duration_s: f64| {
        gpu_simulation(&calibration_drop(duration_s), &params, scheme, None, &steps)
            .map_err(|e| ChoiceError::Estimate(format!("a calibration drop: {e}")))
    };
    let short = calibration(PROBE_DURATION_S)?;
    let longer = (1..=PROBE_DOUBLINGS)
        .map(|k| calibration(PROBE_DURATION_S * (1u32 << k) as f64))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rates = LayoutRates::same(gpu.rates(precision)?);
    for layout in GpuLayout::ALL {
        if !layout_holds(gpu, layout, &short, precision) {
            continue;
        }
        let options = BatchOptions {
            precision,
            layout: layout.into(),
            ..Default::default()
        };
        // The first run compiles the pipeline.
        run_batch(gpu, std::slice::from_ref(&short), None, &options)?;
        let timed = |sim: &crate::gpu::GpuSimulation, count: usize| -> Result<f64, ChoiceError> {
            let sims = vec![sim.clone(); count];
            let started = Instant::now();
            run_batch(gpu, &sims, None, &options)?;
            Ok(started.elapsed().as_secs_f64())
        };
        // A step's time is the difference between two durations, without a
        // batch's fixed cost (buffers, uploads, read back), which made the
        // landscape's estimate 18 times its measured time. The longer
        // doubles until its steps take at least as long as the short run in
        // all (a difference within the timing's noise gave rates a
        // million times too high); at the last doubling, the longer run's
        // whole time per step, fixed cost included, bounds it.
        let per_step = |count: usize| -> Result<f64, ChoiceError> {
            let short_s = timed(&short, count)?;
            let mut last = (short_s, &short);
            for long in &longer {
                let long_s = timed(long, count)?;
                if long_s >= 2.0 * short_s {
                    let extra = long.total_steps.saturating_sub(short.total_steps).max(1);
                    return Ok((long_s - short_s) / extra as f64);
                }
                last = (long_s, long);
            }
            let (long_s, long) = last;
            Ok(long_s / long.total_steps.max(1) as f64)
        };
        let lone_s = per_step(1)?;
        let many_s = per_step(batch)?;
        let (chain, _) = cost::chain_and_occupancy(&[(elements, 1)], scheme, layout);
        let (_, occupancy) = cost::chain_and_occupancy(&vec![(elements, 1); batch], scheme, layout);
        rates.set(
            layout,
            GpuRates {
                invocation_gflops: chain / lone_s / 1e9,
                device_gflops: occupancy / many_s / 1e9,
            },
        );
    }
    gpu.set_layout_rates(precision, scheme, rates);
    Ok(rates)
}

/// The cost model's rates of the adaptive stage on `gpu`, measured on the
/// stage itself as [`calibrate_layouts`] measures the fixed-step layouts:
/// drops at the job's `reference` settings, one alone (the chain's costs)
/// and `batch` at once (the device's), in the shape of the job's largest n,
/// an attempt's time the difference between two durations, its flops and
/// barriers counted from what the runs did ([`cost::adaptive_chain_flops`],
/// [`cost::adaptive_barriers`]). Drops of the job's smallest and largest n
/// (`elements`) give the two costs, a flop's and a barrier's; one n, or a
/// fit that leaves either negative (noise), gives flops alone.
pub fn calibrate_adaptive(
    gpu: &Gpu,
    precision: Precision,
    reference: &ReferenceOptions,
    (smallest, largest): (usize, usize),
    batch: usize,
) -> Result<AdaptiveRates, ChoiceError> {
    let shape = AdaptiveShape::most_for(gpu, largest);
    let increment = |elements: usize, count: usize, doublings: u32| {
        adaptive_increment(
            gpu,
            (precision, reference),
            shape,
            (elements, count),
            doublings,
        )
    };
    // The first run compiles the pipeline, which every size shares.
    increment(smallest, 1, 0)?;
    let lone = (
        increment(largest, 1, PROBE_DOUBLINGS)?,
        increment(smallest, 1, PROBE_DOUBLINGS)?,
    );
    let filled = (
        increment(largest, batch, PROBE_DOUBLINGS)?,
        increment(smallest, batch, PROBE_DOUBLINGS)?,
    );
    // Per lane filled: the batch's time shared by its lanes, against
    // the lane-flops a simulation holds filled.
    let lanes = (batch * shape.lanes as usize) as f64;
    let per_lane = |i: Increment| Increment {
        seconds: i.seconds / lanes,
        flops: i.filled_flops / shape.lanes as f64,
        ..i
    };
    let (flop_lone, barrier_lone) = fit_costs(lone.0, lone.1, smallest == largest);
    let (flop_filled, barrier_filled) =
        fit_costs(per_lane(filled.0), per_lane(filled.1), smallest == largest);
    let rates = AdaptiveRates {
        flops: GpuRates {
            invocation_gflops: 1.0 / flop_lone / 1e9,
            device_gflops: 1.0 / flop_filled / 1e9,
        },
        barrier_lone_s: barrier_lone,
        barrier_filled_s: barrier_filled,
        subgroup_width: gpu.adapter.subgroup_width,
        precision,
    };
    gpu.set_adaptive_rates(precision, rates);
    Ok(rates)
}

/// What the longer of two calibration drops added: seconds, and the chain
/// flops, filled lane-flops ([`cost::adaptive_filled_flops`]) and barriers
/// of one of its simulations.
#[derive(Debug, Clone, Copy)]
pub(super) struct Increment {
    seconds: f64,
    flops: f64,
    filled_flops: f64,
    barriers: f64,
}

/// Seconds per flop and per barrier from two sizes' increments; flops
/// alone where the sizes are one or the fit is not physical.
pub(super) fn fit_costs(large: Increment, small: Increment, one_size: bool) -> (f64, f64) {
    let flops_only = (large.seconds / large.flops.max(1.0), 0.0);
    if one_size {
        return flops_only;
    }
    let det = large.flops * small.barriers - small.flops * large.barriers;
    if det.abs() <= 1e-9 * (large.flops * small.barriers).abs() {
        return flops_only;
    }
    let per_flop = (large.seconds * small.barriers - small.seconds * large.barriers) / det;
    let per_barrier = (large.flops * small.seconds - small.flops * large.seconds) / det;
    if per_flop > 0.0 && per_barrier >= 0.0 {
        (per_flop, per_barrier)
    } else {
        flops_only
    }
}

/// The increment of `count` drops of `elements` elements in `shape`: the
/// longer drop doubles, as in [`calibrate_layouts`], up to `doublings`
/// times until its extra work stands out of the timing's noise (at the
/// last doubling, the longer run's whole; with none, the short run's).
pub(super) fn adaptive_increment(
    gpu: &Gpu,
    (precision, reference): (Precision, &ReferenceOptions),
    shape: AdaptiveShape,
    (elements, count): (usize, usize),
    doublings: u32,
) -> Result<Increment, ChoiceError> {
    let params = calibration_tether(elements);
    let steps = StepCache::default();
    let options = adaptive_options(reference);
    let timed = |duration_s: f64| -> Result<Increment, ChoiceError> {
        let scenario = calibration_drop(duration_s);
        let sim = gpu_simulation(
            &scenario,
            &params,
            FixedStepScheme::Explicit,
            Some(scenario.sample_interval_s()),
            &steps,
        )
        .map_err(|e| ChoiceError::Estimate(format!("a calibration drop: {e}")))?;
        let landings = adaptive_landings(&scenario, &sim);
        let sims = vec![sim; count];
        let batch = AdaptiveBatch {
            sims: &sims,
            landings: &vec![landings; count],
            options: &vec![options; count],
            measured: None,
        };
        let run = AdaptiveRun {
            precision,
            shape: Some(shape),
            ..Default::default()
        };
        let started = Instant::now();
        let outcomes = run_adaptive_batch(gpu, &batch, &run)?;
        let seconds = started.elapsed().as_secs_f64();
        let s = outcomes[0].stats;
        let work = AdaptiveWork::counted(
            elements,
            (s.steps, s.rejected_steps),
            s.newton_iterations,
            s.factorizations,
        );
        Ok(Increment {
            seconds,
            flops: cost::adaptive_chain_flops(&work, shape.lanes, precision),
            filled_flops: cost::adaptive_filled_flops(
                &work,
                shape.lanes,
                gpu.adapter.subgroup_width,
                precision,
            ),
            barriers: cost::adaptive_barriers(&work),
        })
    };
    let short = timed(PROBE_DURATION_S)?;
    let mut last = short;
    for k in 1..=doublings {
        let long = timed(PROBE_DURATION_S * (1u32 << k) as f64)?;
        if long.seconds >= 2.0 * short.seconds {
            return Ok(Increment {
                seconds: long.seconds - short.seconds,
                flops: long.flops - short.flops,
                filled_flops: long.filled_flops - short.filled_flops,
                barriers: long.barriers - short.barriers,
            });
        }
        last = long;
    }
    Ok(last)
}

/// One core's f64 multiply-add rate [GFLOP/s], in about 20 ms: eight
/// independent chains, as the peak stage runs them.
pub fn measure_cpu_core_gflops() -> f64 {
    const ROUNDS: usize = 1 << 20;
    let mut acc = [1.0f64, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7];
    let (a, b) = (
        std::hint::black_box(0.999_999_9),
        std::hint::black_box(1e-9),
    );
    let started = Instant::now();
    for _ in 0..ROUNDS {
        for x in acc.iter_mut() {
            *x = *x * a + b;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    (ROUNDS * 8 * 2) as f64 / seconds.max(1e-9) / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_sizes_give_a_flops_and_a_barriers_cost() {
        let increment = |flops: f64, barriers: f64| Increment {
            seconds: flops * 1e-9 + barriers * 2e-6,
            flops,
            filled_flops: flops,
            barriers,
        };
        let (large, small) = (increment(5e6, 1e3), increment(1e6, 1e3));
        let (per_flop, per_barrier) = fit_costs(large, small, false);
        assert!((per_flop / 1e-9 - 1.0).abs() < 1e-9, "{per_flop}");
        assert!((per_barrier / 2e-6 - 1.0).abs() < 1e-9, "{per_barrier}");
        // One size, or noise that makes a cost negative: flops alone.
        assert_eq!(fit_costs(large, small, true), (large.seconds / 5e6, 0.0));
        let noisy = Increment {
            seconds: small.seconds * 3.0,
            ..small
        };
        assert_eq!(fit_costs(large, noisy, false), (large.seconds / 5e6, 0.0));
    }

    #[test]
    fn a_core_rate_is_measured() {
        let gflops = measure_cpu_core_gflops();
        assert!(gflops.is_finite() && gflops > 0.01, "{gflops}");
    }
}
