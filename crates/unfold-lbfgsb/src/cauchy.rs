//! Generalised Cauchy point (Byrd, Lu, Nocedal & Zhu 1995, section 4, Algorithm CP).
//!
//! Along the projected steepest-descent path `x(t) = P(x - t g)` the quadratic model
//! `q(z) = g^T z + z^T B z / 2`, `z = x(t) - x`, is piecewise quadratic in `t`, with
//! breakpoints `t_i` where variable `i` reaches its bound. We walk the segments in order of
//! `t_i`, keeping `f' = dq/dt` and `f'' = d^2q/dt^2` at the start of each segment with the
//! compact form (`p = W^T d`, `c = W^T (x(t) - x)`), and stop at the first local minimiser.

use crate::bounds::Bounds;
use crate::dense::{dot, mat_vec};
use crate::memory::Memory;

/// The generalised Cauchy point and `c = W^T (x^c - x)`, used by the subspace minimisation.
#[derive(Debug, Clone)]
pub(crate) struct CauchyPoint {
    /// The Cauchy point `x^c`.
    pub(crate) xc: Vec<f64>,
    /// `W^T (x^c - x)` (length `2k`).
    pub(crate) c: Vec<f64>,
}

/// Breakpoint `t_i` of variable `i`: the step at which `x_i - t g_i` reaches its bound.
fn breakpoint(x: f64, g: f64, lower: f64, upper: f64) -> f64 {
    if g < 0.0 {
        (x - upper) / g
    } else if g > 0.0 {
        (x - lower) / g
    } else {
        f64::INFINITY
    }
}

/// Computes the generalised Cauchy point of the model `B = theta I - W M W^T` at `x` with
/// gradient `g`; `m_mat` is the middle matrix `M` (row-major `2k x 2k`).
pub(crate) fn cauchy_point(
    x: &[f64],
    g: &[f64],
    bounds: &Bounds,
    mem: &Memory,
    m_mat: &[f64],
) -> CauchyPoint {
    let n = x.len();
    let k2 = 2 * mem.len();
    let theta = mem.theta();
    let t: Vec<f64> = (0..n)
        .map(|i| breakpoint(x[i], g[i], bounds.lower[i], bounds.upper[i]))
        .collect();
    let mut d: Vec<f64> = (0..n)
        .map(|i| if t[i] > 0.0 { -g[i] } else { 0.0 })
        .collect();
    let mut xc = x.to_vec();
    let mut c = vec![0.0; k2];
    let mut p = mem.wt_times(&d);
    let mut fp = -dot(&d, &d);
    if fp >= 0.0 {
        return CauchyPoint { xc, c };
    }
    let fpp0 = -theta * fp - dot(&p, &mat_vec(m_mat, k2, &p));
    // Guard against loss of positive curvature through rounding.
    let curvature_floor = f64::EPSILON * fpp0.abs().max(f64::MIN_POSITIVE);
    let mut fpp = fpp0.max(curvature_floor);
    let mut order: Vec<usize> = (0..n).filter(|&i| t[i] > 0.0 && t[i].is_finite()).collect();
    order.sort_by(|&i, &j| t[i].total_cmp(&t[j]));

    let mut t_old = 0.0;
    let mut dt_min = -fp / fpp;
    for &b in &order {
        let dt = t[b] - t_old;
        if dt_min < dt {
            break;
        }
        // Variable b reaches its bound at t_b and is fixed there from now on.
        xc[b] = if d[b] > 0.0 {
            bounds.upper[b]
        } else {
            bounds.lower[b]
        };
        let zb = xc[b] - x[b];
        for (ci, pi) in c.iter_mut().zip(&p) {
            *ci += dt * pi;
        }
        let wb = mem.w_row(b);
        let mwb = mat_vec(m_mat, k2, &wb);
        let gb = g[b];
        fp += dt * fpp + gb * gb + theta * gb * zb - gb * dot(&mwb, &c);
        fpp += -theta * gb * gb - 2.0 * gb * dot(&mwb, &p) - gb * gb * dot(&wb, &mwb);
        fpp = fpp.max(curvature_floor);
        for (pi, wi) in p.iter_mut().zip(&wb) {
            *pi += gb * wi;
        }
        d[b] = 0.0;
        t_old = t[b];
        dt_min = -fp / fpp;
    }
    let dt_min = dt_min.max(0.0);
    let t_star = t_old + dt_min;
    for i in 0..n {
        if d[i] != 0.0 {
            xc[i] = (x[i] + t_star * d[i]).clamp(bounds.lower[i], bounds.upper[i]);
        }
    }
    for (ci, pi) in c.iter_mut().zip(&p) {
        *ci += dt_min * pi;
    }
    CauchyPoint { xc, c }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense `B` from the compact form, column by column.
    fn dense_b(mem: &Memory, n: usize) -> Vec<f64> {
        let m = mem.middle().unwrap();
        let mut b = vec![0.0; n * n];
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mwe = mat_vec(&m, 2 * mem.len(), &mem.wt_times(&e));
            let mut col: Vec<f64> = e.iter().map(|v| mem.theta() * v).collect();
            mem.add_w_times(-1.0, &mwe, &mut col);
            for i in 0..n {
                b[i * n + j] = col[i];
            }
        }
        b
    }

    fn model(g: &[f64], b: &[f64], z: &[f64]) -> f64 {
        dot(g, z) + 0.5 * dot(z, &mat_vec(b, z.len(), z))
    }

    /// Checks the Cauchy point against dense sampling of the model along `P(x - t g)`.
    fn check_against_sampling(mem: &Memory, x: &[f64], g: &[f64], bounds: &Bounds) {
        let n = x.len();
        let b = dense_b(mem, n);
        let m = mem.middle().unwrap();
        let cp = cauchy_point(x, g, bounds, mem, &m);
        let path = |t: f64| -> Vec<f64> {
            (0..n)
                .map(|i| (x[i] - t * g[i]).clamp(bounds.lower[i], bounds.upper[i]) - x[i])
                .collect()
        };
        // First local minimiser on a fine grid.
        let h = 1e-5;
        let mut j = 0usize;
        let mut q = model(g, &b, &path(0.0));
        loop {
            let next = model(g, &b, &path((j + 1) as f64 * h));
            if next > q || j > 5_000_000 {
                break;
            }
            q = next;
            j += 1;
        }
        let t_grid = j as f64 * h;
        let z_grid = path(t_grid);
        let zc: Vec<f64> = cp.xc.iter().zip(x).map(|(a, b)| a - b).collect();
        for (a, bb) in zc.iter().zip(&z_grid) {
            assert!(
                (a - bb).abs() < 1e-4,
                "Cauchy point {zc:?} vs sampled {z_grid:?}"
            );
        }
        let qc = model(g, &b, &zc);
        assert!(
            qc <= q + 1e-9,
            "model at Cauchy point {qc} above sampled minimum {q}"
        );
        // c = W^T (x^c - x).
        for (a, bb) in cp.c.iter().zip(mem.wt_times(&zc)) {
            assert!((a - bb).abs() < 1e-10 * bb.abs().max(1.0));
        }
    }

    #[test]
    fn matches_brute_force_along_projected_path() {
        let a = [3.0, 0.5, 0.2, 0.5, 2.0, -0.3, 0.2, -0.3, 1.5];
        let mut mem = Memory::new(5);
        for s in [[0.4, -0.1, 0.3], [-0.2, 0.5, 0.1], [0.1, 0.1, -0.6]] {
            assert!(mem.push(s.to_vec(), mat_vec(&a, 3, &s)));
        }
        let x = [0.5, -0.2, 0.0];
        let g = [1.2, -0.8, 0.6];
        // Several breakpoints are passed before the minimiser.
        let bounds = Bounds::new(&[(0.0, 1.0), (-1.0, 0.1), (-0.15, 2.0)]).unwrap();
        check_against_sampling(&mem, &x, &g, &bounds);
        // Minimiser inside the first segment (wide box).
        let wide = Bounds::new(&[(-5.0, 5.0), (-5.0, 5.0), (-5.0, 5.0)]).unwrap();
        check_against_sampling(&mem, &x, &g, &wide);
        // Mixed infinite bounds and a variable already at its bound with g pushing out.
        let mixed = Bounds::new(&[
            (0.5, f64::INFINITY),
            (f64::NEG_INFINITY, 0.3),
            (-0.05, 0.05),
        ])
        .unwrap();
        check_against_sampling(&mem, &x, &g, &mixed);
        // Empty memory: B = I.
        check_against_sampling(&Memory::new(3), &x, &g, &bounds);
    }
}
