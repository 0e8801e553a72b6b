// The prescribed motion of node 0 as a displacement from its reference
// position: at rest (the drop's pin), half-cosine winch moves along x
// (docs/model.md §4.2; mirrors WinchMotion in src/scenario/winch.rs), or
// a planar path, a cubic per segment of a uniform time grid (the natural
// spline of src/scenario/path.rs, exactly: docs/gpu.md; the arm's end
// point, docs/constrained.md §5).
//
// cos and sin come from polynomials, not the builtins: WGSL has no f64
// trigonometry, and Vulkan allows the f32 builtins an absolute error of 2⁻¹¹,
// far more than the 1e-4 m the engine must hold.
//
// CPU mirror, operation for operation: src/gpu/mirror/motion.rs.

const MAX_WINCH_MOVES: u32 = 4u;
const PI: real = 3.14159265358979323846;

struct PinState {
    position: real2,
    velocity: real2,
    acceleration: real2,
}

// (cos θ, sin θ) for θ ∈ [0, π], as Taylor series about π/2 (error below
// 1e-14 on the interval).
fn cos_sin_half_turn(theta: real) -> real2 {
    let x = theta - 0.5 * PI;
    let x2 = x * x;
    // sin x to x¹⁹ and cos x to x²⁰, Horner in x², written out rather than
    // looped over a coefficient table: lavapipe charges every loop iteration
    // against its per-invocation limit, and this runs every step.
    var s: real = 1.0 / 121645100408832000.0;
    s = 1.0 / 355687428096000.0 - x2 * s;
    s = 1.0 / 1307674368000.0 - x2 * s;
    s = 1.0 / 6227020800.0 - x2 * s;
    s = 1.0 / 39916800.0 - x2 * s;
    s = 1.0 / 362880.0 - x2 * s;
    s = 1.0 / 5040.0 - x2 * s;
    s = 1.0 / 120.0 - x2 * s;
    s = 1.0 / 6.0 - x2 * s;
    s = 1.0 - x2 * s;
    let sin_x = x * s;
    var c: real = 1.0 / 2432902008176640000.0;
    c = 1.0 / 6402373705728000.0 - x2 * c;
    c = 1.0 / 20922789888000.0 - x2 * c;
    c = 1.0 / 87178291200.0 - x2 * c;
    c = 1.0 / 479001600.0 - x2 * c;
    c = 1.0 / 3628800.0 - x2 * c;
    c = 1.0 / 40320.0 - x2 * c;
    c = 1.0 / 720.0 - x2 * c;
    c = 1.0 / 24.0 - x2 * c;
    c = 0.5 - x2 * c;
    c = 1.0 - x2 * c;
    // θ = x + π/2: cos θ = −sin x, sin θ = cos x.
    return real2(-sin_x, c);
}

// The pin's displacement from its reference position at time t: winch
// moves along x from the first waypoint (`moves` 0: none).
fn pin_state(t: real, moves: u32, waypoints: array<real, 5>, periods: array<real, 4>) -> PinState {
    var out = PinState(real2(0.0), real2(0.0), real2(0.0));
    var start: real = 0.0;
    // Unrolled by hand: at most MAX_WINCH_MOVES moves, no shader loop.
    if (moves > 0u) {
        var moving = false;
        var from_x: real = 0.0;
        var to_x: real = 0.0;
        var period: real = 1.0;
        if (t < periods[0]) {
            moving = true; from_x = waypoints[0]; to_x = waypoints[1]; period = periods[0]; start = 0.0;
        } else if (moves > 1u && t < periods[0] + periods[1]) {
            moving = true; from_x = waypoints[1]; to_x = waypoints[2]; period = periods[1]; start = periods[0];
        } else if (moves > 2u && t < periods[0] + periods[1] + periods[2]) {
            moving = true; from_x = waypoints[2]; to_x = waypoints[3]; period = periods[2];
            start = periods[0] + periods[1];
        } else if (moves > 3u && t < periods[0] + periods[1] + periods[2] + periods[3]) {
            moving = true; from_x = waypoints[3]; to_x = waypoints[4]; period = periods[3];
            start = periods[0] + periods[1] + periods[2];
        }
        if (moving && t >= 0.0) {
            let rate = PI / period;
            let cs = cos_sin_half_turn(rate * (t - start));
            let half_span = 0.5 * (to_x - from_x);
            out.position = real2(from_x - waypoints[0] + half_span * (1.0 - cs.x), 0.0);
            out.velocity = real2(half_span * rate * cs.y, 0.0);
            out.acceleration = real2(half_span * rate * rate * cs.x, 0.0);
        } else if (t >= 0.0) {
            out.position = real2(waypoints[moves] - waypoints[0], 0.0);
        }
    }
    return out;
}

// The segment of a path on a uniform grid (`segments` cubics of `step`
// from `start`) that holds t; the first or the last outside the grid.
fn path_segment(t: real, start: real, step: real, segments: u32) -> u32 {
    let k = floor(max(t - start, 0.0) / step);
    return min(u32(k), segments - 1u);
}

// A path's displacement at t from segment k's cubics x(τ) = cx.x + cx.y τ
// + cx.z τ² + cx.w τ³ (and y), τ = t − start − k step: on the segment, the
// cubic; before the grid or past it, on in a straight line at its end
// velocity (the natural spline's end acceleration is zero).
fn path_state(t: real, start: real, step: real, k: u32, cx: real4, cy: real4) -> PinState {
    let tau = t - start - real(k) * step;
    let u = clamp(tau, 0.0, step);
    var out = PinState(
        real2(cx.x + u * (cx.y + u * (cx.z + u * cx.w)), cy.x + u * (cy.y + u * (cy.z + u * cy.w))),
        real2(cx.y + u * (2.0 * cx.z + 3.0 * u * cx.w), cy.y + u * (2.0 * cy.z + 3.0 * u * cy.w)),
        real2(2.0 * cx.z + 6.0 * u * cx.w, 2.0 * cy.z + 6.0 * u * cy.w));
    if (tau != u) {
        out.position += (tau - u) * out.velocity;
        out.acceleration = real2(0.0);
    }
    return out;
}
