//! Maximum entropy unfolding (Lawrence 2012; spec `meu_alle_drill.md` §2).
//!
//! One multiplier `lambda_e >= 0` per unordered edge of the kNN graph builds the Laplacian
//! `L` (off-diagonal `-lambda`, `L 1 = 0`) and the field's precision `L + gamma I`. With the
//! data centred, the exact log-likelihood is (spec §2.2)
//!
//! ```text
//! log p(Y) = -(np/2) log 2pi + (p/2) log|L + gamma I| - (gamma/2) tr(Y Y^T)
//!            - 1/2 sum_e lambda_e d_e,
//! ```
//!
//! concave in `lambda`, with gradient (spec §2.4, the corrected factor)
//! `(p/2)(k_ii - 2 k_ij + k_jj) - d_ij / 2`, `K = (L + gamma I)^{-1}`. It is maximised under
//! `lambda >= 0` (the paper's "MEU") by L-BFGS-B. With `gamma = 0` the pseudo-determinant
//! and pseudo-inverse are used (`L + 11^T / n` has the same determinant as the
//! pseudo-determinant of `L`, and the same `k_ii - 2 k_ij + k_jj`), and the normaliser
//! counts `n - 1` dimensions per feature (spec §11 item 7).
//!
//! The embedding is the principal eigenvectors of `H K H`, i.e. the eigenvectors of the
//! smallest non-zero eigenvalues of `L` (spec §2.6). Out-of-sample projection: see
//! [`Meu::project`] and `docs/methods/meu.md`.

use crate::field::grounded::{EdgeEngine, GroundedLaplacian, SparseOrdering};
use crate::field::{Trained, DEFAULT_GAMMA, SCALING_HELP, SOLVER_HELP};
use crate::grf::{
    laplacian_embedding, latent_scales, new_node_mean, FieldFactor, FieldFitOptions,
    FieldFitReport, FieldScaling, GaussianRandomField, Precision, PrecisionDerivative, Solver,
    LOG_TAU,
};
use crate::method::{Checked, Declared, Field, Interval, ParamSpec, Rule, Settings};
use crate::optimise::{maximise, Search};
use crate::traits::{check_fit_input, check_new_points, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Footprint, MemoryLimit, Result};
use unfold_core::{Observer, Silent};
use unfold_graph::{duplicate_pairs, knn_query, GraphSpec, Laplacian, NeighbourGraph, Weighting};
use unfold_linalg::{Cholesky, CsrMatrix, SparseCholesky};

crate::params! {
    /// Settings of [`Meu`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct MeuParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        /// Precision of the base density; `1e-4` by default, `0` for the pseudo-inverse.
        pub gamma: f64 = DEFAULT_GAMMA => Rule::within(
            Interval::NON_NEGATIVE,
            "meu: precision of the base density, L + gamma I (0 for the pseudo-inverse)",
        ),
        pub scaling: FieldScaling = FieldScaling::UnitVariance => Rule::help(SCALING_HELP),
        /// Dense or sparse factorisation of the field (by size by default).
        pub solver: Solver = Solver::Auto => Rule::help(SOLVER_HELP),
        /// The stopping rules of the likelihood's search (`pgtol`, `factr`).
        pub search: FieldFitOptions = FieldFitOptions::default() => Rule::group(),
    }
}

/// MEU's parameters `pgtol` and `factr`, the stopping rules of its search.
impl Field for FieldFitOptions {
    fn field_specs(_: &'static str, _: &Rule, default: &Self) -> Vec<ParamSpec> {
        let pgtol = Rule::within(
            Interval::POSITIVE,
            "meu: stop when the largest projected gradient entry of the scaled multipliers \
             is at most this",
        );
        let factr = Rule::within(
            Interval::NON_NEGATIVE,
            "meu: also stop when an iteration changes the log-likelihood by less than \
             factr x 2.2e-16 relative (SciPy's default is 1e7; 0 runs to pgtol)",
        );
        [
            f64::field_specs("pgtol", &pgtol, &default.pgtol),
            f64::field_specs("factr", &factr, &default.factr),
        ]
        .concat()
    }

    fn read_into(&mut self, _: &'static str, settings: &Settings) -> Result<()> {
        self.pgtol.read_into("pgtol", settings)?;
        self.factr.read_into("factr", settings)
    }

    fn write(&self, _: &'static str, settings: &mut Settings) {
        self.pgtol.write("pgtol", settings);
        self.factr.write("factr", settings);
    }
}

impl MeuParams {
    /// MEU in `dim` dimensions on the union kNN graph with `k` neighbours, the other
    /// parameters at their defaults.
    pub fn new(dim: usize, k: usize) -> Self {
        MeuParams {
            dim,
            graph: GraphSpec::knn(k),
            ..MeuParams::default()
        }
    }

    /// These parameters with the search's gradient tolerance `pgtol`.
    pub fn pgtol(mut self, pgtol: f64) -> Self {
        self.search.pgtol = pgtol;
        self
    }

    /// Also stop when an iteration changes the per-feature log-likelihood by less than
    /// `factr * eps` relative (SciPy's L-BFGS-B default is 1e7); 0, the default, runs to
    /// `pgtol`. At 10^6 points this ends the search where the likelihood's digits stop
    /// moving (`bench/results/grf.md`).
    pub fn factr(mut self, factr: f64) -> Self {
        self.search.factr = factr;
        self
    }

    /// Fits MEU to the rows of `y` (the features are centred first: distances carry no
    /// information about the mean).
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Meu> {
        self.fit_observed(y, None, &Silent)
    }

    /// [`MeuParams::fit`] on the kNN graph (`graph = None`) or [`MeuParams::fit_graph`],
    /// reporting every log-likelihood evaluation of the search to `observer` (progress).
    pub fn fit_observed(
        &self,
        y: &DMatrix<f64>,
        graph: Option<&NeighbourGraph>,
        observer: &dyn Observer,
    ) -> Result<Meu> {
        self.clone().check()?.fit_observed(y, graph, observer)
    }

    /// Fits MEU on a given connected graph instead of the kNN graph (an epsilon-ball graph,
    /// a graph learned by DRILL or MPME): one precision weight per edge of `graph`. The
    /// kNN size `k` of the settings is kept for out-of-sample projection only.
    ///
    /// # Errors
    /// As [`MeuParams::fit`], a graph on a different number of points, a disconnected
    /// graph, or two connected points at distance zero.
    pub fn fit_graph(&self, y: &DMatrix<f64>, graph: &NeighbourGraph) -> Result<Meu> {
        self.fit_observed(y, Some(graph), &Silent)
    }
}

impl Checked<MeuParams> {
    /// [`MeuParams::fit_observed`] with the parameters checked.
    pub fn fit_observed(
        &self,
        y: &DMatrix<f64>,
        graph: Option<&NeighbourGraph>,
        observer: &dyn Observer,
    ) -> Result<Meu> {
        let graph = match graph {
            Some(g) => {
                self.check_graph(y, g)?;
                g.clone()
            }
            None => self.knn_graph(y, observer)?,
        };
        self.fit_on(y, graph, observer)
    }

    /// The kNN graph of the settings, refusing duplicate points.
    fn knn_graph(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<NeighbourGraph> {
        check_fit_input(y, self.dim, "MEU")?;
        let (nn, graph) = self.graph.build(y, Weighting::Binary, "MEU", observer)?;
        if let Some(&(a, b)) = duplicate_pairs(&nn).first() {
            return Err(Error::DuplicatePoints {
                first: a,
                second: b,
                method:
                    "MEU (a zero distance cannot be matched by a Gaussian field; remove duplicates)"
                        .to_string(),
            });
        }
        Ok(graph)
    }

    /// Checks a given graph against the data.
    fn check_graph(&self, y: &DMatrix<f64>, graph: &NeighbourGraph) -> Result<()> {
        check_fit_input(y, self.dim, "MEU")?;
        if graph.n() != y.nrows() {
            return Err(Error::DimensionMismatch(format!(
                "the graph has {} vertices but the data {} points",
                graph.n(),
                y.nrows()
            )));
        }
        graph.ensure_connected()?;
        if let Some((a, b, _)) = graph
            .edges()
            .into_iter()
            .find(|&(i, j, _)| (y.row(i) - y.row(j)).norm() == 0.0)
        {
            return Err(Error::DuplicatePoints {
                first: a,
                second: b,
                method: "MEU (connected points at distance zero cannot be matched by a \
                         Gaussian field; remove duplicates)"
                    .to_string(),
            });
        }
        Ok(())
    }

    fn fit_on(
        &self,
        y: &DMatrix<f64>,
        graph: NeighbourGraph,
        observer: &dyn Observer,
    ) -> Result<Meu> {
        if !self.solver.sparse_for(y.nrows()) {
            // The dense path holds the precision, its factor and its inverse.
            MemoryLimit::from_env_or_machine()?.check(&Footprint {
                method: "MEU with the dense solver",
                n: y.nrows(),
                bytes: &|m| 24 * (m as u64).pow(2),
                holds: "the dense precision, its Cholesky factor and its inverse".into(),
                alternative: "the sparse solver (--solver sparse or auto)",
            })?;
        }
        let (yc, mean) = unfold_data::centre(y);
        let edges: Vec<(usize, usize)> = graph.edges().iter().map(|&(i, j, _)| (i, j)).collect();
        let field = MeuField::new(&yc, edges, self.gamma).with_solver(self.solver);
        let fit = field.fit_observed(&field.initial(), &self.search, observer)?;
        let lambda = fit.theta;
        let evidence = field.evidence(&lambda)?;
        let laplacian = field.laplacian(&lambda, 0.0);
        let emb = laplacian_embedding(&laplacian, self.gamma, self.dim, self.scaling)?;
        let prec = Precision::Sparse(laplacian.add_to_diagonal(self.gamma));
        let latent_scale = latent_scales(&prec, &emb.coords);
        Ok(Meu {
            edges: field.edges,
            lambda,
            gamma: self.gamma,
            scaling: self.scaling,
            k: self.graph.k,
            eigenvalues: emb.eigenvalues,
            latent_scale,
            evidence,
            report: fit.report,
            convergence: fit.convergence,
            trained: Trained {
                mean,
                train: yc,
                graph,
                coords: emb.coords,
            },
        })
    }
}

/// The MEU Gaussian random field of centred data on a fixed edge set: one parameter
/// `lambda_e >= 0` per edge.
#[derive(Clone, Debug)]
pub struct MeuField {
    n: usize,
    p: usize,
    y: DMatrix<f64>,
    edges: Vec<(usize, usize)>,
    sq_dists: Vec<f64>,
    gamma: f64,
    trace_yy: f64,
    solver: Solver,
    /// The sparse engine, built on the first sparse factorisation.
    engine: EdgeEngine,
}

impl MeuField {
    /// The field of the centred data `y` on the edges `(i, j)`, `i != j`.
    pub fn new(y: &DMatrix<f64>, edges: Vec<(usize, usize)>, gamma: f64) -> Self {
        let sq_dists = edges
            .iter()
            .map(|&(i, j)| (y.row(i) - y.row(j)).norm_squared())
            .collect();
        MeuField {
            n: y.nrows(),
            p: y.ncols(),
            y: y.clone(),
            edges,
            sq_dists,
            gamma,
            trace_yy: y.norm_squared(),
            solver: Solver::Auto,
            engine: EdgeEngine::default(),
        }
    }

    /// The field factorised by `solver` ([`Solver::Auto`] by default).
    pub fn with_solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }

    /// The field's sparse engine ordered by `ordering` ([`SparseOrdering::Auto`] by
    /// default: the cheaper of minimum degree and nested dissection by the points
    /// from [`DISSECTION_MIN_N`](crate::field::grounded::DISSECTION_MIN_N) points on).
    pub fn with_ordering(mut self, ordering: SparseOrdering) -> Self {
        self.engine = EdgeEngine::with_ordering(ordering);
        self
    }

    /// The sparse engine over this field's edges (built once: the pattern does not change
    /// with the multipliers).
    pub fn engine(&self) -> Result<&GroundedLaplacian> {
        self.engine
            .get_over(self.n, &self.edges, self.gamma, Some(&self.y))
    }

    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// Observed squared distances on the edges.
    pub fn sq_dists(&self) -> &[f64] {
        &self.sq_dists
    }

    /// A starting point: `lambda_e = c p / d_e` (short edges pull harder), with `c = (n -
    /// 1) / m` for m edges, the stationary point of the likelihood along this direction
    /// as `gamma -> 0`.
    pub fn initial(&self) -> Vec<f64> {
        let c = (self.n as f64 - 1.0) / self.edges.len().max(1) as f64;
        self.sq_dists
            .iter()
            .map(|&d| c * self.p as f64 / d.max(f64::MIN_POSITIVE))
            .collect()
    }

    /// The weighted Laplacian `L(lambda)` plus `shift I`, sparse.
    pub fn laplacian(&self, lambda: &[f64], shift: f64) -> CsrMatrix {
        Laplacian::new(self.n)
            .shift(shift)
            .sparse(self.weighted_edges(lambda))
    }

    /// The edges `(i, j, lambda_ij)`.
    fn weighted_edges<'a>(
        &'a self,
        lambda: &'a [f64],
    ) -> impl Iterator<Item = (usize, usize, f64)> + Clone + 'a {
        self.edges.iter().zip(lambda).map(|(&(i, j), &l)| (i, j, l))
    }

    /// The dense matrix factorised for the likelihood, `L + gamma I + 11^T / n`: the
    /// constant vector, `L`'s null vector, gets eigenvalue `gamma + 1` instead of `gamma`.
    /// This changes `K` only by a multiple of `11^T`, which cancels in every
    /// `k_ii - 2 k_ij + k_jj`, and it keeps the huge `1 / (n gamma)` constant mode out of
    /// the inverse, whose round-off would otherwise swamp those differences (with `gamma =
    /// 1e-4` the gradient lost five digits). [`MeuField::log_det`] corrects the
    /// determinant; with `gamma = 0` it is the pseudo-determinant of `L` unchanged.
    fn dense_precision(&self, lambda: &[f64]) -> DMatrix<f64> {
        let n = self.n;
        let mut a = DMatrix::from_element(n, n, 1.0 / n as f64);
        Laplacian::new(n)
            .shift(self.gamma)
            .add_to(&mut a, self.weighted_edges(lambda));
        a
    }

    /// `log|L + gamma I|` (the log pseudo-determinant of `L` when `gamma = 0`) from the
    /// factor of [`MeuField::dense_precision`].
    fn log_det(&self, chol: &Cholesky) -> f64 {
        let shift = if self.gamma > 0.0 {
            self.gamma.ln() - self.gamma.ln_1p()
        } else {
            0.0
        };
        chol.log_det() + shift
    }

    /// The log-likelihood terms given `log |L + gamma I|`.
    fn terms(&self, lambda: &[f64], log_det: f64) -> Evidence {
        let (n, p) = (self.n as f64, self.p as f64);
        let dims = if self.gamma > 0.0 { n } else { n - 1.0 };
        let fit: f64 = lambda.iter().zip(&self.sq_dists).map(|(l, d)| l * d).sum();
        Evidence::from_terms(
            EvidenceKind::LogLikelihood,
            vec![
                ("normaliser".into(), -0.5 * dims * p * LOG_TAU),
                ("log_det".into(), 0.5 * p * log_det),
                ("data".into(), -0.5 * self.gamma * self.trace_yy - 0.5 * fit),
            ],
        )
    }

    /// Expected squared distances on the edges under the field,
    /// `<d_ij> = p (k_ii - 2 k_ij + k_jj)` (spec §2.4). At the fitted optimum they equal the
    /// observed ones where `lambda > 0` and do not exceed them where `lambda = 0`.
    pub fn expected_sq_dists(&self, lambda: &[f64]) -> Result<Vec<f64>> {
        let factor = self.factor(lambda)?;
        let traces = self.covariance_traces(&factor, &self.precision_derivatives(lambda)?)?;
        Ok(traces.into_iter().map(|t| self.p as f64 * t).collect())
    }

    fn check_theta(&self, lambda: &[f64]) -> Result<()> {
        if lambda.len() != self.edges.len() {
            return Err(Error::DimensionMismatch(format!(
                "MEU has {} multipliers (one per edge) but {} were given",
                self.edges.len(),
                lambda.len()
            )));
        }
        unfold_core::check_finite(
            &DMatrix::from_column_slice(lambda.len(), 1, lambda),
            "lambda",
        )
    }
}

impl GaussianRandomField for MeuField {
    fn shape(&self) -> (usize, usize) {
        (self.n, self.p)
    }

    fn data(&self) -> &DMatrix<f64> {
        &self.y
    }

    fn n_params(&self) -> usize {
        self.edges.len()
    }

    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![(0.0, f64::INFINITY); self.edges.len()]
    }

    fn precision(&self, lambda: &[f64]) -> Result<Precision> {
        self.check_theta(lambda)?;
        Ok(Precision::Sparse(self.laplacian(lambda, self.gamma)))
    }

    /// `dP/dlambda_e = A_e`, the edge Laplacian of edge `e`.
    fn precision_derivatives(&self, lambda: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        self.check_theta(lambda)?;
        Ok(self
            .edges
            .iter()
            .map(|&(i, j)| PrecisionDerivative::edge(i, j, 1.0))
            .collect())
    }

    /// The factor of `MeuField::dense_precision` (`11^T / n` added, which every edge
    /// Laplacian's entries cancel), with the determinant corrected.
    fn factor(&self, lambda: &[f64]) -> Result<FieldFactor> {
        self.check_theta(lambda)?;
        if self.solver.sparse_for(self.n) {
            self.engine()?;
            return self.engine.factor(
                self.n,
                &self.edges,
                lambda,
                self.gamma,
                "the MEU precision L + gamma I",
            );
        }
        let chol = Cholesky::new(
            &self.dense_precision(lambda),
            "the MEU precision L + gamma I",
        )?;
        let log_det = self.log_det(&chol);
        Ok(FieldFactor::dense(chol, Some(log_det)))
    }

    /// `k_ii + k_jj - 2 k_ij` per edge: on the sparse path read from the slots found once
    /// per graph, otherwise from the covariance's entries.
    fn covariance_traces(
        &self,
        factor: &FieldFactor,
        derivatives: &[PrecisionDerivative],
    ) -> Result<Vec<f64>> {
        let k = factor.covariance()?;
        if let Some(contrasts) = self.engine.contrasts(&k) {
            return Ok(contrasts);
        }
        derivatives.iter().map(|d| k.trace(d)).collect()
    }

    /// The terms from the squared distances: `-(gamma/2) tr(Y Y^T) - 1/2 sum_e lambda_e
    /// d_e`, and `n - 1` dimensions per feature when `gamma = 0`.
    fn log_likelihood_from(&self, lambda: &[f64], factor: &FieldFactor) -> Result<Evidence> {
        Ok(self.terms(lambda, factor.log_det()))
    }

    /// `-1/2 tr(A_e Y Y^T) = -d_e / 2` from the observed squared distances.
    fn data_gradient(&self, _: &[PrecisionDerivative], grad: &mut [f64]) {
        for (g, &d) in grad.iter_mut().zip(&self.sq_dists) {
            *g = -0.5 * d;
        }
    }

    /// `p / d_e`: near the optimum the curvature along `lambda_e` is
    /// `(p/2) (k_ii - 2k_ij + k_jj)^2 = d_e^2 / (2p)` (spec §2.4), so `lambda_e / (p / d_e)`
    /// has about the same curvature for every edge.
    fn param_scale(&self) -> Option<Vec<f64>> {
        Some(
            self.sq_dists
                .iter()
                .map(|&d| self.p as f64 / d.max(f64::MIN_POSITIVE))
                .collect(),
        )
    }
}

/// A fitted MEU.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Meu {
    /// Edges `(i, j)`, `i < j`, of the kNN graph, one multiplier each.
    pub edges: Vec<(usize, usize)>,
    /// Fitted multipliers `lambda_e >= 0`.
    pub lambda: Vec<f64>,
    pub gamma: f64,
    pub scaling: FieldScaling,
    pub k: usize,
    /// Eigenvalues of `H K H` for the embedding axes, descending.
    pub eigenvalues: DVector<f64>,
    /// Maximum-likelihood variance of each coordinate as a draw of the fitted field
    /// (`x_c^T (L + gamma I) x_c / n`), the unit of projected variances.
    pub latent_scale: DVector<f64>,
    /// Exact log-likelihood of the centred training data at the fitted multipliers.
    pub evidence: Evidence,
    /// Evaluations and the final projected gradient of the maximum-likelihood search.
    pub report: FieldFitReport,
    /// How the maximum-likelihood search ended, with the log-likelihood after each
    /// iteration.
    pub convergence: Convergence,
    /// The training points, their mean, the graph and the embedding.
    pub trained: Trained,
}

impl Meu {
    /// The fitted field on the training data (to evaluate the likelihood, its gradient or
    /// the expected squared distances at other multipliers).
    pub fn field(&self) -> MeuField {
        MeuField::new(&self.trained.train, self.edges.clone(), self.gamma)
    }

    /// The fitted Laplacian `L` (without `gamma I`).
    pub fn laplacian(&self) -> CsrMatrix {
        self.field().laplacian(&self.lambda, 0.0)
    }
}

crate::embedding!(Meu, trained);

impl OutOfSample for Meu {
    /// Projects new points. Each new point `*` is joined to its k nearest training points
    /// `N` with its own multipliers `lambda_*`, fitted by maximum likelihood of the joint
    /// field over training and new point with the training multipliers held fixed. The
    /// training points outside `N` integrate out exactly (Schur complement), leaving the
    /// concave (k+1)-point problem of [`NewPointField`]. The point is placed at the
    /// field's conditional mean given the training embedding,
    /// `x_* = sum_j lambda_j x_j / (sum_j lambda_j + gamma)`, with conditional variance
    /// `sigma_c^2 / (sum_j lambda_j + gamma)` per axis ([`Meu::latent_scale`]).
    /// A new point that coincides with a training point takes its coordinates with zero
    /// variance (the limit `lambda -> inf`).
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        check_new_points(y_new, self.trained.train.ncols())?;
        if self.gamma <= 0.0 {
            return Err(Error::invalid(
                "gamma",
                "projection needs the proper field of gamma > 0; refit with gamma = 1e-4",
            ));
        }
        let (m, q) = (y_new.nrows(), self.trained.coords.ncols());
        let mut yc = y_new.clone();
        for (mut col, &mu) in yc.column_iter_mut().zip(self.trained.mean.iter()) {
            col.add_scalar_mut(-mu);
        }
        let nn = knn_query(&self.trained.train, &yc, self.k)?;
        let field = self.field();
        let chol = SparseCholesky::new(
            &field.laplacian(&self.lambda, self.gamma),
            "the MEU precision L + gamma I",
        )?;
        let lambda0 = self.lambda.iter().sum::<f64>() / self.lambda.len().max(1) as f64;
        let mut mean = DMatrix::zeros(m, q);
        let mut covariance = Vec::with_capacity(m);
        for i in 0..m {
            let nbrs = &nn.indices[i];
            let d: Vec<f64> = nn.distances[i].iter().map(|v| v * v).collect();
            if d[0] == 0.0 {
                mean.set_row(i, &self.trained.coords.row(nbrs[0]));
                covariance.push(DMatrix::zeros(q, q));
                continue;
            }
            let k_nn = covariance_block(&chol, nbrs);
            let local = NewPointField::new(&k_nn, d, self.trained.train.ncols(), self.gamma)?;
            let lam = local.fit(&vec![lambda0; nbrs.len()])?;
            let total = lam.iter().sum::<f64>() + self.gamma;
            let edges = nbrs.iter().copied().zip(lam.iter().copied());
            mean.set_row(i, &new_node_mean(&self.trained.coords, edges, self.gamma));
            covariance.push(DMatrix::from_diagonal(&(&self.latent_scale / total)));
        }
        Ok(Projection {
            mean,
            covariance: Some(covariance),
        })
    }
}

/// The k x k block `K_NN` of the training covariance `K = (L + gamma I)^{-1}`.
fn covariance_block(chol: &SparseCholesky, nbrs: &[usize]) -> DMatrix<f64> {
    let mut e = DMatrix::zeros(chol.dim(), nbrs.len());
    for (c, &j) in nbrs.iter().enumerate() {
        e[(j, c)] = 1.0;
    }
    chol.solve_block_in_place(&mut e);
    DMatrix::from_fn(nbrs.len(), nbrs.len(), |a, b| e[(nbrs[a], b)])
}

/// The likelihood of a new point's multipliers `lambda` (k of them, to its neighbours `N`)
/// with the training field fixed. Integrating out the training points outside `N` leaves
/// the precision over `(N, *)`
///
/// ```text
/// Q(lambda) = [ K_NN^{-1} + diag(lambda)   -lambda          ]
///             [ -lambda^T                  sum(lambda) + gamma ]
/// ```
///
/// and, up to terms free of `lambda`, the joint log-likelihood
/// `(p/2) log|Q| - 1/2 sum_j lambda_j d_j` with `d_j` the squared distances from the new
/// point to its neighbours. Its gradient is `(p/2) (e_j - e_*)^T Q^{-1} (e_j - e_*) - d_j/2`.
#[derive(Clone, Debug)]
pub struct NewPointField {
    k_nn_inv: DMatrix<f64>,
    d: Vec<f64>,
    p: usize,
    gamma: f64,
}

impl NewPointField {
    /// The problem for a new point with neighbour covariance block `k_nn` and squared
    /// distances `d` to those neighbours, in data with `p` features.
    pub fn new(k_nn: &DMatrix<f64>, d: Vec<f64>, p: usize, gamma: f64) -> Result<Self> {
        let k_nn_inv = Cholesky::new(k_nn, "the neighbours' training covariance")?.inverse()?;
        Ok(NewPointField {
            k_nn_inv,
            d,
            p,
            gamma,
        })
    }

    fn q(&self, lambda: &[f64]) -> DMatrix<f64> {
        let k = lambda.len();
        let mut q = DMatrix::zeros(k + 1, k + 1);
        q.view_mut((0, 0), (k, k)).copy_from(&self.k_nn_inv);
        for (j, &l) in lambda.iter().enumerate() {
            q[(j, j)] += l;
            q[(j, k)] = -l;
            q[(k, j)] = -l;
        }
        q[(k, k)] = lambda.iter().sum::<f64>() + self.gamma;
        q
    }

    fn value(&self, lambda: &[f64], log_det: f64) -> f64 {
        let fit: f64 = lambda.iter().zip(&self.d).map(|(l, d)| l * d).sum();
        0.5 * self.p as f64 * log_det - 0.5 * fit
    }
}

impl NewPointField {
    /// The log-likelihood up to terms free of `lambda`.
    pub fn log_likelihood(&self, lambda: &[f64]) -> Result<f64> {
        let log_det = Cholesky::new(&self.q(lambda), "the new point's precision")?.log_det();
        Ok(self.value(lambda, log_det))
    }

    /// The log-likelihood (up to terms free of `lambda`) and its gradient written into
    /// `grad`.
    pub fn log_likelihood_gradient(&self, lambda: &[f64], grad: &mut [f64]) -> Result<f64> {
        let chol = Cholesky::new(&self.q(lambda), "the new point's precision")?;
        let inv = chol.inverse()?;
        let s = lambda.len();
        let half_p = 0.5 * self.p as f64;
        for (j, (g, &d)) in grad.iter_mut().zip(&self.d).enumerate() {
            *g = half_p * (inv[(j, j)] - 2.0 * inv[(j, s)] + inv[(s, s)]) - 0.5 * d;
        }
        Ok(self.value(lambda, chol.log_det()))
    }

    /// The maximum-likelihood multipliers `lambda >= 0` from `lambda0`, searched on the
    /// per-feature log-likelihood as [`GaussianRandomField::fit`] does.
    pub fn fit(&self, lambda0: &[f64]) -> Result<Vec<f64>> {
        let search = Search {
            scales: None,
            per: self.p.max(1) as f64,
            lbfgsb: FieldFitOptions::default().lbfgsb(),
            context: "the new point's maximum-likelihood search",
        };
        let bounds = vec![(0.0, f64::INFINITY); self.d.len()];
        let best = maximise(
            |lambda: &[f64], grad: &mut [f64]| self.log_likelihood_gradient(lambda, grad),
            lambda0,
            &bounds,
            &search,
            &unfold_core::Silent,
        )?;
        Ok(best.x)
    }
}

/// MEU in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::{Convergence, EvidenceKind};

    const ABOUT: &str = "maximum entropy unfolding: a field with one precision per kNN edge, fitted by maximum likelihood";

    impl Registered for Meu {
        type Params = MeuParams;

        fn info() -> MethodInfo {
            MethodInfo::new("meu", Family::RandomField, ABOUT)
                .evidence(EvidenceKind::LogLikelihood)
                .projects()
                .takes_graph()
                .distinct_points()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit_observed(&data.y.matrix(), data.graph, observer)
        }
    }

    impl Model for Meu {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            let n = self
                .trained
                .validate(&self.eigenvalues, &self.latent_scale, self.k)?;
            non_negative("gamma", self.gamma)?;
            pairs("edge", self.edges.iter().copied(), n)?;
            ensure(self.edges.iter().all(|&(i, j)| i < j), || {
                "an edge (i, j) does not have i < j".to_string()
            })?;
            length("the multipliers", self.lambda.len(), self.edges.len())?;
            finite("the multipliers", &self.lambda)?;
            ensure(self.lambda.iter().all(|&l| l >= 0.0), || {
                "a multiplier is negative".to_string()
            })
        }

        fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
            Some(self)
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traits::Embedding;
    use crate::PcaParams;
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    use unfold_eval::procrustes;

    fn roll(n: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, 3, |i, j| {
            let t = 1.5 + 3.0 * i as f64 / n as f64;
            let h = ((i * 37) % 11) as f64 / 11.0;
            match j {
                0 => t * t.cos(),
                1 => 2.0 * h + 0.01 * ((i * 13) % 7) as f64,
                _ => t * t.sin(),
            }
        })
    }

    fn fd_check<F: GaussianRandomField>(field: &F, theta: &[f64]) {
        fd_check_fn(
            |t| field.log_likelihood(t).unwrap().value,
            |t, g| {
                field.log_likelihood_gradient(t, g).unwrap();
            },
            theta,
        );
    }

    fn fd_check_fn(
        value: impl Fn(&[f64]) -> f64,
        gradient: impl Fn(&[f64], &mut [f64]),
        theta: &[f64],
    ) {
        let mut g = vec![0.0; theta.len()];
        gradient(theta, &mut g);
        for e in 0..theta.len() {
            let h = 1e-5 * theta[e].abs().max(1e-2);
            let mut tp = theta.to_vec();
            let mut tm = theta.to_vec();
            tp[e] += h;
            tm[e] -= h;
            let fd = (value(&tp) - value(&tm)) / (2.0 * h);
            assert!(
                (fd - g[e]).abs() <= 1e-6 * (1.0 + g[e].abs()),
                "param {e}: analytic {} vs numeric {fd}",
                g[e]
            );
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let (y, _) = unfold_data::centre(&roll(30));
        let edges = vec![
            (0, 1),
            (1, 2),
            (2, 3),
            (0, 5),
            (4, 5),
            (3, 4),
            (6, 7),
            (5, 6),
        ];
        let mut y8 = y.rows(0, 8).into_owned();
        y8.row_mut(7).add_scalar_mut(0.3);
        for gamma in [1e-2, 0.0] {
            let field = MeuField::new(&y8, edges.clone(), gamma);
            let theta: Vec<f64> = (0..edges.len()).map(|e| 0.5 + 0.3 * e as f64).collect();
            fd_check(&field, &theta);
        }
    }

    #[test]
    fn log_likelihood_equals_dense_gaussian_density() {
        let (y, _) = unfold_data::centre(&roll(10));
        let edges: Vec<(usize, usize)> = (0..9).map(|i| (i, i + 1)).chain([(0, 4)]).collect();
        let field = MeuField::new(&y, edges.clone(), 0.2);
        let lambda: Vec<f64> = (0..10).map(|e| 0.4 + 0.1 * e as f64).collect();
        let mut prec = DMatrix::<f64>::identity(10, 10) * 0.2;
        for (&(i, j), &l) in edges.iter().zip(&lambda) {
            prec[(i, i)] += l;
            prec[(j, j)] += l;
            prec[(i, j)] -= l;
            prec[(j, i)] -= l;
        }
        let cov = prec.clone().try_inverse().unwrap();
        let ld = cov
            .clone()
            .cholesky()
            .unwrap()
            .l()
            .diagonal()
            .map(|v| v.ln())
            .sum()
            * 2.0;
        let want: f64 = y
            .column_iter()
            .map(|c| {
                let c = c.into_owned();
                -5.0 * LOG_TAU - 0.5 * ld - 0.5 * (c.transpose() * &prec * &c)[(0, 0)]
            })
            .sum();
        let got = field.log_likelihood(&lambda).unwrap().value;
        assert!((got - want).abs() < 1e-10 * want.abs(), "{got} vs {want}");
    }

    #[test]
    fn fitted_meu_satisfies_kkt_conditions() {
        let y = roll(60);
        let meu = MeuParams::new(2, 5).pgtol(1e-8).fit(&y).unwrap();
        assert!(meu.report.projected_gradient < 1e-6, "{:?}", meu.report);
        let field = meu.field();
        let expected = field.expected_sq_dists(&meu.lambda).unwrap();
        let mut active = 0;
        for ((&l, &e), &d) in meu.lambda.iter().zip(&expected).zip(field.sq_dists()) {
            if l > 1e-6 {
                active += 1;
                assert!((e - d).abs() < 2e-6, "active edge: <d> {e} vs d {d}");
            } else {
                assert!(e <= d + 2e-6, "edge at zero: <d> {e} > d {d}");
            }
        }
        assert!(active > meu.lambda.len() / 2);
    }

    /// On its own kNN graph, `fit_graph` is `fit`; a bigger graph (an epsilon ball that
    /// contains it) nests it, so its maximum is no lower; bad graphs are refused.
    #[test]
    fn fit_graph_on_the_knn_graph_is_fit() {
        let y = roll(60);
        let params = MeuParams::new(2, 6);
        let meu = params.fit(&y).unwrap();
        let again = params.fit_graph(&y, meu.graph().unwrap()).unwrap();
        assert_eq!(again.lambda, meu.lambda);
        assert_eq!(again.evidence.value, meu.evidence.value);
        let radius = meu
            .trained
            .graph
            .edges()
            .iter()
            .map(|&(i, j, _)| (y.row(i) - y.row(j)).norm())
            .fold(0.0, f64::max);
        let ball = NeighbourGraph::epsilon_ball(&y, radius, Weighting::Binary).unwrap();
        assert!(ball.n_edges() > meu.trained.graph.n_edges());
        let bigger = params.fit_graph(&y, &ball).unwrap();
        // Nested models: the kNN optimum is feasible on the ball (zero weight on the extra
        // edges), so the ball's maximum is at least as high.
        let (big, knn) = (bigger.evidence.value, meu.evidence.value);
        assert!(big >= knn - 1e-7 * knn.abs(), "{big} vs {knn}");
        let small =
            NeighbourGraph::epsilon_ball(&y.rows(0, 30).into_owned(), radius, Weighting::Binary)
                .unwrap();
        assert!(matches!(
            params.fit_graph(&y, &small),
            Err(Error::DimensionMismatch(_))
        ));
        let mut dup = y.clone();
        dup.set_row(1, &y.row(0));
        let g = NeighbourGraph::from_knn(
            &unfold_graph::knn(&dup, 6).unwrap(),
            unfold_graph::Symmetrisation::Union,
            Weighting::Binary,
        )
        .unwrap();
        assert!(matches!(
            params.fit_graph(&dup, &g),
            Err(Error::DuplicatePoints { .. })
        ));
    }

    /// The uniform Laplacian `s L_binary + gamma I` on the same graph is inside MEU's
    /// family, so its best scale cannot beat MEU's maximum.
    #[test]
    fn meu_beats_every_uniform_weighting_of_its_graph() {
        let y = roll(60);
        let meu = MeuParams::new(2, 6).fit(&y).unwrap();
        let field = meu.field();
        let uniform = field.laplacian(&vec![1.0; meu.lambda.len()], 0.0);
        let (yc, _) = unfold_data::centre(&y);
        let (s, best_uniform) =
            crate::field::fixed_shape_evidence(&uniform, meu.gamma, &yc, "t").unwrap();
        let direct = field.log_likelihood(&vec![s; meu.lambda.len()]).unwrap();
        assert!((direct.value - best_uniform.value).abs() < 1e-8 * direct.value.abs());
        assert!(meu.evidence.value > best_uniform.value + 1.0);
    }

    /// Data drawn from a field with a complete positive graph, many features: with all
    /// pairs as neighbours every constraint is matched (interior optimum), so
    /// `H K H = H Y Y^T H / p` and MEU is PCA (spec §2.7).
    #[test]
    fn all_pairs_recover_pca() {
        let (n, p) = (12, 5000);
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(7);
        let mut prec = DMatrix::<f64>::identity(n, n) * 0.05;
        for i in 0..n {
            for j in 0..i {
                let l = 0.5 + ((i * 7 + j * 3) % 5) as f64 * 0.2;
                prec[(i, i)] += l;
                prec[(j, j)] += l;
                prec[(i, j)] -= l;
                prec[(j, i)] -= l;
            }
        }
        let l = prec.clone().try_inverse().unwrap().cholesky().unwrap().l();
        let z = DMatrix::from_fn(n, p, |_, _| StandardNormal.sample(&mut rng));
        let y = l * z;
        let meu = MeuParams::new(2, n - 1)
            .pgtol(1e-9)
            .scaling(FieldScaling::Eigenvalue)
            .fit(&y)
            .unwrap();
        let low = meu.lambda.iter().cloned().fold(f64::INFINITY, f64::min);
        assert!(low > 1e-3, "an edge hit the bound: {low} {:?}", meu.report);
        let pca = PcaParams::new(2).fit(&y).unwrap();
        let err = procrustes(pca.coords(), meu.coords()).unwrap();
        assert!(err.error < 1e-8, "Procrustes error {}", err.error);
    }

    #[test]
    fn new_point_problem_is_the_exact_joint_likelihood() {
        // The (k+1)-point likelihood differs from the full (n+1)-point field's joint
        // log-likelihood by a constant in lambda_*.
        let (y, _) = unfold_data::centre(&roll(9));
        let edges: Vec<(usize, usize)> = (0..7).map(|i| (i, i + 1)).chain([(0, 3)]).collect();
        let train_lambda: Vec<f64> = (0..8).map(|e| 0.6 + 0.1 * e as f64).collect();
        let gamma = 0.1;
        let field = MeuField::new(&y.rows(0, 8).into_owned(), edges.clone(), gamma);
        let k = field
            .laplacian(&train_lambda, gamma)
            .to_dense()
            .try_inverse()
            .unwrap();
        let nbrs = [2usize, 5, 6];
        let k_nn = DMatrix::from_fn(3, 3, |a, b| k[(nbrs[a], nbrs[b])]);
        let d: Vec<f64> = nbrs
            .iter()
            .map(|&j| (y.row(8) - y.row(j)).norm_squared())
            .collect();
        let local = NewPointField::new(&k_nn, d, 3, gamma).unwrap();
        fd_check_fn(
            |t| local.log_likelihood(t).unwrap(),
            |t, g| {
                local.log_likelihood_gradient(t, g).unwrap();
            },
            &[0.3, 0.7, 1.1],
        );
        let joint = |lam: &[f64]| {
            let mut e = edges.clone();
            let mut l = train_lambda.clone();
            for (&j, &v) in nbrs.iter().zip(lam) {
                e.push((j, 8));
                l.push(v);
            }
            MeuField::new(&y, e, gamma)
                .log_likelihood(&l)
                .unwrap()
                .value
        };
        let a = [0.3, 0.7, 1.1];
        let b = [1.5, 0.2, 0.9];
        let diff_joint = joint(&a) - joint(&b);
        let diff_local = local.log_likelihood(&a).unwrap() - local.log_likelihood(&b).unwrap();
        assert!(
            (diff_joint - diff_local).abs() < 1e-10,
            "{diff_joint} vs {diff_local}"
        );
    }

    #[test]
    fn projection_of_a_training_neighbourhood_lands_nearby() {
        let y = roll(80);
        let meu = MeuParams::new(2, 6).fit(&y).unwrap();
        let mid = (y.row(10) + y.row(11)) * 0.5;
        let pr = meu.project(&DMatrix::from_rows(&[mid])).unwrap();
        let x = pr.mean.row(0);
        let gap = (meu.coords().row(10) - meu.coords().row(11)).norm();
        assert!((x - meu.coords().row(10)).norm() < 2.0 * gap + 1e-12);
        let cov = &pr.covariance.unwrap()[0];
        assert!(cov[(0, 0)] > 0.0 && cov[(0, 1)] == 0.0);
        let same = meu
            .project(&DMatrix::from_rows(&[y.row(3).into_owned()]))
            .unwrap();
        assert_eq!(same.mean.row(0), meu.coords().row(3));
    }

    /// An observer that asks to stop after two evaluations of the search stops MEU there
    /// with `Error::Interrupted`.
    #[test]
    fn a_stopped_observer_interrupts_the_search() {
        struct StopAfter(std::sync::atomic::AtomicUsize);
        impl Observer for StopAfter {
            fn iteration(&self, _: usize, _: usize, _: &Evidence) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            fn stopped(&self) -> bool {
                self.0.load(std::sync::atomic::Ordering::Relaxed) >= 2
            }
        }
        let stop = StopAfter(Default::default());
        let fit = MeuParams::new(2, 6).fit_observed(&roll(60), None, &stop);
        assert!(matches!(fit, Err(Error::Interrupted)));
        assert_eq!(stop.0.into_inner(), 2);
    }

    #[test]
    fn bad_input_gets_clear_errors() {
        let y = roll(40);
        assert!(matches!(
            MeuParams::new(2, 5).gamma(-1.0).fit(&y),
            Err(Error::InvalidParameter { .. })
        ));
        let mut dup = y.clone();
        let r = dup.row(0).into_owned();
        dup.set_row(1, &r);
        assert!(matches!(
            MeuParams::new(2, 5).fit(&dup),
            Err(Error::DuplicatePoints { .. })
        ));
        let one = y.columns(0, 1).into_owned();
        assert!(MeuParams::new(1, 5).fit(&one).is_err());
        let mut apart = roll(20);
        for i in 10..20 {
            apart[(i, 0)] += 1e3;
        }
        let off = unfold_graph::GraphSpec::knn(3).connect(unfold_graph::Connect::Off);
        assert!(matches!(
            MeuParams::new(2, 3).graph(off).fit(&apart),
            Err(Error::DisconnectedGraph { .. })
        ));
        // By default the halves are joined through their closest pair.
        assert!(MeuParams::new(2, 3).fit(&apart).is_ok());
    }

    /// At n = 1000 both solvers reach the same optimum: multipliers to 1e-6 (relative to
    /// the largest) and embeddings to a Procrustes error of 1e-8.
    #[test]
    fn sparse_and_dense_fits_agree() {
        let y = unfold_data::synthetic::swiss_roll(1000, 0.05, 4)
            .unwrap()
            .points;
        let fit = |solver| {
            MeuParams::new(2, 8)
                .pgtol(1e-8)
                .solver(solver)
                .fit(&y)
                .unwrap()
        };
        let (sparse, dense) = (fit(Solver::Sparse), fit(Solver::Dense));
        let top = dense.lambda.iter().fold(0.0f64, |m, l| m.max(*l));
        let worst = sparse
            .lambda
            .iter()
            .zip(&dense.lambda)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            worst < 1e-6 * top,
            "multipliers differ by {worst} (largest {top})"
        );
        let err = procrustes(dense.coords(), sparse.coords()).unwrap();
        assert!(err.error < 1e-8, "Procrustes error {}", err.error);
        let (es, ed) = (sparse.evidence.value, dense.evidence.value);
        assert!((es - ed).abs() < 1e-9 * ed.abs(), "{es} vs {ed}");
    }

    /// The fit reports its real iterations and one objective value per iteration.
    #[test]
    fn convergence_reports_every_iteration() {
        let meu = MeuParams::new(2, 6).fit(&roll(60)).unwrap();
        let c = &meu.convergence;
        assert!(c.iterations > 0 && c.converged, "{c:?}");
        assert_eq!(c.trace.len(), c.iterations);
        let last = *c.trace.last().unwrap();
        assert!((last - meu.evidence.value).abs() < 1e-9 * last.abs());
    }
}
