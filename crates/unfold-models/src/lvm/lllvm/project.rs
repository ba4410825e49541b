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
//! alternated until `mu_x*` settles. The cost per point is `O(n k^2 dx^2 dy)` plus k solves
//! with the sparse factor of the grounded Laplacian `L_g`, factorised once per batch
//! (`docs/methods/lllvm.md`, "Projecting a batch"); no dense `L^+` is formed:
//!
//! - the columns of `L^+` at the new point's neighbours are `H Z e_j`, where `Z` is `L_g^{-1}`
//!   padded with zeros at the grounded point and `H = I - 1 1^T / n` ([`Frozen::pinv_columns`]);
//! - the rows of `L'^+` on the new point's Markov blanket `B = {*} u N(*)` follow from those
//!   columns by attaching `*` as a pendant vertex to its first neighbour and a rank-(k - 1)
//!   Woodbury update for its other k - 1 edges ([`Blanket::new`]);
//! - row `*` of the expected form `X` enters the updates only through the contractions
//!   `sum_b X^{rs}_{*b} v_b` with frozen vectors v (the training means) and through
//!   `X_**`. Each is an affine function of the new point's moments, whose coefficients are
//!   computed once per point ([`Blanket::contract`]); every alternation then costs
//!   `O(dx^2 dy^2)`.

use super::factorised::grounded_laplacian;
use super::moments::Form;
use super::{Covariance, LlLvm};
use crate::traits::{check_new_points, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use unfold_core::{Error, Result};
use unfold_graph::knn_query;
use unfold_linalg::{symmetrised, Cholesky, SparseCholesky};

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
pub(super) const MAX_SWEEPS: usize = 200;

impl LlLvm {
    /// Projects each row of `y_new` (same features and units as the training data) by the
    /// frozen E-step of spec §4.4, in parallel over points. One sparse factor of the
    /// training graph's grounded Laplacian serves the whole batch; each point then costs k
    /// solves with it and `O(n k^2 dx^2 dy)` (module docs).
    pub fn project_points(&self, y_new: &DMatrix<f64>) -> Result<Vec<LlLvmProjection>> {
        check_new_points(y_new, self.y.ncols())?;
        let preprocessed = DMatrix::from_fn(y_new.nrows(), y_new.ncols(), |t, j| {
            (y_new[(t, j)] - self.mean[j]) / self.scale
        });
        let nn = knn_query(&self.y, &preprocessed, self.k.min(self.y.nrows()))?;
        let frozen = Frozen::new(self)?;
        (0..y_new.nrows())
            .into_par_iter()
            .map(|t| {
                let ys = preprocessed.row(t).transpose();
                self.project_one(&frozen, &ys, &nn.indices[t])
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
    pub(super) fn project_one(
        &self,
        frozen: &Frozen,
        ys: &DVector<f64>,
        nbrs: &[usize],
    ) -> Result<LlLvmProjection> {
        let (n, dx) = self.coords.shape();
        let dy = self.y.ncols();
        let gamma = self.hyper.gamma;
        let deg = nbrs.len() as f64;
        let blanket = Blanket::new(frozen, nbrs)?;
        let map = |j: usize, r: usize| self.mu_c.column(r * n + j);
        let coords_row = DMatrix::from_row_slice(1, n * dx, self.coords.as_slice());
        // The vectors the rows `*` of <A'> and <Gamma'> are contracted with: the training
        // means (zero at `*`), and `e_*` for the diagonal block.
        let padded = |v: &[f64]| {
            let mut p = DVector::zeros(n + 1);
            p.rows_mut(0, n).copy_from_slice(v);
            p
        };
        let mut e_star = DVector::zeros(n + 1);
        e_star[n] = 1.0;
        let e_star = std::slice::from_ref(&e_star);
        let x_means: Vec<DVector<f64>> = (0..dx)
            .map(|s| padded(&self.coords.as_slice()[s * n..(s + 1) * n]))
            .collect();
        let kappa = dy as f64;
        let a_means = blanket.contract(Form::A, &self.mu_c, &self.sigma_c, kappa, &x_means);
        let a_star = blanket.contract(Form::A, &self.mu_c, &self.sigma_c, kappa, e_star);
        // v_(alpha, s) = row alpha of the maps' coordinate s, at index alpha dx + s.
        let c_means: Vec<DVector<f64>> = (0..dy * dx)
            .map(|t| {
                let (alpha, s) = (t / dx, t % dx);
                let row: Vec<f64> = (0..n).map(|b| self.mu_c[(alpha, s * n + b)]).collect();
                padded(&row)
            })
            .collect();
        let g_means = blanket.contract(Form::Gamma, &coords_row, &self.sigma_x, 1.0, &c_means);
        let g_star = blanket.contract(Form::Gamma, &coords_row, &self.sigma_x, 1.0, e_star);
        // The frozen parts of both right-hand sides.
        let mut rhs_x0 = DVector::zeros(dx);
        let mut rhs_c0 = DMatrix::zeros(dy, dx);
        for &j in nbrs {
            let dyj = ys - self.y.row(j).transpose();
            for r in 0..dx {
                rhs_x0[r] += gamma * map(j, r).dot(&dyj) + 2.0 * self.coords[(j, r)];
                // The C prior's off-diagonal entries eps - 2 eta_{j*} at the neighbours.
                rhs_c0.column_mut(r).axpy(2.0, &map(j, r), 1.0);
            }
        }
        for r in 0..dx {
            let sum = self.mu_c.columns(r * n, n).column_sum();
            rhs_c0.column_mut(r).axpy(-self.epsilon, &sum, 1.0);
        }

        // Start C* from the neighbours' maps and their covariances.
        let mut mu_c = DMatrix::from_fn(dy, dx, |a, r| {
            nbrs.iter().map(|&j| self.mu_c[(a, r * n + j)]).sum::<f64>() / deg
        });
        let mut sigma_c = DMatrix::zeros(dx, dx);
        for &j in nbrs {
            sigma_c += self.sigma_c.block(n, dx, j) / deg;
        }
        let mut mu_x = DVector::zeros(dx);
        let mut cov_x = DMatrix::zeros(dx, dx);
        for sweep in 0..MAX_SWEEPS {
            // x* given C*.
            let k_star = mu_c.tr_mul(&mu_c) + &sigma_c * kappa;
            let mut p_ss = DMatrix::from_fn(dx, dx, |r, s| {
                0.5 * gamma * a_star[0].at(&mu_c, &k_star, r, s)
            });
            let mut rhs = rhs_x0.clone();
            for r in 0..dx {
                p_ss[(r, r)] += self.hyper.alpha + 2.0 * deg;
                for &j in nbrs {
                    let dyj = ys - self.y.row(j).transpose();
                    rhs[r] += gamma * mu_c.column(r).dot(&dyj);
                }
                for (s, c) in a_means.iter().enumerate() {
                    rhs[r] -= 0.5 * gamma * c.at(&mu_c, &k_star, r, s);
                }
            }
            let px = Cholesky::new(&symmetrised(p_ss), "LL-LVM projection precision of x*")?;
            let new_mu_x = px.solve_vec(&rhs);
            cov_x = px.inverse()?;
            let change = (&new_mu_x - &mu_x).amax();
            mu_x = new_mu_x;

            // C* given x*.
            let s_star = &mu_x * mu_x.transpose() + &cov_x;
            let x_row = DMatrix::from_row_slice(1, dx, mu_x.as_slice());
            let mut p_ss = DMatrix::from_fn(dx, dx, |r, s| {
                0.5 * gamma * g_star[0].at(&x_row, &s_star, r, s)
            });
            // gamma <H'>_* - sum_b mu_Cb P_{b,*}.
            let mut rhs = rhs_c0.clone();
            for r in 0..dx {
                p_ss[(r, r)] += self.epsilon + 2.0 * deg;
                for &j in nbrs {
                    let dyj = self.y.row(j).transpose() - ys;
                    let dxr = self.coords[(j, r)] - mu_x[r];
                    rhs.column_mut(r).axpy(gamma * dxr, &dyj, 1.0);
                }
                for (t, c) in g_means.iter().enumerate() {
                    let (alpha, s) = (t / dx, t % dx);
                    rhs[(alpha, r)] -= 0.5 * gamma * c.at(&x_row, &s_star, r, s);
                }
            }
            let pc = Cholesky::new(&symmetrised(p_ss), "LL-LVM projection precision of C*")?;
            sigma_c = pc.inverse()?;
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

/// What every new point of a batch shares: the training graph and the sparse factor of its
/// Laplacian grounded at the last point.
pub(super) struct Frozen {
    adj: Vec<Vec<usize>>,
    /// The Cholesky factor of `L_g`, the Laplacian without the last point's row and column.
    lg: SparseCholesky,
    /// `Z 1 / n` without the grounded point's zero entry.
    z_mean: Vec<f64>,
}

impl Frozen {
    pub(super) fn new(fit: &LlLvm) -> Result<Frozen> {
        let adj: Vec<Vec<usize>> = (0..fit.coords.nrows())
            .map(|i| fit.graph.neighbours(i).0.to_vec())
            .collect();
        let n = adj.len();
        let lg = SparseCholesky::new(
            &grounded_laplacian(&adj, n - 1, false),
            "LL-LVM projection: grounded graph Laplacian",
        )?;
        let mut z_mean = vec![1.0 / n as f64; n - 1];
        lg.solve_in_place(&mut z_mean);
        Ok(Frozen { adj, lg, z_mean })
    }

    /// The columns of `L^+ = H Z H` at `points`: `Z e_j - Z 1 / n`, centred (module docs),
    /// by one block solve.
    fn pinv_columns(&self, points: &[usize]) -> Vec<DVector<f64>> {
        let n = self.adj.len();
        let mut z = DMatrix::zeros(n - 1, points.len());
        for (c, &j) in points.iter().enumerate() {
            if j < n - 1 {
                z[(j, c)] = 1.0;
            }
        }
        self.lg.solve_block_in_place(&mut z);
        z.column_iter()
            .map(|zj| {
                let mut u = DVector::from_fn(n, |i, _| {
                    if i < n - 1 {
                        zj[i] - self.z_mean[i]
                    } else {
                        0.0
                    }
                });
                let mean = u.mean();
                u.add_scalar_mut(-mean);
                u
            })
            .collect()
    }
}

/// `sum_b X^{rs}_{*b} v_b` for one frozen vector v, as an affine function of the new
/// point's moments: `f_rs + rho_r . m_s + m_r . q_s + K'_**[r, s] st`, where `m` is the new
/// point's mean (d x dx: the map `mu_C*` for `<A'>`, `mu_x*^T` for `<Gamma'>`) and `K'_**`
/// its second moment (docs/methods/lllvm.md, "Projecting a batch").
#[derive(Clone, Debug)]
pub(super) struct Contraction {
    f: DMatrix<f64>,
    rho: Vec<DVector<f64>>,
    q: Vec<DVector<f64>>,
    st: f64,
}

impl Contraction {
    pub(super) fn at(&self, m: &DMatrix<f64>, star: &DMatrix<f64>, r: usize, s: usize) -> f64 {
        self.f[(r, s)]
            + self.rho[r].dot(&m.column(s))
            + m.column(r).dot(&self.q[s])
            + star[(r, s)] * self.st
    }
}

/// A new point `*` (index n) in the augmented graph `G' = G + {(*, j): j in N(*)}`: the
/// rows of `M' = L'^+` on its Markov blanket `{*} u N(*)`, and products with `G'`.
pub(super) struct Blanket<'a> {
    adj: &'a [Vec<usize>],
    nbrs: &'a [usize],
    in_nbrs: Vec<bool>,
    /// Rows of `L'^+` (length n + 1) at `*` (entry 0) and at `nbrs` (entries 1..).
    pub(super) rows: Vec<DVector<f64>>,
    /// `G' u` for each `u` of `rows`.
    g_rows: Vec<DVector<f64>>,
}

impl<'a> Blanket<'a> {
    /// The rows of `L'^+` on the blanket from the columns of `L^+` at the neighbours
    /// (docs/methods/lllvm.md): `Y` extends
    /// `L^+` by `*` as a pendant vertex of `j1 = nbrs[0]` (`Y_*b = L^+_{j1 b}`,
    /// `Y_** = L^+_{j1 j1} + 1`), a symmetric generalised inverse of the Laplacian of
    /// `G + (*, j1)`; the other edges `B = [e_j - e_*]` give
    /// `Z = Y - Y B (I + B^T Y B)^{-1} B^T Y`, a generalised inverse of `L'`, and
    /// `L'^+ = H Z H` with `H = I - 1 1^T / (n + 1)`. Cost `O(n k^2)`.
    pub(super) fn new(frozen: &'a Frozen, nbrs: &'a [usize]) -> Result<Blanket<'a>> {
        let adj = &frozen.adj;
        let n = adj.len();
        let (n1, star) = (n + 1, n);
        let Some(&j1) = nbrs.first() else {
            return Err(Error::invalid(
                "k",
                "a new point needs at least one training neighbour; fit with k >= 1",
            ));
        };
        let mut in_nbrs = vec![false; n];
        for &j in nbrs {
            in_nbrs[j] = true;
        }
        // The columns of L^+ at the neighbours, in the order of `nbrs`.
        let columns = frozen.pinv_columns(nbrs);
        let slot = |i: usize| nbrs.iter().position(|&j| j == i);
        // Row i of Y (by symmetry also its column), for i = * or a neighbour.
        let y_row = |i: usize| {
            let src = if i == star {
                0
            } else {
                slot(i).expect("a neighbour")
            };
            let column = &columns[src];
            let mut row = DVector::zeros(n1);
            row.rows_mut(0, n).copy_from(column);
            row[star] = column[j1] + if i == star { 1.0 } else { 0.0 };
            row
        };
        let y_star = y_row(star);
        let m = nbrs.len() - 1;
        // W = Y B, one column per edge (j, *) beyond the first.
        let mut w = DMatrix::zeros(n1, m);
        for (e, &j) in nbrs[1..].iter().enumerate() {
            w.set_column(e, &(y_row(j) - &y_star));
        }
        // Z 1 = Y 1 - W S^{-1} W^T 1, with (Y 1)_a = (L^+ 1)_a + Y_{a*} = Y_{a*}.
        let mut z_sums = y_star.clone();
        // V = S^{-1} W^T with S = I + B^T W.
        let v = if m > 0 {
            let s = DMatrix::from_fn(m, m, |e, f| {
                w[(nbrs[e + 1], f)] - w[(star, f)] + if e == f { 1.0 } else { 0.0 }
            });
            let chol = Cholesky::new(&symmetrised(s), "LL-LVM projection edge update")?;
            let v = chol.solve(&w.transpose());
            z_sums -= &w * v.column_sum();
            v
        } else {
            DMatrix::zeros(0, n1)
        };
        let z_mean = z_sums / n1 as f64;
        let zz = z_mean.sum() / n1 as f64;
        let rows: Vec<DVector<f64>> = std::iter::once(star)
            .chain(nbrs.iter().copied())
            .map(|i| {
                let mut z = y_row(i);
                if m > 0 {
                    z -= v.tr_mul(&w.row(i).transpose());
                }
                let zi = z_mean[i];
                z.zip_apply(&z_mean, |a, b| *a += zz - zi - b);
                z
            })
            .collect();
        let mut blanket = Blanket {
            adj,
            nbrs,
            in_nbrs,
            rows,
            g_rows: Vec::new(),
        };
        blanket.g_rows = blanket.rows.iter().map(|u| blanket.g(u)).collect();
        Ok(blanket)
    }

    /// Degree in `G'`.
    fn deg(&self, b: usize) -> f64 {
        match self.adj.get(b) {
            Some(nb) => (nb.len() + usize::from(self.in_nbrs[b])) as f64,
            None => self.nbrs.len() as f64,
        }
    }

    /// `G' v` for a vector over the n + 1 points.
    fn g(&self, v: &DVector<f64>) -> DVector<f64> {
        let n = self.adj.len();
        let mut out = DVector::from_fn(n + 1, |b, _| {
            if b < n {
                self.adj[b].iter().map(|&q| v[q]).sum()
            } else {
                0.0
            }
        });
        for &j in self.nbrs {
            out[j] += v[n];
            out[n] += v[j];
        }
        out
    }

    /// `Omega(v)`: row `*` of `X` contracted with v is `sum_a sum_c K'_ac Omega_a[c]` over
    /// the blanket's a, with `Omega_* = k z_* + tau sigma sum_j z_j` and
    /// `Omega_j = sigma z_* + tau z_j` for the neighbours j, where
    /// `z_i = d' o u_i o v + sigma G'(u_i o v) + tau u_i o G'v + tau sigma (G'u_i) o v` and
    /// `u_i` is row i of `L'^+` (docs/methods/lllvm.md).
    fn omega(&self, v: &DVector<f64>, form: Form) -> Vec<DVector<f64>> {
        let (tau, sigma) = form.signs();
        let gv = self.g(v);
        let z: Vec<DVector<f64>> = self
            .rows
            .iter()
            .zip(&self.g_rows)
            .map(|(u, gu)| {
                let uv = u.component_mul(v);
                let g_uv = self.g(&uv);
                DVector::from_fn(v.len(), |c, _| {
                    self.deg(c) * uv[c]
                        + sigma * g_uv[c]
                        + tau * u[c] * gv[c]
                        + tau * sigma * gu[c] * v[c]
                })
            })
            .collect();
        let k = self.nbrs.len() as f64;
        let mut first = &z[0] * k;
        for zj in &z[1..] {
            first.axpy(tau * sigma, zj, 1.0);
        }
        std::iter::once(first)
            .chain(z[1..].iter().map(|zj| &z[0] * sigma + zj * tau))
            .collect()
    }

    /// The contractions of row `*` of `X` with each of `vs`, where X is the form of the
    /// augmented second moment whose training part is `K = means^T means + kappa sigma`
    /// (`means` d x (n dx) coordinate-major, `sigma` (n dx) x (n dx)).
    pub(super) fn contract(
        &self,
        form: Form,
        means: &DMatrix<f64>,
        sigma: &Covariance,
        kappa: f64,
        vs: &[DVector<f64>],
    ) -> Vec<Contraction> {
        let n = self.adj.len();
        let dx = means.ncols() / n;
        vs.iter()
            .map(|v| {
                let om = self.omega(v, form);
                // `means_s Omega_a` over the training points: d-vectors, [a][s].
                let mw: Vec<Vec<DVector<f64>>> = om
                    .iter()
                    .map(|o| {
                        (0..dx)
                            .map(|s| means.columns(s * n, n) * o.rows(0, n))
                            .collect()
                    })
                    .collect();
                let f = DMatrix::from_fn(dx, dx, |r, s| {
                    self.nbrs
                        .iter()
                        .zip(om[1..].iter().zip(&mw[1..]))
                        .map(|(&a, (o, mws))| {
                            means.column(r * n + a).dot(&mws[s])
                                + kappa * sigma.column_dot(n, s, r, a, o.as_slice())
                        })
                        .sum()
                });
                let rho = (0..dx)
                    .map(|r| {
                        let mut acc = DVector::zeros(means.nrows());
                        for (&a, o) in self.nbrs.iter().zip(&om[1..]) {
                            acc.axpy(o[n], &means.column(r * n + a), 1.0);
                        }
                        acc
                    })
                    .collect();
                Contraction {
                    f,
                    rho,
                    q: mw[0].clone(),
                    st: om[0][n],
                }
            })
            .collect()
    }
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
