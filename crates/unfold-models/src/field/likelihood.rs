//! The maximum-likelihood fit of a field built from parameters: the [`GaussianRandomField`]
//! trait, its exact log-likelihood and gradient, and the options and report of its fit.

use super::embedding::{kernel_embedding, FieldEmbedding, FieldScaling};
use super::precision::{
    covariance_traces, FieldFactor, Precision, PrecisionDerivative, Solver, LOG_TAU,
};
use crate::optimise::{maximise, Search};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Result};
use unfold_lbfgsb::LbfgsbOptions;
use unfold_linalg::{spd_inverse, CentredKernel};

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
    /// have a shortcut, [`laplacian_embedding`](crate::field::laplacian_embedding).
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
                observer.step(
                    1,
                    evaluations,
                    &Evidence::new(EvidenceKind::LogLikelihood, value),
                )?;
                Ok(value)
            },
            theta0,
            &self.bounds(),
            &search,
            observer,
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
pub(super) fn gaussian_terms((n, p): (usize, usize), log_det: f64, quadratic: f64) -> Evidence {
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

pub(super) fn check_rows(prec: &Precision, y: &DMatrix<f64>) -> Result<()> {
    if prec.dim() != y.nrows() {
        return Err(Error::DimensionMismatch(format!(
            "the precision is over {} points but the data have {} rows",
            prec.dim(),
            y.nrows()
        )));
    }
    Ok(())
}
