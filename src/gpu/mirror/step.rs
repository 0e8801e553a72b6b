//! step.wgsl (with coupling_private.wgsl and coupling_none.wgsl): one
//! simulation from its upload to its outcome, and a batch of them.

use nalgebra::{Matrix4, Vector2, Vector4};
use rayon::prelude::*;

use super::super::abi::{
    FACTOR_VEC4_PER_NODE, MESH_MASS_VEC4, MISSING_SAMPLE_ABOVE_M, NEVER_ABANDON_M2, NO_TRACK,
    SimControl, SimPhysics,
};
use super::super::batch::{ChunkData, GpuOutcome, GpuSimulation, chunk_data, exploded};
use super::super::{GpuError, Precision};
use super::element::{ElementDamping, ElementState, Section, element_force};
use super::matrix::{Symmetric4, inverse4};
use super::motion::{PinState, path_segment, path_state, pin_state};
use super::node_blocks::{coupling_transpose_times, node_mass_times, pin_rows, plus_node_mass};
use super::{MirrorReal, combine, join, lit, lit4, xy, zw};
use crate::scheme::FixedStepScheme;
use crate::status::RunStatus;

/// Runs `sims` on the mirror in `precision`, with the engine's inputs and
/// outputs: the same [`GpuOutcome`]s the engine would read back.
pub fn mirror_batch(
    sims: &[GpuSimulation],
    measured: Option<&[[f64; 2]]>,
    precision: Precision,
) -> Result<Vec<GpuOutcome>, GpuError> {
    match precision {
        Precision::F32 => run_typed::<f32>(sims, measured),
        Precision::F64 => run_typed::<f64>(sims, measured),
    }
}

fn run_typed<R: MirrorReal>(
    sims: &[GpuSimulation],
    measured: Option<&[[f64; 2]]>,
) -> Result<Vec<GpuOutcome>, GpuError> {
    let measured = convert_measured::<R>(measured);
    sims.par_iter()
        .map(|sim| {
            let data = chunk_data(&[sim])?;
            Ok(run_one::<R>(sim, &data, &measured))
        })
        .collect()
}

/// Runs `sim` from `data`, its upload as a chunk of one ([`chunk_data`]),
/// which a caller may have altered (a test that changes
/// `steps_per_fold`, say).
pub fn run_prepared(
    sim: &GpuSimulation,
    data: &ChunkData,
    measured: Option<&[[f64; 2]]>,
    precision: Precision,
) -> GpuOutcome {
    match precision {
        Precision::F32 => run_one::<f32>(sim, data, &convert_measured(measured)),
        Precision::F64 => run_one::<f64>(sim, data, &convert_measured(measured)),
    }
}

pub(super) fn convert_measured<R: MirrorReal>(measured: Option<&[[f64; 2]]>) -> Vec<Vector2<R>> {
    measured
        .unwrap_or(&[])
        .iter()
        .map(|p| Vector2::new(lit(p[0]), lit(p[1])))
        .collect()
}

/// step.wgsl's `exploded_position`.
pub(super) fn exploded_position<R: MirrorReal>(u: &Vector4<R>, length_m: R) -> bool {
    let limit = lit::<R>(100.0) * length_m;
    let hundred = lit::<R>(100.0);
    !(u.x.abs() < limit && u.y.abs() < limit && u.z.abs() < hundred && u.w.abs() < hundred)
}

/// step.wgsl's `exploded_velocity`.
pub(super) fn exploded_velocity<R: MirrorReal>(v: &Vector4<R>) -> bool {
    let limit = lit::<R>(1e4);
    !(v.x.abs() < limit && v.y.abs() < limit && v.z.abs() < limit && v.w.abs() < limit)
}

/// `count` matrices of four vec4 columns from `mesh` at `base`
/// (step.wgsl's `mesh_matrix`).
fn mesh_matrices<R: MirrorReal, const COUNT: usize>(
    mesh: &[[f64; 4]],
    base: usize,
) -> [Matrix4<R>; COUNT] {
    std::array::from_fn(|which| Matrix4::from_fn(|row, col| lit(mesh[base + 4 * which + col][row])))
}

/// The explicit scheme's mass factors of one node (step.wgsl's `factor`):
/// G, E.
fn node_factors<R: MirrorReal>(mesh: &[[f64; 4]], c: &SimControl, node: usize) -> [Matrix4<R>; 2] {
    mesh_matrices(
        mesh,
        c.mass_offset as usize + MESH_MASS_VEC4 + node * FACTOR_VEC4_PER_NODE,
    )
}

/// The mesh's mass matrix (step.wgsl's `mesh_mass`): first, interior and
/// last diagonal and the coupling, each a row-major 2×2.
pub(super) fn mesh_mass<R: MirrorReal>(
    mesh: &[[f64; 4]],
    c: &SimControl,
) -> [Vector4<R>; MESH_MASS_VEC4] {
    std::array::from_fn(|i| lit4(&mesh[c.mass_offset as usize + i]))
}

/// The state and constants of one simulation as step.wgsl's invocation
/// holds them: the four state planes per node, the mass factors (the
/// explicit scheme's G and E, or the semi-implicit scheme's blocks), the
/// markers.
struct Mirror<'a, R: MirrorReal> {
    c: &'a SimControl,
    ph: SimPhysics<R>,
    n: usize,
    semi_implicit: bool,
    factors: Vec<[Matrix4<R>; 2]>,
    /// The mesh's mass blocks: first, interior and last diagonal, coupling.
    mass: [Vector4<R>; MESH_MASS_VEC4],
    coupling: Vec<Matrix4<R>>,
    markers: Vec<Marker<R>>,
    h: R,
    half: R,
    le: R,
    t0: Vector2<R>,
    pin0: Vector2<R>,
    sec: Section<R>,
    disp: Vec<Vector4<R>>,
    drift: Vec<Vector4<R>>,
    vel: Vec<Vector4<R>>,
    acc: Vec<Vector4<R>>,
}

impl<'a, R: MirrorReal> Mirror<'a, R> {
    /// The simulation as uploaded (a chunk of one).
    fn new(sim: &GpuSimulation, data: &'a ChunkData) -> Self {
        let c = &data.controls[0];
        let ph: SimPhysics<R> = data.physics[0].convert();
        let n = c.elements as usize;
        let slots = data.node_slots;
        let plane = |p: usize| -> Vec<Vector4<R>> {
            (0..=n).map(|k| lit4(&data.state[p * slots + k])).collect()
        };
        let (disp, drift, vel, acc) = (plane(0), plane(1), plane(2), plane(3));
        let semi_implicit = sim.scheme == FixedStepScheme::SemiImplicit;
        let factors: Vec<[Matrix4<R>; 2]> = if semi_implicit {
            Vec::new()
        } else {
            (0..=n).map(|k| node_factors(&data.mesh, c, k)).collect()
        };
        let mass = mesh_mass(&data.mesh, c);
        // The E blocks of nodes 0..n−1; the tip's is never needed
        // (COUPLING_NODES = MAX_NODES − 1 in coupling_private.wgsl).
        let coupling: Vec<Matrix4<R>> = vec![Matrix4::zeros(); n];
        let markers = marker_table(data, c);

        let h = ph.step_s;
        let half = lit::<R>(0.5) * h;
        let le = ph.element_length_m;
        let t0 = Vector2::new(ph.tangent_x, ph.tangent_y);
        let pin0 = Vector2::new(ph.pin_x_m, ph.pin_y_m);
        let sec = section(&ph);
        Self {
            c,
            ph,
            n,
            semi_implicit,
            factors,
            mass,
            coupling,
            markers,
            h,
            half,
            le,
            t0,
            pin0,
            sec,
            disp,
            drift,
            vel,
            acc,
        }
    }

    /// The step's forward sweep: drift, velocity half-step, forces and the
    /// block-tridiagonal elimination, node by node. True: it diverged.
    fn forward(&mut self, pin: &PinState<R>) -> bool {
        let Self {
            ph,
            n,
            semi_implicit,
            factors,
            mass,
            coupling,
            h,
            half,
            le,
            t0,
            sec,
            disp,
            drift,
            vel,
            acc,
            ..
        } = self;
        let [mass_first, mass_interior, mass_last, mass_coupling] = *mass;
        let (n, semi_implicit, h, half, le, t0, sec) =
            (*n, *semi_implicit, *h, *half, *le, *t0, *sec);
        let mut diverged = false;
        // The previous node's displacement, velocities, force and y.
        let zero = Vector4::zeros();
        let (mut u_prev, mut v_prev, mut damped_prev, mut f_prev, mut y_prev) =
            (zero, zero, zero, zero, zero);
        let mut elimination = Elimination::default();
        for k in 0..=n {
            let a = acc[k];
            let v_half = vel[k] + a * half;
            drift[k] += v_half * h;
            let mut v_pred = v_half + a * half;
            let mut damped = if semi_implicit { v_half } else { v_pred };
            if k == 0 {
                disp[0] = join(pin.position, zw(&disp[0]));
                drift[0] = join(Vector2::zeros(), zw(&drift[0]));
                v_pred = join(pin.velocity, zw(&v_pred));
                damped = join(pin.velocity, zw(&damped));
            }
            let u = disp[k] + drift[k];
            diverged = diverged || exploded_position(&u, ph.length_m);
            vel[k] = v_half;
            let mut f_next = Vector4::zeros();
            if k > 0 {
                let mut dmp = ElementDamping::zeros();
                let state =
                    ElementState::whole((u_prev, u), (damped_prev, damped), (v_prev, v_pred));
                let fe = element_force(
                    le,
                    t0,
                    sec,
                    ph.weight_per_length_n_m,
                    ph.drag_factor_kg_m3,
                    &state,
                    semi_implicit.then_some((&mut dmp, half)),
                );
                f_prev += fe.a;
                f_next = fe.b;
                let node = k - 1;
                if node == 0 {
                    f_prev = join(pin.acceleration, zw(&f_prev));
                }
                let y = if semi_implicit {
                    let mass_diagonal = if node == 0 {
                        &mass_first
                    } else {
                        &mass_interior
                    };
                    let y =
                        elimination.row(node, &dmp, f_prev, y_prev, mass_diagonal, &mass_coupling);
                    coupling[node] = elimination.e_prev;
                    y
                } else {
                    let [g, _] = &factors[node];
                    g * (f_prev - coupling_transpose_times(&mass_coupling, &y_prev))
                };
                acc[node] = y;
                y_prev = y;
            }
            u_prev = u;
            v_prev = v_pred;
            damped_prev = damped;
            f_prev = f_next;
        }
        f_prev.y -= ph.tip_weight_n;
        acc[n] = if semi_implicit {
            elimination.tip(f_prev, y_prev, &mass_last)
        } else {
            let [g, _] = &factors[n];
            g * (f_prev - coupling_transpose_times(&mass_coupling, &y_prev))
        };
        diverged
    }

    /// The back substitution and the velocity's second half-step. True: it
    /// diverged; and the tip's velocity.
    fn back(&mut self, pin: &PinState<R>) -> (bool, Vector2<R>) {
        let Self {
            n,
            semi_implicit,
            factors,
            coupling,
            half,
            vel,
            acc,
            ..
        } = self;
        let (n, semi_implicit, half) = (*n, *semi_implicit, *half);
        let mut diverged = false;
        let mut a_next = Vector4::zeros();
        let mut tip_velocity = Vector2::zeros();
        for k in (0..=n).rev() {
            let mut a = acc[k];
            if k < n {
                let e = if semi_implicit {
                    &coupling[k]
                } else {
                    &factors[k][1]
                };
                a -= e * a_next;
            }
            let mut v = vel[k] + a * half;
            if k == 0 {
                v = join(pin.velocity, zw(&v));
            }
            diverged = diverged || exploded_velocity(&v);
            acc[k] = a;
            vel[k] = v;
            if k == n {
                tip_velocity = xy(&v);
            }
            a_next = a;
        }
        (diverged, tip_velocity)
    }

    /// The markers at frame `frame`, `back_s` before the step's end (the
    /// step's expansion), through [`observe_markers`].
    fn frame_error(
        &self,
        back: R,
        frame: usize,
        measured: &[Vector2<R>],
        track: &mut Vec<[f64; 2]>,
    ) -> R {
        let Self {
            disp,
            drift,
            vel,
            acc,
            ..
        } = self;
        let at_frame = |k: usize| {
            let u = disp[k] + drift[k];
            u - vel[k] * back + acc[k] * (lit::<R>(0.5) * back * back)
        };
        let frame_markers = FrameMarkers {
            c: self.c,
            t0: self.t0,
            pin0: self.pin0,
            markers: &self.markers,
        };
        frame_markers.observe(at_frame, frame, measured, track)
    }
}

impl<R: MirrorReal> Mirror<'_, R> {
    /// step_io.wgsl's `observe_pin_force`: the pin's force appended to
    /// `forces` where it is recorded.
    fn observe_pin_force(&self, forces: &mut Vec<[f64; 2]>) {
        if self.c.pin_force_offset != NO_TRACK {
            let force = self.pin_force();
            forces.push([force.x.to_f64(), force.y.to_f64()]);
        }
    }

    /// step_io.wgsl's `pin_force` at the step's end.
    fn pin_force(&self) -> Vector2<R> {
        let (disp, drift, vel, acc) = (&self.disp, &self.drift, &self.vel, &self.acc);
        let (u0, u1) = (disp[0] + drift[0], disp[1] + drift[1]);
        let state = ElementState::whole((u0, u1), (vel[0], vel[1]), (vel[0], vel[1]));
        let ph = &self.ph;
        let fe = element_force(
            self.le,
            self.t0,
            self.sec,
            ph.weight_per_length_n_m,
            ph.drag_factor_kg_m3,
            &state,
            None,
        );
        let [first, _, _, coupling] = &self.mass;
        let inertia = node_mass_times(first, &acc[0]) + node_mass_times(coupling, &acc[1]);
        xy(&inertia) - xy(&fe.a)
    }
}

/// step_io.wgsl's `pin_at`: a simulation's pin motion as uploaded, its
/// path's cubics read from the mesh once.
pub(super) struct PinAt<R: MirrorReal> {
    moves: u32,
    waypoints: [R; 5],
    periods: [R; 4],
    start: R,
    step: R,
    cubics: Vec<[Vector4<R>; 2]>,
}

impl<R: MirrorReal> PinAt<R> {
    pub fn new(data: &ChunkData, c: &SimControl, ph: &SimPhysics<R>) -> Self {
        let at = |i: u32| lit4::<R>(&data.mesh[(c.path_offset + i) as usize]);
        Self {
            moves: c.winch_moves,
            waypoints: ph.waypoints_m,
            periods: ph.periods_s,
            start: ph.path_start_s,
            step: ph.path_step_s,
            cubics: (0..c.path_segments)
                .map(|k| [at(2 * k), at(2 * k + 1)])
                .collect(),
        }
    }

    pub fn at(&self, t: R) -> PinState<R> {
        if self.cubics.is_empty() {
            return pin_state(t, self.moves, &self.waypoints, &self.periods);
        }
        let k = path_segment(t, self.start, self.step, self.cubics.len() as u32);
        let [cx, cy] = &self.cubics[k as usize];
        path_state(t, self.start, self.step, k, cx, cy)
    }
}

/// A marker of the marker table: its shape values s1..s4, its arc length
/// \[m\] and its element.
pub(super) type Marker<R> = (Vector4<R>, R, usize);

/// The simulation's marker table as uploaded (two vec4 per marker in the
/// mesh buffer).
pub(super) fn marker_table<R: MirrorReal>(data: &ChunkData, c: &SimControl) -> Vec<Marker<R>> {
    (0..c.markers as usize)
        .map(|m| {
            let shapes = data.mesh[c.marker_offset as usize + 2 * m];
            let place = data.mesh[c.marker_offset as usize + 2 * m + 1];
            (lit4(&shapes), lit(place[0]), place[1] as usize)
        })
        .collect()
}

/// element.wgsl's `Section` from a simulation's physics.
pub(super) fn section<R: MirrorReal>(ph: &SimPhysics<R>) -> Section<R> {
    Section {
        axial_stiffness: ph.axial_stiffness_n,
        axial_damping: ph.axial_damping_n_s,
        bending_stiffness: ph.bending_stiffness_n_m2,
        bending_damping: ph.bending_damping_n_m2_s,
    }
}

/// What a frame's observation needs: step_io.wgsl's `observe_marker` for
/// every marker.
pub(super) struct FrameMarkers<'a, R: MirrorReal> {
    pub c: &'a SimControl,
    pub t0: Vector2<R>,
    pub pin0: Vector2<R>,
    pub markers: &'a [Marker<R>],
}

impl<R: MirrorReal> FrameMarkers<'_, R> {
    /// The markers at frame `frame` from the nodes' displacements at its
    /// time (`at_node`): their squared distance from the measured samples
    /// the shader compares, their positions appended to `track` where it
    /// is recorded.
    pub fn observe(
        &self,
        at_node: impl Fn(usize) -> Vector4<R>,
        frame: usize,
        measured: &[Vector2<R>],
        track: &mut Vec<[f64; 2]>,
    ) -> R {
        let Self {
            c,
            t0,
            pin0,
            markers,
        } = self;
        let mut error: R = lit(0.0);
        for (m, (shapes, arc, element)) in markers.iter().enumerate() {
            let (ua, ub) = (at_node(*element), at_node(*element + 1));
            let displacement = combine(shapes, &ua, &ub);
            let position = *pin0 + *t0 * *arc + displacement;
            let index = frame * markers.len() + m;
            // A sample the measurement lacks is skipped.
            if c.measured_offset != NO_TRACK {
                let sample = measured[c.measured_offset as usize + index];
                if sample.x.abs() < lit::<R>(MISSING_SAMPLE_ABOVE_M) {
                    let d = sample - position;
                    error += d.dot(&d);
                }
            }
            if c.track_offset != NO_TRACK {
                track.push([position.x.to_f64(), position.y.to_f64()]);
            }
        }
        error
    }
}

/// The semi-implicit scheme's running block elimination over the nodes
/// (step.wgsl's forward sweep): the previous node's damping block, its
/// upper block and its E = G × upper rows.
struct Elimination<R: MirrorReal> {
    damping_prev: Symmetric4<R>,
    upper_prev: Matrix4<R>,
    e_prev: Matrix4<R>,
}

impl<R: MirrorReal> Default for Elimination<R> {
    fn default() -> Self {
        Self {
            damping_prev: Symmetric4::zeros(),
            upper_prev: Matrix4::zeros(),
            e_prev: Matrix4::zeros(),
        }
    }
}

impl<R: MirrorReal> Elimination<R> {
    /// Eliminates node `node` (its element damping `dmp`, force `f`, the
    /// previous node's y): its y, and its E kept for the back substitution.
    fn row(
        &mut self,
        node: usize,
        dmp: &ElementDamping<R>,
        f: Vector4<R>,
        y_prev: Vector4<R>,
        mass_diagonal: &Vector4<R>,
        mass_coupling: &Vector4<R>,
    ) -> Vector4<R> {
        let mut pivot = plus_node_mass(&self.damping_prev.sum(&dmp.aa).full(), mass_diagonal);
        let upper = plus_node_mass(&dmp.ab, mass_coupling);
        let mut upper_rows = upper;
        if node == 0 {
            pivot = pin_rows(&pivot, true);
            upper_rows = pin_rows(&upper, false);
        }
        let lower = self.upper_prev.transpose();
        let g = inverse4(&(pivot - lower * self.e_prev));
        let y = g * (f - lower * y_prev);
        self.e_prev = g * upper_rows;
        self.upper_prev = upper;
        self.damping_prev = dmp.bb;
        y
    }

    /// The tip node's y: the last pivot, with no upper block.
    fn tip(&self, f: Vector4<R>, y_prev: Vector4<R>, mass_last: &Vector4<R>) -> Vector4<R> {
        let lower = self.upper_prev.transpose();
        let g =
            inverse4(&(plus_node_mass(&self.damping_prev.full(), mass_last) - lower * self.e_prev));
        g * (f - lower * y_prev)
    }
}

/// One simulation from its upload (a chunk of one) to its outcome, as the
/// shader advances it; the dispatch split is left out, since loading and
/// storing the state in the same precision changes no value.
fn run_one<R: MirrorReal>(
    sim: &GpuSimulation,
    data: &ChunkData,
    measured: &[Vector2<R>],
) -> GpuOutcome {
    let mut m = Mirror::<R>::new(sim, data);
    let c = m.c;
    let pin_at = PinAt::new(data, c, &m.ph);
    let frame_table = c.frame_offset as usize..(c.frame_offset + c.frames) as usize;
    let frame_steps = &data.frame_steps[frame_table.clone()];
    let frame_back: Vec<R> = data.frame_back_s[frame_table]
        .iter()
        .map(|&b| lit(b))
        .collect();
    let mut frames_done = 0usize;
    let mut identification_error: R = lit(0.0);
    let mut swingup_min: R = lit(sim.initial_swingup_m);
    let mut swingup_time: R = lit(0.0);
    let mut track: Vec<[f64; 2]> = Vec::new();
    let mut pin_force: Vec<[f64; 2]> = Vec::new();
    let mut steps_done = 0u32;
    let mut diverged = false;
    let abandon_above: R = lit(sim.abandon_above_m2.unwrap_or(NEVER_ABANDON_M2));
    let mut abandoned = None;

    while steps_done < c.total_steps && !diverged && abandoned.is_none() {
        let steps = steps_done + 1;
        let t = lit::<R>(steps as f64) * m.h;
        let pin = pin_at.at(t);

        diverged = m.forward(&pin);
        let (back_diverged, tip_velocity) = m.back(&pin);
        diverged = diverged || back_diverged;
        steps_done = steps;
        if diverged {
            break;
        }
        let Mirror {
            ph,
            n,
            t0,
            disp,
            drift,
            ..
        } = &mut m;
        let (n, t0) = (*n, *t0);

        let sample = steps.is_multiple_of(c.steps_per_sample);
        if sample || steps.is_multiple_of(c.steps_per_fold) {
            for (d, r) in disp.iter_mut().zip(drift.iter_mut()) {
                *d += *r;
                *r = Vector4::zeros();
            }
        }
        if sample {
            let gap = pin.position - (t0 * ph.length_m + xy(&disp[n]));
            let j_a =
                gap.norm() + ph.velocity_weight_s * tip_velocity.norm() + ph.time_weight_m_s * t;
            if j_a < swingup_min {
                swingup_min = j_a;
                swingup_time = t;
            }
        }
        // Every frame within this step.
        while frame_steps.get(frames_done) == Some(&steps) {
            let frame = frames_done;
            identification_error += m.frame_error(frame_back[frame], frame, measured, &mut track);
            m.observe_pin_force(&mut pin_force);
            frames_done += 1;
            // step_io.wgsl's `abandons`.
            if frames_done < frame_steps.len() && identification_error > abandon_above {
                abandoned = Some(sim.frame_time_s(frame));
                break;
            }
        }
    }
    let status = match (diverged, abandoned) {
        (true, _) => exploded(steps_done as f64 * sim.step_s, R::PRECISION),
        (false, Some(time_s)) => RunStatus::Abandoned { time_s },
        (false, None) => RunStatus::Ok,
    };
    GpuOutcome {
        // The per-simulation arithmetic of both layouts; named as the
        // thread layout, which it transcribes loop for loop.
        layout: super::super::layout::GpuLayout::Thread,
        steps: steps_done as u64,
        identification_error_m2: identification_error.to_f64(),
        swingup_min_m: swingup_min.to_f64(),
        swingup_time_s: swingup_time.to_f64(),
        track_m: (sim.record_track && status.is_ok()).then_some(track),
        pin_force_n: (sim.record_pin_force && status.is_ok()).then_some(pin_force),
        status,
    }
}
