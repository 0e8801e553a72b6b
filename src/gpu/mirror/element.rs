//! element.wgsl: one ANCF element's gravity, internal and drag force in
//! displacement form, and for the semi-implicit scheme its damping blocks.

use nalgebra::{Matrix4, Vector2, Vector4};

use super::matrix::{Symmetric4, outer4};
use super::{MirrorReal, combine, join, lit, xy};

/// element.wgsl's `Section`.
#[derive(Clone, Copy)]
pub struct Section<R> {
    pub axial_stiffness: R,
    pub axial_damping: R,
    pub bending_stiffness: R,
    pub bending_damping: R,
}

/// element.wgsl's `ElementForce`: the contributions to nodes a and b.
pub struct ElementForce<R: MirrorReal> {
    pub a: Vector4<R>,
    pub b: Vector4<R>,
}

/// element.wgsl's `ElementState`: displacements, the velocities of the
/// material damping and of the drag, and where the stage compiles
/// SPLIT_STRAIN (the adaptive stage), the drifts since the last fold,
/// apart from the displacements (`drift_a`, `drift_b`; None where it does
/// not).
pub struct ElementState<R: MirrorReal> {
    pub ua: Vector4<R>,
    pub ub: Vector4<R>,
    pub damped_va: Vector4<R>,
    pub damped_vb: Vector4<R>,
    pub drag_va: Vector4<R>,
    pub drag_vb: Vector4<R>,
    pub drift: Option<(Vector4<R>, Vector4<R>)>,
}

impl<R: MirrorReal> ElementState<R> {
    /// A state whose displacements are whole, no drift apart: the
    /// fixed-step stages' (SPLIT_STRAIN false).
    pub fn whole(
        (ua, ub): (Vector4<R>, Vector4<R>),
        (damped_va, damped_vb): (Vector4<R>, Vector4<R>),
        (drag_va, drag_vb): (Vector4<R>, Vector4<R>),
    ) -> Self {
        Self {
            ua,
            ub,
            damped_va,
            damped_vb,
            drag_va,
            drag_vb,
            drift: None,
        }
    }
}

/// element.wgsl's `element_chord`.
pub fn element_chord<R: MirrorReal>(le: R, t0: Vector2<R>, s: &ElementState<R>) -> Vector2<R> {
    let mut chord = t0 * le + xy(&s.ub) - xy(&s.ua);
    if let Some((da, db)) = &s.drift {
        chord += xy(db) - xy(da);
    }
    chord
}

/// element.wgsl's `ElementDamping`: blocks (a, a), (a, b), (b, b) of
/// scale · C_D.
pub struct ElementDamping<R: MirrorReal> {
    pub aa: Symmetric4<R>,
    pub ab: Matrix4<R>,
    pub bb: Symmetric4<R>,
}

impl<R: MirrorReal> ElementDamping<R> {
    pub fn zeros() -> Self {
        Self {
            aa: Symmetric4::zeros(),
            ab: Matrix4::zeros(),
            bb: Symmetric4::zeros(),
        }
    }
}

fn cross2<R: MirrorReal>(p: Vector2<R>, q: Vector2<R>) -> R {
    p.x * q.y - p.y * q.x
}

/// element.wgsl's `PointKinematics`.
pub struct PointKinematics<R: MirrorReal> {
    pub sx: Vector4<R>,
    pub sxx: Vector4<R>,
    pub p: Vector2<R>,
    pub c: Vector2<R>,
    pub pd: Vector2<R>,
    pub cd: Vector2<R>,
    pub g: R,
    pub stretch: R,
    pub z: R,
    pub curvature: R,
    pub strain_p: Vector2<R>,
    pub curvature_p: Vector2<R>,
    pub curvature_c: Vector2<R>,
    pub axial: R,
    pub moment: R,
}

/// element.wgsl's `point_kinematics`.
pub fn point_kinematics<R: MirrorReal>(
    xi: R,
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    s: &ElementState<R>,
) -> PointKinematics<R> {
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
    let mut c = combine(&sxx, ua, ub);
    let pd = combine(&sx, va, vb);
    let cd = combine(&sxx, va, vb);
    let mut p = t0 + ux;
    let mut g_minus_1 = two * t0.dot(&ux) + ux.dot(&ux);
    if let Some((da, db)) = &s.drift {
        let dx = combine(&sx, da, db);
        c += combine(&sxx, da, db);
        g_minus_1 += two * p.dot(&dx) + dx.dot(&dx);
        p += dx;
    }
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
    PointKinematics {
        sx,
        sxx,
        p,
        c,
        pd,
        cd,
        g,
        stretch,
        z,
        curvature,
        strain_p,
        curvature_p,
        curvature_c,
        axial: sec.axial_stiffness * strain + sec.axial_damping * strain_rate,
        moment: sec.bending_stiffness * curvature + sec.bending_damping * curvature_rate,
    }
}

/// element.wgsl's `add_gauss_point`; `damping` is its SEMI_IMPLICIT part
/// (the blocks, and the scale).
#[allow(clippy::too_many_arguments)]
pub fn add_gauss_point<R: MirrorReal>(
    f: &mut ElementForce<R>,
    damping: Option<(&mut ElementDamping<R>, R)>,
    xi: R,
    weight: R,
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    s: &ElementState<R>,
) {
    let PointKinematics {
        sx,
        sxx,
        strain_p,
        curvature_p,
        curvature_c,
        axial,
        moment,
        ..
    } = point_kinematics(xi, le, t0, sec, s);
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
pub const GAUSS: [(f64, f64); 5] = [
    (0.046910077030668004, 0.11846344252809454),
    (0.23076534494715845, 0.23931433524968324),
    (0.5, 0.28444444444444444),
    (0.7692346550528416, 0.23931433524968324),
    (0.953089922969332, 0.11846344252809454),
];

/// element.wgsl's `element_force`; `damping` as in [`add_gauss_point`].
#[allow(clippy::too_many_arguments)]
pub fn element_force<R: MirrorReal>(
    le: R,
    t0: Vector2<R>,
    sec: Section<R>,
    weight_per_length: R,
    drag_factor: R,
    s: &ElementState<R>,
    mut damping: Option<(&mut ElementDamping<R>, R)>,
) -> ElementForce<R> {
    let (va, vb) = (&s.drag_va, &s.drag_vb);
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
    let chord = element_chord(le, t0, s);
    let vmean = (xy(va) + xy(vb)) * half;
    let fx = -drag_factor * chord.y.abs() * vmean.x * vmean.x.abs();
    let fy = -drag_factor * chord.x.abs() * vmean.y * vmean.y.abs();
    let fd = Vector2::new(fx, fy);
    f.a += join(fd * half, fd * (le / twelve));
    f.b += join(fd * half, fd * (-le / twelve));
    f
}

#[cfg(test)]
pub(super) mod tests {
    use rand_chacha::ChaCha8Rng;

    use super::super::kernel::{
        FunctionKernel, check_both_precisions, random_cases, reals, uniform,
    };
    use super::*;

    /// Inputs of one element, 36 reals: l_e, t0, the section, ρ a g, the
    /// drag factor, the damping scale h/2, the six state vectors, and a
    /// Gauss point (ξ, weight). Scales are the tether's (docs/model.md §1: E a ≈
    /// 376 N, E I ≈ 1.3e-4 N m²) widened, the damping up to D = 5000 Pa s;
    /// the element bent and stretched by random angles and strains, so that
    /// every term of the force counts.
    pub(in crate::gpu::mirror) fn random_element(rng: &mut ChaCha8Rng) -> Vec<f64> {
        let le = uniform(rng, 0.005, 0.1);
        let angle = uniform(rng, -3.1, 3.1);
        let t0 = [angle.cos(), angle.sin()];
        let direction = |rng: &mut ChaCha8Rng| {
            let bend = angle + uniform(rng, -0.4, 0.4);
            let stretch = 1.0 + uniform(rng, -2e-3, 2e-3);
            [stretch * bend.cos(), stretch * bend.sin()]
        };
        let (slope_a, slope_b, chord) = (direction(rng), direction(rng), direction(rng));
        let offset = [uniform(rng, -0.5, 0.5), uniform(rng, -0.5, 0.5)];
        let ua = [offset[0], offset[1], slope_a[0] - t0[0], slope_a[1] - t0[1]];
        let ub = [
            offset[0] + le * (chord[0] - t0[0]),
            offset[1] + le * (chord[1] - t0[1]),
            slope_b[0] - t0[0],
            slope_b[1] - t0[1],
        ];
        let area = 4e-5;
        let second_moment = 1.33e-11;
        let mut x = vec![
            le,
            t0[0],
            t0[1],
            area * uniform(rng, 1e6, 2e7),
            area * uniform(rng, 0.0, 5000.0),
            second_moment * uniform(rng, 1e6, 2e7),
            second_moment * uniform(rng, 0.0, 5000.0),
            uniform(rng, 0.1, 1.0),
            uniform(rng, 0.0, 0.05),
            uniform(rng, 1e-6, 1e-4),
        ];
        x.extend(ua);
        x.extend(ub);
        // A node's vec4 within ± `position` and ± `slope`.
        let node = |rng: &mut ChaCha8Rng, position: f64, slope: f64| {
            [
                uniform(rng, -position, position),
                uniform(rng, -position, position),
                uniform(rng, -slope, slope),
                uniform(rng, -slope, slope),
            ]
        };
        for _ in 0..4 {
            x.extend(node(rng, 2.0, 5.0));
        }
        x.extend([uniform(rng, 0.0, 1.0), uniform(rng, 0.05, 0.3)]);
        // The drifts since the last fold (SPLIT_STRAIN, which the test
        // kernels compile): up to a frame's travel.
        for _ in 0..2 {
            x.extend(node(rng, 0.05, 0.02));
        }
        x
    }

    /// Where `random_element`'s layout has the two drifts (`READ_ELEMENT`'s
    /// `arg4(36u)` and `arg4(40u)`), and its reals.
    const DRIFT_AT: usize = 36;
    pub(in crate::gpu::mirror) const ELEMENT_INPUTS: usize = DRIFT_AT + 8;
    const INPUTS: usize = ELEMENT_INPUTS;

    /// The WGSL that reads `random_element`'s layout.
    pub(in crate::gpu::mirror) const READ_ELEMENT: &str = "
        let le = arg(0u);
        let t0 = arg2(1u);
        let sec = Section(arg(3u), arg(4u), arg(5u), arg(6u));
        let weight_per_length = arg(7u);
        let drag_factor = arg(8u);
        let damping_scale = arg(9u);
        let state = ElementState(arg4(10u), arg4(14u), arg4(18u), arg4(22u), arg4(26u), arg4(30u),
                                 arg4(36u), arg4(40u));
        let no_damping = Symmetric4(real4(0.0), real4(0.0), real2(0.0));
        var d = ElementDamping(no_damping, real4x4(), no_damping);";

    pub(in crate::gpu::mirror) struct Element<R: MirrorReal> {
        pub(in crate::gpu::mirror) le: R,
        pub(in crate::gpu::mirror) t0: Vector2<R>,
        pub(in crate::gpu::mirror) sec: Section<R>,
        pub(in crate::gpu::mirror) weight_per_length: R,
        pub(in crate::gpu::mirror) drag_factor: R,
        pub(in crate::gpu::mirror) damping_scale: R,
        pub(in crate::gpu::mirror) state: ElementState<R>,
        pub(in crate::gpu::mirror) gauss_point: (R, R),
    }

    pub(in crate::gpu::mirror) fn read_element<R: MirrorReal>(x: &[R]) -> Element<R> {
        let v = |k: usize| Vector4::from_column_slice(&x[k..k + 4]);
        Element {
            le: x[0],
            t0: Vector2::new(x[1], x[2]),
            sec: Section {
                axial_stiffness: x[3],
                axial_damping: x[4],
                bending_stiffness: x[5],
                bending_damping: x[6],
            },
            weight_per_length: x[7],
            drag_factor: x[8],
            damping_scale: x[9],
            state: ElementState {
                ua: v(10),
                ub: v(14),
                damped_va: v(18),
                damped_vb: v(22),
                drag_va: v(26),
                drag_vb: v(30),
                drift: Some((v(DRIFT_AT), v(DRIFT_AT + 4))),
            },
            gauss_point: (x[34], x[35]),
        }
    }

    /// `state` as a stage without SPLIT_STRAIN forms it: the drift summed
    /// into the displacement, in the state's precision.
    pub(in crate::gpu::mirror) fn drift_summed<R: MirrorReal>(state: &mut ElementState<R>) {
        if let Some((da, db)) = state.drift.take() {
            state.ua += da;
            state.ub += db;
        }
    }

    fn element_force_mirror<R: MirrorReal>(x: &[R]) -> (ElementForce<R>, ElementDamping<R>) {
        element_force_of(&read_element(x))
    }

    fn element_force_of<R: MirrorReal>(e: &Element<R>) -> (ElementForce<R>, ElementDamping<R>) {
        let mut d = ElementDamping::zeros();
        let f = element_force(
            e.le,
            e.t0,
            e.sec,
            e.weight_per_length,
            e.drag_factor,
            &e.state,
            Some((&mut d, e.damping_scale)),
        );
        (f, d)
    }

    fn force_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let (f, _) = element_force_mirror(x);
        reals(f.a.iter().chain(f.b.iter()))
    }

    fn damping_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let (_, d) = element_force_mirror(x);
        let mut out = reals(d.aa.full().iter());
        out.extend(reals(d.ab.iter()));
        out.extend(reals(d.bb.full().iter()));
        out
    }

    fn gauss_point_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let e = read_element(x);
        let mut f = ElementForce {
            a: Vector4::zeros(),
            b: Vector4::zeros(),
        };
        let mut d = ElementDamping::zeros();
        let (xi, weight) = e.gauss_point;
        add_gauss_point(
            &mut f,
            Some((&mut d, e.damping_scale)),
            xi,
            weight,
            e.le,
            e.t0,
            e.sec,
            &e.state,
        );
        reals(f.a.iter().chain(f.b.iter()))
    }

    /// The element's force from the displacement and the drift apart
    /// (SPLIT_STRAIN) is the force from their sum: in f64 to rounding. In
    /// f32 what Newton's iteration reads, the force's change with a small
    /// change of the drift (1e-5 m), is several times nearer f64's than
    /// where the two are summed first, whose strain reads the sum's
    /// rounding (4.3× over these cases, whose elements are bent and
    /// stretched at random; on a drop the step counts show it, tests/mirror.rs).
    #[test]
    fn the_split_strain_is_the_summed_one_and_changes_finely_in_f32() {
        /// The element's force from `x` in `R`, its drift apart or summed
        /// into the displacement first.
        fn force<R: MirrorReal>(x: &[f64], split: bool) -> Vec<f64> {
            let y: Vec<R> = x.iter().map(|&v| lit(v)).collect();
            let mut e = read_element(&y);
            if !split {
                drift_summed(&mut e.state);
            }
            let (f, _) = element_force_of(&e);
            reals(f.a.iter().chain(f.b.iter()))
        }
        fn change<R: MirrorReal>(x: &[f64], moved: &[f64], split: bool) -> Vec<f64> {
            let (a, b) = (force::<R>(x, split), force::<R>(moved, split));
            b.iter().zip(&a).map(|(b, a)| b - a).collect()
        }
        let largest = |f: &[f64]| f.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let off = |f: &[f64], truth: &[f64]| {
            let diff: Vec<f64> = f.iter().zip(truth).map(|(a, b)| a - b).collect();
            largest(&diff) / largest(truth)
        };
        let (mut split_error, mut summed_error) = (0.0, 0.0);
        for (case, x) in random_cases(7, 256, random_element).iter().enumerate() {
            let truth = force::<f64>(x, false);
            let f64_split = off(&force::<f64>(x, true), &truth);
            assert!(f64_split < 1e-10, "case {case}: f64 split {f64_split:e}");
            let mut moved = x.clone();
            for (k, v) in moved[DRIFT_AT..ELEMENT_INPUTS].iter_mut().enumerate() {
                *v += 1e-5 * [1.0, -0.5, 0.3, 0.7][k % 4];
            }
            let truth = change::<f64>(x, &moved, false);
            split_error += off(&change::<f32>(x, &moved, true), &truth);
            summed_error += off(&change::<f32>(x, &moved, false), &truth);
        }
        assert!(
            3.0 * split_error < summed_error,
            "f32's change of force: split {split_error:e} against summed {summed_error:e} (over the cases)"
        );
    }

    // Measured on lavapipe: 2.3e-7 (f32) and 3.9e-16 (f64) of a case's
    // largest entry. The margin is for a compiler that contracts
    // multiply-adds into fused ones, as a hardware GPU's may.
    const TOLERANCES: (f64, f64) = (1e-5, 1e-14);

    #[test]
    fn element_force_on_the_adapter_matches_the_mirror() {
        let body = format!(
            "fn run() {{ {READ_ELEMENT}
                let f = element_force(le, t0, sec, weight_per_length, drag_factor, state, &d, damping_scale);
                put4(0u, f.a);
                put4(4u, f.b);
            }}"
        );
        let kernel = FunctionKernel {
            name: "element_force (force)",
            inputs: INPUTS,
            outputs: 8,
            body: &body,
        };
        check_both_precisions(
            &kernel,
            &random_cases(4, 256, random_element),
            force_mirror::<f32>,
            force_mirror::<f64>,
            TOLERANCES,
        );
    }

    #[test]
    fn element_damping_blocks_on_the_adapter_match_the_mirror() {
        let body = format!(
            "fn run() {{ {READ_ELEMENT}
                let f = element_force(le, t0, sec, weight_per_length, drag_factor, state, &d, damping_scale);
                put4x4(0u, symmetric_full(d.aa));
                put4x4(16u, d.ab);
                put4x4(32u, symmetric_full(d.bb));
            }}"
        );
        let kernel = FunctionKernel {
            name: "element_force (damping blocks)",
            inputs: INPUTS,
            outputs: 48,
            body: &body,
        };
        check_both_precisions(
            &kernel,
            &random_cases(5, 256, random_element),
            damping_mirror::<f32>,
            damping_mirror::<f64>,
            TOLERANCES,
        );
    }

    #[test]
    fn gauss_point_kinematics_on_the_adapter_match_the_mirror() {
        // One point at a random ξ, not only the rule's five: the shape
        // functions' derivatives, strain, curvature and their rates.
        let body = format!(
            "fn run() {{ {READ_ELEMENT}
                var f = ElementForce(real4(0.0), real4(0.0));
                add_gauss_point(&f, &d, arg(34u), arg(35u), le, t0, sec, state, damping_scale);
                put4(0u, f.a);
                put4(4u, f.b);
            }}"
        );
        let kernel = FunctionKernel {
            name: "add_gauss_point",
            inputs: INPUTS,
            outputs: 8,
            body: &body,
        };
        check_both_precisions(
            &kernel,
            &random_cases(6, 256, random_element),
            gauss_point_mirror::<f32>,
            gauss_point_mirror::<f64>,
            TOLERANCES,
        );
    }
}
