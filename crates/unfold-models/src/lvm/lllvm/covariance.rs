//! The covariances of a fitted posterior, of either family ([`super::Posterior`]).

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// A covariance over the n dx latent coordinates (or the maps' n dx columns) in the
/// coordinate-major layout (index `r n + i`): the full family's dense (n dx) x (n dx)
/// matrix, or the per-point family's dx x dx blocks, zero between points.
///
/// It is stored as one matrix, so model files keep their layout: square (n dx) x (n dx)
/// for the full family, dx x (n dx) with the blocks side by side (block `i` in the
/// columns `i dx .. (i + 1) dx`) for the per-point one. The shapes differ whenever n > 1.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Covariance(DMatrix<f64>);

impl Covariance {
    /// The full family's covariance.
    pub fn full(m: DMatrix<f64>) -> Covariance {
        Covariance(m)
    }

    /// The per-point family's covariance from its blocks (dx x dx each).
    pub fn per_point(blocks: &[DMatrix<f64>]) -> Covariance {
        let dx = blocks.first().map_or(0, |b| b.nrows());
        let mut m = DMatrix::zeros(dx, dx * blocks.len());
        for (i, b) in blocks.iter().enumerate() {
            m.columns_mut(i * dx, dx).copy_from(b);
        }
        Covariance(m)
    }

    /// Whether this is a per-point (block-diagonal) covariance.
    pub fn is_per_point(&self) -> bool {
        self.0.nrows() != self.0.ncols()
    }

    /// The stored matrix (see the type's docs).
    pub fn stored(&self) -> &DMatrix<f64> {
        &self.0
    }

    /// The dx x dx block of point `i` among `n`.
    pub fn block(&self, n: usize, dx: usize, i: usize) -> DMatrix<f64> {
        if self.is_per_point() {
            self.0.columns(i * dx, dx).into_owned()
        } else {
            DMatrix::from_fn(dx, dx, |r, s| self.0[(r * n + i, s * n + i)])
        }
    }

    /// `sum_b Sigma[(s n + b, r n + a)] v_b`: coordinate s of every point against
    /// coordinate r of point a, contracted with `v` (length at least n).
    pub fn column_dot(&self, n: usize, s: usize, r: usize, a: usize, v: &[f64]) -> f64 {
        if self.is_per_point() {
            let dx = self.0.nrows();
            self.0[(s, a * dx + r)] * v[a]
        } else {
            let column = self.0.view((s * n, r * n + a), (n, 1));
            column.iter().zip(v).map(|(c, x)| c * x).sum()
        }
    }

    /// Whether its shape is the full family's or the per-point family's for n points of
    /// dimension dx.
    pub fn has_shape_for(&self, n: usize, dx: usize) -> bool {
        let shape = self.0.shape();
        shape == (n * dx, n * dx) || shape == (dx, n * dx)
    }
}
