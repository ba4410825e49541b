//! Compact limited-memory BFGS matrix (Byrd, Nocedal & Schnabel 1994; Byrd, Lu, Nocedal &
//! Zhu 1995, eq. 3.2–3.4):
//!
//! `B = theta I - W M W^T`, `W = [Y, theta S]` (`n x 2k`),
//! `M^{-1} = [[-D, L^T], [L, theta S^T S]]`, with `D = diag(s_i^T y_i)` and `L` the strictly
//! lower triangle of `S^T Y`. The pairs are stored oldest first.

use std::collections::VecDeque;

use crate::dense::{dot, Saddle};

/// The `k <= m` most recent correction pairs `s = x_{k+1} - x_k`, `y = g_{k+1} - g_k` with
/// the small matrices `S^T Y` and `S^T S` kept up to date.
#[derive(Debug, Clone)]
pub(crate) struct Memory {
    m: usize,
    s: VecDeque<Vec<f64>>,
    y: VecDeque<Vec<f64>>,
    /// `sy[i][j] = s_i^T y_j`.
    sy: VecDeque<VecDeque<f64>>,
    /// `ss[i][j] = s_i^T s_j`.
    ss: VecDeque<VecDeque<f64>>,
    theta: f64,
}

impl Memory {
    /// Empty memory holding at most `m` pairs (then `B = I`).
    pub(crate) fn new(m: usize) -> Self {
        Self {
            m,
            s: VecDeque::new(),
            y: VecDeque::new(),
            sy: VecDeque::new(),
            ss: VecDeque::new(),
            theta: 1.0,
        }
    }

    /// Number of stored pairs `k`.
    pub(crate) fn len(&self) -> usize {
        self.s.len()
    }

    /// True if no pair is stored (`B = I`).
    pub(crate) fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    /// Forgets all pairs (`B = I`).
    pub(crate) fn reset(&mut self) {
        *self = Self::new(self.m);
    }

    /// The scaling `theta = y^T y / s^T y` of the newest pair (1 if empty).
    pub(crate) fn theta(&self) -> f64 {
        self.theta
    }

    /// Adds the pair `(s, y)` unless the curvature `s^T y <= eps * y^T y` is too small
    /// (then `B` would lose positive definiteness). Returns whether it was stored.
    pub(crate) fn push(&mut self, s: Vec<f64>, y: Vec<f64>) -> bool {
        let sty = dot(&s, &y);
        let yty = dot(&y, &y);
        if sty <= f64::EPSILON * yty || sty <= 0.0 {
            return false;
        }
        if self.len() == self.m {
            self.s.pop_front();
            self.y.pop_front();
            self.sy.pop_front();
            self.ss.pop_front();
            for row in self.sy.iter_mut().chain(self.ss.iter_mut()) {
                row.pop_front();
            }
        }
        // New column j = k: s_i^T y_new and s_i^T s_new for the older pairs.
        for (i, row) in self.sy.iter_mut().enumerate() {
            row.push_back(dot(&self.s[i], &y));
        }
        for (i, row) in self.ss.iter_mut().enumerate() {
            row.push_back(dot(&self.s[i], &s));
        }
        // New row i = k: s_new^T y_j and s_new^T s_j, including the diagonal.
        let mut sy_row: VecDeque<f64> = self.y.iter().map(|yj| dot(&s, yj)).collect();
        sy_row.push_back(sty);
        let mut ss_row: VecDeque<f64> = self.s.iter().map(|sj| dot(&s, sj)).collect();
        ss_row.push_back(dot(&s, &s));
        self.sy.push_back(sy_row);
        self.ss.push_back(ss_row);
        self.s.push_back(s);
        self.y.push_back(y);
        self.theta = yty / sty;
        true
    }

    /// `W^T v = [Y^T v; theta S^T v]` (length `2k`).
    pub(crate) fn wt_times(&self, v: &[f64]) -> Vec<f64> {
        let mut out: Vec<f64> = self.y.iter().map(|yj| dot(yj, v)).collect();
        out.extend(self.s.iter().map(|sj| self.theta * dot(sj, v)));
        out
    }

    /// Adds `alpha * W v` to `out` (`v` of length `2k`).
    pub(crate) fn add_w_times(&self, alpha: f64, v: &[f64], out: &mut [f64]) {
        let k = self.len();
        for j in 0..k {
            let (a, b) = (alpha * v[j], alpha * self.theta * v[k + j]);
            for ((o, yj), sj) in out.iter_mut().zip(&self.y[j]).zip(&self.s[j]) {
                *o += a * yj + b * sj;
            }
        }
    }

    /// Row `i` of `W`: `[y_1[i], .., y_k[i], theta s_1[i], .., theta s_k[i]]`.
    pub(crate) fn w_row(&self, i: usize) -> Vec<f64> {
        let mut out: Vec<f64> = self.y.iter().map(|yj| yj[i]).collect();
        out.extend(self.s.iter().map(|sj| self.theta * sj[i]));
        out
    }

    /// The middle matrix inverse `M^{-1} = [[-D, L^T], [L, theta S^T S]]`, row-major `2k x 2k`.
    pub(crate) fn middle_inverse(&self) -> Vec<f64> {
        let k = self.len();
        let n = 2 * k;
        let mut a = vec![0.0; n * n];
        for i in 0..k {
            a[i * n + i] = -self.sy[i][i];
            for j in 0..k {
                if i > j {
                    // L_ij = s_i^T y_j below the diagonal, and its transpose above.
                    a[(k + i) * n + j] = self.sy[i][j];
                    a[j * n + k + i] = self.sy[i][j];
                }
                a[(k + i) * n + k + j] = self.theta * self.ss[i][j];
            }
        }
        a
    }

    /// The reduced middle matrix `K = M^{-1} - A^T A / theta` of the subspace minimisation,
    /// `A = Z^T W` the rows of `W` at the free variables (`free[i]`), row-major `2k x 2k`.
    ///
    /// Each block is accumulated directly over the free or the active variables, so that
    /// no large terms cancel: with `Y_f, S_f` (`Y_a, S_a`) the free (active) rows,
    /// `K = [[-D - Y_f^T Y_f / theta, (L_a - R_f)^T], [L_a - R_f, theta S_a^T S_a]]`, where
    /// `L_a` is the strictly lower triangle of `S_a^T Y_a` and `R_f` the upper triangle
    /// (with diagonal) of `S_f^T Y_f`.
    pub(crate) fn reduced_middle(&self, free: &[bool]) -> Vec<f64> {
        let k = self.len();
        let n2 = 2 * k;
        let mut out = vec![0.0; n2 * n2];
        for a in 0..k {
            for b in 0..=a {
                let (mut yy_f, mut ss_a) = (0.0, 0.0);
                for (i, &is_free) in free.iter().enumerate() {
                    if is_free {
                        yy_f += self.y[a][i] * self.y[b][i];
                    } else {
                        ss_a += self.s[a][i] * self.s[b][i];
                    }
                }
                let diag = if a == b { self.sy[a][a] } else { 0.0 };
                out[a * n2 + b] = -diag - yy_f / self.theta;
                out[b * n2 + a] = out[a * n2 + b];
                out[(k + a) * n2 + k + b] = self.theta * ss_a;
                out[(k + b) * n2 + k + a] = self.theta * ss_a;
            }
            for b in 0..k {
                // Entry (k + a, b): s_a^T y_b over active rows if a > b, else minus over free rows.
                let value: f64 = free
                    .iter()
                    .enumerate()
                    .filter(|&(_, &is_free)| is_free == (a <= b))
                    .map(|(i, _)| self.s[a][i] * self.y[b][i])
                    .sum();
                let value = if a > b { value } else { -value };
                out[(k + a) * n2 + b] = value;
                out[b * n2 + k + a] = value;
            }
        }
        out
    }

    /// The middle matrix `M` (row-major `2k x 2k`), or `None` if `M^{-1}` is numerically
    /// not of the expected saddle form (`D` or `theta S^T S + L D^{-1} L^T` not positive
    /// definite).
    pub(crate) fn middle(&self) -> Option<Vec<f64>> {
        let n = 2 * self.len();
        let factor = Saddle::new(&self.middle_inverse(), self.len())?;
        let mut m = vec![0.0; n * n];
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            for (i, v) in factor.solve(&e).into_iter().enumerate() {
                m[i * n + j] = v;
            }
        }
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::mat_vec;

    /// `B v` from the compact form.
    fn b_times(mem: &Memory, v: &[f64]) -> Vec<f64> {
        let m = mem.middle().unwrap();
        let mwv = mat_vec(&m, 2 * mem.len(), &mem.wt_times(v));
        let mut out: Vec<f64> = v.iter().map(|x| mem.theta() * x).collect();
        mem.add_w_times(-1.0, &mwv, &mut out);
        out
    }

    #[test]
    fn compact_form_satisfies_latest_secant_and_matches_recursive_bfgs() {
        // Quadratic with Hessian A: y = A s, so the BFGS matrix satisfies B s_k = y_k.
        let a = [4.0, 1.0, 0.0, 1.0, 3.0, 0.5, 0.0, 0.5, 2.0];
        let steps = [
            [1.0, 0.0, 0.2],
            [0.3, -1.0, 0.1],
            [0.0, 0.4, 1.0],
            [0.5, 0.5, -0.5],
        ];
        let mut mem = Memory::new(3);
        for s in steps {
            let y = mat_vec(&a, 3, &s);
            assert!(mem.push(s.to_vec(), y));
        }
        assert_eq!(mem.len(), 3);
        // Recursive BFGS from B0 = theta I on the last 3 pairs.
        let theta = mem.theta();
        let mut b = vec![0.0; 9];
        for i in 0..3 {
            b[i * 3 + i] = theta;
        }
        for s in &steps[1..] {
            let y = mat_vec(&a, 3, s);
            let bs = mat_vec(&b, 3, s);
            let sbs = dot(s, &bs);
            let sy = dot(s, &y);
            for i in 0..3 {
                for j in 0..3 {
                    b[i * 3 + j] += -bs[i] * bs[j] / sbs + y[i] * y[j] / sy;
                }
            }
        }
        for v in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -0.7, 2.0]] {
            let compact = b_times(&mem, &v);
            let dense = mat_vec(&b, 3, &v);
            for (c, d) in compact.iter().zip(&dense) {
                assert!((c - d).abs() < 1e-10 * d.abs().max(1.0), "{c} vs {d}");
            }
        }
        let s = steps[3];
        let bs = b_times(&mem, &s);
        let y = mat_vec(&a, 3, &s);
        for (u, v) in bs.iter().zip(&y) {
            assert!((u - v).abs() < 1e-10);
        }
    }

    #[test]
    fn reduced_middle_equals_definition() {
        let mut mem = Memory::new(4);
        let a = [
            2.0, 0.3, 0.0, 0.1, 0.3, 1.0, 0.2, 0.0, 0.0, 0.2, 3.0, 0.4, 0.1, 0.0, 0.4, 1.5,
        ];
        for s in [
            [1.0, 0.2, -0.3, 0.5],
            [0.1, -0.7, 0.4, 0.2],
            [0.3, 0.3, 0.9, -0.6],
        ] {
            assert!(mem.push(s.to_vec(), mat_vec(&a, 4, &s)));
        }
        let free = [true, false, true, false];
        let k2 = 2 * mem.len();
        let mut expected = mem.middle_inverse();
        for i in (0..4).filter(|&i| free[i]) {
            let w = mem.w_row(i);
            for p in 0..k2 {
                for q in 0..k2 {
                    expected[p * k2 + q] -= w[p] * w[q] / mem.theta();
                }
            }
        }
        for (u, v) in mem.reduced_middle(&free).iter().zip(&expected) {
            assert!((u - v).abs() < 1e-12, "{u} vs {v}");
        }
    }

    #[test]
    fn rejects_pairs_without_curvature() {
        let mut mem = Memory::new(2);
        assert!(!mem.push(vec![1.0, 0.0], vec![-1.0, 0.0]));
        assert!(mem.is_empty());
    }
}
