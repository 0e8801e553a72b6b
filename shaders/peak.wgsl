// Pipeline stage "peak": the adapter's multiply-add throughput, the yardstick
// for the step stage's achieved GFLOP/s. Independent vec4 chains keep every
// lane busy without memory traffic; each entry point runs 16 vec4 fma per
// iteration, and the engine takes the faster of the two. How many chains are
// best depends on the target: eight hide the latency of a GPU's pipelines,
// four fit a CPU's vector registers (on lavapipe, 2026-11-23, eight chains
// reached 3–5 % less). Each `fma` counts as two flops whether the
// driver fuses it or not (lavapipe does not).
//
// Needs: a precision module.

const PEAK_ITERATIONS: u32 = 2048u;
override WORKGROUP_SIZE: u32 = 64u;

@group(0) @binding(0) var<storage, read_write> sink: array<real4>;

fn start(id: u32) -> real4 {
    return real4(real(id % 7u) * 1e-3);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn eight_chains(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = start(id.x);
    let m = real4(0.999) - c;
    let k = real4(1e-3);
    var c0 = c;
    var c1 = c0 + 1.0;
    var c2 = c0 + 2.0;
    var c3 = c0 + 3.0;
    var c4 = c0 + 4.0;
    var c5 = c0 + 5.0;
    var c6 = c0 + 6.0;
    var c7 = c0 + 7.0;
    for (var i = 0u; i < PEAK_ITERATIONS; i++) {
        c0 = fma(c0, m, k); c1 = fma(c1, m, k); c2 = fma(c2, m, k); c3 = fma(c3, m, k);
        c4 = fma(c4, m, k); c5 = fma(c5, m, k); c6 = fma(c6, m, k); c7 = fma(c7, m, k);
        c0 = fma(c0, m, k); c1 = fma(c1, m, k); c2 = fma(c2, m, k); c3 = fma(c3, m, k);
        c4 = fma(c4, m, k); c5 = fma(c5, m, k); c6 = fma(c6, m, k); c7 = fma(c7, m, k);
    }
    sink[id.x] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn four_chains(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = start(id.x);
    let m = real4(0.999) - c;
    let k = real4(1e-3);
    var c0 = c;
    var c1 = c0 + 1.0;
    var c2 = c0 + 2.0;
    var c3 = c0 + 3.0;
    for (var i = 0u; i < PEAK_ITERATIONS; i++) {
        c0 = fma(c0, m, k); c1 = fma(c1, m, k); c2 = fma(c2, m, k); c3 = fma(c3, m, k);
        c0 = fma(c0, m, k); c1 = fma(c1, m, k); c2 = fma(c2, m, k); c3 = fma(c3, m, k);
        c0 = fma(c0, m, k); c1 = fma(c1, m, k); c2 = fma(c2, m, k); c3 = fma(c3, m, k);
        c0 = fma(c0, m, k); c1 = fma(c1, m, k); c2 = fma(c2, m, k); c3 = fma(c3, m, k);
    }
    sink[id.x] = c0 + c1 + c2 + c3;
}
