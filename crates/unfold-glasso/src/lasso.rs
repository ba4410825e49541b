//! The inner lasso of one column (Friedman, Hastie & Tibshirani 2008, eq. 2.4):
//!
//! ```text
//! min_beta  1/2 beta^T W11 beta - beta^T s12 + sum_j rho_j |beta_j|
//! ```
//!
//! solved by cyclic coordinate descent with "covariance updates": the residual
//! `r = s12 - W11 beta` is kept up to date, so that coordinate `j` costs O(1) to test,
//! `beta_j <- soft(r_j + W_jj beta_j, rho_j) / W_jj`, and O(m) only when it changes.
//! Only the free coordinates (finite penalty, `j != i`) are ever touched: variables with an
//! infinite penalty stay at exactly zero. After a full pass, passes run over the active set
//! (non-zero coordinates) until it converges, then a full pass checks it (the active-set
//! strategy of Friedman, Hastie & Tibshirani 2010).

/// One column's lasso, borrowing the block's storage (column-major, dimension `m`).
pub(crate) struct ColumnLasso<'a> {
    /// Current W of the block (row/column `i` is ignored).
    pub w: &'a [f64],
    /// Dimension of the block.
    pub m: usize,
    /// Column `i` of S.
    pub s_col: &'a [f64],
    /// Column `i` of the penalty matrix.
    pub pen_col: &'a [f64],
    /// Free coordinates of column `i` (finite penalty, `!= i`), increasing.
    pub coords: &'a [usize],
    /// True when `coords` is every `j != i`: the residual is then updated over the whole
    /// contiguous column (vectorised), otherwise over `coords` only.
    pub dense: bool,
}

/// `y += a x`, the inner loop of the dense lasso. It vectorises to the width of the
/// instruction set the caller runs on: the block solver runs each column's lasso through
/// unfold-linalg's SIMD layer (`Level::narrow`), where every path gives the same bits.
#[inline(always)]
pub(crate) fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    for (yj, xj) in y.iter_mut().zip(x) {
        *yj += a * xj;
    }
}

/// Soft-thresholding `sign(z) max(|z| - t, 0)`.
#[inline(always)]
fn soft(z: f64, t: f64) -> f64 {
    if z > t {
        z - t
    } else if z < -t {
        z + t
    } else {
        0.0
    }
}

impl ColumnLasso<'_> {
    /// Column `k` of W.
    #[inline(always)]
    fn col(&self, k: usize) -> &[f64] {
        &self.w[k * self.m..(k + 1) * self.m]
    }

    /// `r -= delta * W[:, k]` on the rows that matter.
    #[inline(always)]
    fn update_residual(&self, r: &mut [f64], k: usize, delta: f64) {
        let col = self.col(k);
        if self.dense {
            axpy(r, -delta, col);
        } else {
            for &l in self.coords {
                r[l] -= delta * col[l];
            }
        }
    }

    /// Sets `r = s12 - W11 beta` from the (warm-start) `beta`.
    #[inline(always)]
    fn init_residual(&self, beta: &[f64], r: &mut [f64]) {
        if self.dense {
            r.copy_from_slice(self.s_col);
        } else {
            for &l in self.coords {
                r[l] = self.s_col[l];
            }
        }
        for &k in self.coords {
            if beta[k] != 0.0 {
                self.update_residual(r, k, beta[k]);
            }
        }
    }

    /// One coordinate-descent pass over `idx`; returns `max_j W_jj |change of beta_j|`.
    #[inline(always)]
    fn pass(&self, idx: &[usize], beta: &mut [f64], r: &mut [f64]) -> f64 {
        let mut largest = 0.0f64;
        for &j in idx {
            let wjj = self.w[j + j * self.m];
            let old = beta[j];
            let new = soft(r[j] + wjj * old, self.pen_col[j]) / wjj;
            let delta = new - old;
            if delta != 0.0 {
                beta[j] = new;
                self.update_residual(r, j, delta);
                largest = largest.max(wjj * delta.abs());
            }
        }
        largest
    }

    /// Minimises from the warm start in `beta` (length m, `beta[i] = 0`), leaving
    /// `r = s12 - W11 beta` on the free rows (and on every row when dense). `active` is
    /// scratch. Returns the number of passes.
    #[inline(always)]
    pub fn solve(
        &self,
        beta: &mut [f64],
        r: &mut [f64],
        active: &mut Vec<usize>,
        tol: f64,
        max_passes: usize,
    ) -> usize {
        self.init_residual(beta, r);
        let mut passes = 0;
        loop {
            passes += 1;
            if self.pass(self.coords, beta, r) <= tol || passes >= max_passes {
                return passes;
            }
            active.clear();
            active.extend(self.coords.iter().copied().filter(|&j| beta[j] != 0.0));
            loop {
                passes += 1;
                if self.pass(active, beta, r) <= tol || passes >= max_passes {
                    break;
                }
            }
            if passes >= max_passes {
                return passes;
            }
        }
    }
}
