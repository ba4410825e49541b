//! Tiny dense linear algebra for the `2k x 2k` middle matrices (k <= m, a handful).
//! Row-major storage.

/// Solves `A X = B` in place by Gaussian elimination with partial pivoting, where `A` is
/// `n x n` and `B` is `n x r` (both row-major). Returns `false` if `A` is numerically singular.
pub(crate) fn solve_in_place(a: &mut [f64], n: usize, b: &mut [f64], r: usize) -> bool {
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return n == 0;
    }
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))
            .unwrap_or(col);
        if a[piv * n + col].abs() <= 1e-14 * scale {
            return false;
        }
        if piv != col {
            for j in 0..n {
                a.swap(col * n + j, piv * n + j);
            }
            for j in 0..r {
                b.swap(col * r + j, piv * r + j);
            }
        }
        let p = a[col * n + col];
        for i in col + 1..n {
            let factor = a[i * n + col] / p;
            if factor == 0.0 {
                continue;
            }
            for j in col..n {
                a[i * n + j] -= factor * a[col * n + j];
            }
            for j in 0..r {
                b[i * r + j] -= factor * b[col * r + j];
            }
        }
    }
    for col in (0..n).rev() {
        let p = a[col * n + col];
        for j in 0..r {
            let mut s = b[col * r + j];
            for k in col + 1..n {
                s -= a[col * n + k] * b[k * r + j];
            }
            b[col * r + j] = s / p;
        }
    }
    true
}

/// `y = A v` for a row-major `n x n` matrix.
pub(crate) fn mat_vec(a: &[f64], n: usize, v: &[f64]) -> Vec<f64> {
    (0..n)
        .map(|i| {
            a[i * n..(i + 1) * n]
                .iter()
                .zip(v)
                .map(|(x, y)| x * y)
                .sum()
        })
        .collect()
}

/// Dot product.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_pivoting_system() {
        // A has a zero leading entry, so pivoting is required.
        let a0 = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0];
        let x = [1.0, -2.0, 0.5];
        let b0 = mat_vec(&a0, 3, &x);
        let mut a = a0.to_vec();
        let mut b = b0.clone();
        assert!(solve_in_place(&mut a, 3, &mut b, 1));
        for (u, v) in b.iter().zip(&x) {
            assert!((u - v).abs() < 1e-14);
        }
        let mut s = vec![1.0, 2.0, 2.0, 4.0];
        let mut rhs = vec![1.0, 1.0];
        assert!(!solve_in_place(&mut s, 2, &mut rhs, 1));
    }
}
