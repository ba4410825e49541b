//! Local Gaussian regressions: the factorised precision `L = M M^T` shared by acyclic LLE
//! and generalised LLE (spec `meu_alle_drill.md` §4.2 and §5).
//!
//! Point `i` is regressed on its parents (ALLE) or neighbours (LLE) `N(i)`:
//! `y_i ~ N(sum_j w_ji y_j, m_ii^{-2} I_p)` with weights summing to one,
//! `w_i = C_i^{-1} 1 / (1^T C_i^{-1} 1)` from the (regularised) local Gram matrix
//! `C_i = (y_j - y_i)^T (y_l - y_i)`, and precision `m_ii^2 = p / ||r_i||^2` from the fixed
//! point with the p-dimensional normaliser (spec §4.2), or `m_ii = 1` (standard LLE). Each
//! regression contributes `(p/2) log(m_ii^2 / 2pi) - (m_ii^2 / 2) ||r_i||^2` to the log
//! (pseudo-)likelihood. A point with no parents (the root of an ALLE ordering) is
//! regressed on the zero mean of the centred data.

use crate::field::reconstruction::{cost_matrix, reconstruction_weights};
use crate::grf::{
    field_log_likelihood, FieldScaling, GaussianRandomField, Precision, PrecisionDerivative,
    LOG_TAU,
};
use crate::method::{Interval, Rule};
use crate::traits::Projection;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Evidence, EvidenceKind, Result};
use unfold_graph::knn_query;
use unfold_linalg::CsrMatrix;

/// The default ridge `reg` of the local regressions of ALLE and lle-pl.
pub const DEFAULT_REG: f64 = 1e-3;

/// The parameter `reg` of ALLE and lle-pl: the ridge of the local Gram matrices relative to
/// their trace (needed when k > p).
pub const REG: Rule = Rule::within(
    Interval::NON_NEGATIVE,
    "lle, alle, lle-pl: regulariser of the local Gram matrix, relative to its trace",
);

/// How the per-point precision `m_ii^2` is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PrecisionRule {
    /// Maximum likelihood, `m_ii^2 = p / ||r_i||^2`.
    Estimated,
    /// `m_ii = 1` (standard LLE).
    Unit,
}

/// Fitted local regressions of every point on its parents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalRegressions {
    /// Parents (regressors) of each point.
    pub parents: Vec<Vec<usize>>,
    /// Weights `w_ji` of each point's parents, summing to one (empty for a root).
    pub weights: Vec<Vec<f64>>,
    /// Squared residual norms `||r_i||^2`.
    pub sq_residuals: Vec<f64>,
    /// Precisions `m_ii^2`.
    pub precisions: Vec<f64>,
}

impl LocalRegressions {
    /// The local regressions of `n` points: parents below `n` with one finite weight each, a
    /// finite residual and a finite precision per point.
    pub(crate) fn validate(&self, n: usize) -> Result<()> {
        use crate::method::validate::*;
        let r = self;
        length("the parent lists", r.parents.len(), n)?;
        length("the regression weights", r.weights.len(), n)?;
        length("the residuals", r.sq_residuals.len(), n)?;
        length("the precisions", r.precisions.len(), n)?;
        for (i, (parents, weights)) in r.parents.iter().zip(&r.weights).enumerate() {
            indices("a parent of a point", parents, n)?;
            ensure(weights.len() == parents.len(), || {
                format!(
                    "point {i} has {} parents but {} weights",
                    parents.len(),
                    weights.len()
                )
            })?;
            finite("the regression weights", weights)?;
        }
        finite("the residuals", &r.sq_residuals)?;
        finite("the precisions", &r.precisions)
    }

    /// Fits the regressions of the rows of the centred data `y` on `parents` with the
    /// relative ridge `reg` (see [`crate::Lle`]).
    pub fn fit(
        y: &DMatrix<f64>,
        parents: Vec<Vec<usize>>,
        reg: f64,
        rule: PrecisionRule,
        method: &str,
    ) -> Result<Self> {
        let p = y.ncols() as f64;
        let fitted: Vec<(Vec<f64>, f64)> = (0..y.nrows())
            .into_par_iter()
            .map(|i| {
                let yi = y.row(i).transpose();
                let w = if parents[i].is_empty() {
                    Vec::new()
                } else {
                    reconstruction_weights(y, &yi, &parents[i], reg, i)?
                };
                Ok((w.clone(), residual(y, &yi, &parents[i], &w).norm_squared()))
            })
            .collect::<Result<_>>()?;
        let (weights, sq_residuals): (Vec<_>, Vec<_>) = fitted.into_iter().unzip();
        let precisions = match rule {
            PrecisionRule::Unit => vec![1.0; y.nrows()],
            PrecisionRule::Estimated => sq_residuals
                .iter()
                .enumerate()
                .map(|(i, &r2)| {
                    if r2 > 0.0 {
                        Ok(p / r2)
                    } else {
                        Err(Error::numerical(
                            format!("{method}: the regression of point {i}"),
                            "its parents reproduce it exactly, so its precision is infinite; \
                             remove duplicate points or use reg > 0",
                        ))
                    }
                })
                .collect::<Result<_>>()?,
        };
        Ok(LocalRegressions {
            parents,
            weights,
            sq_residuals,
            precisions,
        })
    }

    /// The terms of `sum_i [(p/2) log(m_ii^2 / 2pi) - (m_ii^2/2) ||r_i||^2]`:
    /// `normaliser`, `log_det` (`(p/2) sum log m_ii^2`) and `data`.
    pub fn terms(&self, p: usize) -> Vec<(String, f64)> {
        let p = p as f64;
        let n = self.precisions.len() as f64;
        let log_det: f64 = self.precisions.iter().map(|m| m.ln()).sum();
        let data: f64 = self
            .precisions
            .iter()
            .zip(&self.sq_residuals)
            .map(|(m, r)| m * r)
            .sum();
        vec![
            ("normaliser".into(), -0.5 * n * p * LOG_TAU),
            ("log_det".into(), 0.5 * p * log_det),
            ("data".into(), -0.5 * data),
        ]
    }

    /// `M M^T = sum_i m_ii^2 (e_i - w_i)(e_i - w_i)^T`. With `roots = false` the points
    /// without parents are left out (their `m_ii` set to 0), which gives the Laplacian-form
    /// matrix (`L 1 = 0`) of the embedding; with `roots = true` it is the precision whose
    /// Gaussian density is the product of the regressions.
    pub fn precision_matrix(&self, roots: bool) -> CsrMatrix {
        let scale: Vec<f64> = self
            .precisions
            .iter()
            .zip(&self.parents)
            .map(|(&m, par)| if par.is_empty() && !roots { 0.0 } else { m })
            .collect();
        cost_matrix(&self.parents, &self.weights, Some(&scale))
    }
}

/// `r = y_i - sum_j w_j y_j`.
fn residual(y: &DMatrix<f64>, yi: &DVector<f64>, parents: &[usize], w: &[f64]) -> DVector<f64> {
    let mut r = yi.clone();
    for (&j, &wj) in parents.iter().zip(w) {
        r -= y.row(j).transpose() * wj;
    }
    r
}

/// The projection of new points by regression on their `k` nearest training points: a new
/// point comes first in the ordering, so every training point may be its parent and the
/// training likelihood is unchanged. Its weights and precision are fitted as for a
/// training point; it is placed at `sum_j w_j x_j`, the conditional mean of the latent
/// field given its parents, with variance `sigma_c^2 / m_**^2 = sigma_c^2 ||r||^2 / p` per
/// axis (`sigma_c^2` from [`crate::grf::latent_scales`]; with [`PrecisionRule::Unit`],
/// `sigma_c^2`).
pub(crate) struct RegressionProjector<'a> {
    pub train: &'a DMatrix<f64>,
    pub mean: &'a DVector<f64>,
    pub coords: &'a DMatrix<f64>,
    pub latent_scale: &'a DVector<f64>,
    pub k: usize,
    pub reg: f64,
    pub rule: PrecisionRule,
}

impl RegressionProjector<'_> {
    pub fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let mut yc = y_new.clone();
        for (mut col, &mu) in yc.column_iter_mut().zip(self.mean.iter()) {
            col.add_scalar_mut(-mu);
        }
        let nn = knn_query(self.train, &yc, self.k)?;
        let p = self.train.ncols() as f64;
        let q = self.coords.ncols();
        let mut mean = DMatrix::zeros(yc.nrows(), q);
        let mut covariance = Vec::with_capacity(yc.nrows());
        for i in 0..yc.nrows() {
            let yi = yc.row(i).transpose();
            let nbrs = &nn.indices[i];
            let w = reconstruction_weights(self.train, &yi, nbrs, self.reg, i)?;
            for (&j, &wj) in nbrs.iter().zip(&w) {
                let xj = self.coords.row(j) * wj;
                let mut row = mean.row_mut(i);
                row += xj;
            }
            let var = match self.rule {
                PrecisionRule::Estimated => residual(self.train, &yi, nbrs, &w).norm_squared() / p,
                PrecisionRule::Unit => 1.0,
            };
            covariance.push(DMatrix::from_diagonal(&(self.latent_scale * var)));
        }
        Ok(Projection {
            mean,
            covariance: Some(covariance),
        })
    }
}

/// The embedding and latent scales of a fitted set of regressions (roots left out).
pub(crate) fn regression_embedding(
    regs: &LocalRegressions,
    q: usize,
    scaling: FieldScaling,
) -> Result<(crate::grf::FieldEmbedding, DVector<f64>)> {
    let l0 = regs.precision_matrix(false);
    let emb = crate::grf::laplacian_embedding(&l0, 0.0, q, scaling)?;
    let scale = crate::grf::latent_scales(&Precision::Sparse(l0), &emb.coords);
    Ok((emb, scale))
}
/// The field of fitted local regressions: the precision `M M^T` over the centred data, with
/// no free parameters left. Regressions on later points of an order (ALLE) make `M`
/// triangular, so `|M M^T| = prod m_ii^2` and the exact log-likelihood is the product of the
/// regressions (spec §4.1), given here in closed form (more accurate than factorising
/// `M M^T`: they agree to about 1e-10 relative on a Swiss roll). On the ordinary cyclic kNN
/// lists (lle-pl) that product is the pseudo-likelihood (spec §2.7), which
/// [`GaussianRandomField::pseudo_log_likelihood`] gives in place of the trait's product of
/// full conditionals (the diagonal of `M M^T` is not `m_ii^2`); the exact likelihood is
/// then the field's, by factorising `M M^T`.
pub struct RegressionField<'a> {
    pub regs: &'a LocalRegressions,
    /// The centred data.
    pub y: &'a DMatrix<f64>,
    /// Whether the regressions follow an order (each point's parents come later).
    pub acyclic: bool,
}

impl GaussianRandomField for RegressionField<'_> {
    fn data(&self) -> &DMatrix<f64> {
        self.y
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    fn precision(&self, _: &[f64]) -> Result<Precision> {
        Ok(Precision::Sparse(self.regs.precision_matrix(true)))
    }
    fn precision_derivatives(&self, _: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        Ok(Vec::new())
    }
    /// The product of the regressions when they are acyclic, else the field's likelihood.
    fn log_likelihood(&self, theta: &[f64]) -> Result<Evidence> {
        if self.acyclic {
            let terms = self.regs.terms(self.y.ncols());
            Ok(Evidence::from_terms(EvidenceKind::LogLikelihood, terms))
        } else {
            field_log_likelihood(&self.precision(theta)?, self.y, "the regressions' field")
        }
    }
    /// The product of the regressions: `(p/2) sum log m_ii^2 - 1/2 sum m_ii^2 ||r_i||^2`
    /// and the normaliser.
    fn pseudo_log_likelihood(&self, _: &[f64]) -> Result<Evidence> {
        let terms = self.regs.terms(self.y.ncols());
        Ok(Evidence::from_terms(
            EvidenceKind::PseudoLogLikelihood,
            terms,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_refuses_bad_regressions() {
        let r = LocalRegressions {
            parents: vec![vec![1], vec![]],
            weights: vec![vec![1.0], vec![]],
            sq_residuals: vec![0.5, 0.5],
            precisions: vec![1.0, 1.0],
        };
        assert!(r.validate(2).is_ok());
        let mut bad = r.clone();
        bad.parents[0] = vec![2];
        assert!(bad.validate(2).is_err());
        let mut bad = r;
        bad.weights[0] = vec![1.0, 0.0];
        let msg = bad.validate(2).unwrap_err().to_string();
        assert!(msg.contains("point 0 has 1 parents but 2 weights"), "{msg}");
    }
}
