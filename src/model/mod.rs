//! Physics of the planar ANCF tether in f64 (docs/model.md §1–3): parameters, the
//! element, the assembled tether and the motion prescribed at node 0.

pub mod element;
pub mod params;
pub mod tether;

pub use params::TetherParams;
pub use tether::Tether;

/// Position, velocity and acceleration of node 0 at time t (docs/model.md §3). The
/// solvers impose it through the rheonomic partition, so it needs analytic
/// derivatives, not finite differences.
pub trait PinMotion: Send + Sync {
    fn position(&self, t: f64) -> [f64; 2];
    fn velocity(&self, t: f64) -> [f64; 2];
    fn acceleration(&self, t: f64) -> [f64; 2];
}

/// A pin that never moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedPin(pub [f64; 2]);

impl PinMotion for FixedPin {
    fn position(&self, _t: f64) -> [f64; 2] {
        self.0
    }
    fn velocity(&self, _t: f64) -> [f64; 2] {
        [0.0; 2]
    }
    fn acceleration(&self, _t: f64) -> [f64; 2] {
        [0.0; 2]
    }
}
