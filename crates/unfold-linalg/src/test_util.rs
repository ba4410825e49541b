//! Test matrices with known structure.

use crate::sparse::CsrMatrix;
use nalgebra::DMatrix;
use rand::Rng;
use rand_distr::StandardNormal;
use unfold_core::seeded_rng;

/// A random n x n matrix with standard normal entries.
pub fn random_matrix(n: usize, m: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = seeded_rng(seed);
    DMatrix::from_fn(n, m, |_, _| rng.sample::<f64, _>(StandardNormal))
}

/// A random symmetric positive definite matrix `G G^T / n + I`.
pub fn random_spd(n: usize, seed: u64) -> DMatrix<f64> {
    let g = random_matrix(n, n, seed);
    &g * g.transpose() / n as f64 + DMatrix::identity(n, n)
}

/// A random symmetric (indefinite) matrix `(G + G^T) / 2`.
pub fn random_sym(n: usize, seed: u64) -> DMatrix<f64> {
    let g = random_matrix(n, n, seed);
    (&g + g.transpose()) * 0.5
}

/// The Laplacian of an `r x c` grid graph (4-neighbour, unit weights).
pub fn grid_laplacian(r: usize, c: usize) -> CsrMatrix {
    let id = |i: usize, j: usize| i * c + j;
    let mut t = Vec::new();
    for i in 0..r {
        for j in 0..c {
            let mut edge = |a: usize, b: usize| {
                t.extend([(a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)]);
            };
            if i + 1 < r {
                edge(id(i, j), id(i + 1, j));
            }
            if j + 1 < c {
                edge(id(i, j), id(i, j + 1));
            }
        }
    }
    CsrMatrix::from_triplets(r * c, r * c, &t)
}

/// `max_j ||A x_j - lambda_j x_j||` over the computed pairs.
pub fn max_residual(a: &DMatrix<f64>, values: &nalgebra::DVector<f64>, x: &DMatrix<f64>) -> f64 {
    (0..x.ncols())
        .map(|j| (a * x.column(j) - x.column(j) * values[j]).norm())
        .fold(0.0, f64::max)
}

/// `||X - U U^T X||_F`: how far the columns of `x` are from the span of the orthonormal
/// columns of `u` (bounds the sines of the principal angles).
pub fn subspace_gap(u: &DMatrix<f64>, x: &DMatrix<f64>) -> f64 {
    (x - u * (u.tr_mul(x))).norm()
}

/// Largest deviation of `X^T X` from the identity.
pub fn orthonormality_error(x: &DMatrix<f64>) -> f64 {
    (x.tr_mul(x) - DMatrix::identity(x.ncols(), x.ncols())).amax()
}

/// The Laplacian of a random graph: each vertex is joined to `deg` random others, with
/// weights in (0.5, 1.5) (repeated edges add up).
pub fn random_graph_laplacian(n: usize, deg: usize, seed: u64) -> CsrMatrix {
    let mut rng = seeded_rng(seed);
    let mut t = Vec::new();
    for a in 0..n {
        for _ in 0..deg {
            let b = rng.random_range(0..n);
            if b != a {
                let w = rng.random_range(0.5..1.5);
                t.extend([(a, a, w), (b, b, w), (a, b, -w), (b, a, -w)]);
            }
        }
    }
    CsrMatrix::from_triplets(n, n, &t)
}
