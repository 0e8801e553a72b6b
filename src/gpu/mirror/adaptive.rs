//! step_adaptive.wgsl: the GPU's adaptive implicit scheme, one simulation
//! from its upload to its outcome. The reference solver's generalized-α with Newton's method and
//! local error control (src/solver/reference.rs, whose coefficients and
//! step control it takes from [`crate::scheme`]), in the engine's
//! formulation: displacements from the straight reference configuration
//! (with the drift since the last landing apart, as the fixed-step stages
//! keep it for f32), the tangent of [`super::tangent`] (tangent.wgsl), the
//! mesh's compact mass blocks, and the block-tridiagonal iteration matrix
//! M + γ'h C + β'h² K factored node by node from both ends with 4×4
//! cofactor inverses ([`super::twisted`]), its lower blocks kept apart
//! since K and C are not symmetric.
//!
//! Written as the stage runs it, per simulation: every decision is a
//! scalar of that simulation (its time, step, the η of its last Newton
//! iteration, the step its iteration matrix was factored at), every loop
//! runs over nodes in order, and no f64 function beyond the four
//! operations and the square root is used: the step factor's cube root is
//! an f32 power refined by one Newton step in the working precision, and
//! the borrowed η's power 0.8 an f32 power (only a stopping test reads it).
//! The stage transcribes it line by line (its lanes and barriers aside):
//! tests/mirror.rs holds this file to the reference solver, and
//! tests/gpu_adaptive.rs the stage to this file.
//!
//! A simulation lands exactly on each time it is observed at, with equal
//! substeps as the reference solver does: its frames, and for a swing-up
//! every J_a sample. Where the reference solver would return
//! `SolverError::NewtonFailed`, the run ends as
//! [`RunStatus::NewtonFailed`].

use nalgebra::{Matrix4, Vector2, Vector4};

use super::super::abi::{MESH_MASS_VEC4, NEVER_ABANDON_M2, SimControl, SimPhysics};
use super::super::adaptive::{
    AdaptiveOptions, AdaptiveOutcome, AdaptiveStats, Landings, same_landing,
};
use super::super::batch::{ChunkData, GpuSimulation, exploded};
use super::super::{GpuError, Precision};
use super::element::{ElementState, Section, element_force};
use super::motion::PinState;
use super::node_blocks::{coupling_transpose_times, node_mass_times, plus_node_mass};
use super::step::{
    FrameMarkers, Marker, PinAt, convert_measured, exploded_position, exploded_velocity,
    marker_table, mesh_mass, section,
};
use super::tangent::element_tangent;
use super::twisted::Factors;
use super::{MirrorReal, join, lit, xy, zw};
use crate::scheme::GeneralizedAlpha;
use crate::scheme::implicit_control::{
    BORROWED_ETA_EXPONENT, DIVERGING_RATE, FIRST_CORRECTION_FRACTION, KEEP_BELOW,
    MAX_NEWTON_ITERATIONS, MIN_STEP_S, NEWTON_TOLERANCE_FRACTION, REJECTED_STEP_FACTOR,
    STALE_STEP_CHANGE, STEP_FACTOR_MAX, STEP_FACTOR_MIN, STEP_SAFETY, SUBSTEP_SLACK,
    UNMEASURED_NEWTON_ETA,
};
use crate::status::RunStatus;

/// Runs `sim` (its upload `data`, a chunk of one: [`super::super::batch::chunk_data`])
/// with the adaptive scheme in `precision`, landing on `landings`.
pub fn run_adaptive(
    sim: &GpuSimulation,
    data: &ChunkData,
    landings: &Landings,
    options: &AdaptiveOptions,
    measured: Option<&[[f64; 2]]>,
    precision: Precision,
) -> Result<AdaptiveOutcome, GpuError> {
    sim.validate()?;
    Ok(match precision {
        Precision::F32 => run_typed::<f32>(sim, data, landings, options, measured),
        Precision::F64 => run_typed::<f64>(sim, data, landings, options, measured),
    })
}

/// `x`^⅓ for x > 0: an f32 power (the only one WGSL has), refined by one
/// Newton step in the working precision (to about f32's error squared).
fn cube_root<R: MirrorReal>(x: R) -> R {
    let y = lit::<R>((x.to_f64() as f32).powf(1.0 / 3.0) as f64);
    y - (y * y * y - x) / (lit::<R>(3.0) * y * y)
}

/// The reference solver's step factor (its `step_factor`) with
/// [`cube_root`]. An error so small that the factor reaches its largest
/// anyway skips the root (its ratio may overflow f32).
fn step_factor<R: MirrorReal>(error: R, tolerance: R) -> R {
    let largest = lit::<R>(STEP_FACTOR_MAX);
    let reach = lit::<R>((STEP_FACTOR_MAX / STEP_SAFETY).powi(3));
    let f = if error * reach <= tolerance {
        largest
    } else {
        lit::<R>(STEP_SAFETY) * cube_root(tolerance / error)
    };
    let f = f.max(lit(STEP_FACTOR_MIN)).min(largest);
    if f >= lit(1.0) && f < lit(KEEP_BELOW) {
        lit(1.0)
    } else {
        f
    }
}

/// η^0.8 in f32, as the stage will take it.
fn borrowed_eta_power<R: MirrorReal>(eta: R) -> R {
    lit::<R>((eta.to_f64() as f32).powf(BORROWED_ETA_EXPONENT as f32) as f64)
}

/// The scheme's coefficients in the working precision.
struct Coefficients<R> {
    alpha_m: R,
    alpha_f: R,
    beta: R,
    gamma: R,
    /// β', γ': the tangent stiffness's and damping's scales per h², h.
    beta_scaled: R,
    gamma_scaled: R,
    error_constant: R,
}

impl<R: MirrorReal> Coefficients<R> {
    fn new(rho_inf: f64) -> Self {
        let c = GeneralizedAlpha::new(rho_inf);
        let (bp, gp) = c.scaled();
        Self {
            alpha_m: lit(c.alpha_m),
            alpha_f: lit(c.alpha_f),
            beta: lit(c.beta),
            gamma: lit(c.gamma),
            beta_scaled: lit(bp),
            gamma_scaled: lit(gp),
            error_constant: lit(c.error_constant()),
        }
    }
}

/// A step's iterate: the drift since the last landing, velocities, true
/// and algorithmic accelerations.
#[derive(Clone)]
struct Iterate<R: MirrorReal> {
    drift: Vec<Vector4<R>>,
    vel: Vec<Vector4<R>>,
    acc: Vec<Vector4<R>>,
    alg: Vec<Vector4<R>>,
}

struct Adaptive<'a, R: MirrorReal> {
    ph: SimPhysics<R>,
    n: usize,
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    mass: [Vector4<R>; MESH_MASS_VEC4],
    pin: PinAt<R>,
    coef: Coefficients<R>,
    tolerance: R,
    max_step: R,
    c: &'a SimControl,
    /// The displacement as of the last landing.
    disp: Vec<Vector4<R>>,
    state: Iterate<R>,
    /// The true accelerations and the step of the last accepted step.
    previous: Option<(Vec<Vector4<R>>, R)>,
    factors: Factors<R>,
    t: R,
    step_s: R,
    newton_eta: R,
    stats: AdaptiveStats,
}

/// Node k's diagonal mass block (the stage's `mass_diagonal`), of the
/// mesh's compact blocks `mass`.
fn mass_diagonal<R: MirrorReal>(
    mass: &[Vector4<R>; MESH_MASS_VEC4],
    n: usize,
    k: usize,
) -> Vector4<R> {
    let [first, interior, last, _] = *mass;
    if k == 0 {
        first
    } else if k == n {
        last
    } else {
        interior
    }
}

/// The slack of equal substeps in the working precision: the reference
/// solver's, or eight units of roundoff where that is coarser.
fn substep_slack<R: MirrorReal>() -> R {
    let eps = R::default_epsilon() * lit(8.0);
    let slack = lit::<R>(SUBSTEP_SLACK);
    if eps > slack { eps } else { slack }
}

impl<'a, R: MirrorReal> Adaptive<'a, R> {
    fn new(data: &'a ChunkData, options: &AdaptiveOptions) -> Self {
        let c = &data.controls[0];
        let ph: SimPhysics<R> = data.physics[0].convert();
        let n = c.elements as usize;
        let slots = data.node_slots;
        let plane = |p: usize| -> Vec<Vector4<R>> {
            (0..=n)
                .map(|k| super::lit4(&data.state[p * slots + k]))
                .collect()
        };
        // The upload's planes: displacement, drift, velocity, acceleration.
        let (disp, drift, vel, acc) = (plane(0), plane(1), plane(2), plane(3));
        Self {
            le: ph.element_length_m,
            t0: Vector2::new(ph.tangent_x, ph.tangent_y),
            sec: section(&ph),
            mass: mesh_mass(&data.mesh, c),
            pin: PinAt::new(data, c, &ph),
            coef: Coefficients::new(options.spectral_radius),
            tolerance: lit(options.tolerance_m),
            max_step: lit(options.max_step_s),
            c,
            n,
            ph,
            disp,
            state: Iterate {
                drift,
                vel,
                alg: acc.clone(),
                acc,
            },
            previous: None,
            factors: Factors::new(n + 1),
            t: lit(0.0),
            step_s: lit(options.initial_step_s.min(options.max_step_s)),
            newton_eta: lit(UNMEASURED_NEWTON_ETA),
            stats: AdaptiveStats::default(),
        }
    }

    /// Node k's displacement in the iterate `it`, the pin's prescribed one
    /// at node 0: the stage's `trial_displacement`.
    fn displacement(&self, it: &Iterate<R>, k: usize, pin: &PinState<R>) -> Vector4<R> {
        let u = self.disp[k] + it.drift[k];
        if k == 0 {
            join(pin.position, zw(&u))
        } else {
            u
        }
    }

    /// Node k's displacement at the last fold, the pin's prescribed one
    /// (at the iterate's time) at node 0: the stage's `folded_displacement`.
    fn folded_displacement(&self, k: usize, pin: &PinState<R>) -> Vector4<R> {
        if k == 0 {
            join(pin.position, zw(&self.disp[0]))
        } else {
            self.disp[k]
        }
    }

    /// Node k's drift since the last fold in `it`, none of the pin's
    /// (in its displacement): the stage's `trial_drift`.
    fn trial_drift(it: &Iterate<R>, k: usize) -> Vector4<R> {
        if k == 0 {
            join(Vector2::zeros(), zw(&it.drift[0]))
        } else {
            it.drift[k]
        }
    }

    /// The element (k, k + 1)'s state in `it`, in f32 its displacement and
    /// drift apart (SPLIT_STRAIN, [`Precision::adaptive_splits_strain`]):
    /// one velocity for the material damping and the drag (both implicit).
    fn element_state(&self, it: &Iterate<R>, k: usize, pin: &PinState<R>) -> ElementState<R> {
        let (ua, ub, drift) = if R::PRECISION.adaptive_splits_strain() {
            (
                self.folded_displacement(k, pin),
                self.folded_displacement(k + 1, pin),
                Some((Self::trial_drift(it, k), Self::trial_drift(it, k + 1))),
            )
        } else {
            (
                self.displacement(it, k, pin),
                self.displacement(it, k + 1, pin),
                None,
            )
        };
        ElementState {
            ua,
            ub,
            damped_va: it.vel[k],
            damped_vb: it.vel[k + 1],
            drag_va: it.vel[k],
            drag_vb: it.vel[k + 1],
            drift,
        }
    }

    /// The mesh's diagonal mass block of node k.
    fn mass_diagonal(&self, k: usize) -> Vector4<R> {
        mass_diagonal(&self.mass, self.n, k)
    }

    /// The step's first iterate at t + h (`pin` there): ä extrapolated
    /// linearly from the last two steps, q and v from it by the
    /// generalized-α update, the pin's rows prescribed.
    fn predict(&self, h: R, pin: &PinState<R>) -> Iterate<R> {
        let c = &self.coef;
        let one = lit::<R>(1.0);
        let half = lit::<R>(0.5);
        let s = &self.state;
        let mut it = s.clone();
        for k in 0..=self.n {
            let mut acc = match &self.previous {
                Some((acc_prev, h_prev)) => {
                    let r = h / *h_prev;
                    s.acc[k] + (s.acc[k] - acc_prev[k]) * r
                }
                None => s.acc[k],
            };
            if k == 0 {
                acc = join(pin.acceleration, zw(&acc));
            }
            let alg = (acc * (one - c.alpha_f) + s.acc[k] * c.alpha_f - s.alg[k] * c.alpha_m)
                / (one - c.alpha_m);
            it.drift[k] =
                s.drift[k] + s.vel[k] * h + (s.alg[k] * (half - c.beta) + alg * c.beta) * (h * h);
            let mut vel = s.vel[k] + (s.alg[k] * (one - c.gamma) + alg * c.gamma) * h;
            if k == 0 {
                vel = join(pin.velocity, zw(&vel));
            }
            it.vel[k] = vel;
            it.acc[k] = acc;
            it.alg[k] = alg;
        }
        it
    }

    /// Factors M + γ'h C + β'h² K at `it`: assembled node by node as the
    /// stage's tangent passes leave it, then factored from both ends
    /// ([`Factors::factor`]). False: a pivot block is singular (or the
    /// iterate is not finite).
    fn factor(&mut self, it: &Iterate<R>, h: R, pin: &PinState<R>) -> bool {
        let n = self.n;
        let stiffness_scale = self.coef.beta_scaled * h * h;
        let damping_scale = self.coef.gamma_scaled * h;
        let coupling = self.mass[3];
        let coupling_t = Vector4::new(coupling.x, coupling.z, coupling.y, coupling.w);
        // The previous element's (b, b) block.
        let mut tail = Matrix4::zeros();
        for k in 0..=n {
            // The two elements' blocks summed (the stage's element passes
            // assign and add, in either order, which is exact); the mass
            // comes in the factorization.
            let mut elements = tail;
            if k < n {
                let blocks = element_tangent(
                    self.le,
                    self.t0,
                    self.sec,
                    self.ph.drag_factor_kg_m3,
                    &self.element_state(it, k, pin),
                    stiffness_scale,
                    damping_scale,
                );
                elements = if k == 0 { blocks.aa } else { tail + blocks.aa };
                self.factors.upper[k] = plus_node_mass(&blocks.ab, &coupling);
                self.factors.lower[k + 1] = plus_node_mass(&blocks.ba, &coupling_t);
                tail = blocks.bb;
            }
            self.factors.inverse[k] = elements;
        }
        let mass = self.mass;
        if !self.factors.factor(n, |k| mass_diagonal(&mass, n, k)) {
            self.factors.step_s = lit(0.0);
            return false;
        }
        self.factors.step_s = h;
        self.stats.factorizations += 1;
        true
    }

    /// The Newton residual f − M ä at `it`, node by node; node 0's pin
    /// rows 0.
    fn residual(&self, it: &Iterate<R>, pin: &PinState<R>) -> Vec<Vector4<R>> {
        let n = self.n;
        let mut r = vec![Vector4::zeros(); n + 1];
        for k in 0..n {
            let fe = element_force(
                self.le,
                self.t0,
                self.sec,
                self.ph.weight_per_length_n_m,
                self.ph.drag_factor_kg_m3,
                &self.element_state(it, k, pin),
                None,
            );
            r[k] += fe.a;
            r[k + 1] += fe.b;
        }
        r[n].y -= self.ph.tip_weight_n;
        let coupling = self.mass[3];
        for (k, rk) in r.iter_mut().enumerate() {
            let mut m_acc = node_mass_times(&self.mass_diagonal(k), &it.acc[k]);
            if k < n {
                m_acc += node_mass_times(&coupling, &it.acc[k + 1]);
            }
            if k > 0 {
                m_acc += coupling_transpose_times(&coupling, &it.acc[k - 1]);
            }
            *rk -= m_acc;
        }
        r[0] = join(Vector2::zeros(), zw(&r[0]));
        r
    }

    /// The length weights of a node's coordinates: 1 for positions, l_e
    /// for slopes (the reference solver's `length_weights`).
    fn weights(&self) -> Vector4<R> {
        let one = lit::<R>(1.0);
        Vector4::new(one, one, self.le, self.le)
    }

    /// Newton's iteration on the step from `it`, refreshing the iteration
    /// matrix once where a stale one (not `fresh`) may be why it does not
    /// converge: the reference solver's `newton`. False: the step must be
    /// redone smaller.
    fn newton(&mut self, it: &mut Iterate<R>, h: R, fresh: bool, pin: &PinState<R>) -> bool {
        let c = &self.coef;
        let (alpha_m, alpha_f) = (c.alpha_m, c.alpha_f);
        let (bp, gp) = (c.beta_scaled, c.gamma_scaled);
        let one = lit::<R>(1.0);
        let weights = self.weights();
        let newton_tol = lit::<R>(NEWTON_TOLERANCE_FRACTION) * self.tolerance;
        let unmeasured = lit::<R>(UNMEASURED_NEWTON_ETA);
        let mut refreshed = fresh;
        let mut previous: Option<R> = None;
        let mut iterations = 0u32;
        let borrowed = self.newton_eta.max(R::default_epsilon());
        let mut eta = if borrowed < one {
            borrowed_eta_power(borrowed)
        } else {
            borrowed
        };
        loop {
            iterations += 1;
            self.stats.newton_iterations += 1;
            let mut d = self.residual(it, pin);
            self.factors.solve(&mut d);
            let mut correction: R = lit(0.0);
            for (k, dk) in d.iter().enumerate() {
                // Node 0's pin rows stay prescribed.
                let dk = if k == 0 {
                    join(Vector2::zeros(), zw(dk))
                } else {
                    *dk
                };
                it.acc[k] += dk;
                it.alg[k] += dk * ((one - alpha_f) / (one - alpha_m));
                it.drift[k] += dk * (bp * h * h);
                it.vel[k] += dk * (gp * h);
                let moved = (dk * (bp * h * h)).component_mul(&weights).abs().max();
                correction = correction.max(moved);
            }
            if !correction.is_finite() {
                return false;
            }
            let rate = previous.map(|p| correction / p);
            if let Some(rate) = rate {
                eta = if rate < one {
                    rate / (one - rate)
                } else {
                    unmeasured
                };
            }
            let trusted = previous.is_some()
                || correction < lit::<R>(FIRST_CORRECTION_FRACTION) * self.tolerance;
            if trusted && eta * correction < newton_tol {
                self.newton_eta = eta;
                return true;
            }
            previous = Some(correction);
            if iterations >= MAX_NEWTON_ITERATIONS || rate.is_some_and(|r| r > lit(DIVERGING_RATE))
            {
                if !refreshed {
                    if !self.factor(it, h, pin) {
                        return false;
                    }
                    refreshed = true;
                    previous = None;
                    iterations = 0;
                    eta = unmeasured;
                    continue;
                }
                return false;
            }
        }
    }

    /// One step of size h to t + h: the converged iterate and its error
    /// estimate, or None when it must be redone smaller.
    fn try_step(&mut self, h: R) -> Option<(Iterate<R>, R, PinState<R>)> {
        let t1 = self.t + h;
        let pin = self.pin.at(t1);
        let mut it = self.predict(h, &pin);
        let factored = self.factors.step_s;
        let stale =
            factored == lit(0.0) || (h / factored - lit(1.0)).abs() > lit(STALE_STEP_CHANGE);
        if stale && !self.factor(&it, h, &pin) {
            return None;
        }
        if !self.newton(&mut it, h, stale, &pin) {
            return None;
        }
        let weights = self.weights();
        let mut largest: R = lit(0.0);
        for k in 0..=self.n {
            let mut da = (it.alg[k] - self.state.alg[k]).component_mul(&weights);
            if k == 0 {
                da = join(Vector2::zeros(), zw(&da));
            }
            largest = largest.max(da.abs().max());
        }
        let error = self.coef.error_constant * h * h * largest;
        if error > self.tolerance {
            return None;
        }
        Some((it, error, pin))
    }

    /// Advances exactly to `target` with equal substeps that end on it:
    /// the reference solver's `advance_to`. Err: Newton failed.
    fn advance_to(&mut self, target: R) -> Result<(), RunStatus> {
        let one = lit::<R>(1.0);
        while self.t < target {
            let remaining = target - self.t;
            let substeps = (remaining / self.step_s * (one - substep_slack::<R>()))
                .ceil()
                .max(one);
            let h = remaining / substeps;
            // A step below the clock's resolution (possible in f32 only)
            // would never arrive: the run fails as below the smallest step.
            if self.t + h == self.t {
                return Err(RunStatus::NewtonFailed {
                    time_s: self.t.to_f64(),
                    step_s: h.to_f64(),
                });
            }
            match self.try_step(h) {
                Some((it, error, pin)) => {
                    let last = substeps == one;
                    self.accept(it, h, error, &pin, last.then_some(target));
                    let factor = step_factor(error, self.tolerance);
                    let short_landing = h < lit::<R>(0.5) * self.step_s;
                    if !(short_landing && h * factor >= self.step_s) {
                        self.step_s = (h * factor).min(self.max_step);
                    }
                }
                None => {
                    self.stats.rejected_steps += 1;
                    self.step_s = h * lit(REJECTED_STEP_FACTOR);
                }
            }
            if self.step_s < lit(MIN_STEP_S) {
                return Err(RunStatus::NewtonFailed {
                    time_s: self.t.to_f64(),
                    step_s: self.step_s.to_f64(),
                });
            }
        }
        Ok(())
    }

    fn accept(&mut self, it: Iterate<R>, h: R, error: R, pin: &PinState<R>, exact_end: Option<R>) {
        let acc = std::mem::replace(&mut self.state, it).acc;
        self.previous = Some((acc, h));
        // The pin's displacement in the displacement plane, as the
        // fixed-step stages keep it.
        self.disp[0] = join(pin.position, zw(&self.disp[0]));
        self.state.drift[0] = join(Vector2::zeros(), zw(&self.state.drift[0]));
        self.t = exact_end.unwrap_or(self.t + h);
        let s = &mut self.stats;
        s.steps += 1;
        s.max_local_error_m = s.max_local_error_m.max(error.to_f64());
    }

    /// The drift folded into the displacement (at every landing), and the
    /// explosion check of every node.
    fn fold(&mut self) -> bool {
        let mut exploded = false;
        for k in 0..=self.n {
            self.disp[k] += self.state.drift[k];
            self.state.drift[k] = Vector4::zeros();
            exploded = exploded
                || exploded_position(&self.disp[k], self.ph.length_m)
                || exploded_velocity(&self.state.vel[k]);
        }
        exploded
    }
}

fn run_typed<R: MirrorReal>(
    sim: &GpuSimulation,
    data: &ChunkData,
    landings: &Landings,
    options: &AdaptiveOptions,
    measured: Option<&[[f64; 2]]>,
) -> AdaptiveOutcome {
    let measured = convert_measured::<R>(measured);
    let mut a = Adaptive::<R>::new(data, options);
    let markers: Vec<Marker<R>> = marker_table(data, a.c);
    let frame_markers = FrameMarkers {
        c: a.c,
        t0: a.t0,
        pin0: Vector2::new(a.ph.pin_x_m, a.ph.pin_y_m),
        markers: &markers,
    };
    let (interval, samples) = landings.samples.unwrap_or((0.0, 0));
    let frames = &landings.frame_times_s;
    let (mut frames_done, mut samples_done) = (0usize, 0u64);
    let mut identification_error: R = lit(0.0);
    let mut swingup_min: R = lit(sim.initial_swingup_m);
    let mut swingup_time: R = lit(0.0);
    let mut track = Vec::new();
    let mut status = RunStatus::Ok;
    let abandon_above: R = lit(sim.abandon_above_m2.unwrap_or(NEVER_ABANDON_M2));
    'landings: loop {
        let next_frame = frames.get(frames_done).copied();
        let next_sample = (samples_done < samples).then(|| (samples_done + 1) as f64 * interval);
        let target = match (next_frame, next_sample) {
            (Some(f), Some(s)) => f.min(s),
            (Some(f), None) => f,
            (None, Some(s)) => s,
            (None, None) => break,
        };
        if let Err(failed) = a.advance_to(lit(target)) {
            status = failed;
            break;
        }
        if a.fold() {
            status = exploded(a.t.to_f64(), R::PRECISION);
            break;
        }
        if next_sample.is_some_and(|s| same_landing(s, target)) {
            samples_done += 1;
            let t = a.t;
            let pin = a.pin.at(t);
            let tip = a.n;
            let gap = pin.position - (a.t0 * a.ph.length_m + xy(&a.disp[tip]));
            let tip_velocity = xy(&a.state.vel[tip]);
            let j_a = gap.norm()
                + a.ph.velocity_weight_s * tip_velocity.norm()
                + a.ph.time_weight_m_s * t;
            if j_a < swingup_min {
                swingup_min = j_a;
                swingup_time = t;
            }
        }
        while frames
            .get(frames_done)
            .is_some_and(|&f| same_landing(f, target))
        {
            let disp = &a.disp;
            identification_error +=
                frame_markers.observe(|k| disp[k], frames_done, &measured, &mut track);
            frames_done += 1;
            // step_io.wgsl's `abandons`.
            if frames_done < frames.len() && identification_error > abandon_above {
                status = RunStatus::Abandoned {
                    time_s: a.t.to_f64(),
                };
                break 'landings;
            }
        }
    }
    AdaptiveOutcome {
        stats: a.stats,
        identification_error_m2: identification_error.to_f64(),
        swingup_min_m: swingup_min.to_f64(),
        swingup_time_s: swingup_time.to_f64(),
        track_m: (sim.record_track && status.is_ok()).then_some(track),
        status,
    }
}
