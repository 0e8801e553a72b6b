//! One planar ANCF cable element (docs/model.md §2): shape functions, quadrature,
//! mass, gravity, internal (elastic + Kelvin–Voigt) force, air drag, and their
//! exact derivatives.
//!
//! Element coordinates are e = [x_k, y_k, x'_k, y'_k, x_{k+1}, y_{k+1}, x'_{k+1}, y'_{k+1}],
//! i.e. entry `2a + d` belongs to shape function a ∈ 0..4 and direction
//! d ∈ {x, y}.

// The loops index shape functions a and directions d together (entry 2a + d),
// as the formulas do; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use super::params::TetherParams;

mod kernel;

pub use kernel::{ElementKernel, QuadraturePoint, internal_forces_block, internal_tangent};

/// Gauss–Legendre points used for the elastic and damping integrals (and for
/// the mass matrix, which they integrate exactly). docs/model.md §2 asks for at least
/// five because the forces are not polynomial; the GPU shaders use the same
/// rule so that CPU and GPU differ by precision only.
pub const GAUSS_POINTS: usize = 5;

/// Nodes on [0, 1].
pub const GAUSS_XI: [f64; GAUSS_POINTS] = [
    0.046_910_077_030_668_004,
    0.230_765_344_947_158_45,
    0.5,
    0.769_234_655_052_841_6,
    0.953_089_922_969_332,
];

/// Weights on [0, 1] (sum to 1).
pub const GAUSS_WEIGHTS: [f64; GAUSS_POINTS] = [
    0.118_463_442_528_094_54,
    0.239_314_335_249_683_24,
    0.284_444_444_444_444_45,
    0.239_314_335_249_683_24,
    0.118_463_442_528_094_54,
];

pub type Vec2 = [f64; 2];
pub type ElementVector = [f64; 8];
pub type ElementMatrix = [[f64; 8]; 8];

/// Cubic Hermite shape functions s1..s4 at ξ for element length `le`.
pub fn shape(xi: f64, le: f64) -> [f64; 4] {
    let (x2, x3) = (xi * xi, xi * xi * xi);
    [
        1.0 - 3.0 * x2 + 2.0 * x3,
        le * (xi - 2.0 * x2 + x3),
        3.0 * x2 - 2.0 * x3,
        le * (x3 - x2),
    ]
}

/// ∂s/∂s (arc length, not ξ): the shape functions of r_x.
pub fn shape_x(xi: f64, le: f64) -> [f64; 4] {
    let x2 = xi * xi;
    [
        (-6.0 * xi + 6.0 * x2) / le,
        1.0 - 4.0 * xi + 3.0 * x2,
        (6.0 * xi - 6.0 * x2) / le,
        3.0 * x2 - 2.0 * xi,
    ]
}

/// ∂²s/∂s²: the shape functions of r_xx.
pub fn shape_xx(xi: f64, le: f64) -> [f64; 4] {
    [
        (-6.0 + 12.0 * xi) / (le * le),
        (-4.0 + 6.0 * xi) / le,
        (6.0 - 12.0 * xi) / (le * le),
        (6.0 * xi - 2.0) / le,
    ]
}

/// Σ_a s_a e_a for 2-D nodal vectors e_a = (e\[2a\], e[2a+1]).
#[inline]
pub fn interpolate(s: &[f64; 4], e: &ElementVector) -> Vec2 {
    let mut r = [0.0; 2];
    for a in 0..4 {
        r[0] += s[a] * e[2 * a];
        r[1] += s[a] * e[2 * a + 1];
    }
    r
}

#[inline]
fn dot(a: Vec2, b: Vec2) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

#[inline]
fn cross(a: Vec2, b: Vec2) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

/// Section constants: E a, D a, E I, D I.
#[derive(Debug, Clone, Copy)]
pub struct SectionConstants {
    pub axial_stiffness_n: f64,
    pub axial_damping_n_s: f64,
    pub bending_stiffness_n_m2: f64,
    pub bending_damping_n_m2_s: f64,
}

impl SectionConstants {
    pub fn new(p: &TetherParams) -> Self {
        let (a, i) = (p.area_m2(), p.second_moment_m4());
        Self {
            axial_stiffness_n: p.youngs_modulus_pa * a,
            axial_damping_n_s: p.damping_pa_s * a,
            bending_stiffness_n_m2: p.youngs_modulus_pa * i,
            bending_damping_n_m2_s: p.damping_pa_s * i,
        }
    }
}

/// Strain and curvature at one point with their first derivatives with respect
/// to p = r_x and c = r_xx, and their rates.
#[derive(Debug, Clone, Copy)]
pub struct SectionKinematics {
    /// |r_x|²
    pub g: f64,
    /// |r_x|
    pub stretch: f64,
    pub strain: f64,
    pub strain_rate: f64,
    pub curvature: f64,
    pub curvature_rate: f64,
    /// ∂ε/∂p
    pub strain_p: Vec2,
    /// ∂κ/∂p, ∂κ/∂c
    pub curvature_p: Vec2,
    pub curvature_c: Vec2,
    /// r_x × r_xx
    pub z: f64,
    pub z_p: Vec2,
    pub z_c: Vec2,
}

impl SectionKinematics {
    #[inline]
    pub fn new(p: Vec2, c: Vec2, pd: Vec2, cd: Vec2) -> Self {
        let g = dot(p, p);
        let stretch = g.sqrt();
        // ε = |r_x| − 1 written without cancellation near |r_x| = 1 (docs/model.md §8).
        let strain = (g - 1.0) / (stretch + 1.0);
        let strain_p = [p[0] / stretch, p[1] / stretch];
        let strain_rate = dot(strain_p, pd);
        let z = cross(p, c);
        let z_p = [c[1], -c[0]];
        let z_c = [-p[1], p[0]];
        let curvature = z / g;
        let g2 = g * g;
        let curvature_p = [
            z_p[0] / g - 2.0 * z * p[0] / g2,
            z_p[1] / g - 2.0 * z * p[1] / g2,
        ];
        let curvature_c = [z_c[0] / g, z_c[1] / g];
        let curvature_rate = dot(curvature_p, pd) + dot(curvature_c, cd);
        Self {
            g,
            stretch,
            strain,
            strain_rate,
            curvature,
            curvature_rate,
            strain_p,
            curvature_p,
            curvature_c,
            z,
            z_p,
            z_c,
        }
    }

    /// Axial resultant N = a (E ε + D ε̇) and bending resultant M = I (E κ + D κ̇).
    pub fn resultants(&self, sc: &SectionConstants) -> (f64, f64) {
        (
            sc.axial_stiffness_n * self.strain + sc.axial_damping_n_s * self.strain_rate,
            sc.bending_stiffness_n_m2 * self.curvature
                + sc.bending_damping_n_m2_s * self.curvature_rate,
        )
    }
}

/// Section generalized forces (∂/∂p, ∂/∂c of the internal virtual work).
#[inline]
pub fn section_force(k: &SectionKinematics, sc: &SectionConstants) -> (Vec2, Vec2) {
    let (n, m) = k.resultants(sc);
    (
        [
            n * k.strain_p[0] + m * k.curvature_p[0],
            n * k.strain_p[1] + m * k.curvature_p[1],
        ],
        [m * k.curvature_c[0], m * k.curvature_c[1]],
    )
}

/// ∂(f_p, f_c)/∂(p, c) and ∂(f_p, f_c)/∂(ṗ, ċ), 4×4 in the order (p_x, p_y, c_x, c_y).
pub fn section_tangent(
    k: &SectionKinematics,
    sc: &SectionConstants,
    p: Vec2,
    pd: Vec2,
    cd: Vec2,
) -> ([[f64; 4]; 4], [[f64; 4]; 4]) {
    let (n_res, m_res) = k.resultants(sc);
    let (g, l) = (k.g, k.stretch);
    let (g2, g3) = (g * g, g * g * g);
    let z = k.z;
    // ∂²ε/∂p², symmetric.
    let mut eps_pp = [[0.0; 2]; 2];
    // ∂²κ/∂p², ∂²κ/∂p∂c (row: p, column: c).
    let mut kap_pp = [[0.0; 2]; 2];
    let mut kap_pc = [[0.0; 2]; 2];
    let jm = [[0.0, 1.0], [-1.0, 0.0]];
    for i in 0..2 {
        for j in 0..2 {
            let delta = if i == j { 1.0 } else { 0.0 };
            eps_pp[i][j] = (delta - p[i] * p[j] / g) / l;
            kap_pp[i][j] = -2.0 * (k.z_p[i] * p[j] + p[i] * k.z_p[j]) / g2 - 2.0 * z * delta / g2
                + 8.0 * z * p[i] * p[j] / g3;
            kap_pc[i][j] = jm[i][j] / g - 2.0 * p[i] * k.z_c[j] / g2;
        }
    }
    let mat_vec = |m: &[[f64; 2]; 2], v: Vec2| [dot(m[0], v), dot(m[1], v)];
    let eps_dot_p = mat_vec(&eps_pp, pd);
    let kap_pc_cd = mat_vec(&kap_pc, cd);
    let kap_pp_pd = mat_vec(&kap_pp, pd);
    let kap_dot_p = [kap_pp_pd[0] + kap_pc_cd[0], kap_pp_pd[1] + kap_pc_cd[1]];
    // κ̇_c = κ_cp ṗ with κ_cp = κ_pcᵀ.
    let kap_dot_c = [
        kap_pc[0][0] * pd[0] + kap_pc[1][0] * pd[1],
        kap_pc[0][1] * pd[0] + kap_pc[1][1] * pd[1],
    ];
    let (ea, da, ei, di) = (
        sc.axial_stiffness_n,
        sc.axial_damping_n_s,
        sc.bending_stiffness_n_m2,
        sc.bending_damping_n_m2_s,
    );
    // ∂N/∂p and ∂M/∂(p, c)
    let dn_p = [
        ea * k.strain_p[0] + da * eps_dot_p[0],
        ea * k.strain_p[1] + da * eps_dot_p[1],
    ];
    let dm_p = [
        ei * k.curvature_p[0] + di * kap_dot_p[0],
        ei * k.curvature_p[1] + di * kap_dot_p[1],
    ];
    let dm_c = [
        ei * k.curvature_c[0] + di * kap_dot_c[0],
        ei * k.curvature_c[1] + di * kap_dot_c[1],
    ];
    let mut h = [[0.0; 4]; 4];
    let mut hv = [[0.0; 4]; 4];
    for i in 0..2 {
        for j in 0..2 {
            h[i][j] = k.strain_p[i] * dn_p[j]
                + n_res * eps_pp[i][j]
                + k.curvature_p[i] * dm_p[j]
                + m_res * kap_pp[i][j];
            h[i][j + 2] = k.curvature_p[i] * dm_c[j] + m_res * kap_pc[i][j];
            h[i + 2][j] = k.curvature_c[i] * dm_p[j] + m_res * kap_pc[j][i];
            h[i + 2][j + 2] = k.curvature_c[i] * dm_c[j];

            hv[i][j] =
                da * k.strain_p[i] * k.strain_p[j] + di * k.curvature_p[i] * k.curvature_p[j];
            hv[i][j + 2] = di * k.curvature_p[i] * k.curvature_c[j];
            hv[i + 2][j] = di * k.curvature_c[i] * k.curvature_p[j];
            hv[i + 2][j + 2] = di * k.curvature_c[i] * k.curvature_c[j];
        }
    }
    (h, hv)
}

#[cfg(test)]
mod tests {

    #[test]
    fn material_damping_is_the_damping_part_of_the_tangent() {
        let p = TetherParams {
            elements: 4,
            damping_pa_s: 3000.0,
            drag_coefficient: 0.0,
            ..Default::default()
        };
        let kernel = ElementKernel::new(&p);
        let le = kernel.length_m;
        // A bent, stretched element moving at some speed: the tangent's
        // velocity part must not depend on the speed.
        let e = [0.0, 0.0, 0.9, 0.5, 0.8 * le, 0.3 * le, 0.7, 0.8];
        let ed = [0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.3, -0.6];
        let (mut k, mut tangent) = ([[0.0; 8]; 8], [[0.0; 8]; 8]);
        kernel.add_internal_tangent(&e, &ed, &mut k, &mut tangent);
        let mut damping = [[0.0; 8]; 8];
        kernel.add_material_damping(&e, &mut damping);
        let scale = tangent.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        assert!(scale > 0.0);
        for i in 0..8 {
            for j in 0..8 {
                assert!(
                    (damping[i][j] - tangent[i][j]).abs() <= 1e-12 * scale,
                    "({i}, {j}): {} vs {}",
                    damping[i][j],
                    tangent[i][j]
                );
            }
        }
    }

    use super::*;

    fn perturbed_state(seed: u64) -> (ElementVector, ElementVector) {
        // A bent, stretched, moving element (deterministic pseudo-random).
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut rnd = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let le = 0.15;
        let base = [0.0, 0.0, 0.8, -0.6, 0.8 * le, -0.6 * le, 0.8, -0.6];
        let e = std::array::from_fn(|i| base[i] + 0.05 * rnd() * if i % 4 < 2 { le } else { 1.0 });
        let ed = std::array::from_fn(|_| rnd());
        (e, ed)
    }

    fn kernel() -> ElementKernel {
        let p = TetherParams {
            elements: 4,
            damping_pa_s: 2500.0,
            drag_coefficient: 0.8,
            ..Default::default()
        };
        ElementKernel::new(&p)
    }

    fn total_force(k: &ElementKernel, e: &ElementVector, ed: &ElementVector) -> ElementVector {
        // f_int − Q_D: the sign convention of the tangents.
        let mut f = [0.0; 8];
        k.add_internal_force(e, ed, &mut f);
        let mut d = [0.0; 8];
        k.add_drag(e, ed, &mut d);
        std::array::from_fn(|i| f[i] - d[i])
    }

    #[test]
    fn a_block_of_elements_has_the_one_element_forces_bits() {
        // Whichever build the CPU runs (SSE2, AVX2 or AVX-512), the packed
        // section loop must give each element's force as the one-element
        // kernel does: the reference solver's steps depend on the bits.
        let kern = kernel();
        let states: Vec<_> = (1..=8).map(perturbed_state).collect();
        // Nine nodes whose eight elements are the states above: element b
        // takes its first node from state b and its second from state b + 1
        // (their first nodes), so the one-element forces are recomputed on
        // the same vectors.
        let nodes: Vec<f64> = (0..9)
            .flat_map(|k| states[k.min(7)].0[..4].to_vec())
            .collect();
        let rates: Vec<f64> = (0..9)
            .flat_map(|k| states[k.min(7)].1[..4].to_vec())
            .collect();
        let one: Vec<ElementVector> = (0..8)
            .map(|b| {
                let mut f = [0.0; 8];
                let (e, ed) = (&nodes[4 * b..4 * b + 8], &rates[4 * b..4 * b + 8]);
                kern.add_internal_force(e.try_into().unwrap(), ed.try_into().unwrap(), &mut f);
                f
            })
            .collect();
        let mut eight = [[0.0; 8]; 8];
        internal_forces_block(&kern, &nodes, &rates, &mut eight);
        let mut four = [[0.0; 8]; 4];
        internal_forces_block(&kern, &nodes[16..], &rates[16..], &mut four);
        for (b, f) in eight.iter().chain(&four).enumerate() {
            let expected = one[if b < 8 { b } else { b - 4 }];
            assert_ne!(f, &[0.0; 8]);
            assert_eq!(
                f.map(f64::to_bits),
                expected.map(f64::to_bits),
                "element {b}"
            );
        }
    }

    #[test]
    fn tangents_match_central_differences() {
        let kern = kernel();
        for seed in 1..6 {
            let (e, ed) = perturbed_state(seed);
            let mut k = [[0.0; 8]; 8];
            let mut c = [[0.0; 8]; 8];
            kern.add_internal_tangent(&e, &ed, &mut k, &mut c);
            kern.sub_drag_tangent(&e, &ed, &mut k, &mut c);
            for j in 0..8 {
                let h = 1e-6;
                let (mut ep, mut em) = (e, e);
                ep[j] += h;
                em[j] -= h;
                let (fp, fm) = (total_force(&kern, &ep, &ed), total_force(&kern, &em, &ed));
                let (mut vp, mut vm) = (ed, ed);
                vp[j] += h;
                vm[j] -= h;
                let (gp, gm) = (total_force(&kern, &e, &vp), total_force(&kern, &e, &vm));
                for i in 0..8 {
                    let fd_k = (fp[i] - fm[i]) / (2.0 * h);
                    let fd_c = (gp[i] - gm[i]) / (2.0 * h);
                    let scale_k = k.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
                    let scale_c = c.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
                    assert!(
                        (k[i][j] - fd_k).abs() < 1e-6 * scale_k,
                        "K[{i}][{j}] = {} vs FD {fd_k} (seed {seed})",
                        k[i][j]
                    );
                    assert!(
                        (c[i][j] - fd_c).abs() < 1e-6 * scale_c,
                        "C[{i}][{j}] = {} vs FD {fd_c} (seed {seed})",
                        c[i][j]
                    );
                }
            }
        }
    }

    #[test]
    fn elastic_force_is_the_gradient_of_strain_energy() {
        let p = TetherParams {
            elements: 4,
            ..Default::default()
        };
        let kern = ElementKernel::new(&p);
        let (e, _) = perturbed_state(11);
        let mut f = [0.0; 8];
        kern.add_internal_force(&e, &[0.0; 8], &mut f);
        let scale = f.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for j in 0..8 {
            let h = 1e-6;
            let (mut ep, mut em) = (e, e);
            ep[j] += h;
            em[j] -= h;
            let fd = (kern.strain_energy(&ep) - kern.strain_energy(&em)) / (2.0 * h);
            assert!(
                (f[j] - fd).abs() < 1e-6 * scale,
                "F[{j}] = {} vs dU/de {fd}",
                f[j]
            );
        }
    }

    #[test]
    fn mass_matrix_is_exact_and_integrates_kinetic_energy() {
        // ½ ėᵀ M ė must equal ½ ∫ ρa |ṙ|² + ρI |ṙ_x|² ds, computed here with a
        // much finer rule (midpoint, 4000 points) independent of GAUSS_*.
        let p = TetherParams {
            elements: 3,
            ..Default::default()
        };
        let kern = ElementKernel::new(&p);
        let (_, ed) = perturbed_state(3);
        let le = kern.length_m;
        let mut quad = 0.0;
        let m = 4000;
        for i in 0..m {
            let xi = (i as f64 + 0.5) / m as f64;
            let v = interpolate(&shape(xi, le), &ed);
            let vx = interpolate(&shape_x(xi, le), &ed);
            quad += le / m as f64
                * (p.mass_per_length_kg_m() * dot(v, v)
                    + p.density_kg_m3 * p.second_moment_m4() * dot(vx, vx));
        }
        let mut mv = 0.0;
        for i in 0..8 {
            for j in 0..8 {
                mv += ed[i] * kern.mass[i][j] * ed[j];
            }
        }
        assert!((mv - quad).abs() < 1e-8 * quad, "{mv} vs {quad}");
    }

    #[test]
    fn drag_opposes_motion() {
        let kern = kernel();
        let e = [0.0, 0.0, 0.6, -0.8, 0.09, -0.12, 0.6, -0.8];
        for (vx, vy) in [(1.0, 0.5), (-1.0, 0.5), (1.0, -2.0), (-0.3, -0.4)] {
            let ed = [vx, vy, 0.0, 0.0, vx, vy, 0.0, 0.0];
            let (fx, fy) = kern.drag_forces(&e, &ed);
            assert!(fx * vx < 0.0 && fy * vy < 0.0);
        }
    }
}
