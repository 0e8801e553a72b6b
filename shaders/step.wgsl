// Pipeline stage "step", thread layout: advances every simulation of a chunk
// by up to `steps_per_dispatch` steps of one fixed-step scheme, and
// accumulates the objectives at sample and frame times. One invocation is
// one simulation (step_workgroup.wgsl shares one among several).
// The scheme is a pipeline constant (SEMI_IMPLICIT):
//
// - explicit: velocity Verlet with a predicted velocity for damping and drag
//   (src/solver/explicit.rs). The mass solve uses the block-tridiagonal (4×4
//   blocks, one per node) LU factors of the mass matrix, computed on the
//   host once per mesh (src/gpu/mass_factor.rs), and the mesh's compact
//   mass matrix (MeshMass) for the coupling to the previous node.
// - semi-implicit: the same, with the Kelvin–Voigt damping force taken at
//   the end of the step (src/solver/semi_implicit.rs), so each step solves
//   (M + h/2 C_D(q)) a = f. Its block-tridiagonal LU is computed here, node
//   by node as the elements' damping blocks come in, from the mesh's mass
//   matrix in compact form (MeshMass), loaded once per dispatch.
//
// In both, node 0's prescribed rows are replaced by identity rows (their
// right-hand side is the pin's acceleration), so the solve is exactly
// A_dd q̈_d = f_d − A_dr q̈_r (docs/model.md §3) as on the CPU. The force of element
// k−1 completes node k−1, whose forward substitution runs in the same loop
// iteration; the back substitution runs node by node and finishes the
// velocity update. So a step is 2(n+1) loop iterations.
//
// Needs: a precision module, MAX_NODES, SEMI_IMPLICIT, matrix.wgsl,
// node_blocks.wgsl, element.wgsl, motion.wgsl, step_io.wgsl, and the scheme's coupling module,
// coupling_private.wgsl or coupling_none.wgsl (src/gpu/shader.rs).
//
// CPU mirror, operation for operation: src/gpu/mirror/step.rs.

// MAX_NODES, the size of the private state arrays, is prepended per
// pipeline (src/gpu/shader.rs): the smallest of abi.rs's NODE_CAPACITIES
// that holds the chunk, since the driver reserves private memory for every
// thread the GPU can hold.
// Invocations (simulations) per workgroup, set per adapter at pipeline
// creation (src/gpu/device.rs): lavapipe runs a workgroup on one thread, so
// small workgroups spread a batch over all cores there.
override WORKGROUP_SIZE: u32 = 64u;

// The state of this invocation's simulation during a dispatch, loaded from
// and stored back to `state` once per dispatch. Per step it lives here: a
// storage access whose address differs per invocation costs lavapipe one
// scalar access per lane, and a step makes ten per node. The displacement is
// disp + drift: steps add to the small drift, which is folded into disp now
// and then, so that f32 rounds each step's increment against the drift's
// magnitude, not the displacement's. `acc` also holds the forward
// substitution's result between the two sweeps of a step.
var<private> disp: array<real4, MAX_NODES>;
var<private> drift: array<real4, MAX_NODES>;
var<private> vel: array<real4, MAX_NODES>;
var<private> acc: array<real4, MAX_NODES>;

// Marker positions of the simulation's `frame`-th frame, `back_s` before
// the end of the step just taken: J_e and the recorded track; and the pin's
// force where it is recorded.
fn observe_frame(sim: u32, c: SimControl, ph: SimPhysics, frame: u32, back_s: real) {
    var error: real = 0.0;
    for (var m = 0u; m < c.markers; m++) {
        let a = marker_element(c, m);
        let b = a + 1u;
        let ua = expand_back(disp[a] + drift[a], vel[a], acc[a], back_s);
        let ub = expand_back(disp[b] + drift[b], vel[b], acc[b], back_s);
        error += observe_marker(c, ph, frame, m, ua, ub);
    }
    objectives[sim].identification_error_m2 += error;
    // At the end of the step that holds the frame
    // (GpuSimulation::pin_force_time_s).
    observe_pin_force(c, ph, frame, disp[0] + drift[0], disp[1] + drift[1], vel[0], vel[1],
                      acc[0], acc[1]);
}

// This simulation's state between private memory and the state planes,
// once per dispatch each way.
fn load_state(sim: u32, n: u32) {
    for (var k = 0u; k <= n; k++) {
        disp[k] = state[slot(PLANE_DISPLACEMENT, k, sim)];
        drift[k] = state[slot(PLANE_DRIFT, k, sim)];
        vel[k] = state[slot(PLANE_VELOCITY, k, sim)];
        acc[k] = state[slot(PLANE_ACCELERATION, k, sim)];
    }
}

fn store_state(sim: u32, n: u32) {
    for (var k = 0u; k <= n; k++) {
        state[slot(PLANE_DISPLACEMENT, k, sim)] = disp[k];
        state[slot(PLANE_DRIFT, k, sim)] = drift[k];
        state[slot(PLANE_VELOCITY, k, sim)] = vel[k];
        state[slot(PLANE_ACCELERATION, k, sim)] = acc[k];
    }
}

// A step's first sweep, node by node: drift every node, evaluate element
// k−1, forward-substitute node k−1 (into acc[k−1], whose old value the
// drift of node k−1 has used); node n last, with the tip's weight.
// Returns whether a node's position exploded. `sec` is the simulation's
// section, made once per dispatch.
fn forward_sweep(c: SimControl, ph: SimPhysics, sec: Section, mass: MeshMass,
                 pin: PinState) -> bool {
    let n = c.elements;
    let h = ph.step_s;
    let half = 0.5 * h;
    let le = ph.element_length_m;
    let t0 = real2(ph.tangent_x, ph.tangent_y);
    var diverged = false;
    var u_prev = real4(0.0);
    var v_prev = real4(0.0);
    var damped_prev = real4(0.0);
    var f_prev = real4(0.0);
    var y_prev = real4(0.0);
    // Semi-implicit: node k−1's damping block from element k−2, the
    // previous node's coupling U (as assembled, before the pin rows) and E.
    var damping_prev = Symmetric4(real4(0.0), real4(0.0), real2(0.0));
    var upper_prev = real4x4();
    var e_prev = real4x4();
    for (var k = 0u; k <= n; k++) {
        let a = acc[k];
        let v_half = vel[k] + half * a;
        drift[k] += h * v_half;
        var v_pred = v_half + half * a;
        // The velocity the material damping is evaluated at.
        var damped = select(v_pred, v_half, SEMI_IMPLICIT);
        if (k == 0u) {
            disp[0] = real4(pin.position, disp[0].zw);
            drift[0] = real4(0.0, 0.0, drift[0].zw);
            v_pred = real4(pin.velocity, v_pred.zw);
            damped = real4(pin.velocity, damped.zw);
        }
        let u = disp[k] + drift[k];
        diverged = diverged || exploded_position(u, ph.length_m);
        vel[k] = v_half;
        var f_next = real4(0.0);
        if (k > 0u) {
            let no_damping = Symmetric4(real4(0.0), real4(0.0), real2(0.0));
            var dmp = ElementDamping(no_damping, real4x4(), no_damping);
            let fe = element_force(le, t0, sec, ph.weight_per_length_n_m, ph.drag_factor_kg_m3,
                                   ElementState(u_prev, u, damped_prev, damped, v_prev, v_pred,
                                                real4(0.0), real4(0.0)),
                                   &dmp, half);
            f_prev += fe.a;
            f_next = fe.b;
            let node = k - 1u;
            if (node == 0u) {
                f_prev = real4(pin.acceleration, f_prev.zw);
            }
            var y: real4;
            if (SEMI_IMPLICIT) {
                // Block LU of M + h/2 C_D: D = A − L E_prev, L = U_prevᵀ.
                var pivot = symmetric_full(symmetric_sum(damping_prev, dmp.aa));
                if (node == 0u) {
                    pivot = plus_node_mass(pivot, mass.first);
                } else {
                    pivot = plus_node_mass(pivot, mass.interior);
                }
                let upper = plus_node_mass(dmp.ab, mass.coupling);
                var upper_rows = upper;
                if (node == 0u) {
                    pivot = pin_rows_pivot(pivot);
                    upper_rows = pin_rows_coupling(upper);
                }
                let lower = transpose(upper_prev);
                let g = inverse4(pivot - lower * e_prev);
                y = g * (f_prev - lower * y_prev);
                e_prev = g * upper_rows;
                store_coupling(node, e_prev);
                upper_prev = upper;
                damping_prev = dmp.bb;
            } else {
                y = factor(c, node, 0u) * (f_prev - coupling_transpose_times(mass.coupling, y_prev));
            }
            acc[node] = y;
            y_prev = y;
        }
        u_prev = u;
        v_prev = v_pred;
        damped_prev = damped;
        f_prev = f_next;
    }
    // Node n: the tip's weight, then its forward substitution.
    f_prev.y -= ph.tip_weight_n;
    if (SEMI_IMPLICIT) {
        let lower = transpose(upper_prev);
        let g = inverse4(plus_node_mass(symmetric_full(damping_prev), mass.last) - lower * e_prev);
        acc[n] = g * (f_prev - lower * y_prev);
    } else {
        acc[n] = factor(c, n, 0u) * (f_prev - coupling_transpose_times(mass.coupling, y_prev));
    }
    return diverged;
}

// What a step's second sweep found: the tip's velocity, and whether a
// node's velocity exploded.
struct BackSweep {
    tip_velocity: real2,
    exploded: bool,
}

// A step's second sweep: back substitution and the velocity update, tip
// first.
fn back_sweep(c: SimControl, pin: PinState, half: real) -> BackSweep {
    let n = c.elements;
    var diverged = false;
    var a_next = real4(0.0);
    var tip_velocity = real2(0.0);
    for (var j = 0u; j <= n; j++) {
        let k = n - j;
        var a = acc[k];
        if (k < n) {
            if (SEMI_IMPLICIT) {
                a -= stored_coupling(k) * a_next;
            } else {
                a -= factor(c, k, 1u) * a_next;
            }
        }
        var v = vel[k] + half * a;
        if (k == 0u) {
            v = real4(pin.velocity, v.zw);
        }
        diverged = diverged || exploded_velocity(v);
        acc[k] = a;
        vel[k] = v;
        if (k == n) {
            tip_velocity = v.xy;
        }
        a_next = a;
    }
    return BackSweep(tip_velocity, diverged);
}

// Every frame that falls within step `steps` (frames closer than a step
// share one); `next_frame` becomes the step of the first frame after it.
// A simulation whose J_e passes its bound is abandoned at that frame.
fn observe_frames(sim: u32, c: SimControl, ph: SimPhysics, steps: u32,
                  prog: ptr<function, SimProgress>, next_frame: ptr<function, u32>) {
    if (steps != *next_frame) {
        return;
    }
    loop {
        observe_frame(sim, c, ph, (*prog).frames_done, frame_back[c.frame_offset + (*prog).frames_done]);
        (*prog).frames_done += 1u;
        if (abandons(sim, c, (*prog).frames_done, objectives[sim].identification_error_m2)) {
            (*prog).status = STATUS_ABANDONED;
            break;
        }
        *next_frame = frame_step(c, (*prog).frames_done);
        if (*next_frame != steps) {
            break;
        }
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let sim = id.x;
    if (sim >= params.simulations) {
        return;
    }
    var prog = progress[sim];
    if (prog.status != STATUS_RUNNING) {
        return;
    }
    let c = controls[sim];
    let ph = physics[sim];
    let n = c.elements;
    let h = ph.step_s;
    var clock = start_clock(c, prog.steps_done);
    var next_frame = frame_step(c, prog.frames_done);
    let end = min(c.total_steps, prog.steps_done + params.steps_per_dispatch);
    load_state(sim, n);
    // One load per dispatch, from private memory afterwards.
    let mass = mesh_mass(c);
    let sec = section(ph);
    while (prog.steps_done < end) {
        let steps = prog.steps_done + 1u;
        let t = real(steps) * h;
        let pin = pin_at(c, ph, t);
        let position_exploded = forward_sweep(c, ph, sec, mass, pin);
        let back = back_sweep(c, pin, 0.5 * h);
        prog.steps_done = steps;
        if (position_exploded || back.exploded) {
            prog.status = STATUS_DIVERGED;
            break;
        }
        let due = tick(&clock, c);
        if (due.sample || due.fold) {
            for (var k = 0u; k <= n; k++) {
                disp[k] += drift[k];
                drift[k] = real4(0.0);
            }
        }
        if (due.sample) {
            observe_swingup(sim, ph, pin.position, disp[n].xy, back.tip_velocity, t);
        }
        observe_frames(sim, c, ph, steps, &prog, &next_frame);
        if (prog.status != STATUS_RUNNING) {
            break;
        }
    }
    store_state(sim, n);
    if (prog.status == STATUS_RUNNING && prog.steps_done >= c.total_steps) {
        prog.status = STATUS_DONE;
    }
    progress[sim] = prog;
}
