//! motion.wgsl: the pin's prescribed motion, with the shader's polynomial
//! cos and sin.

use nalgebra::{Vector2, Vector4};

use super::{MirrorReal, lit};

/// motion.wgsl's `PinState`.
pub struct PinState<R: MirrorReal> {
    pub position: Vector2<R>,
    pub velocity: Vector2<R>,
    pub acceleration: Vector2<R>,
}

/// motion.wgsl's `cos_sin_half_turn`: (cos θ, sin θ) from the Taylor series
/// about π/2, with the shader's coefficients and Horner order.
pub fn cos_sin_half_turn<R: MirrorReal>(theta: R) -> Vector2<R> {
    let x = theta - lit::<R>(0.5) * lit::<R>(std::f64::consts::PI);
    let x2 = x * x;
    let horner = |coefficients: &[f64]| {
        let mut acc = lit::<R>(coefficients[0]);
        for &c in &coefficients[1..] {
            acc = lit::<R>(c) - x2 * acc;
        }
        acc
    };
    let sin_x = x * horner(&[
        1.0 / 121645100408832000.0,
        1.0 / 355687428096000.0,
        1.0 / 1307674368000.0,
        1.0 / 6227020800.0,
        1.0 / 39916800.0,
        1.0 / 362880.0,
        1.0 / 5040.0,
        1.0 / 120.0,
        1.0 / 6.0,
        1.0,
    ]);
    let cos_x = horner(&[
        1.0 / 2432902008176640000.0,
        1.0 / 6402373705728000.0,
        1.0 / 20922789888000.0,
        1.0 / 87178291200.0,
        1.0 / 479001600.0,
        1.0 / 3628800.0,
        1.0 / 40320.0,
        1.0 / 720.0,
        1.0 / 24.0,
        0.5,
        1.0,
    ]);
    Vector2::new(-sin_x, cos_x)
}

/// motion.wgsl's `pin_state`: the pin's displacement from its first
/// waypoint at time t.
pub fn pin_state<R: MirrorReal>(
    t: R,
    moves: u32,
    waypoints: &[R; 5],
    periods: &[R; 4],
) -> PinState<R> {
    winch_state(t, moves, waypoints, periods)
}

/// motion.wgsl's `path_segment`.
pub fn path_segment<R: MirrorReal>(t: R, start: R, step: R, segments: u32) -> u32 {
    let zero = lit::<R>(0.0);
    let k = ((t - start).max(zero) / step).floor();
    (k.to_f64() as u32).min(segments - 1)
}

/// motion.wgsl's `path_state`: segment k's cubics (coefficients of τ⁰..τ³
/// in x and in y), straight past the grid.
pub fn path_state<R: MirrorReal>(
    t: R,
    start: R,
    step: R,
    k: u32,
    cx: &Vector4<R>,
    cy: &Vector4<R>,
) -> PinState<R> {
    let (two, three, six) = (lit::<R>(2.0), lit::<R>(3.0), lit::<R>(6.0));
    let tau = t - start - lit::<R>(k as f64) * step;
    let u = tau.max(lit(0.0)).min(step);
    let cubic = |c: &Vector4<R>| c.x + u * (c.y + u * (c.z + u * c.w));
    let rate = |c: &Vector4<R>| c.y + u * (two * c.z + three * u * c.w);
    let second = |c: &Vector4<R>| two * c.z + six * u * c.w;
    let mut out = PinState {
        position: Vector2::new(cubic(cx), cubic(cy)),
        velocity: Vector2::new(rate(cx), rate(cy)),
        acceleration: Vector2::new(second(cx), second(cy)),
    };
    if tau != u {
        out.position += out.velocity * (tau - u);
        out.acceleration = Vector2::zeros();
    }
    out
}

/// The winch's share of [`pin_state`].
fn winch_state<R: MirrorReal>(
    t: R,
    moves: u32,
    waypoints: &[R; 5],
    periods: &[R; 4],
) -> PinState<R> {
    let zero = lit::<R>(0.0);
    let mut out = PinState {
        position: Vector2::zeros(),
        velocity: Vector2::zeros(),
        acceleration: Vector2::zeros(),
    };
    if moves == 0 {
        return out;
    }
    // The shader's running sums of periods, in its order.
    let ends = [
        periods[0],
        periods[0] + periods[1],
        periods[0] + periods[1] + periods[2],
        periods[0] + periods[1] + periods[2] + periods[3],
    ];
    let current = (0..moves.min(4) as usize).find(|&i| t < ends[i]);
    match current {
        Some(i) if t >= zero => {
            let start = if i == 0 { zero } else { ends[i - 1] };
            let (from_x, to_x, period) = (waypoints[i], waypoints[i + 1], periods[i]);
            let rate = lit::<R>(std::f64::consts::PI) / period;
            let cs = cos_sin_half_turn(rate * (t - start));
            let half_span = lit::<R>(0.5) * (to_x - from_x);
            out.position = Vector2::new(
                from_x - waypoints[0] + half_span * (lit::<R>(1.0) - cs.x),
                zero,
            );
            out.velocity = Vector2::new(half_span * rate * cs.y, zero);
            out.acceleration = Vector2::new(half_span * rate * rate * cs.x, zero);
        }
        None if t >= zero => {
            out.position = Vector2::new(waypoints[moves as usize] - waypoints[0], zero);
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::kernel::{
        FunctionKernel, check_both_precisions, random_cases, reals, uniform,
    };
    use super::*;

    #[test]
    fn polynomial_cos_sin_is_exact_to_f64_on_the_half_turn() {
        for k in 0..=1000 {
            let theta = std::f64::consts::PI * k as f64 / 1000.0;
            let cs = cos_sin_half_turn(theta);
            assert!((cs.x - theta.cos()).abs() < 1e-14, "cos {theta}");
            assert!((cs.y - theta.sin()).abs() < 1e-14, "sin {theta}");
        }
    }

    fn cos_sin_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        reals(cos_sin_half_turn(x[0]).iter())
    }

    #[test]
    fn cos_sin_half_turn_on_the_adapter_matches_the_mirror() {
        let kernel = FunctionKernel {
            name: "cos_sin_half_turn",
            inputs: 1,
            outputs: 2,
            body: "fn run() { put2(0u, cos_sin_half_turn(arg(0u))); }",
        };
        let cases = random_cases(7, 512, |rng| vec![uniform(rng, 0.0, std::f64::consts::PI)]);
        check_both_precisions(
            &kernel,
            &cases,
            cos_sin_mirror::<f32>,
            cos_sin_mirror::<f64>,
            (1e-6, 1e-15),
        );
    }

    /// t, the move count (0 to 4, as a real), five waypoints, four
    /// periods.
    fn pin_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let moves = x[1].to_f64() as u32;
        let waypoints: [R; 5] = std::array::from_fn(|i| x[2 + i]);
        let periods: [R; 4] = std::array::from_fn(|i| x[7 + i]);
        state_reals(&pin_state(x[0], moves, &waypoints, &periods))
    }

    fn state_reals<R: MirrorReal>(pin: &PinState<R>) -> Vec<f64> {
        reals(
            pin.position
                .iter()
                .chain(pin.velocity.iter())
                .chain(pin.acceleration.iter()),
        )
    }

    #[test]
    fn pin_state_on_the_adapter_matches_the_mirror() {
        // Every move count, and times before, during each move, and after
        // the last one (the pin at rest at its last waypoint).
        let kernel = FunctionKernel {
            name: "pin_state",
            inputs: 11,
            outputs: 6,
            body: "fn run() {
                let waypoints = array<real, 5>(arg(2u), arg(3u), arg(4u), arg(5u), arg(6u));
                let periods = array<real, 4>(arg(7u), arg(8u), arg(9u), arg(10u));
                let pin = pin_state(arg(0u), u32(arg(1u)), waypoints, periods);
                put2(0u, pin.position);
                put2(2u, pin.velocity);
                put2(4u, pin.acceleration);
            }",
        };
        let cases = random_cases(8, 1024, |rng| {
            let moves = uniform(rng, 0.0, 5.0).floor();
            let periods: Vec<f64> = (0..4).map(|_| uniform(rng, 0.2, 1.5)).collect();
            let end: f64 = periods.iter().take(moves as usize).sum();
            let mut x = vec![uniform(rng, -0.1, end + 0.5), moves];
            x.extend((0..5).map(|_| uniform(rng, -0.4, 0.4)));
            x.extend(periods);
            x
        });
        check_both_precisions(
            &kernel,
            &cases,
            pin_mirror::<f32>,
            pin_mirror::<f64>,
            (1e-5, 1e-13),
        );
    }

    /// t, the grid's start and step, its segment count (a real), and one
    /// segment's cubics in x and y: the segment path_segment picks, its
    /// state.
    fn path_mirror<R: MirrorReal>(x: &[R]) -> Vec<f64> {
        let segments = x[3].to_f64() as u32;
        let k = path_segment(x[0], x[1], x[2], segments);
        let (cx, cy) = (
            Vector4::new(x[4], x[5], x[6], x[7]),
            Vector4::new(x[8], x[9], x[10], x[11]),
        );
        let mut out = vec![k as f64];
        out.extend(state_reals(&path_state(x[0], x[1], x[2], k, &cx, &cy)));
        out
    }

    #[test]
    fn path_state_on_the_adapter_matches_the_mirror() {
        // Times before the grid, on it and past it.
        let kernel = FunctionKernel {
            name: "path_state",
            inputs: 12,
            outputs: 7,
            body: "fn run() {
                let k = path_segment(arg(0u), arg(1u), arg(2u), u32(arg(3u)));
                let cx = real4(arg(4u), arg(5u), arg(6u), arg(7u));
                let cy = real4(arg(8u), arg(9u), arg(10u), arg(11u));
                let pin = path_state(arg(0u), arg(1u), arg(2u), k, cx, cy);
                put(0u, real(k));
                put2(1u, pin.position);
                put2(3u, pin.velocity);
                put2(5u, pin.acceleration);
            }",
        };
        let cases = random_cases(9, 1024, |rng| {
            let (start, step) = (uniform(rng, -0.2, 0.2), uniform(rng, 1e-3, 0.1));
            let segments = uniform(rng, 1.0, 50.0).floor();
            let end = start + step * segments;
            let mut x = vec![uniform(rng, start - 0.3, end + 0.3), start, step, segments];
            x.extend((0..8).map(|_| uniform(rng, -2.0, 2.0)));
            x
        });
        check_both_precisions(
            &kernel,
            &cases,
            path_mirror::<f32>,
            path_mirror::<f64>,
            (1e-5, 1e-13),
        );
    }
}
