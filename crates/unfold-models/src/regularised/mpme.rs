//! MPME, maximum posterior manifold embedding (Mao, Wang & Tsang 2017; `specs/mpme.md`).
//!
//! Every pair carries an expected-distance constraint `E||x_i - x_j||^2 <= phi_ij + xi_ij`
//! with an l1 slack of weight `C`. The dual over the similarities `w_ij` (i > j) is the
//! concave, box-constrained problem (13):
//!
//! ```text
//! max_w  F(w) = (d/2) log det(L + lambda I) - (1/2) sum_{i>j} w_ij phi_ij - (dN/2) log lambda,
//!        0 <= w_ij <= 4C,
//! ```
//!
//! with gradient (14) `dF/dw_ij = (1/2)(E_ij - phi_ij)`, `E_ij = d (U_ii + U_jj - 2 U_ij)`,
//! `U = (L + lambda I)^{-1}`. Chosen constants (the displays were lost, spec P1/P3): the
//! multiplier of each constraint is `w_ij / 4`, so the box is `[0, 4C]` and the posterior
//! precision is exactly `L + lambda I` (8); `phi` are SQUARED Euclidean distances (the
//! model's definition). Because `U <= I / lambda`, `E_ij <= 2d / lambda`, so every pair with
//! `phi_ij > 2d / lambda` is zero at the optimum (screening rule, spec §2.8) and gets no
//! variable.

use crate::field::grounded::EdgeEngine;
use crate::field::{laplacian_embedding, FieldScaling, Solver, SOLVER_HELP};
use crate::method::{Checked, Declared, Interval, Rule};
use crate::regularised::{
    check_weights, inverse_distance_scales, learned_graph, maximise_dual, pair_contrasts,
    weighted_pairs, DualSolution, PairDual, SlackPenalty, LAMBDA_HELP,
};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{
    check_points, Convergence, Error, Evidence, EvidenceKind, Observer, Result, Silent,
};
use unfold_graph::{Laplacian, NeighbourGraph};
use unfold_lbfgsb::LbfgsbOptions;
use unfold_linalg::{pairwise_sq_dists, smallest_generalized_eigenpairs, Cholesky, SymMatrix};

/// How the squared distances are scaled before the dual is built (the paper states none;
/// spec P2: the screening radius `2d/lambda` is absolute, in the units of `phi`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DistanceScale {
    /// `phi_ij = ||y_i - y_j||^2` as is (the paper).
    #[default]
    Raw,
    /// Divide by the mean over points of the squared distance to the nearest neighbour, so
    /// that a typical neighbour sits at `phi = 1` whatever the units of the data.
    MeanNearestNeighbour,
}

/// How the embedding is read off the learned graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MpmeEmbedding {
    /// Kernel PCA on `U = (L + lambda I)^{-1}` (the paper's experiments, (17)), from the
    /// eigenvectors of `L`: coordinates `v_k / sqrt(mu_k + lambda)`.
    #[default]
    KernelPca,
    /// The Laplacian-eigenmap-style problem (16) `(L + lambda I) f = nu (D + lambda I) f`:
    /// the eigenvectors of the d smallest `nu` after the first (which is the constant
    /// vector at `lambda = 0`, where (16) is LE), `D`-orthonormal.
    Generalised,
}

crate::params! {
    /// Parameters of [`Mpme`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct MpmeParams {
        /// Embedding dimension d (it also weighs the log-det, spec P4).
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// Prior precision `lambda > 0`.
        pub lambda: f64 = 1.0 => Rule::within(Interval::POSITIVE, LAMBDA_HELP),
        /// Slack penalty `C > 0` (`f64::INFINITY` allowed); the box is `[0, 4C]`.
        pub slack: SlackPenalty = SlackPenalty(f64::INFINITY) => Rule::group(),
        /// Dense or sparse factorisation of `L + lambda I` ([`Solver::Auto`]: sparse from 300
        /// points when the screened pairs leave at most [`SPARSE_MAX_DEGREE`] per point).
        pub solver: Solver = Solver::Auto => Rule::help(SOLVER_HELP),
        /// Scaling of the squared distances.
        pub scale: DistanceScale = DistanceScale::Raw,
        /// Drop the pairs with `phi_ij > 2d/lambda` (exact; turn off only to check it).
        pub screen: bool = true,
        /// Embedding route.
        pub embedding: MpmeEmbedding = MpmeEmbedding::KernelPca,
        /// L-BFGS-B options (default: SciPy's, with `pgtol = 1e-8` and `factr = 10`).
        pub lbfgsb: LbfgsbOptions = LbfgsbOptions {
            pgtol: 1e-8,
            factr: 10.0,
            ..LbfgsbOptions::default()
        },
    }
}

impl MpmeParams {
    /// Defaults: `lambda = 1`, `C = infinity`, raw squared distances, screening, kernel PCA.
    pub fn new(dim: usize) -> Self {
        MpmeParams {
            dim,
            ..MpmeParams::default()
        }
    }

    /// Sets `C`.
    pub fn c(mut self, c: f64) -> Self {
        self.slack = SlackPenalty(c);
        self
    }

    /// Builds the dual of MPME on the rows of `y` (squared distances, scaled, screened).
    ///
    /// # Errors
    /// Bad parameters, non-finite data, and [`Error::InvalidParameter`] when every pair is
    /// screened out (the data scale and `lambda` disagree).
    pub fn dual(&self, y: &DMatrix<f64>) -> Result<MpmeDual> {
        self.clone().check()?.dual(y)
    }

    /// Fits MPME: builds and maximises the dual, then embeds.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Mpme> {
        self.clone().check()?.fit(y)
    }
}

impl Checked<MpmeParams> {
    /// [`MpmeParams::dual`] with the parameters checked.
    pub fn dual(&self, y: &DMatrix<f64>) -> Result<MpmeDual> {
        self.dual_with(y, DENSE_PAIRS_MAX_POINTS)
    }

    /// [`MpmeParams::dual`], listing the screened pairs from all pairwise distances up to
    /// `dense_pairs_max` points and by a radius search above.
    fn dual_with(&self, y: &DMatrix<f64>, dense_pairs_max: usize) -> Result<MpmeDual> {
        check_points(y, "MPME input")?;
        let n = y.nrows();
        if n < 2 {
            return Err(Error::TooFewPoints {
                what: "MPME".into(),
                needed: 2,
                got: n,
                advice: "give at least two points".into(),
            });
        }
        unfold_core::check_dim(
            self.dim,
            n,
            "MPME embeds n points in fewer than n dimensions",
        )?;
        let radius = 2.0 * self.dim as f64 / self.lambda;
        let (pairs, phis, smallest) = if self.screen && n > dense_pairs_max {
            self.pairs_by_radius(y, radius)?
        } else {
            self.pairs_from_all(y, radius)?
        };
        if self.slack.0.is_infinite() {
            if let Some(p) = phis.iter().position(|&v| v == 0.0) {
                let (first, second) = pairs[p];
                return Err(Error::DuplicatePoints {
                    first: second,
                    second: first,
                    method: "the dual with C = infinity (a zero distance needs an infinite weight, so the dual is unbounded; use a finite C)".into(),
                });
            }
        }
        if pairs.is_empty() {
            return Err(Error::invalid(
                "lambda",
                format!(
                    "every pair is screened out: the smallest squared distance {smallest:.4e} exceeds the radius 2d/lambda = {radius:.4e}, so the learned graph would be empty; the scale of the data and lambda disagree: use lambda <= {:.4e} or rescale the distances (DistanceScale::MeanNearestNeighbour)",
                    2.0 * self.dim as f64 / smallest
                ),
            ));
        }
        let sparse = match self.solver {
            Solver::Auto => Solver::Auto.sparse_for(n) && 2 * pairs.len() <= SPARSE_MAX_DEGREE * n,
            solver => solver.sparse_for(n),
        };
        if !sparse {
            // The dense dual holds L + lambda I, its Cholesky factor and its inverse.
            unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
                method: "MPME with the dense solver",
                n,
                bytes: &|m| 24 * (m as u64).pow(2),
                holds: format!(
                    "the dense L + lambda I, its factor and its inverse; the screened pairs \
                     average {:.0} per point",
                    2.0 * pairs.len() as f64 / n as f64
                ),
                alternative: "a larger lambda (a smaller screening radius 2d/lambda), so \
                              that the pairs stay sparse and the sparse solver applies",
            })?;
        }
        Ok(MpmeDual {
            n,
            dim: self.dim,
            lambda: self.lambda,
            upper: 4.0 * self.slack.0,
            pairs,
            phi: phis,
            embedding: self.embedding,
            sparse,
            engine: EdgeEngine::default(),
        })
    }

    /// The pairs within the screening radius with their (scaled) squared distances, and the
    /// smallest squared distance, from the n x n matrix of all of them.
    fn pairs_from_all(&self, y: &DMatrix<f64>, radius: f64) -> Result<ScreenedPairs> {
        let n = y.nrows();
        let mut phi = pairwise_sq_dists(y);
        if self.scale == DistanceScale::MeanNearestNeighbour {
            let mean_nn = (0..n)
                .map(|i| {
                    (0..n)
                        .filter(|&j| j != i)
                        .map(|j| phi[(i, j)])
                        .fold(f64::INFINITY, f64::min)
                })
                .sum::<f64>()
                / n as f64;
            phi /= check_mean_nn(mean_nn)?;
        }
        let mut pairs = Vec::new();
        let mut phis = Vec::new();
        let mut smallest = f64::INFINITY;
        for i in 1..n {
            for j in 0..i {
                smallest = smallest.min(phi[(i, j)]);
                if !self.screen || phi[(i, j)] <= radius {
                    pairs.push((i, j));
                    phis.push(phi[(i, j)]);
                }
            }
        }
        Ok((pairs, phis, smallest))
    }

    /// The same pairs, in the same order and with the same squared distances (summed
    /// feature by feature like `pairwise_sq_dists` up to 16 features), from a radius search
    /// on the kd-tree: memory in the number of pairs, not n^2.
    fn pairs_by_radius(&self, y: &DMatrix<f64>, radius: f64) -> Result<ScreenedPairs> {
        let n = y.nrows();
        let sq = |i: usize, j: usize| {
            let (a, b) = (i.max(j), i.min(j));
            (0..y.ncols())
                .map(|k| (y[(a, k)] - y[(b, k)]) * (y[(a, k)] - y[(b, k)]))
                .sum::<f64>()
        };
        let nearest = unfold_graph::knn(y, 1)?;
        let nn: Vec<f64> = (0..n).map(|i| sq(i, nearest.indices[i][0])).collect();
        let scale = match self.scale {
            DistanceScale::Raw => 1.0,
            DistanceScale::MeanNearestNeighbour => {
                check_mean_nn(nn.iter().sum::<f64>() / n as f64)?
            }
        };
        let smallest = nn.iter().fold(f64::INFINITY, |m, &v| m.min(v / scale));
        // A slightly larger ball, then the exact test on the recomputed distances.
        let ball = (radius * scale).sqrt() * (1.0 + 1e-9);
        let graph = NeighbourGraph::epsilon_ball(y, ball, unfold_graph::Weighting::Binary)?;
        let (mut pairs, mut phis) = (Vec::new(), Vec::new());
        for i in 1..n {
            for &j in graph.neighbours(i).0.iter().take_while(|&&j| j < i) {
                let phi = sq(i, j) / scale;
                if phi <= radius {
                    pairs.push((i, j));
                    phis.push(phi);
                }
            }
        }
        Ok((pairs, phis, smallest))
    }

    /// [`MpmeParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Mpme> {
        self.fit_observed(y, &Silent)
    }

    /// [`Checked::fit`] reporting every evaluation of the dual to `observer`, which may
    /// stop the fit ([`Error::Interrupted`]).
    pub fn fit_observed(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<Mpme> {
        let dual = self.dual(y)?;
        let (solution, convergence) =
            maximise_dual(&dual, None, Some(&dual.scales()), &self.lbfgsb, observer)?;
        let coords = dual.embed(&solution.weights)?;
        let evidence = dual.evidence(&solution.weights)?;
        let graph = learned_graph(dual.n, &dual.pairs, &solution.weights)?;
        Ok(Mpme {
            coords,
            graph,
            evidence,
            solution,
            convergence,
            dual,
        })
    }
}

/// The dual (13) of MPME over the candidate pairs left by screening.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MpmeDual {
    n: usize,
    dim: usize,
    lambda: f64,
    upper: f64,
    pairs: Vec<(usize, usize)>,
    phi: Vec<f64>,
    embedding: MpmeEmbedding,
    /// Factorise `L + lambda I` by the sparse engine.
    #[serde(default)]
    sparse: bool,
    #[serde(skip)]
    engine: EdgeEngine,
}

/// Candidate pairs, their (scaled) squared distances, and the smallest squared distance.
type ScreenedPairs = (Vec<(usize, usize)>, Vec<f64>, f64);

/// Up to this many points the pairs are screened from the n x n matrix of all squared
/// distances (128 MB at 4000 points); above it by a radius search.
pub const DENSE_PAIRS_MAX_POINTS: usize = 4000;

/// The mean nearest-neighbour squared distance, refused when zero.
fn check_mean_nn(mean_nn: f64) -> Result<f64> {
    if mean_nn <= 0.0 {
        return Err(Error::invalid(
            "scale",
            "every point has a duplicate, so the mean nearest-neighbour distance is 0; remove duplicate rows",
        ));
    }
    Ok(mean_nn)
}

/// The most screened pairs per point (on average) for which [`Solver::Auto`] takes the
/// sparse path: denser graphs fill the sparse factor towards the dense one.
pub const SPARSE_MAX_DEGREE: usize = 64;

impl MpmeDual {
    /// The (scaled) squared distance of every candidate pair.
    pub fn phi(&self) -> &[f64] {
        &self.phi
    }

    /// The diagonal preconditioner `d / phi_ij` of the search ([`maximise_dual`]); a
    /// zero distance (duplicate points, finite C) takes the smallest positive one.
    pub fn scales(&self) -> Vec<f64> {
        inverse_distance_scales(&self.phi, self.dim as f64)
    }

    /// The expected squared embedding distances `E_ij = d (U_ii + U_jj - 2 U_ij)` of the
    /// candidate pairs under the posterior (8) at weights `w`.
    pub fn expected_distances(&self, w: &[f64]) -> Result<Vec<f64>> {
        Ok(self.factor(w)?.1)
    }

    /// `log det(L + lambda I)` and the expected distances, from the dense Cholesky factor
    /// or the sparse engine (selected inversion on the screened pairs, grounded so that
    /// no digit is lost to the constant mode `1 / (n lambda)`).
    fn factor(&self, w: &[f64]) -> Result<(f64, Vec<f64>)> {
        check_weights(w, self.pairs.len())?;
        const WHAT: &str = "MPME precision L + lambda I";
        let d = self.dim as f64;
        if self.sparse {
            let factor = self
                .engine
                .factor(self.n, &self.pairs, w, self.lambda, WHAT)?;
            let contrasts = self
                .engine
                .contrasts(&factor.covariance()?)
                .expect("the engine's own factor");
            return Ok((
                factor.log_det(),
                contrasts.into_iter().map(|c| d * c).collect(),
            ));
        }
        let q = Laplacian::new(self.n)
            .shift(self.lambda)
            .dense(weighted_pairs(&self.pairs, w));
        let chol = Cholesky::new(&q, WHAT)?;
        let u = chol.inverse()?;
        let e = pair_contrasts(&u, &self.pairs)
            .into_iter()
            .map(|c| d * c)
            .collect();
        Ok((chol.log_det(), e))
    }

    fn terms(&self, log_det: f64, w: &[f64]) -> [(String, f64); 3] {
        let d = self.dim as f64;
        let linear: f64 = w.iter().zip(&self.phi).map(|(w, p)| w * p).sum();
        [
            ("log_det".into(), 0.5 * d * log_det),
            ("distances".into(), -0.5 * linear),
            ("prior".into(), -0.5 * d * self.n as f64 * self.lambda.ln()),
        ]
    }
}

impl PairDual for MpmeDual {
    fn pairs(&self) -> &[(usize, usize)] {
        &self.pairs
    }

    fn dual(&self, w: &[f64], grad: Option<&mut [f64]>) -> Result<f64> {
        let (log_det, e) = self.factor(w)?;
        if let Some(g) = grad {
            for ((g, e), p) in g.iter_mut().zip(&e).zip(&self.phi) {
                *g = 0.5 * (e - p);
            }
        }
        Ok(self.terms(log_det, w).iter().map(|t| t.1).sum())
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(0.0, self.upper); self.pairs.len()]
    }

    fn embed(&self, w: &[f64]) -> Result<DMatrix<f64>> {
        check_weights(w, self.pairs.len())?;
        let l = Laplacian::new(self.n).sparse(weighted_pairs(&self.pairs, w));
        match self.embedding {
            MpmeEmbedding::KernelPca => {
                Ok(
                    laplacian_embedding(&l, self.lambda, self.dim, FieldScaling::Eigenvalue)?
                        .coords,
                )
            }
            MpmeEmbedding::Generalised => {
                let a = l.add_to_diagonal(self.lambda);
                let deg: Vec<f64> = (0..self.n).map(|i| l.get(i, i) + self.lambda).collect();
                let eig =
                    smallest_generalized_eigenpairs(SymMatrix::Sparse(&a), &deg, self.dim + 1)?;
                Ok(eig.vectors.columns(1, self.dim).into_owned())
            }
        }
    }

    fn evidence(&self, w: &[f64]) -> Result<Evidence> {
        let (log_det, _) = self.factor(w)?;
        Ok(Evidence::from_terms(
            EvidenceKind::Objective,
            self.terms(log_det, w).to_vec(),
        ))
    }
}

/// A fitted MPME model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Mpme {
    /// The embedding, n x d.
    pub coords: DMatrix<f64>,
    /// The learned graph (pairs with a non-zero weight, weighted by it).
    pub graph: NeighbourGraph,
    /// The dual value with its terms (kind `objective`).
    pub evidence: Evidence,
    /// The optimiser's result (weights per candidate pair).
    pub solution: DualSolution,
    /// How the L-BFGS-B search of the dual ended, with the dual after each iteration.
    pub convergence: Convergence,
    /// The dual that was solved (pairs, distances).
    pub dual: MpmeDual,
}

crate::embedding!(Mpme, graph);

impl crate::regularised::PosteriorRegularised for Mpme {
    fn learned_graph(&self) -> Result<NeighbourGraph> {
        Ok(self.graph.clone())
    }
}

/// MPME in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::{Convergence, EvidenceKind};

    const ABOUT: &str = "maximum posterior manifold embedding: a graph learned over all pairs with a log-determinant prior";

    impl Registered for Mpme {
        type Params = MpmeParams;

        fn info() -> MethodInfo {
            MethodInfo::new("mpme", Family::Regularised, ABOUT)
                .evidence(EvidenceKind::Objective)
                .distinct_points()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit_observed(&data.y.matrix(), observer)
        }
    }

    impl Model for Mpme {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the embedding", &self.coords, None, None)?;
            let n = self.coords.nrows();
            graph("the learned graph", &self.graph, n)?;
            let dual = &self.dual;
            ensure(dual.n == n && dual.dim == self.coords.ncols(), || {
                format!(
                    "the dual is over {} points in {} dimensions, the embedding {n} x {}",
                    dual.n,
                    dual.dim,
                    self.coords.ncols()
                )
            })?;
            pairs("pair", dual.pairs.iter().copied(), n)?;
            length("the distances", dual.phi.len(), dual.pairs.len())?;
            finite("the distances", &dual.phi)?;
            length("the weights", self.solution.weights.len(), dual.pairs.len())?;
            finite("the weights", &self.solution.weights)?;
            non_negative("lambda", dual.lambda)?;
            ensure(dual.upper > 0.0, || {
                format!("the weights' upper bound {} is not > 0", dual.upper)
            })
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rand_distr::StandardNormal;

    /// A noisy circle of radius 1 (N points).
    fn circle(n: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        DMatrix::from_fn(n, 2, |i, c| {
            let t = 2.0 * std::f64::consts::PI * i as f64 / n as f64;
            let e: f64 = rng.sample(StandardNormal);
            (if c == 0 { t.cos() } else { t.sin() }) + 0.05 * e
        })
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let y = circle(20, 1);
        let dual = MpmeParams::new(2).lambda(10.0).c(1.0).dual(&y).unwrap();
        let m = dual.pairs().len();
        let mut rng = unfold_core::seeded_rng(2);
        let w: Vec<f64> = (0..m).map(|_| rng.random::<f64>()).collect();
        let mut g = vec![0.0; m];
        dual.dual(&w, Some(&mut g)).unwrap();
        let h = 1e-6;
        for p in [0, m / 3, m / 2, m - 1] {
            let mut wp = w.clone();
            wp[p] += h;
            let mut wm = w.clone();
            wm[p] -= h;
            let fd = (dual.dual(&wp, None).unwrap() - dual.dual(&wm, None).unwrap()) / (2.0 * h);
            assert!(
                (fd - g[p]).abs() < 1e-7 * (1.0 + g[p].abs()),
                "pair {p}: {fd} vs {}",
                g[p]
            );
        }
    }

    /// The radius search lists exactly the pairs, distances and smallest distance of the
    /// n x n screen, for raw and scaled distances.
    #[test]
    fn radius_search_lists_the_same_screened_pairs() {
        let y = unfold_data::synthetic::swiss_roll(600, 0.05, 9)
            .unwrap()
            .points;
        for (scale, lambda) in [
            (DistanceScale::Raw, 4.0),
            (DistanceScale::MeanNearestNeighbour, 1.0),
        ] {
            let params = MpmeParams::new(2)
                .lambda(lambda)
                .c(1.0)
                .scale(scale)
                .check()
                .unwrap();
            let all = params.dual_with(&y, usize::MAX).unwrap();
            let ball = params.dual_with(&y, 0).unwrap();
            assert!(all.pairs().len() > 600 && all.pairs().len() < 600 * 599 / 4);
            assert_eq!(all.pairs(), ball.pairs());
            assert_eq!(all.phi(), ball.phi());
        }
        // Screening everything away gives the same advice either way.
        let far = MpmeParams::new(2).lambda(1e6).check().unwrap();
        let (a, b) = (far.dual_with(&y, usize::MAX), far.dual_with(&y, 0));
        match (a, b) {
            (
                Err(Error::InvalidParameter { message: m1, .. }),
                Err(Error::InvalidParameter { message: m2, .. }),
            ) => {
                assert_eq!(m1, m2)
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// On screened pairs that leave a sparse graph, the sparse engine gives the dense
    /// dual's value (1e-10) and gradient (1e-8), and both solvers reach the same optimum.
    #[test]
    fn sparse_and_dense_duals_agree() {
        let y = unfold_data::synthetic::swiss_roll(400, 0.05, 3)
            .unwrap()
            .points;
        let params = MpmeParams::new(2)
            .lambda(1.0)
            .c(1.0)
            .scale(DistanceScale::MeanNearestNeighbour);
        let sparse = params.clone().solver(Solver::Sparse).dual(&y).unwrap();
        let dense = params.clone().solver(Solver::Dense).dual(&y).unwrap();
        let m = sparse.pairs().len();
        assert!(m < 20 * 400, "the screened graph is sparse: {m} pairs");
        let mut rng = unfold_core::seeded_rng(5);
        let w: Vec<f64> = (0..m).map(|_| 4.0 * rng.random::<f64>()).collect();
        let (mut gs, mut gd) = (vec![0.0; m], vec![0.0; m]);
        let vs = sparse.dual(&w, Some(&mut gs)).unwrap();
        let vd = dense.dual(&w, Some(&mut gd)).unwrap();
        assert!((vs - vd).abs() < 1e-10 * vd.abs(), "{vs} vs {vd}");
        let scale = gd.iter().fold(0.0f64, |a, g| a.max(g.abs()));
        let worst = gs
            .iter()
            .zip(&gd)
            .fold(0.0f64, |a, (p, q)| a.max((p - q).abs()));
        assert!(worst < 1e-8 * scale, "gradient off by {worst} of {scale}");
        let fit = |solver| params.clone().solver(solver).fit(&y).unwrap();
        let (fs, fd) = (fit(Solver::Sparse), fit(Solver::Dense));
        // The dual is concave but not strictly, so the solvers' optima are compared by
        // their value.
        let (os, od) = (fs.evidence.value, fd.evidence.value);
        assert!((os - od).abs() < 1e-10 * od.abs(), "{os} vs {od}");
    }

    /// KKT of (13): E = phi where 0 < w < 4C, E <= phi where w = 0, E >= phi at w = 4C.
    #[test]
    fn kkt_holds_at_the_optimum() {
        let y = circle(40, 3);
        for c in [0.05, f64::INFINITY] {
            let fit = MpmeParams::new(2).lambda(10.0).c(c).fit(&y).unwrap();
            let w = &fit.solution.weights;
            let e = fit.dual.expected_distances(w).unwrap();
            let phi = fit.dual.phi();
            let (mut interior, mut zero, mut upper) = (0, 0, 0);
            for p in 0..w.len() {
                let gap = e[p] - phi[p];
                if w[p] <= 1e-10 {
                    zero += 1;
                    assert!(gap <= 1e-6, "w = 0 but E - phi = {gap}");
                } else if w[p] >= 4.0 * c - 1e-10 {
                    upper += 1;
                    assert!(gap >= -1e-6, "w at bound but E - phi = {gap}");
                } else {
                    interior += 1;
                    assert!(
                        gap.abs() <= 1e-6,
                        "interior w = {} but E - phi = {gap}",
                        w[p]
                    );
                }
            }
            assert!(
                interior > 0 && zero > 0,
                "c = {c}: {interior} interior, {zero} zero, {upper} at bound"
            );
            if c < 1.0 {
                assert!(upper > 0, "a small C must make some weights hit 4C");
            }
        }
    }

    #[test]
    fn screening_drops_no_active_pair() {
        let y = circle(30, 5);
        let base = MpmeParams::new(2).lambda(10.0).c(10.0);
        let screened = base.clone().fit(&y).unwrap();
        let mut full_params = base.clone();
        full_params.screen = false;
        let full = full_params.fit(&y).unwrap();
        assert!(screened.dual.pairs().len() < full.dual.pairs().len());
        // Every pair with a non-zero weight in the full problem survives screening, with
        // the same weight; the dual values agree.
        let kept: std::collections::HashMap<_, _> = screened
            .dual
            .pairs()
            .iter()
            .zip(&screened.solution.weights)
            .map(|(&p, &w)| (p, w))
            .collect();
        for (p, &w) in full.dual.pairs().iter().zip(&full.solution.weights) {
            if w > 1e-6 {
                let ws = kept.get(p).expect("screening dropped an active pair");
                assert!((ws - w).abs() < 1e-4 * (1.0 + w), "{p:?}: {ws} vs {w}");
            } else if !kept.contains_key(p) {
                continue;
            }
        }
        // The preconditioned search and the plain one reach the same optimum.
        let (plain, _) = maximise_dual(&full.dual, None, None, &base.lbfgsb, &Silent).unwrap();
        assert!((plain.value - full.solution.value).abs() < 1e-8 * plain.value.abs());
        assert!(
            (screened.solution.value - full.solution.value).abs()
                < 1e-7 * full.solution.value.abs().max(1.0)
        );
    }

    #[test]
    fn kernel_pca_route_equals_dense_kernel_pca_on_u() {
        let y = circle(25, 7);
        let fit = MpmeParams::new(2).lambda(10.0).fit(&y).unwrap();
        let w = &fit.solution.weights;
        let q = Laplacian::new(25)
            .shift(10.0)
            .dense(weighted_pairs(fit.dual.pairs(), w));
        let u = Cholesky::new(&q, "test").unwrap().inverse().unwrap();
        let ck = unfold_linalg::CentredKernel::new(u, 2, "U").unwrap();
        let dense = ck.coords();
        for c in 0..2 {
            let a = fit.coords.column(c);
            let b = dense.column(c);
            let s = a.dot(&b).signum();
            assert!((a - b * s).amax() < 1e-6);
        }
        // The generalised route is D_lambda-orthonormal and solves (16).
        let mut params = MpmeParams::new(2).lambda(10.0);
        params.embedding = MpmeEmbedding::Generalised;
        let f = params.fit(&y).unwrap().coords;
        let l = Laplacian::new(25)
            .sparse(weighted_pairs(fit.dual.pairs(), w))
            .to_dense();
        let dl = DMatrix::from_diagonal(&(l.diagonal().add_scalar(10.0)));
        let gram = f.transpose() * &dl * &f;
        assert!((gram - DMatrix::<f64>::identity(2, 2)).amax() < 1e-8);
    }

    #[test]
    fn fitted_model_is_an_embedding_and_round_trips() {
        use crate::traits::Embedding;
        let y = circle(20, 11);
        let fit = MpmeParams::new(2).lambda(10.0).fit(&y).unwrap();
        let nonzero = fit.solution.weights.iter().filter(|&&w| w > 0.0).count();
        assert_eq!(fit.graph().unwrap().n_edges(), nonzero);
        assert_eq!(fit.evidence().kind, EvidenceKind::Objective);
        let cfg = bincode::config::standard();
        let bytes = bincode::serde::encode_to_vec(&fit, cfg).unwrap();
        let (back, _): (Mpme, usize) = bincode::serde::decode_from_slice(&bytes, cfg).unwrap();
        assert_eq!(back.coords, fit.coords);
        assert_eq!(back.dual, fit.dual);
    }

    #[test]
    fn bad_input_is_rejected_with_advice() {
        let y = circle(10, 9);
        for (p, name) in [
            (MpmeParams::new(2).lambda(0.0), "lambda"),
            (MpmeParams::new(2).lambda(-1.0), "lambda"),
            (MpmeParams::new(2).c(0.0), "C"),
            (MpmeParams::new(2).c(f64::NAN), "C"),
        ] {
            let e = p.fit(&y).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
        // A duplicate row with C = infinity makes the dual unbounded.
        let mut dup = y.clone();
        let r = dup.row(3).clone_owned();
        dup.row_mut(4).copy_from(&r);
        let e = MpmeParams::new(2).lambda(10.0).fit(&dup).unwrap_err();
        assert!(
            matches!(
                e,
                Error::DuplicatePoints {
                    first: 3,
                    second: 4,
                    ..
                }
            ),
            "{e}"
        );
        assert!(MpmeParams::new(2).lambda(10.0).c(1.0).fit(&dup).is_ok());
        // Data in large units: every squared distance is far beyond 2d/lambda.
        let big = &y * 1e3;
        let e = MpmeParams::new(2)
            .lambda(1.0)
            .fit(&big)
            .unwrap_err()
            .to_string();
        assert!(e.contains("screened out") && e.contains("rescale"), "{e}");
        // Rescaling fixes it.
        let ok = MpmeParams::new(2)
            .lambda(1.0)
            .scale(DistanceScale::MeanNearestNeighbour)
            .fit(&big);
        assert!(ok.is_ok());
    }

    /// The fit reports its real iterations and one objective value per iteration.
    #[test]
    fn convergence_reports_every_iteration() {
        let fit = MpmeParams::new(2)
            .lambda(10.0)
            .c(1.0)
            .fit(&circle(30, 5))
            .unwrap();
        let c = &fit.convergence;
        assert!(c.iterations > 0, "{c:?}");
        assert_eq!(c.trace.len(), c.iterations);
        assert!((c.trace.last().unwrap() - fit.solution.value).abs() < 1e-12);
    }
}
