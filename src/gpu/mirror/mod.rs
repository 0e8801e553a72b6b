//! The CPU mirror of the "step" pipeline stage: each WGSL module transcribed
//! operation for operation into the Rust file of the same name, generic over
//! the shader's `real` (f32 or f64), and the stage itself ([`step`]) reading
//! the very arrays the engine uploads ([`super::batch::chunk_data`]).
//!
//! | WGSL module | mirror |
//! |---|---|
//! | `matrix.wgsl` | [`matrix`] |
//! | `node_blocks.wgsl` | [`node_blocks`] |
//! | `element.wgsl` | [`element`] |
//! | `tangent.wgsl` | [`tangent`] |
//! | `motion.wgsl` | [`motion`] |
//! | `step.wgsl` (with `coupling_*.wgsl`) | [`step`] |
//! | `step_workgroup.wgsl` | [`step`]: the same arithmetic per simulation, spread over lanes |
//! | `step_adaptive.wgsl` | [`adaptive`]: the same arithmetic per simulation, its lanes and barriers aside (its factorization and solve from both ends: [`twisted`]) |
//!
//! The workgroup layout has no mirror of its own: per simulation it does
//! [`step`]'s operations in [`step`]'s order, its 4×4 products column by
//! column (a node's force and damping block summed as b + a instead of
//! a + b, which is exact), and
//! `tests/gpu.rs` holds it to [`step`] and to the thread layout bit for bit
//! on lavapipe. Its phases and barriers are what it adds, and a CPU
//! transcription of those would check nothing the GPU comparison does not.
//!
//! Why it exists: the GPU and the CPU explicit solver share a scheme but not
//! a formulation (displacement form, block factors, f32), so a difference
//! between them could be the shader's code or its precision. The mirror runs
//! the shader's formulation on the CPU, where each can be checked apart:
//! mirror f64 against the CPU explicit solver (the formulation), mirror
//! against the GPU in the same precision (the WGSL and its upload), and
//! mirror f32 against mirror f64 (rounding alone, with IEEE arithmetic the
//! CPU guarantees and a shader compiler need not). Kept beside the shaders as
//! vello keeps `src/cpu/`; a change to a shader's arithmetic belongs here too.
//!
//! Each shared function is also run alone: the tests of each file run its
//! WGSL function in a small kernel on the adapter (lavapipe in CI) on many
//! inputs and compare with the mirror (`kernel` is the harness), so that a
//! slip in one function shows as that function's failure, not as a drift two
//! seconds into a simulation.
//!
//! Not a fast path: one thread per simulation, no SIMD.

pub mod adaptive;
pub mod element;
#[cfg(test)]
mod kernel;
pub mod matrix;
pub mod motion;
pub mod node_blocks;
pub mod step;
pub mod tangent;
pub mod twisted;

use nalgebra::{RealField, Vector2, Vector4};

use super::abi::Real;

pub use step::{mirror_batch, run_prepared};

/// The arithmetic a shader's `real` offers, on the CPU.
pub trait MirrorReal: Real + RealField + Copy {}
impl MirrorReal for f32 {}
impl MirrorReal for f64 {}

/// A literal in the shader's precision.
fn lit<R: MirrorReal>(x: f64) -> R {
    <R as Real>::from_f64(x)
}

/// An uploaded vec4 in the shader's precision.
fn lit4<R: MirrorReal>(v: &[f64; 4]) -> Vector4<R> {
    Vector4::new(lit(v[0]), lit(v[1]), lit(v[2]), lit(v[3]))
}

/// WGSL's `v.xy`.
fn xy<R: MirrorReal>(v: &Vector4<R>) -> Vector2<R> {
    Vector2::new(v.x, v.y)
}

/// WGSL's `v.zw`.
fn zw<R: MirrorReal>(v: &Vector4<R>) -> Vector2<R> {
    Vector2::new(v.z, v.w)
}

/// WGSL's `real4(p, q)`.
fn join<R: MirrorReal>(p: Vector2<R>, q: Vector2<R>) -> Vector4<R> {
    Vector4::new(p.x, p.y, q.x, q.y)
}

/// Σ_i s_i (a.xy, a.zw, b.xy, b.zw)_i, in the shader's order.
fn combine<R: MirrorReal>(s: &Vector4<R>, a: &Vector4<R>, b: &Vector4<R>) -> Vector2<R> {
    xy(a) * s.x + zw(a) * s.y + xy(b) * s.z + zw(b) * s.w
}
