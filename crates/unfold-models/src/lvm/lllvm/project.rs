//! Out-of-sample projection (spec §4.4) and reconstruction (spec §4.5).
//!
//! A new point `*` joins the graph with edges to its k nearest training points (the old
//! edges stay). With q(x) and q(C) of the training points frozen and no cross-covariance
//! with the new point, the E-steps for `x*` and `C*` are the rows `*` of the augmented
//! precisions:
//!
//! ```text
//! Sigma_x*^{-1} = [(gamma/2) <Ahat'> + Pi'^{-1}]_**
//! mu_x*         = Sigma_x* ( <b'>_* - [(gamma/2) <Ahat'> + Pi'^{-1}]_{*,old} mu_x )
//! Sigma_C*^{-1} = [(gamma/2) <Gammahat'> + eps 1 1^T + 2 L']_**
//! mu_C*         = ( gamma <H'>_* - mu_C [ ... ]_{old,*} ) Sigma_C*
//! ```
//!
//! alternated until `mu_x*` settles. Row `*` needs only the rows of `L'^+` at `*` and its
//! neighbours, and the edge sums of [`super::moments::row_by_edge_sums`].

use super::moments::{row_by_edge_sums, Form};
use super::{c_moment, x_moment, LlLvm};
use crate::traits::{check_new_points, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use unfold_core::{Error, Result};
use unfold_graph::knn_query;
use unfold_linalg::{symmetrised, Cholesky};

/// A new point's posterior under a frozen fit.
#[derive(Clone, Debug, PartialEq)]
pub struct LlLvmProjection {
    /// Mean of q(x*), length dx.
    pub mean_x: DVector<f64>,
    /// Covariance of q(x*), dx x dx.
    pub cov_x: DMatrix<f64>,
    /// Mean of q(C*), dy x dx, mapping latent differences to differences in the data's units.
    pub mean_c: DMatrix<f64>,
}

/// Most alternations of the x* and C* updates; each is an exact coordinate ascent step.
const MAX_SWEEPS: usize = 200;

impl LlLvm {
    /// Projects each row of `y_new` (same features and units as the training data) by the
    /// frozen E-step of spec §4.4, in parallel over points.
    pub fn project_points(&self, y_new: &DMatrix<f64>) -> Result<Vec<LlLvmProjection>> {
        check_new_points(y_new, self.y.ncols())?;
        let k = c_moment(&self.mu_c, &self.sigma_c);
        let s = x_moment(&self.coords, &self.sigma_x);
        let preprocessed = DMatrix::from_fn(y_new.nrows(), y_new.ncols(), |t, j| {
            (y_new[(t, j)] - self.mean[j]) / self.scale
        });
        let nn = knn_query(&self.y, &preprocessed, self.k.min(self.y.nrows()))?;
        (0..y_new.nrows())
            .into_par_iter()
            .map(|t| {
                let ys = preprocessed.row(t).transpose();
                self.project_one(&ys, &nn.indices[t], &k, &s)
            })
            .collect()
    }

    /// Reconstructs data points from latent positions (rows of `x_new`, spec §4.5):
    /// `y* = (1/k) sum_i [y_i + C_i (x* - x_i)]` over the `k` training points nearest to `x*`
    /// in the latent space, in the data's units.
    pub fn reconstruct(&self, x_new: &DMatrix<f64>, k: usize) -> Result<DMatrix<f64>> {
        let (n, dx) = self.coords.shape();
        unfold_core::check_finite(x_new, "the latent points to reconstruct")?;
        if x_new.ncols() != dx {
            return Err(Error::DimensionMismatch(format!(
                "latent points have {} coordinates but the model has {dx}",
                x_new.ncols()
            )));
        }
        if k == 0 || k > n {
            return Err(Error::invalid(
                "k",
                format!("must be between 1 and the {n} training points, got {k}"),
            ));
        }
        let dy = self.y.ncols();
        let nn = knn_query(&self.coords, x_new, k)?;
        let mut out = DMatrix::zeros(x_new.nrows(), dy);
        for (t, nbrs) in nn.indices.iter().enumerate() {
            let xs = x_new.row(t);
            let mut acc = DVector::zeros(dy);
            for &i in nbrs {
                let dxi = (xs - self.coords.row(i)).transpose();
                acc += self.y.row(i).transpose() + self.map_scaled(i) * dxi;
            }
            let y = &self.mean + acc * (self.scale / k as f64);
            out.set_row(t, &y.transpose());
        }
        Ok(out)
    }

    /// The posterior mean of `C_i` in the preprocessed units, dy x dx.
    pub(super) fn map_scaled(&self, i: usize) -> DMatrix<f64> {
        let (n, dx) = self.coords.shape();
        DMatrix::from_fn(self.y.ncols(), dx, |a, r| self.mu_c[(a, r * n + i)])
    }

    /// The frozen E-step for one preprocessed point `ys` with its nearest training points
    /// `nbrs`.
    fn project_one(
        &self,
        ys: &DVector<f64>,
        nbrs: &[usize],
        k_old: &DMatrix<f64>,
        s_old: &DMatrix<f64>,
    ) -> Result<LlLvmProjection> {
        let (n, dx) = self.coords.shape();
        let dy = self.y.ncols();
        let star = n;
        let gamma = self.hyper.gamma;
        let mut adj: Vec<Vec<usize>> = (0..n)
            .map(|i| self.graph.neighbours(i).0.to_vec())
            .collect();
        for &j in nbrs {
            adj[j].push(star);
        }
        adj.push(nbrs.to_vec());
        let pinv_rows = augmented_pinv_rows(&adj, nbrs)?;
        let m = |i: usize, p: usize| {
            let slot = if i == star {
                0
            } else {
                1 + nbrs
                    .iter()
                    .position(|&j| j == i)
                    .expect("edge endpoints are neighbours")
            };
            pinv_rows[(slot, p)]
        };
        let maps: Vec<DMatrix<f64>> = (0..n).map(|i| self.map_scaled(i)).collect();
        let deg = nbrs.len() as f64;
        let coords_row = DMatrix::from_row_slice(1, n * dx, self.coords.as_slice());

        // Start C* from the neighbours' maps and their covariances.
        let mut mu_c: DMatrix<f64> = nbrs
            .iter()
            .map(|&j| &maps[j])
            .fold(DMatrix::zeros(dy, dx), |a, c| a + c)
            / deg;
        let mut sigma_c = DMatrix::from_fn(dx, dx, |r, s| {
            nbrs.iter()
                .map(|&j| self.sigma_c[(r * n + j, s * n + j)])
                .sum::<f64>()
                / deg
        });
        let mut mu_x = DVector::zeros(dx);
        let mut cov_x = DMatrix::zeros(dx, dx);
        for sweep in 0..MAX_SWEEPS {
            // x* given C*.
            let k_star = mu_c.tr_mul(&mu_c) + &sigma_c * dy as f64;
            let kk = Augmented {
                old: k_old,
                means: &self.mu_c,
                mean_star: &mu_c,
                star: &k_star,
                n,
            };
            let row = row_by_edge_sums(&adj, star, dx, Form::A, m, |u, v, r, s| kk.get(u, v, r, s));
            let mut p_ss =
                DMatrix::from_fn(dx, dx, |r, s| 0.5 * gamma * row[(r, s * (n + 1) + star)]);
            for r in 0..dx {
                p_ss[(r, r)] += self.hyper.alpha + 2.0 * deg;
            }
            let mut rhs = DVector::zeros(dx);
            for &j in nbrs {
                let dyj = ys - self.y.row(j).transpose();
                for r in 0..dx {
                    rhs[r] += gamma * (mu_c.column(r) + maps[j].column(r)).dot(&dyj);
                    // The prior's off-diagonal -2 eta_{*j}.
                    rhs[r] += 2.0 * self.coords[(j, r)];
                }
            }
            for b in 0..n {
                for r in 0..dx {
                    for s in 0..dx {
                        rhs[r] -= 0.5 * gamma * row[(r, s * (n + 1) + b)] * self.coords[(b, s)];
                    }
                }
            }
            let px = Cholesky::new(&symmetrised(p_ss), "LL-LVM projection precision of x*")?;
            let new_mu_x = px.solve_vec(&rhs);
            cov_x = px.inverse();
            let change = (&new_mu_x - &mu_x).amax();
            mu_x = new_mu_x;

            // C* given x*.
            let s_star = &mu_x * mu_x.transpose() + &cov_x;
            let x_row = DMatrix::from_row_slice(1, dx, mu_x.as_slice());
            let ss = Augmented {
                old: s_old,
                means: &coords_row,
                mean_star: &x_row,
                star: &s_star,
                n,
            };
            let row = row_by_edge_sums(&adj, star, dx, Form::Gamma, m, |u, v, r, s| {
                ss.get(u, v, r, s)
            });
            let mut p_ss =
                DMatrix::from_fn(dx, dx, |r, s| 0.5 * gamma * row[(r, s * (n + 1) + star)]);
            for r in 0..dx {
                p_ss[(r, r)] += self.epsilon + 2.0 * deg;
            }
            // gamma <H'>_* - sum_b mu_Cb P_{b,*}.
            let mut rhs = DMatrix::zeros(dy, dx);
            for &j in nbrs {
                let dyj = self.y.row(j).transpose() - ys;
                for r in 0..dx {
                    let dxr = self.coords[(j, r)] - mu_x[r];
                    rhs.column_mut(r).axpy(gamma * dxr, &dyj, 1.0);
                }
            }
            for b in 0..n {
                let eta = if nbrs.contains(&b) { 1.0 } else { 0.0 };
                let p_bs = DMatrix::from_fn(dx, dx, |s, r| {
                    0.5 * gamma * row[(r, s * (n + 1) + b)]
                        + if r == s {
                            self.epsilon - 2.0 * eta
                        } else {
                            0.0
                        }
                });
                rhs -= &maps[b] * p_bs;
            }
            let pc = Cholesky::new(&symmetrised(p_ss), "LL-LVM projection precision of C*")?;
            sigma_c = pc.inverse();
            mu_c = rhs * &sigma_c;
            if sweep > 0 && change <= 1e-12 * (1.0 + mu_x.amax()) {
                break;
            }
        }
        Ok(LlLvmProjection {
            mean_x: mu_x,
            cov_x,
            mean_c: mu_c * self.scale,
        })
    }
}

/// A second moment of the training points augmented by a new point (index `n`) with no
/// cross-covariance: old blocks from `old`, the new point's block `star`, and products of
/// means across. `means` holds the old means coordinate-major (d x n dx: the maps, or the
/// latent positions as one row) and `mean_star` the new point's (d x dx).
struct Augmented<'a> {
    old: &'a DMatrix<f64>,
    means: &'a DMatrix<f64>,
    mean_star: &'a DMatrix<f64>,
    star: &'a DMatrix<f64>,
    n: usize,
}

impl Augmented<'_> {
    /// Entry (r, s) of block (u, v).
    fn get(&self, u: usize, v: usize, r: usize, s: usize) -> f64 {
        let n = self.n;
        match (u == n, v == n) {
            (false, false) => self.old[(r * n + u, s * n + v)],
            (true, true) => self.star[(r, s)],
            (true, false) => self.mean_star.column(r).dot(&self.means.column(s * n + v)),
            (false, true) => self.means.column(r * n + u).dot(&self.mean_star.column(s)),
        }
    }
}

/// Rows of `L'^+` at the new point (row 0) and at its neighbours (rows 1..), from one
/// Cholesky factor of `L' + 1 1^T / n'`.
fn augmented_pinv_rows(adj: &[Vec<usize>], nbrs: &[usize]) -> Result<DMatrix<f64>> {
    let n1 = adj.len();
    let c = 1.0 / n1 as f64;
    let mut shifted = DMatrix::from_element(n1, n1, c);
    for (i, nb) in adj.iter().enumerate() {
        shifted[(i, i)] += nb.len() as f64;
        for &j in nb {
            shifted[(i, j)] -= 1.0;
        }
    }
    let chol = Cholesky::new(&shifted, "LL-LVM augmented graph Laplacian")?;
    let rows: Vec<usize> = std::iter::once(n1 - 1)
        .chain(nbrs.iter().copied())
        .collect();
    let mut e = DMatrix::zeros(n1, rows.len());
    for (t, &i) in rows.iter().enumerate() {
        e[(i, t)] = 1.0;
    }
    chol.solve_in_place(&mut e);
    e.add_scalar_mut(-c);
    Ok(e.transpose())
}

impl OutOfSample for LlLvm {
    /// The posterior means of `x*` with their covariances.
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let p = self.project_points(y_new)?;
        let dx = self.coords.ncols();
        let mean = DMatrix::from_fn(p.len(), dx, |t, r| p[t].mean_x[r]);
        Ok(Projection {
            mean,
            covariance: Some(p.into_iter().map(|q| q.cov_x).collect()),
        })
    }
}
