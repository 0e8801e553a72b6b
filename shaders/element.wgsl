// One planar ANCF cable element (docs/model.md §2) in displacement form: the forces of
// element (a, b) from the displacements u and velocities v of its two nodes,
// each packed as vec4 (x, y, x', y'). The reference configuration is the
// straight, unstretched tether with unit tangent t0, so r_x = t0 + u_x and
// r_xx = u_xx; the strain is formed from u without cancellation (docs/model.md §8):
// |r_x|² − 1 = 2 t0·u_x + |u_x|².
//
// Mirrors ElementKernel::add_internal_force and add_drag in
// src/model/element/kernel.rs; the quadrature is the same five-point Gauss rule
// (GAUSS_POINTS in element/mod.rs), written out so that no shader loop runs per point
// (lavapipe counts every loop iteration against its limit).
//
// Needs: a precision module, SEMI_IMPLICIT, SPLIT_STRAIN, matrix.wgsl
// (src/gpu/shader.rs).
//
// CPU mirror, operation for operation: src/gpu/mirror/element.rs.

struct Section {
    axial_stiffness: real,    // E a [N]
    axial_damping: real,      // D a [N s]
    bending_stiffness: real,  // E I [N m²]
    bending_damping: real,    // D I [N m² s]
}

struct ElementForce {
    a: real4,
    b: real4,
}

// An element's nodal displacements and the velocities its forces are
// evaluated at: the material damping's and the drag's. The explicit scheme
// passes its predicted velocity for both; the semi-implicit scheme passes
// v½ for the damping (its end-of-step remainder is taken implicitly,
// through ElementDamping) and the predicted velocity for the drag.
//
// With SPLIT_STRAIN (the adaptive stage in f32) the displacement is
// ua + drift_a: the displacement at the last fold and the drift since,
// never summed into one real. A stage that passes them summed rounds the
// trial iterate to the displacement's ulp, and |r_x|² − 1 of a rotated
// element cancels terms of order 1; in f32 both put noise of about 1e-7
// into the strain, which changes with every Newton iteration and every
// step, and which Newton's convergence test and the error estimate read
// at tolerances of 1e-7–1e-6 m. Split, the displacement's part stays
// fixed between folds and the drift's is as fine as the drift is small.
// The fixed-step stages pass no drift (SPLIT_STRAIN false: the fields are
// never read).
struct ElementState {
    ua: real4,
    ub: real4,
    damped_va: real4,
    damped_vb: real4,
    drag_va: real4,
    drag_vb: real4,
    drift_a: real4,
    drift_b: real4,
}

// The chord b − a: the reference chord le·t0 plus the displacements'
// difference (and the drifts', with SPLIT_STRAIN).
fn element_chord(le: real, t0: real2, s: ElementState) -> real2 {
    var chord = le * t0 + s.ub.xy - s.ua.xy;
    if (SPLIT_STRAIN) {
        chord += s.drift_b.xy - s.drift_a.xy;
    }
    return chord;
}

// scale · C_D of one element, C_D = ∫ (D a ε_e ε_eᵀ + D I κ_e κ_eᵀ) ds the
// Kelvin–Voigt damping matrix (∂ of the damping force by the velocities),
// in blocks of nodes (a, a), (a, b), (b, b); (b, a) is (a, b)ᵀ, and the
// diagonal blocks are symmetric. Mirrors
// ElementKernel::add_material_damping in src/model/element/kernel.rs.
struct ElementDamping {
    aa: Symmetric4,
    ab: real4x4,
    bb: Symmetric4,
}

fn cross2(p: real2, q: real2) -> real {
    return p.x * q.y - p.y * q.x;
}

// One point's kinematics: the Hermite functions' derivatives ∂s/∂s and
// ∂²s/∂s² there, p = r_x, c = r_xx and their rates, |p|², |p|, the strain
// and the curvature with their derivatives by p and c, and the resultants
// N = E a ε + D a ε̇, M = E I κ + D I κ̇. Shared by the force (here) and the
// tangent (tangent.wgsl).
struct PointKinematics {
    sx: real4,
    sxx: real4,
    p: real2,
    c: real2,
    pd: real2,
    cd: real2,
    g: real,
    stretch: real,
    z: real,
    curvature: real,
    strain_p: real2,
    curvature_p: real2,
    curvature_c: real2,
    axial: real,
    moment: real,
}

fn point_kinematics(xi: real, le: real, t0: real2, sec: Section, s: ElementState) -> PointKinematics {
    let inv_le = 1.0 / le;
    let x2 = xi * xi;
    let sx = real4((6.0 * x2 - 6.0 * xi) * inv_le, 1.0 - 4.0 * xi + 3.0 * x2,
                   (6.0 * xi - 6.0 * x2) * inv_le, 3.0 * x2 - 2.0 * xi);
    let sxx = real4((12.0 * xi - 6.0) * inv_le * inv_le, (6.0 * xi - 4.0) * inv_le,
                    (6.0 - 12.0 * xi) * inv_le * inv_le, (6.0 * xi - 2.0) * inv_le);
    let ua = s.ua;
    let ub = s.ub;
    let va = s.damped_va;
    let vb = s.damped_vb;
    let ux = sx.x * ua.xy + sx.y * ua.zw + sx.z * ub.xy + sx.w * ub.zw;
    var c = sxx.x * ua.xy + sxx.y * ua.zw + sxx.z * ub.xy + sxx.w * ub.zw;
    let pd = sx.x * va.xy + sx.y * va.zw + sx.z * vb.xy + sx.w * vb.zw;
    let cd = sxx.x * va.xy + sxx.y * va.zw + sxx.z * vb.xy + sxx.w * vb.zw;
    var p = t0 + ux;
    var g_minus_1 = 2.0 * dot(t0, ux) + dot(ux, ux);
    if (SPLIT_STRAIN) {
        // |p + dx|² − 1 = (|p|² − 1) + (2 p·dx + |dx|²) (see ElementState).
        let da = s.drift_a;
        let db = s.drift_b;
        let dx = sx.x * da.xy + sx.y * da.zw + sx.z * db.xy + sx.w * db.zw;
        c += sxx.x * da.xy + sxx.y * da.zw + sxx.z * db.xy + sxx.w * db.zw;
        g_minus_1 += 2.0 * dot(p, dx) + dot(dx, dx);
        p += dx;
    }
    let g = 1.0 + g_minus_1;
    let stretch = sqrt(g);
    let strain = g_minus_1 / (stretch + 1.0);
    let strain_p = p / stretch;
    let z = cross2(p, c);
    let inv_g = 1.0 / g;
    let curvature = z * inv_g;
    let curvature_p = (real2(c.y, -c.x) - 2.0 * curvature * p) * inv_g;
    let curvature_c = real2(-p.y, p.x) * inv_g;
    let strain_rate = dot(strain_p, pd);
    let curvature_rate = dot(curvature_p, pd) + dot(curvature_c, cd);
    let axial = sec.axial_stiffness * strain + sec.axial_damping * strain_rate;
    let moment = sec.bending_stiffness * curvature + sec.bending_damping * curvature_rate;
    return PointKinematics(sx, sxx, p, c, pd, cd, g, stretch, z, curvature, strain_p, curvature_p,
                           curvature_c, axial, moment);
}

// Adds the internal force −∫ (N ∂ε/∂e + M ∂κ/∂e)ᵀ ds of one Gauss point, and
// with SEMI_IMPLICIT its damping matrix times `damping_scale`.
fn add_gauss_point(
    f: ptr<function, ElementForce>, d: ptr<function, ElementDamping>,
    xi: real, weight: real, le: real, t0: real2, sec: Section, s: ElementState,
    damping_scale: real,
) {
    let k = point_kinematics(xi, le, t0, sec, s);
    let sx = k.sx;
    let sxx = k.sxx;
    let strain_p = k.strain_p;
    let curvature_p = k.curvature_p;
    let curvature_c = k.curvature_c;
    let axial = k.axial;
    let moment = k.moment;
    let wl = weight * le;
    let fp = wl * (axial * strain_p + moment * curvature_p);
    let fc = wl * moment * curvature_c;
    (*f).a -= real4(sx.x * fp + sxx.x * fc, sx.y * fp + sxx.y * fc);
    (*f).b -= real4(sx.z * fp + sxx.z * fc, sx.w * fp + sxx.w * fc);
    if (SEMI_IMPLICIT) {
        // ε_e and κ_e split by node: ∂ε/∂(x, y, x', y') of nodes a and b.
        let ea = real4(sx.x * strain_p, sx.y * strain_p);
        let eb = real4(sx.z * strain_p, sx.w * strain_p);
        let ka = real4(sx.x * curvature_p + sxx.x * curvature_c,
                       sx.y * curvature_p + sxx.y * curvature_c);
        let kb = real4(sx.z * curvature_p + sxx.z * curvature_c,
                       sx.w * curvature_p + sxx.w * curvature_c);
        let axial_weight = damping_scale * wl * sec.axial_damping;
        let bending_weight = damping_scale * wl * sec.bending_damping;
        let ea_w = axial_weight * ea;
        let eb_w = axial_weight * eb;
        let ka_w = bending_weight * ka;
        let kb_w = bending_weight * kb;
        (*d).aa = symmetric_sum((*d).aa, symmetric_outer_pair(ea_w, ea, ka_w, ka));
        (*d).ab += outer4(ea_w, eb) + outer4(ka_w, kb);
        (*d).bb = symmetric_sum((*d).bb, symmetric_outer_pair(eb_w, eb, kb_w, kb));
    }
}

// Gravity, internal force and air drag of one element: its contribution to
// the generalized force f = Q − F_a − F_D + Q_D of nodes a and b; with
// SEMI_IMPLICIT also `damping_scale` times its damping matrix in `d`.
fn element_force(
    le: real, t0: real2, sec: Section, weight_per_length: real, drag_factor: real,
    s: ElementState, d: ptr<function, ElementDamping>, damping_scale: real,
) -> ElementForce {
    // Gravity (docs/model.md §2, paper eq. 11), weight_per_length = ρ_t a g.
    let wg = weight_per_length * le;
    var f = ElementForce(real4(0.0, -0.5 * wg, 0.0, -wg * le / 12.0),
                         real4(0.0, -0.5 * wg, 0.0, wg * le / 12.0));
    // Five-point Gauss–Legendre rule on [0, 1] (GAUSS_XI, GAUSS_WEIGHTS).
    add_gauss_point(&f, d, 0.046910077030668004, 0.11846344252809454, le, t0, sec, s, damping_scale);
    add_gauss_point(&f, d, 0.23076534494715845, 0.23931433524968324, le, t0, sec, s, damping_scale);
    add_gauss_point(&f, d, 0.5, 0.28444444444444444, le, t0, sec, s, damping_scale);
    add_gauss_point(&f, d, 0.7692346550528416, 0.23931433524968324, le, t0, sec, s, damping_scale);
    add_gauss_point(&f, d, 0.953089922969332, 0.11846344252809454, le, t0, sec, s, damping_scale);
    // Air drag (docs/model.md §2, corrected): mean nodal velocity, projected lengths
    // of the chord (reference chord le·t0 plus the displacement difference).
    let chord = element_chord(le, t0, s);
    let vmean = 0.5 * (s.drag_va.xy + s.drag_vb.xy);
    let fx = -drag_factor * abs(chord.y) * vmean.x * abs(vmean.x);
    let fy = -drag_factor * abs(chord.x) * vmean.y * abs(vmean.y);
    let fd = real2(fx, fy);
    f.a += real4(0.5 * fd, (le / 12.0) * fd);
    f.b += real4(0.5 * fd, (-le / 12.0) * fd);
    return f;
}
