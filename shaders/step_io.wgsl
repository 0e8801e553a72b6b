// The step stages' shared half: the structs and bindings of a chunk (the
// `#[repr(C)]` twins are in src/gpu/abi.rs), and the helpers both
// layouts use to read the mesh buffer and to detect an explosion. The thread
// layout (step.wgsl) keeps a simulation's state in one invocation's private
// arrays; the workgroup layout (step_workgroup.wgsl) in workgroup memory
// shared by several invocations.
//
// Needs: a precision module (src/gpu/shader.rs).

const STATUS_RUNNING: u32 = 0u;
const STATUS_DONE: u32 = 1u;
const STATUS_DIVERGED: u32 = 2u;
// Stopped at a frame before its last, its J_e so far past its bound
// (`abandons`).
const STATUS_ABANDONED: u32 = 4u;
const NO_TRACK: u32 = 0xffffffffu;
// A measured sample the measurement lacks (an occluded marker) holds 1e30
// in both coordinates (MISSING_SAMPLE_M in src/gpu/abi.rs); J_e skips it.
const MISSING_SAMPLE_ABOVE: real = 1e29;
// The mass matrix in the mesh buffer, per mesh: a MeshMass, and for the
// explicit scheme after it its block LU factors per node, G (inverse pivot
// block) and E (G times the coupling to the next node), each as four
// columns. (The factors' third block, the coupling to the previous node, is
// the MeshMass coupling transposed.)
const MESH_MASS_VEC4: u32 = 4u;
const FACTOR_VEC4_PER_NODE: u32 = 8u;
// State planes in the `state` buffer (STATE_PLANES in src/gpu/abi.rs):
// the displacement as of the last fold, the drift since then, velocity,
// acceleration.
const PLANE_DISPLACEMENT: u32 = 0u;
const PLANE_DRIFT: u32 = 1u;
const PLANE_VELOCITY: u32 = 2u;
const PLANE_ACCELERATION: u32 = 3u;
struct DispatchParams {
    simulations: u32,
    steps_per_dispatch: u32,
    // Node slots per simulation in the state buffer (max n + 1 of the chunk).
    node_slots: u32,
    _pad: u32,
}

struct SimControl {
    elements: u32,
    // Offsets into `mesh` in vec4 units: the mass factors (explicit) or mass
    // blocks (semi-implicit), and the marker table (two vec4 per marker:
    // shape values s1..s4, then (arc length, element, 0, 0)).
    mass_offset: u32,
    marker_offset: u32,
    markers: u32,
    total_steps: u32,
    steps_per_sample: u32,
    // Frames this simulation samples (those after its release).
    frames: u32,
    winch_moves: u32,
    // Offset into `track` (vec2 units) of its first frame, or NO_TRACK.
    track_offset: u32,
    // Offset into `measured` (vec2 units) of its first frame, or NO_TRACK:
    // then J_e is not accumulated.
    measured_offset: u32,
    // Steps between folds of the drift into the displacement, besides the
    // fold at every sample (STEPS_PER_FOLD in src/gpu/abi.rs says why).
    steps_per_fold: u32,
    // Offset of its first frame in `frame_steps` and `frame_back`.
    frame_offset: u32,
    // Offset into `track` (vec2 units) of its first frame's pin force, or
    // NO_TRACK.
    pin_force_offset: u32,
    // Its pin path's cubics in `mesh` (x's then y's per segment), and
    // their count; 0: no path.
    path_offset: u32,
    path_segments: u32,
}

// The mass matrix of a uniform mesh (MeshMass in src/gpu/mass_factor.rs):
// each node block is a 2×2 matrix over (position, slope), row-major in a
// vec4, times the identity over (x, y); interior nodes share one diagonal
// block and all nodes the coupling to the next.
struct MeshMass {
    first: real4,
    interior: real4,
    last: real4,
    coupling: real4,
}

struct SimPhysics {
    step_s: real,
    element_length_m: real,
    length_m: real,
    axial_stiffness_n: real,
    axial_damping_n_s: real,
    bending_stiffness_n_m2: real,
    bending_damping_n_m2_s: real,
    weight_per_length_n_m: real,
    tip_weight_n: real,
    drag_factor_kg_m3: real,
    tangent_x: real,
    tangent_y: real,
    pin_x_m: real,
    pin_y_m: real,
    velocity_weight_s: real,
    time_weight_m_s: real,
    waypoints_m: array<real, 5>,
    periods_s: array<real, 4>,
    // Its pin path's uniform grid [s] (unread without a path).
    path_start_s: real,
    path_step_s: real,
}

struct SimProgress {
    steps_done: u32,
    status: u32,
    frames_done: u32,
    _pad: u32,
}

struct SimObjectives {
    identification_error_m2: real,
    swingup_min_m: real,
    swingup_time_s: real,
    // The J_e [m²] past which the simulation is abandoned (`abandons`); far
    // beyond any J_e when it is scored to the end.
    abandon_above_m2: real,
}

@group(0) @binding(0) var<uniform> params: DispatchParams;
@group(0) @binding(1) var<storage, read> controls: array<SimControl>;
@group(0) @binding(2) var<storage, read> physics: array<SimPhysics>;
@group(0) @binding(3) var<storage, read> mesh: array<real4>;
@group(0) @binding(4) var<storage, read> measured: array<real2>;
@group(0) @binding(5) var<storage, read_write> state: array<real4>;
@group(0) @binding(6) var<storage, read_write> progress: array<SimProgress>;
@group(0) @binding(7) var<storage, read_write> objectives: array<SimObjectives>;
@group(0) @binding(8) var<storage, read_write> track: array<real2>;
// Per frame of a simulation (FrameDue in src/scheme.rs): the step at whose
// end it is sampled, and how long before that end it lies [s].
@group(0) @binding(9) var<storage, read> frame_steps: array<u32>;
@group(0) @binding(10) var<storage, read> frame_back: array<real>;

fn slot(plane: u32, node: u32, sim: u32) -> u32 {
    // Simulation-minor, so that neighbouring invocations touch neighbouring
    // addresses.
    return (plane * params.node_slots + node) * params.simulations + sim;
}

fn mesh_matrix(base: u32) -> real4x4 {
    return real4x4(mesh[base], mesh[base + 1u], mesh[base + 2u], mesh[base + 3u]);
}

// Explicit: G (0) or E (1) of a node.
fn factor(c: SimControl, node: u32, which: u32) -> real4x4 {
    return mesh_matrix(c.mass_offset + MESH_MASS_VEC4 + node * FACTOR_VEC4_PER_NODE + 4u * which);
}

fn mesh_mass(c: SimControl) -> MeshMass {
    let base = c.mass_offset;
    return MeshMass(mesh[base], mesh[base + 1u], mesh[base + 2u], mesh[base + 3u]);
}

// Displacements far beyond anything physical for a tether: only a
// numerically unstable run reaches them (the CPU's TetherDynamics::check_state).
fn exploded_position(u: real4, length_m: real) -> bool {
    return !(abs(u.x) < 100.0 * length_m && abs(u.y) < 100.0 * length_m
             && abs(u.z) < 100.0 && abs(u.w) < 100.0);
}

fn exploded_velocity(v: real4) -> bool {
    return !(abs(v.x) < 1e4 && abs(v.y) < 1e4 && abs(v.z) < 1e4 && abs(v.w) < 1e4);
}

// The pin's prescribed motion at t: its path where it has one, its winch
// moves (or rest) otherwise.
fn pin_at(c: SimControl, ph: SimPhysics, t: real) -> PinState {
    if (c.path_segments == 0u) {
        return pin_state(t, c.winch_moves, ph.waypoints_m, ph.periods_s);
    }
    let k = path_segment(t, ph.path_start_s, ph.path_step_s, c.path_segments);
    return path_state(t, ph.path_start_s, ph.path_step_s, k, mesh[c.path_offset + 2u * k],
                      mesh[c.path_offset + 2u * k + 1u]);
}

// A simulation's section, element.wgsl's Section.
fn section(ph: SimPhysics) -> Section {
    return Section(ph.axial_stiffness_n, ph.axial_damping_n_s,
                   ph.bending_stiffness_n_m2, ph.bending_damping_n_m2_s);
}

// The force of the pin on the tether [N]: node 0's prescribed rows of
// M ä − f (TetherDynamics::pin_reaction on the CPU), from the first
// element's nodes' displacements u, velocities v and accelerations a. Only
// element 0 reaches those rows: its force, and node 0's mass block and its
// coupling to node 1. The forces are taken at the state's own velocity,
// the one the step's acceleration balances where the pin moves at constant
// velocity; where it accelerates, the semi-implicit scheme's end-of-step
// damping adds that scheme's first-order error (tests/carried.rs).
fn pin_force(ph: SimPhysics, mass: MeshMass, u0: real4, u1: real4, v0: real4, v1: real4,
             a0: real4, a1: real4) -> real2 {
    let no_damping = Symmetric4(real4(0.0), real4(0.0), real2(0.0));
    var unused = ElementDamping(no_damping, real4x4(), no_damping);
    let fe = element_force(ph.element_length_m, real2(ph.tangent_x, ph.tangent_y), section(ph),
                           ph.weight_per_length_n_m, ph.drag_factor_kg_m3,
                           ElementState(u0, u1, v0, v1, v0, v1, real4(0.0), real4(0.0)),
                           &unused, 0.0);
    let inertia = node_mass_times(mass.first, a0) + node_mass_times(mass.coupling, a1);
    return inertia.xy - fe.a.xy;
}

// The pin's force at `frame` written to the track where it is recorded
// (the force evaluated only then), from element 0's nodes' state.
fn observe_pin_force(c: SimControl, ph: SimPhysics, frame: u32, u0: real4, u1: real4,
                     v0: real4, v1: real4, a0: real4, a1: real4) {
    if (c.pin_force_offset != NO_TRACK) {
        track[c.pin_force_offset + frame] = pin_force(ph, mesh_mass(c), u0, u1, v0, v1, a0, a1);
    }
}

// Where marker `m` is, from the displacements `ua`, `ub` of its element's
// nodes.
fn marker_position(c: SimControl, ph: SimPhysics, m: u32, ua: real4, ub: real4) -> real2 {
    let t0 = real2(ph.tangent_x, ph.tangent_y);
    let pin = real2(ph.pin_x_m, ph.pin_y_m);
    let shapes = mesh[c.marker_offset + 2u * m];
    let place = mesh[c.marker_offset + 2u * m + 1u];
    let displacement = shapes.x * ua.xy + shapes.y * ua.zw + shapes.z * ub.xy + shapes.w * ub.zw;
    return pin + place.x * t0 + displacement;
}

// The squared distance of marker `m` at `position` in the simulation's
// `frame`-th frame (from 0) from its measured position: 0 when not
// compared.
fn marker_error(c: SimControl, frame: u32, m: u32, position: real2) -> real {
    if (c.measured_offset == NO_TRACK) {
        return 0.0;
    }
    let sample = measured[c.measured_offset + frame * c.markers + m];
    if (abs(sample.x) < MISSING_SAMPLE_ABOVE) {
        let d = sample - position;
        return dot(d, d);
    }
    return 0.0;
}

fn record_marker(c: SimControl, frame: u32, m: u32, position: real2) {
    if (c.track_offset != NO_TRACK) {
        track[c.track_offset + frame * c.markers + m] = position;
    }
}

// One marker of a frame: its position written to the track when one is
// recorded; returns its squared error (marker_error).
fn observe_marker(c: SimControl, ph: SimPhysics, frame: u32, m: u32, ua: real4, ub: real4) -> real {
    let position = marker_position(c, ph, m, ua, ub);
    record_marker(c, frame, m, position);
    return marker_error(c, frame, m, position);
}

// Whether a scored simulation with J_e `error_m2` after `frames_done` of
// its frames stops there: past its bound with frames left. One that passes
// it only at its last frame has finished and keeps its whole sum, as on
// the CPU (engine::run's simulate_bounded).
fn abandons(sim: u32, c: SimControl, frames_done: u32, error_m2: real) -> bool {
    return frames_done < c.frames && error_m2 > objectives[sim].abandon_above_m2;
}

// A node's displacement `back_s` before the end of the step that holds a
// frame, from its displacement, velocity and acceleration at that end
// (FrameDue in src/scheme.rs): exactly `u` on the step grid (back_s = 0).
fn expand_back(u: real4, v: real4, a: real4, back_s: real) -> real4 {
    return u - back_s * v + (0.5 * back_s * back_s) * a;
}

// The step at whose end the simulation's `frame`-th frame falls, or
// NO_FRAME past its last.
const NO_FRAME: u32 = 0xffffffffu;
fn frame_step(c: SimControl, frame: u32) -> u32 {
    if (frame < c.frames) {
        return frame_steps[c.frame_offset + frame];
    }
    return NO_FRAME;
}

// The element a marker lies on (its node a).
fn marker_element(c: SimControl, m: u32) -> u32 {
    return u32(mesh[c.marker_offset + 2u * m + 1u].y);
}

// A simulation's step counters since its last sample and fold, counted
// rather than taken modulo every step: lavapipe has no vector integer
// division and divides lane by lane (three divisions a step took about 4 %
// of an n = 10 step's time). Frames come from the frame table instead
// (frame_step), since they fall wherever the measured file puts them.
struct StepClock {
    since_sample: u32,
    since_fold: u32,
}

// What a step just completed: a sample (J_a, and a fold), a fold of the
// drift.
struct Ticks {
    sample: bool,
    fold: bool,
}

// The clock of a simulation that has done `steps_done` steps.
fn start_clock(c: SimControl, steps_done: u32) -> StepClock {
    return StepClock(steps_done % c.steps_per_sample, steps_done % c.steps_per_fold);
}

// Advances the clock by one step and says what falls due.
fn tick(clock: ptr<function, StepClock>, c: SimControl) -> Ticks {
    (*clock).since_sample += 1u;
    (*clock).since_fold += 1u;
    let due = Ticks((*clock).since_sample == c.steps_per_sample,
                    (*clock).since_fold == c.steps_per_fold);
    if (due.sample) {
        (*clock).since_sample = 0u;
    }
    if (due.fold) {
        (*clock).since_fold = 0u;
    }
    return due;
}

// J_a = |W − r_tip| + k1 |ṙ_tip| + k2 t (docs/model.md §5), relative to the reference
// pin: W − r_tip = pin displacement − (L t0 + u_tip); kept in `objectives`
// when it is the smallest yet.
fn observe_swingup(sim: u32, ph: SimPhysics, pin_position: real2, u_tip: real2,
                   tip_velocity: real2, t: real) {
    let t0 = real2(ph.tangent_x, ph.tangent_y);
    let gap = pin_position - (ph.length_m * t0 + u_tip);
    let j_a = length(gap) + ph.velocity_weight_s * length(tip_velocity) + ph.time_weight_m_s * t;
    if (j_a < objectives[sim].swingup_min_m) {
        objectives[sim].swingup_min_m = j_a;
        objectives[sim].swingup_time_s = t;
    }
}
