// Pipeline stage "step_adaptive": the adaptive implicit scheme, the
// reference solver's generalized-α with Newton's method on the
// block-tridiagonal iteration matrix M + γ'h C + β'h² K and local error
// control, each simulation with its own step, landing exactly on its
// frames and (for a swing-up) its J_a samples. Its arithmetic is that of
// src/gpu/mirror/adaptive.rs, operation for operation; tests/gpu_adaptive.rs holds
// the two together and the mirror holds the reference solver (tests/mirror.rs).
//
// A workgroup holds GROUP_SIMS simulations ("slots") with SIM_LANES
// invocations ("lanes") each. A simulation's state stays in the storage
// buffers (the `state` planes and its `factors`), so a slot's size does not
// depend on n. Per attempted step, for each slot:
//
// 1. its lanes predict the step's first iterate, node by node;
// 2. where its iteration matrix is stale (the step changed by a quarter
//    since it was factored, or none is), its lanes evaluate the elements'
//    tangent blocks in one pass (an element's blocks on its second node
//    go to a slot of their own, so that no two elements write one place),
//    and lanes 0 and 1 factor the matrix node by node from its two ends
//    towards the middle;
// 3. Newton: its lanes assemble the residual f − M ä (the elements' forces
//    in one pass again, then the nodes), lanes 0 and 1 solve with the
//    factors from the two ends (forward sweeps, then back), its lanes
//    update the iterate and their largest correction; every lane of the
//    slot then takes the same decision (converged, go on, refactor once,
//    fail) from the same numbers;
// 4. the error estimate (a largest difference over the lanes), accept or
//    reject, the new step; at a landing the drift is folded, the
//    explosion check made, and lane 0 observes the frame or the sample.
//
// Every barrier is reached by every invocation: the attempt loop and the
// Newton loop have uniform counts (a dispatch's attempts, and the most
// rounds Newton may take), and a slot that is not attempting, not
// factoring or not iterating skips the work, not the barriers. A slot's
// scalars (time, step, η, counters) are held by each of its lanes, which
// all compute them alike.
//
// Prepended per pipeline (src/gpu/shader.rs): GROUP_SIMS, SIM_LANES,
// SEMI_IMPLICIT (false: element.wgsl's force without damping blocks), and
// the scheme's coefficients ALPHA_M, ALPHA_F, BETA, GAMMA, BETA_SCALED,
// GAMMA_SCALED, ERROR_CONSTANT, with the step control's constants
// (scheme::implicit_control in src/scheme.rs).
//
// Needs: a precision module, those constants, matrix.wgsl, node_blocks.wgsl,
// element.wgsl, motion.wgsl, tangent.wgsl, step_io.wgsl.

const GROUP_INVOCATIONS: u32 = GROUP_SIMS * SIM_LANES;
const STATUS_NEWTON_FAILED: u32 = 3u;
// State planes beyond step_io.wgsl's four (ADAPTIVE_PLANES in src/gpu/abi.rs).
const PLANE_ALGORITHMIC: u32 = 4u;
const PLANE_PREVIOUS_ACCELERATION: u32 = 5u;
const PLANE_TRIAL_DRIFT: u32 = 6u;
const PLANE_TRIAL_VELOCITY: u32 = 7u;
const PLANE_TRIAL_ACCELERATION: u32 = 8u;
const PLANE_TRIAL_ALGORITHMIC: u32 = 9u;
const PLANE_RESIDUAL: u32 = 10u;
const PLANE_CORRECTION: u32 = 11u;
const PLANE_PREVIOUS_ELEMENT_FORCE: u32 = 12u;
// The factors per node: L, G, E (four columns each), and the previous
// element's tangent block on the node, which the factorization adds.
const FACTOR_LOWER: u32 = 0u;
const FACTOR_INVERSE: u32 = 1u;
const FACTOR_UPPER: u32 = 2u;
const FACTOR_PREVIOUS_ELEMENT: u32 = 3u;

// Per simulation, read and written by every dispatch (AdaptiveProgress in
// src/gpu/abi.rs).
struct AdaptiveProgress {
    time_s: real,
    step_s: real,
    // The last accepted step (0: none yet) and the step the factors were
    // made for (0: none).
    previous_step_s: real,
    factored_step_s: real,
    newton_eta: real,
    max_local_error_m: real,
    status: u32,
    steps: u32,
    rejected_steps: u32,
    newton_iterations: u32,
    factorizations: u32,
    frames_done: u32,
    samples_done: u32,
    // Attempts made: the host checks them against the dispatches' loops
    // (Mesa's loop limit skips iterations silently).
    attempts: u32,
}

// Per simulation, read only (AdaptiveSettings in src/gpu/abi.rs).
struct AdaptiveSettings {
    tolerance_m: real,
    max_step_s: real,
    sample_interval_s: real,
    samples: u32,
    _pad: u32,
}

@group(0) @binding(11) var<storage, read_write> adaptive: array<AdaptiveProgress>;
// Each simulation's frames as model times (from SimControl.frame_offset).
@group(0) @binding(12) var<storage, read> frame_times: array<real>;
@group(0) @binding(13) var<storage, read_write> factors: array<real4>;
@group(0) @binding(14) var<storage, read> settings: array<AdaptiveSettings>;

// Per lane: its largest correction or error estimate, for its slot's lanes
// to combine.
var<workgroup> w_partial: array<real, GROUP_INVOCATIONS>;
// Per lane: whether one of its nodes exploded at a landing. Apart from
// w_partial, so that a lane may flag it while its neighbours still read
// their error estimate (no barrier between).
var<workgroup> w_exploded: array<u32, GROUP_INVOCATIONS>;
// Per slot: whether its factorization succeeded (first side 1's part).
var<workgroup> w_factored: array<u32, GROUP_SIMS>;
// The workgroup's flags, gathered from its slots (atomicOr) and read by
// every invocation in one uniform load: whether any slot goes on (attempts
// a step, at an attempt's start; iterates Newton, at a round's end) and
// whether any factors in the coming round. No slot going on ends the
// attempt loop (the workgroup is done) or the rounds (most steps converge
// in one or two of the sixteen allowed, and every round costs seven
// barriers); no slot factoring skips the tangent pass, the factorization
// and their three barriers (most rounds reuse an earlier factorization).
// One word for both flags: one uniform load instead of two.
const FLAG_GOING: u32 = 1u;
const FLAG_FACTORING: u32 = 2u;
var<workgroup> w_flags: atomic<u32>;
var<workgroup> w_flags_uniform: u32;

fn factor_slot(which: u32, column: u32, node: u32, sim: u32) -> u32 {
    return ((which * 4u + column) * params.node_slots + node) * params.simulations + sim;
}

fn load_factor(which: u32, node: u32, sim: u32) -> real4x4 {
    return real4x4(factors[factor_slot(which, 0u, node, sim)],
                   factors[factor_slot(which, 1u, node, sim)],
                   factors[factor_slot(which, 2u, node, sim)],
                   factors[factor_slot(which, 3u, node, sim)]);
}

// Written out: lavapipe counts every loop iteration against its limit.
fn store_factor(which: u32, node: u32, sim: u32, m: real4x4) {
    factors[factor_slot(which, 0u, node, sim)] = m[0];
    factors[factor_slot(which, 1u, node, sim)] = m[1];
    factors[factor_slot(which, 2u, node, sim)] = m[2];
    factors[factor_slot(which, 3u, node, sim)] = m[3];
}

// Finite (WGSL has no isfinite; NaN fails the comparison too).
fn finite(x: real) -> bool {
    return abs(x) < HUGE;
}

fn finite4(v: real4) -> bool {
    return finite(v.x) && finite(v.y) && finite(v.z) && finite(v.w);
}

fn plane(p: u32, node: u32, sim: u32) -> real4 {
    return state[slot(p, node, sim)];
}

fn set_plane(p: u32, node: u32, sim: u32, v: real4) {
    state[slot(p, node, sim)] = v;
}

// Storage and workgroup writes before the reads after it.
fn barrier() {
    storageBarrier();
    workgroupBarrier();
}

// The largest of the slot's lanes' partial values.
fn slot_max(s: u32) -> real {
    var m: real = 0.0;
    for (var l = 0u; l < SIM_LANES; l++) {
        m = max(m, w_partial[s * SIM_LANES + l]);
    }
    return m;
}

// Whether any of the slot's lanes flagged an explosion.
fn slot_exploded(s: u32) -> bool {
    var any = 0u;
    for (var l = 0u; l < SIM_LANES; l++) {
        any = any | w_exploded[s * SIM_LANES + l];
    }
    return any != 0u;
}

// Local 0 hands the gathered flags over and clears them for the next
// gathering; every invocation then loads them (a barrier). The gathering
// must be behind a barrier.
fn take_flags(local: u32) -> u32 {
    if (local == 0u) {
        w_flags_uniform = atomicLoad(&w_flags);
        atomicStore(&w_flags, 0u);
    }
    return workgroupUniformLoad(&w_flags_uniform);
}

fn largest4(v: real4) -> real {
    return max(max(v.x, v.y), max(v.z, v.w));
}

// Node k's displacement in the trial iterate, the pin's at node 0.
fn trial_displacement(k: u32, sim: u32, pin: PinState) -> real4 {
    let u = plane(PLANE_DISPLACEMENT, k, sim) + plane(PLANE_TRIAL_DRIFT, k, sim);
    if (k == 0u) {
        return real4(pin.position, u.zw);
    }
    return u;
}

// Node k's displacement at the last fold, the pin's (at the trial time) at
// node 0.
fn folded_displacement(k: u32, sim: u32, pin: PinState) -> real4 {
    let u = plane(PLANE_DISPLACEMENT, k, sim);
    if (k == 0u) {
        return real4(pin.position, u.zw);
    }
    return u;
}

// Node k's drift since the last fold in the trial iterate; the pin's is
// in its displacement.
fn trial_drift(k: u32, sim: u32) -> real4 {
    let d = plane(PLANE_TRIAL_DRIFT, k, sim);
    if (k == 0u) {
        return real4(0.0, 0.0, d.zw);
    }
    return d;
}

// Element k's state in the trial iterate, with SPLIT_STRAIN its
// displacement and drift apart: one velocity for the material damping and
// the drag (both implicit).
fn trial_element(k: u32, sim: u32, pin: PinState) -> ElementState {
    let va = plane(PLANE_TRIAL_VELOCITY, k, sim);
    let vb = plane(PLANE_TRIAL_VELOCITY, k + 1u, sim);
    if (SPLIT_STRAIN) {
        return ElementState(folded_displacement(k, sim, pin), folded_displacement(k + 1u, sim, pin),
                            va, vb, va, vb, trial_drift(k, sim), trial_drift(k + 1u, sim));
    }
    return ElementState(trial_displacement(k, sim, pin), trial_displacement(k + 1u, sim, pin),
                        va, vb, va, vb, real4(0.0), real4(0.0));
}

fn mass_diagonal(mass: MeshMass, k: u32, n: u32) -> real4 {
    if (k == 0u) {
        return mass.first;
    }
    if (k == n) {
        return mass.last;
    }
    return mass.interior;
}

// The mirror's `predict`, node k.
fn predict_node(k: u32, sim: u32, h: real, p: AdaptiveProgress, pin: PinState) {
    let a = plane(PLANE_ACCELERATION, k, sim);
    let alg = plane(PLANE_ALGORITHMIC, k, sim);
    let v = plane(PLANE_VELOCITY, k, sim);
    var acc = a;
    if (p.previous_step_s > 0.0) {
        let r = h / p.previous_step_s;
        acc = a + (a - plane(PLANE_PREVIOUS_ACCELERATION, k, sim)) * r;
    }
    if (k == 0u) {
        acc = real4(pin.acceleration, acc.zw);
    }
    let alg_t = (acc * (1.0 - ALPHA_F) + a * ALPHA_F - alg * ALPHA_M) / (1.0 - ALPHA_M);
    let drift = plane(PLANE_DRIFT, k, sim) + v * h
        + (alg * (0.5 - BETA) + alg_t * BETA) * (h * h);
    var vel = v + (alg * (1.0 - GAMMA) + alg_t * GAMMA) * h;
    if (k == 0u) {
        vel = real4(pin.velocity, vel.zw);
    }
    set_plane(PLANE_TRIAL_DRIFT, k, sim, drift);
    set_plane(PLANE_TRIAL_VELOCITY, k, sim, vel);
    set_plane(PLANE_TRIAL_ACCELERATION, k, sim, acc);
    set_plane(PLANE_TRIAL_ALGORITHMIC, k, sim, alg_t);
}

// Element j's tangent blocks into the factor slots, each block where no
// other element writes: (a, a) into G's slot of node j, (b, b) into the
// previous element's slot of node j + 1 (the factorization sums the two,
// `element_blocks`), U into E's slot and L of node j + 1 into its slot,
// each with the mesh's mass coupling. So one pass takes every element.
fn tangent_element(j: u32, sim: u32, h: real, ph: SimPhysics, mass: MeshMass, pin: PinState) {
    let blocks = element_tangent(ph.element_length_m, real2(ph.tangent_x, ph.tangent_y),
                                 section(ph), ph.drag_factor_kg_m3, trial_element(j, sim, pin),
                                 BETA_SCALED * h * h, GAMMA_SCALED * h);
    store_factor(FACTOR_INVERSE, j, sim, blocks.aa);
    store_factor(FACTOR_PREVIOUS_ELEMENT, j + 1u, sim, blocks.bb);
    store_factor(FACTOR_UPPER, j, sim, plus_node_mass(blocks.ab, mass.coupling));
    store_factor(FACTOR_LOWER, j + 1u, sim, plus_node_mass(blocks.ba, mass.coupling.xzyw));
}

// Node k's diagonal block from its elements' tangents: element k − 1's
// (b, b) plus element k's (a, a), as the mirror sums them.
fn element_blocks(k: u32, n: u32, sim: u32) -> real4x4 {
    if (k == 0u) {
        return load_factor(FACTOR_INVERSE, 0u, sim);
    }
    if (k == n) {
        return load_factor(FACTOR_PREVIOUS_ELEMENT, n, sim);
    }
    return load_factor(FACTOR_PREVIOUS_ELEMENT, k, sim) + load_factor(FACTOR_INVERSE, k, sim);
}

// The iteration matrix is factored and solved from both ends (a twisted
// block factorization): side 0 eliminates nodes 0 .. m − 1 downward
// (G = (D − L E)⁻¹, E = G U), side 1 nodes n .. m + 1 upward
// (H = (D − U F)⁻¹, F = H L), and the middle node m takes both, its pivot
// D − L E − U F. Each side is one lane's chain of about n/2 nodes, half a
// one-ended elimination's, and the two lanes run the same instructions on
// other addresses: a warp runs diverging branches one after the other. A
// slot of one lane runs both sides. Per side, which factor slot holds the
// coupling towards the nodes it has eliminated (L, U) and which the
// coupling away from them, replaced by G U or H L.
fn middle_node(n: u32) -> u32 {
    return (n + 1u) / 2u;
}

fn side_length(side: u32, n: u32) -> u32 {
    let m = middle_node(n);
    return select(m, n - m, side == 1u);
}

fn side_node(side: u32, i: u32, n: u32) -> u32 {
    return select(i, n - i, side == 1u);
}

fn towards_eliminated(side: u32) -> u32 {
    return select(FACTOR_LOWER, FACTOR_UPPER, side == 1u);
}

fn away_from_eliminated(side: u32) -> u32 {
    return select(FACTOR_UPPER, FACTOR_LOWER, side == 1u);
}

fn finite4x4(m: real4x4) -> bool {
    return finite4(m[0]) && finite4(m[1]) && finite4(m[2]) && finite4(m[3]);
}

// One side's elimination, in place. False: a pivot block is singular (or
// not finite).
fn factor_side(side: u32, n: u32, sim: u32, mass: MeshMass) -> bool {
    let towards = towards_eliminated(side);
    let away = away_from_eliminated(side);
    var eliminated = real4x4();
    for (var i = 0u; i < side_length(side, n); i++) {
        let k = side_node(side, i, n);
        var pivot = plus_node_mass(element_blocks(k, n, sim), mass_diagonal(mass, k, n));
        var coupling = load_factor(away, k, sim);
        if (k == 0u) {
            pivot = pin_rows_pivot(pivot);
            coupling = pin_rows_coupling(coupling);
        }
        if (i > 0u) {
            pivot = pivot - load_factor(towards, k, sim) * eliminated;
        }
        let g = inverse4(pivot);
        if (!finite4x4(g)) {
            return false;
        }
        eliminated = g * coupling;
        store_factor(FACTOR_INVERSE, k, sim, g);
        store_factor(away, k, sim, eliminated);
    }
    return true;
}

// The middle node's pivot from both sides' eliminations. False: singular.
fn factor_middle(n: u32, sim: u32, mass: MeshMass) -> bool {
    let m = middle_node(n);
    var pivot = plus_node_mass(element_blocks(m, n, sim), mass_diagonal(mass, m, n))
        - load_factor(FACTOR_LOWER, m, sim) * load_factor(FACTOR_UPPER, m - 1u, sim);
    if (m < n) {
        pivot = pivot - load_factor(FACTOR_UPPER, m, sim) * load_factor(FACTOR_LOWER, m + 1u, sim);
    }
    let g = inverse4(pivot);
    if (!finite4x4(g)) {
        return false;
    }
    store_factor(FACTOR_INVERSE, m, sim, g);
    return true;
}

// Node k's residual after the force pass: its two elements' forces, the
// tip's weight, minus M ä, the pin's rows 0.
fn residual_node(k: u32, n: u32, sim: u32, ph: SimPhysics, mass: MeshMass) {
    var r: real4;
    if (k == 0u) {
        r = plane(PLANE_RESIDUAL, 0u, sim);
    } else if (k == n) {
        r = plane(PLANE_PREVIOUS_ELEMENT_FORCE, n, sim);
        r.y -= ph.tip_weight_n;
    } else {
        r = plane(PLANE_PREVIOUS_ELEMENT_FORCE, k, sim) + plane(PLANE_RESIDUAL, k, sim);
    }
    var m_acc = node_mass_times(mass_diagonal(mass, k, n), plane(PLANE_TRIAL_ACCELERATION, k, sim));
    if (k < n) {
        m_acc += node_mass_times(mass.coupling, plane(PLANE_TRIAL_ACCELERATION, k + 1u, sim));
    }
    if (k > 0u) {
        m_acc += coupling_transpose_times(mass.coupling,
                                          plane(PLANE_TRIAL_ACCELERATION, k - 1u, sim));
    }
    r -= m_acc;
    if (k == 0u) {
        r = real4(0.0, 0.0, r.zw);
    }
    set_plane(PLANE_RESIDUAL, k, sim, r);
}

// Element j's force: on node j into the residual plane, on node j + 1
// into the previous element's force plane, where no other element writes
// (`residual_node` sums the two). So one pass takes every element.
fn force_element(j: u32, sim: u32, ph: SimPhysics, pin: PinState) {
    let no_damping = Symmetric4(real4(0.0), real4(0.0), real2(0.0));
    var dmp = ElementDamping(no_damping, real4x4(), no_damping);
    let fe = element_force(ph.element_length_m, real2(ph.tangent_x, ph.tangent_y), section(ph),
                           ph.weight_per_length_n_m, ph.drag_factor_kg_m3,
                           trial_element(j, sim, pin), &dmp, 0.0);
    set_plane(PLANE_RESIDUAL, j, sim, fe.a);
    set_plane(PLANE_PREVIOUS_ELEMENT_FORCE, j + 1u, sim, fe.b);
}

// One side's forward sweep, in place of the residual: y = G (r − L y')
// downward, z = H (r − U z') upward.
fn forward_side(side: u32, n: u32, sim: u32) {
    let towards = towards_eliminated(side);
    var eliminated = real4(0.0);
    for (var i = 0u; i < side_length(side, n); i++) {
        let k = side_node(side, i, n);
        var r = plane(PLANE_RESIDUAL, k, sim);
        if (i > 0u) {
            r = r - load_factor(towards, k, sim) * eliminated;
        }
        eliminated = load_factor(FACTOR_INVERSE, k, sim) * r;
        set_plane(PLANE_RESIDUAL, k, sim, eliminated);
    }
}

// The middle node's correction from both sweeps (each side's lane works it
// out alike), then the side's back substitution, x = y − E x' upward and
// x = z − F x' downward, into the correction plane: the sweeps' plane
// stays as the other side's lane reads it.
fn back_side(side: u32, n: u32, sim: u32) {
    let m = middle_node(n);
    var r = plane(PLANE_RESIDUAL, m, sim)
        - load_factor(FACTOR_LOWER, m, sim) * plane(PLANE_RESIDUAL, m - 1u, sim);
    if (m < n) {
        r = r - load_factor(FACTOR_UPPER, m, sim) * plane(PLANE_RESIDUAL, m + 1u, sim);
    }
    var solved = load_factor(FACTOR_INVERSE, m, sim) * r;
    if (side == 0u) {
        set_plane(PLANE_CORRECTION, m, sim, solved);
    }
    let away = away_from_eliminated(side);
    for (var i = 1u; i <= side_length(side, n); i++) {
        let k = select(m - i, m + i, side == 1u);
        solved = plane(PLANE_RESIDUAL, k, sim) - load_factor(away, k, sim) * solved;
        set_plane(PLANE_CORRECTION, k, sim, solved);
    }
}

// Node k's Newton update from its correction; returns the correction's
// largest length-weighted displacement.
fn update_node(k: u32, sim: u32, h: real, weights: real4) -> real {
    var d = plane(PLANE_CORRECTION, k, sim);
    if (k == 0u) {
        d = real4(0.0, 0.0, d.zw);
    }
    set_plane(PLANE_TRIAL_ACCELERATION, k, sim, plane(PLANE_TRIAL_ACCELERATION, k, sim) + d);
    set_plane(PLANE_TRIAL_ALGORITHMIC, k, sim,
              plane(PLANE_TRIAL_ALGORITHMIC, k, sim) + d * ((1.0 - ALPHA_F) / (1.0 - ALPHA_M)));
    set_plane(PLANE_TRIAL_DRIFT, k, sim,
              plane(PLANE_TRIAL_DRIFT, k, sim) + d * (BETA_SCALED * h * h));
    set_plane(PLANE_TRIAL_VELOCITY, k, sim,
              plane(PLANE_TRIAL_VELOCITY, k, sim) + d * (GAMMA_SCALED * h));
    return largest4(abs((d * (BETA_SCALED * h * h)) * weights));
}

// x^(1/3) for x > 0: an f32 power refined by one Newton step.
fn cube_root(x: real) -> real {
    let y = real(pow(f32(x), 1.0 / 3.0));
    return y - (y * y * y - x) / (3.0 * y * y);
}

// The reference solver's step factor (the mirror's `step_factor`).
fn step_factor(error: real, tolerance: real) -> real {
    var f: real;
    if (error * STEP_REACH <= tolerance) {
        f = STEP_FACTOR_MAX;
    } else {
        f = STEP_SAFETY * cube_root(tolerance / error);
    }
    f = min(max(f, STEP_FACTOR_MIN), STEP_FACTOR_MAX);
    if (f >= 1.0 && f < KEEP_BELOW) {
        return 1.0;
    }
    return f;
}

// The next time this simulation lands on: its next frame or sample, or a
// negative time when none is left.
fn next_landing(c: SimControl, st: AdaptiveSettings, p: AdaptiveProgress) -> real {
    var landing_s: real = -1.0;
    if (p.frames_done < c.frames) {
        landing_s = frame_times[c.frame_offset + p.frames_done];
    }
    if (p.samples_done < st.samples) {
        let sample = real(p.samples_done + 1u) * st.sample_interval_s;
        if (landing_s < 0.0 || sample < landing_s) {
            landing_s = sample;
        }
    }
    return landing_s;
}

// A frame or a sample at `a` is observed at a landing at `b`.
fn same_time(a: real, b: real) -> bool {
    return abs(a - b) <= 1e-9 * max(abs(a), 1.0);
}

// An attempt's step: the landing it aims at, its size, whether it lands
// there, the pin at its end, and whether the factors are stale for it.
struct Attempt {
    live: bool,
    landing_s: real,
    h: real,
    last: bool,
    pin: PinState,
    stale: bool,
}

// Begins an attempt of a running simulation: the next landing and the
// step towards it (substeps evened out), the prediction of this lane's
// nodes, and the workgroup flagged going (and factoring where the factors
// were made for another step). A simulation with nothing left to land on
// is done; one whose step no longer moves its clock (f32) has failed.
fn begin_attempt(p: ptr<function, AdaptiveProgress>, c: SimControl, ph: SimPhysics,
                 st: AdaptiveSettings, sim: u32, lane: u32) -> Attempt {
    var at = Attempt(false, 0.0, 0.0, false, PinState(real2(0.0), real2(0.0), real2(0.0)), false);
    if ((*p).status != STATUS_RUNNING) {
        return at;
    }
    at.landing_s = next_landing(c, st, *p);
    if (at.landing_s < 0.0) {
        (*p).status = STATUS_DONE;
        return at;
    }
    (*p).attempts += 1u;
    let remaining = at.landing_s - (*p).time_s;
    let substeps = max(ceil(remaining / (*p).step_s * (1.0 - SUBSTEP_SLACK)), 1.0);
    at.h = remaining / substeps;
    at.last = substeps == 1.0;
    // Below the clock's resolution (f32 only) a step never arrives.
    if ((*p).time_s + at.h == (*p).time_s) {
        (*p).status = STATUS_NEWTON_FAILED;
        (*p).step_s = at.h;
        return at;
    }
    at.live = true;
    at.pin = pin_at(c, ph, (*p).time_s + at.h);
    for (var k = lane; k <= c.elements; k += SIM_LANES) {
        predict_node(k, sim, at.h, *p, at.pin);
    }
    at.stale = (*p).factored_step_s == 0.0
        || abs(at.h / (*p).factored_step_s - 1.0) > STALE_STEP_CHANGE;
    atomicOr(&w_flags, FLAG_GOING | select(0u, FLAG_FACTORING, at.stale));
    return at;
}

// A simulation's Newton iteration within an attempt: whether it factors
// in the coming round, still iterates, has refreshed a stale matrix once,
// has converged; the last correction (negative: none yet), the rounds
// since the last factorization, and the contraction estimate.
struct Newton {
    need_factor: bool,
    iterating: bool,
    refreshed: bool,
    converged: bool,
    previous: real,
    iterations: u32,
    eta: real,
}

// The iteration's start: the factors refreshed where stale, and the
// contraction borrowed from the last step's, damped towards 1.
fn start_newton(at: Attempt, p: AdaptiveProgress) -> Newton {
    let borrowed = max(p.newton_eta, EPSILON);
    var eta = borrowed;
    if (borrowed < 1.0) {
        eta = real(pow(f32(borrowed), BORROWED_ETA_EXPONENT));
    }
    return Newton(at.stale, at.live, at.stale, false, -1.0, 0u, eta);
}

// A factorization's outcome for the iteration: on failure the attempt
// stops iterating (and is rejected).
fn factored(nw: ptr<function, Newton>, p: ptr<function, AdaptiveProgress>, h: real, ok: bool) {
    (*nw).need_factor = false;
    if (ok) {
        (*p).factored_step_s = h;
        (*p).factorizations += 1u;
    } else {
        (*p).factored_step_s = 0.0;
        (*nw).iterating = false;
    }
}

// This lane's sides of the factorization: side 1's success into the
// slot's word, side 0's returned (true where the lane has no side 0).
fn factor_lane_sides(s: u32, lane: u32, n: u32, sim: u32, mass: MeshMass) -> bool {
    var ok = true;
    for (var side = lane; side < 2u; side += SIM_LANES) {
        let side_ok = factor_side(side, n, sim, mass);
        if (side == 1u) {
            w_factored[s] = select(0u, 1u, side_ok);
        } else {
            ok = side_ok;
        }
    }
    return ok;
}

// This lane's nodes' Newton updates; returns their largest weighted
// correction.
fn update_lane(sim: u32, lane: u32, n: u32, h: real, weights: real4) -> real {
    var largest: real = 0.0;
    for (var k = lane; k <= n; k += SIM_LANES) {
        largest = max(largest, update_node(k, sim, h, weights));
    }
    return largest;
}

// A round's verdict from its largest weighted correction: converged once
// the contraction-weighted correction is below the Newton tolerance (the
// first one only when already small), failed on a non-finite correction,
// else on; too many rounds or a diverging rate refactor a stale matrix
// once, then fail.
fn judge_round(nw: ptr<function, Newton>, p: ptr<function, AdaptiveProgress>, correction: real,
               tolerance_m: real) {
    (*nw).iterations += 1u;
    (*p).newton_iterations += 1u;
    let measured = (*nw).previous >= 0.0;
    var rate: real = 0.0;
    if (measured) {
        rate = correction / (*nw).previous;
        if (rate < 1.0) {
            (*nw).eta = rate / (1.0 - rate);
        } else {
            (*nw).eta = UNMEASURED_NEWTON_ETA;
        }
    }
    let trusted = measured || correction < FIRST_CORRECTION_FRACTION * tolerance_m;
    if (!finite(correction)) {
        // The step fails.
        (*nw).iterating = false;
    } else if (trusted && (*nw).eta * correction < NEWTON_TOLERANCE_FRACTION * tolerance_m) {
        (*p).newton_eta = (*nw).eta;
        (*nw).converged = true;
        (*nw).iterating = false;
    } else {
        (*nw).previous = correction;
        if ((*nw).iterations >= MAX_NEWTON_ITERATIONS || (measured && rate > DIVERGING_RATE)) {
            if (!(*nw).refreshed) {
                // A stale matrix, not the step, may be why: refactor at
                // this iterate and go on.
                (*nw).need_factor = true;
                (*nw).refreshed = true;
                (*nw).previous = -1.0;
                (*nw).iterations = 0u;
                (*nw).eta = UNMEASURED_NEWTON_ETA;
            } else {
                (*nw).iterating = false;
            }
        }
    }
}

// This lane's part of a converged step's error estimate: the largest
// length-weighted change of the algorithmic acceleration (node 0's
// prescribed rows left out).
fn lane_error(sim: u32, lane: u32, n: u32, weights: real4) -> real {
    var largest: real = 0.0;
    for (var k = lane; k <= n; k += SIM_LANES) {
        var da = (plane(PLANE_TRIAL_ALGORITHMIC, k, sim) - plane(PLANE_ALGORITHMIC, k, sim))
            * weights;
        if (k == 0u) {
            da = real4(0.0, 0.0, da.zw);
        }
        largest = max(largest, largest4(abs(da)));
    }
    return largest;
}

// An accepted step: this lane's nodes take the trial iterate (node 0 the
// pin's position), the clock advances (onto the landing when it is the
// last substep) and the next step is sized from the error, a short step
// before a landing not growing the one after it.
fn accept_step(p: ptr<function, AdaptiveProgress>, at: Attempt, st: AdaptiveSettings, sim: u32,
               lane: u32, n: u32, error: real) {
    for (var k = lane; k <= n; k += SIM_LANES) {
        set_plane(PLANE_PREVIOUS_ACCELERATION, k, sim, plane(PLANE_ACCELERATION, k, sim));
        set_plane(PLANE_ACCELERATION, k, sim, plane(PLANE_TRIAL_ACCELERATION, k, sim));
        set_plane(PLANE_ALGORITHMIC, k, sim, plane(PLANE_TRIAL_ALGORITHMIC, k, sim));
        set_plane(PLANE_VELOCITY, k, sim, plane(PLANE_TRIAL_VELOCITY, k, sim));
        var drift = plane(PLANE_TRIAL_DRIFT, k, sim);
        if (k == 0u) {
            let u = plane(PLANE_DISPLACEMENT, 0u, sim);
            set_plane(PLANE_DISPLACEMENT, 0u, sim, real4(at.pin.position, u.zw));
            drift = real4(0.0, 0.0, drift.zw);
        }
        set_plane(PLANE_DRIFT, k, sim, drift);
    }
    (*p).previous_step_s = at.h;
    if (at.last) {
        (*p).time_s = at.landing_s;
    } else {
        (*p).time_s = (*p).time_s + at.h;
    }
    (*p).steps += 1u;
    (*p).max_local_error_m = max((*p).max_local_error_m, error);
    let factor = step_factor(error, st.tolerance_m);
    let short_landing = at.h < 0.5 * (*p).step_s;
    if (!(short_landing && at.h * factor >= (*p).step_s)) {
        (*p).step_s = min(at.h * factor, st.max_step_s);
    }
}

// A landing's fold of this lane's nodes (the drift into the displacement)
// and its explosion check: 1 when one of them exploded.
fn fold_landing(sim: u32, lane: u32, n: u32, length_m: real) -> u32 {
    var exploded = 0u;
    for (var k = lane; k <= n; k += SIM_LANES) {
        let u = plane(PLANE_DISPLACEMENT, k, sim) + plane(PLANE_DRIFT, k, sim);
        set_plane(PLANE_DISPLACEMENT, k, sim, u);
        set_plane(PLANE_DRIFT, k, sim, real4(0.0));
        if (exploded_position(u, length_m) || exploded_velocity(plane(PLANE_VELOCITY, k, sim))) {
            exploded = 1u;
        }
    }
    return exploded;
}

// What a landing observes: the sample and every frame at its time (lane
// 0 writes them; every lane counts them and sums J_e into `error_m2`, so
// that all agree, without a barrier, on an abandon), then done when nothing
// is left to land on.
fn observe_landing(p: ptr<function, AdaptiveProgress>, c: SimControl, ph: SimPhysics,
                   st: AdaptiveSettings, sim: u32, lane: u32, landing_s: real,
                   error_m2: ptr<function, real>) {
    let n = c.elements;
    let t = (*p).time_s;
    if ((*p).samples_done < st.samples
        && same_time(real((*p).samples_done + 1u) * st.sample_interval_s, landing_s)) {
        (*p).samples_done += 1u;
        if (lane == 0u) {
            let sample_pin = pin_at(c, ph, t);
            observe_swingup(sim, ph, sample_pin.position, plane(PLANE_DISPLACEMENT, n, sim).xy,
                            plane(PLANE_VELOCITY, n, sim).xy, t);
        }
    }
    loop {
        if ((*p).frames_done >= c.frames
            || !same_time(frame_times[c.frame_offset + (*p).frames_done], landing_s)) {
            break;
        }
        var frame_m2: real = 0.0;
        for (var m = 0u; m < c.markers; m++) {
            let a = marker_element(c, m);
            let position = marker_position(c, ph, m, plane(PLANE_DISPLACEMENT, a, sim),
                                           plane(PLANE_DISPLACEMENT, a + 1u, sim));
            if (lane == 0u) {
                record_marker(c, (*p).frames_done, m, position);
            }
            frame_m2 += marker_error(c, (*p).frames_done, m, position);
        }
        *error_m2 += frame_m2;
        if (lane == 0u) {
            objectives[sim].identification_error_m2 = *error_m2;
        }
        (*p).frames_done += 1u;
        if (abandons(sim, c, (*p).frames_done, *error_m2)) {
            (*p).status = STATUS_ABANDONED;
            return;
        }
    }
    if (next_landing(c, st, *p) < 0.0) {
        (*p).status = STATUS_DONE;
    }
}

@compute @workgroup_size(GROUP_INVOCATIONS)
fn main(@builtin(workgroup_id) group: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let s = local / SIM_LANES;
    let lane = local % SIM_LANES;
    let sim = group.x * GROUP_SIMS + s;
    var p: AdaptiveProgress;
    p.status = STATUS_DONE;
    var c: SimControl;
    var ph: SimPhysics;
    var st: AdaptiveSettings;
    var mass: MeshMass;
    // J_e so far, in every lane; lane 0 writes it, after the first barrier.
    var error_m2: real = 0.0;
    if (sim < params.simulations) {
        p = adaptive[sim];
        error_m2 = objectives[sim].identification_error_m2;
        c = controls[sim];
        ph = physics[sim];
        st = settings[sim];
        mass = mesh_mass(c);
    }
    let n = c.elements;
    let weights = real4(1.0, 1.0, ph.element_length_m, ph.element_length_m);

    // Barriers stay here, in uniform control flow, where the cost model
    // counts them (gpu::cost): the phases between them are functions.
    for (var attempt = 0u; attempt < params.steps_per_dispatch; attempt++) {
        let at = begin_attempt(&p, c, ph, st, sim, lane);
        let h = at.h;
        barrier();
        // A workgroup whose simulations have all ended leaves its loop: it
        // would otherwise pass every barrier of every attempt until the
        // batch's slowest simulation ends.
        var flags = take_flags(local);
        if ((flags & FLAG_GOING) == 0u) {
            break;
        }

        // Newton, with the factorization where it is due.
        var nw = start_newton(at, p);
        for (var round = 0u; round < 2u * MAX_NEWTON_ITERATIONS; round++) {
            let factoring = nw.iterating && nw.need_factor;
            if ((flags & FLAG_FACTORING) != 0u) {
                if (factoring) {
                    for (var e = lane; e < n; e += SIM_LANES) {
                        tangent_element(e, sim, h, ph, mass, at.pin);
                    }
                }
                barrier();
                // Both sides' results, in one word: the side-1 lane's
                // success, then lane 0's with the middle's.
                var ok = true;
                if (factoring) {
                    ok = factor_lane_sides(s, lane, n, sim, mass);
                }
                barrier();
                if (factoring && lane == 0u) {
                    ok = ok && w_factored[s] == 1u && factor_middle(n, sim, mass);
                    w_factored[s] = select(0u, 1u, ok);
                }
                barrier();
            }
            if (factoring) {
                factored(&nw, &p, h, w_factored[s] == 1u);
            }
            if (nw.iterating) {
                for (var e = lane; e < n; e += SIM_LANES) {
                    force_element(e, sim, ph, at.pin);
                }
            }
            barrier();
            if (nw.iterating) {
                for (var k = lane; k <= n; k += SIM_LANES) {
                    residual_node(k, n, sim, ph, mass);
                }
            }
            barrier();
            if (nw.iterating) {
                for (var side = lane; side < 2u; side += SIM_LANES) {
                    forward_side(side, n, sim);
                }
            }
            barrier();
            if (nw.iterating) {
                for (var side = lane; side < 2u; side += SIM_LANES) {
                    back_side(side, n, sim);
                }
            }
            barrier();
            if (nw.iterating) {
                w_partial[local] = update_lane(sim, lane, n, h, weights);
            }
            barrier();
            if (nw.iterating) {
                judge_round(&nw, &p, slot_max(s), st.tolerance_m);
            }
            if (nw.iterating) {
                atomicOr(&w_flags, FLAG_GOING | select(0u, FLAG_FACTORING, nw.need_factor));
            }
            barrier();
            flags = take_flags(local);
            if ((flags & FLAG_GOING) == 0u) {
                break;
            }
        }

        // The error estimate, and the step accepted or rejected.
        if (nw.converged) {
            w_partial[local] = lane_error(sim, lane, n, weights);
        }
        barrier();
        var accepted = false;
        var error: real = 0.0;
        if (nw.converged) {
            error = ERROR_CONSTANT * h * h * slot_max(s);
            accepted = !(error > st.tolerance_m);
        }
        if (accepted) {
            accept_step(&p, at, st, sim, lane, n, error);
        } else if (at.live) {
            p.rejected_steps += 1u;
            p.step_s = h * REJECTED_STEP_FACTOR;
        }
        if (at.live && p.step_s < MIN_STEP_S) {
            p.status = STATUS_NEWTON_FAILED;
        }

        // A landing: the drift folded, the explosion check, then the
        // sample and the frames at this time. A lane folds the nodes it
        // accepted (no barrier between).
        let landed = accepted && at.last && p.status == STATUS_RUNNING;
        if (landed) {
            w_exploded[local] = fold_landing(sim, lane, n, ph.length_m);
        }
        barrier();
        if (landed) {
            if (slot_exploded(s)) {
                p.status = STATUS_DIVERGED;
            } else {
                observe_landing(&p, c, ph, st, sim, lane, at.landing_s, &error_m2);
            }
        }
        // No barrier here: lane 0's reads of other lanes' nodes above come
        // before the next attempt's first barrier, and every write to those
        // nodes, or to w_exploded, comes after it.
    }
    if (sim < params.simulations && lane == 0u) {
        adaptive[sim] = p;
    }
}
