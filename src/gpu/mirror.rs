//! The CPU mirror of the "step" pipeline stage: `shaders/step.wgsl`,
//! `element.wgsl` and `motion.wgsl` transcribed operation for operation into
//! Rust, generic over the shader's `real` (f32 or f64), reading the very
//! arrays the engine uploads ([`chunk_data`]).
//!
//! Why it exists: the GPU and the CPU explicit solver share a scheme but not
//! a formulation (displacement form, block factors, f32), so a difference
//! between them could be the shader's code or its precision. The mirror runs
//! the shader's formulation on the CPU, where each can be checked apart:
//! mirror f64 against the CPU explicit solver (the formulation), mirror
//! against the GPU in the same precision (the WGSL and its upload), and
//! mirror f32 against mirror f64 (rounding alone, with IEEE arithmetic the
//! CPU guarantees and a shader compiler need not). Kept beside the shaders as
//! vello keeps `src/cpu/`; a change to a shader's arithmetic belongs here too.
//!
//! Not a fast path: one thread per simulation, no SIMD.

use nalgebra::{Matrix4, RealField, Vector2, Vector4};
use rayon::prelude::*;

use super::batch::{ChunkData, GpuOutcome, GpuSimulation, OutcomeStatus, chunk_data};
use super::layout::{
    FACTOR_VEC4_PER_NODE, FixedStepScheme, MESH_MASS_VEC4, NO_TRACK, Real, SimControl, SimPhysics,
};

use super::{GpuError, Precision};

/// The arithmetic a shader's `real` offers, on the CPU.
pub trait MirrorReal: Real + RealField + Copy {}
impl MirrorReal for f32 {}
impl MirrorReal for f64 {}

fn lit<R: MirrorReal>(x: f64) -> R {
    <R as Real>::from_f64(x)
}

/// An uploaded vec4 in the shader's precision.
fn lit4<R: MirrorReal>(v: &[f64; 4]) -> Vector4<R> {
    Vector4::new(lit(v[0]), lit(v[1]), lit(v[2]), lit(v[3]))
}

/// Runs `sims` on the mirror in `precision`, with the engine's inputs and
/// outputs: the same [`GpuOutcome`]s the engine would read back.
pub fn run_batch(
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

fn convert_measured<R: MirrorReal>(measured: Option<&[[f64; 2]]>) -> Vec<Vector2<R>> {
    measured
        .unwrap_or(&[])
        .iter()
        .map(|p| Vector2::new(lit(p[0]), lit(p[1])))
        .collect()
}

/// element.wgsl's `Section`.
#[derive(Clone, Copy)]
struct Section<R> {
    axial_stiffness: R,
    axial_damping: R,
    bending_stiffness: R,
    bending_damping: R,
}

/// element.wgsl's `ElementForce`: the contributions to nodes a and b.
struct ElementForce<R: MirrorReal> {
    a: Vector4<R>,
    b: Vector4<R>,
}

/// element.wgsl's `ElementState`: displacements, and the velocities of the
/// material damping and of the drag.
struct ElementState<R: MirrorReal> {
    ua: Vector4<R>,
    ub: Vector4<R>,
    damped_va: Vector4<R>,
    damped_vb: Vector4<R>,
    drag_va: Vector4<R>,
    drag_vb: Vector4<R>,
}

/// element.wgsl's `ElementDamping`: blocks (a, a), (a, b), (b, b) of
/// scale · C_D.
struct ElementDamping<R: MirrorReal> {
    aa: Symmetric4<R>,
    ab: Matrix4<R>,
    bb: Symmetric4<R>,
}

impl<R: MirrorReal> ElementDamping<R> {
    fn zeros() -> Self {
        Self {
            aa: Symmetric4::zeros(),
            ab: Matrix4::zeros(),
            bb: Symmetric4::zeros(),
        }
    }
}

/// matrix.wgsl's `Symmetric4`: the diagonal, then (0,1), (0,2), (0,3),
/// (1,2), then (1,3), (2,3).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Symmetric4<R: MirrorReal> {
    diagonal: Vector4<R>,
    upper: Vector4<R>,
    upper_rest: Vector2<R>,
}

impl<R: MirrorReal> Symmetric4<R> {
    fn zeros() -> Self {
        Self {
            diagonal: Vector4::zeros(),
            upper: Vector4::zeros(),
            upper_rest: Vector2::zeros(),
        }
    }

    /// matrix.wgsl's `symmetric_outer_pair`: w uᵀ + x vᵀ on and above the
    /// diagonal.
    fn outer_pair(w: &Vector4<R>, u: &Vector4<R>, x: &Vector4<R>, v: &Vector4<R>) -> Self {
        let pick = |a: &Vector4<R>, i: [usize; 4]| Vector4::new(a[i[0]], a[i[1]], a[i[2]], a[i[3]]);
        let (rows, cols) = ([0, 0, 0, 1], [1, 2, 3, 2]);
        Self {
            diagonal: w.component_mul(u) + x.component_mul(v),
            upper: pick(w, rows).component_mul(&pick(u, cols))
                + pick(x, rows).component_mul(&pick(v, cols)),
            upper_rest: Vector2::new(w.y, w.z).component_mul(&Vector2::new(u.w, u.w))
                + Vector2::new(x.y, x.z).component_mul(&Vector2::new(v.w, v.w)),
        }
    }

    /// matrix.wgsl's `symmetric_sum`.
    fn sum(&self, other: &Self) -> Self {
        Self {
            diagonal: self.diagonal + other.diagonal,
            upper: self.upper + other.upper,
            upper_rest: self.upper_rest + other.upper_rest,
        }
    }

    /// matrix.wgsl's `symmetric_full`.
    fn full(&self) -> Matrix4<R> {
        let (d, u, r) = (&self.diagonal, &self.upper, &self.upper_rest);
        Matrix4::from_columns(&[
            Vector4::new(d.x, u.x, u.y, u.z),
            Vector4::new(u.x, d.y, u.w, r.x),
            Vector4::new(u.y, u.w, d.z, r.y),
            Vector4::new(u.z, r.x, r.y, d.w),
        ])
    }
}

/// matrix.wgsl's `outer4`.
fn outer4<R: MirrorReal>(u: &Vector4<R>, v: &Vector4<R>) -> Matrix4<R> {
    Matrix4::from_columns(&[u * v.x, u * v.y, u * v.z, u * v.w])
}

/// matrix.wgsl's `inverse4`: cofactors through the 2×2 minors, in the
/// shader's order.
pub fn inverse4<R: MirrorReal>(m: &Matrix4<R>) -> Matrix4<R> {
    let a = |r: usize, c: usize| m[(r, c)];
    let (a00, a01, a02, a03) = (a(0, 0), a(0, 1), a(0, 2), a(0, 3));
    let (a10, a11, a12, a13) = (a(1, 0), a(1, 1), a(1, 2), a(1, 3));
    let (a20, a21, a22, a23) = (a(2, 0), a(2, 1), a(2, 2), a(2, 3));
    let (a30, a31, a32, a33) = (a(3, 0), a(3, 1), a(3, 2), a(3, 3));
    let s0 = a00 * a11 - a10 * a01;
    let s1 = a00 * a12 - a10 * a02;
    let s2 = a00 * a13 - a10 * a03;
    let s3 = a01 * a12 - a11 * a02;
    let s4 = a01 * a13 - a11 * a03;
    let s5 = a02 * a13 - a12 * a03;
    let c5 = a22 * a33 - a32 * a23;
    let c4 = a21 * a33 - a31 * a23;
    let c3 = a21 * a32 - a31 * a22;
    let c2 = a20 * a33 - a30 * a23;
    let c1 = a20 * a32 - a30 * a22;
    let c0 = a20 * a31 - a30 * a21;
    let det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
    let r = lit::<R>(1.0) / det;
    let columns = [
        Vector4::new(
            (a11 * c5 - a12 * c4 + a13 * c3) * r,
            (-a10 * c5 + a12 * c2 - a13 * c1) * r,
            (a10 * c4 - a11 * c2 + a13 * c0) * r,
            (-a10 * c3 + a11 * c1 - a12 * c0) * r,
        ),
        Vector4::new(
            (-a01 * c5 + a02 * c4 - a03 * c3) * r,
            (a00 * c5 - a02 * c2 + a03 * c1) * r,
            (-a00 * c4 + a01 * c2 - a03 * c0) * r,
            (a00 * c3 - a01 * c1 + a02 * c0) * r,
        ),
        Vector4::new(
            (a31 * s5 - a32 * s4 + a33 * s3) * r,
            (-a30 * s5 + a32 * s2 - a33 * s1) * r,
            (a30 * s4 - a31 * s2 + a33 * s0) * r,
            (-a30 * s3 + a31 * s1 - a32 * s0) * r,
        ),
        Vector4::new(
            (-a21 * s5 + a22 * s4 - a23 * s3) * r,
            (a20 * s5 - a22 * s2 + a23 * s1) * r,
            (-a20 * s4 + a21 * s2 - a23 * s0) * r,
            (a20 * s3 - a21 * s1 + a22 * s0) * r,
        ),
    ];
    Matrix4::from_columns(&columns)
}

fn cross2<R: MirrorReal>(p: Vector2<R>, q: Vector2<R>) -> R {
    p.x * q.y - p.y * q.x
}

fn xy<R: MirrorReal>(v: &Vector4<R>) -> Vector2<R> {
    Vector2::new(v.x, v.y)
}

fn zw<R: MirrorReal>(v: &Vector4<R>) -> Vector2<R> {
    Vector2::new(v.z, v.w)
}

fn join<R: MirrorReal>(p: Vector2<R>, q: Vector2<R>) -> Vector4<R> {
    Vector4::new(p.x, p.y, q.x, q.y)
}

/// Σ_i s_i (a.xy, a.zw, b.xy, b.zw)_i, in the shader's order.
fn combine<R: MirrorReal>(s: &Vector4<R>, a: &Vector4<R>, b: &Vector4<R>) -> Vector2<R> {
    xy(a) * s.x + zw(a) * s.y + xy(b) * s.z + zw(b) * s.w
}

/// element.wgsl's `add_gauss_point`; `damping` is its SEMI_IMPLICIT part
/// (the blocks, and the scale).
#[allow(clippy::too_many_arguments)]
fn add_gauss_point<R: MirrorReal>(
    f: &mut ElementForce<R>,
    damping: Option<(&mut ElementDamping<R>, R)>,
    xi: R,
    weight: R,
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    s: &ElementState<R>,
) {
    let (ua, ub, va, vb) = (&s.ua, &s.ub, &s.damped_va, &s.damped_vb);
    let (one, two, three, four, six, twelve) = (
        lit::<R>(1.0),
        lit::<R>(2.0),
        lit::<R>(3.0),
        lit::<R>(4.0),
        lit::<R>(6.0),
        lit::<R>(12.0),
    );
    let inv_le = one / le;
    let x2 = xi * xi;
    let sx = Vector4::new(
        (six * x2 - six * xi) * inv_le,
        one - four * xi + three * x2,
        (six * xi - six * x2) * inv_le,
        three * x2 - two * xi,
    );
    let sxx = Vector4::new(
        (twelve * xi - six) * inv_le * inv_le,
        (six * xi - four) * inv_le,
        (six - twelve * xi) * inv_le * inv_le,
        (six * xi - two) * inv_le,
    );
    let ux = combine(&sx, ua, ub);
    let c = combine(&sxx, ua, ub);
    let pd = combine(&sx, va, vb);
    let cd = combine(&sxx, va, vb);
    let p = t0 + ux;
    let g_minus_1 = two * t0.dot(&ux) + ux.dot(&ux);
    let g = one + g_minus_1;
    let stretch = g.sqrt();
    let strain = g_minus_1 / (stretch + one);
    let strain_p = p / stretch;
    let z = cross2(p, c);
    let inv_g = one / g;
    let curvature = z * inv_g;
    let curvature_p = (Vector2::new(c.y, -c.x) - p * (two * curvature)) * inv_g;
    let curvature_c = Vector2::new(-p.y, p.x) * inv_g;
    let strain_rate = strain_p.dot(&pd);
    let curvature_rate = curvature_p.dot(&pd) + curvature_c.dot(&cd);
    let axial = sec.axial_stiffness * strain + sec.axial_damping * strain_rate;
    let moment = sec.bending_stiffness * curvature + sec.bending_damping * curvature_rate;
    let wl = weight * le;
    let fp = (strain_p * axial + curvature_p * moment) * wl;
    let fc = curvature_c * (wl * moment);
    f.a -= join(fp * sx.x + fc * sxx.x, fp * sx.y + fc * sxx.y);
    f.b -= join(fp * sx.z + fc * sxx.z, fp * sx.w + fc * sxx.w);
    if let Some((d, scale)) = damping {
        let ea = join(strain_p * sx.x, strain_p * sx.y);
        let eb = join(strain_p * sx.z, strain_p * sx.w);
        let ka = join(
            curvature_p * sx.x + curvature_c * sxx.x,
            curvature_p * sx.y + curvature_c * sxx.y,
        );
        let kb = join(
            curvature_p * sx.z + curvature_c * sxx.z,
            curvature_p * sx.w + curvature_c * sxx.w,
        );
        let axial_weight = scale * wl * sec.axial_damping;
        let bending_weight = scale * wl * sec.bending_damping;
        let (ea_w, eb_w) = (ea * axial_weight, eb * axial_weight);
        let (ka_w, kb_w) = (ka * bending_weight, kb * bending_weight);
        d.aa = d.aa.sum(&Symmetric4::outer_pair(&ea_w, &ea, &ka_w, &ka));
        d.ab += outer4(&ea_w, &eb) + outer4(&ka_w, &kb);
        d.bb = d.bb.sum(&Symmetric4::outer_pair(&eb_w, &eb, &kb_w, &kb));
    }
}

/// The five-point Gauss–Legendre rule of element.wgsl (GAUSS_XI and
/// GAUSS_WEIGHTS of the model).
const GAUSS: [(f64, f64); 5] = [
    (0.046910077030668004, 0.11846344252809454),
    (0.23076534494715845, 0.23931433524968324),
    (0.5, 0.28444444444444444),
    (0.7692346550528416, 0.23931433524968324),
    (0.953089922969332, 0.11846344252809454),
];

/// element.wgsl's `element_force`; `damping` as in [`add_gauss_point`].
#[allow(clippy::too_many_arguments)]
fn element_force<R: MirrorReal>(
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    weight_per_length: R,
    drag_factor: R,
    s: &ElementState<R>,
    mut damping: Option<(&mut ElementDamping<R>, R)>,
) -> ElementForce<R> {
    let (ua, ub, va, vb) = (&s.ua, &s.ub, &s.drag_va, &s.drag_vb);
    let zero = lit::<R>(0.0);
    let half = lit::<R>(0.5);
    let twelve = lit::<R>(12.0);
    let wg = weight_per_length * le;
    let mut f = ElementForce {
        a: Vector4::new(zero, -half * wg, zero, -wg * le / twelve),
        b: Vector4::new(zero, -half * wg, zero, wg * le / twelve),
    };
    for (xi, weight) in GAUSS {
        let d = damping.as_mut().map(|(d, scale)| (&mut **d, *scale));
        add_gauss_point(&mut f, d, lit(xi), lit(weight), le, t0, sec, s);
    }
    let chord = t0 * le + xy(ub) - xy(ua);
    let vmean = (xy(va) + xy(vb)) * half;
    let fx = -drag_factor * chord.y.abs() * vmean.x * vmean.x.abs();
    let fy = -drag_factor * chord.x.abs() * vmean.y * vmean.y.abs();
    let fd = Vector2::new(fx, fy);
    f.a += join(fd * half, fd * (le / twelve));
    f.b += join(fd * half, fd * (-le / twelve));
    f
}

/// motion.wgsl's `PinState`.
struct PinState<R: MirrorReal> {
    position: Vector2<R>,
    velocity: Vector2<R>,
    acceleration: Vector2<R>,
}

/// motion.wgsl's `cos_sin_half_turn`: (cos θ, sin θ) from the Taylor series
/// about π/2, with the shader's coefficients and Horner order.
fn cos_sin_half_turn<R: MirrorReal>(theta: R) -> Vector2<R> {
    let x = theta - lit::<R>(0.5) * lit::<R>(std::f64::consts::PI);
    let x2 = x * x;
    let horner = |coefficients: &[f64]| {
        let mut acc = lit::<R>(coefficients[0]);
        for &c in &coefficients[1..] {
            acc = lit::<R>(c) - x2 * acc;
        }
        acc
    };
    let sin_x = x * horner(&[
        1.0 / 121645100408832000.0,
        1.0 / 355687428096000.0,
        1.0 / 1307674368000.0,
        1.0 / 6227020800.0,
        1.0 / 39916800.0,
        1.0 / 362880.0,
        1.0 / 5040.0,
        1.0 / 120.0,
        1.0 / 6.0,
        1.0,
    ]);
    let cos_x = horner(&[
        1.0 / 2432902008176640000.0,
        1.0 / 6402373705728000.0,
        1.0 / 20922789888000.0,
        1.0 / 87178291200.0,
        1.0 / 479001600.0,
        1.0 / 3628800.0,
        1.0 / 40320.0,
        1.0 / 720.0,
        1.0 / 24.0,
        0.5,
        1.0,
    ]);
    Vector2::new(-sin_x, cos_x)
}

/// motion.wgsl's `pin_state`: the pin's displacement from its first
/// waypoint at time t.
fn pin_state<R: MirrorReal>(t: R, moves: u32, waypoints: &[R; 5], periods: &[R; 4]) -> PinState<R> {
    let zero = lit::<R>(0.0);
    let mut out = PinState {
        position: Vector2::zeros(),
        velocity: Vector2::zeros(),
        acceleration: Vector2::zeros(),
    };
    if moves == 0 {
        return out;
    }
    // The shader's running sums of periods, in its order.
    let ends = [
        periods[0],
        periods[0] + periods[1],
        periods[0] + periods[1] + periods[2],
        periods[0] + periods[1] + periods[2] + periods[3],
    ];
    let current = (0..moves.min(4) as usize).find(|&i| t < ends[i]);
    match current {
        Some(i) if t >= zero => {
            let start = if i == 0 { zero } else { ends[i - 1] };
            let (from_x, to_x, period) = (waypoints[i], waypoints[i + 1], periods[i]);
            let rate = lit::<R>(std::f64::consts::PI) / period;
            let cs = cos_sin_half_turn(rate * (t - start));
            let half_span = lit::<R>(0.5) * (to_x - from_x);
            out.position = Vector2::new(
                from_x - waypoints[0] + half_span * (lit::<R>(1.0) - cs.x),
                zero,
            );
            out.velocity = Vector2::new(half_span * rate * cs.y, zero);
            out.acceleration = Vector2::new(half_span * rate * rate * cs.x, zero);
        }
        None if t >= zero => {
            out.position = Vector2::new(waypoints[moves as usize] - waypoints[0], zero);
        }
        _ => {}
    }
    out
}

/// step.wgsl's `exploded_position`.
fn exploded_position<R: MirrorReal>(u: &Vector4<R>, length_m: R) -> bool {
    let limit = lit::<R>(100.0) * length_m;
    let hundred = lit::<R>(100.0);
    !(u.x.abs() < limit && u.y.abs() < limit && u.z.abs() < hundred && u.w.abs() < hundred)
}

/// step.wgsl's `exploded_velocity`.
fn exploded_velocity<R: MirrorReal>(v: &Vector4<R>) -> bool {
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

/// step.wgsl's `coupling_transpose_times`: (kᵀ ⊗ I₂) v.
fn coupling_transpose_times<R: MirrorReal>(k: &Vector4<R>, v: &Vector4<R>) -> Vector4<R> {
    join(xy(v) * k.x + zw(v) * k.z, xy(v) * k.y + zw(v) * k.w)
}

/// The mesh's mass matrix (step.wgsl's `mesh_mass`): first, interior and
/// last diagonal and the coupling, each a row-major 2×2.
fn mesh_mass<R: MirrorReal>(mesh: &[[f64; 4]], c: &SimControl) -> [Vector4<R>; MESH_MASS_VEC4] {
    std::array::from_fn(|i| lit4(&mesh[c.mass_offset as usize + i]))
}

/// step.wgsl's `plus_node_mass`: m + k ⊗ I₂, only the eight nonzero entries
/// added.
fn plus_node_mass<R: MirrorReal>(m: &Matrix4<R>, k: &Vector4<R>) -> Matrix4<R> {
    let mut out = *m;
    for c in 0..2 {
        out[(c, c)] += k.x;
        out[(c, 2 + c)] += k.y;
        out[(2 + c, c)] += k.z;
        out[(2 + c, 2 + c)] += k.w;
    }
    out
}

/// step.wgsl's `pin_rows_pivot` and `pin_rows_coupling`: rows 0 and 1 of
/// node 0's blocks made identity and zero rows.
fn pin_rows<R: MirrorReal>(m: &Matrix4<R>, identity: bool) -> Matrix4<R> {
    let mut out = *m;
    for r in 0..2 {
        for col in 0..4 {
            out[(r, col)] = if identity && r == col {
                lit(1.0)
            } else {
                lit(0.0)
            };
        }
    }
    out
}

/// One simulation from its upload (a chunk of one) to its outcome, as the
/// shader advances it; the dispatch split is left out, since loading and
/// storing the state in the same precision changes no value.
fn run_one<R: MirrorReal>(
    sim: &GpuSimulation,
    data: &ChunkData,
    measured: &[Vector2<R>],
) -> GpuOutcome {
    let c = &data.controls[0];
    let ph: SimPhysics<R> = data.physics[0].convert();
    let n = c.elements as usize;
    let slots = data.node_slots;
    let plane = |p: usize| -> Vec<Vector4<R>> {
        (0..=n).map(|k| lit4(&data.state[p * slots + k])).collect()
    };
    let (mut disp, mut drift, mut vel, mut acc) = (plane(0), plane(1), plane(2), plane(3));
    let semi_implicit = sim.scheme == FixedStepScheme::SemiImplicit;
    let factors: Vec<[Matrix4<R>; 2]> = if semi_implicit {
        Vec::new()
    } else {
        (0..=n).map(|k| node_factors(&data.mesh, c, k)).collect()
    };
    let [mass_first, mass_interior, mass_last, mass_coupling] = mesh_mass(&data.mesh, c);
    // The E blocks of nodes 0..n−1; the tip's is never needed
    // (COUPLING_NODES = MAX_NODES − 1 in coupling_private.wgsl).
    let mut coupling: Vec<Matrix4<R>> = vec![Matrix4::zeros(); n];
    let markers: Vec<(Vector4<R>, R, usize)> = (0..c.markers as usize)
        .map(|m| {
            let shapes = data.mesh[c.marker_offset as usize + 2 * m];
            let place = data.mesh[c.marker_offset as usize + 2 * m + 1];
            (lit4(&shapes), lit(place[0]), place[1] as usize)
        })
        .collect();

    let h = ph.step_s;
    let half = lit::<R>(0.5) * h;
    let le = ph.element_length_m;
    let t0 = Vector2::new(ph.tangent_x, ph.tangent_y);
    let pin0 = Vector2::new(ph.pin_x_m, ph.pin_y_m);
    let sec = Section {
        axial_stiffness: ph.axial_stiffness_n,
        axial_damping: ph.axial_damping_n_s,
        bending_stiffness: ph.bending_stiffness_n_m2,
        bending_damping: ph.bending_damping_n_m2_s,
    };
    let steps_per_frame = c.steps_per_sample * c.samples_per_frame;
    let mut identification_error: R = lit(0.0);
    let mut swingup_min: R = lit(sim.initial_swingup_m);
    let mut swingup_time: R = lit(0.0);
    let mut track: Vec<[f64; 2]> = Vec::new();
    let mut steps_done = 0u32;
    let mut diverged = false;

    while steps_done < c.total_steps && !diverged {
        let steps = steps_done + 1;
        let t = lit::<R>(steps as f64) * h;
        let pin = pin_state(t, c.winch_moves, &ph.waypoints_m, &ph.periods_s);

        let mut u_prev = Vector4::zeros();
        let mut v_prev = Vector4::zeros();
        let mut damped_prev = Vector4::zeros();
        let mut f_prev = Vector4::zeros();
        let mut y_prev = Vector4::zeros();
        let mut damping_prev = Symmetric4::zeros();
        let mut upper_prev = Matrix4::zeros();
        let mut e_prev = Matrix4::zeros();
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
                let state = ElementState {
                    ua: u_prev,
                    ub: u,
                    damped_va: damped_prev,
                    damped_vb: damped,
                    drag_va: v_prev,
                    drag_vb: v_pred,
                };
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
                    let mut pivot =
                        plus_node_mass(&damping_prev.sum(&dmp.aa).full(), mass_diagonal);
                    let upper = plus_node_mass(&dmp.ab, &mass_coupling);
                    let mut upper_rows = upper;
                    if node == 0 {
                        pivot = pin_rows(&pivot, true);
                        upper_rows = pin_rows(&upper, false);
                    }
                    let lower = upper_prev.transpose();
                    let g = inverse4(&(pivot - lower * e_prev));
                    let y = g * (f_prev - lower * y_prev);
                    e_prev = g * upper_rows;
                    coupling[node] = e_prev;
                    upper_prev = upper;
                    damping_prev = dmp.bb;
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
            let lower = upper_prev.transpose();
            let g = inverse4(&(plus_node_mass(&damping_prev.full(), &mass_last) - lower * e_prev));
            g * (f_prev - lower * y_prev)
        } else {
            let [g, _] = &factors[n];
            g * (f_prev - coupling_transpose_times(&mass_coupling, &y_prev))
        };

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
        steps_done = steps;
        if diverged {
            break;
        }

        let sample = steps % c.steps_per_sample == 0;
        if sample || steps % c.steps_per_fold == 0 {
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
        if steps % steps_per_frame == 0 {
            let frame = (steps / steps_per_frame) as usize;
            let mut error: R = lit(0.0);
            for (m, (shapes, arc, element)) in markers.iter().enumerate() {
                let (ua, ub) = (&disp[*element], &disp[*element + 1]);
                let displacement = combine(shapes, ua, ub);
                let position = pin0 + t0 * *arc + displacement;
                let index = (frame - 1) * markers.len() + m;
                if c.compare_measured == 1 {
                    let d = measured[index] - position;
                    error += d.dot(&d);
                }
                if c.track_offset != NO_TRACK {
                    track.push([position.x.to_f64(), position.y.to_f64()]);
                }
            }
            identification_error += error;
        }
    }
    let status = if diverged {
        OutcomeStatus::Diverged {
            time_s: steps_done as f64 * sim.step_s,
        }
    } else {
        OutcomeStatus::Completed
    };
    GpuOutcome {
        status,
        steps: steps_done as u64,
        identification_error_m2: identification_error.to_f64(),
        swingup_min_m: swingup_min.to_f64(),
        swingup_time_s: swingup_time.to_f64(),
        track_m: (sim.record_track && status == OutcomeStatus::Completed).then_some(track),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse4_inverts_pivots_of_every_scale() {
        // A mass-like block (positions ~1, slopes ~l_e²) and a pin block
        // with identity rows; the shader's cofactor formula against LU.
        let le = 0.012f64;
        let scale = Vector4::new(1.0, 1.0, le, le);
        let base = Matrix4::new(
            4.0, 0.3, 0.5, -0.2, 0.3, 5.0, 0.1, 0.4, 0.5, 0.1, 3.0, 0.2, -0.2, 0.4, 0.2, 6.0,
        );
        let scaled = Matrix4::from_fn(|r, c| base[(r, c)] * scale[r] * scale[c]);
        let pinned = pin_rows(&scaled, true);
        for m in [base, scaled, pinned] {
            let want = m.try_inverse().unwrap();
            let got = inverse4(&m);
            let error = (got - want).abs().max() / want.abs().max();
            assert!(error < 1e-13, "{error:e}");
            assert!((got * m - Matrix4::identity()).abs().max() < 1e-12);
        }
    }

    #[test]
    fn outer4_is_u_v_transposed() {
        let u = Vector4::new(1.0, 2.0, 3.0, 4.0);
        let v = Vector4::new(-1.0, 0.5, 2.0, 3.0);
        assert_eq!(outer4(&u, &v), u * v.transpose());
    }

    #[test]
    fn symmetric_blocks_hold_every_entry_of_a_weighted_gram_sum() {
        // (α u uᵀ + β v vᵀ) twice accumulated, as two Gauss points do, with
        // entries of both signs and scales; every entry, both triangles.
        let u = Vector4::new(0.7, -1.3, 0.02, -0.05);
        let v = Vector4::new(-2.0, 0.4, 0.11, 0.03);
        let (alpha, beta) = (3.5, 0.25);
        let pair = Symmetric4::outer_pair(&(u * alpha), &u, &(v * beta), &v);
        let got = pair.sum(&pair).full();
        let want = (u * u.transpose() * alpha + v * v.transpose() * beta) * 2.0;
        assert!(
            (got - want).abs().max() < 1e-15 * want.abs().max(),
            "{got} vs {want}"
        );
    }

    #[test]
    fn kronecker_block_helpers_match_the_full_blocks() {
        use super::super::mass_factor::MeshMass;
        let m = Matrix4::from_fn(|r, c| (r * 4 + c) as f64 - 7.5);
        let k = [2.0, -0.25, 0.5, 0.125];
        let got = plus_node_mass(&m, &Vector4::from(k));
        assert_eq!(got, m + MeshMass::block(&k));
        let v = Vector4::new(0.3, -1.1, 0.05, 2.0);
        let want = MeshMass::block(&k).transpose() * v;
        assert!(
            (coupling_transpose_times(&Vector4::from(k), &v) - want)
                .abs()
                .max()
                < 1e-15
        );
    }
}
