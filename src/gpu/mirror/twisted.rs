//! step_adaptive.wgsl's factorization and solve of the block-tridiagonal
//! iteration matrix from both its ends (a twisted block factorization):
//! the pin's side eliminates nodes 0 .. m − 1 downward (G = (D − L E)⁻¹,
//! E = G U, a block LU), the tip's side nodes n .. m + 1 upward
//! (H = (D − U F)⁻¹, F = H L), and the middle node m = ⌊(n + 1)/2⌋ takes
//! both, its pivot D − L E − U F. On the GPU each side is one lane's chain
//! of about n/2 nodes, half a one-ended elimination's, the two lanes
//! running the same instructions on other addresses. Here the sides run
//! one after the other, each in the stage's order, which is all the
//! arithmetic needs: neither side reads what the other writes until the
//! middle node.

use nalgebra::{Matrix4, Vector4};

use super::matrix::inverse4;
use super::node_blocks::{pin_rows, plus_node_mass};
use super::{MirrorReal, lit};

/// The end a side of the factorization starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Node 0, whose position rows the pin replaces (the stage's side 0).
    Pin,
    /// Node n (the stage's side 1).
    Tip,
}

impl End {
    const BOTH: [End; 2] = [End::Pin, End::Tip];
}

/// The node both sides end at.
fn middle_node(n: usize) -> usize {
    n.div_ceil(2)
}

/// The nodes `end`'s side eliminates: 0 .. m − 1 or n .. m + 1.
fn side_length(end: End, n: usize) -> usize {
    match end {
        End::Pin => middle_node(n),
        End::Tip => n - middle_node(n),
    }
}

/// The side's `i`-th node.
fn side_node(end: End, i: usize, n: usize) -> usize {
    match end {
        End::Pin => i,
        End::Tip => n - i,
    }
}

/// The assembled iteration matrix (each node's diagonal block without its
/// mass in `inverse`, its couplings L and U in `lower` and `upper`, with
/// the mass couplings), then its factors in place: per node of the pin's
/// side L, G and E; at the middle L, G and U; per node of the tip's side
/// F, H and U.
pub struct Factors<R: MirrorReal> {
    pub lower: Vec<Matrix4<R>>,
    pub inverse: Vec<Matrix4<R>>,
    pub upper: Vec<Matrix4<R>>,
    /// The step it was factored for; 0 when there is none.
    pub step_s: R,
}

impl<R: MirrorReal> Factors<R> {
    pub fn new(nodes: usize) -> Self {
        Self {
            lower: vec![Matrix4::zeros(); nodes],
            inverse: vec![Matrix4::zeros(); nodes],
            upper: vec![Matrix4::zeros(); nodes],
            step_s: lit(0.0),
        }
    }

    /// The coupling blocks towards the nodes `end`'s side has eliminated
    /// and away from them.
    fn couplings_mut(&mut self, end: End) -> (&mut [Matrix4<R>], &mut [Matrix4<R>]) {
        match end {
            End::Pin => (&mut self.lower, &mut self.upper),
            End::Tip => (&mut self.upper, &mut self.lower),
        }
    }

    /// Factors the assembled matrix of n elements whose node k has the mass
    /// diagonal `mass_diagonal(k)`: both sides, then the middle
    /// (`factor_side`, `factor_middle`). False: a pivot block is singular
    /// (or not finite); the factors are then partly overwritten.
    pub fn factor(&mut self, n: usize, mass_diagonal: impl Fn(usize) -> Vector4<R>) -> bool {
        End::BOTH
            .iter()
            .all(|&end| self.factor_side(end, n, &mass_diagonal))
            && self.factor_middle(n, mass_diagonal(middle_node(n)))
    }

    fn factor_side(
        &mut self,
        end: End,
        n: usize,
        mass_diagonal: &impl Fn(usize) -> Vector4<R>,
    ) -> bool {
        let mut eliminated = Matrix4::zeros();
        for i in 0..side_length(end, n) {
            let k = side_node(end, i, n);
            let mut pivot = plus_node_mass(&self.inverse[k], &mass_diagonal(k));
            let (towards, away) = self.couplings_mut(end);
            let mut coupling = away[k];
            if k == 0 {
                pivot = pin_rows(&pivot, true);
                coupling = pin_rows(&coupling, false);
            }
            if i > 0 {
                pivot -= towards[k] * eliminated;
            }
            let g = inverse4(&pivot);
            if !g.iter().all(|x| x.is_finite()) {
                return false;
            }
            eliminated = g * coupling;
            away[k] = eliminated;
            self.inverse[k] = g;
        }
        true
    }

    fn factor_middle(&mut self, n: usize, mass_diagonal: Vector4<R>) -> bool {
        let m = middle_node(n);
        let mut pivot =
            plus_node_mass(&self.inverse[m], &mass_diagonal) - self.lower[m] * self.upper[m - 1];
        if m < n {
            pivot -= self.upper[m] * self.lower[m + 1];
        }
        let g = inverse4(&pivot);
        if !g.iter().all(|x| x.is_finite()) {
            return false;
        }
        self.inverse[m] = g;
        true
    }

    /// Solves the factored system in place: each side's forward sweep
    /// (y = G (r − L y') downward, z = H (r − U z') upward), the middle
    /// node from both, then each side's back substitution (x = y − E x',
    /// x = z − F x').
    pub fn solve(&self, r: &mut [Vector4<R>]) {
        let n = r.len() - 1;
        for end in End::BOTH {
            let towards = match end {
                End::Pin => &self.lower,
                End::Tip => &self.upper,
            };
            let mut eliminated = Vector4::zeros();
            for i in 0..side_length(end, n) {
                let k = side_node(end, i, n);
                let mut rk = r[k];
                if i > 0 {
                    rk -= towards[k] * eliminated;
                }
                eliminated = self.inverse[k] * rk;
                r[k] = eliminated;
            }
        }
        let m = middle_node(n);
        let mut rm = r[m] - self.lower[m] * r[m - 1];
        if m < n {
            rm -= self.upper[m] * r[m + 1];
        }
        r[m] = self.inverse[m] * rm;
        for k in (0..m).rev() {
            r[k] -= self.upper[k] * r[k + 1];
        }
        for k in m + 1..=n {
            r[k] -= self.lower[k] * r[k - 1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diagonally dominant, unsymmetric block-tridiagonal matrix of
    /// `n + 1` nodes, as dense rows.
    fn matrix(n: usize) -> (Factors<f64>, Vec<Vec<f64>>) {
        let size = 4 * (n + 1);
        let mut dense = vec![vec![0.0; size]; size];
        let mut f = Factors::new(n + 1);
        let entry = |k: usize, r: usize, c: usize, salt: f64| {
            ((k * 31 + r * 7 + c * 3) as f64 * 0.37 + salt).sin()
        };
        for k in 0..=n {
            f.inverse[k] =
                Matrix4::from_fn(|r, c| entry(k, r, c, 0.1) + if r == c { 8.0 } else { 0.0 });
            if k < n {
                f.upper[k] = Matrix4::from_fn(|r, c| entry(k, r, c, 1.3));
                f.lower[k + 1] = Matrix4::from_fn(|r, c| entry(k, r, c, 2.9));
            }
        }
        let mass = |_k: usize| Vector4::new(1.0, 1.0, 0.5, 0.5);
        for k in 0..=n {
            // The mass diagonal's layout is plus_node_mass's: compare
            // through it rather than restate it.
            let d = plus_node_mass(&f.inverse[k], &mass(k));
            let d = if k == 0 { pin_rows(&d, true) } else { d };
            let u = if k == 0 {
                pin_rows(&f.upper[0], false)
            } else {
                f.upper[k]
            };
            for r in 0..4 {
                for c in 0..4 {
                    dense[4 * k + r][4 * k + c] = d[(r, c)];
                    if k < n {
                        dense[4 * k + r][4 * (k + 1) + c] = u[(r, c)];
                        dense[4 * (k + 1) + r][4 * k + c] = f.lower[k + 1][(r, c)];
                    }
                }
            }
        }
        assert!(f.factor(n, mass));
        (f, dense)
    }

    /// The twisted factors solve the matrix they were made from, at every
    /// n from one element up (odd and even, the middle at either end).
    #[test]
    fn the_twisted_solve_inverts_the_matrix() {
        for n in 1..=9 {
            let (f, dense) = matrix(n);
            let x: Vec<Vector4<f64>> = (0..=n)
                .map(|k| Vector4::from_fn(|r, _| ((4 * k + r) as f64 * 0.71).cos()))
                .collect();
            let flat: Vec<f64> = x.iter().flat_map(|v| v.iter().copied()).collect();
            let mut r: Vec<Vector4<f64>> = (0..=n)
                .map(|k| {
                    Vector4::from_fn(|row, _| {
                        dense[4 * k + row]
                            .iter()
                            .zip(&flat)
                            .map(|(a, b)| a * b)
                            .sum()
                    })
                })
                .collect();
            f.solve(&mut r);
            for (got, want) in r.iter().zip(&x) {
                assert!((got - want).amax() < 1e-12, "n = {n}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn the_sides_and_the_middle_cover_every_node_once() {
        for n in 1..=9 {
            let m = middle_node(n);
            let mut nodes: Vec<usize> = End::BOTH
                .iter()
                .flat_map(|&end| (0..side_length(end, n)).map(move |i| side_node(end, i, n)))
                .collect();
            nodes.push(m);
            nodes.sort_unstable();
            assert_eq!(nodes, (0..=n).collect::<Vec<_>>(), "n = {n}");
            assert!(side_length(End::Pin, n) >= side_length(End::Tip, n));
            assert!(side_length(End::Pin, n) - side_length(End::Tip, n) <= 1);
        }
    }
}
