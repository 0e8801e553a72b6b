// The explicit pipeline's stand-in for coupling_private.wgsl: its factors
// come from the mesh buffer, so it keeps no E blocks. step.wgsl calls these
// only under SEMI_IMPLICIT, which is false wherever this module is used.

fn store_coupling(node: u32, e: real4x4) {}

fn stored_coupling(node: u32) -> real4x4 {
    return real4x4();
}
