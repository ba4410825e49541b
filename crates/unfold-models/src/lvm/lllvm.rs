//! The Locally Linear Latent Variable Model (LL-LVM; Park et al., NIPS 2015;
//! `specs/lllvm.md`).
//!
//! Each point has a latent position `x_i` (dx) and a locally linear map `C_i` (dy x dx) with
//! `y_j - y_i ≈ C_i (x_j - x_i)` on the edges of a neighbourhood graph G. The prior on x is
//! the Gaussian field with precision `alpha I + 2 L (x) I` (§2.2), the prior on C the matrix
//! normal with column precision `eps 1 1^T + 2 L` (§2.3), and the likelihood is the
//! **normalised** Gaussian `N(mu_y, (eps 1 1^T + 2 gamma L)^{-1} (x) I)` (§2.4, pitfall 1).
//! Variational EM with `q(x) q(C)` (full joint Gaussian over all n dx coordinates and a
//! matrix normal over all maps) maximises the bound of §3.5, which compares graphs and latent
//! dimensions (§4.1–4.3).
//!
//! Exactness and speed: the expectations `<A>` and `<Gamma>` use the decomposition
//! `Ltilde = 1 1^T / (eps n^2) + L^+ / (2 gamma)` so that epsilon drops out exactly
//! (pitfall 5), with second moments `<C^T C> = mu_C^T mu_C + dy Sigma_C` and
//! `<x x^T> = mu_x mu_x^T + Sigma_x` (pitfall 6), evaluated by sparse products with G
//! (`moments`) in `O(n^2 k dx^2)` instead of the authors' `O(n^3 dx^2)`. Every solve and
//! log-determinant uses a Cholesky factor; the priors' log-determinants come from the
//! eigenvalues of L (§2.2–2.4). The (n dy)^2 covariance is never formed.
//!
//! Layout: internally the n dx latent coordinates are stored **coordinate-major** (index
//! `r n + i` for coordinate r of point i), so that each coordinate pair (r, s) of a moment is
//! a contiguous n x n block. The maps are `mu_C` (dy x n dx) with column `r n + i` equal to
//! column r of `C_i`. Public results are n x dx embeddings and per-point maps.

mod covariance;
mod factorised;
mod memory;
mod moments;
mod params;
mod project;
mod registration;

pub use covariance::Covariance;
pub use factorised::{FactorisedPosterior, FactorisedProblem};
pub use params::{
    AlphaRule, LlLvmInit, LlLvmParams, MeanSolve, Posterior, Preprocess, RestartBounds,
    FULL_FAMILY_MAX_POINTS,
};
pub use project::LlLvmProjection;

use crate::method::Checked;
use crate::traits::check_fit_input;
use moments::{Form, Graph};
use nalgebra::{DMatrix, DVector};
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use unfold_core::{interrupt, Convergence, Error, Evidence, EvidenceKind, Result, Rng};
use unfold_graph::{Laplacian, NeighbourGraph};
use unfold_linalg::Cholesky;
use unfold_vem::LatentVariableModel;

/// The hyperparameters fitted in the M-step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlLvmHyper {
    pub alpha: f64,
    pub gamma: f64,
}

impl LlLvmHyper {
    /// The start of EM: `gamma0`, and alpha fixed or, to be optimised, 1.
    fn initial(alpha: AlphaRule, gamma0: f64) -> LlLvmHyper {
        let alpha = match alpha {
            AlphaRule::Fixed(a) => a,
            AlphaRule::Optimise => 1.0,
        };
        LlLvmHyper {
            alpha,
            gamma: gamma0,
        }
    }
}

/// The variational posterior q(x) q(C) in the coordinate-major layout (module docs).
#[derive(Clone, Debug)]
pub struct LlLvmPosterior {
    /// Mean of q(x), n x dx.
    pub mu_x: DMatrix<f64>,
    /// Covariance of q(x), (n dx) x (n dx).
    pub sigma_x: DMatrix<f64>,
    /// Mean of q(C), dy x (n dx).
    pub mu_c: DMatrix<f64>,
    /// Column covariance of q(C), (n dx) x (n dx); q(C) = MN(mu_C, I_dy, Sigma_C).
    pub sigma_c: DMatrix<f64>,
    stats: Stats,
}

/// Scalars of the current posterior that the M-step and the bound need.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    log_det_sigma_x: f64,
    log_det_sigma_c: f64,
    /// `Tr(<Qhat L^+ Qhat^T> <C^T C>)`.
    tr_gamma_k: f64,
    /// `Tr(mu_C^T <H>)`.
    tr_c_h: f64,
    /// `tr <x x^T> = tr Sigma_x + |mu_x|^2`.
    tr_s: f64,
    /// `sum_r <L, <x x^T>^{rr}>`.
    lap_s: f64,
    /// `Tr((eps J J^T + Omega^{-1}) <C^T C>)`.
    prior_c_k: f64,
}

/// The data as both posterior families fit it: centred (and scaled), the graph's 0/1
/// adjacency, and the data's sums that the bound reads.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    /// The preprocessed data, n x dy.
    pub y: DMatrix<f64>,
    pub mean: DVector<f64>,
    pub scale: f64,
    /// Neighbours of each point (symmetric).
    pub adj: Vec<Vec<usize>>,
    /// The caller's graph, on the caller's points in the caller's order, which a
    /// [`Prepared::reordered`] copy keeps.
    pub source_graph: NeighbourGraph,
    /// `Tr(Y L Y^T) = 1/2 sum_ij eta_ij |y_i - y_j|^2`.
    pub tr_yly: f64,
    /// `|sum_i y_i|^2` (zero for centred data).
    pub sum_y_sq: f64,
}

impl Prepared {
    /// Checks the data, the graph and the settings every family shares, and preprocesses
    /// the data ([`Preprocess`]).
    pub fn new(
        y: &DMatrix<f64>,
        graph: &NeighbourGraph,
        params: &Checked<LlLvmParams>,
    ) -> Result<Prepared> {
        check_fit_input(y, params.dim, "LL-LVM")?;
        let n = y.nrows();
        if graph.n() != n {
            return Err(Error::DimensionMismatch(format!(
                "the graph has {} points but the data has {n}",
                graph.n()
            )));
        }
        if !(params.gamma0 > 0.0 && params.gamma0.is_finite()) {
            return Err(Error::invalid(
                "gamma0",
                format!("must be a positive number, got {}", params.gamma0),
            ));
        }
        // Connected, or the likelihood and the C prior are improper (spec §2.1).
        graph.ensure_connected()?;
        let mean = y.row_mean().transpose();
        let mut yc = y.clone();
        for mut row in yc.row_iter_mut() {
            row -= mean.transpose();
        }
        let scale = match params.scaling {
            Preprocess::Centre => 1.0,
            Preprocess::CentreMaxAbs => yc.amax(),
        };
        if scale == 0.0 {
            return Err(Error::invalid(
                "data",
                "all points are identical after centring; LL-LVM needs spread-out data",
            ));
        }
        yc /= scale;
        let adj: Vec<Vec<usize>> = (0..n).map(|i| graph.neighbours(i).0.to_vec()).collect();
        let mut tr_yly = 0.0;
        for (i, nb) in adj.iter().enumerate() {
            for &j in nb {
                tr_yly += 0.5 * (yc.row(i) - yc.row(j)).norm_squared();
            }
        }
        let sum_y_sq = yc.row_sum().norm_squared();
        Ok(Prepared {
            y: yc,
            mean,
            scale,
            adj,
            source_graph: graph.clone(),
            tr_yly,
            sum_y_sq,
        })
    }

    /// The same data with the points in `order`: point `a` of the result is point
    /// `order[a]` of `self` (the rows of `y`, and the adjacency relabelled, each list
    /// ascending). The caller's graph and the sums, which no order changes, are kept.
    pub fn reordered(self, order: &[usize]) -> Prepared {
        let position = moments::positions(order);
        let adj = order
            .iter()
            .map(|&i| {
                let mut nb: Vec<usize> = self.adj[i].iter().map(|&j| position[j]).collect();
                nb.sort_unstable();
                nb
            })
            .collect();
        Prepared {
            y: self.y.select_rows(order),
            adj,
            ..self
        }
    }

    pub fn n(&self) -> usize {
        self.y.nrows()
    }

    pub fn dy(&self) -> usize {
        self.y.ncols()
    }

    /// gamma's closed form (spec §3.4) given `Tr(<C>^T <H>)` and
    /// `Equad = Tr(<Gammahat> <C^T C>)`: `(n - 1) dy / (2 Tr(Y L Y^T) - 2 Tr(<C>^T <H>) +
    /// Equad / 2)`.
    pub fn optimal_gamma(&self, tr_c_h: f64, equad: f64) -> Result<f64> {
        let denom = 2.0 * self.tr_yly - 2.0 * tr_c_h + 0.5 * equad;
        if !(denom > 0.0 && denom.is_finite()) {
            return Err(Error::numerical(
                "LL-LVM gamma update",
                format!(
                    "the expected Laplacian-weighted residual is {denom}; the data may be \
                     degenerate (all neighbour differences zero) or badly scaled"
                ),
            ));
        }
        Ok((self.n() as f64 - 1.0) * self.dy() as f64 / denom)
    }

    /// `E_q[log p(y | x, C)]` (spec §3.5), with `sum_log_lambda = sum_{k >= 2} log lambda_k`
    /// of the Laplacian.
    pub fn expected_log_likelihood(
        &self,
        eps: f64,
        gamma: f64,
        sum_log_lambda: f64,
        tr_c_h: f64,
        equad: f64,
    ) -> f64 {
        let (n, dy) = (self.n() as f64, self.dy() as f64);
        let log_2pi = (2.0 * std::f64::consts::PI).ln();
        -0.5 * n * dy * log_2pi
            + 0.5 * dy * ((n * eps).ln() + (n - 1.0) * (2.0 * gamma).ln() + sum_log_lambda)
            - 0.5 * eps * self.sum_y_sq
            - gamma * self.tr_yly
            + gamma * tr_c_h
            - 0.25 * gamma * equad
    }
}

/// An LL-LVM problem: data, graph and settings, with everything that depends only on them
/// (the pseudo-inverse and eigenvalues of L). It implements [`LatentVariableModel`], so
/// [`unfold_vem`] drives it.
#[derive(Clone, Debug)]
pub struct LlLvmProblem {
    data: Prepared,
    dx: usize,
    epsilon: f64,
    alpha: AlphaRule,
    gamma0: f64,
    init: LlLvmInit,
    graph: Graph,
    /// Eigenvalues of L, ascending, the first (zero) set exactly to 0.
    eig: Vec<f64>,
}

/// Points from which the Laplacian's eigenvalues and `L^+` run through
/// [`unfold_core::interrupt::abandonable`]. Below it each takes about 0.1 s or less (the
/// cube of the size from 2.2 s at 3000), and a thread of their own would cost more than
/// the wait: its dense kernels allocate their per-thread buffers anew (about the size of
/// the cache, tens of MB).
const ABANDON_SPECTRUM_FROM: usize = 1024;

impl LlLvmProblem {
    /// Sets up the problem for the rows of `y` on `graph`, which must be connected.
    pub fn new(
        y: &DMatrix<f64>,
        graph: &NeighbourGraph,
        params: &Checked<LlLvmParams>,
    ) -> Result<Self> {
        let data = Prepared::new(y, graph, params)?;
        params.check_memory(y.nrows(), y.ncols())?;
        let lap = laplacian(&data.adj);
        // Two single faer calls of seconds at a few thousand points (the eigenvalues: 2.2 s
        // at 3000), which cannot check the interruption flag themselves.
        let spectrum =
            move || Ok::<_, Error>((laplacian_eigenvalues(&lap)?, laplacian_pinv(&lap)?));
        let (eig, pinv) = if y.nrows() < ABANDON_SPECTRUM_FROM {
            spectrum()?
        } else {
            unfold_core::interrupt::abandonable(spectrum)??
        };
        Ok(LlLvmProblem {
            graph: Graph::new(data.adj.clone(), pinv),
            data,
            dx: params.dim,
            epsilon: params.epsilon,
            alpha: params.alpha,
            gamma0: params.gamma0,
            init: params.init,
            eig,
        })
    }

    fn n(&self) -> usize {
        self.data.y.nrows()
    }

    fn dy(&self) -> usize {
        self.data.y.ncols()
    }

    /// The start of the authors' code from a given mean of q(C), in the paper's layout
    /// (dy x n dx, column `dx i + r` is column r of `C_i`), with the prior covariance of C
    /// and `gamma0`, `alpha` of the settings.
    pub fn start_from_mean_c(
        &self,
        mean_c0: &DMatrix<f64>,
    ) -> Result<(LlLvmPosterior, LlLvmHyper)> {
        let (n, dx, dy) = (self.n(), self.dx, self.dy());
        if mean_c0.shape() != (dy, n * dx) {
            return Err(Error::DimensionMismatch(format!(
                "the initial mean of C must be {dy} x {}, got {} x {}",
                n * dx,
                mean_c0.nrows(),
                mean_c0.ncols()
            )));
        }
        unfold_core::check_finite(mean_c0, "the initial mean of C")?;
        let mut mu_c = DMatrix::zeros(dy, n * dx);
        for i in 0..n {
            for r in 0..dx {
                mu_c.set_column(r * n + i, &mean_c0.column(dx * i + r));
            }
        }
        Ok(self.start_with_prior_covariance(mu_c))
    }

    fn start_with_prior_covariance(&self, mu_c: DMatrix<f64>) -> (LlLvmPosterior, LlLvmHyper) {
        let q = LlLvmPosterior {
            mu_x: DMatrix::zeros(self.n(), self.dx),
            sigma_x: DMatrix::zeros(0, 0),
            mu_c,
            sigma_c: self.prior_c_covariance(),
            stats: Stats::default(),
        };
        (q, self.initial_hyper())
    }

    fn initial_hyper(&self) -> LlLvmHyper {
        LlLvmHyper::initial(self.alpha, self.gamma0)
    }

    /// `(eps J J^T + Omega^{-1})^{-1} = I_dx (x) (1 1^T / (eps n^2) + L^+ / 2)` (spec §2.3).
    fn prior_c_covariance(&self) -> DMatrix<f64> {
        let n = self.n();
        let c = 1.0 / (self.epsilon * (n * n) as f64);
        let block = self.graph.pinv().map(|v| 0.5 * v + c);
        block_diagonal(&block, self.dx)
    }

    /// `<b>` (spec §3.2): entry `r n + i` is
    /// `gamma sum_j eta_ij (mu_Ci + mu_Cj)[:, r] . (y_i - y_j)`.
    fn b_mean(&self, mu_c: &DMatrix<f64>, gamma: f64) -> DVector<f64> {
        let (n, dx) = (self.n(), self.dx);
        let mut b = DVector::zeros(n * dx);
        for i in 0..n {
            for &j in &self.graph.adj[i] {
                let dyij = (self.data.y.row(i) - self.data.y.row(j)).transpose();
                for r in 0..dx {
                    let csum = mu_c.column(r * n + i) + mu_c.column(r * n + j);
                    b[r * n + i] += gamma * csum.dot(&dyij);
                }
            }
        }
        b
    }

    /// `<H> = H(mu_x)` (spec §3.3), dy x (n dx): column `r n + i` is
    /// `sum_j eta_ij (y_j - y_i) (x_j - x_i)[r]`.
    fn h_mean(&self, mu_x: &DMatrix<f64>) -> DMatrix<f64> {
        let (n, dx) = (self.n(), self.dx);
        let mut h = DMatrix::zeros(self.dy(), n * dx);
        for i in 0..n {
            for &j in &self.graph.adj[i] {
                let dyji = (self.data.y.row(j) - self.data.y.row(i)).transpose();
                for r in 0..dx {
                    let dxr = mu_x[(j, r)] - mu_x[(i, r)];
                    h.column_mut(r * n + i).axpy(dxr, &dyji, 1.0);
                }
            }
        }
        h
    }

    /// The q(x) update (spec eq. 9): precision `(gamma/2) <Ahat> + alpha I + 2 L (x) I`,
    /// factorised and inverted in its own storage.
    fn update_x(&self, q: &mut LlLvmPosterior, h: &LlLvmHyper) -> Result<()> {
        let (n, dx) = (self.n(), self.dx);
        let dy = self.dy() as f64;
        // The old covariance of q(x) is not read again: its storage takes the precision.
        let mut prec = reused(&mut q.sigma_x, n * dx);
        self.graph
            .form_into(&q.mu_c, &q.sigma_c, dy, 0.5 * h.gamma, Form::A, &mut prec)?;
        self.add_laplacian_prior(&mut prec, h.alpha, 0.0);
        // Each dense step (forming, factorising, inverting) is a unit of work between checks
        // of Ctrl-C: about a second each at n = 2000.
        interrupt::check()?;
        let chol = Cholesky::new_owned(prec, "LL-LVM precision of q(x)")?;
        interrupt::check()?;
        let b = self.b_mean(&q.mu_c, h.gamma);
        let mu = chol.solve_vec(&b);
        q.mu_x = DMatrix::from_column_slice(n, dx, mu.as_slice());
        q.stats.log_det_sigma_x = -chol.log_det();
        let mut scratch = self.graph.pool.take(n * dx, n * dx);
        q.sigma_x = chol.into_inverse_with(&mut scratch)?;
        self.graph.pool.give(scratch);
        interrupt::check()
    }

    /// The q(C) update (spec eq. 11): column precision
    /// `(gamma/2) <Qhat L^+ Qhat^T> + eps 1 1^T + 2 L (x) I` and mean `gamma <H> Sigma_C`.
    fn update_c(&self, q: &mut LlLvmPosterior, h: &LlLvmHyper) -> Result<()> {
        let x_row = DMatrix::from_row_slice(1, q.mu_x.len(), q.mu_x.as_slice());
        // The old covariance of q(C) was last read by the q(x) update: its storage takes
        // Gamma_hat.
        let mut gamma_hat = reused(&mut q.sigma_c, q.sigma_x.nrows());
        self.graph
            .form_into(&x_row, &q.sigma_x, 1.0, 1.0, Form::Gamma, &mut gamma_hat)?;
        let mut prec = self.graph.pool.take(gamma_hat.nrows(), gamma_hat.ncols());
        prec.zip_apply(&gamma_hat, |p, g| *p = g * (0.5 * h.gamma));
        self.add_laplacian_prior(&mut prec, 0.0, self.epsilon);
        interrupt::check()?;
        let chol = Cholesky::new_owned(prec, "LL-LVM column precision of q(C)")?;
        interrupt::check()?;
        let hm = self.h_mean(&q.mu_x);
        let mut mu_t = hm.transpose();
        mu_t *= h.gamma;
        chol.solve_in_place(&mut mu_t);
        q.mu_c = mu_t.transpose();
        q.stats.log_det_sigma_c = -chol.log_det();
        let mut scratch = self.graph.pool.take(gamma_hat.nrows(), gamma_hat.ncols());
        q.sigma_c = chol.into_inverse_with(&mut scratch)?;
        self.graph.pool.give(scratch);
        interrupt::check()?;
        self.set_moments(q, &gamma_hat, &hm);
        self.graph.pool.give(gamma_hat);
        Ok(())
    }

    /// The expectations of `q` that the M-step and the bound read, but its log-determinants,
    /// given `Gammahat` of its q(x) and `<H> = H(mu_x)`.
    fn set_moments(&self, q: &mut LlLvmPosterior, gamma_hat: &DMatrix<f64>, hm: &DMatrix<f64>) {
        let dy = self.dy() as f64;
        let x_row = DMatrix::from_row_slice(1, q.mu_x.len(), q.mu_x.as_slice());
        // Tr(Gammahat <C^T C>) = sum_a mu_a Gammahat mu_a^T + dy <Gammahat, Sigma_C>, with
        // <C^T C> never formed.
        let g_mu = unfold_linalg::gemm::mul_with(
            unfold_linalg::view::as_faer(gamma_hat),
            unfold_linalg::view::as_faer(&q.mu_c).transpose(),
            unfold_linalg::view::par_for(gamma_hat.nrows()),
        );
        q.stats.tr_gamma_k = q.mu_c.transpose().dot(&g_mu) + dy * gamma_hat.dot(&q.sigma_c);
        q.stats.tr_c_h = q.mu_c.dot(hm);
        q.stats.tr_s = q.sigma_x.trace() + q.mu_x.norm_squared();
        q.stats.lap_s = self.laplacian_inner(&x_row, &q.sigma_x, 1.0);
        q.stats.prior_c_k = self.epsilon * self.ones_inner(&q.mu_c, &q.sigma_c, dy)
            + 2.0 * self.laplacian_inner(&q.mu_c, &q.sigma_c, dy);
    }

    /// The bound of §3.5 at any posterior `q` whose four moments are set (the oracle of
    /// the per-point family's bound).
    #[cfg(test)]
    pub(crate) fn bound_at(&self, q: &mut LlLvmPosterior, h: &LlLvmHyper) -> Result<Evidence> {
        let x_row = DMatrix::from_row_slice(1, q.mu_x.len(), q.mu_x.as_slice());
        let gamma_hat = self.graph.form(&x_row, &q.sigma_x, 1.0, 1.0, Form::Gamma);
        let hm = self.h_mean(&q.mu_x);
        self.set_moments(q, &gamma_hat, &hm);
        q.stats.log_det_sigma_x = Cholesky::new(&q.sigma_x, "Sigma_x")?.log_det();
        q.stats.log_det_sigma_c = Cholesky::new(&q.sigma_c, "Sigma_C")?.log_det();
        self.elbo(q, h)
    }

    /// Adds `I_dx (x) (diag + 2 L + off 1 1^T)` to `m`.
    fn add_laplacian_prior(&self, m: &mut DMatrix<f64>, diag: f64, off: f64) {
        let n = self.n();
        for r in 0..self.dx {
            let o = r * n;
            if off != 0.0 {
                m.view_mut((o, o), (n, n)).add_scalar_mut(off);
            }
            for i in 0..n {
                m[(o + i, o + i)] += diag + 2.0 * self.graph.deg[i];
                for &j in &self.graph.adj[i] {
                    m[(o + i, o + j)] -= 2.0;
                }
            }
        }
    }

    /// `sum_r <L, K^{rr}>` for the coordinate-major moment
    /// `K = means^T means + kappa sigma` (`means` d x (n dx)), without forming K.
    fn laplacian_inner(&self, means: &DMatrix<f64>, sigma: &DMatrix<f64>, kappa: f64) -> f64 {
        let n = self.n();
        let mut t = 0.0;
        for r in 0..self.dx {
            let o = r * n;
            for i in 0..n {
                let mi = means.column(o + i);
                t += self.graph.deg[i] * (mi.norm_squared() + kappa * sigma[(o + i, o + i)]);
                for &j in &self.graph.adj[i] {
                    t -= mi.dot(&means.column(o + j)) + kappa * sigma[(o + i, o + j)];
                }
            }
        }
        t
    }

    /// `sum_r 1^T K^{rr} 1` for `K = means^T means + kappa sigma`, without forming K.
    fn ones_inner(&self, means: &DMatrix<f64>, sigma: &DMatrix<f64>, kappa: f64) -> f64 {
        let n = self.n();
        (0..self.dx)
            .map(|r| {
                let m = means.columns(r * n, n).column_sum();
                m.norm_squared() + kappa * sigma.view((r * n, r * n), (n, n)).sum()
            })
            .sum()
    }

    fn into_fitted(
        self,
        run: unfold_vem::Run<LlLvmPosterior, LlLvmHyper>,
        restart_bounds: Vec<f64>,
        k: usize,
    ) -> LlLvm {
        let convergence = convergence_of(&run);
        let q = run.posterior;
        LlLvm {
            coords: q.mu_x,
            graph: self.data.source_graph,
            evidence: run.evidence,
            y: self.data.y,
            mean: self.data.mean,
            scale: self.data.scale,
            mu_c: q.mu_c,
            sigma_x: Covariance::full(q.sigma_x),
            sigma_c: Covariance::full(q.sigma_c),
            hyper: run.hyper,
            epsilon: self.epsilon,
            k,
            convergence,
            restart_bounds,
        }
    }

    /// The data-driven start (see [`LlLvmInit::Spectral`]).
    fn spectral_start(&self, rng: &mut Rng) -> Result<(LlLvmPosterior, LlLvmHyper)> {
        let (n, dx) = (self.n(), self.dx);
        let h = self.initial_hyper();
        let mut q = LlLvmPosterior {
            mu_x: spectral_latent_start(&self.data, &(0..n).collect::<Vec<_>>(), dx, rng)?,
            sigma_x: DMatrix::zeros(n * dx, n * dx),
            mu_c: DMatrix::zeros(self.dy(), n * dx),
            sigma_c: DMatrix::zeros(0, 0),
            stats: Stats::default(),
        };
        self.update_c(&mut q, &h)?;
        Ok((q, h))
    }

    /// The root of `sum_k dx / (alpha + 2 lambda_k) = tr <x x^T>` (spec §3.4): the unique
    /// maximiser of the bound over alpha, by bisection on log alpha.
    fn optimal_alpha(&self, tr_s: f64) -> Result<f64> {
        let dx = self.dx as f64;
        let f = |a: f64| self.eig.iter().map(|l| dx / (a + 2.0 * l)).sum::<f64>() - tr_s;
        let (mut lo, mut hi) = (1e-300_f64.ln(), 1e300_f64.ln());
        if !(tr_s > 0.0 && tr_s.is_finite()) {
            return Err(Error::numerical(
                "LL-LVM alpha update",
                format!("the second moment of q(x) is {tr_s}; the posterior has collapsed"),
            ));
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid.exp()) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo < 1e-14 {
                break;
            }
        }
        Ok((0.5 * (lo + hi)).exp())
    }
}

impl LatentVariableModel for LlLvmProblem {
    type Posterior = LlLvmPosterior;
    type Hyper = LlLvmHyper;

    fn init(&self, rng: &mut Rng) -> Result<(LlLvmPosterior, LlLvmHyper)> {
        match self.init {
            LlLvmInit::Random => {
                let (n, dx, dy) = (self.n(), self.dx, self.dy());
                let z = DMatrix::from_fn(dy, n * dx, |_, _| StandardNormal.sample(rng));
                let (mut q, h) = self.start_with_prior_covariance(DMatrix::zeros(0, 0));
                q.mu_c = z * &q.sigma_c;
                Ok((q, h))
            }
            LlLvmInit::Spectral => self.spectral_start(rng),
        }
    }

    /// q(x) from q(C), then q(C) from q(x) (spec §3.6, pitfall 9).
    fn e_step(&self, q: &mut LlLvmPosterior, h: &LlLvmHyper) -> Result<()> {
        self.update_x(q, h)?;
        self.update_c(q, h)
    }

    /// gamma in closed form; alpha fixed or by its root find (spec §3.4).
    fn m_step(&self, q: &LlLvmPosterior, h: &mut LlLvmHyper) -> Result<()> {
        let s = &q.stats;
        h.gamma = self.data.optimal_gamma(s.tr_c_h, s.tr_gamma_k)?;
        if self.alpha == AlphaRule::Optimise {
            h.alpha = self.optimal_alpha(s.tr_s)?;
        }
        Ok(())
    }

    /// The bound of spec §3.5 with its three terms.
    fn elbo(&self, q: &LlLvmPosterior, h: &LlLvmHyper) -> Result<Evidence> {
        let (n, dx, dy) = (self.n() as f64, self.dx as f64, self.dy() as f64);
        let (eps, gamma, alpha) = (self.epsilon, h.gamma, h.alpha);
        let s = &q.stats;
        let sum_log_lambda: f64 = self.eig[1..].iter().map(|l| l.ln()).sum();
        let ell =
            self.data
                .expected_log_likelihood(eps, gamma, sum_log_lambda, s.tr_c_h, s.tr_gamma_k);
        let log_det_prior_x: f64 = self.eig.iter().map(|l| (alpha + 2.0 * l).ln()).sum();
        let neg_kl_x = 0.5 * s.log_det_sigma_x + 0.5 * dx * log_det_prior_x
            - 0.5 * (alpha * s.tr_s + 2.0 * s.lap_s)
            + 0.5 * n * dx;
        let log_det_prior_c =
            dx * ((eps * n).ln() + self.eig[1..].iter().map(|l| (2.0 * l).ln()).sum::<f64>());
        let neg_kl_c = 0.5 * dy * (log_det_prior_c + s.log_det_sigma_c) - 0.5 * s.prior_c_k
            + 0.5 * n * dx * dy;
        Ok(bound(ell, neg_kl_x, neg_kl_c))
    }
}

/// The bound of spec §3.5 from its three terms, as both families report it.
fn bound(ell: f64, neg_kl_x: f64, neg_kl_c: f64) -> Evidence {
    Evidence {
        value: ell + neg_kl_x + neg_kl_c,
        kind: EvidenceKind::Elbo,
        terms: vec![
            ("expected_log_likelihood".into(), ell),
            ("neg_kl_x".into(), neg_kl_x),
            ("neg_kl_c".into(), neg_kl_c),
        ],
    }
}

/// How EM ended for a run: its iterations, whether a tolerance stopped it before the
/// iteration limit, and the bound after every iteration.
fn convergence_of<P, H>(run: &unfold_vem::Run<P, H>) -> Convergence {
    let stopped_by = match run.stop {
        unfold_core::Stop::AbsTol => "abs_tol",
        unfold_core::Stop::RelTol => "rel_tol",
        unfold_core::Stop::MaxIter => "max_iterations",
        unfold_core::Stop::Caller => "caller",
    };
    Convergence::iterative(run.bounds(), run.converged(), stopped_by)
}

/// The latent means of the spectral start ([`LlLvmInit::Spectral`]): Laplacian eigenmaps
/// on the same graph, scaled so that neighbour distances match those in y, plus a small
/// seeded jitter. Point `a` of `data` is point `order[a]` of the caller's graph
/// ([`Prepared::reordered`]); the eigenmaps and the jitter's draws are taken in the
/// caller's order, so that a seed gives the same start in any order of the points.
fn spectral_latent_start(
    data: &Prepared,
    order: &[usize],
    dx: usize,
    rng: &mut Rng,
) -> Result<DMatrix<f64>> {
    let n = data.n();
    let (x_caller, _) = crate::LaplacianEigenmapsParams::embed(&data.source_graph, dx)?;
    let mut x0 = x_caller.select_rows(order);
    let (mut dy2, mut dx2) = (0.0, 0.0);
    for i in 0..n {
        for &j in &data.adj[i] {
            dy2 += (data.y.row(i) - data.y.row(j)).norm_squared();
            dx2 += (x0.row(i) - x0.row(j)).norm_squared();
        }
    }
    x0 *= (dy2 / dx2).sqrt();
    let jitter = 0.01 * x0.column_iter().map(|c| c.norm()).sum::<f64>() / (n as f64).sqrt();
    let draws = DMatrix::<f64>::from_fn(n, dx, |_, _| StandardNormal.sample(rng));
    for (a, &i) in order.iter().enumerate() {
        for r in 0..dx {
            x0[(a, r)] += jitter * draws[(i, r)];
        }
    }
    Ok(x0)
}

/// The dense 0/1 Laplacian `L = diag(G 1_n) - G` (spec `lllvm.md` notation) of symmetric
/// adjacency lists, each pair once from its lower end.
fn laplacian(adj: &[Vec<usize>]) -> DMatrix<f64> {
    let edges = adj.iter().enumerate().flat_map(|(i, nb)| {
        nb.iter()
            .filter(move |&&j| i < j)
            .map(move |&j| (i, j, 1.0))
    });
    Laplacian::new(adj.len()).dense(edges)
}

/// Eigenvalues of the Laplacian of a connected graph, ascending, with the zero one exact.
fn laplacian_eigenvalues(lap: &DMatrix<f64>) -> Result<Vec<f64>> {
    let mut eig = unfold_linalg::view::as_faer(lap)
        .self_adjoint_eigenvalues(faer::Side::Lower)
        .map_err(|e| Error::numerical("LL-LVM Laplacian eigenvalues", format!("{e:?}")))?;
    eig[0] = 0.0;
    if eig.len() > 1 && eig[1] <= 1e-12 * eig[eig.len() - 1] {
        return Err(Error::numerical(
            "LL-LVM",
            format!(
                "the graph Laplacian has rank below n - 1 (second eigenvalue {}); the graph \
                 must be connected: use a larger k",
                eig[1]
            ),
        ));
    }
    Ok(eig)
}

/// `L^+ = (L + 1 1^T / n)^{-1} - 1 1^T / n` for a connected graph: the constant vector has
/// eigenvalue 1 in `L + 1 1^T / n` and every other eigenpair is L's.
fn laplacian_pinv(lap: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let n = lap.nrows();
    let c = 1.0 / n as f64;
    let shifted = lap.add_scalar(c);
    let mut inv = Cholesky::new(&shifted, "LL-LVM graph Laplacian")?.inverse()?;
    inv.add_scalar_mut(-c);
    Ok(inv)
}

/// The storage of `m` if it is `big x big` (its values are to be overwritten), else a new
/// matrix; `m` is left empty.
fn reused(m: &mut DMatrix<f64>, big: usize) -> DMatrix<f64> {
    let m = std::mem::replace(m, DMatrix::zeros(0, 0));
    if m.shape() == (big, big) {
        m
    } else {
        DMatrix::zeros(big, big)
    }
}

fn block_diagonal(block: &DMatrix<f64>, copies: usize) -> DMatrix<f64> {
    let n = block.nrows();
    let mut m = DMatrix::zeros(n * copies, n * copies);
    for r in 0..copies {
        m.view_mut((r * n, r * n), (n, n)).copy_from(block);
    }
    m
}

/// A fitted LL-LVM: the posterior means and covariances, hyperparameters and the bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LlLvm {
    /// Posterior mean of x, n x dx, in the preprocessed data's units.
    coords: DMatrix<f64>,
    graph: NeighbourGraph,
    evidence: Evidence,
    /// The preprocessed training data (centred, possibly scaled), n x dy.
    y: DMatrix<f64>,
    mean: DVector<f64>,
    scale: f64,
    /// Mean of q(C), dy x (n dx), coordinate-major columns.
    mu_c: DMatrix<f64>,
    /// The covariances of q(x) and q(C), of the family fitted.
    sigma_x: Covariance,
    sigma_c: Covariance,
    pub hyper: LlLvmHyper,
    pub epsilon: f64,
    /// The k of the graph, used to connect new points.
    pub k: usize,
    /// How EM ended for the best restart: its iterations, whether a tolerance stopped it
    /// before the iteration limit, and the bound after every iteration.
    pub convergence: Convergence,
    /// The final bound of every restart.
    pub restart_bounds: Vec<f64>,
}

crate::embedding!(LlLvm, graph);

impl LlLvm {
    /// The posterior mean of the map `C_i` (dy x dx) in the data's units: `y_j - y_i` is
    /// about `C_i (x_j - x_i)` on the graph's edges.
    pub fn map(&self, i: usize) -> DMatrix<f64> {
        self.map_scaled(i) * self.scale
    }

    /// The posterior covariance of `x_i` (dx x dx).
    pub fn x_covariance(&self, i: usize) -> DMatrix<f64> {
        let (n, dx) = self.coords.shape();
        self.sigma_x.block(n, dx, i)
    }

    /// The variational family the fit used.
    pub fn posterior(&self) -> Posterior {
        if self.sigma_x.is_per_point() {
            Posterior::Factorised
        } else {
            Posterior::Full
        }
    }
}

#[cfg(test)]
mod tests;
