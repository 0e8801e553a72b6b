// 4×4 block algebra for the semi-implicit scheme's block-tridiagonal solve
// (step.wgsl). Matrices are WGSL's column-major real4x4: m[c][r] is row r,
// column c. Mirrored in src/gpu/mirror/matrix.rs.

// u vᵀ: entry (r, c) = u[r] v[c].
fn outer4(u: real4, v: real4) -> real4x4 {
    return real4x4(u * v.x, u * v.y, u * v.z, u * v.w);
}

// A symmetric 4×4 matrix by its ten distinct entries: the diagonal, and
// above it (0,1), (0,2), (0,3), (1,2) in `upper` and (1,3), (2,3) in
// `upper_rest`. The element damping blocks of nodes (a, a) and (b, b) are
// sums of such outer products; keeping them in this form saves 6 of 16
// products and sums per term.
struct Symmetric4 {
    diagonal: real4,
    upper: real4,
    upper_rest: real2,
}

// (w uᵀ + x vᵀ) for w = α u and x = β v, symmetric: entry (r, c) with r ≤ c
// is w[r] u[c] + x[r] v[c].
fn symmetric_outer_pair(w: real4, u: real4, x: real4, v: real4) -> Symmetric4 {
    return Symmetric4(w * u + x * v,
                      w.xxxy * u.yzwz + x.xxxy * v.yzwz,
                      w.yz * u.ww + x.yz * v.ww);
}

fn symmetric_sum(p: Symmetric4, q: Symmetric4) -> Symmetric4 {
    return Symmetric4(p.diagonal + q.diagonal, p.upper + q.upper, p.upper_rest + q.upper_rest);
}

fn symmetric_full(s: Symmetric4) -> real4x4 {
    let d = s.diagonal;
    let u = s.upper;
    let r = s.upper_rest;
    return real4x4(real4(d.x, u.x, u.y, u.z), real4(u.x, d.y, u.w, r.x),
                   real4(u.y, u.w, d.z, r.y), real4(u.z, r.x, r.y, d.w));
}

// The inverse by cofactors, through the twelve 2×2 minors of the first two
// and the last two rows (Laplace expansion). No pivoting and no loop: the
// blocks inverted are pivots of a symmetric positive definite matrix (or, at
// the pin, one with identity rows), and the expansion's relative error does
// not depend on the different scales of the position and slope coordinates,
// since a diagonal scaling scales every term of a sum alike.
fn inverse4(m: real4x4) -> real4x4 {
    let k = cofactor_minors(m);
    return real4x4(inverse_column(m, k, 0u), inverse_column(m, k, 1u),
                   inverse_column(m, k, 2u), inverse_column(m, k, 3u));
}

// Column c of inverse4(m), with inverse4's arithmetic: the workgroup
// layout's shared solve has four lanes form one column each.
fn inverse4_column(m: real4x4, c: u32) -> real4 {
    return inverse_column(m, cofactor_minors(m), c);
}

// The minors of rows 0–1 (s0…s5) and rows 2–3 (c0…c5), and 1/det.
struct CofactorMinors {
    s0123: real4,
    s45: real2,
    c0123: real4,
    c45: real2,
    inverse_det: real,
}

fn cofactor_minors(m: real4x4) -> CofactorMinors {
    let a00 = m[0].x; let a01 = m[1].x; let a02 = m[2].x; let a03 = m[3].x;
    let a10 = m[0].y; let a11 = m[1].y; let a12 = m[2].y; let a13 = m[3].y;
    let a20 = m[0].z; let a21 = m[1].z; let a22 = m[2].z; let a23 = m[3].z;
    let a30 = m[0].w; let a31 = m[1].w; let a32 = m[2].w; let a33 = m[3].w;
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
    return CofactorMinors(real4(s0, s1, s2, s3), real2(s4, s5),
                          real4(c0, c1, c2, c3), real2(c4, c5), 1.0 / det);
}

// Column c of the inverse from the minors: its four cofactors over det.
fn inverse_column(m: real4x4, k: CofactorMinors, c: u32) -> real4 {
    let s0 = k.s0123.x; let s1 = k.s0123.y; let s2 = k.s0123.z; let s3 = k.s0123.w;
    let s4 = k.s45.x; let s5 = k.s45.y;
    let c0 = k.c0123.x; let c1 = k.c0123.y; let c2 = k.c0123.z; let c3 = k.c0123.w;
    let c4 = k.c45.x; let c5 = k.c45.y;
    let r = k.inverse_det;
    switch (c) {
        case 0u: {
            let a10 = m[0].y; let a11 = m[1].y; let a12 = m[2].y; let a13 = m[3].y;
            return real4((a11 * c5 - a12 * c4 + a13 * c3) * r,
                         (-a10 * c5 + a12 * c2 - a13 * c1) * r,
                         (a10 * c4 - a11 * c2 + a13 * c0) * r,
                         (-a10 * c3 + a11 * c1 - a12 * c0) * r);
        }
        case 1u: {
            let a00 = m[0].x; let a01 = m[1].x; let a02 = m[2].x; let a03 = m[3].x;
            return real4((-a01 * c5 + a02 * c4 - a03 * c3) * r,
                         (a00 * c5 - a02 * c2 + a03 * c1) * r,
                         (-a00 * c4 + a01 * c2 - a03 * c0) * r,
                         (a00 * c3 - a01 * c1 + a02 * c0) * r);
        }
        case 2u: {
            let a30 = m[0].w; let a31 = m[1].w; let a32 = m[2].w; let a33 = m[3].w;
            return real4((a31 * s5 - a32 * s4 + a33 * s3) * r,
                         (-a30 * s5 + a32 * s2 - a33 * s1) * r,
                         (a30 * s4 - a31 * s2 + a33 * s0) * r,
                         (-a30 * s3 + a31 * s1 - a32 * s0) * r);
        }
        default: {
            let a20 = m[0].z; let a21 = m[1].z; let a22 = m[2].z; let a23 = m[3].z;
            return real4((-a21 * s5 + a22 * s4 - a23 * s3) * r,
                         (a20 * s5 - a22 * s2 + a23 * s1) * r,
                         (-a20 * s4 + a21 * s2 - a23 * s0) * r,
                         (a20 * s3 - a21 * s1 + a22 * s0) * r);
        }
    }
}
