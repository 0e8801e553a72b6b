//! A batch of simulations in the engine's terms, and the arrays a chunk of
//! it uploads. Everything here is f64 and device-independent; the engine
//! converts to the shader's precision at upload.

use super::GpuError;
use super::abi::{
    FACTOR_VEC4_PER_NODE, MARKER_VEC4, MAX_GPU_ELEMENTS, MAX_PATH_SEGMENTS, MAX_WINCH_MOVES,
    MESH_MASS_VEC4, NO_FRAME, NO_TRACK, STATE_PLANES, STEPS_PER_FOLD, SimControl, SimPhysics,
};
use super::mass_factor::{self, MeshMass};
use crate::error::InputError;
use crate::model::element::{SectionConstants, shape};
use crate::model::tether::{NODE_DOFS, straight_configuration};
use crate::model::{Tether, TetherParams};
use crate::scheme::FixedStepScheme;
use crate::scheme::FrameDue;
use crate::status::RunStatus;

/// The prescribed motion of node 0.
#[derive(Debug, Clone, PartialEq)]
pub enum PinDrive {
    /// The pin stays at its reference position.
    Fixed,
    /// Half-cosine moves along x through `waypoints_m` (docs/model.md §4.2); the
    /// reference pin is at the first waypoint.
    Winch {
        waypoints_m: Vec<f64>,
        periods_s: Vec<f64>,
    },
    /// A planar path (the arm's end point carrying the tether,
    /// docs/constrained.md §5); the reference pin is where it is at 0.
    Path(GridPath),
}

/// A planar path on a uniform time grid, as the shader follows it: from
/// `start_s`, one cubic per `step_s` in x and in y (the coefficients of
/// τ⁰..τ³, τ the time since the segment's start; positions absolute
/// \[m\]), and on in a straight line at its end velocity outside the grid.
/// `scenario::PathMotion::on_grid` makes one from a natural spline,
/// exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPath {
    pub start_s: f64,
    pub step_s: f64,
    pub cubics: Vec<[[f64; 4]; 2]>,
}

/// One simulation for the engine. The state is carried as the displacement
/// from a straight, unstretched reference configuration (docs/model.md §8): from
/// `pin_m` along the unit `tangent`.
#[derive(Debug, Clone)]
pub struct GpuSimulation {
    pub params: TetherParams,
    pub pin_m: [f64; 2],
    pub tangent: [f64; 2],
    pub drive: PinDrive,
    /// Initial coordinates, velocities and accelerations (absolute, f64).
    pub initial_q: Vec<f64>,
    pub initial_v: Vec<f64>,
    pub initial_a: Vec<f64>,
    /// The fixed-step scheme; a chunk runs one (its pipeline's).
    pub scheme: FixedStepScheme,
    pub step_s: f64,
    pub total_steps: u64,
    pub steps_per_sample: u64,
    /// The frames it samples, in order: where each falls on its step grid.
    pub frames: Vec<FrameDue>,
    pub marker_arc_lengths_m: Vec<f64>,
    /// k1 \[s\], k2 [m/s] of J_a.
    pub objective_weights: [f64; 2],
    /// J_a at t = 0, the running minimum's start.
    pub initial_swingup_m: f64,
    /// Accumulate J_e against the batch's measured track.
    pub compare_measured: bool,
    /// The measured frame (an index into the batch's measured frames, each
    /// a row of every marker) that its first frame is compared with.
    pub measured_first_frame: usize,
    /// Read back marker positions at every frame.
    pub record_track: bool,
    /// Read back the pin's force on the tether at every frame (node 0's
    /// prescribed rows of M ä − f), at the end of the step that holds the
    /// frame ([`GpuSimulation::pin_force_time_s`]).
    pub record_pin_force: bool,
    /// Stop, abandoned, once the J_e summed over its frames so far passes
    /// this \[m²\] before its last frame (`abi::STATUS_ABANDONED`); None:
    /// scored to the end.
    pub abandon_above_m2: Option<f64>,
}

impl GpuSimulation {
    pub fn frames(&self) -> u64 {
        self.frames.len() as u64
    }

    /// The time of its `frame`-th frame (from 0) since its start \[s\];
    /// NaN past its last.
    pub fn frame_time_s(&self, frame: usize) -> f64 {
        self.frames
            .get(frame)
            .map_or(f64::NAN, |due| due.step as f64 * self.step_s - due.back_s)
    }

    /// The time of its `frame`-th frame's pin force \[s\]: the end of the
    /// step that holds the frame (the frame's own time where it falls on
    /// a step); NaN past its last.
    pub fn pin_force_time_s(&self, frame: usize) -> f64 {
        self.frames
            .get(frame)
            .map_or(f64::NAN, |due| due.step as f64 * self.step_s)
    }

    /// The fewest steps between two steps that hold frames (from the start
    /// for the first), and the most frames one step holds: what a dispatch's
    /// loop budget must allow for.
    pub fn frame_spacing(&self) -> (u64, u64) {
        let mut fewest = u64::MAX;
        let mut most = 0u64;
        let (mut last, mut run) = (0u64, 0u64);
        for f in &self.frames {
            if f.step == last && run > 0 {
                run += 1;
            } else {
                fewest = fewest.min(f.step - last);
                run = 1;
            }
            last = f.step;
            most = most.max(run);
        }
        (fewest.max(1), most)
    }

    /// The reference (straight, unstretched) coordinates.
    pub fn reference_q(&self) -> Vec<f64> {
        straight_configuration(
            self.params.elements,
            self.params.element_length_m(),
            self.pin_m,
            self.tangent,
        )
    }

    pub fn validate(&self) -> Result<(), GpuError> {
        if !(1..=MAX_GPU_ELEMENTS).contains(&self.params.elements) {
            return Err(InputError::new(
                TetherParams::ELEMENTS,
                self.params.elements,
                format!("1..={MAX_GPU_ELEMENTS} on the GPU (use --backend cpu for more)"),
            )
            .into());
        }
        let dofs = NODE_DOFS * (self.params.elements + 1);
        for (name, v) in [
            ("initial_q", &self.initial_q),
            ("initial_v", &self.initial_v),
            ("initial_a", &self.initial_a),
        ] {
            if v.len() != dofs {
                return Err(InputError::new(name, v.len(), format!("{dofs} coordinates")).into());
            }
        }
        let steps_ok = |x: u64| (1..NO_FRAME as u64).contains(&x);
        if !steps_ok(self.total_steps) || !steps_ok(self.steps_per_sample) {
            return Err(InputError::new(
                "total_steps",
                self.total_steps,
                format!("1 to {} steps per simulation on the GPU", NO_FRAME - 1),
            )
            .into());
        }
        if let Some(w) = self.frames.windows(2).find(|w| w[1].step < w[0].step) {
            return Err(InputError::new(
                "frames",
                format!("a frame at step {} after one at {}", w[1].step, w[0].step),
                format!("frames in order, at steps 1..={}", self.total_steps),
            )
            .into());
        }
        if let (Some(first), Some(last)) = (self.frames.first(), self.frames.last())
            && (first.step == 0 || last.step > self.total_steps)
        {
            return Err(InputError::new(
                "frames",
                format!("steps {}..{}", first.step, last.step),
                format!("frames at steps 1..={}", self.total_steps),
            )
            .into());
        }
        if let PinDrive::Path(path) = &self.drive {
            let finite = path
                .cubics
                .iter()
                .flatten()
                .flatten()
                .all(|c| c.is_finite());
            let grid = path.step_s > 0.0 && path.step_s.is_finite() && path.start_s.is_finite();
            let segments = (1..=MAX_PATH_SEGMENTS).contains(&path.cubics.len());
            if !(segments && grid && finite) {
                return Err(InputError::new(
                    "pin path",
                    format!("{} segments of {} s", path.cubics.len(), path.step_s),
                    format!("1 to {MAX_PATH_SEGMENTS} finite segments of a positive step"),
                )
                .into());
            }
        }
        if let PinDrive::Winch { periods_s, .. } = &self.drive
            && periods_s.len() > MAX_WINCH_MOVES
        {
            return Err(InputError::new(
                "winch periods",
                periods_s.len(),
                format!("at most {MAX_WINCH_MOVES} winch moves on the GPU"),
            )
            .into());
        }
        Ok(())
    }

    /// Key of what the mesh buffer holds for this simulation: everything the
    /// mass matrix, its form for the scheme and the marker table depend on.
    fn mesh_key(&self) -> Vec<u64> {
        let p = &self.params;
        let mut key = vec![
            self.scheme as u64,
            p.elements as u64,
            p.tip_mass_kg.to_bits(),
            p.density_kg_m3.to_bits(),
            p.width_m.to_bits(),
            p.thickness_m.to_bits(),
            p.length_m.to_bits(),
            p.rotary_inertia as u64,
        ];
        key.extend(self.marker_arc_lengths_m.iter().map(|s| s.to_bits()));
        // A path's cubics are uploaded relative to the reference pin.
        if let PinDrive::Path(path) = &self.drive {
            key.push(path.cubics.len() as u64);
            key.extend(self.pin_m.map(f64::to_bits));
            key.extend(path.cubics.iter().flatten().flatten().map(|c| c.to_bits()));
        }
        key
    }

    pub fn physics(&self) -> SimPhysics<f64> {
        let p = &self.params;
        let sc = SectionConstants::new(p);
        let mut waypoints = [0.0; MAX_WINCH_MOVES + 1];
        let mut periods = [0.0; MAX_WINCH_MOVES];
        if let PinDrive::Winch {
            waypoints_m,
            periods_s,
        } = &self.drive
        {
            waypoints[..waypoints_m.len()].copy_from_slice(waypoints_m);
            periods[..periods_s.len()].copy_from_slice(periods_s);
        }
        let (path_start_s, path_step_s) = match &self.drive {
            PinDrive::Path(path) => (path.start_s, path.step_s),
            PinDrive::Fixed | PinDrive::Winch { .. } => (0.0, 1.0),
        };
        SimPhysics {
            step_s: self.step_s,
            element_length_m: p.element_length_m(),
            length_m: p.length_m,
            axial_stiffness_n: sc.axial_stiffness_n,
            axial_damping_n_s: sc.axial_damping_n_s,
            bending_stiffness_n_m2: sc.bending_stiffness_n_m2,
            bending_damping_n_m2_s: sc.bending_damping_n_m2_s,
            weight_per_length_n_m: p.mass_per_length_kg_m() * p.gravity_m_s2,
            tip_weight_n: p.tip_mass_kg * p.gravity_m_s2,
            drag_factor_kg_m3: p.drag_factor_kg_m3(),
            tangent_x: self.tangent[0],
            tangent_y: self.tangent[1],
            pin_x_m: self.pin_m[0],
            pin_y_m: self.pin_m[1],
            velocity_weight_s: self.objective_weights[0],
            time_weight_m_s: self.objective_weights[1],
            waypoints_m: waypoints,
            periods_s: periods,
            path_start_s,
            path_step_s,
        }
    }
}

/// How the GPU (or its CPU mirror) says a simulation of `precision`
/// blew up at `time_s` \[s\]: detected after the step (the fixed-step
/// schemes) or at the landing (the adaptive scheme).
pub(crate) fn exploded(time_s: f64, precision: super::Precision) -> RunStatus {
    RunStatus::diverged_at(
        time_s,
        format!("state exploded on the GPU ({})", precision.name()),
    )
}

/// What the engine reads back for one simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuOutcome {
    pub status: RunStatus,
    /// The layout it ran in.
    pub layout: super::layout::GpuLayout,
    pub steps: u64,
    /// J_e \[m²\] over its frames (when compared).
    pub identification_error_m2: f64,
    /// J_a,min \[m\] and its time \[s\].
    pub swingup_min_m: f64,
    pub swingup_time_s: f64,
    /// Marker positions of its frames (those after the release, frame-major), when recorded.
    pub track_m: Option<Vec<[f64; 2]>>,
    /// The pin's force on the tether \[N\] at each frame, when recorded.
    pub pin_force_n: Option<Vec<[f64; 2]>>,
}

impl GpuOutcome {
    /// A simulation stopped before it ran.
    pub fn cancelled(layout: super::layout::GpuLayout) -> Self {
        Self {
            status: RunStatus::Cancelled,
            layout,
            steps: 0,
            identification_error_m2: f64::NAN,
            swingup_min_m: f64::NAN,
            swingup_time_s: f64::NAN,
            track_m: None,
            pin_force_n: None,
        }
    }
}

// The marker table below writes two vec4 per marker.
const _: () = assert!(MARKER_VEC4 == 2);

/// The f64 arrays of one chunk, in upload order.
pub struct ChunkData {
    pub node_slots: usize,
    pub controls: Vec<SimControl>,
    pub physics: Vec<SimPhysics<f64>>,
    /// vec4 entries of every distinct mesh: its MeshMass, the explicit
    /// scheme's G and E per node, and its marker table.
    pub mesh: Vec<[f64; 4]>,
    /// Plane-major, node, simulation-minor (step.wgsl's `slot`).
    pub state: Vec<[f64; 4]>,
    /// vec2 entries of the recorded tracks.
    pub track_len: usize,
    /// Every simulation's frames in order ([`FrameDue`]): the step, and the
    /// time before its end \[s\].
    pub frame_steps: Vec<u32>,
    pub frame_back_s: Vec<f64>,
}

/// Builds the arrays for the simulations `sims` (one chunk, one scheme).
pub fn chunk_data(sims: &[&GpuSimulation]) -> Result<ChunkData, GpuError> {
    let count = sims.len();
    if let Some(first) = sims.first()
        && let Some(other) = sims.iter().find(|s| s.scheme != first.scheme)
    {
        return Err(InputError::new(
            "scheme",
            other.scheme.name(),
            format!("{}, as the chunk's first simulation", first.scheme.name()),
        )
        .into());
    }
    let node_slots = sims
        .iter()
        .map(|s| s.params.elements + 1)
        .max()
        .unwrap_or(1);
    let mut meshes: Vec<(Vec<u64>, MeshOffsets)> = Vec::new();
    let mut mesh: Vec<[f64; 4]> = Vec::new();
    let mut controls = Vec::with_capacity(count);
    let mut physics = Vec::with_capacity(count);
    let mut state = vec![[0.0; 4]; STATE_PLANES * node_slots * count];
    let mut track_len = 0usize;
    let mut frame_steps = Vec::new();
    let mut frame_back_s = Vec::new();
    for (i, sim) in sims.iter().enumerate() {
        sim.validate()?;
        let key = sim.mesh_key();
        let offsets = match meshes.iter().find(|m| m.0 == key) {
            Some(m) => m.1,
            None => {
                let offsets = append_mesh(&mut mesh, sim)?;
                meshes.push((key, offsets));
                offsets
            }
        };
        let track_offset = if sim.record_track {
            let offset = track_len;
            track_len += sim.frames() as usize * sim.marker_arc_lengths_m.len();
            offset as u32
        } else {
            NO_TRACK
        };
        let pin_force_offset = if sim.record_pin_force {
            track_len += sim.frames() as usize;
            (track_len - sim.frames() as usize) as u32
        } else {
            NO_TRACK
        };
        controls.push(sim.control(offsets, [track_offset, pin_force_offset], frame_steps.len()));
        frame_steps.extend(sim.frames.iter().map(|f| f.step as u32));
        frame_back_s.extend(sim.frames.iter().map(|f| f.back_s));
        physics.push(sim.physics());
        let planes = sim.initial_planes();
        for (plane, values) in planes.iter().enumerate() {
            for (node, v) in values.chunks(NODE_DOFS).enumerate() {
                state[(plane * node_slots + node) * count + i] = [v[0], v[1], v[2], v[3]];
            }
        }
    }
    Ok(ChunkData {
        node_slots,
        controls,
        physics,
        mesh,
        state,
        track_len,
        frame_steps,
        frame_back_s,
    })
}

/// Where a simulation's mesh lies in the mesh buffer \[vec4\].
#[derive(Debug, Clone, Copy)]
struct MeshOffsets {
    mass: u32,
    markers: u32,
    path: u32,
}

/// Appends `sim`'s mesh to `mesh`: its mass factors (MeshMass), the
/// explicit scheme's G and E per node, its marker table, and its pin
/// path's cubics (relative to the reference pin).
fn append_mesh(mesh: &mut Vec<[f64; 4]>, sim: &GpuSimulation) -> Result<MeshOffsets, GpuError> {
    let tether = Tether::new(sim.params.clone()).map_err(GpuError::Input)?;
    let mass_offset = mesh.len() as u32;
    let compact = MeshMass::from_mass(tether.mass(), sim.params.elements)?;
    mesh.extend(compact.vec4s());
    let factors_vec4 = match sim.scheme {
        FixedStepScheme::Explicit => {
            // G and E; the coupling to the previous node is the
            // MeshMass coupling transposed.
            for f in mass_factor::factor(tether.mass(), sim.params.elements)? {
                for m in [&f.inverse_pivot, &f.coupling_next] {
                    mesh.extend(m.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]));
                }
            }
            FACTOR_VEC4_PER_NODE * (sim.params.elements + 1)
        }
        FixedStepScheme::SemiImplicit => 0,
    };
    debug_assert_eq!(
        mesh.len() - mass_offset as usize,
        MESH_MASS_VEC4 + factors_vec4
    );
    let marker_offset = mesh.len() as u32;
    let le = sim.params.element_length_m();
    for &s in &sim.marker_arc_lengths_m {
        let (element, xi) = tether.locate(s);
        let sh = shape(xi, le);
        mesh.push(sh);
        mesh.push([s, element as f64, 0.0, 0.0]);
    }
    let path_offset = mesh.len() as u32;
    if let PinDrive::Path(path) = &sim.drive {
        for cubic in &path.cubics {
            for (k, c) in cubic.iter().enumerate() {
                mesh.push([c[0] - sim.pin_m[k], c[1], c[2], c[3]]);
            }
        }
    }
    Ok(MeshOffsets {
        mass: mass_offset,
        markers: marker_offset,
        path: path_offset,
    })
}

impl GpuSimulation {
    /// Its row of the control table, with its offsets into the mesh, the
    /// track (its markers', its pin force's) and the frames.
    fn control(
        &self,
        offsets: MeshOffsets,
        [track_offset, pin_force_offset]: [u32; 2],
        frame_offset: usize,
    ) -> SimControl {
        SimControl {
            elements: self.params.elements as u32,
            mass_offset: offsets.mass,
            marker_offset: offsets.markers,
            markers: self.marker_arc_lengths_m.len() as u32,
            total_steps: self.total_steps as u32,
            steps_per_sample: self.steps_per_sample as u32,
            frames: self.frames.len() as u32,
            winch_moves: match &self.drive {
                PinDrive::Fixed | PinDrive::Path(_) => 0,
                PinDrive::Winch { periods_s, .. } => periods_s.len() as u32,
            },
            track_offset,
            measured_offset: if self.compare_measured {
                (self.measured_first_frame * self.marker_arc_lengths_m.len()) as u32
            } else {
                NO_TRACK
            },
            steps_per_fold: STEPS_PER_FOLD,
            frame_offset: frame_offset as u32,
            pin_force_offset,
            path_offset: offsets.path,
            path_segments: match &self.drive {
                PinDrive::Path(path) => path.cubics.len() as u32,
                PinDrive::Fixed | PinDrive::Winch { .. } => 0,
            },
        }
    }
}

impl GpuSimulation {
    /// The initial state planes: displacement from the reference shape,
    /// its compensation (zero), velocity and acceleration.
    fn initial_planes(&self) -> [Vec<f64>; STATE_PLANES] {
        let reference = self.reference_q();
        [
            self.initial_q
                .iter()
                .zip(&reference)
                .map(|(q, r)| q - r)
                .collect::<Vec<_>>(),
            vec![0.0; self.initial_q.len()],
            self.initial_v.clone(),
            self.initial_a.clone(),
        ]
    }
}

/// Loop iterations the step shader is charged per step of a simulation with
/// n elements: the drift/force/forward loop and the back loop over n + 1
/// nodes each, plus the step loop, plus the loop over a step's frames.
/// Measured on lavapipe (Mesa 22.3): a step is charged exactly 2n + 8, i.e.
/// every loop's final exit check counts as an iteration, the step loop
/// counts twice, and so does the frame loop, although a step enters it only
/// when a frame falls in it (2n + 6 before there was one; `tests/gpu.rs`
/// finds where an undivided dispatch stops).
pub fn loop_iterations_per_step(elements: usize) -> u64 {
    2 * (elements as u64 + 2) + 4
}

/// Loop iterations the workgroup layout charges its busiest lane per step
/// beyond [`loop_iterations_per_step`] (whose two node loops are that
/// lane's forward and back substitution): the node loops of the drift and
/// the velocity update, the two element passes and the loop over them, each
/// loop with its exit check.
pub fn workgroup_extra_iterations_per_step(elements: usize, lanes: u32) -> u64 {
    let lanes = lanes.max(1) as u64;
    let nodes = (elements as u64 + 1).div_ceil(lanes) + 1;
    let pass = (elements as u64).div_ceil(2).div_ceil(lanes) + 1;
    2 * nodes + 2 * pass + 3
}

/// Loop iterations charged for one frame: its marker loop, and its turn
/// of the loop over the frames of a step.
pub fn loop_iterations_per_frame(markers: usize) -> u64 {
    markers as u64 + 4
}

/// Loop iterations charged for one fold of the drift into the displacement
/// (a loop over the n + 1 nodes).
pub fn loop_iterations_per_fold(elements: usize) -> u64 {
    elements as u64 + 2
}

/// The most steps one dispatch may take so that no invocation exceeds
/// `budget` loop iterations: steps · (per_step + `extra_per_step`, the
/// workgroup layout's) + frames · per_frame + folds · per_fold ≤ budget.
/// Frame steps are at least `frame_spacing.0` steps apart and hold at most
/// `frame_spacing.1` frames each ([`GpuSimulation::frame_spacing`]), so
/// `steps` steps hold at most (⌊steps / spacing⌋ + 1) · most frames; a
/// fold falls every sample and every STEPS_PER_FOLD steps.
pub fn steps_per_dispatch(
    max_elements: usize,
    max_markers: usize,
    frame_spacing: (u64, u64),
    min_steps_per_sample: u64,
    extra_per_step: u64,
    budget: u64,
) -> u32 {
    let (spacing, most) = frame_spacing;
    let per_frame = loop_iterations_per_frame(max_markers);
    let per_fold = loop_iterations_per_fold(max_elements);
    let folds_per_step = 1.0 / STEPS_PER_FOLD as f64 + 1.0 / min_steps_per_sample.max(1) as f64;
    let per_step = (loop_iterations_per_step(max_elements) + extra_per_step) as f64
        + (most * per_frame) as f64 / spacing.max(1) as f64
        + per_fold as f64 * folds_per_step;
    // Loading and storing the state (one loop over the nodes each), and a
    // step's frames and two folds that the rates above may round away.
    let per_dispatch = most * per_frame + 2 * per_fold + 2 * (max_elements as u64 + 2);
    let room = budget.saturating_sub(per_dispatch) as f64;
    ((room / per_step).floor() as u64).clamp(1, u32::MAX as u64) as u32
}
