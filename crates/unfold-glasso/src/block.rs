//! Block coordinate descent over the columns of `W = Theta^{-1}` for one connected block
//! (Friedman, Hastie & Tibshirani 2008, Section 2).
//!
//! For column `i`, with `W11` = W without row and column `i`, the stationarity condition
//! `W - S - Rho ∘ Gamma = 0` restricted to the column is the lasso of [`crate::lasso`]
//! (`beta = -theta12 / theta22`). After solving it, `w12 = W11 beta` and
//!
//! ```text
//! theta22 = 1 / (w22 - w12^T beta),   theta12 = -beta theta22.
//! ```
//!
//! The diagonal `w_ii = s_ii + rho_ii` (rho_ii = 0 when unpenalised) never changes.

use crate::lasso::{axpy, ColumnLasso};
use crate::Error;
use unfold_linalg::simd::Level;

/// Relative size of the Schur complement `w22 - w12^T beta` (times `w22`) below which the
/// block is declared to have no solution.
const SCHUR_TOL: f64 = 1e-12;

/// Period (in sweeps) of the unconditional true-gap check.
const TRUE_GAP_EVERY: usize = 10;

/// Loosest relative inner tolerance (used in the first sweep).
const MAX_INNER_TOL: f64 = 1e-3;

/// Fraction of the per-variable duality gap used as the inner tolerance of the next sweep.
const INNER_GAP_FRACTION: f64 = 0.1;

/// One block of the problem, column-major with dimension `m`.
pub(crate) struct Block {
    /// Dimension.
    pub m: usize,
    /// S of the block.
    pub s: Vec<f64>,
    /// Penalties of the block (diagonal: the diagonal penalty or 0).
    pub pen: Vec<f64>,
    /// Original indices of the block's variables (for error messages).
    pub index: Vec<usize>,
}

/// Solution of one block.
pub(crate) struct BlockFit {
    /// Covariance W.
    pub w: Vec<f64>,
    /// Precision Theta.
    pub theta: Vec<f64>,
    /// Duality gap (see [`Block::duality_gap`]).
    pub gap: f64,
    /// Log-determinant of Theta (NaN if Theta is not positive definite).
    pub logdet_theta: f64,
    /// Sweeps done.
    pub sweeps: usize,
    /// The duality gap after each sweep (the surrogate, or the true gap where computed).
    pub gaps: Vec<f64>,
    /// Whether the gap reached the tolerance.
    pub converged: bool,
}

/// Tolerances of one block solve.
pub(crate) struct Limits {
    /// Duality-gap tolerance for this block.
    pub tol: f64,
    /// Maximum sweeps.
    pub max_iter: usize,
    /// Floor of the inner tolerance (absolute, in units of S).
    pub inner_tol: f64,
    /// Mean of the diagonal of W: converts the relative inner tolerance to units of S.
    pub scale: f64,
    /// Maximum inner passes.
    pub inner_max_iter: usize,
}

impl Block {
    /// The free coordinates of every column in CSR form (`offsets`, `indices`) and whether
    /// every column is fully free (no infinite penalty).
    fn free_coordinates(&self) -> (Vec<usize>, Vec<usize>, bool) {
        let m = self.m;
        let mut offsets = Vec::with_capacity(m + 1);
        let mut indices = Vec::new();
        offsets.push(0);
        for i in 0..m {
            indices.extend((0..m).filter(|&j| j != i && self.pen[j + i * m].is_finite()));
            offsets.push(indices.len());
        }
        let dense = indices.len() == m * (m - 1);
        (offsets, indices, dense)
    }

    /// `tr(S Theta) - m + sum rho_ij |Theta_ij|`: the duality gap when `W = Theta^{-1}`
    /// (scikit-learn's convergence measure). Cheap, but terms of both signs can cancel away
    /// from the optimum, so it is only used to decide when to compute the true gap.
    pub fn surrogate_gap(&self, theta: &[f64]) -> f64 {
        let mut trace = 0.0;
        let mut l1 = 0.0;
        for ((&s, &rho), &t) in self.s.iter().zip(&self.pen).zip(theta) {
            trace += s * t;
            if t != 0.0 {
                l1 += rho * t.abs();
            }
        }
        trace - self.m as f64 + l1
    }

    /// Runs the sweeps from `w` (diagonal already set) and the warm-start `beta` (column `i`
    /// holds the lasso coefficients of column `i`); `initial_gap` is the surrogate gap of the
    /// warm-start precision (`+inf` for a cold start) and sets the first inner tolerance.
    /// `progress(sweep, gap)` hears each sweep's gap; `false` ends the solve with
    /// [`Error::Stopped`].
    pub fn solve(
        &self,
        mut w: Vec<f64>,
        mut beta: Vec<f64>,
        initial_gap: f64,
        limits: &Limits,
        progress: &mut dyn FnMut(usize, f64) -> bool,
    ) -> Result<BlockFit, Error> {
        let m = self.m;
        let (offsets, indices, dense) = self.free_coordinates();
        let mut theta = vec![0.0; m * m];
        let mut r = vec![0.0; m];
        let mut w12 = vec![0.0; m];
        let mut active = Vec::with_capacity(m);
        let mut gap = f64::INFINITY;
        let mut converged = false;
        let mut sweeps = 0;
        let mut gaps = Vec::new();
        // Inexact block coordinate descent: the relative inner tolerance starts at
        // MAX_INNER_TOL (lower for a good warm start) and only decreases: to
        // INNER_GAP_FRACTION |gap| / m after each sweep, and tenfold whenever a sweep fails
        // to halve |gap|; never below the user's inner_tol.
        let mut inner_rel = (INNER_GAP_FRACTION * initial_gap.abs() / m as f64)
            .min(MAX_INNER_TOL)
            .max(limits.inner_tol);
        let level = Level::narrow();
        while sweeps < limits.max_iter {
            sweeps += 1;
            let inner_tol = limits.scale * inner_rel;
            for i in 0..m {
                let coords = &indices[offsets[i]..offsets[i + 1]];
                let b = &mut beta[i * m..(i + 1) * m];
                let lasso = ColumnLasso {
                    w: &w,
                    m,
                    s_col: &self.s[i * m..(i + 1) * m],
                    pen_col: &self.pen[i * m..(i + 1) * m],
                    coords,
                    dense,
                };
                // The column's lasso and w12 = W11 beta on vector instructions of up to 256
                // bits (unfold-linalg's SIMD layer: the same bits on every path; columns are
                // too short for 512-bit vectors to pay).
                level.run(
                    #[inline(always)]
                    || {
                        lasso.solve(b, &mut r, &mut active, inner_tol, limits.inner_max_iter);
                        if dense {
                            for j in 0..m {
                                w12[j] = self.s[j + i * m] - r[j];
                            }
                        } else {
                            w12.iter_mut().for_each(|v| *v = 0.0);
                            for &k in coords {
                                if b[k] != 0.0 {
                                    axpy(&mut w12, b[k], &w[k * m..(k + 1) * m]);
                                }
                            }
                        }
                    },
                );
                w12[i] = 0.0;
                let wii = w[i + i * m];
                let quad: f64 = coords.iter().map(|&k| w12[k] * b[k]).sum();
                let schur = wii - quad;
                if schur.is_nan() || schur <= SCHUR_TOL * wii || b.iter().any(|v| !v.is_finite()) {
                    return Err(Error::NoSolution {
                        reason: format!(
                            "the Schur complement of variable {} fell to {schur:e} (relative to W_ii = {wii:e}) in sweep {sweeps}: the likelihood is unbounded along this column",
                            self.index[i]
                        ),
                    });
                }
                let tii = 1.0 / schur;
                for j in 0..m {
                    if j != i {
                        w[j + i * m] = w12[j];
                        w[i + j * m] = w12[j];
                        let t = -b[j] * tii;
                        theta[j + i * m] = t;
                        theta[i + j * m] = t;
                    }
                }
                theta[i + i * m] = tii;
            }
            let previous = gap;
            let surrogate = self.surrogate_gap(&theta);
            if !surrogate.is_finite() {
                return Err(Error::NoSolution {
                    reason: format!("the duality gap became {surrogate} in sweep {sweeps}"),
                });
            }
            gap = surrogate;
            // The true gap costs two Cholesky factorisations: compute it when the cheap
            // surrogate says "converged", and every TRUE_GAP_EVERY sweeps (the surrogate can
            // stay above tol while W and Theta are both optimal to within tol).
            if surrogate.abs() <= limits.tol || sweeps % TRUE_GAP_EVERY == 0 {
                let (true_gap, _) = self.duality_gap(&w, &theta, surrogate);
                if true_gap.abs() <= limits.tol {
                    gaps.push(true_gap);
                    converged = true;
                    break;
                }
                gap = true_gap;
            }
            gaps.push(gap);
            if !progress(sweeps, gap) {
                return Err(Error::Stopped);
            }
            inner_rel = inner_rel.min(INNER_GAP_FRACTION * gap.abs() / m as f64);
            if gap.abs() > 0.5 * previous.abs() {
                inner_rel *= 0.1;
            }
            inner_rel = inner_rel.max(limits.inner_tol);
        }
        let surrogate = self.surrogate_gap(&theta);
        let (gap, logdet_theta) = self.duality_gap(&w, &theta, surrogate);
        Ok(BlockFit {
            w,
            theta,
            gap,
            logdet_theta,
            sweeps,
            gaps,
            converged,
        })
    }

    /// The duality gap `dual(W) - primal(Theta)` with `primal(Theta) = log det Theta -
    /// tr(S Theta) - sum rho |Theta|` and `dual(W) = -log det W - m` (W is dual feasible:
    /// `|W_ij - S_ij| <= rho_ij`, `W_ii = S_ii + rho_ii`), that is
    /// `surrogate - log det W - log det Theta`; `+inf` if W or Theta is not positive definite.
    /// Also returns `log det Theta` (NaN if not positive definite).
    fn duality_gap(&self, w: &[f64], theta: &[f64], surrogate: f64) -> (f64, f64) {
        match (log_det(w, self.m), log_det(theta, self.m)) {
            (Some(lw), Some(lt)) => (surrogate - lw - lt, lt),
            (_, lt) => (f64::INFINITY, lt.unwrap_or(f64::NAN)),
        }
    }
}

/// `log det A` of a symmetric m x m column-major matrix by Cholesky on faer (None if not
/// positive definite).
pub(crate) fn log_det(a: &[f64], m: usize) -> Option<f64> {
    unfold_linalg::log_det_spd(&nalgebra::DMatrix::from_column_slice(m, m, a), "glasso").ok()
}
