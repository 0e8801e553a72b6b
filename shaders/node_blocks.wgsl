// A node's 4×4 blocks from the compact forms the step stage keeps: the
// mesh's mass matrix as 2×2 matrices over (position, slope) times the
// identity over (x, y) (MeshMass in src/gpu/mass_factor.rs), and node 0's
// rows with its prescribed coordinates (x, y) replaced (docs/model.md §3). Separate
// from step.wgsl, which holds the bindings, so that a test kernel can run
// each function alone (src/gpu/mirror/node_blocks.rs mirrors them).
//
// Needs: a precision module.

// m + k ⊗ I₂ for a row-major 2×2 k: k_ij at (2i + c, 2j + c), c = 0, 1.
// Written entry by entry so that the eight zeros of k ⊗ I₂ cost nothing.
fn plus_node_mass(m: real4x4, k: real4) -> real4x4 {
    return real4x4(real4(m[0].x + k.x, m[0].y, m[0].z + k.z, m[0].w),
                   real4(m[1].x, m[1].y + k.x, m[1].z, m[1].w + k.z),
                   real4(m[2].x + k.y, m[2].y, m[2].z + k.w, m[2].w),
                   real4(m[3].x, m[3].y + k.y, m[3].z, m[3].w + k.w));
}

// (kᵀ ⊗ I₂) v: the explicit solve's coupling to the previous node, L = Uᵀ
// for the MeshMass coupling k, times v, without the eight zeros.
fn coupling_transpose_times(k: real4, v: real4) -> real4 {
    return real4(k.x * v.xy + k.z * v.zw, k.y * v.xy + k.w * v.zw);
}

// (k ⊗ I₂) v: a node's mass block (its diagonal, or its coupling to the
// next node) times an acceleration, without the eight zeros; the implicit
// scheme's residual f − M ä (src/gpu/mirror/adaptive.rs).
fn node_mass_times(k: real4, v: real4) -> real4 {
    return real4(k.x * v.xy + k.y * v.zw, k.z * v.xy + k.w * v.zw);
}

// Node 0's pivot block and coupling with its prescribed rows (x, y)
// replaced: identity rows in the pivot, zero rows in the coupling.
fn pin_rows_pivot(m: real4x4) -> real4x4 {
    return real4x4(real4(1.0, 0.0, m[0].zw), real4(0.0, 1.0, m[1].zw),
                   real4(0.0, 0.0, m[2].zw), real4(0.0, 0.0, m[3].zw));
}

fn pin_rows_coupling(m: real4x4) -> real4x4 {
    return real4x4(real4(0.0, 0.0, m[0].zw), real4(0.0, 0.0, m[1].zw),
                   real4(0.0, 0.0, m[2].zw), real4(0.0, 0.0, m[3].zw));
}
