//! Discriminative dimensionality reduction via learning a tree, DDRTree (Li Wang; spec
//! `spl_drtree_ddrtree.md` §6, Algorithm 2).
//!
//! With data `Y` (N x D), projection `W` (D x d, `W^T W = I`), latent points `Z` (N x d),
//! centres `C` (K x d), a spanning tree `S` over the centres (Laplacian `L`) and soft
//! assignments `R` (N x K, rows on the simplex), DDRTree minimises (31):
//!
//! ```text
//! f = ||Y - Z W^T||_F^2 + lambda Tr(C^T L C)
//!     + gamma [ sum_ik r_ik ||z_i - c_k||^2 + sigma sum_ik r_ik log r_ik ]
//! ```
//!
//! (`lambda Tr(C^T L C) = (lambda/2) sum_{k,k'} s_kk' ||c_k - c_k'||^2`, the ordered-pair
//! convention of Proposition 5; spec P10). Each iteration minimises exactly over one block:
//!
//! 1. `S` = minimum spanning tree of the centres under squared distances (28);
//! 2. `R` = the softmax (32), computed with a per-row log-sum-exp shift (spec P9);
//! 3. `{W, Z, C}` in closed form (Proposition 5, eq. 33), with `M = (lambda/gamma) L + Gamma`,
//!    `A = ((1+gamma)/gamma) M - R^T R` and the Woodbury form
//!    `Q = (I + R A^{-1} R^T) / (1+gamma)`: `W` = top-d eigenvectors of `Y^T Q Y`,
//!    `Z = Q Y W`, `C = M^{-1} R^T Z`.
//!
//! The N x N matrix `Q` is never formed: with `B = R^T Y` (K x D),
//! `Y^T Q Y = (Y^T Y + B^T A^{-1} B) / (1+gamma)` and `Z = (Y W + R A^{-1} B W) / (1+gamma)`,
//! so an iteration costs `O(N K (D + K) + K^3 + D^3)`. Every block step is an exact
//! minimisation, so `f` cannot increase; the fit checks this after every iteration and
//! stops when the relative change of `f` falls below `tol`.
//!
//! [`Compat::R`] reproduces the conventions of the public R package (spec §10): see
//! [`Compat`] and `docs/methods/ddrtree.md`.

mod assign;

use crate::regularised::alternating_convergence;
use crate::traits::{check_fit_input, Embedding};
use crate::trajectory::{Measure, Root, Trajectory};
use assign::{nearest_centres, soft_assign_reusing, tree_order, Assignment, DataRows, Products};
#[cfg(test)]
use assign::{soft_assign, soft_assign_to};
use faer::linalg::matmul::matmul;
use faer::Accum;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Result};
use unfold_eval::{kmeans_with, EmptyClusters, KMeansInit, KMeansOptions};
use unfold_graph::{minimum_spanning_tree_dense, Laplacian, NeighbourGraph};
use unfold_linalg::gemm::{
    centred_mul, centred_tr_mul_self, lower_gram, mul, mul_with, sum_lower_and_mirror, tr_mul,
    tr_mul_self,
};
#[cfg(test)]
use unfold_linalg::sq_dists_to;
use unfold_linalg::view::{as_faer, as_faer_mut};
use unfold_linalg::{
    largest_eigenpairs, pairwise_sq_dists, symmetrised, Cholesky, SymEigen, SymMatrix,
};

/// Which conventions a DDRTree fit follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compat {
    /// The paper's model (31) on centred data: the objective `f` is evaluated after every
    /// iteration, must not increase, and the fit stops when its relative change is below
    /// `tol`.
    #[default]
    Paper,
    /// The R package `DDRTree` (and its port `ddrtree-python`): uncentred data, `W` from the
    /// top eigenvectors of the uncentred `Y^T Y`; `K < N` centres by Lloyd's k-means (at
    /// most 10 rounds) started from the rows `floor(linspace(1, N, K)) - 1` of `Z`; the
    /// objective is evaluated after the tree and assignment steps and before the
    /// `{W, Z, C}` step, with the package's first term (see [`r_residual_term`]) and the
    /// entropic term `-sigma sum_i log sum_k exp(-||z_i - c_k||^2 / sigma)`; the loop stops,
    /// before updating, once an iteration's relative change is below `tol`. Cells are
    /// ordered as Monocle 2 orders them ([`Measure::CellTree`]).
    R,
}

/// Settings of [`DdrTree`]. Defaults follow the R package: `lambda = 5 N`, `sigma = 1e-3`,
/// `gamma = 10`, `K = N`, at most 20 iterations, `tol = 1e-3`.
#[derive(Clone, Debug, PartialEq)]
pub struct DdrTreeParams {
    /// Latent dimension `d`.
    pub dim: usize,
    /// Tree regularisation `lambda > 0`; `None` means `5 N`.
    pub lambda: Option<f64>,
    /// Bandwidth `sigma > 0` of the soft assignments (32) (it divides squared distances).
    pub sigma: f64,
    /// Trade-off `gamma > 0` of the clustering term (not the noise precision of SPL).
    pub gamma: f64,
    /// Number of centres `K <= N`; `None` means Monocle 2's rule ([`auto_centres`]): `K = N`
    /// with `C = Z` (the paper) below 100 points, fewer centres from there.
    pub ncenters: Option<usize>,
    /// Maximum number of iterations.
    pub max_iter: usize,
    /// Relative-change tolerance of the stopping rule.
    pub tol: f64,
    /// Paper or R-package conventions.
    pub compat: Compat,
}

impl DdrTreeParams {
    /// The R package's defaults with latent dimension `dim`.
    pub fn new(dim: usize) -> Self {
        DdrTreeParams {
            dim,
            lambda: None,
            sigma: 1e-3,
            gamma: 10.0,
            ncenters: None,
            max_iter: 20,
            tol: 1e-3,
            compat: Compat::Paper,
        }
    }

    /// Fits DDRTree to the rows of `y` (N x D). A kernel matrix (N x N, e.g. the paper's
    /// `exp(-||y_i - y_j||^2 / D)` of Section 6.2) may be passed as `y`; `W` is then N x d.
    ///
    /// # Errors
    /// Non-finite data, fewer than two points, `dim` not below `min(N, D)`, `lambda <= 0`,
    /// `sigma <= 0`, `gamma <= 0`, `tol < 0`, `max_iter = 0`, `K` outside `1..=N`, a
    /// singular block system, or an objective that increases beyond round-off
    /// ([`Error::Numerical`]).
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<DdrTree> {
        check_fit_input(y, self.dim, "DDRTree")?;
        let n = y.nrows();
        let lambda = self.lambda.unwrap_or(5.0 * n as f64);
        check_positive(
            "lambda",
            lambda,
            "the tree regularisation; the R default is 5 N",
        )?;
        check_positive(
            "sigma",
            self.sigma,
            "the bandwidth of the soft assignments, e.g. 1e-3",
        )?;
        check_positive(
            "gamma",
            self.gamma,
            "the weight of the clustering term, e.g. 10",
        )?;
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return Err(Error::invalid(
                "tol",
                format!("must be finite and >= 0, got {}", self.tol),
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        let k = self.ncenters.unwrap_or_else(|| auto_centres(n));
        if k == 0 || k > n {
            return Err(Error::invalid(
                "ncenters",
                format!("{k} centres for {n} points: use between 1 and {n} centres (K <= N)"),
            ));
        }
        let mean = match self.compat {
            Compat::Paper => DVector::from_fn(y.ncols(), |j, _| y.column(j).mean()),
            Compat::R => DVector::zeros(y.ncols()),
        };
        // The paper's centring is never formed (no second N x D matrix): the problem
        // subtracts the mean inside its products.
        let problem = match self.compat {
            Compat::Paper => Problem::centred(y, &mean, lambda, self.sigma, self.gamma, self.dim),
            Compat::R => Problem::new(y, lambda, self.sigma, self.gamma, self.dim),
        };
        let w = top_eigenvectors(&problem.yty, self.dim)?;
        let z = problem.y_mul(&w);
        let c = if k == n {
            z.clone()
        } else {
            kmeans_evenly_started(&z, k)?
        };
        let state = State { w, z, c };
        let run = match self.compat {
            Compat::Paper => problem.run_paper(state, self.max_iter, self.tol)?,
            Compat::R => problem.run_r(state, self.max_iter, self.tol)?,
        };
        Ok(DdrTree {
            mean,
            w: run.state.w,
            centres: run.state.c,
            edges: run.edges,
            convergence: alternating_convergence(run.history, run.converged),
            lambda,
            compat: self.compat,
            evidence: Evidence::from_terms(EvidenceKind::Objective, run.terms),
            coords: run.state.z,
            trajectory: None,
        })
    }
}

/// Monocle 2's number of centres for `n` points (`cal_ncenter` with its limit of 100):
/// `n` below 100 points, else `round(2 * 100 * ln n / (ln n + ln 100))`, which grows like
/// `200` for large `n` (143 at 100,000 points).
pub fn auto_centres(n: usize) -> usize {
    if n < 100 {
        return n;
    }
    let (ln_n, ln_limit) = ((n as f64).ln(), 100f64.ln());
    (2.0 * 100.0 * ln_n / (ln_n + ln_limit)).round() as usize
}

fn check_positive(name: &str, value: f64, what: &str) -> Result<()> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(Error::invalid(
            name,
            format!("must be finite and > 0, got {value} ({what})"),
        ))
    }
}

/// A fitted DDRTree.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DdrTree {
    /// The column means removed before fitting (zero in [`Compat::R`]).
    pub mean: DVector<f64>,
    /// Orthonormal projection `W` (D x d).
    pub w: DMatrix<f64>,
    /// The centres `C` (K x d), nodes of the learned tree.
    pub centres: DMatrix<f64>,
    /// The tree over the centres, `(a, b, ||c_a - c_b||^2)` with `a < b`, as found by the
    /// last tree step (squared lengths of that moment).
    pub edges: Vec<(usize, usize, f64)>,
    /// How the alternating minimisation ended, with the objective after every iteration
    /// (see [`Compat`] for which objective); `converged` when the relative-change rule
    /// stopped it before `max_iter`.
    pub convergence: Convergence,
    /// The `lambda` used.
    pub lambda: f64,
    /// The conventions followed.
    pub compat: Compat,
    evidence: Evidence,
    coords: DMatrix<f64>,
    /// The cells' ordering along the tree, when asked for ([`DdrTree::ordered`]).
    pub trajectory: Option<Trajectory>,
}

impl DdrTree {
    /// The points ordered along the learned tree from `root`: pseudotime, states and
    /// branch points ([`crate::trajectory`], Monocle 2's `orderCells`).
    pub fn order(&self, root: Root) -> Result<Trajectory> {
        self.order_with(root, 0)
    }

    /// [`DdrTree::order`] with spurs of fewer than `min_branch` centres set aside (0:
    /// every centre of degree above 2 is a branch point, as in Monocle 2). A fit with
    /// [`Compat::R`] measures pseudotime as Monocle 2 does, along a tree over the cells
    /// ([`Measure::CellTree`]).
    pub fn order_with(&self, root: Root, min_branch: usize) -> Result<Trajectory> {
        let edges: Vec<(usize, usize)> = self.edges.iter().map(|&(a, b, _)| (a, b)).collect();
        let measure = match self.compat {
            Compat::R => Measure::CellTree,
            Compat::Paper => Measure::Tree,
        };
        crate::trajectory::order_measured(
            &self.coords,
            &self.centres,
            &edges,
            root,
            min_branch,
            measure,
        )
    }

    /// This fit with its ordering from `root` kept (written as the `order` table).
    pub fn ordered(mut self, root: Root, min_branch: usize) -> Result<Self> {
        self.trajectory = Some(self.order_with(root, min_branch)?);
        Ok(self)
    }
}

impl crate::regularised::PosteriorRegularised for DdrTree {
    /// The spanning tree over the centres, unit weights.
    fn learned_graph(&self) -> Result<NeighbourGraph> {
        let edges: Vec<_> = self.edges.iter().map(|&(a, b, _)| (a, b, 1.0)).collect();
        NeighbourGraph::from_edges(self.centres.nrows(), &edges)
    }
}

impl Embedding for DdrTree {
    /// The latent points `Z` (N x d).
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    /// The last objective value with its terms, kind `objective`.
    fn evidence(&self) -> Evidence {
        self.evidence.clone()
    }
}

/// The block variables `{W, Z, C}`.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub(crate) w: DMatrix<f64>,
    pub(crate) z: DMatrix<f64>,
    pub(crate) c: DMatrix<f64>,
}

/// What [`r_residual_term`] needs once `E^T E` is known.
enum ResidualPlan {
    /// The term itself (`d >= min(N, D)`: the largest eigenvalue of `E^T E`, squared).
    Value(f64),
    /// The top-`d` eigenpairs of `E^T E`: the term needs `E V`.
    Directions(SymEigen),
}

/// The data and parameters of one fit. The data are `Y - 1 mu^T` for the stored `mean`
/// (the paper's centred data) or `Y` itself (`mean` `None`, the R package's); every
/// product subtracts the mean's share, so the centred N x D matrix is never formed.
pub(crate) struct Problem<'a> {
    pub(crate) y: &'a DMatrix<f64>,
    /// The column means `mu` subtracted from the rows of `y`, if any.
    mean: Option<&'a DVector<f64>>,
    /// The rows of `Y` laid out for `R^T Y`.
    pub(crate) y_rows: DataRows<'a>,
    pub(crate) yty: DMatrix<f64>,
    pub(crate) lambda: f64,
    pub(crate) sigma: f64,
    pub(crate) gamma: f64,
    pub(crate) dim: usize,
}

struct Run {
    state: State,
    edges: Vec<(usize, usize, f64)>,
    history: Vec<f64>,
    /// The terms of the last objective in `history`.
    terms: Vec<(String, f64)>,
    converged: bool,
}

impl<'a> Problem<'a> {
    /// [`r_residual_term`] of `E = Y - Z W^T` without forming `E`, given `ytz = Y^T Z`
    /// ([`Problem::residual_plan`], then `Y V` by its own pass over `Y`).
    fn r_residual_term(
        &self,
        z: &DMatrix<f64>,
        w: &DMatrix<f64>,
        ytz: &DMatrix<f64>,
    ) -> Result<f64> {
        let plan = self.residual_plan(w, ytz, &tr_mul_self(z))?;
        self.residual_finish(plan, z, w, None)
    }

    /// The first step of [`r_residual_term`] for `E = Y - Z W^T`, from `ytz = Y^T Z` and
    /// `ztz = Z^T Z`: `E^T E = Y^T Y - G - G^T + W (Z^T Z) W^T` with `G = (Y^T Z) W^T`, and
    /// its top eigenpairs. The second step needs `E V = Y V - Z (W^T V)`, so the whole
    /// term costs `O(N D d)` instead of `O(N D^2)`. When the residual holds less than
    /// `1e-6` of the data's sum of squares, the subtraction would lose more than six
    /// digits: `None`, and `E` is formed block by block instead ([`r_residual_term_of`]).
    fn residual_plan(
        &self,
        w: &DMatrix<f64>,
        ytz: &DMatrix<f64>,
        ztz: &DMatrix<f64>,
    ) -> Result<Option<ResidualPlan>> {
        let g = mul(ytz, &w.transpose());
        let wzzw = mul(&mul(w, ztz), &w.transpose());
        let ete = symmetrised(&self.yty - &g - g.transpose() + wzzw);
        if ete.trace() < 1e-6 * self.yty.trace() {
            return Ok(None);
        }
        let (n, p) = self.y.shape();
        residual_plan_of(n.min(p), self.dim, &ete).map(Some)
    }

    /// The second step of [`r_residual_term`]; for [`ResidualPlan::Directions`], `yv` is
    /// `Y V` when the caller has it (otherwise it is computed here).
    fn residual_finish(
        &self,
        plan: Option<ResidualPlan>,
        z: &DMatrix<f64>,
        w: &DMatrix<f64>,
        yv: Option<DMatrix<f64>>,
    ) -> Result<f64> {
        match plan {
            Some(ResidualPlan::Value(v)) => Ok(v),
            Some(ResidualPlan::Directions(eig)) => {
                let yv = yv.unwrap_or_else(|| self.y_mul(&eig.vectors));
                let ev = yv - mul(z, &tr_mul(w, &eig.vectors));
                Ok(residual_term_of_u(&ev, &eig.values))
            }
            None => r_residual_term_of(self.y, self.mean, z, w, self.dim),
        }
    }

    pub(crate) fn new(
        y: &'a DMatrix<f64>,
        lambda: f64,
        sigma: f64,
        gamma: f64,
        dim: usize,
    ) -> Self {
        Problem::with_mean(y, None, lambda, sigma, gamma, dim)
    }

    /// The problem on `Y - 1 mean^T`, which is not formed: `Yc^T Yc` is summed over
    /// blocks of centred rows, and the linear products take the mean's rank-one share
    /// away (`Yc B = Y B - 1 (mean^T B)`, `R^T Yc = R^T Y - (R^T 1) mean^T`), which loses
    /// no more than centring each entry first.
    pub(crate) fn centred(
        y: &'a DMatrix<f64>,
        mean: &'a DVector<f64>,
        lambda: f64,
        sigma: f64,
        gamma: f64,
        dim: usize,
    ) -> Self {
        Problem::with_mean(y, Some(mean), lambda, sigma, gamma, dim)
    }

    fn with_mean(
        y: &'a DMatrix<f64>,
        mean: Option<&'a DVector<f64>>,
        lambda: f64,
        sigma: f64,
        gamma: f64,
        dim: usize,
    ) -> Self {
        let yty = match mean {
            Some(mean) => centred_tr_mul_self(as_faer(y), mean.as_slice()),
            None => tr_mul_self(y),
        };
        Problem {
            y,
            mean,
            y_rows: DataRows::new(y),
            yty,
            lambda,
            sigma,
            gamma,
            dim,
        }
    }

    /// `Yc B` for the problem's data `Yc` (N x D) and `B` (D x m).
    pub(crate) fn y_mul(&self, b: &DMatrix<f64>) -> DMatrix<f64> {
        match self.mean {
            Some(mean) => centred_mul(as_faer(self.y), mean, b),
            None => mul(self.y, b),
        }
    }

    /// `R^T Yc`, `R^T R` and `R^T 1` ([`Assignment::products`] on the problem's data).
    fn products(&self, r: &Assignment) -> Products {
        let mut products = r.products(&self.y_rows);
        if let Some(mean) = self.mean {
            let mass = DVector::from_column_slice(&products.col_sums);
            for (mut col, &m) in products.tr_mul.column_iter_mut().zip(mean.iter()) {
                col.axpy(-m, &mass, 1.0);
            }
        }
        products
    }

    /// `||Yc - Z W^T||_F^2`, summed over fixed blocks of rows in order (the N x D
    /// residual is never formed).
    fn reconstruction_error(&self, z: &DMatrix<f64>, w: &DMatrix<f64>) -> f64 {
        let parts: Vec<f64> = residual_blocks(self.y.nrows())
            .par_iter()
            .map(|rows| residual_block(self.y, self.mean, z, w, rows).norm_squared())
            .collect();
        parts.iter().sum()
    }

    /// Algorithm 2 with the paper's objective, checked after every iteration.
    fn run_paper(&self, mut state: State, max_iter: usize, tol: f64) -> Result<Run> {
        // The previous iteration's assignments, whose buffers the next one reuses.
        let mut spare = None;
        let mut history: Vec<f64> = Vec::new();
        let mut terms = Vec::new();
        let mut edges = Vec::new();
        for _ in 0..max_iter {
            edges = spanning_tree(&state.c)?;
            let lap = tree_laplacian(&edges, state.c.nrows());
            let order = tree_order(&edges, state.c.nrows());
            let assign = soft_assign_reusing(&state.z, &state.c, self.sigma, order, spare.take());
            state = self.update_wzc(&lap, &assign, false)?.0;
            terms = self.objective_terms(&state, &edges, &assign);
            let f = sum_terms(&terms);
            if let Some(&prev) = history.last() {
                if f > prev + OBJECTIVE_SLACK * prev.abs().max(1.0) {
                    return Err(Error::numerical(
                        "DDRTree",
                        format!(
                            "the objective increased from {prev} to {f} at iteration {}, which \
                             exact block minimisation cannot do; the block systems are badly \
                             conditioned: increase sigma or rescale the data",
                            history.len() + 1
                        ),
                    ));
                }
                history.push(f);
                if relative_change(prev, f) < tol {
                    return Ok(Run {
                        state,
                        edges,
                        history,
                        terms,
                        converged: true,
                    });
                }
            } else {
                history.push(f);
            }
        }
        Ok(Run {
            state,
            edges,
            history,
            terms,
            converged: false,
        })
    }

    /// The R package's loop: tree and assignments, objective, stopping test, then update.
    /// `state` is the PCA start, `Z = Y W`, so `Y^T Z = Y^T Y W`; later residual terms come
    /// with the updates.
    fn run_r(&self, mut state: State, max_iter: usize, tol: f64) -> Result<Run> {
        let mut residual = self.r_residual_term(&state.z, &state.w, &(&self.yty * &state.w))?;
        let mut history: Vec<f64> = Vec::new();
        // The previous iteration's assignments, whose buffers the next one reuses.
        let mut spare = None;
        let mut terms = Vec::new();
        let mut edges = Vec::new();
        for _ in 0..max_iter {
            edges = spanning_tree(&state.c)?;
            let lap = tree_laplacian(&edges, state.c.nrows());
            let order = tree_order(&edges, state.c.nrows());
            let assign = soft_assign_reusing(&state.z, &state.c, self.sigma, order, spare.take());
            terms = vec![
                ("residual".into(), residual),
                ("tree".into(), self.lambda * tree_energy(&state.c, &edges)),
                ("assignment".into(), self.gamma * assign.soft_min),
            ];
            let f = sum_terms(&terms);
            let stop = history
                .last()
                .is_some_and(|&prev| relative_change(prev, f) < tol);
            history.push(f);
            if stop {
                return Ok(Run {
                    state,
                    edges,
                    history,
                    terms,
                    converged: true,
                });
            }
            let (next, next_residual) = self.update_wzc(&lap, &assign, true)?;
            (state, residual) = (next, next_residual.expect("requested with the update"));
            spare = Some(assign);
        }
        Ok(Run {
            state,
            edges,
            history,
            terms,
            converged: false,
        })
    }

    /// Proposition 5: the exact minimiser of (31) over `{W, Z, C}` for fixed `L` and `R`;
    /// with `r_objective`, also the R package's residual term at the new state.
    ///
    /// `Y^T Z`, `R^T Z` and `Z^T Z` come from the K x D and K x K products of the update
    /// (`Z = (Y W + R G) / (1 + gamma)`, `G = A^{-1} B W`), so `E^T E` and its eigenvectors
    /// `V` are known before `Z` is formed, and `Y V` comes from the same pass over `Y` as
    /// `Y W`.
    pub(crate) fn update_wzc(
        &self,
        lap: &DMatrix<f64>,
        r: &Assignment,
        r_objective: bool,
    ) -> Result<(State, Option<f64>)> {
        let g = self.gamma;
        let products = self.products(r);
        let m = self.centre_system(lap, &products.col_sums);
        let gram = products.gram;
        let mut a = gram.clone();
        a.zip_apply(&m, |aij, mij| *aij = (1.0 + g) / g * mij - *aij);
        let a_chol = Cholesky::new(&symmetrised(a), "DDRTree: the K x K Woodbury system")
            .map_err(|e| singular_advice(e, "((1+gamma)/gamma) M - R^T R"))?;
        let b = products.tr_mul;
        let ainv_b = a_chol.solve(&b);
        let mut yqy = tr_mul(&b, &ainv_b);
        yqy += &self.yty;
        yqy /= 1.0 + g;
        let w = top_eigenvectors(&symmetrised(yqy), self.dim)?;
        let gw = ainv_b * &w;
        let s = 1.0 / (1.0 + g);
        let ytz = (&self.yty * &w + b.tr_mul(&gw)) * s;
        let rtz = (&b * &w + &gram * &gw) * s;
        let c = self.centres_for(&m, &rtz)?;
        let plan = if r_objective {
            let ztz = (ytz.tr_mul(&w) + rtz.tr_mul(&gw)) * s;
            Some(self.residual_plan(&w, &ytz, &symmetrised(ztz))?)
        } else {
            None
        };
        // Y W, and Y V when the plan needs it, in one product.
        let (yw, yv) = match &plan {
            Some(Some(ResidualPlan::Directions(eig))) => {
                let (d, q) = (w.ncols(), eig.vectors.ncols());
                let mut wv = DMatrix::zeros(w.nrows(), d + q);
                wv.columns_mut(0, d).copy_from(&w);
                wv.columns_mut(d, q).copy_from(&eig.vectors);
                let ywv = self.y_mul(&wv);
                (
                    ywv.columns(0, d).into_owned(),
                    Some(ywv.columns(d, q).into_owned()),
                )
            }
            _ => (self.y_mul(&w), None),
        };
        let mut z = yw + r.mul(&gw);
        z *= s;
        let residual = match plan {
            Some(plan) => Some(self.residual_finish(plan, &z, &w, yv)?),
            None => None,
        };
        Ok((State { w, z, c }, residual))
    }

    /// `M = (lambda/gamma) L + Gamma`, `Gamma = diag(1^T R)` from the column sums of `R`.
    fn centre_system(&self, lap: &DMatrix<f64>, col_sums: &[f64]) -> DMatrix<f64> {
        let mut m = lap * (self.lambda / self.gamma);
        for (k, &v) in col_sums.iter().enumerate() {
            m[(k, k)] += v;
        }
        m
    }

    /// `C = M^{-1} R^T Z`, the stationary point of (31) in `C`, from `rtz = R^T Z`.
    fn centres_for(&self, m: &DMatrix<f64>, rtz: &DMatrix<f64>) -> Result<DMatrix<f64>> {
        let chol = Cholesky::new(m, "DDRTree: the centre system (lambda/gamma) L + Gamma")
            .map_err(|e| singular_advice(e, "(lambda/gamma) L + Gamma"))?;
        Ok(chol.solve(rtz))
    }

    /// The terms of the paper's objective (31) at `state`, tree `edges` and assignments
    /// `assign`, with `d_ik = ||z_i - c_k||^2`: `reconstruction` `||Y - Z W^T||^2`, `tree`
    /// `lambda sum_(a,b) ||c_a - c_b||^2` and `assignment` `gamma (sum r_ik d_ik + sigma
    /// sum r_ik log r_ik)`; the objective is their sum in this order ([`sum_terms`]).
    pub(crate) fn objective_terms(
        &self,
        state: &State,
        edges: &[(usize, usize, f64)],
        assign: &Assignment,
    ) -> Vec<(String, f64)> {
        let fit = self.reconstruction_error(&state.z, &state.w);
        let cluster = assign.dot_to(&state.z, &state.c) + assign.neg_entropy;
        vec![
            ("reconstruction".into(), fit),
            ("tree".into(), self.lambda * tree_energy(&state.c, edges)),
            ("assignment".into(), self.gamma * cluster),
        ]
    }
}

/// The sum of the terms in order, as the objective adds them.
fn sum_terms(terms: &[(String, f64)]) -> f64 {
    terms[1..].iter().fold(terms[0].1, |f, t| f + t.1)
}

/// Allowed increase of the objective between iterations, relative to its size (round-off).
const OBJECTIVE_SLACK: f64 = 1e-9;

fn relative_change(prev: f64, next: f64) -> f64 {
    (next - prev).abs() / prev.abs()
}

fn singular_advice(e: Error, what: &str) -> Error {
    match e {
        Error::NotPositiveDefinite { context, pivot, .. } => Error::NotPositiveDefinite {
            context,
            pivot,
            advice: format!(
                "{what} lost definiteness (a centre received no assignment weight); increase \
                 sigma or use fewer centres"
            ),
        },
        other => other,
    }
}

/// The first term of the R package's objective: with `E` the residual (N x D), the
/// package calls `get_major_eigenvalue(t(E), d)` and squares it. For `d >= min(N, D)` that
/// is `||E||_2^2`, squared again (`||E||_2^4`); otherwise it is the largest absolute entry
/// of the top-d left singular vectors of `E` (the package's right singular vectors of
/// `t(E)`), squared. Neither equals `||E||_F^2`; they are reproduced for agreement only.
pub fn r_residual_term(residual: &DMatrix<f64>, dim: usize) -> Result<f64> {
    let (n, p) = residual.shape();
    residual_term_from(n.min(p), dim, &tr_mul_self(residual), |v| mul(residual, v))
}

/// The rows `rows` of `E = Y - 1 mean^T - Z W^T` (no mean: `Y - Z W^T`).
fn residual_block(
    y: &DMatrix<f64>,
    mean: Option<&DVector<f64>>,
    z: &DMatrix<f64>,
    w: &DMatrix<f64>,
    rows: &Range<usize>,
) -> DMatrix<f64> {
    let mut e = DMatrix::zeros(rows.len(), y.ncols());
    as_faer_mut(&mut e).copy_from(as_faer(y).subrows(rows.start, rows.len()));
    if let Some(mean) = mean {
        for (mut col, &m) in e.column_iter_mut().zip(mean.iter()) {
            col.add_scalar_mut(-m);
        }
    }
    matmul(
        as_faer_mut(&mut e),
        Accum::Add,
        as_faer(z).subrows(rows.start, rows.len()),
        as_faer(w).transpose(),
        -1.0,
        faer::Par::Seq,
    );
    e
}

/// [`r_residual_term`] of `E = Y - 1 mean^T - Z W^T`, formed by small blocks of rows.
fn r_residual_term_of(
    y: &DMatrix<f64>,
    mean: Option<&DVector<f64>>,
    z: &DMatrix<f64>,
    w: &DMatrix<f64>,
    dim: usize,
) -> Result<f64> {
    let (n, p) = y.shape();
    let blocks = residual_blocks(n);
    let (residuals, parts): (Vec<DMatrix<f64>>, Vec<DMatrix<f64>>) = blocks
        .par_iter()
        .map(|rows| {
            let e = residual_block(y, mean, z, w, rows);
            let gram = lower_gram(as_faer(&e));
            (e, gram)
        })
        .unzip();
    let ete = sum_lower_and_mirror(parts);
    residual_term_from(n.min(p), dim, &ete, |v| {
        let parts: Vec<DMatrix<f64>> = residuals
            .par_iter()
            .map(|e| mul_with(as_faer(e), as_faer(v), faer::Par::Seq))
            .collect();
        let mut u = DMatrix::zeros(n, v.ncols());
        for (rows, part) in blocks.iter().zip(&parts) {
            u.rows_mut(rows.start, rows.len()).copy_from(part);
        }
        u
    })
}

/// The fixed blocks of [`RESIDUAL_ROWS`] rows of `0..n`.
fn residual_blocks(n: usize) -> Vec<Range<usize>> {
    (0..n.div_ceil(RESIDUAL_ROWS))
        .map(|b| b * RESIDUAL_ROWS..((b + 1) * RESIDUAL_ROWS).min(n))
        .collect()
}

/// Rows per block of the residual in [`r_residual_term_of`] (small blocks stay in cache
/// and are allocated from the heap, not mapped afresh).
const RESIDUAL_ROWS: usize = 256;

/// [`r_residual_term`] from `E^T E` and `u_of(V) = E V`, for `rank = min(N, D)`.
fn residual_term_from<F>(rank: usize, dim: usize, ete: &DMatrix<f64>, u_of: F) -> Result<f64>
where
    F: FnOnce(&DMatrix<f64>) -> DMatrix<f64>,
{
    Ok(match residual_plan_of(rank, dim, ete)? {
        ResidualPlan::Directions(eig) => residual_term_of_u(&u_of(&eig.vectors), &eig.values),
        ResidualPlan::Value(v) => v,
    })
}

/// For `d >= rank = min(N, D)` the term (the largest eigenvalue of `E^T E`, squared),
/// otherwise the top-`d` eigenpairs of `E^T E`.
fn residual_plan_of(rank: usize, dim: usize, ete: &DMatrix<f64>) -> Result<ResidualPlan> {
    if dim >= rank {
        let top = largest_eigenpairs(SymMatrix::Dense(ete), 1)?;
        return Ok(ResidualPlan::Value(top.values[0].max(0.0).powi(2)));
    }
    Ok(ResidualPlan::Directions(largest_eigenpairs(
        SymMatrix::Dense(ete),
        dim,
    )?))
}

/// The term from `u = E V` and the eigenvalues `s^2` of `E^T E`: the largest `|u_ij| / s_j`
/// (an entry of the left singular vectors), squared.
fn residual_term_of_u(u: &DMatrix<f64>, values: &DVector<f64>) -> f64 {
    let mut largest = 0.0f64;
    for (col, &s2) in u.column_iter().zip(values.iter()) {
        let s = s2.max(0.0).sqrt();
        if s > 0.0 {
            largest = largest.max(col.amax() / s);
        }
    }
    largest * largest
}

/// `lambda`-free tree term `Tr(C^T L C) = sum over edges ||c_a - c_b||^2`.
pub(crate) fn tree_energy(c: &DMatrix<f64>, edges: &[(usize, usize, f64)]) -> f64 {
    edges
        .iter()
        .map(|&(a, b, _)| (c.row(a) - c.row(b)).norm_squared())
        .sum()
}

/// Minimum spanning tree (Prim) of the rows of `c` under squared Euclidean distances
/// (the S-step (28); spec P10).
pub(crate) fn spanning_tree(c: &DMatrix<f64>) -> Result<Vec<(usize, usize, f64)>> {
    if c.nrows() == 1 {
        return Ok(Vec::new());
    }
    minimum_spanning_tree_dense(&pairwise_sq_dists(c))
}

/// Dense Laplacian `diag(S 1) - S` of a tree with unit edge weights over `k` nodes.
pub(crate) fn tree_laplacian(edges: &[(usize, usize, f64)], k: usize) -> DMatrix<f64> {
    Laplacian::new(k).dense(edges.iter().map(|&(a, b, _)| (a, b, 1.0)))
}

/// Top-`dim` eigenvectors (descending eigenvalues) of a symmetric matrix.
pub(crate) fn top_eigenvectors(a: &DMatrix<f64>, dim: usize) -> Result<DMatrix<f64>> {
    Ok(largest_eigenpairs(SymMatrix::Dense(a), dim)?.vectors)
}

/// The R package's k-means start of the centres: Lloyd's k-means on the rows of `z`
/// (`unfold_eval::kmeans_with`) started from the rows `floor(linspace(1, N, K)) - 1` (the
/// package's `seq(1, N, length.out = K)` subsetting), at most [`KMEANS_ROUNDS`] rounds,
/// stopping early when the assignments no longer change or the squared centre shift is at
/// most [`KMEANS_TOL`] times the mean per-column variance. An empty cluster keeps its
/// previous centre. The labels come from the vectorised [`nearest_centres`].
pub(crate) fn kmeans_evenly_started(z: &DMatrix<f64>, k: usize) -> Result<DMatrix<f64>> {
    let opts = KMeansOptions {
        max_iter: KMEANS_ROUNDS,
        tol: KMEANS_TOL,
        init: KMeansInit::EvenlySpaced,
        empty: EmptyClusters::KeepCentre,
        ..KMeansOptions::default()
    };
    Ok(kmeans_with(z, k, &opts, &nearest_centres)?.centres)
}

/// Rounds of Lloyd's k-means in the centre initialisation (the R port's `max_iter = 10`).
const KMEANS_ROUNDS: usize = 10;
/// Relative centre-shift tolerance of the k-means initialisation.
const KMEANS_TOL: f64 = 1e-4;

pub use registration::DdrTreeMethod;

/// DDRTree in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{
        decode, Family, FitData, Interval, Method, MethodInfo, Model, Overlay, ParamSpec, Settings,
        Table,
    };
    use unfold_core::Observer;
    use unfold_core::{Convergence, EvidenceKind};

    const ABOUT: &str = "discriminative dimensionality reduction with a tree over K centres (reversed graph embedding, as in Monocle 2)";

    /// DDRTree.
    pub struct DdrTreeMethod;

    impl Method for DdrTreeMethod {
        fn info(&self) -> MethodInfo {
            MethodInfo::new("ddrtree", Family::Regularised, ABOUT)
                .params([
                    ParamSpec::real_auto(
                        "lambda",
                        "5 N (the R package's)",
                        Interval::POSITIVE,
                        "mpme: the weight of the log-determinant; drtree: the tree penalty; \
                         ddrtree: the weight of the tree term",
                    ),
                    ParamSpec::real(
                        "sigma",
                        DdrTreeParams::new(2).sigma,
                        Interval::POSITIVE,
                        "ddrtree: the bandwidth of the soft assignment of points to \
                         centres",
                    ),
                    ParamSpec::real(
                        "gamma",
                        DdrTreeParams::new(2).gamma,
                        Interval::POSITIVE,
                        "ddrtree: the weight of the clustering term",
                    ),
                    ParamSpec::count_auto(
                        "ncenters",
                        "N below 100 points, else round(200 ln N / (ln N + ln 100)) (Monocle 2's)",
                        1,
                        "ddrtree: the number of centres K",
                    ),
                    ParamSpec::choice(
                        "compat",
                        "paper",
                        &["paper", "r"],
                        "ddrtree: the paper's model (centred, objective checked) or \
                         the R package's conventions (and Monocle 2's pseudotime, along \
                         a tree over the cells)",
                    ),
                    ParamSpec::flag(
                        "order",
                        "ddrtree: order the points along the tree (pseudotime, states, \
                         branch points; written as <out>.order.csv)",
                    ),
                    ParamSpec::count(
                        "min_branch",
                        0,
                        0,
                        "ddrtree: side branches of fewer centres start no state and make no \
                         branch point (Monocle 3's minimal branch length, 10 there; 0: every \
                         centre of degree above 2, as Monocle 2)",
                    ),
                    ParamSpec::count_auto(
                        "root_cell",
                        "an end of the tree's diameter",
                        0,
                        "ddrtree: the cell (0-based row) pseudotime starts from; implies \
                         --order",
                    ),
                    ParamSpec::count_auto(
                        "root_state",
                        "none",
                        1,
                        "ddrtree: start pseudotime at the tip of this state (as numbered \
                         from the default root); implies --order",
                    ),
                ])
                .evidence(EvidenceKind::Objective)
        }

        fn fit(
            &self,
            data: &FitData<'_>,
            s: &Settings,
            _observer: &dyn Observer,
        ) -> Result<Box<dyn Model>> {
            let mut params = DdrTreeParams::new(s.count("dim")?);
            params.lambda = s.real_opt("lambda")?;
            params.sigma = s.real("sigma")?;
            params.gamma = s.real("gamma")?;
            params.ncenters = s.count_opt("ncenters")?;
            params.compat = match s.choice("compat")? {
                "r" => Compat::R,
                _ => Compat::Paper,
            };
            let root = match (s.count_opt("root_cell")?, s.count_opt("root_state")?) {
                (Some(_), Some(_)) => {
                    return Err(Error::invalid(
                        "root_cell",
                        "give a root cell or a root state, not both",
                    ))
                }
                (Some(i), None) => Some(Root::Cell(i)),
                (None, Some(state)) => Some(Root::State(state)),
                (None, None) => s.flag("order")?.then_some(Root::Auto),
            };
            let fit = params.fit(data.y)?;
            Ok(Box::new(match root {
                Some(root) => fit.ordered(root, s.count("min_branch")?)?,
                None => fit,
            }))
        }

        fn decode(&self, payload: &[u8]) -> Result<Box<dyn Model>> {
            decode::<DdrTree>(payload)
        }
    }

    impl Model for DdrTree {
        fn method(&self) -> &'static str {
            "ddrtree"
        }

        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the latent points", &self.coords, None, None)?;
            let (n, d) = self.coords.shape();
            matrix("the projection W", &self.w, None, Some(d))?;
            vector("the mean", &self.mean, Some(self.w.nrows()))?;
            matrix("the centres", &self.centres, None, Some(d))?;
            let k = self.centres.nrows();
            pairs("tree edge", self.edges.iter().map(|&(a, b, _)| (a, b)), k)?;
            let lengths: Vec<f64> = self.edges.iter().map(|e| e.2).collect();
            finite("the tree's edge lengths", &lengths)?;
            positive("lambda", self.lambda)?;
            let Some(t) = &self.trajectory else {
                return Ok(());
            };
            length("the pseudotimes", t.pseudotime.len(), n)?;
            finite("the pseudotimes", &t.pseudotime)?;
            length("the states", t.state.len(), n)?;
            length("the cells' centres", t.centre.len(), n)?;
            indices("the centre of cell", &t.centre, k)?;
            length("the positions", t.position.len(), n)?;
            let ends: Vec<usize> = t.position.iter().flat_map(|p| [p.from, p.to]).collect();
            indices("the end of a cell's edge", &ends, k)?;
            let fractions: Vec<f64> = t.position.iter().map(|p| p.t).collect();
            finite("the positions", &fractions)?;
            indices("the root cell", &[t.root_cell], n)?;
            indices("branch point", &t.branch_points, k)
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }

        /// The learned tree over the centres and the centres themselves.
        fn tables(&self) -> Vec<Table> {
            let tree = DMatrix::from_fn(self.edges.len(), 3, |r, c| {
                let (i, j, d2) = self.edges[r];
                [i as f64, j as f64, d2][c]
            });
            let names = ["centre_i", "centre_j", "squared_length"];
            let axes = (1..=self.centres.ncols()).map(|j| format!("x{j}"));
            let mut tables = vec![
                Table {
                    name: "tree",
                    header: names.iter().map(|s| s.to_string()).collect(),
                    rows: tree,
                },
                Table {
                    name: "centres",
                    header: axes.collect(),
                    rows: self.centres.clone(),
                },
            ];
            if let Some(t) = &self.trajectory {
                tables.push(Table {
                    name: "order",
                    header: ["pseudotime", "state", "centre"].map(String::from).to_vec(),
                    rows: DMatrix::from_fn(t.pseudotime.len(), 3, |i, c| match c {
                        0 => t.pseudotime[i],
                        1 => t.state[i] as f64,
                        _ => t.centre[i] as f64,
                    }),
                });
            }
            tables
        }

        /// The tree over the centres (first two latent coordinates), and the pseudotime of
        /// the ordering when there is one.
        fn overlay(&self) -> Option<Overlay> {
            if self.centres.ncols() < 2 {
                return None;
            }
            let at = |c: usize| (self.centres[(c, 0)], self.centres[(c, 1)]);
            Some(Overlay {
                colour_by: self
                    .trajectory
                    .as_ref()
                    .map(|t| ("pseudotime".to_string(), t.pseudotime.clone())),
                segments: self.edges.iter().map(|&(a, b, _)| [at(a), at(b)]).collect(),
            })
        }

        /// The ordering's root cell, branch points and number of states.
        fn notes(&self) -> Vec<(String, String)> {
            let Some(t) = &self.trajectory else {
                return Vec::new();
            };
            let branch_points = if t.branch_points.is_empty() {
                "none".to_string()
            } else {
                t.branch_points
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            vec![
                ("root_cell".to_string(), t.root_cell.to_string()),
                ("branch_points".to_string(), branch_points),
                ("states".to_string(), t.states.to_string()),
            ]
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rand::Rng;
    use rand_distr::{Distribution, StandardNormal};

    /// A noisy three-branch tree in 2-D, rotated into `p` dimensions, plus an offset.
    pub(crate) fn branching(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        let basis = DMatrix::<f64>::from_fn(p, p, |_, _| StandardNormal.sample(&mut rng))
            .qr()
            .q();
        let dirs = [(1.0, 0.0), (-0.5, 0.8), (-0.5, -0.8)];
        DMatrix::from_fn(n, p, |_, _| 0.0).map_with_location(|i, j, _| {
            let (dx, dy) = dirs[i % 3];
            let t = (i / 3) as f64 / (n / 3) as f64 * 4.0;
            let latent = [t * dx, t * dy];
            let mut v = 1.5 + 0.05 * rng.random::<f64>();
            for (l, &x) in latent.iter().enumerate() {
                v += basis[(j, l)] * x;
            }
            v
        })
    }

    fn noise(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        DMatrix::from_fn(n, p, |_, _| StandardNormal.sample(&mut rng))
    }

    /// The tree, its Laplacian and the assignments of a first iteration.
    type FirstStep = (Vec<(usize, usize, f64)>, DMatrix<f64>, Assignment);

    /// A problem at its first iteration: state, tree, Laplacian and assignments.
    fn first_iteration(y: &DMatrix<f64>, k: usize, sigma: f64) -> (Problem<'_>, FirstStep) {
        let problem = Problem::new(y, 3.0, sigma, 2.0, 2);
        let w = top_eigenvectors(&problem.yty, 2).unwrap();
        let z = y * &w;
        let c = kmeans_evenly_started(&z, k).unwrap();
        let edges = spanning_tree(&c).unwrap();
        let lap = tree_laplacian(&edges, k);
        let assign = soft_assign_to(&z, &c, sigma, tree_order(&edges, k));
        (problem, (edges, lap, assign))
    }

    fn centred(y: DMatrix<f64>) -> DMatrix<f64> {
        let mean = y.row_mean();
        DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - mean[j])
    }

    /// The paper's centring done inside the products ([`Problem::centred`]) gives what the
    /// centred copy gives: `Y^T Y`, the update (31) and the objective's terms, to
    /// round-off, on data far from the origin, through both layouts of `R^T Y` (lanes for
    /// narrow data, dense blocks from `DENSE_PRODUCT_COLS` columns on).
    #[test]
    fn implicit_centring_matches_the_centred_copy() {
        for p in [5, assign::DENSE_PRODUCT_COLS + 4] {
            let y = branching(240, p, 7).add_scalar(40.0) + noise(240, p, 8) * 0.05;
            let mean = y.row_mean().transpose();
            let yc = centred(y.clone());
            let (copy, (edges, lap, assign)) = first_iteration(&yc, 10, 0.2);
            let implicit = Problem::centred(&y, &mean, copy.lambda, 0.2, copy.gamma, 2);
            let close = |a: &DMatrix<f64>, b: &DMatrix<f64>, what: &str| {
                let rel = (a - b).amax() / b.amax();
                assert!(rel < 1e-11, "p = {p}, {what}: relative difference {rel:e}");
            };
            close(&implicit.yty, &copy.yty, "Y^T Y");
            let w = top_eigenvectors(&copy.yty, 2).unwrap();
            close(&implicit.y_mul(&w), &(&yc * &w), "Y W");
            let want = copy.update_wzc(&lap, &assign, false).unwrap().0;
            let got = implicit.update_wzc(&lap, &assign, false).unwrap().0;
            close(&got.w, &want.w, "W");
            close(&got.z, &want.z, "Z");
            close(&got.c, &want.c, "C");
            let terms = |problem: &Problem<'_>| problem.objective_terms(&want, &edges, &assign);
            let residual = (&yc - &want.z * want.w.transpose()).norm_squared();
            for ((name, a), (_, b)) in terms(&implicit).iter().zip(terms(&copy).iter()) {
                assert!(
                    (a - b).abs() <= 1e-11 * b.abs(),
                    "p = {p}, {name}: {a} vs {b}"
                );
            }
            assert!((terms(&implicit)[0].1 - residual).abs() <= 1e-11 * residual);
        }
    }

    #[test]
    fn automatic_centres_follow_monocle() {
        // Monocle 2's cal_ncenter: round(2 * 100 * log(n) / (log(n) + log(100))).
        assert_eq!(auto_centres(99), 99);
        assert_eq!(auto_centres(100), 100);
        assert_eq!(auto_centres(1000), 120);
        assert_eq!(auto_centres(20_000), 137);
        assert_eq!(auto_centres(100_000), 143);
        let y = branching(150, 5, 3) + noise(150, 5, 4) * 0.1;
        let fit = DdrTreeParams::new(2).fit(&y).unwrap();
        assert_eq!(fit.centres.nrows(), auto_centres(150));
    }

    #[test]
    fn woodbury_update_equals_dense_q() {
        let y = centred(branching(24, 5, 1));
        let (problem, (_, lap, assign)) = first_iteration(&y, 6, 0.5);
        let got = problem.update_wzc(&lap, &assign, false).unwrap().0;
        // Proposition 5 with the N x N Q formed explicitly.
        let (g, r) = (problem.gamma, &assign.to_dense());
        let sums: Vec<f64> = r.column_iter().map(|c| c.sum()).collect();
        let m = problem.centre_system(&lap, &sums);
        let a = m * ((1.0 + g) / g) - r.transpose() * r;
        let q =
            (DMatrix::identity(24, 24) + r * a.try_inverse().unwrap() * r.transpose()) / (1.0 + g);
        // Q also equals ((1+gamma) I - gamma R M^{-1} R^T)^{-1} (the proof of Prop. 5).
        let m_inv = problem.centre_system(&lap, &sums).try_inverse().unwrap();
        let q_direct = (DMatrix::identity(24, 24) * (1.0 + g) - r * m_inv * r.transpose() * g)
            .try_inverse()
            .unwrap();
        assert!((&q - &q_direct).norm() < 1e-10 * q.norm());
        let yqy = symmetrised(y.transpose() * &q * &y);
        let w = top_eigenvectors(&yqy, 2).unwrap();
        for j in 0..2 {
            let s = w.column(j).dot(&got.w.column(j)).signum();
            assert!((w.column(j) * s - got.w.column(j)).norm() < 1e-9);
        }
        assert!((&q * &y * &got.w - &got.z).norm() < 1e-9 * got.z.norm());
        let c = problem.centre_system(&lap, &sums).try_inverse().unwrap() * r.transpose() * &got.z;
        assert!((c - &got.c).norm() < 1e-9 * got.c.norm());
    }

    #[test]
    fn each_closed_form_update_is_stationary() {
        let y = centred(branching(40, 6, 2));
        let (problem, (edges, lap, assign)) = first_iteration(&y, 8, 0.3);
        let best = problem.update_wzc(&lap, &assign, false).unwrap().0;
        let f = |s: &State| sum_terms(&problem.objective_terms(s, &edges, &assign));
        let f0 = f(&best);
        let eps = 1e-3;
        for trial in 0..4u64 {
            for sign in [-1.0, 1.0] {
                let mut s = best.clone();
                s.z += noise(40, 2, 10 + trial) * (sign * eps);
                assert!(f(&s) > f0, "perturbing Z lowered the objective");
                let mut s = best.clone();
                s.c += noise(8, 2, 20 + trial) * (sign * eps);
                assert!(f(&s) > f0, "perturbing C lowered the objective");
                // Rotate W within the Stiefel manifold: W' = exp(eps A) W, A skew.
                let a = noise(6, 6, 30 + trial);
                let skew = (&a - a.transpose()) * (sign * eps);
                let rot = skew.exp();
                let mut s = best.clone();
                s.w = rot * &best.w;
                assert!(f(&s) > f0, "rotating W lowered the objective");
            }
        }
    }

    #[test]
    fn objective_never_increases() {
        let y = branching(90, 5, 3) + noise(90, 5, 4) * 0.1;
        for ncenters in [None, Some(12)] {
            let params = DdrTreeParams {
                lambda: Some(2.0),
                sigma: 0.05,
                ncenters,
                max_iter: 25,
                tol: 0.0,
                ..DdrTreeParams::new(2)
            };
            let fit = params.fit(&y).unwrap();
            assert_eq!(fit.convergence.trace.len(), 25);
            for pair in fit.convergence.trace.windows(2) {
                assert!(pair[1] <= pair[0] * (1.0 + 1e-12), "{pair:?}");
            }
            let k = ncenters.unwrap_or(90);
            assert_eq!(fit.centres.shape(), (k, 2));
            assert_eq!(fit.edges.len(), k - 1);
            assert_eq!(fit.coords().shape(), (90, 2));
            let wtw = fit.w.tr_mul(&fit.w);
            assert!((wtw - DMatrix::identity(2, 2)).norm() < 1e-10);
        }
    }

    #[test]
    fn soft_assignments_are_a_stable_softmax() {
        // Points as columns: dist[(k, i)] = ||z_i - c_k||^2.
        let dist = DMatrix::from_column_slice(3, 2, &[1.0, 2.0, 4.0, 1e4, 1e4 + 1.0, 3e4]);
        for order in [vec![0, 1, 2], vec![2, 0, 1]] {
            for sigma in [0.7, 1e-6] {
                let a = soft_assign(&dist, sigma, order.clone());
                let r = a.to_dense();
                for i in 0..2 {
                    assert!((r.row(i).sum() - 1.0).abs() < 1e-15);
                }
                // At the optimal R, sum r d + sigma sum r log r = -sigma sum log sum exp(-d/sigma).
                assert!(
                    (a.dot(&dist) + a.neg_entropy - a.soft_min).abs() < 1e-9 * a.soft_min.abs()
                );
                assert!(r.iter().all(|v| v.is_finite()));
            }
            let r = soft_assign(&dist, 0.7, order.clone()).to_dense();
            let z: f64 = (0..3).map(|k| (-dist[(k, 0)] / 0.7).exp()).sum();
            assert!((r[(0, 1)] - (-2.0f64 / 0.7).exp() / z).abs() < 1e-15);
            // With sigma = 1e-6 the second point's other centres underflow to exactly zero.
            let a = soft_assign(&dist, 1e-6, order);
            assert_eq!(
                a.to_dense().row(1).iter().copied().collect::<Vec<_>>(),
                [1.0, 0.0, 0.0]
            );
            assert_eq!(a.nnz(), 2);
        }
    }

    #[test]
    fn assignments_from_points_equal_the_dense_softmax() {
        // Enough points for several row blocks; a small sigma leaves R sparse. Latent
        // dimensions 2 (its own distance loop) and 3.
        for (dim, sigma) in [(2, 5.0), (2, 0.05), (3, 0.05)] {
            let (z, c) = (noise(1500, dim, 8), noise(40, dim, 9));
            let dist = sq_dists_to(&c, &z);
            let edges = spanning_tree(&c).unwrap();
            let a = soft_assign_to(&z, &c, sigma, tree_order(&edges, 40));
            let b = soft_assign(&dist, sigma, (0..40).collect());
            let r = a.to_dense();
            let (mut neg_entropy, mut soft_min) = (0.0, 0.0);
            for i in 0..1500 {
                let col = dist.column(i);
                let shift = col.min();
                let total: f64 = col.iter().map(|d| (-(d - shift) / sigma).exp()).sum();
                soft_min += shift - sigma * total.ln();
                for k in 0..40 {
                    let x = -(col[k] - shift) / sigma;
                    let want = if x > -37.0 { x.exp() / total } else { 0.0 };
                    assert!((r[(i, k)] - want).abs() <= 1e-12 * want, "{i} {k}");
                    if want > 0.0 {
                        neg_entropy += sigma * want * (x - total.ln());
                    }
                }
            }
            assert!((a.soft_min - soft_min).abs() < 1e-12 * soft_min.abs());
            assert!((a.neg_entropy - neg_entropy).abs() < 1e-12 * neg_entropy.abs());
            assert!((b.to_dense() - &r).norm() < 1e-12 * r.norm());
            if sigma < 1.0 {
                assert!(a.nnz() < 1500 * 40 / 2, "{} non-zeros", a.nnz());
            }
        }
    }

    #[test]
    fn sparse_products_match_dense() {
        // A random pattern (runs, gaps, empty rows) over several row blocks and a shuffled
        // centre order.
        let (n, k) = (1300, 37);
        let mut rng = unfold_core::seeded_rng(8);
        let r = DMatrix::from_fn(n, k, |i, c| {
            let near = (i * 7 + c * 3) % 11 < 4 || (i % 5 == 0 && c % 9 == 1);
            if i % 97 == 3 || !near {
                0.0
            } else {
                rng.random::<f64>()
            }
        });
        let mut order: Vec<usize> = (0..k).collect();
        for j in (1..k).rev() {
            order.swap(j, rng.random_range(0..=j));
        }
        let dist = noise(k, n, 12).map(f64::abs);
        let x = noise(n, 50, 10);
        let g = noise(k, 3, 11);
        for order in [order, (0..k).collect()] {
            let a = Assignment::from_dense(&r, order);
            assert_eq!(a.to_dense(), r);
            let close = |got: DMatrix<f64>, want: DMatrix<f64>| {
                assert!((&got - &want).norm() <= 1e-12 * want.norm());
            };
            let products = a.products(&DataRows::Lanes(assign::LaneRows::new(&x)));
            assert_eq!(products.gram, products.gram.transpose());
            close(products.gram.clone(), r.transpose() * &r);
            close(products.tr_mul, r.transpose() * &x);
            // From DENSE_PRODUCT_COLS columns on, R^T X by dense products over each
            // block's window: R^T R and the sums are the sparse path's, bit for bit.
            let wide = noise(n, assign::DENSE_PRODUCT_COLS + 5, 13);
            let rows = DataRows::new(&wide);
            assert!(matches!(rows, DataRows::Columns(_)));
            let dense = a.products(&rows);
            assert_eq!(dense.gram, products.gram);
            assert_eq!(dense.col_sums, products.col_sums);
            close(dense.tr_mul, r.transpose() * &wide);
            let sums = DMatrix::from_vec(1, k, products.col_sums);
            close(sums, DMatrix::from_fn(1, k, |_, c| r.column(c).sum()));
            for p in [1, 2, 3] {
                let g = g.columns(0, p).into_owned();
                close(a.mul(&g), &r * &g);
            }
            let wide = noise(k, 5, 15);
            close(a.mul(&wide), &r * &wide);
            let want = r.transpose().dot(&dist);
            assert!((a.dot(&dist) - want).abs() < 1e-12 * want);
            // The same sum with the distances of points and centres, entry by entry.
            let (z, c) = (noise(n, 3, 18), noise(k, 3, 19));
            let want = r.transpose().dot(&sq_dists_to(&c, &z));
            assert!((a.dot_to(&z, &c) - want).abs() < 1e-12 * want);
        }
    }

    #[test]
    fn nearest_centres_are_the_first_minima() {
        // 21 centres (a partial last chunk of eight), with repeated rows so that ties occur,
        // some of them in the last chunk.
        let z = noise(700, 2, 16);
        let mut c = noise(21, 2, 17);
        for (from, to) in [(3, 9), (3, 19), (12, 20), (5, 17)] {
            let row = c.row(from).into_owned();
            c.row_mut(to).copy_from(&row);
        }
        let dist = sq_dists_to(&c, &z);
        let labels = nearest_centres(&z, &c);
        for (i, &label) in labels.iter().enumerate() {
            let col = dist.column(i);
            let least = col.min();
            assert_eq!(
                label,
                col.iter().position(|&v| v == least).unwrap(),
                "point {i}"
            );
        }
        assert!(labels.iter().any(|&l| l >= 16));
    }

    #[test]
    fn exp_is_exp_to_round_off() {
        let mut rng = unfold_core::seeded_rng(14);
        let mut worst = 0.0f64;
        for trial in 0..20_000 {
            let mut x = [0.0; 8];
            for (l, v) in x.iter_mut().enumerate() {
                *v = match (trial + l) % 4 {
                    0 => -37.0 * rng.random::<f64>(),
                    1 => -1e-3 * rng.random::<f64>(),
                    2 => -((trial % 80) as f64) * 0.5 * std::f64::consts::LN_2,
                    _ => 700.0 * (2.0 * rng.random::<f64>() - 1.0),
                };
            }
            for (got, &v) in x.map(unfold_linalg::exp).iter().zip(&x) {
                worst = worst.max((got - v.exp()).abs() / v.exp());
            }
        }
        assert!(worst < 3.0 * f64::EPSILON, "worst relative error {worst:e}");
        assert_eq!([0.0; 8].map(unfold_linalg::exp), [1.0; 8]);
    }

    #[test]
    fn tree_order_keeps_subtrees_contiguous() {
        let c = noise(60, 2, 13);
        let edges = spanning_tree(&c).unwrap();
        let order = tree_order(&edges, 60);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..60).collect::<Vec<_>>());
        let mut position = vec![0; 60];
        for (p, &v) in order.iter().enumerate() {
            position[v] = p;
        }
        // Rooted at order[0], every node's parent comes earlier, and the subtree of the
        // node at position p fills positions p..p + size.
        let mut parent = vec![usize::MAX; 60];
        for &v in &order[1..] {
            let neighbours = edges
                .iter()
                .filter_map(|&(a, b, _)| (a == v).then_some(b).or((b == v).then_some(a)));
            let earlier: Vec<usize> = neighbours.filter(|&u| position[u] < position[v]).collect();
            assert_eq!(earlier.len(), 1);
            parent[v] = earlier[0];
        }
        for v in 0..60 {
            let mut members = Vec::new();
            for (u, &pu) in position.iter().enumerate() {
                let mut w = u;
                while w != v && parent[w] != usize::MAX {
                    w = parent[w];
                }
                if w == v {
                    members.push(pu);
                }
            }
            members.sort_unstable();
            let p = position[v];
            assert_eq!(members, (p..p + members.len()).collect::<Vec<_>>());
        }
    }

    /// The residual term from `Y^T Y`, `Y^T Z` and `Z^T Z` equals the one from the formed
    /// residual, with `d < D` (singular vectors) and `d >= D` (largest singular value),
    /// and near-exact fits take the direct path.
    #[test]
    fn residual_term_without_the_residual_matches_the_formed_one() {
        let y = noise(300, 6, 11);
        for dim in [2, 6] {
            let problem = Problem::new(&y, 1.0, 0.1, 1.0, dim);
            let w = top_eigenvectors(&problem.yty, dim.min(3)).unwrap();
            for z in [&y * &w, (&y * &w) * 0.5 + noise(300, dim.min(3), 2) * 0.1] {
                let direct = r_residual_term(&(&y - &z * w.transpose()), dim).unwrap();
                let cheap = problem.r_residual_term(&z, &w, &y.tr_mul(&z)).unwrap();
                assert!(
                    (cheap - direct).abs() < 1e-10 * direct.abs(),
                    "{cheap} vs {direct}"
                );
            }
        }
        // Y = Z W^T exactly: the guard falls back to forming E, whose term is ~0.
        let w = top_eigenvectors(&tr_mul_self(&y), 2).unwrap();
        let exact = (&y * &w) * w.transpose();
        let problem = Problem::new(&exact, 1.0, 0.1, 1.0, 6);
        let z = &exact * &w;
        let got = problem.r_residual_term(&z, &w, &exact.tr_mul(&z)).unwrap();
        assert!(
            got.abs() < 1e-40 * tr_mul_self(&exact).trace().powi(2),
            "{got}"
        );
    }

    /// The residual term an update returns (from `Z^T Z` by small products and `Y V` in
    /// the pass that forms `Y W`) is the term of the formed residual at the new state.
    #[test]
    fn update_returns_the_residual_term_of_its_state() {
        let y = branching(60, 5, 7) + noise(60, 5, 8) * 0.05;
        let (problem, (_, lap, assign)) = first_iteration(&y, 9, 0.2);
        let (state, residual) = problem.update_wzc(&lap, &assign, true).unwrap();
        let want = r_residual_term(&(&y - &state.z * state.w.transpose()), 2).unwrap();
        let got = residual.unwrap();
        assert!((got - want).abs() < 1e-10 * want.abs(), "{got} vs {want}");
        assert!(problem
            .update_wzc(&lap, &assign, false)
            .unwrap()
            .1
            .is_none());
    }

    #[test]
    fn r_residual_term_follows_the_package() {
        let e = noise(9, 4, 5);
        let svd = e.clone().svd(true, false);
        let mut order: Vec<usize> = (0..4).collect();
        order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
        let u = svd.u.unwrap();
        let top2 = order[..2]
            .iter()
            .map(|&j| u.column(j).amax())
            .fold(0.0, f64::max);
        assert!((r_residual_term(&e, 2).unwrap() - top2 * top2).abs() < 1e-10);
        let s = svd.singular_values.max();
        assert!((r_residual_term(&e, 4).unwrap() - s.powi(4)).abs() < 1e-9 * s.powi(4));
    }

    #[test]
    fn r_mode_stops_on_relative_change_and_keeps_data_uncentred() {
        let y = branching(60, 4, 6);
        let params = DdrTreeParams {
            compat: Compat::R,
            ncenters: Some(10),
            lambda: Some(1.0),
            sigma: 0.1,
            ..DdrTreeParams::new(2)
        };
        let fit = params.fit(&y).unwrap();
        assert_eq!(fit.mean, DVector::zeros(4));
        let h = &fit.convergence.trace;
        if fit.convergence.converged {
            let (a, b) = (h[h.len() - 2], h[h.len() - 1]);
            assert!((b - a).abs() / a.abs() < 1e-3);
        } else {
            assert_eq!(h.len(), 20);
        }
        for pair in h.windows(2).take(h.len().saturating_sub(2)) {
            assert!((pair[1] - pair[0]).abs() / pair[0].abs() >= 1e-3);
        }
    }

    #[test]
    fn rejects_bad_input() {
        let y = branching(30, 4, 7);
        let base = DdrTreeParams::new(2);
        for (params, name) in [
            (
                DdrTreeParams {
                    lambda: Some(0.0),
                    ..base.clone()
                },
                "lambda",
            ),
            (
                DdrTreeParams {
                    lambda: Some(-1.0),
                    ..base.clone()
                },
                "lambda",
            ),
            (
                DdrTreeParams {
                    sigma: 0.0,
                    ..base.clone()
                },
                "sigma",
            ),
            (
                DdrTreeParams {
                    sigma: -1e-3,
                    ..base.clone()
                },
                "sigma",
            ),
            (
                DdrTreeParams {
                    gamma: 0.0,
                    ..base.clone()
                },
                "gamma",
            ),
            (
                DdrTreeParams {
                    ncenters: Some(31),
                    ..base.clone()
                },
                "ncenters",
            ),
            (
                DdrTreeParams {
                    ncenters: Some(0),
                    ..base.clone()
                },
                "ncenters",
            ),
            (
                DdrTreeParams {
                    max_iter: 0,
                    ..base.clone()
                },
                "max_iter",
            ),
        ] {
            match params.fit(&y) {
                Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
                other => panic!("expected an error about {name}, got {other:?}"),
            }
        }
        assert!(matches!(
            DdrTreeParams::new(4).fit(&y),
            Err(Error::DimensionTooLarge { .. })
        ));
    }

    /// The fit reports its real iterations and one objective value per iteration.
    #[test]
    fn convergence_reports_every_iteration() {
        let fit = DdrTreeParams::new(2).fit(&branching(60, 4, 6)).unwrap();
        let c = &fit.convergence;
        assert!(c.iterations > 0, "{c:?}");
        assert_eq!(c.trace.len(), c.iterations);
        assert_eq!(*c.trace.last().unwrap(), fit.evidence().value);
    }
}
