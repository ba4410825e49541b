//! Gaussian random fields over data points: the family of Lawrence's unifying view
//! (spec `meu_alle_drill.md` §2.2).
//!
//! The n data points are the nodes of a field; the p features are independent draws of it,
//! `y_{:,j} ~ N(0, P^{-1})`, so with `Y` (n x p)
//!
//! ```text
//! log p(Y) = -(n p / 2) log 2 pi + (p / 2) log |P| - 1/2 tr(P Y Y^T).
//! ```
//!
//! A model of this family supplies the precision `P` and its derivatives
//! ([`GaussianRandomField`]); the trait provides the likelihood, its gradient and the
//! maximum-likelihood fit (through [`crate::optimise::maximise`]). Models fitted by other
//! means report the likelihood of their precision through [`FixedField`]; methods whose
//! precision is fixed up to scale (Laplacian eigenmaps, LLE) through the one-parameter
//! [`ScaledShapeField`] ([`fixed_shape_evidence`]), so every member of the family gets a
//! comparable number. The embedding comes from the
//! principal eigenvectors of the centred covariance `H P^{-1} H` ([`laplacian_embedding`],
//! [`covariance_embedding`]).

pub mod alle;
pub mod drill;
pub mod grounded;
pub mod lle_pl;
pub mod meu;
pub mod regression;

use crate::optimise::{maximise, Search};
use nalgebra::{DMatrix, DVector, RowDVector};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Result};
use unfold_graph::NeighbourGraph;
use unfold_lbfgsb::LbfgsbOptions;
use unfold_linalg::{
    fix_signs, smallest_eigenpairs, spd_inverse, CentredKernel, Cholesky, CsrMatrix,
    SelectedInverse, SparseCholesky, SparseFactor, SparseSymbolic, SymMatrix,
};

/// `log 2 pi`, the per-entry Gaussian normaliser.
pub const LOG_TAU: f64 = 1.837_877_066_409_345_5;

/// A precision matrix over the data points, sparse or dense.
#[derive(Clone, Debug)]
pub enum Precision {
    Sparse(CsrMatrix),
    Dense(DMatrix<f64>),
}

impl Precision {
    /// Number of points n.
    pub fn dim(&self) -> usize {
        match self {
            Precision::Sparse(m) => m.nrows(),
            Precision::Dense(m) => m.nrows(),
        }
    }

    /// `log |P|`, failing with [`Error::NotPositiveDefinite`] when `P` is not positive
    /// definite.
    pub fn log_det(&self, context: &str) -> Result<f64> {
        match self {
            Precision::Sparse(m) => Ok(SparseCholesky::new(m, context)?.log_det()),
            Precision::Dense(m) => Ok(Cholesky::new(m, context)?.log_det()),
        }
    }

    /// `tr(P Y Y^T) = sum_j y_{:,j}^T P y_{:,j}`.
    pub fn quadratic_trace(&self, y: &DMatrix<f64>) -> f64 {
        self.times(y).dot(y)
    }

    /// The product `P Y`.
    pub fn times(&self, y: &DMatrix<f64>) -> DMatrix<f64> {
        match self {
            Precision::Sparse(m) => {
                let mut out = DMatrix::zeros(y.nrows(), y.ncols());
                for (col, mut dst) in y.column_iter().zip(out.column_iter_mut()) {
                    m.matvec(col.as_slice(), dst.as_mut_slice());
                }
                out
            }
            Precision::Dense(m) => m * y,
        }
    }

    /// The diagonal entries `P_ii`.
    pub fn diagonal(&self) -> Vec<f64> {
        match self {
            Precision::Sparse(m) => (0..m.nrows())
                .map(|i| {
                    let (cols, vals) = m.row(i);
                    cols.iter()
                        .zip(vals)
                        .filter(|(&j, _)| j == i)
                        .map(|(_, v)| v)
                        .sum()
                })
                .collect(),
            Precision::Dense(m) => m.diagonal().iter().copied().collect(),
        }
    }
}

/// The derivative `dP/dtheta_e` of a field's precision along one parameter, as entries on
/// the graph's edges and diagonal: `(i, j, value)` with `i <= j`, an off-diagonal entry
/// standing for both `(i, j)` and `(j, i)`. For a weight on the edge `(i, j)` of a
/// Laplacian it is the edge Laplacian `A_ij = (e_i - e_j)(e_i - e_j)^T`
/// ([`PrecisionDerivative::edge`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PrecisionDerivative {
    entries: Vec<(usize, usize, f64)>,
}

impl PrecisionDerivative {
    /// The derivative with these entries (`i <= j`; each unordered pair once).
    pub fn new(entries: Vec<(usize, usize, f64)>) -> Self {
        PrecisionDerivative { entries }
    }

    /// `w A_ij`: `w` on the diagonal entries `i` and `j`, `-w` on the edge.
    pub fn edge(i: usize, j: usize, w: f64) -> Self {
        PrecisionDerivative::edges([(i, j, w)])
    }

    /// `sum w A_ij` over weighted edges `(i, j, w)`: a weighted Laplacian's derivative
    /// (diagonal entries repeat once per edge; [`PrecisionDerivative::trace_with`] sums
    /// them).
    pub fn edges(edges: impl IntoIterator<Item = (usize, usize, f64)>) -> Self {
        let entries = edges
            .into_iter()
            .flat_map(|(i, j, w)| {
                let (i, j) = (i.min(j), i.max(j));
                [(i, i, w), (i, j, -w), (j, j, w)]
            })
            .collect();
        PrecisionDerivative { entries }
    }

    /// The entries `(i, j, value)`, `i <= j`.
    pub fn entries(&self) -> &[(usize, usize, f64)] {
        &self.entries
    }

    /// `tr(dP M)` for a symmetric `M` given by its entries `m(i, j)` on the support.
    pub fn trace_with(&self, mut m: impl FnMut(usize, usize) -> f64) -> f64 {
        self.entries.iter().fold(0.0, |acc, &(i, j, v)| {
            if i == j {
                acc + v * m(i, i)
            } else {
                acc + 2.0 * v * m(i, j)
            }
        })
    }
}

/// How a field factorises its precision: the dense Cholesky factor (whose inverse gives
/// every entry of `K`), the sparse factor with selected inversion (the entries of `K` on the
/// factor's pattern only, `docs/methods/meu.md`), or by the size of the field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Solver {
    /// Sparse from [`AUTO_SPARSE_MIN`] points on (a sparse precision only), dense below.
    #[default]
    Auto,
    /// The dense factor and inverse: `O(n^3)` time, `O(n^2)` memory; the test oracle.
    Dense,
    /// The sparse factor and selected inversion.
    Sparse,
}

/// The number of points from which [`Solver::Auto`] takes the sparse path. The sparse
/// evaluation is already faster at 100 points (bench/results/grf.md); below 300 both take
/// under 3 ms and the dense reference keeps the results at the papers' scale unchanged.
pub const AUTO_SPARSE_MIN: usize = 300;

impl Solver {
    /// Whether a sparse precision over `n` points takes the sparse path.
    pub fn sparse_for(self, n: usize) -> bool {
        match self {
            Solver::Dense => false,
            Solver::Sparse => true,
            Solver::Auto => n >= AUTO_SPARSE_MIN,
        }
    }
}

/// A factorised precision: `log |P|` and the covariance `K = P^{-1}` on demand.
pub struct FieldFactor {
    log_det: f64,
    factor: Factor,
}

enum Factor {
    Dense(Cholesky),
    Sparse(SparseFactor),
    /// The factor of a grounded Laplacian field ([`grounded`]): its inverse differs from
    /// `K` by `a_i + a_j + c`, and the point `ground` has no row.
    Grounded {
        factor: SparseFactor,
        ground: usize,
    },
}

impl FieldFactor {
    /// Factorises `prec` by the `solver`, failing with [`Error::NotPositiveDefinite`] when
    /// it is not positive definite.
    pub fn new(prec: &Precision, solver: Solver, context: &str) -> Result<Self> {
        Ok(match prec {
            Precision::Sparse(m) if solver.sparse_for(m.nrows()) => {
                FieldFactor::sparse(SparseSymbolic::analyse(m, context)?.factorise(m, context)?)
            }
            Precision::Sparse(m) => {
                FieldFactor::dense(Cholesky::new(&m.to_dense(), context)?, None)
            }
            Precision::Dense(m) => FieldFactor::dense(Cholesky::new(m, context)?, None),
        })
    }

    /// The factor of a dense matrix with the log-determinant it stands for (that of the
    /// matrix itself when `None`): a field may factorise a matrix that differs from `P`
    /// by a multiple of `11^T` when every derivative's entries sum to zero (MEU).
    pub fn dense(chol: Cholesky, log_det: Option<f64>) -> Self {
        FieldFactor {
            log_det: log_det.unwrap_or_else(|| chol.log_det()),
            factor: Factor::Dense(chol),
        }
    }

    /// The sparse factor of the precision itself.
    pub fn sparse(factor: SparseFactor) -> Self {
        FieldFactor {
            log_det: factor.log_det(),
            factor: Factor::Sparse(factor),
        }
    }

    /// The factor of a grounded Laplacian field ([`grounded::GroundedLaplacian`]) standing
    /// for `log_det`.
    pub fn grounded(factor: SparseFactor, log_det: f64, ground: usize) -> Self {
        FieldFactor {
            log_det,
            factor: Factor::Grounded { factor, ground },
        }
    }

    /// `log |P|`.
    pub fn log_det(&self) -> f64 {
        self.log_det
    }

    /// The covariance `K = P^{-1}` where the gradient reads it: every entry from the dense
    /// factor, the entries on the factor's pattern from a sparse one (selected inversion).
    pub fn covariance(&self) -> Covariance {
        match &self.factor {
            Factor::Dense(chol) => Covariance::Dense(chol.inverse()),
            Factor::Sparse(f) => Covariance::Selected {
                inverse: f.selected_inverse(),
                ground: None,
            },
            Factor::Grounded { factor, ground } => Covariance::Selected {
                inverse: factor.selected_inverse(),
                ground: Some(*ground),
            },
        }
    }
}

/// `tr(K dP_e)` for every derivative `dP_e`, `K` the covariance of `factor`.
///
/// # Errors
/// As [`Covariance::trace`].
pub fn covariance_traces(
    factor: &FieldFactor,
    derivatives: &[PrecisionDerivative],
) -> Result<Vec<f64>> {
    let k = factor.covariance();
    derivatives.iter().map(|d| k.trace(d)).collect()
}

/// Entries of the covariance `K = P^{-1}` ([`FieldFactor::covariance`]). A grounded
/// field's entries differ from `K`'s by `a_i + a_j + c`, which no derivative with
/// `dP 1 = 0` sees (module [`grounded`]).
pub enum Covariance {
    /// Every entry.
    Dense(DMatrix<f64>),
    /// The entries on the sparse factor's pattern.
    Selected {
        inverse: SelectedInverse,
        ground: Option<usize>,
    },
}

impl Covariance {
    /// `K_ij`, or `None` off the factor's pattern.
    pub fn entry(&self, i: usize, j: usize) -> Option<f64> {
        match self {
            Covariance::Dense(k) => Some(k[(i, j)]),
            Covariance::Selected {
                ground: Some(r), ..
            } if i == *r || j == *r => Some(0.0),
            Covariance::Selected { inverse, .. } => inverse.get(i, j),
        }
    }

    /// The selected inverse behind a sparse covariance, with its grounded point.
    pub fn selected(&self) -> Option<(&SelectedInverse, Option<usize>)> {
        match self {
            Covariance::Dense(_) => None,
            Covariance::Selected { inverse, ground } => Some((inverse, *ground)),
        }
    }

    /// `tr(K dP)` for one derivative of the precision.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the derivative has an entry off the sparse
    /// factor's pattern (a derivative must lie on the precision's pattern).
    pub fn trace(&self, d: &PrecisionDerivative) -> Result<f64> {
        let mut off = None;
        let t = d.trace_with(|i, j| {
            self.entry(i, j).unwrap_or_else(|| {
                off = Some((i, j));
                0.0
            })
        });
        match off {
            None => Ok(t),
            Some((i, j)) => Err(Error::invalid(
                "the field's precision derivatives",
                format!(
                    "entry ({i}, {j}) is off the precision's sparsity pattern, so the sparse \
                     solver cannot read K there; store it in the precision (even as 0) or use \
                     the dense solver"
                ),
            )),
        }
    }
}

/// A Gaussian random field over n points whose precision is built from parameters
/// (spec `meu_alle_drill.md` §2.2).
///
/// A model supplies its data, the bounds of its parameters, the precision `P(theta)` and
/// the derivative of the precision along each parameter ([`PrecisionDerivative`]); the
/// provided methods give the exact log-likelihood with its terms, its gradient
///
/// ```text
/// d log p(Y) / d theta_e = (p/2) tr(K dP_e) - 1/2 tr(dP_e Y Y^T),   K = P^{-1},
/// ```
///
/// (only `K`'s entries on the support of `dP_e` are read), the evidence and the
/// maximum-likelihood [`GaussianRandomField::fit`]. A field with a closed form for a
/// term (MEU's distances, its better-conditioned factor) overrides the hook for it
/// ([`GaussianRandomField::factor`], [`GaussianRandomField::log_likelihood_from`],
/// [`GaussianRandomField::data_gradient`]). The gradient is checked against finite
/// differences in the tests of each field.
pub trait GaussianRandomField {
    /// `(n, p)`: the number of points (nodes of the field) and of independent features
    /// (draws of the field); by default the shape of [`data`].
    ///
    /// [`data`]: GaussianRandomField::data
    fn shape(&self) -> (usize, usize) {
        self.data().shape()
    }
    /// The (centred) data `Y`, n x p.
    fn data(&self) -> &DMatrix<f64>;
    /// `(lower, upper)` bounds per parameter (`f64::INFINITY` where there is none).
    fn bounds(&self) -> Vec<(f64, f64)>;
    /// The precision `P(theta)`.
    fn precision(&self, theta: &[f64]) -> Result<Precision>;
    /// `dP/dtheta_e` at `theta` for every parameter `e`, in order.
    fn precision_derivatives(&self, theta: &[f64]) -> Result<Vec<PrecisionDerivative>>;
    /// A typical magnitude of each parameter, or `None` for all ones. [`fit`] searches over
    /// `theta_e / scale_e`, which equalises the curvature when the scales are chosen well
    /// and can save most of the iterations.
    ///
    /// [`fit`]: GaussianRandomField::fit
    fn param_scale(&self) -> Option<Vec<f64>> {
        None
    }

    /// Number of points (nodes of the field).
    fn n_points(&self) -> usize {
        self.shape().0
    }
    /// Number of independent features (draws of the field).
    fn n_features(&self) -> usize {
        self.shape().1
    }
    /// Number of parameters (by default, one per bound).
    fn n_params(&self) -> usize {
        self.bounds().len()
    }

    /// The factorised precision at `theta` (by default, of [`precision`]).
    ///
    /// [`precision`]: GaussianRandomField::precision
    fn factor(&self, theta: &[f64]) -> Result<FieldFactor> {
        FieldFactor::new(
            &self.precision(theta)?,
            self.solver(),
            "the field's precision",
        )
    }

    /// How [`GaussianRandomField::factor`] factorises the precision ([`Solver::Auto`] by
    /// default).
    fn solver(&self) -> Solver {
        Solver::Auto
    }

    /// The log-likelihood terms at `theta` given the factor there: `normaliser =
    /// -(np/2) log 2pi`, `log_det = (p/2) log|P|` and `data = -1/2 tr(P Y Y^T)`.
    fn log_likelihood_from(&self, theta: &[f64], factor: &FieldFactor) -> Result<Evidence> {
        let y = self.data();
        let quadratic = self.precision(theta)?.quadratic_trace(y);
        Ok(gaussian_terms(y.shape(), factor.log_det(), quadratic))
    }

    /// Writes the data term of the gradient, `-1/2 tr(dP_e Y Y^T)`, into `grad`.
    fn data_gradient(&self, derivatives: &[PrecisionDerivative], grad: &mut [f64]) {
        let y = self.data();
        for (g, d) in grad.iter_mut().zip(derivatives) {
            *g = -0.5 * d.trace_with(|i, j| y.row(i).dot(&y.row(j)));
        }
    }

    /// The exact log-likelihood of the data at `theta`, with its terms.
    fn log_likelihood(&self, theta: &[f64]) -> Result<Evidence> {
        self.log_likelihood_from(theta, &self.factor(theta)?)
    }

    /// The log-likelihood (value only) and its gradient written into `grad`.
    fn log_likelihood_gradient(&self, theta: &[f64], grad: &mut [f64]) -> Result<f64> {
        let factor = self.factor(theta)?;
        let derivatives = self.precision_derivatives(theta)?;
        if derivatives.len() != grad.len() {
            return Err(Error::DimensionMismatch(format!(
                "the field gave {} precision derivatives for {} parameters",
                derivatives.len(),
                grad.len()
            )));
        }
        let traces = self.covariance_traces(&factor, &derivatives)?;
        let half_p = 0.5 * self.n_features() as f64;
        self.data_gradient(&derivatives, grad);
        for (g, t) in grad.iter_mut().zip(traces) {
            *g += half_p * t;
        }
        Ok(self.log_likelihood_from(theta, &factor)?.value)
    }

    /// `tr(K dP_e)` for every derivative, from the factor's covariance entries
    /// ([`covariance_traces`]); a field that knows where its entries sit in a sparse
    /// factor reads them directly (MEU).
    fn covariance_traces(
        &self,
        factor: &FieldFactor,
        derivatives: &[PrecisionDerivative],
    ) -> Result<Vec<f64>> {
        covariance_traces(factor, derivatives)
    }

    /// The field's evidence at `theta`: its exact log-likelihood.
    fn evidence(&self, theta: &[f64]) -> Result<Evidence> {
        self.log_likelihood(theta)
    }

    /// The pseudo-log-likelihood `sum_i log N(y_i | -sum_{j != i} P_ij y_j / P_ii, 1/P_ii)`
    /// (each feature a draw), the product of the field's full conditionals.
    fn pseudo_log_likelihood(&self, theta: &[f64]) -> Result<Evidence> {
        let prec = self.precision(theta)?;
        let y = self.data();
        let (n, p) = (y.nrows(), y.ncols() as f64);
        let py = prec.times(y);
        let (mut log_det, mut data) = (0.0, 0.0);
        for (i, pii) in prec.diagonal().into_iter().enumerate() {
            if pii.is_nan() || pii <= 0.0 {
                return Err(Error::numerical(
                    "the field's pseudo-likelihood",
                    format!("the precision's diagonal entry {i} is {pii}, not positive"),
                ));
            }
            log_det += pii.ln();
            // y_i minus its conditional mean is (P y)_i / P_ii.
            data += py.row(i).norm_squared() / pii;
        }
        Ok(Evidence::from_terms(
            EvidenceKind::PseudoLogLikelihood,
            vec![
                ("normaliser".into(), -0.5 * n as f64 * p * LOG_TAU),
                ("log_det".into(), 0.5 * p * log_det),
                ("data".into(), -0.5 * data),
            ],
        ))
    }

    /// The embedding at `theta`: the top-`q` eigenvectors of the centred covariance
    /// `H P^{-1} H` (spec §2.6). A sparse precision on the sparse path
    /// ([`GaussianRandomField::solver`]) never forms `P^{-1}`: Lanczos applies it by solves
    /// with the sparse factor ([`CentredKernel::from_sparse_precision`]); otherwise the
    /// dense inverse is decomposed. Fields whose precision is a Laplacian plus `gamma I`
    /// have a shortcut, [`laplacian_embedding`].
    fn embedding(&self, theta: &[f64], q: usize, scaling: FieldScaling) -> Result<FieldEmbedding> {
        const WHAT: &str = "the field's precision";
        let ck = match self.precision(theta)? {
            Precision::Sparse(p) if self.solver().sparse_for(p.nrows()) => {
                CentredKernel::from_sparse_precision(&p, q, WHAT)?
            }
            Precision::Sparse(p) => CentredKernel::new(spd_inverse(&p.to_dense(), WHAT)?, q, WHAT)?,
            Precision::Dense(p) => CentredKernel::new(spd_inverse(&p, WHAT)?, q, WHAT)?,
        };
        Ok(kernel_embedding(ck, scaling))
    }

    /// Maximises the log-likelihood over the parameters from `theta0` through
    /// [`crate::optimise::maximise`] (bounds from [`GaussianRandomField::bounds`], scales
    /// from [`GaussianRandomField::param_scale`]). The search runs on the per-feature
    /// log-likelihood `(1/p) log p(Y)` (the paper's KL approximation, §2.3), so that
    /// `pgtol` means the same for any number of features.
    ///
    /// # Errors
    /// The first error the field returned during the search (e.g. a precision that is not
    /// positive definite), or invalid options.
    fn fit(&self, theta0: &[f64], opts: &FieldFitOptions) -> Result<FieldFit> {
        self.fit_observed(theta0, opts, &unfold_core::Silent)
    }

    /// [`GaussianRandomField::fit`], reporting the log-likelihood of every evaluation of
    /// the search to `observer` (as iterations of restart 1: a progress display).
    fn fit_observed(
        &self,
        theta0: &[f64],
        opts: &FieldFitOptions,
        observer: &dyn unfold_core::Observer,
    ) -> Result<FieldFit> {
        let mut evaluations = 0;
        let scale = self.param_scale();
        let search = Search {
            scales: scale.as_deref(),
            per: self.n_features().max(1) as f64,
            lbfgsb: opts.lbfgsb(),
            context: "the maximum-likelihood search",
        };
        let best = maximise(
            |theta: &[f64], grad: &mut [f64]| {
                let value = self.log_likelihood_gradient(theta, grad)?;
                evaluations += 1;
                observer.iteration(
                    1,
                    evaluations,
                    &Evidence::new(EvidenceKind::LogLikelihood, value),
                );
                Ok(value)
            },
            theta0,
            &self.bounds(),
            &search,
        )?;
        Ok(FieldFit {
            theta: best.x,
            report: FieldFitReport {
                evaluations: best.evaluations,
                projected_gradient: best.projected_gradient_norm,
            },
            convergence: best.convergence,
        })
    }
}

/// Options of [`GaussianRandomField::fit`]: the L-BFGS-B stopping rules. `pgtol` applies
/// to the gradient of the per-feature log-likelihood `(1/p) log p(Y)` with respect to the
/// scaled parameters `theta_e / scale_e` ([`GaussianRandomField::param_scale`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldFitOptions {
    /// Stop when the projected gradient's largest entry is at most `pgtol`.
    pub pgtol: f64,
    /// Also stop when the relative change of the log-likelihood is below `factr * eps`
    /// (0 by default: the fit runs to `pgtol`).
    pub factr: f64,
    /// Iteration limit.
    pub max_iterations: usize,
}

impl FieldFitOptions {
    /// The L-BFGS-B options of these stopping rules (evaluations limited to twice the
    /// iterations, at least 10).
    pub fn lbfgsb(&self) -> LbfgsbOptions {
        LbfgsbOptions {
            pgtol: self.pgtol,
            factr: self.factr,
            max_iterations: self.max_iterations,
            max_evaluations: self.max_iterations.saturating_mul(2).max(10),
            ..LbfgsbOptions::default()
        }
    }
}

impl Default for FieldFitOptions {
    fn default() -> Self {
        FieldFitOptions {
            pgtol: 1e-5,
            factr: 0.0,
            max_iterations: 5000,
        }
    }
}

/// The L-BFGS-B details of a maximum-likelihood fit, beyond its [`Convergence`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldFitReport {
    pub evaluations: usize,
    /// Largest entry of the projected gradient at the optimum.
    pub projected_gradient: f64,
}

/// The result of [`GaussianRandomField::fit`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldFit {
    /// The maximum-likelihood parameters.
    pub theta: Vec<f64>,
    /// Evaluations and the final projected gradient.
    pub report: FieldFitReport,
    /// Iterations, stopping rule and the log-likelihood after each iteration.
    pub convergence: Convergence,
}

/// The exact log-likelihood of `y` (n x p) under the field with precision `prec`, with the
/// terms `normaliser = -(np/2) log 2pi`, `log_det = (p/2) log|P|` and
/// `data = -1/2 tr(P Y Y^T)`.
pub fn field_log_likelihood(prec: &Precision, y: &DMatrix<f64>, context: &str) -> Result<Evidence> {
    check_rows(prec, y)?;
    Ok(gaussian_terms(
        y.shape(),
        prec.log_det(context)?,
        prec.quadratic_trace(y),
    ))
}

/// The terms of `log p(Y)` for `(n, p)` data given `log|P|` and `tr(P Y Y^T)`.
fn gaussian_terms((n, p): (usize, usize), log_det: f64, quadratic: f64) -> Evidence {
    let (n, p) = (n as f64, p as f64);
    Evidence::from_terms(
        EvidenceKind::LogLikelihood,
        vec![
            ("normaliser".into(), -0.5 * n * p * LOG_TAU),
            ("log_det".into(), 0.5 * p * log_det),
            ("data".into(), -0.5 * quadratic),
        ],
    )
}

/// A field at a fixed precision, without free parameters: the evidence of a model whose
/// precision was fitted by other means (ALLE's regressions, DRILL's graphical lasso) goes
/// through [`GaussianRandomField::evidence`] like every other field's.
pub struct FixedField<'a> {
    precision: Precision,
    y: &'a DMatrix<f64>,
}

impl<'a> FixedField<'a> {
    /// The field of precision `precision` over the rows of the centred data `y`.
    pub fn new(precision: Precision, y: &'a DMatrix<f64>) -> Result<Self> {
        check_rows(&precision, y)?;
        Ok(FixedField { precision, y })
    }
}

impl GaussianRandomField for FixedField<'_> {
    fn data(&self) -> &DMatrix<f64> {
        self.y
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn precision(&self, _: &[f64]) -> Result<Precision> {
        Ok(self.precision.clone())
    }
    fn precision_derivatives(&self, _: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        Ok(Vec::new())
    }
}

/// The one-parameter field `s S + gamma I` of centred data `y`, where the shape `S` is
/// fixed by a method (Laplacian eigenmaps, LLE: spec §3 and §4.3, "once the parameters of
/// the Laplacian have been set CMDS is being performed") and only the scale `s` is fitted
/// by maximum likelihood, so that every method of the family reports a comparable number.
/// The log-likelihood is concave in `s`; its maximum lies in `[1e-6 s0, s0]`,
/// `s0 = p (n - 1) / tr(S Y Y^T)` (the optimum as `gamma -> 0`, an upper bound of it).
pub struct ScaledShapeField<'a> {
    shape: &'a CsrMatrix,
    gamma: f64,
    y: &'a DMatrix<f64>,
    /// `tr(S Y Y^T)`.
    spread: f64,
    /// The sparse analysis of `s S + gamma I`, whose pattern does not change with `s`.
    analysis: OnceLock<SparseSymbolic>,
}

impl<'a> ScaledShapeField<'a> {
    /// The field `s shape + gamma I` over the rows of `y`.
    ///
    /// # Errors
    /// A shape of the wrong size, `gamma <= 0`, or data without variance under the shape.
    pub fn new(
        shape: &'a CsrMatrix,
        gamma: f64,
        y: &'a DMatrix<f64>,
        context: &str,
    ) -> Result<Self> {
        let n = y.nrows();
        if shape.nrows() != n || !(gamma.is_finite() && gamma > 0.0) {
            return Err(Error::invalid(
                "shape",
                format!("needs an {n} x {n} precision shape and gamma > 0 (got gamma = {gamma})"),
            ));
        }
        let spread = Precision::Sparse(shape.clone()).quadratic_trace(y);
        if !(spread > 0.0 && spread.is_finite()) {
            return Err(Error::numerical(
                context,
                "the data have no variance under this precision, so its scale cannot be fitted",
            ));
        }
        Ok(ScaledShapeField {
            shape,
            gamma,
            y,
            spread,
            analysis: OnceLock::new(),
        })
    }

    /// `s0 = p (n - 1) / tr(S Y Y^T)`, the upper end of the search.
    pub fn upper_scale(&self) -> f64 {
        self.y.ncols() as f64 * (self.y.nrows() as f64 - 1.0) / self.spread
    }
}

impl GaussianRandomField for ScaledShapeField<'_> {
    fn data(&self) -> &DMatrix<f64> {
        self.y
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        let s0 = self.upper_scale();
        vec![(1e-6 * s0, s0)]
    }
    fn precision(&self, s: &[f64]) -> Result<Precision> {
        let scaled = self
            .shape
            .scale_symmetric(&vec![s[0].sqrt(); self.y.nrows()]);
        Ok(Precision::Sparse(scaled.add_to_diagonal(self.gamma)))
    }
    /// `dP/ds = S`.
    fn precision_derivatives(&self, _: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        let mut entries = Vec::with_capacity(self.shape.nnz());
        for i in 0..self.shape.nrows() {
            let (cols, vals) = self.shape.row(i);
            entries.extend(
                cols.iter()
                    .zip(vals)
                    .filter(|(&j, _)| j >= i)
                    .map(|(&j, &v)| (i, j, v)),
            );
        }
        Ok(vec![PrecisionDerivative::new(entries)])
    }
    /// `-1/2 tr(S Y Y^T)`, computed once.
    fn data_gradient(&self, _: &[PrecisionDerivative], grad: &mut [f64]) {
        grad[0] = -0.5 * self.spread;
    }
    fn param_scale(&self) -> Option<Vec<f64>> {
        Some(vec![self.upper_scale()])
    }
    /// On the sparse path, the analysis of the first factorisation serves every scale.
    fn factor(&self, s: &[f64]) -> Result<FieldFactor> {
        const WHAT: &str = "the field's precision";
        let prec = self.precision(s)?;
        match &prec {
            Precision::Sparse(m) if self.solver().sparse_for(m.nrows()) => {
                let analysis = match self.analysis.get() {
                    Some(a) => a,
                    None => {
                        let a = SparseSymbolic::analyse(m, WHAT)?;
                        self.analysis.get_or_init(|| a)
                    }
                };
                Ok(FieldFactor::sparse(analysis.factorise(m, WHAT)?))
            }
            _ => FieldFactor::new(&prec, self.solver(), WHAT),
        }
    }
}

/// The exact log-likelihood of the centred data `y` under the field `s shape + gamma I`
/// with the scale fitted ([`ScaledShapeField`]; its evidence through the field trait).
/// Returns `(s, evidence)`.
///
/// The log-likelihood is concave in `s`; it is maximised by golden-section search on
/// `log s` within the field's bounds `[1e-6 s0, s0]`, each step one sparse Cholesky
/// factorisation of `s S + gamma I`. The trait's gradient would need `tr((s S + gamma
/// I)^{-1} S)`, the diagonal of a dense inverse (O(n^3) per step) until a selected
/// inversion is available; the one-dimensional search needs only the likelihood.
///
/// # Errors
/// As [`ScaledShapeField::new`], or a failed factorisation.
pub fn fixed_shape_evidence(
    shape: &CsrMatrix,
    gamma: f64,
    y: &DMatrix<f64>,
    context: &str,
) -> Result<(f64, Evidence)> {
    let field = ScaledShapeField::new(shape, gamma, y, context)?;
    let at = |log_s: f64| field.log_likelihood(&[log_s.exp()]);
    let (lo, hi) = field.bounds()[0];
    let (mut lo, mut hi) = (lo.ln(), hi.ln());
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
    let (mut fa, mut fb) = (at(a)?.value, at(b)?.value);
    while hi - lo > 1e-10 {
        if fa >= fb {
            hi = b;
            (b, fb) = (a, fa);
            a = hi - ratio * (hi - lo);
            fa = at(a)?.value;
        } else {
            lo = a;
            (a, fa) = (b, fb);
            b = lo + ratio * (hi - lo);
            fb = at(b)?.value;
        }
    }
    let best = 0.5 * (lo + hi);
    Ok((best.exp(), field.evidence(&[best.exp()])?))
}

fn check_rows(prec: &Precision, y: &DMatrix<f64>) -> Result<()> {
    if prec.dim() != y.nrows() {
        return Err(Error::DimensionMismatch(format!(
            "the precision is over {} points but the data have {} rows",
            prec.dim(),
            y.nrows()
        )));
    }
    Ok(())
}

/// How the principal eigenvectors of the centred covariance become coordinates (the paper
/// leaves it open, spec §11 item 9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldScaling {
    /// Each coordinate has unit variance, `X^T X / n = I` (the author's code).
    #[default]
    UnitVariance,
    /// Eigenvectors times the square roots of their eigenvalues of `H K H` (classical MDS).
    Eigenvalue,
}

/// The top-q eigenvectors of the centred covariance and their eigenvalues (descending).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldEmbedding {
    /// Coordinates, n x q, scaled as asked.
    pub coords: DMatrix<f64>,
    /// Eigenvalues of `H K H` for the embedding axes, descending.
    pub eigenvalues: DVector<f64>,
}

fn scale_columns(
    vectors: DMatrix<f64>,
    values: &DVector<f64>,
    scaling: FieldScaling,
) -> DMatrix<f64> {
    let n = vectors.nrows() as f64;
    let mut x = vectors;
    for (mut col, &l) in x.column_iter_mut().zip(values.iter()) {
        match scaling {
            FieldScaling::UnitVariance => col *= n.sqrt(),
            FieldScaling::Eigenvalue => col *= l.sqrt(),
        }
    }
    fix_signs(&mut x);
    x
}

/// The embedding of a field whose precision is `L + gamma I` with `L` a graph Laplacian
/// (`L 1 = 0`): the principal eigenvectors of `H (L + gamma I)^{-1} H` are the eigenvectors
/// of the q smallest eigenvalues `mu` of `L` on the complement of the constant vector,
/// with eigenvalues `1 / (mu + gamma)` (spec §2.6, the sparse shortcut of §10 item 3).
///
/// When the edges with non-zero weight split the points into c > 1 components (MEU can
/// set every multiplier of a point to zero), `L` has c null vectors; those orthogonal to
/// the constant vector have the largest eigenvalue `1 / gamma` of `H K H` and come first,
/// as in the dense computation (component indicators, not a manifold). That needs
/// `gamma > 0`: with the pseudo-inverse the problem has no embedding and fails.
pub fn laplacian_embedding(
    l: &CsrMatrix,
    gamma: f64,
    q: usize,
    scaling: FieldScaling,
) -> Result<FieldEmbedding> {
    let c = laplacian_components(l)?;
    if c > 1 && gamma <= 0.0 {
        return Err(Error::numerical(
            "the field's Laplacian",
            format!("its edges form {c} disconnected components, so the pseudo-inverse (gamma = 0) has no embedding; use gamma > 0 or a larger k"),
        ));
    }
    let want = (q + c).min(l.nrows());
    let eig = smallest_eigenpairs(SymMatrix::Sparse(l), want)?;
    // The first c eigenvectors span the null space; keep its part orthogonal to 1.
    let null = eig.vectors.columns(0, c);
    let ones = DVector::from_element(l.nrows(), 1.0 / (l.nrows() as f64).sqrt());
    let coef = null.tr_mul(&ones);
    let mut basis: Vec<DVector<f64>> = Vec::new();
    for j in 0..c {
        let mut v = DVector::zeros(c);
        v[j] = 1.0;
        v -= &coef * (coef.dot(&v) / coef.norm_squared());
        for b in &basis {
            v -= b * b.dot(&v);
        }
        if v.norm() > 1e-8 {
            let v = v.normalize();
            basis.push(v);
        }
    }
    let mut vectors = DMatrix::zeros(l.nrows(), q);
    let mut mu = DVector::zeros(q);
    for (col, b) in basis.iter().take(q).enumerate() {
        vectors.set_column(col, &(null * b).normalize());
    }
    for col in basis.len().min(q)..q {
        let j = c + col - basis.len();
        if j >= want {
            return Err(Error::DimensionTooLarge {
                dim: q,
                limit: col + 1,
                reason: "the field has fewer non-constant eigenvectors than the latent dimension"
                    .into(),
            });
        }
        vectors.set_column(col, &eig.vectors.column(j));
        mu[col] = eig.values[j];
    }
    let eigenvalues = mu.map(|m| 1.0 / (m.max(0.0) + gamma));
    let coords = scale_columns(vectors, &eigenvalues, scaling);
    Ok(FieldEmbedding {
        coords,
        eigenvalues,
    })
}

/// The number of connected components of the graph of `L`'s non-zero off-diagonal entries.
fn laplacian_components(l: &CsrMatrix) -> Result<usize> {
    let n = l.nrows();
    let mut edges = Vec::new();
    for i in 0..n {
        let (cols, vals) = l.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            if j > i && v != 0.0 {
                edges.push((i, j, 1.0));
            }
        }
    }
    Ok(NeighbourGraph::from_edges(n, &edges)?.components().count)
}

/// The conditional mean of a new node of the Laplacian field `L + gamma I`, joined to the
/// training nodes `j` by edges of weight `w_j`, given the training embedding: the new
/// row of the precision is `(sum_j w_j + gamma, -w_j)`, so `x_* = sum_j w_j x_j / (sum_j w_j +
/// gamma)` (spec `meu_alle_drill.md` §2.6; the projection of MEU and of any field whose
/// precision has the Laplacian form). The terms are added in the order of `edges`.
pub fn new_node_mean(
    coords: &DMatrix<f64>,
    edges: impl IntoIterator<Item = (usize, f64)> + Clone,
    gamma: f64,
) -> RowDVector<f64> {
    let total = edges.clone().into_iter().map(|(_, w)| w).sum::<f64>() + gamma;
    let mut mean = RowDVector::zeros(coords.ncols());
    for (j, w) in edges {
        mean += coords.row(j) * (w / total);
    }
    mean
}

/// The embedding from a dense covariance `K`: the top-q eigenpairs of `H K H` (used when
/// the precision is not a Laplacian, as in DRILL, spec §7).
pub fn covariance_embedding(
    k: DMatrix<f64>,
    q: usize,
    scaling: FieldScaling,
) -> Result<FieldEmbedding> {
    Ok(kernel_embedding(
        CentredKernel::new(k, q, "implied covariance")?,
        scaling,
    ))
}

/// The coordinates of a centred covariance's top eigenpairs, scaled as asked.
fn kernel_embedding(ck: CentredKernel, scaling: FieldScaling) -> FieldEmbedding {
    let coords = scale_columns(ck.vectors, &ck.values, scaling);
    FieldEmbedding {
        coords,
        eigenvalues: ck.values,
    }
}

/// The latent field's scale per embedding axis: `sigma_c^2 = x_c^T P x_c / n`, the
/// maximum-likelihood variance of coordinate column `c` as a draw of the fitted field.
/// Conditional variances of projected points are in these units.
pub fn latent_scales(prec: &Precision, coords: &DMatrix<f64>) -> DVector<f64> {
    let n = coords.nrows() as f64;
    DVector::from_iterator(
        coords.ncols(),
        coords.column_iter().map(|c| {
            prec.quadratic_trace(&DMatrix::from_column_slice(c.len(), 1, c.as_slice())) / n
        }),
    )
}

/// The `scaling` parameter of the field models in the method registry
/// ([`FieldScaling`]).
pub fn scaling_param() -> crate::registry::ParamSpec {
    crate::registry::ParamSpec::choice(
        "scaling",
        "unit",
        &["unit", "eigen"],
        "meu, alle, lle-pl, drill: coordinates with unit variance (the author's code) or \
         scaled by the square roots of the eigenvalues of H K H",
    )
}

/// The registry parameter `solver` of the random fields with a sparse engine.
pub fn solver_param() -> crate::registry::ParamSpec {
    crate::registry::ParamSpec::choice(
        "solver",
        "auto",
        &["auto", "dense", "sparse"],
        "meu, mpme: factorise the field densely (O(n^3), the reference) or sparsely with \
         selected inversion (near-linear for a manifold's kNN graph); auto is sparse from 300 \
         points",
    )
}

/// The [`Solver`] of the `solver` setting.
pub fn solver_setting(s: &crate::registry::Settings) -> Result<Solver> {
    Ok(match s.choice("solver")? {
        "dense" => Solver::Dense,
        "sparse" => Solver::Sparse,
        _ => Solver::Auto,
    })
}

/// The [`FieldScaling`] of the registry's `scaling` setting.
pub fn scaling_setting(s: &crate::registry::Settings) -> Result<FieldScaling> {
    Ok(match s.choice("scaling")? {
        "eigen" => FieldScaling::Eigenvalue,
        _ => FieldScaling::UnitVariance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, p: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, p, |i, j| {
            ((i * 7 + j * 3) as f64 * 0.37).sin() + 0.1 * j as f64
        })
    }

    fn path_laplacian(n: usize, gamma: f64) -> CsrMatrix {
        let edges = (0..n - 1).map(|i| (i, i + 1, 1.0 + 0.1 * i as f64));
        unfold_graph::Laplacian::new(n).shift(gamma).sparse(edges)
    }

    /// Independent dense Gaussian log-density summed over the columns.
    fn dense_log_density(prec: &DMatrix<f64>, y: &DMatrix<f64>) -> f64 {
        let n = y.nrows() as f64;
        let cov = prec.clone().try_inverse().unwrap();
        let chol = cov.clone().cholesky().unwrap();
        let log_det_cov = 2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
        y.column_iter()
            .map(|c| {
                let c = c.into_owned();
                let q = (c.transpose() * prec * &c)[(0, 0)];
                -0.5 * n * LOG_TAU - 0.5 * log_det_cov - 0.5 * q
            })
            .sum()
    }

    #[test]
    fn log_likelihood_equals_dense_density() {
        let y = data(9, 4);
        let l = path_laplacian(9, 0.3);
        let want = dense_log_density(&l.to_dense(), &y);
        for prec in [Precision::Sparse(l.clone()), Precision::Dense(l.to_dense())] {
            let e = field_log_likelihood(&prec, &y, "test").unwrap();
            assert!(
                (e.value - want).abs() < 1e-10 * want.abs(),
                "{} vs {want}",
                e.value
            );
        }
    }

    /// A field on the generic path (no hook overridden): one weight per edge of a path and
    /// one shift of the diagonal, `P = sum_e theta_e A_e + theta_last I`.
    struct PathField(DMatrix<f64>);

    impl GaussianRandomField for PathField {
        fn data(&self) -> &DMatrix<f64> {
            &self.0
        }
        fn bounds(&self) -> Vec<(f64, f64)> {
            vec![(0.0, f64::INFINITY); self.0.nrows()]
        }
        fn precision(&self, t: &[f64]) -> Result<Precision> {
            let n = self.0.nrows();
            let mut trip: Vec<_> = (0..n).map(|i| (i, i, t[n - 1])).collect();
            for (e, &w) in t[..n - 1].iter().enumerate() {
                trip.extend([(e, e, w), (e + 1, e + 1, w), (e, e + 1, -w), (e + 1, e, -w)]);
            }
            Ok(Precision::Sparse(CsrMatrix::from_triplets(n, n, &trip)))
        }
        fn precision_derivatives(&self, _: &[f64]) -> Result<Vec<PrecisionDerivative>> {
            let n = self.0.nrows();
            let mut d: Vec<_> = (0..n - 1)
                .map(|e| PrecisionDerivative::edge(e, e + 1, 1.0))
                .collect();
            d.push(PrecisionDerivative::new(
                (0..n).map(|i| (i, i, 1.0)).collect(),
            ));
            Ok(d)
        }
    }

    fn fd_check<F: GaussianRandomField>(field: &F, theta: &[f64], tol: f64) {
        let mut g = vec![0.0; theta.len()];
        let value = field.log_likelihood_gradient(theta, &mut g).unwrap();
        assert_eq!(value, field.log_likelihood(theta).unwrap().value);
        for e in 0..theta.len() {
            let h = 1e-6 * theta[e].abs().max(1e-3);
            let (mut tp, mut tm) = (theta.to_vec(), theta.to_vec());
            tp[e] += h;
            tm[e] -= h;
            let fd = (field.log_likelihood(&tp).unwrap().value
                - field.log_likelihood(&tm).unwrap().value)
                / (2.0 * h);
            assert!(
                (fd - g[e]).abs() <= tol * (1.0 + g[e].abs()),
                "param {e}: analytic {} vs numeric {fd}",
                g[e]
            );
        }
    }

    #[test]
    fn generic_gradient_matches_finite_differences() {
        let (y, _) = unfold_data::centre(&data(7, 3));
        let field = PathField(y);
        let theta: Vec<f64> = (0..7).map(|e| 0.4 + 0.15 * e as f64).collect();
        fd_check(&field, &theta, 1e-6);
        // The trait's likelihood is the Gaussian density of the precision.
        let prec = field.precision(&theta).unwrap();
        let direct = field_log_likelihood(&prec, field.data(), "t")
            .unwrap()
            .value;
        assert_eq!(field.log_likelihood(&theta).unwrap().value, direct);
    }

    #[test]
    fn scaled_shape_gradient_matches_finite_differences() {
        let (y, _) = unfold_data::centre(&data(9, 2));
        let shape = path_laplacian(9, 0.0);
        let field = ScaledShapeField::new(&shape, 0.05, &y, "t").unwrap();
        fd_check(&field, &[0.7 * field.upper_scale()], 1e-6);
    }

    #[test]
    fn pseudo_likelihood_is_the_product_of_full_conditionals() {
        let (y, _) = unfold_data::centre(&data(6, 2));
        let field = PathField(y.clone());
        let theta = [0.5, 1.0, 1.5, 0.7, 0.9, 0.3];
        let Precision::Sparse(p) = field.precision(&theta).unwrap() else {
            unreachable!()
        };
        let p = p.to_dense();
        let mut want = 0.0;
        for c in 0..y.ncols() {
            for i in 0..6 {
                let mean: f64 = (0..6)
                    .filter(|&j| j != i)
                    .map(|j| -p[(i, j)] * y[(j, c)])
                    .sum::<f64>()
                    / p[(i, i)];
                let r = y[(i, c)] - mean;
                want += -0.5 * LOG_TAU + 0.5 * p[(i, i)].ln() - 0.5 * p[(i, i)] * r * r;
            }
        }
        let got = field.pseudo_log_likelihood(&theta).unwrap();
        assert_eq!(got.kind, EvidenceKind::PseudoLogLikelihood);
        assert!(
            (got.value - want).abs() < 1e-12 * want.abs(),
            "{} vs {want}",
            got.value
        );
    }

    #[test]
    fn fitted_scale_maximises_the_likelihood() {
        let (y, _) = unfold_data::centre(&data(8, 3));
        let shape = path_laplacian(8, 0.0);
        let gamma = 0.05;
        let (s, e) = fixed_shape_evidence(&shape, gamma, &y, "test").unwrap();
        let at = |t: f64| {
            let p = shape.to_dense() * t + DMatrix::identity(8, 8) * gamma;
            field_log_likelihood(&Precision::Dense(p), &y, "t")
                .unwrap()
                .value
        };
        assert!((at(s) - e.value).abs() < 1e-10 * e.value.abs());
        assert!(at(s * 1.001) < e.value && at(s * 0.999) < e.value);
    }

    #[test]
    fn laplacian_embedding_matches_centred_covariance() {
        let n = 12;
        let gamma = 0.05;
        let l = path_laplacian(n, 0.0);
        let a = l.to_dense() + DMatrix::identity(n, n) * gamma;
        let k = a.try_inverse().unwrap();
        let fast = laplacian_embedding(&l, gamma, 2, FieldScaling::Eigenvalue).unwrap();
        let slow = covariance_embedding(k, 2, FieldScaling::Eigenvalue).unwrap();
        assert!((&fast.eigenvalues - &slow.eigenvalues).norm() < 1e-9 * slow.eigenvalues[0]);
        assert!((&fast.coords - &slow.coords).norm() < 1e-8 * slow.coords.norm());
    }

    #[test]
    fn disconnected_field_puts_component_indicators_first() {
        // Two paths of 6 points, no edge between them: the dense H K H has the indicator
        // of the split as its top eigenvector, then the paths' smooth modes.
        let mut t = Vec::new();
        for (a, b) in [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (6, 7),
            (7, 8),
            (8, 9),
            (9, 10),
            (10, 11),
        ] {
            t.extend([(a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)]);
        }
        let l = CsrMatrix::from_triplets(12, 12, &t);
        let gamma = 1e-3;
        let k = (l.to_dense() + DMatrix::identity(12, 12) * gamma)
            .try_inverse()
            .unwrap();
        let fast = laplacian_embedding(&l, gamma, 2, FieldScaling::Eigenvalue).unwrap();
        let slow = covariance_embedding(k, 2, FieldScaling::Eigenvalue).unwrap();
        assert!((&fast.eigenvalues - &slow.eigenvalues).norm() < 1e-8 * slow.eigenvalues[0]);
        let (a, b) = (fast.coords.column(0), slow.coords.column(0));
        let gap = (a - b).norm().min((a + b).norm());
        assert!(gap < 1e-8 * b.norm(), "indicator axes differ by {gap}");
        // The second axis is degenerate (both paths have the same smooth mode), so only
        // the subspace is determined.
        assert!(laplacian_embedding(&l, 0.0, 2, FieldScaling::Eigenvalue).is_err());
    }

    #[test]
    fn mismatched_rows_are_refused() {
        let prec = Precision::Sparse(path_laplacian(5, 1.0));
        assert!(matches!(
            field_log_likelihood(&prec, &data(4, 2), "t"),
            Err(Error::DimensionMismatch(_))
        ));
    }
}
