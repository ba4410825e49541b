//! Tiny dense linear algebra for the `2k x 2k` middle matrices (k <= m, a handful).
//! Row-major storage.

/// Dot product.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `y = A v` for a row-major `n x n` matrix.
pub(crate) fn mat_vec(a: &[f64], n: usize, v: &[f64]) -> Vec<f64> {
    (0..n).map(|i| dot(&a[i * n..(i + 1) * n], v)).collect()
}

/// In-place lower Cholesky factor of a row-major `n x n` SPD matrix; `false` if a pivot is
/// not positive (the matrix is not numerically positive definite).
fn cholesky(a: &mut [f64], n: usize) -> bool {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
        for i in 0..j {
            a[i * n + j] = 0.0;
        }
    }
    true
}

/// Solves `L L^T x = b` in place with the lower factor `l` from [`cholesky`].
fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let s = b[i] - dot(&l[i * n..i * n + i], &b[..i]);
        b[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[k * n + i] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

/// Factorisation of a symmetric saddle-point matrix `[[-P, B^T], [B, C]]` (`k x k` blocks)
/// with `P` and the Schur complement `C + B P^{-1} B^T` positive definite, as both L-BFGS
/// middle matrices are (Byrd, Lu, Nocedal & Zhu 1995, section 3). Two Cholesky factors
/// replace a general factorisation of the indefinite matrix, whose blocks differ widely in
/// scale.
#[derive(Debug, Clone)]
pub(crate) struct Saddle {
    k: usize,
    p: Vec<f64>,
    b: Vec<f64>,
    schur: Vec<f64>,
}

impl Saddle {
    /// Factorises the row-major `2k x 2k` matrix `a`; `None` if `P` or the Schur complement
    /// is not numerically positive definite.
    pub(crate) fn new(a: &[f64], k: usize) -> Option<Self> {
        let n = 2 * k;
        let mut p = vec![0.0; k * k];
        let mut b = vec![0.0; k * k];
        let mut schur = vec![0.0; k * k];
        for i in 0..k {
            for j in 0..k {
                p[i * k + j] = -a[i * n + j];
                b[i * k + j] = a[(k + i) * n + j];
                schur[i * k + j] = a[(k + i) * n + k + j];
            }
        }
        if !cholesky(&mut p, k) {
            return None;
        }
        // Schur complement C + B P^{-1} B^T, with P^{-1} B^T column by column.
        let pinv_bt: Vec<Vec<f64>> = (0..k)
            .map(|j| {
                let mut col = b[j * k..(j + 1) * k].to_vec();
                cholesky_solve(&p, k, &mut col);
                col
            })
            .collect();
        for i in 0..k {
            for j in 0..k {
                schur[i * k + j] += dot(&b[i * k..(i + 1) * k], &pinv_bt[j]);
            }
        }
        cholesky(&mut schur, k).then_some(Self { k, p, b, schur })
    }

    /// Solves `[[-P, B^T], [B, C]] [u1; u2] = [v1; v2]`:
    /// `(C + B P^{-1} B^T) u2 = v2 + B P^{-1} v1`, then `u1 = P^{-1} (B^T u2 - v1)`.
    pub(crate) fn solve(&self, v: &[f64]) -> Vec<f64> {
        let k = self.k;
        let mut pv1 = v[..k].to_vec();
        cholesky_solve(&self.p, k, &mut pv1);
        let mut u2: Vec<f64> = (0..k)
            .map(|i| v[k + i] + dot(&self.b[i * k..(i + 1) * k], &pv1))
            .collect();
        cholesky_solve(&self.schur, k, &mut u2);
        let mut u1: Vec<f64> = (0..k)
            .map(|j| (0..k).map(|i| self.b[i * k + j] * u2[i]).sum::<f64>() - v[j])
            .collect();
        cholesky_solve(&self.p, k, &mut u1);
        u1.extend(u2);
        u1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saddle_solve_inverts_the_matrix() {
        // P = [[2, 0.5], [0.5, 1]], B = [[0.3, -1], [2, 0.1]], C = [[1, 0.2], [0.2, 0.5]].
        let a = [
            -2.0, -0.5, 0.3, 2.0, //
            -0.5, -1.0, -1.0, 0.1, //
            0.3, -1.0, 1.0, 0.2, //
            2.0, 0.1, 0.2, 0.5,
        ];
        let f = Saddle::new(&a, 2).unwrap();
        let x = [1.0, -2.0, 0.5, 3.0];
        let u = f.solve(&mat_vec(&a, 4, &x));
        for (p, q) in u.iter().zip(&x) {
            assert!((p - q).abs() < 1e-13, "{u:?}");
        }
        // A positive (1,1) block is not of saddle form.
        let mut bad = a;
        bad[0] = 2.0;
        assert!(Saddle::new(&bad, 2).is_none());
    }
}
