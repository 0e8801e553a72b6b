// The semi-implicit step's E blocks (E = G U of the step's block LU of
// M + h/2 C_D), kept in private memory from the forward sweep to the back
// substitution. The tip's is never needed, so COUPLING_NODES is
// MAX_NODES − 1. Only the semi-implicit pipeline includes this module:
// private arrays take per-thread memory whether a branch reads them or
// not, so the explicit pipeline gets coupling_none.wgsl instead.

var<private> coupling: array<real4x4, COUPLING_NODES>;

fn store_coupling(node: u32, e: real4x4) {
    coupling[node] = e;
}

fn stored_coupling(node: u32) -> real4x4 {
    return coupling[node];
}
