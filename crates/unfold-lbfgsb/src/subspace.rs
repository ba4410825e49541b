//! Subspace minimisation at the Cauchy point (Byrd, Lu, Nocedal & Zhu 1995, section 5.1,
//! direct primal method) with the projection step of Morales & Nocedal (2011).
//!
//! With `Z` selecting the variables free at `x^c`, the reduced model is minimised by the
//! Newton step `d^ = -B^{-1} r` with `B^ = theta I - A M A^T`, `A = Z^T W`, and
//! `r = Z^T (g + theta (x^c - x) - W M c)`. By Sherman–Morrison–Woodbury,
//! `B^{-1} = I/theta + A (M^{-1} - A^T A / theta)^{-1} A^T / theta^2`, so only a `2k x 2k`
//! system is solved.

use crate::bounds::Bounds;
use crate::cauchy::CauchyPoint;
use crate::dense::{dot, mat_vec, Saddle};
use crate::memory::Memory;

/// Returns the point `x_bar` that defines the search direction `d = x_bar - x`, or `None`
/// if the reduced middle matrix is numerically indefinite (the memory should be reset).
///
/// The unconstrained subspace minimiser `x^c + Z d^` is projected onto the box; if the
/// projected point gives a descent direction it is used (Morales & Nocedal 2011), otherwise
/// the step `x^c + alpha Z d^` is truncated to the largest feasible `alpha <= 1`.
pub(crate) fn subspace_point(
    x: &[f64],
    g: &[f64],
    bounds: &Bounds,
    mem: &Memory,
    m_mat: &[f64],
    cp: &CauchyPoint,
) -> Option<Vec<f64>> {
    let n = x.len();
    let k2 = 2 * mem.len();
    let theta = mem.theta();
    let xc = &cp.xc;
    let free: Vec<usize> = (0..n)
        .filter(|&i| bounds.lower[i] < xc[i] && xc[i] < bounds.upper[i])
        .collect();
    if free.is_empty() {
        return Some(xc.clone());
    }
    // Reduced gradient r = Z^T (g + theta (x^c - x) - W M c).
    let mc = mat_vec(m_mat, k2, &cp.c);
    let mut wmc = vec![0.0; n];
    mem.add_w_times(1.0, &mc, &mut wmc);
    let rows: Vec<Vec<f64>> = free.iter().map(|&i| mem.w_row(i)).collect();
    let r: Vec<f64> = free
        .iter()
        .map(|&i| g[i] + theta * (xc[i] - x[i]) - wmc[i])
        .collect();
    // v = (M^{-1} - A^T A / theta)^{-1} A^T r.
    let mut is_free = vec![false; n];
    free.iter().for_each(|&i| is_free[i] = true);
    let k = Saddle::new(&mem.reduced_middle(&is_free), mem.len())?;
    let mut v = vec![0.0; k2];
    for (row, &ri) in rows.iter().zip(&r) {
        for (va, wa) in v.iter_mut().zip(row) {
            *va += wa * ri;
        }
    }
    let v = k.solve(&v);
    // d^ = -r / theta - A v / theta^2.
    let d_hat: Vec<f64> = rows
        .iter()
        .zip(&r)
        .map(|(row, &ri)| -ri / theta - dot(row, &v) / (theta * theta))
        .collect();

    let mut projected = xc.clone();
    for (&i, &di) in free.iter().zip(&d_hat) {
        projected[i] = (xc[i] + di).clamp(bounds.lower[i], bounds.upper[i]);
    }
    let descent: f64 = (0..n).map(|i| g[i] * (projected[i] - x[i])).sum();
    if descent < 0.0 {
        return Some(projected);
    }
    // Truncated step toward the subspace minimiser.
    let alpha = free
        .iter()
        .zip(&d_hat)
        .map(|(&i, &di)| {
            if di > 0.0 {
                (bounds.upper[i] - xc[i]) / di
            } else if di < 0.0 {
                (bounds.lower[i] - xc[i]) / di
            } else {
                f64::INFINITY
            }
        })
        .fold(1.0f64, f64::min)
        .max(0.0);
    let mut truncated = xc.clone();
    for (&i, &di) in free.iter().zip(&d_hat) {
        truncated[i] = (xc[i] + alpha * di).clamp(bounds.lower[i], bounds.upper[i]);
    }
    Some(truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cauchy::cauchy_point;

    #[test]
    fn unconstrained_step_is_the_quasi_newton_step() {
        // With no active bounds, x_bar = x - B^{-1} g for the compact B.
        let a = [3.0, 0.5, 0.2, 0.5, 2.0, -0.3, 0.2, -0.3, 1.5];
        let mut mem = Memory::new(5);
        for s in [[0.4, -0.1, 0.3], [-0.2, 0.5, 0.1]] {
            assert!(mem.push(s.to_vec(), mat_vec(&a, 3, &s)));
        }
        let inf = f64::INFINITY;
        let bounds = Bounds::new(&[(-inf, inf); 3]).unwrap();
        let x = [0.1, 0.2, 0.3];
        let g = [1.0, -2.0, 0.5];
        let m = mem.middle().unwrap();
        let cp = cauchy_point(&x, &g, &bounds, &mem, &m);
        let xbar = subspace_point(&x, &g, &bounds, &mem, &m, &cp).unwrap();
        let d: Vec<f64> = xbar.iter().zip(&x).map(|(a, b)| a - b).collect();
        // B d = -g.
        let mwd = mat_vec(&m, 2 * mem.len(), &mem.wt_times(&d));
        let mut bd: Vec<f64> = d.iter().map(|v| mem.theta() * v).collect();
        mem.add_w_times(-1.0, &mwd, &mut bd);
        for (u, v) in bd.iter().zip(&g) {
            assert!((u + v).abs() < 1e-10, "B d = {bd:?}, g = {g:?}");
        }
    }
}
