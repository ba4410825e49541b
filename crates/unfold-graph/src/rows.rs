//! Points copied row-major, and the one exact distance formula every search uses.

use nalgebra::DMatrix;

/// The rows of an n x p matrix stored contiguously (row-major), so a point is a slice.
pub(crate) struct Rows {
    p: usize,
    data: Vec<f64>,
}

impl Rows {
    /// Copies the rows of `m` (which has at least one column: inputs are validated first).
    pub(crate) fn new(m: &DMatrix<f64>) -> Self {
        let (n, p) = m.shape();
        let mut data = vec![0.0; n * p];
        for c in 0..p {
            for (r, &v) in m.column(c).iter().enumerate() {
                data[r * p + c] = v;
            }
        }
        Rows { p, data }
    }

    /// Wraps row-major `data` of points with `p` coordinates.
    pub(crate) fn from_row_major(p: usize, data: Vec<f64>) -> Self {
        debug_assert!(p > 0 && data.len() % p == 0);
        Rows { p, data }
    }

    /// Number of points.
    pub(crate) fn len(&self) -> usize {
        self.data.len() / self.p
    }

    /// Number of coordinates per point.
    pub(crate) fn dim(&self) -> usize {
        self.p
    }

    /// Point `i`.
    pub(crate) fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.p..(i + 1) * self.p]
    }
}

/// The exact squared Euclidean distance `sum_c (a_c - b_c)^2`, summed in coordinate order.
///
/// Every search in this crate (kd-tree, brute force, epsilon ball, reweighting) ends with
/// this function, so they agree to the last bit, and `sq_dist(a, b) == sq_dist(b, a)`.
/// The kd-tree's pruning bounds rely on the summation order (see `kdtree`).
pub(crate) fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        let d = x - y;
        s += d * d;
    }
    s
}
