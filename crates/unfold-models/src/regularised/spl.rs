//! SPL, structured projection learning (Li Wang, seed 001 §3.3; `specs/spl_drtree_ddrtree.md` §4).
//!
//! The posterior of the embedding under a PPCA likelihood `y_i = W x_i + eps`, `eps ~
//! N(0, gamma^{-1} I)`, prior `N(0, I)`, is regularised by `E||x_i - x_j||^2 <= phi_ij +
//! xi_ij` on the kNN pairs with the squared slack `C ||xi||^2`. With `Q = diag(S 1) - S +
//! ((gamma + 1)/4) I` the dual over one weight `s_ij >= 0` per unordered pair is
//!
//! ```text
//! f(s) = (d/2) log det Q - 2 sum_{i>j} s_ij phi_ij - (1/(2C)) sum_{i>j} s_ij^2
//!        - (gamma^2/8) max_{W^T W = I} Tr(W^T Y^T Q^{-1} Y W)
//! ```
//!
//! (the ordered-pair sums of (17) halved onto `i > j`), concave in `s` (log-det concave,
//! matrix-fractional term convex). Its supergradient is (20):
//! `(1/2)(G_ii + G_jj - 2 G_ij) - s_ij / C - 2 phi_ij` with `G = d Q^{-1} + (gamma^2/4) B B^T`,
//! `B = Q^{-1} Y W*`, `W*` the top-d eigenvectors of `Y^T Q^{-1} Y` (the N x N form
//! `R^{-1} Y Y^T R^{-T}`, `Q = R R^T`, when D > N).
//!
//! Embedding: the posterior mean `X = (gamma/4) Q^{-1} Y W` (22), the minimiser of
//! `(1/2) Tr(X^T 4Q X) - gamma Tr(X^T Y W)` (the paper's (21) prints `+ gamma`, a sign typo);
//! for `gamma = 0` kernel PCA on `(4L + I)^{-1}` (23).

use crate::field::{laplacian_embedding, FieldScaling};
use crate::method::{Checked, Declared, Interval, Rule};
use crate::regularised::mpme::DistanceScale;
use crate::regularised::{
    check_weights, inverse_distance_scales, learned_graph, maximise_dual, pair_contrasts,
    weighted_pairs, PairDual, SlackPenalty,
};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{
    check_points, Convergence, Error, Evidence, EvidenceKind, Observer, Result, Silent,
};
use unfold_graph::{GraphSpec, Laplacian, NeighbourGraph, Weighting};
use unfold_lbfgsb::LbfgsbOptions;
use unfold_linalg::{sym_eigen, symmetrised, Cholesky};
use unfold_subgradient::{
    try_maximize_until, Projection, Status as SubgradientStatus, StepRule, SubgradientOptions,
    TryOptimizeError,
};

/// How the concave dual over `s >= 0` is maximised.
#[derive(Clone, Debug, PartialEq)]
pub enum SplSolver {
    /// Projected supergradient ascent (Algorithm 1). The paper's rule is
    /// `StepRule::OverT { a0: 1.0 }` unnormalised; it overshoots on the first step and can
    /// stall far from the optimum (spec P4). `normalized: true` with `OverSqrtT` is better
    /// behaved. The best iterate is kept.
    Subgradient {
        /// Step-size rule.
        step: StepRule,
        /// Step along `g / ||g||`.
        normalized: bool,
        /// Number of steps.
        max_iterations: usize,
    },
    /// L-BFGS-B on the same concave function with bounds `s >= 0` (the default).
    Lbfgsb(LbfgsbOptions),
}

impl SplSolver {
    /// The paper's Algorithm 1: unnormalised `1/t` steps.
    pub fn paper(max_iterations: usize) -> Self {
        SplSolver::Subgradient {
            step: StepRule::OverT { a0: 1.0 },
            normalized: false,
            max_iterations,
        }
    }
}

crate::params! {
    /// Parameters of [`Spl`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct SplParams {
        /// Embedding dimension d.
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// The kNN graph of candidate pairs (union symmetrisation, spec P2); it need not be
        /// connected.
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        /// Noise precision `gamma >= 0` (0: distances only, embedding by kernel PCA).
        pub gamma: f64 = 1e-3 => Rule::within(
            Interval::NON_NEGATIVE,
            "spl: the noise precision, the weight of the graph term",
        ),
        /// Slack penalty `C > 0` (`f64::INFINITY` allowed: no slack term).
        pub slack: SlackPenalty = SlackPenalty(1e3) => Rule::group(),
        /// Scaling of the squared distances (the paper gives none, spec P3).
        pub scale: DistanceScale = DistanceScale::Raw,
        /// Solver of the dual.
        pub solver: SplSolver = SplSolver::Lbfgsb(LbfgsbOptions {
            pgtol: 1e-8,
            factr: 10.0,
            ..LbfgsbOptions::default()
        }),
    }
}

impl SplParams {
    /// The paper's synthetic settings: k = 10, `gamma = 1e-3`, `C = 1e3`; L-BFGS-B with
    /// `pgtol = 1e-8`, `factr = 10`.
    pub fn new(dim: usize) -> Self {
        SplParams {
            dim,
            ..SplParams::default()
        }
    }

    /// Sets `C`.
    pub fn c(mut self, c: f64) -> Self {
        self.slack = SlackPenalty(c);
        self
    }

    /// Sets the number of neighbours.
    pub fn k(mut self, k: usize) -> Self {
        self.graph.k = k;
        self
    }

    /// Builds the dual on the rows of `y` (centred first; SPL assumes zero-mean data, P8).
    pub fn dual(&self, y: &DMatrix<f64>) -> Result<SplDual> {
        self.clone().check()?.dual(y, &Silent)
    }

    /// Fits SPL: builds the dual, maximises it with the chosen solver and embeds.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Spl> {
        self.clone().check()?.fit(y, &Silent)
    }
}

impl Checked<SplParams> {
    /// [`SplParams::dual`] with the parameters checked.
    pub fn dual(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<SplDual> {
        check_points(y, "SPL input")?;
        // The dense precision Q, its Cholesky factor and Q^{-1} Y's workspace.
        crate::traits::check_dense_memory("SPL", y.nrows(), 3.0, "le or meu (sparse kNN graphs)")?;
        unfold_core::check_dim(
            self.dim,
            y.nrows().min(y.ncols()) + 1,
            "SPL needs d <= min(N, D)",
        )?;
        // Q is positive definite for any graph, so with connect = off a disconnected kNN
        // graph is kept (Iris at k = 5 splits setosa off); the components then separate in
        // the embedding.
        let (_, graph) = self
            .graph
            .build_any(y, Weighting::Binary, "SPL", observer)?;
        let mut yc = y.clone();
        for mut col in yc.column_iter_mut() {
            let m = col.mean();
            col.add_scalar_mut(-m);
        }
        let mut pairs = Vec::new();
        let mut phi = Vec::new();
        for (a, b, _) in graph.edges() {
            let (i, j) = (a.max(b), a.min(b));
            pairs.push((i, j));
            phi.push((yc.row(i) - yc.row(j)).norm_squared());
        }
        if self.slack.0.is_infinite() {
            if let Some(p) = phi.iter().position(|&v| v == 0.0) {
                let (first, second) = pairs[p];
                return Err(Error::DuplicatePoints {
                    first: second,
                    second: first,
                    method: "the dual with C = infinity (a zero distance needs an infinite weight, so the dual is unbounded; use a finite C)".into(),
                });
            }
        }
        if self.scale == DistanceScale::MeanNearestNeighbour {
            let n = y.nrows();
            let mut nearest = vec![f64::INFINITY; n];
            for (&(i, j), &p) in pairs.iter().zip(&phi) {
                nearest[i] = nearest[i].min(p);
                nearest[j] = nearest[j].min(p);
            }
            let mean = nearest.iter().sum::<f64>() / n as f64;
            if mean <= 0.0 {
                return Err(Error::invalid(
                    "scale",
                    "the mean nearest-neighbour distance is 0 (duplicate rows); remove duplicates",
                ));
            }
            phi.iter_mut().for_each(|p| *p /= mean);
            yc /= mean.sqrt();
        }
        Ok(SplDual {
            y: yc,
            dim: self.dim,
            gamma: self.gamma,
            c: self.slack.0,
            pairs,
            phi,
        })
    }

    /// [`SplParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<Spl> {
        let dual = self.dual(y, observer)?;
        let (weights, convergence) = match &self.solver {
            SplSolver::Lbfgsb(opts) => {
                let (sol, convergence) =
                    maximise_dual(&dual, None, Some(&dual.scales()), opts, observer)?;
                (sol.weights, convergence)
            }
            SplSolver::Subgradient {
                step,
                normalized,
                max_iterations,
            } => {
                let opts = SubgradientOptions {
                    step: *step,
                    normalized: *normalized,
                    max_iterations: *max_iterations,
                    record_trace: true,
                    ..SubgradientOptions::default()
                };
                let mut steps = 0;
                let r = try_maximize_until(
                    |s: &[f64], g: &mut [f64]| {
                        let value = dual.dual(s, Some(g))?;
                        steps += 1;
                        observer.step(1, steps, &Evidence::new(EvidenceKind::Objective, value))?;
                        Ok(value)
                    },
                    &vec![0.0; dual.pairs.len()],
                    &Projection::NonNegative,
                    &opts,
                    || observer.ended(),
                )
                .map_err(|e| match e {
                    TryOptimizeError::Objective { error, .. } => error,
                    TryOptimizeError::Subgradient(e) => {
                        Error::numerical("SPL subgradient ascent", e.to_string())
                    }
                })?;
                // The trace starts at the initial point; the convergence trace holds the
                // dual after each step.
                let trace = r.trace.get(1..).unwrap_or_default().to_vec();
                let (converged, stopped_by) = match r.status {
                    SubgradientStatus::GradientMappingSmall => (true, "gradient_mapping"),
                    SubgradientStatus::OptimumReached => (true, "optimum"),
                    SubgradientStatus::Stalled => (false, "stalled"),
                    SubgradientStatus::MaxIterations => (false, "max_iterations"),
                    SubgradientStatus::Ended => (false, "caller"),
                };
                (
                    r.best_x,
                    Convergence::iterative(trace, converged, stopped_by),
                )
            }
        };
        let coords = dual.embed(&weights)?;
        let evidence = dual.evidence(&weights)?;
        let graph = learned_graph(dual.y.nrows(), &dual.pairs, &weights)?;
        Ok(Spl {
            coords,
            graph,
            evidence,
            weights,
            convergence,
            dual,
        })
    }
}

/// The dual (17)-(18) of SPL over the kNN pairs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplDual {
    y: DMatrix<f64>,
    dim: usize,
    gamma: f64,
    c: f64,
    pairs: Vec<(usize, usize)>,
    phi: Vec<f64>,
}

/// `Q`'s factor, `W*`, `B = Q^{-1} Y W*` and `h = (gamma^2/8) Tr(W*^T Y^T Q^{-1} Y W*)`.
struct Inner {
    chol: Cholesky,
    b: DMatrix<f64>,
    h: f64,
}

impl SplDual {
    /// The (scaled) squared distance of every kNN pair.
    pub fn phi(&self) -> &[f64] {
        &self.phi
    }

    /// The preconditioner `d / (4 phi_ij)` of the L-BFGS-B search: near the optimum
    /// `(d/2)(U_ii + U_jj - 2U_ij) ~ 2 phi_ij`, so the curvature along `s_ij` is about
    /// `8 phi_ij^2 / d` ([`maximise_dual`]).
    pub fn scales(&self) -> Vec<f64> {
        inverse_distance_scales(&self.phi, self.dim as f64 / 4.0)
    }

    /// `Q = diag(S 1) - S + ((gamma + 1)/4) I` at weights `s`.
    pub fn precision(&self, s: &[f64]) -> DMatrix<f64> {
        Laplacian::new(self.y.nrows())
            .shift((self.gamma + 1.0) / 4.0)
            .dense(weighted_pairs(&self.pairs, s))
    }

    /// The projection `W*` (D x d): top-d eigenvectors of `Y^T Q^{-1} Y`, found from the
    /// N x N problem `R^{-1} Y Y^T R^{-T}` when D > N.
    fn projection(&self, chol: &Cholesky, qy: &DMatrix<f64>) -> Result<DMatrix<f64>> {
        let (n, p, d) = (self.y.nrows(), self.y.ncols(), self.dim);
        if p <= n {
            let a = symmetrised(self.y.tr_mul(qy));
            let eig = sym_eigen(&a)?;
            Ok(top_columns(&eig.values, &eig.vectors, d))
        } else {
            let r = chol.l();
            let m = r
                .solve_lower_triangular(&self.y)
                .ok_or_else(|| Error::numerical("SPL", "singular Cholesky factor of Q"))?;
            let a = symmetrised(&m * m.transpose());
            let eig = sym_eigen(&a)?;
            let v = top_columns(&eig.values, &eig.vectors, d);
            let mut w = m.tr_mul(&v);
            for mut col in w.column_iter_mut() {
                let norm = col.norm();
                if norm > 0.0 {
                    col /= norm;
                }
            }
            Ok(w)
        }
    }

    fn inner(&self, s: &[f64]) -> Result<Inner> {
        check_weights(s, self.pairs.len())?;
        let chol = Cholesky::new(&self.precision(s), "SPL matrix Q")?;
        if self.gamma == 0.0 {
            let b = DMatrix::zeros(self.y.nrows(), self.dim);
            return Ok(Inner { chol, b, h: 0.0 });
        }
        let qy = chol.solve(&self.y);
        let w = self.projection(&chol, &qy)?;
        let b = &qy * &w;
        let h = self.gamma.powi(2) / 8.0 * (self.y.tr_mul(&b)).tr_mul(&w).trace();
        Ok(Inner { chol, b, h })
    }

    fn terms(&self, inner: &Inner, s: &[f64]) -> Vec<(String, f64)> {
        let linear: f64 = s.iter().zip(&self.phi).map(|(s, p)| s * p).sum();
        let mut t = vec![
            (
                "log_det".into(),
                0.5 * self.dim as f64 * inner.chol.log_det(),
            ),
            ("distances".into(), -2.0 * linear),
            ("reconstruction".into(), -inner.h),
        ];
        if self.c.is_finite() {
            let sq: f64 = s.iter().map(|s| s * s).sum();
            t.push(("slack".into(), -sq / (2.0 * self.c)));
        }
        t
    }
}

/// The columns of the `d` largest eigenvalues (in descending order).
fn top_columns(values: &nalgebra::DVector<f64>, vectors: &DMatrix<f64>, d: usize) -> DMatrix<f64> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    DMatrix::from_fn(vectors.nrows(), d, |r, c| vectors[(r, idx[c])])
}

impl PairDual for SplDual {
    fn pairs(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    fn dual(&self, s: &[f64], grad: Option<&mut [f64]>) -> Result<f64> {
        let inner = self.inner(s)?;
        if let Some(g) = grad {
            let mut gm = inner.chol.inverse()? * self.dim as f64;
            if self.gamma > 0.0 {
                gm += (&inner.b * inner.b.transpose()) * (self.gamma.powi(2) / 4.0);
            }
            let contrasts = pair_contrasts(&gm, &self.pairs);
            let inv_c = if self.c.is_finite() {
                1.0 / self.c
            } else {
                0.0
            };
            for (p, g) in g.iter_mut().enumerate() {
                *g = 0.5 * contrasts[p] - inv_c * s[p] - 2.0 * self.phi[p];
            }
        }
        Ok(self.terms(&inner, s).iter().map(|t| t.1).sum())
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(0.0, f64::INFINITY); self.pairs.len()]
    }

    fn embed(&self, s: &[f64]) -> Result<DMatrix<f64>> {
        if self.gamma > 0.0 {
            Ok(self.inner(s)?.b * (self.gamma / 4.0))
        } else {
            check_weights(s, self.pairs.len())?;
            let l4 = Laplacian::new(self.y.nrows())
                .scale(4.0)
                .sparse(weighted_pairs(&self.pairs, s));
            Ok(laplacian_embedding(&l4, 1.0, self.dim, FieldScaling::Eigenvalue)?.coords)
        }
    }

    fn evidence(&self, s: &[f64]) -> Result<Evidence> {
        let inner = self.inner(s)?;
        Ok(Evidence::from_terms(
            EvidenceKind::Objective,
            self.terms(&inner, s),
        ))
    }
}

/// A fitted SPL model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Spl {
    /// The embedding, n x d.
    pub coords: DMatrix<f64>,
    /// The learned graph (pairs with a non-zero weight, weighted by it).
    pub graph: NeighbourGraph,
    /// The dual value with its terms (kind `objective`).
    pub evidence: Evidence,
    /// The learned weights, one per kNN pair of `dual.pairs()`.
    pub weights: Vec<f64>,
    /// How the solver ended, with the dual value after each iteration (for the subgradient
    /// solver, at each iterate after the start; it is not monotone).
    pub convergence: Convergence,
    /// The dual that was solved.
    pub dual: SplDual,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rand_distr::StandardNormal;

    /// A noisy S-curve in 3-D (N points), at a scale where edges form.
    fn s_curve(n: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        DMatrix::from_fn(n, 3, |i, c| {
            let t = -1.5 * std::f64::consts::PI + 3.0 * std::f64::consts::PI * i as f64 / n as f64;
            let e: f64 = rng.sample(StandardNormal);
            let v = match c {
                0 => t.sin(),
                1 => t.signum() * (t.cos() - 1.0),
                _ => 0.0,
            };
            0.3 * (v + 0.1 * e)
        })
    }

    fn fd_check(dual: &SplDual, s: &[f64]) {
        let m = s.len();
        let mut g = vec![0.0; m];
        dual.dual(s, Some(&mut g)).unwrap();
        let h = 1e-6;
        for p in [0, m / 4, m / 2, m - 1] {
            let mut sp = s.to_vec();
            sp[p] += h;
            let mut sm = s.to_vec();
            sm[p] -= h;
            let fd = (dual.dual(&sp, None).unwrap() - dual.dual(&sm, None).unwrap()) / (2.0 * h);
            assert!(
                (fd - g[p]).abs() < 1e-6 * (1.0 + g[p].abs()),
                "pair {p}: {fd} vs {}",
                g[p]
            );
        }
    }

    #[test]
    fn gradient_matches_finite_differences_both_forms() {
        let mut rng = unfold_core::seeded_rng(4);
        // D <= N (D x D eigenproblem) and D > N (N x N form).
        let y = s_curve(30, 1);
        let wide = DMatrix::from_fn(12, 20, |_, _| 0.3 * rng.sample::<f64, _>(StandardNormal));
        for (y, k) in [(y, 5), (wide, 3)] {
            for gamma in [0.0, 0.7] {
                let dual = SplParams::new(2).k(k).gamma(gamma).c(2.0).dual(&y).unwrap();
                let s: Vec<f64> = (0..dual.pairs().len())
                    .map(|_| rng.random::<f64>())
                    .collect();
                fd_check(&dual, &s);
            }
        }
    }

    #[test]
    fn wide_and_tall_projections_agree() {
        // The N x N route must give the same dual value as the D x D route on the same data.
        let mut rng = unfold_core::seeded_rng(8);
        let y = DMatrix::from_fn(10, 10, |_, _| 0.3 * rng.sample::<f64, _>(StandardNormal));
        let mut y11 = DMatrix::zeros(10, 11);
        y11.columns_mut(0, 10).copy_from(&y);
        let a = SplParams::new(2).k(3).gamma(0.5).dual(&y).unwrap();
        let b = SplParams::new(2).k(3).gamma(0.5).dual(&y11).unwrap();
        let s: Vec<f64> = (0..a.pairs().len()).map(|_| rng.random::<f64>()).collect();
        let (fa, fb) = (a.dual(&s, None).unwrap(), b.dual(&s, None).unwrap());
        assert!((fa - fb).abs() < 1e-10 * fa.abs().max(1.0), "{fa} vs {fb}");
    }

    #[test]
    fn lbfgsb_reaches_a_kkt_point_and_beats_one_over_t() {
        let y = s_curve(40, 2);
        let params = SplParams::new(2).k(6).gamma(1e-3).c(1e3);
        let fit = params.fit(&y).unwrap();
        let mut g = vec![0.0; fit.weights.len()];
        let f = fit.dual.dual(&fit.weights, Some(&mut g)).unwrap();
        let active = fit.weights.iter().filter(|&&s| s > 0.0).count();
        assert!(active > 0, "no edge formed");
        for (s, g) in fit.weights.iter().zip(&g) {
            if *s > 0.0 {
                assert!(g.abs() < 1e-5, "positive weight with gradient {g}");
            } else {
                assert!(*g <= 1e-5, "zero weight with ascent direction {g}");
            }
        }
        let sub = params.solver(SplSolver::paper(200)).fit(&y).unwrap();
        assert!(sub.convergence.trace.len() == 200);
        assert_eq!(sub.convergence.iterations, 200);
        assert!(sub.evidence.value <= f + 1e-9);
        assert_eq!(fit.evidence.kind, EvidenceKind::Objective);
        assert!((fit.evidence.value - f).abs() < 1e-9 * f.abs().max(1.0));
    }

    #[test]
    fn embedding_is_the_map_estimate() {
        let y = s_curve(30, 3);
        let gamma = 0.5;
        let fit = SplParams::new(2).k(5).gamma(gamma).fit(&y).unwrap();
        let dual = &fit.dual;
        // Stationarity of the corrected (21): 4 Q X - gamma Y W = 0 with W from the optimum.
        let q = dual.precision(&fit.weights);
        let chol = Cholesky::new(&q, "t").unwrap();
        let qy = chol.solve(&dual.y);
        let w = dual.projection(&chol, &qy).unwrap();
        let r = &q * &fit.coords * 4.0 - &dual.y * &w * gamma;
        assert!(r.amax() < 1e-10, "residual {}", r.amax());
    }

    #[test]
    fn gamma_zero_is_kernel_pca_on_regularised_laplacian_kernel() {
        let y = s_curve(30, 5);
        let fit = SplParams::new(2)
            .k(5)
            .gamma(0.0)
            .c(f64::INFINITY)
            .fit(&y)
            .unwrap();
        let n = 30;
        let l = Laplacian::new(n)
            .scale(4.0)
            .sparse(weighted_pairs(fit.dual.pairs(), &fit.weights))
            .to_dense();
        let sigma = Cholesky::new(&(l + DMatrix::<f64>::identity(n, n)), "t")
            .unwrap()
            .inverse()
            .unwrap();
        let dense = unfold_linalg::CentredKernel::new(sigma, 2, "Sigma")
            .unwrap()
            .coords();
        for c in 0..2 {
            let (a, b) = (fit.coords.column(c), dense.column(c));
            assert!((a - b * a.dot(&b).signum()).amax() < 1e-6);
        }
    }

    #[test]
    fn bad_input_is_rejected() {
        let y = s_curve(20, 6);
        for (p, name) in [
            (SplParams::new(2).c(0.0), "C"),
            (SplParams::new(2).c(-1.0), "C"),
            (SplParams::new(2).gamma(-1.0), "gamma"),
            (SplParams::new(2).gamma(f64::NAN), "gamma"),
        ] {
            let e = p.fit(&y).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
        assert!(SplParams::new(2).k(0).fit(&y).is_err());
        let mut dup = y.clone();
        let r = dup.row(3).clone_owned();
        dup.row_mut(4).copy_from(&r);
        let e = SplParams::new(2).c(f64::INFINITY).fit(&dup).unwrap_err();
        assert!(matches!(e, Error::DuplicatePoints { .. }), "{e}");
        assert!(SplParams::new(2).fit(&dup).is_ok());
        assert!(SplParams::new(0).fit(&y).is_err());
    }

    /// The fit reports its real iterations and one objective value per iteration.
    #[test]
    fn convergence_reports_every_iteration() {
        let y = s_curve(40, 2);
        let params = SplParams::new(2).k(6).gamma(1e-3).c(1e3);
        for fit in [
            params.fit(&y).unwrap(),
            params.solver(SplSolver::paper(30)).fit(&y).unwrap(),
        ] {
            let c = &fit.convergence;
            assert!(c.iterations > 0, "{c:?}");
            assert_eq!(c.trace.len(), c.iterations);
        }
    }
}

crate::embedding!(Spl, graph);

impl crate::regularised::PosteriorRegularised for Spl {
    fn learned_graph(&self) -> Result<NeighbourGraph> {
        Ok(self.graph.clone())
    }
}

/// SPL in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::Observer;
    use unfold_core::{Convergence, EvidenceKind};

    const ABOUT: &str =
        "structure-preserving learning: a posterior regularised by expected kNN distances";

    impl Registered for Spl {
        type Params = SplParams;

        fn info() -> MethodInfo {
            MethodInfo::new("spl", Family::Regularised, ABOUT).evidence(EvidenceKind::Objective)
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit(&data.y.matrix(), observer)
        }
    }

    impl Model for Spl {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the embedding", &self.coords, None, None)?;
            let n = self.coords.nrows();
            graph("the learned graph", &self.graph, n)?;
            let dual = &self.dual;
            matrix("the dual's points", &dual.y, Some(n), None)?;
            pairs("pair", dual.pairs.iter().copied(), n)?;
            length("the distances", dual.phi.len(), dual.pairs.len())?;
            finite("the distances", &dual.phi)?;
            length("the weights", self.weights.len(), dual.pairs.len())?;
            finite("the weights", &self.weights)?;
            positive("gamma", dual.gamma)?;
            positive("C", dual.c)?;
            ensure(dual.dim == self.coords.ncols(), || {
                format!(
                    "the dual is of dimension {} but the embedding {}",
                    dual.dim,
                    self.coords.ncols()
                )
            })
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }
    }
}
