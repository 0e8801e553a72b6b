//! The arm carrying the tether (docs/constrained.md §5): the tether's pin
//! is the arm's end point. The end point is held on its line by the arm's
//! rheonomic constraints, so the pin follows the arm's program, P(t) =
//! (x₀ − v t, y_line), a [`PathMotion`]; the tether's run along it gives
//! its pull at the pin, which loads the arm's end point in the arm's own
//! run (its torques, and its motion where the constraints leave it free:
//! at the folded pose). The tether starts in its hanging equilibrium
//! under the end point, moving with it.

use std::sync::Arc;

use rayon::prelude::*;

use crate::constrained::arm::Arm;
use crate::engine::{Backend, Engine, EngineKind, EngineOptions};
use crate::error::InputError;
use crate::gpu::{Gpu, GpuOutcome, GpuSimulation, PinDrive, Precision};
use crate::model::{PinMotion, Tether, TetherParams};
use crate::scenario::PathMotion;
use crate::scheme::{FixedStepScheme, frame_due};
use crate::solver::equilibrium::hanging_equilibrium;
use crate::solver::modal::{automatic_step, semi_implicit_step};
use crate::solver::{ReferenceOptions, ReferenceSolver, SolverError, TetherDynamics};
use crate::status::RunStatus;
use crate::workflow::WorkflowError;

/// The tether's pull is sampled this many times per output interval and
/// interpolated between (cubic): 0.5 ms at the default 0.01 s, 48
/// samples in the default tether's slowest axial period (24 ms).
pub const PULL_SAMPLES_PER_OUTPUT: usize = 20;
/// Markers along the carried tether: 11 at j L/10, as the drop's.
pub const CARRIED_MARKERS: usize = 11;

/// The tether an arm carries, and the reference solver's tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct CarriedTether {
    pub params: TetherParams,
    pub tolerance_m: f64,
}

impl CarriedTether {
    pub fn check(&self) -> Result<(), InputError> {
        self.params.validate()?;
        crate::solver::reference::check_tolerance_m("tether_tolerance_m", self.tolerance_m)
    }
}

/// What the tether's run along the arm's program gives the arm's run.
#[derive(Debug, Clone)]
pub struct TetherRun {
    /// The pull on the arm's end point (minus the pin's force on the
    /// tether) \[N\] at `times_s`: `PULL_SAMPLES_PER_OUTPUT` to each
    /// output interval.
    pull_n: Vec<[f64; 2]>,
    times_s: Vec<f64>,
    /// The markers at each output time reached.
    pub markers_m: Vec<[[f64; 2]; CARRIED_MARKERS]>,
    /// Where the tether's run stopped before the last output, and why.
    pub failure: Option<(f64, String)>,
    pub steps: u64,
    /// What ran it, in words (the table's metadata), and the reference
    /// solver's tolerance where that ran it (None: a fixed-step scheme).
    pub solver: String,
    pub tolerance_m: Option<f64>,
}

impl TetherRun {
    /// The pull at t: the cubic Hermite between the two samples around it
    /// with each sample's slope that of the parabola through it and its
    /// neighbours (exact for a quadratic on any spacing; on even spacing,
    /// Catmull–Rom inside; the run's last interval is shorter where the
    /// duration is not a whole number of output intervals), the end
    /// samples held outside.
    pub fn pull_n(&self, t: f64) -> [f64; 2] {
        let last = self.pull_n.len() - 1;
        if last == 0 {
            return self.pull_n[0];
        }
        let t = t.clamp(self.times_s[0], self.times_s[last]);
        let i = self.times_s.partition_point(|&s| s <= t).clamp(1, last) - 1;
        let h = self.times_s[i + 1] - self.times_s[i];
        let u = (t - self.times_s[i]) / h;
        let (h00, h10) = (1.0 + u * u * (2.0 * u - 3.0), u * (1.0 - u) * (1.0 - u));
        let (h01, h11) = (u * u * (3.0 - 2.0 * u), u * u * (u - 1.0));
        let (slope_i, slope_next) = (self.pull_slope(i), self.pull_slope(i + 1));
        std::array::from_fn(|k| {
            h00 * self.pull_n[i][k]
                + h10 * h * slope_i[k]
                + h01 * self.pull_n[i + 1][k]
                + h11 * h * slope_next[k]
        })
    }

    /// The pull's rate at sample `i` \[N/s\]: that of the parabola
    /// through i and its neighbours (the three end samples at an end; two
    /// samples alone: their difference).
    fn pull_slope(&self, i: usize) -> [f64; 2] {
        let (p, t, last) = (&self.pull_n, &self.times_s, self.pull_n.len() - 1);
        if last == 1 {
            return std::array::from_fn(|k| (p[1][k] - p[0][k]) / (t[1] - t[0]));
        }
        // The three samples a, a + 1, a + 2, and where i is among them.
        let a = i.saturating_sub(1).min(last - 2);
        let (h0, h1) = (t[a + 1] - t[a], t[a + 2] - t[a + 1]);
        std::array::from_fn(|k| {
            let d0 = (p[a + 1][k] - p[a][k]) / h0;
            let d1 = (p[a + 2][k] - p[a + 1][k]) / h1;
            let curve = (d1 - d0) / (h0 + h1);
            match i - a {
                0 => d0 - curve * h0,
                1 => (h1 * d0 + h0 * d1) / (h0 + h1),
                _ => d1 + curve * h1,
            }
        })
    }

    /// The pull at the `k`-th output time.
    pub fn pull_at_output(&self, k: usize) -> [f64; 2] {
        self.pull_n[k * PULL_SAMPLES_PER_OUTPUT]
    }
}

/// The arm's programmed end point as the tether's pin path: two points
/// a second apart, the path going on straight past them.
pub fn program_path(arm: &Arm) -> Result<PathMotion, InputError> {
    let (q0, _, x0) = arm.start();
    let y = arm.tip(&q0)[1];
    PathMotion::new(vec![0.0, 1.0], vec![[x0, y], [x0 - arm.speed_m_s, y]])
}

/// A solver's error in the carried tether's run.
fn solver_error(error: SolverError) -> WorkflowError {
    WorkflowError::Solver {
        context: "the carried tether",
        error,
    }
}

/// Markers along the carried tether at j L/10.
fn marker_arc_lengths_m(length_m: f64) -> [f64; CARRIED_MARKERS] {
    std::array::from_fn(|j| length_m * j as f64 / (CARRIED_MARKERS - 1) as f64)
}

/// The carried tether's model, its pin's path, and its start, the CPU's
/// and the GPU's alike: hanging in equilibrium under the end point, every
/// point moving with the pin.
fn start(
    arm: &Arm,
    tether: &CarriedTether,
) -> Result<(Tether, PathMotion, Vec<f64>, Vec<f64>), WorkflowError> {
    start_on(program_path(arm)?, tether)
}

/// The tether hanging in equilibrium under `path`'s start, moving with it.
fn start_on(
    path: PathMotion,
    tether: &CarriedTether,
) -> Result<(Tether, PathMotion, Vec<f64>, Vec<f64>), WorkflowError> {
    let model = Tether::new(tether.params.clone())?;
    let (pin, velocity) = (path.position(0.0), path.velocity(0.0));
    let q = hanging_equilibrium(&model, pin).map_err(solver_error)?;
    let mut v = vec![0.0; q.len()];
    for node in v.chunks_mut(crate::model::tether::NODE_DOFS) {
        node[..2].copy_from_slice(&velocity);
    }
    Ok((model, path, q, v))
}

/// The times the pull is sampled at: `PULL_SAMPLES_PER_OUTPUT` to each
/// interval of `outputs`, each output among them (exactly).
fn sample_times_s(outputs: &[f64]) -> Vec<f64> {
    let mut times = Vec::with_capacity(outputs.len() * PULL_SAMPLES_PER_OUTPUT);
    times.extend(outputs.first());
    for window in outputs.windows(2) {
        let (from, to) = (window[0], window[1]);
        times.extend(
            (1..PULL_SAMPLES_PER_OUTPUT)
                .map(|j| from + (to - from) * j as f64 / PULL_SAMPLES_PER_OUTPUT as f64),
        );
        times.push(to);
    }
    times
}

/// Runs `tether` along the arm's program through `outputs` (uniform, from
/// 0), sampling its pull between them; a diverged tether ends the run
/// there.
pub fn run_tether(
    arm: &Arm,
    tether: &CarriedTether,
    outputs: &[f64],
) -> Result<TetherRun, WorkflowError> {
    let (model, path, q, v) = start(arm, tether)?;
    let markers_s = marker_arc_lengths_m(tether.params.length_m);
    let dynamics = TetherDynamics::new(model.clone(), Arc::new(path)).map_err(solver_error)?;
    let options = ReferenceOptions {
        tolerance_m: tether.tolerance_m,
        ..ReferenceOptions::DEFAULT
    };
    let mut solver = ReferenceSolver::new(dynamics, q, v, 0.0, options);
    let mut run = TetherRun {
        pull_n: Vec::with_capacity(outputs.len() * PULL_SAMPLES_PER_OUTPUT),
        times_s: Vec::with_capacity(outputs.len() * PULL_SAMPLES_PER_OUTPUT),
        markers_m: Vec::with_capacity(outputs.len()),
        failure: None,
        steps: 0,
        solver: format!(
            "reference solver (adaptive generalized-α, to {:e} m)",
            tether.tolerance_m
        ),
        tolerance_m: Some(tether.tolerance_m),
    };
    let record = |run: &mut TetherRun, solver: &mut ReferenceSolver, output: bool| {
        let r = solver.pin_reaction();
        run.pull_n.push([-r[0], -r[1]]);
        run.times_s.push(solver.time());
        if output {
            let q = solver.positions();
            run.markers_m.push(markers_s.map(|s| model.point(q, s)));
        }
    };
    let times = sample_times_s(outputs);
    record(&mut run, &mut solver, true);
    for (i, &t) in times.iter().enumerate().skip(1) {
        if let Err(error) = solver.advance_to(t) {
            run.failure = Some((solver.time(), format!("the carried tether: {error}")));
            break;
        }
        record(&mut run, &mut solver, i % PULL_SAMPLES_PER_OUTPUT == 0);
    }
    run.steps = solver.stats().steps;
    Ok(run)
}

/// The carried tether as one simulation of the GPU engine with a
/// fixed-step `scheme` (its automatic step, dividing the pull's sample
/// interval): the pin on the arm's line ([`PinDrive::Path`]), the same
/// start as [`run_tether`]'s, a frame at each of the pull's samples after
/// the start, its markers and the pin's force recorded at each.
pub fn gpu_simulation(
    arm: &Arm,
    tether: &CarriedTether,
    outputs: &[f64],
    scheme: FixedStepScheme,
) -> Result<GpuSimulation, WorkflowError> {
    path_simulation(program_path(arm)?, tether, outputs, scheme)
}

/// [`gpu_simulation`] on any pin path: the tether hanging under its start,
/// moving with it, the pin following it ([`PathMotion::on_grid`]).
pub fn path_simulation(
    path: PathMotion,
    tether: &CarriedTether,
    outputs: &[f64],
    scheme: FixedStepScheme,
) -> Result<GpuSimulation, WorkflowError> {
    let (model, path, mut q, mut v) = start_on(path, tether)?;
    let (pin, grid) = (path.position(0.0), path.on_grid()?);
    let sample_s = match outputs {
        [first, second, ..] => (second - first) / PULL_SAMPLES_PER_OUTPUT as f64,
        _ => {
            return Err(
                InputError::new("outputs", outputs.len(), "at least two output times").into(),
            );
        }
    };
    let step_s = match scheme {
        FixedStepScheme::Explicit => automatic_step(&model, &q, sample_s),
        FixedStepScheme::SemiImplicit => semi_implicit_step(&model, &q, sample_s),
    }
    .map_err(solver_error)?;
    let mut dynamics = TetherDynamics::new(model, Arc::new(path)).map_err(solver_error)?;
    let a = dynamics.initial_acceleration(0.0, &mut q, &mut v);
    let times = sample_times_s(outputs);
    Ok(GpuSimulation {
        params: tether.params.clone(),
        pin_m: pin,
        tangent: [0.0, -1.0],
        drive: PinDrive::Path(grid),
        initial_q: q,
        initial_v: v,
        initial_a: a,
        scheme,
        step_s,
        total_steps: frame_due(times[times.len() - 1], step_s).step,
        steps_per_sample: (sample_s / step_s).round() as u64,
        frames: times[1..].iter().map(|&t| frame_due(t, step_s)).collect(),
        marker_arc_lengths_m: marker_arc_lengths_m(tether.params.length_m).to_vec(),
        objective_weights: [0.0; 2],
        initial_swingup_m: 0.0,
        compare_measured: false,
        measured_first_frame: 0,
        record_track: true,
        record_pin_force: true,
        abandon_above_m2: None,
    })
}

/// The GPU engine's scheme for the carried tether: the semi-implicit one,
/// the engine's default, whose step does not shrink with the damping.
pub const GPU_SCHEME: FixedStepScheme = FixedStepScheme::SemiImplicit;

/// The memory the carried tethers' runs of one group may hold \[bytes\]:
/// their pull samples and markers, and on the GPU the batch's readback.
pub const CARRIED_BUDGET_BYTES: usize = 512 << 20;

/// What one carried tether's run holds through `outputs` output times on
/// `engine` \[bytes\]: its pull samples and markers; on the GPU also its
/// readback, the markers and the force at every sample.
fn carried_bytes(outputs: usize, engine: &EngineOptions) -> usize {
    use std::mem::size_of;
    // A pull sample is its time and force; a marker its position.
    let (sample, point) = (size_of::<(f64, [f64; 2])>(), size_of::<[f64; 2]>());
    let run = outputs * (PULL_SAMPLES_PER_OUTPUT * sample + CARRIED_MARKERS * point);
    let readback = match engine.backend {
        Backend::Gpu => outputs * PULL_SAMPLES_PER_OUTPUT * (CARRIED_MARKERS + 1) * point,
        Backend::Auto | Backend::Cpu => 0,
    };
    run + readback
}

/// How many carried tethers run at once within [`CARRIED_BUDGET_BYTES`]
/// (at least one); a single run past it on the GPU is refused, naming
/// the duration.
pub fn carried_group(outputs: usize, engine: &EngineOptions) -> Result<usize, InputError> {
    let bytes = carried_bytes(outputs, engine);
    if engine.backend == Backend::Gpu && bytes > CARRIED_BUDGET_BYTES {
        let most = CARRIED_BUDGET_BYTES / carried_bytes(1, engine);
        return Err(InputError::new(
            "duration",
            format!("{outputs} output times"),
            format!(
                "at most {most} output times for the GPU's carried tether (its readback, within {} MiB), or backend cpu",
                CARRIED_BUDGET_BYTES >> 20
            ),
        ));
    }
    Ok((CARRIED_BUDGET_BYTES / bytes.max(1)).max(1))
}

/// Runs each tether along its arm's program on `engine`: the reference
/// solver on all cores (`auto` too: the carried tether is not in the
/// engine's cost model), or one batch of the GPU engine
/// ([`gpu_simulation`], [`GPU_SCHEME`]). A tether that cannot start (no
/// hanging equilibrium) is its own error; the engine's are the batch's.
pub fn run_tethers(
    carried: &[(&Arm, &CarriedTether)],
    outputs: &[f64],
    engine: &EngineOptions,
) -> Result<Vec<Result<TetherRun, WorkflowError>>, WorkflowError> {
    if engine.backend != Backend::Gpu {
        return Ok(carried
            .par_iter()
            .map(|(arm, tether)| run_tether(arm, tether, outputs))
            .collect());
    }
    carried_group(outputs.len(), engine)?;
    let gpu = Gpu::open(engine.adapter.as_deref())?;
    if engine.precision == Precision::F64 && !gpu.adapter.shader_f64 {
        return Err(InputError::new(
            "precision",
            "f64",
            format!("f32: {} has no f64 shaders", gpu.adapter.name),
        )
        .into());
    }
    let sims: Vec<Result<GpuSimulation, WorkflowError>> = carried
        .iter()
        .map(|(arm, tether)| gpu_simulation(arm, tether, outputs, GPU_SCHEME))
        .collect();
    let ready: Vec<GpuSimulation> = sims
        .iter()
        .filter_map(|s| s.as_ref().ok())
        .cloned()
        .collect();
    let solver = format!(
        "GPU engine: {} scheme, {} on {}",
        GPU_SCHEME.name(),
        engine.precision.name(),
        gpu.adapter.name
    );
    let kind = EngineKind::Gpu {
        precision: engine.precision,
        scheme: GPU_SCHEME,
        layout: engine.gpu_layout,
    };
    let mut outcomes = Engine::new(kind, Arc::new(gpu))
        .run_built(&ready)?
        .into_iter();
    Ok(carried
        .iter()
        .zip(sims)
        .map(|((arm, tether), sim)| {
            let sim = sim?;
            let outcome = outcomes.next().expect("one outcome per simulation run");
            from_gpu(arm, tether, &sim, &outcome, &solver)
        })
        .collect())
}

/// The tether's run from the GPU engine's outcome: its start's pull and
/// markers from the start itself, the rest from the engine's frames; a run
/// that failed keeps only its start.
fn from_gpu(
    arm: &Arm,
    tether: &CarriedTether,
    sim: &GpuSimulation,
    outcome: &GpuOutcome,
    solver: &str,
) -> Result<TetherRun, WorkflowError> {
    // The start the simulation was built from (no second equilibrium
    // solve): its pull and markers at t = 0.
    let (q, v) = (&sim.initial_q, &sim.initial_v);
    let model = Tether::new(tether.params.clone())?;
    let markers_s = marker_arc_lengths_m(tether.params.length_m);
    let path = Arc::new(program_path(arm)?);
    let mut dynamics = TetherDynamics::new(model.clone(), path).map_err(solver_error)?;
    let r = dynamics.pin_reaction(0.0, q, v);
    let mut run = TetherRun {
        pull_n: vec![[-r[0], -r[1]]],
        times_s: vec![0.0],
        markers_m: vec![markers_s.map(|s| model.point(q, s))],
        failure: None,
        steps: outcome.steps,
        solver: solver.to_string(),
        tolerance_m: None,
    };
    match (&outcome.track_m, &outcome.pin_force_n) {
        (Some(track), Some(force)) if outcome.status.is_ok() => {
            for (i, f) in force.iter().enumerate() {
                run.pull_n.push([-f[0], -f[1]]);
                // The sample's time, or the end of its step where it falls
                // between steps (a last output interval cut short).
                run.times_s.push(sim.pin_force_time_s(i));
                if (i + 1) % PULL_SAMPLES_PER_OUTPUT == 0 {
                    let frame = &track[i * CARRIED_MARKERS..(i + 1) * CARRIED_MARKERS];
                    run.markers_m.push(std::array::from_fn(|j| frame[j]));
                }
            }
        }
        _ => {
            let time_s = match &outcome.status {
                RunStatus::Diverged {
                    time_s: Some(t), ..
                } => *t,
                _ => outcome.steps as f64 * sim.step_s,
            };
            run.failure = Some((time_s, format!("the carried tether: {}", outcome.status)));
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(times_s: Vec<f64>, pull: impl Fn(f64) -> f64) -> TetherRun {
        TetherRun {
            pull_n: times_s.iter().map(|&t| [pull(t), -2.0 * pull(t)]).collect(),
            times_s,
            markers_m: Vec::new(),
            failure: None,
            steps: 0,
            solver: String::new(),
            tolerance_m: None,
        }
    }

    /// Between samples the pull is exact for a quadratic on uneven
    /// spacing, to the ends (the last interval shorter, as a duration that
    /// is no whole number of intervals leaves it); on even spacing it is
    /// Catmull–Rom inside.
    #[test]
    fn the_pull_between_samples_is_exact_for_a_quadratic_on_any_spacing() {
        let quadratic = |t: f64| 3.0 - 2.0 * t + 40.0 * t * t;
        let run = run_of(vec![0.0, 0.01, 0.02, 0.03, 0.04, 0.044], quadratic);
        for t in [0.002, 0.013, 0.025, 0.031, 0.0399, 0.041, 0.0439] {
            let pull = run.pull_n(t);
            assert!((pull[0] - quadratic(t)).abs() < 1e-12, "{t}: {pull:?}");
            assert!(
                (pull[1] + 2.0 * quadratic(t)).abs() < 1e-12,
                "{t}: {pull:?}"
            );
        }
        // Even spacing, a cubic: Catmull–Rom's value in the interior.
        let cubic = |t: f64| t * t * t - t;
        let even = run_of((0..6).map(|k| 0.1 * k as f64).collect(), cubic);
        let (a, b, c, d) = (cubic(0.1), cubic(0.2), cubic(0.3), cubic(0.4));
        let u: f64 = 0.3;
        let catmull_rom = b + 0.5
            * u
            * (c - a + u * (2.0 * a - 5.0 * b + 4.0 * c - d + u * (3.0 * (b - c) + d - a)));
        assert!((even.pull_n(0.23)[0] - catmull_rom).abs() < 1e-14);
        // Held at the ends.
        assert_eq!(even.pull_n(-1.0), even.pull_n[0]);
        assert_eq!(even.pull_n(9.0), even.pull_n[5]);
    }

    #[test]
    fn carried_runs_are_grouped_within_the_budget_and_a_gpu_run_past_it_refused() {
        let (cpu, gpu) = (
            EngineOptions::cpu(),
            EngineOptions {
                backend: Backend::Gpu,
                ..EngineOptions::default()
            },
        );
        for engine in [&cpu, &gpu] {
            // A 1 s run at 0.01 s: many at once, each group within budget.
            let group = carried_group(101, engine).unwrap();
            assert!(group > 100, "{group}");
            assert!(group * carried_bytes(101, engine) <= CARRIED_BUDGET_BYTES);
        }
        // An hour at 0.01 s: a few at a time on the CPU, refused on the GPU.
        let group = carried_group(360_001, &cpu).unwrap();
        assert!(group <= 2 && group * carried_bytes(360_001, &cpu) <= CARRIED_BUDGET_BYTES);
        let refused = carried_group(360_001, &gpu).unwrap_err();
        assert_eq!(refused.field, "duration");
        let most = CARRIED_BUDGET_BYTES / carried_bytes(1, &gpu);
        assert!(carried_group(most, &gpu).is_ok() && carried_group(most + 1, &gpu).is_err());
    }
}
