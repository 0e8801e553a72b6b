// One ANCF element's part of an implicit scheme's iteration matrix:
// stiffness_scale · K_e + damping_scale · C_e, with K_e = −∂f_e/∂e and
// C_e = −∂f_e/∂ė the tangents of the element's generalized force f_e
// (internal elastic and Kelvin–Voigt force, and air drag; gravity is
// constant), in displacement form like element.wgsl. Generalized-α's
// Newton matrix is M + γ'h C + β'h² K (src/solver/reference.rs), so a
// caller passes β'h² and γ'h and adds the mass blocks (node_blocks.wgsl).
//
// Per Gauss point, with p = r_x and c = r_xx, the section force
// (f_p, f_c) = N ∂ε/∂(p, c) + M ∂κ/∂(p, c) has the 4×4 derivative
//
//   H  = ∂ε dNᵀ + ∂κ dMᵀ + N ∂²ε + M ∂²κ        (by p, c)
//   Hv = D a ∂ε ∂εᵀ + D I ∂κ ∂κᵀ                (by ṗ, ċ)
//
// (dN, dM: the resultants' derivatives by p and c, rates included), and
// the element blocks are ∫ B_Xᵀ (k H + c Hv) B_Y ds, B_X mapping node X's
// (x, y, x', y') to (p, c). The scales are applied to H and Hv before the
// product, so that one product serves both. Mirrors
// ElementKernel::add_internal_tangent and sub_drag_tangent in
// src/model/element/kernel.rs, which write K and C apart; the quadrature is
// element.wgsl's five-point rule, written out for lavapipe's loop limit.
//
// The drag's derivative by a projected length |Δy| uses WGSL's sign(), 0
// where the chord is exactly level (the model's signum says 1 there; the
// product it multiplies is the drag itself, so a level chord with a
// moving element is a measure-zero difference).
//
// Needs: a precision module, element.wgsl (Section, ElementState,
// point_kinematics).
//
// CPU mirror, operation for operation: src/gpu/mirror/tangent.rs.

// The element's 4×4 blocks by node: rows of node a or b, columns of node
// a or b. Unlike the damping blocks of element.wgsl, (b, a) is not (a, b)ᵀ:
// the damping's and the drag's derivatives by positions are not symmetric.
struct ElementBlocks {
    aa: real4x4,
    ab: real4x4,
    ba: real4x4,
    bb: real4x4,
}

// The map from a node's (x, y, x', y') to (p, c) at a point where the
// node's position and slope functions have derivatives (sx_pos, sx_slope)
// and (sxx_pos, sxx_slope). Column-major: column j is coordinate j.
fn node_to_section(sx_pos: real, sx_slope: real, sxx_pos: real, sxx_slope: real) -> real4x4 {
    return real4x4(real4(sx_pos, 0.0, sxx_pos, 0.0), real4(0.0, sx_pos, 0.0, sxx_pos),
                   real4(sx_slope, 0.0, sxx_slope, 0.0), real4(0.0, sx_slope, 0.0, sxx_slope));
}

// Adds one Gauss point's ∫ B_Xᵀ (k H + c Hv) B_Y ds to the blocks.
fn add_gauss_point_tangent(
    t: ptr<function, ElementBlocks>,
    xi: real, weight: real, le: real, t0: real2, sec: Section, s: ElementState,
    stiffness_scale: real, damping_scale: real,
) {
    let kin = point_kinematics(xi, le, t0, sec, s);
    let sx = kin.sx;
    let sxx = kin.sxx;
    let p = kin.p;
    let c = kin.c;
    let pd = kin.pd;
    let cd = kin.cd;
    let stretch = kin.stretch;
    let z = kin.z;
    let curvature = kin.curvature;
    let strain_p = kin.strain_p;
    let curvature_p = kin.curvature_p;
    let curvature_c = kin.curvature_c;
    let axial = kin.axial;
    let moment = kin.moment;
    let inv_g = 1.0 / kin.g;
    let z_p = real2(c.y, -c.x);
    // ∂²ε/∂p² = (I − p pᵀ/g)/|p|, symmetric: (00, 01, 11).
    let inv_stretch = 1.0 / stretch;
    let e00 = (1.0 - p.x * p.x * inv_g) * inv_stretch;
    let e01 = -p.x * p.y * inv_g * inv_stretch;
    let e11 = (1.0 - p.y * p.y * inv_g) * inv_stretch;
    // ∂²κ/∂p² = (−2 (z_p pᵀ + p z_pᵀ) − 2 z I + 8 κ p pᵀ)/g², symmetric;
    // ∂²κ/∂p∂c = (J − 2 p κ_cᵀ)/g with J = [[0, 1], [−1, 0]] (row p, column c).
    let inv_g2 = inv_g * inv_g;
    let k00 = (-4.0 * z_p.x * p.x - 2.0 * z + 8.0 * curvature * p.x * p.x) * inv_g2;
    let k01 = (-2.0 * (z_p.x * p.y + p.x * z_p.y) + 8.0 * curvature * p.x * p.y) * inv_g2;
    let k11 = (-4.0 * z_p.y * p.y - 2.0 * z + 8.0 * curvature * p.y * p.y) * inv_g2;
    let m00 = -2.0 * p.x * curvature_c.x * inv_g;
    let m01 = (1.0 - 2.0 * p.x * curvature_c.y) * inv_g;
    let m10 = (-1.0 - 2.0 * p.y * curvature_c.x) * inv_g;
    let m11 = -2.0 * p.y * curvature_c.y * inv_g;
    // The rates' derivatives by position: ε̇ = ∂ε·ṗ and κ̇ = ∂κ·(ṗ, ċ).
    let strain_rate_p = real2(e00 * pd.x + e01 * pd.y, e01 * pd.x + e11 * pd.y);
    let curvature_rate_p = real2(k00 * pd.x + k01 * pd.y + m00 * cd.x + m01 * cd.y,
                                 k01 * pd.x + k11 * pd.y + m10 * cd.x + m11 * cd.y);
    let curvature_rate_c = real2(m00 * pd.x + m10 * pd.y, m01 * pd.x + m11 * pd.y);
    // ∂ε and ∂κ by (p, c); k dN + c D a ∂ε and k dM + c D I ∂κ.
    let de = real4(strain_p, 0.0, 0.0);
    let dk = real4(curvature_p, curvature_c);
    let dn = sec.axial_stiffness * de
        + sec.axial_damping * real4(strain_rate_p, 0.0, 0.0);
    let dm = sec.bending_stiffness * dk
        + sec.bending_damping * real4(curvature_rate_p, curvature_rate_c);
    let n_row = stiffness_scale * dn + damping_scale * sec.axial_damping * de;
    let m_row = stiffness_scale * dm + damping_scale * sec.bending_damping * dk;
    // k (N ∂²ε + M ∂²κ), symmetric 4×4 by (p, c).
    let kn = stiffness_scale * axial;
    let km = stiffness_scale * moment;
    let second = real4x4(real4(kn * e00 + km * k00, kn * e01 + km * k01, km * m00, km * m01),
                         real4(kn * e01 + km * k01, kn * e11 + km * k11, km * m10, km * m11),
                         real4(km * m00, km * m10, 0.0, 0.0),
                         real4(km * m01, km * m11, 0.0, 0.0));
    let wl = weight * le;
    let w = wl * (outer4(de, n_row) + outer4(dk, m_row) + second);
    let b_a = node_to_section(sx.x, sx.y, sxx.x, sxx.y);
    let b_b = node_to_section(sx.z, sx.w, sxx.z, sxx.w);
    let w_a = w * b_a;
    let w_b = w * b_b;
    (*t).aa += transpose(b_a) * w_a;
    (*t).ab += transpose(b_a) * w_b;
    (*t).ba += transpose(b_b) * w_a;
    (*t).bb += transpose(b_b) * w_b;
}

// −∂Q_D/∂(u, v) of one node's rows X against node Y's columns, scaled: the
// drag's derivative. Only the position columns (x, y) of Y are nonzero.
// `row_slope` is the slope rows' load weight (±l_e/12), `side` +1 when Y is
// node b, −1 when a (the projected lengths grow with b − a); fx_v, fy_v are
// ∂F/∂(mean velocity)/2 and fx_y, fy_x the drags' derivatives by the
// projected length of the chord.
fn drag_block(row_slope: real, side: real, fx_v: real, fy_v: real, fx_y: real, fy_x: real,
              stiffness_scale: real, damping_scale: real) -> real4x4 {
    // ∂(F_x, F_y)/∂(column x), ∂(F_x, F_y)/∂(column y).
    let by_x = real2(damping_scale * fx_v, stiffness_scale * side * fy_x);
    let by_y = real2(stiffness_scale * side * fx_y, damping_scale * fy_v);
    return real4x4(-real4(0.5 * by_x, row_slope * by_x), -real4(0.5 * by_y, row_slope * by_y),
                   real4(0.0), real4(0.0));
}

// stiffness_scale · K_e + damping_scale · C_e of one element; the internal
// force's derivatives at `s`'s damped velocities, the drag's at its drag
// velocities (an implicit scheme passes the same velocities for both).
fn element_tangent(
    le: real, t0: real2, sec: Section, drag_factor: real, s: ElementState,
    stiffness_scale: real, damping_scale: real,
) -> ElementBlocks {
    var t = ElementBlocks(real4x4(), real4x4(), real4x4(), real4x4());
    add_gauss_point_tangent(&t, 0.046910077030668004, 0.11846344252809454, le, t0, sec, s,
                            stiffness_scale, damping_scale);
    add_gauss_point_tangent(&t, 0.23076534494715845, 0.23931433524968324, le, t0, sec, s,
                            stiffness_scale, damping_scale);
    add_gauss_point_tangent(&t, 0.5, 0.28444444444444444, le, t0, sec, s,
                            stiffness_scale, damping_scale);
    add_gauss_point_tangent(&t, 0.7692346550528416, 0.23931433524968324, le, t0, sec, s,
                            stiffness_scale, damping_scale);
    add_gauss_point_tangent(&t, 0.953089922969332, 0.11846344252809454, le, t0, sec, s,
                            stiffness_scale, damping_scale);
    // F_x = −f |Δy| v_x|v_x|, F_y = −f |Δx| v_y|v_y| (element.wgsl), with
    // Δ = b − a the chord and v the mean nodal velocity.
    let chord = element_chord(le, t0, s);
    let vmean = 0.5 * (s.drag_va.xy + s.drag_vb.xy);
    // ∂F/∂v_node = ½ ∂F/∂v_mean.
    let fx_v = -drag_factor * abs(chord.y) * abs(vmean.x);
    let fy_v = -drag_factor * abs(chord.x) * abs(vmean.y);
    let fx_y = -drag_factor * sign(chord.y) * vmean.x * abs(vmean.x);
    let fy_x = -drag_factor * sign(chord.x) * vmean.y * abs(vmean.y);
    let slope = le / 12.0;
    t.aa += drag_block(slope, -1.0, fx_v, fy_v, fx_y, fy_x, stiffness_scale, damping_scale);
    t.ab += drag_block(slope, 1.0, fx_v, fy_v, fx_y, fy_x, stiffness_scale, damping_scale);
    t.ba += drag_block(-slope, -1.0, fx_v, fy_v, fx_y, fy_x, stiffness_scale, damping_scale);
    t.bb += drag_block(-slope, 1.0, fx_v, fy_v, fx_y, fy_x, stiffness_scale, damping_scale);
    return t;
}
