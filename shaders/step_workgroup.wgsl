// Pipeline stage "step", workgroup layout: the same schemes, state and
// objectives as step.wgsl, but a workgroup holds GROUP_SIMS simulations
// with SIM_LANES invocations ("lanes") each, and a simulation's state lives
// in workgroup memory, where its lanes share the work of a step:
//
// 1. nodes: each lane drifts the nodes k ≡ lane (mod SIM_LANES);
// 2. elements, in two passes (even elements, then odd): each lane evaluates
//    its elements' forces and, semi-implicit, damping blocks, and writes
//    them into the nodes' force, pivot and coupling slots. An element writes
//    its two nodes; in one pass no two elements share a node, so the slots
//    are assigned by the first pass and completed by the second, without
//    atomics, and every slot is the sum of the same two terms as in
//    step.wgsl (a sum of two reals is the same either way round);
// 3. the block-tridiagonal solve, node by node (the serial chain of a
//    step). Semi-implicit: four lanes share each node's factorization, a
//    column each: the Schur complement D = A − L E, the inverse G = D⁻¹
//    (inverse4_column), E = G U, while lane 0 forms y = G (f − L y); three
//    barriers a node. Explicit (factors from the mesh buffer, a 4×4
//    product a node): one lane. The back substitution is one lane's in
//    both. src/gpu/cost/ counts the chains and says why;
// 4. velocities: each lane its nodes again, then folds, J_a by the lane of
//    the tip, the frame's markers by lane 0.
//
// Barriers separate the phases. Every barrier is reached by every
// invocation: the step loop's count is the most steps any simulation of
// the workgroup takes in this dispatch (a uniform value, through
// workgroupUniformLoad), and a simulation that has finished or diverged
// (or an empty slot) skips its work, not the barriers. So a diverged
// simulation stops its own work and leaves its neighbours untouched.
//
// Per simulation and step the arithmetic is step.wgsl's, operation for
// operation: in f64 the two layouts agree to rounding (tests/gpu.rs).
//
// Prepended per pipeline (src/gpu/shader.rs): MAX_NODES (nodes per
// simulation slot), SEMI_IMPLICIT, GROUP_SIMS, SIM_LANES and BLOCK_NODES
// (MAX_NODES for the semi-implicit scheme's pivot and coupling blocks, 1
// for the explicit scheme, which reads its factors from the mesh buffer).
//
// Needs: a precision module, those constants, matrix.wgsl, node_blocks.wgsl,
// element.wgsl, motion.wgsl, step_io.wgsl.
//
// CPU mirror: src/gpu/mirror/step.rs (the same arithmetic per simulation).

const GROUP_INVOCATIONS: u32 = GROUP_SIMS * SIM_LANES;
const GROUP_NODES: u32 = GROUP_SIMS * MAX_NODES;
const GROUP_BLOCKS: u32 = GROUP_SIMS * BLOCK_NODES;

// The state planes of every simulation slot (step.wgsl's private arrays),
// node k of slot s at s * MAX_NODES + k.
var<workgroup> w_disp: array<real4, GROUP_NODES>;
var<workgroup> w_drift: array<real4, GROUP_NODES>;
var<workgroup> w_vel: array<real4, GROUP_NODES>;
var<workgroup> w_acc: array<real4, GROUP_NODES>;
// A node's assembled force, and (semi-implicit) its damping pivot block and
// its coupling to the next node, which the forward sweep replaces by E.
var<workgroup> w_force: array<real4, GROUP_NODES>;
var<workgroup> w_pivot: array<Symmetric4, GROUP_BLOCKS>;
var<workgroup> w_upper: array<real4x4, GROUP_BLOCKS>;
// Per slot: the Schur complement of the node being factored (semi-implicit
// shared solve), and its inverse, a column per lane.
var<workgroup> w_schur: array<real4x4, GROUP_SIMS>;
var<workgroup> w_inverse: array<real4x4, GROUP_SIMS>;
// The workgroup's n (every slot of a workgroup has the same), for the
// shared solve's node loop, whose barriers need a uniform count.
var<workgroup> w_elements: u32;
// Per slot: set by any lane whose node exploded in this step.
var<workgroup> w_diverged: array<atomic<u32>, GROUP_SIMS>;
var<workgroup> w_tip_velocity: array<real2, GROUP_SIMS>;
// The workgroup's step count for this dispatch.
var<workgroup> w_steps: atomic<u32>;
var<workgroup> w_steps_uniform: u32;
// Per slot: set by lane 0 when it abandons the simulation at a frame.
var<workgroup> w_abandoned: array<u32, GROUP_SIMS>;
// Slots still stepping in this dispatch: a workgroup whose simulations
// have all ended (their window done, diverged, abandoned) leaves its loop
// instead of passing every barrier until its slowest slot's window ends.
// Looked at every LIVE_CHECK_STEPS steps, since each look is a barrier.
var<workgroup> w_running: atomic<u32>;
var<workgroup> w_running_uniform: u32;
const LIVE_CHECK_STEPS: u32 = 16u;

// Nodes: v½ = v + h/2 a, the drift, the pin's prescribed displacement, the
// explosion check (step.wgsl's drift loop, without the element).
fn drift_nodes(s: u32, lane: u32, n: u32, h: real, pin: PinState, length_m: real) {
    let b = s * MAX_NODES;
    let half = 0.5 * h;
    for (var k = lane; k <= n; k += SIM_LANES) {
        let a = w_acc[b + k];
        let v_half = w_vel[b + k] + half * a;
        w_drift[b + k] += h * v_half;
        if (k == 0u) {
            w_disp[b] = real4(pin.position, w_disp[b].zw);
            w_drift[b] = real4(0.0, 0.0, w_drift[b].zw);
        }
        let u = w_disp[b + k] + w_drift[b + k];
        if (exploded_position(u, length_m)) {
            atomicStore(&w_diverged[s], 1u);
        }
        w_vel[b + k] = v_half;
    }
}

// Element j (nodes j, j + 1) of slot s, in pass `parity` (j's parity).
fn element_pass(s: u32, j: u32, parity: u32, n: u32, ph: SimPhysics, pin: PinState) {
    let b = s * MAX_NODES;
    let bb = s * BLOCK_NODES;
    let half = 0.5 * ph.step_s;
    let ua = w_disp[b + j] + w_drift[b + j];
    let ub = w_disp[b + j + 1u] + w_drift[b + j + 1u];
    // The predicted velocities (drag; the material damping's too when
    // explicit) and v½ (the damping's, semi-implicit), as step.wgsl forms them.
    var va = w_vel[b + j] + half * w_acc[b + j];
    let vb = w_vel[b + j + 1u] + half * w_acc[b + j + 1u];
    var da = select(va, w_vel[b + j], SEMI_IMPLICIT);
    let db = select(vb, w_vel[b + j + 1u], SEMI_IMPLICIT);
    if (j == 0u) {
        va = real4(pin.velocity, va.zw);
        da = real4(pin.velocity, da.zw);
    }
    let sec = section(ph);
    let no_damping = Symmetric4(real4(0.0), real4(0.0), real2(0.0));
    var dmp = ElementDamping(no_damping, real4x4(), no_damping);
    let fe = element_force(ph.element_length_m, real2(ph.tangent_x, ph.tangent_y), sec,
                           ph.weight_per_length_n_m, ph.drag_factor_kg_m3,
                           ElementState(ua, ub, da, db, va, vb, real4(0.0), real4(0.0)), &dmp, half);
    // Pass 0 assigns both nodes' slots; pass 1 adds to them, except at the
    // tip when n is even (no even element reaches node n then).
    let first = parity == 0u;
    let tip_first = j + 1u == n;
    if (first) {
        w_force[b + j] = fe.a;
        w_force[b + j + 1u] = fe.b;
    } else {
        w_force[b + j] += fe.a;
        if (tip_first) {
            w_force[b + j + 1u] = fe.b;
        } else {
            w_force[b + j + 1u] += fe.b;
        }
    }
    if (SEMI_IMPLICIT) {
        w_upper[bb + j] = dmp.ab;
        if (first) {
            w_pivot[bb + j] = dmp.aa;
            w_pivot[bb + j + 1u] = dmp.bb;
        } else {
            w_pivot[bb + j] = symmetric_sum(w_pivot[bb + j], dmp.aa);
            if (tip_first) {
                w_pivot[bb + j + 1u] = dmp.bb;
            } else {
                w_pivot[bb + j + 1u] = symmetric_sum(w_pivot[bb + j + 1u], dmp.bb);
            }
        }
    }
}

// The node's right-hand side: its assembled force, with node 0's pin rows
// and the tip's weight.
fn node_force(b: u32, node: u32, n: u32, ph: SimPhysics, pin: PinState) -> real4 {
    var f = w_force[b + node];
    if (node == 0u) {
        f = real4(pin.acceleration, f.zw);
    }
    if (node == n) {
        f.y -= ph.tip_weight_n;
    }
    return f;
}

// Explicit scheme, one lane: step.wgsl's forward substitution with the
// mesh's factors, into w_acc.
fn forward_explicit(s: u32, c: SimControl, ph: SimPhysics, mass: MeshMass, pin: PinState) {
    let b = s * MAX_NODES;
    let n = c.elements;
    var y_prev = real4(0.0);
    for (var node = 0u; node <= n; node++) {
        let f = node_force(b, node, n, ph, pin);
        let y = factor(c, node, 0u) * (f - coupling_transpose_times(mass.coupling, y_prev));
        w_acc[b + node] = y;
        y_prev = y;
    }
}

// Semi-implicit scheme: step.wgsl's block LU of M + h/2 C_D node by node,
// D = A − L E_prev with L = U_prevᵀ, G = D⁻¹, E = G U, y = G (f − L y_prev),
// with lanes 0–3 of each slot forming one column each. Called by every
// invocation (it holds barriers); `solving` says whether this one works.
// E replaces the coupling in w_upper, y goes to w_acc.
fn forward_shared(s: u32, lane: u32, live: bool, group_n: u32, c: SimControl, ph: SimPhysics,
                  mass: MeshMass, pin: PinState) {
    let b = s * MAX_NODES;
    let bb = s * BLOCK_NODES;
    let n = c.elements;
    let solving = live && lane < 4u;
    // Each solving lane keeps U_prev; lane 0 also y_prev.
    var upper_prev = real4x4();
    var y_prev = real4(0.0);
    for (var node = 0u; node <= group_n; node++) {
        var upper = real4x4();
        if (solving) {
            var pivot: real4x4;
            if (node == n) {
                pivot = plus_node_mass(symmetric_full(w_pivot[bb + node]), mass.last);
            } else {
                pivot = symmetric_full(w_pivot[bb + node]);
                if (node == 0u) {
                    pivot = pin_rows_pivot(plus_node_mass(pivot, mass.first));
                } else {
                    pivot = plus_node_mass(pivot, mass.interior);
                }
                upper = plus_node_mass(w_upper[bb + node], mass.coupling);
            }
            var e_prev = real4(0.0);
            if (node > 0u) {
                e_prev = w_upper[bb + node - 1u][lane];
            }
            w_schur[s][lane] = pivot[lane] - transpose(upper_prev) * e_prev;
        }
        workgroupBarrier();
        if (solving) {
            w_inverse[s][lane] = inverse4_column(w_schur[s], lane);
        }
        workgroupBarrier();
        if (solving) {
            let g = w_inverse[s];
            if (lane == 0u) {
                let f = node_force(b, node, n, ph, pin);
                let y = g * (f - transpose(upper_prev) * y_prev);
                w_acc[b + node] = y;
                y_prev = y;
            }
            if (node < n) {
                var upper_rows = upper;
                if (node == 0u) {
                    upper_rows = pin_rows_coupling(upper);
                }
                w_upper[bb + node][lane] = g * upper_rows[lane];
            }
            upper_prev = upper;
        }
        workgroupBarrier();
    }
}

// The back substitution of slot s, one lane: a_k = y_k − E_k a_{k+1}.
fn back_substitute(s: u32, c: SimControl) {
    let b = s * MAX_NODES;
    let bb = s * BLOCK_NODES;
    let n = c.elements;
    var a_next = real4(0.0);
    for (var j = 0u; j <= n; j++) {
        let k = n - j;
        var a = w_acc[b + k];
        if (k < n) {
            if (SEMI_IMPLICIT) {
                a -= w_upper[bb + k] * a_next;
            } else {
                a -= factor(c, k, 1u) * a_next;
            }
        }
        w_acc[b + k] = a;
        a_next = a;
    }
}

// Velocities: v = v½ + h/2 a, the pin's, the explosion check.
fn finish_nodes(s: u32, lane: u32, n: u32, half: real, pin: PinState) {
    let b = s * MAX_NODES;
    for (var k = lane; k <= n; k += SIM_LANES) {
        var v = w_vel[b + k] + half * w_acc[b + k];
        if (k == 0u) {
            v = real4(pin.velocity, v.zw);
        }
        if (exploded_velocity(v)) {
            atomicStore(&w_diverged[s], 1u);
        }
        w_vel[b + k] = v;
        if (k == n) {
            w_tip_velocity[s] = v.xy;
        }
    }
}

// step.wgsl's observe_frame, from slot `s`'s nodes (lane 0's).
fn observe_frame(sim: u32, s: u32, c: SimControl, ph: SimPhysics, frame: u32, back_s: real) {
    let base = s * MAX_NODES;
    var error: real = 0.0;
    for (var m = 0u; m < c.markers; m++) {
        let a = base + marker_element(c, m);
        let b = a + 1u;
        let ua = expand_back(w_disp[a] + w_drift[a], w_vel[a], w_acc[a], back_s);
        let ub = expand_back(w_disp[b] + w_drift[b], w_vel[b], w_acc[b], back_s);
        error += observe_marker(c, ph, frame, m, ua, ub);
    }
    objectives[sim].identification_error_m2 += error;
    // At the end of the step that holds the frame, as step.wgsl.
    observe_pin_force(c, ph, frame, w_disp[base] + w_drift[base],
                      w_disp[base + 1u] + w_drift[base + 1u], w_vel[base], w_vel[base + 1u],
                      w_acc[base], w_acc[base + 1u]);
}

// Every frame within step `steps`, by lane 0, which alone decides an
// abandon (telling the other lanes through w_abandoned); every lane keeps
// the count.
fn observe_frames(sim: u32, s: u32, lane: u32, c: SimControl, ph: SimPhysics, steps: u32,
                  prog: ptr<function, SimProgress>, next_frame: ptr<function, u32>) {
    loop {
        if (lane == 0u) {
            observe_frame(sim, s, c, ph, (*prog).frames_done,
                          frame_back[c.frame_offset + (*prog).frames_done]);
        }
        (*prog).frames_done += 1u;
        if (lane == 0u
            && abandons(sim, c, (*prog).frames_done, objectives[sim].identification_error_m2)) {
            (*prog).status = STATUS_ABANDONED;
            w_abandoned[s] = 1u;
            break;
        }
        *next_frame = frame_step(c, (*prog).frames_done);
        if (*next_frame != steps) {
            break;
        }
    }
}

fn fold_nodes(s: u32, lane: u32, n: u32) {
    let b = s * MAX_NODES;
    for (var k = lane; k <= n; k += SIM_LANES) {
        w_disp[b + k] += w_drift[b + k];
        w_drift[b + k] = real4(0.0);
    }
}

@compute @workgroup_size(GROUP_INVOCATIONS)
fn main(@builtin(workgroup_id) group: vec3<u32>,
        @builtin(local_invocation_index) local: u32) {
    let s = local / SIM_LANES;
    let lane = local % SIM_LANES;
    let sim = group.x * GROUP_SIMS + s;
    let b = s * MAX_NODES;
    // An empty slot (past the chunk's end) is a finished simulation.
    var prog = SimProgress(0u, STATUS_DONE, 0u, 0u);
    var c: SimControl;
    var ph: SimPhysics;
    if (sim < params.simulations) {
        prog = progress[sim];
        c = controls[sim];
        ph = physics[sim];
    }
    let started = prog.status == STATUS_RUNNING;
    let n = c.elements;
    let h = ph.step_s;
    let half = 0.5 * h;
    var clock: StepClock;
    var next_frame = NO_FRAME;
    var end = 0u;
    var mass: MeshMass;
    if (started) {
        clock = start_clock(c, prog.steps_done);
        next_frame = frame_step(c, prog.frames_done);
        end = min(c.total_steps, prog.steps_done + params.steps_per_dispatch);
        mass = mesh_mass(c);
        for (var k = lane; k <= n; k += SIM_LANES) {
            w_disp[b + k] = state[slot(PLANE_DISPLACEMENT, k, sim)];
            w_drift[b + k] = state[slot(PLANE_DRIFT, k, sim)];
            w_vel[b + k] = state[slot(PLANE_VELOCITY, k, sim)];
            w_acc[b + k] = state[slot(PLANE_ACCELERATION, k, sim)];
        }
    }
    if (lane == 0u) {
        atomicStore(&w_diverged[s], 0u);
        w_abandoned[s] = 0u;
    }
    if (local == 0u) {
        atomicStore(&w_steps, 0u);
        atomicStore(&w_running, 0u);
        // Slot 0 holds a simulation in every workgroup dispatched.
        w_elements = n;
    }
    workgroupBarrier();
    if (started) {
        atomicMax(&w_steps, end - prog.steps_done);
        if (lane == 0u) {
            atomicAdd(&w_running, 1u);
        }
    }
    workgroupBarrier();
    if (local == 0u) {
        w_steps_uniform = atomicLoad(&w_steps);
    }
    let group_steps = workgroupUniformLoad(&w_steps_uniform);
    let group_n = workgroupUniformLoad(&w_elements);

    var live = started;
    for (var i = 0u; i < group_steps; i++) {
        if (i > 0u && i % LIVE_CHECK_STEPS == 0u) {
            if (local == 0u) {
                w_running_uniform = atomicLoad(&w_running);
            }
            if (workgroupUniformLoad(&w_running_uniform) == 0u) {
                break;
            }
        }
        live = live && prog.steps_done < end && w_abandoned[s] == 0u;
        let stepping = live;
        let steps = prog.steps_done + 1u;
        let t = real(steps) * h;
        var pin = PinState(real2(0.0), real2(0.0), real2(0.0));
        if (live) {
            pin = pin_at(c, ph, t);
            drift_nodes(s, lane, n, h, pin, ph.length_m);
        }
        workgroupBarrier();
        for (var parity = 0u; parity < 2u; parity++) {
            if (live) {
                for (var e = lane; 2u * e + parity < n; e += SIM_LANES) {
                    element_pass(s, 2u * e + parity, parity, n, ph, pin);
                }
            }
            workgroupBarrier();
        }
        if (SEMI_IMPLICIT) {
            forward_shared(s, lane, live, group_n, c, ph, mass, pin);
        } else if (live && lane == 0u) {
            forward_explicit(s, c, ph, mass, pin);
        }
        if (live && lane == 0u) {
            back_substitute(s, c);
        }
        workgroupBarrier();
        if (live) {
            finish_nodes(s, lane, n, half, pin);
        }
        workgroupBarrier();
        var frame_due = false;
        if (live) {
            prog.steps_done = steps;
            if (atomicLoad(&w_diverged[s]) != 0u) {
                prog.status = STATUS_DIVERGED;
                live = false;
            } else {
                let due = tick(&clock, c);
                if (due.sample || due.fold) {
                    fold_nodes(s, lane, n);
                }
                // The tip's lane folded the tip and wrote its velocity.
                if (due.sample && lane == n % SIM_LANES) {
                    observe_swingup(sim, ph, pin.position, w_disp[b + n].xy, w_tip_velocity[s], t);
                }
                frame_due = steps == next_frame;
            }
        }
        workgroupBarrier();
        if (frame_due) {
            observe_frames(sim, s, lane, c, ph, steps, &prog, &next_frame);
        }
        if (lane == 0u && stepping
            && (prog.status != STATUS_RUNNING || prog.steps_done >= end)) {
            atomicSub(&w_running, 1u);
        }
        // The frame's reads before the next step's writes, and lane 0's
        // w_abandoned before every lane's next look.
        workgroupBarrier();
    }
    if (started) {
        for (var k = lane; k <= n; k += SIM_LANES) {
            state[slot(PLANE_DISPLACEMENT, k, sim)] = w_disp[b + k];
            state[slot(PLANE_DRIFT, k, sim)] = w_drift[b + k];
            state[slot(PLANE_VELOCITY, k, sim)] = w_vel[b + k];
            state[slot(PLANE_ACCELERATION, k, sim)] = w_acc[b + k];
        }
        if (lane == 0u) {
            if (prog.status == STATUS_RUNNING && prog.steps_done >= c.total_steps) {
                prog.status = STATUS_DONE;
            }
            progress[sim] = prog;
        }
    }
}
