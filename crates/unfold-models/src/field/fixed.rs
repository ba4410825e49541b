//! Fields without free parameters or with a fixed shape: the evidence of models fitted by
//! other means ([`FixedField`]) and of methods whose precision is fixed up to scale
//! ([`ScaledShapeField`], [`fixed_shape_evidence`]).

use super::likelihood::{check_rows, gaussian_terms, GaussianRandomField};
use super::precision::{FieldFactor, Precision, PrecisionDerivative, Solver};
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::sync::OnceLock;
use unfold_core::{interrupt, Error, Evidence, Result};
use unfold_graph::PointRows;
use unfold_linalg::{sparse_dot, CsrMatrix, SparsePoints, SparseSymbolic};

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
    scaled: ScaledShape<'a>,
    y: &'a DMatrix<f64>,
    /// `tr(S Y Y^T)`.
    spread: f64,
    /// The scales searched, `[1e-6 s0, s0]` ([`scale_range`]).
    range: (f64, f64),
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
        let scaled = ScaledShape::new(shape, gamma, y.nrows())?;
        let spread = Precision::Sparse(shape.clone()).quadratic_trace(y);
        let range = scale_range(y.shape(), spread, context)?;
        Ok(ScaledShapeField {
            scaled,
            y,
            spread,
            range,
        })
    }

    /// `s0 = p (n - 1) / tr(S Y Y^T)`, the upper end of the search.
    pub fn upper_scale(&self) -> f64 {
        self.range.1
    }
}

impl GaussianRandomField for ScaledShapeField<'_> {
    fn data(&self) -> &DMatrix<f64> {
        self.y
    }
    fn bounds(&self) -> Vec<(f64, f64)> {
        vec![self.range]
    }
    fn precision(&self, s: &[f64]) -> Result<Precision> {
        Ok(Precision::Sparse(self.scaled.precision(s[0])))
    }
    /// `dP/ds = S`.
    fn precision_derivatives(&self, _: &[f64]) -> Result<Vec<PrecisionDerivative>> {
        let shape = self.scaled.shape;
        let mut entries = Vec::with_capacity(shape.nnz());
        for i in 0..shape.nrows() {
            let (cols, vals) = shape.row(i);
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
    fn factor(&self, s: &[f64]) -> Result<FieldFactor> {
        self.scaled.factor(s[0], self.solver())
    }
}

/// `s S + gamma I` at every scale `s`, factorised on one symbolic analysis: the pattern
/// does not change with `s`.
struct ScaledShape<'a> {
    shape: &'a CsrMatrix,
    gamma: f64,
    /// The sparse analysis of the first factorisation, for every later one.
    analysis: OnceLock<SparseSymbolic>,
}

impl<'a> ScaledShape<'a> {
    /// `shape` of `n` points and `gamma > 0`.
    fn new(shape: &'a CsrMatrix, gamma: f64, n: usize) -> Result<Self> {
        if shape.nrows() != n || shape.ncols() != n || !(gamma.is_finite() && gamma > 0.0) {
            return Err(Error::invalid(
                "shape",
                format!("needs an {n} x {n} precision shape and gamma > 0 (got gamma = {gamma})"),
            ));
        }
        Ok(ScaledShape {
            shape,
            gamma,
            analysis: OnceLock::new(),
        })
    }

    fn precision(&self, s: f64) -> CsrMatrix {
        self.shape
            .scale_symmetric(&vec![s.sqrt(); self.shape.nrows()])
            .add_to_diagonal(self.gamma)
    }

    /// The factor of `s S + gamma I`; on the sparse path, the analysis of the first
    /// factorisation serves every scale.
    fn factor(&self, s: f64, solver: Solver) -> Result<FieldFactor> {
        const WHAT: &str = "the field's precision";
        let m = self.precision(s);
        if !solver.sparse_for(m.nrows()) {
            return FieldFactor::new(&Precision::Sparse(m), solver, WHAT);
        }
        let analysis = match self.analysis.get() {
            Some(a) => a,
            None => {
                let a = SparseSymbolic::analyse(&m, WHAT)?;
                self.analysis.get_or_init(|| a)
            }
        };
        Ok(FieldFactor::sparse(analysis.factorise(&m, WHAT)?))
    }
}

/// The scales `[1e-6 s0, s0]` that hold the maximum of the likelihood of `n x p` data
/// whose spread under the shape is `spread = tr(S Y Y^T)`, `s0 = p (n - 1) / spread`.
///
/// # Errors
/// Data without variance under the shape (`spread` not positive), named by `context`.
fn scale_range((n, p): (usize, usize), spread: f64, context: &str) -> Result<(f64, f64)> {
    if !(spread > 0.0 && spread.is_finite()) {
        return Err(Error::numerical(
            context,
            "the data have no variance under this precision, so its scale cannot be fitted",
        ));
    }
    let s0 = p as f64 * (n as f64 - 1.0) / spread;
    Ok((1e-6 * s0, s0))
}

/// The exact log-likelihood of the centred data `y` under the field `s shape + gamma I`
/// with the scale fitted ([`ScaledShapeField`]). Returns `(s, evidence)`.
///
/// The data enter the likelihood only through `tr(S Y Y^T)` and `tr(Y Y^T)`
/// ([`fixed_shape_evidence_of`]).
///
/// # Errors
/// As [`ScaledShapeField::new`], or a failed factorisation.
pub fn fixed_shape_evidence(
    shape: &CsrMatrix,
    gamma: f64,
    y: &DMatrix<f64>,
    context: &str,
) -> Result<(f64, Evidence)> {
    check_rows(&Precision::Sparse(shape.clone()), y)?;
    let spread = Precision::Sparse(shape.clone()).quadratic_trace(y);
    fixed_shape_evidence_of(shape, gamma, y.ncols(), (spread, y.norm_squared()), context)
}

/// [`fixed_shape_evidence`] of the data `y` as given (not centred), dense or sparse: dense
/// points are centred, sparse ones centred implicitly ([`centred_traces`]).
///
/// # Errors
/// As [`fixed_shape_evidence_of`].
pub fn fixed_shape_evidence_on(
    shape: &CsrMatrix,
    gamma: f64,
    y: PointRows<'_>,
    context: &str,
) -> Result<(f64, Evidence)> {
    match y {
        PointRows::Dense(y) => {
            let (yc, _) = unfold_data::centre(y);
            fixed_shape_evidence(shape, gamma, &yc, context)
        }
        PointRows::Sparse(y) => {
            if shape.nrows() != y.shape().0 {
                return Err(Error::DimensionMismatch(format!(
                    "a precision of {} points for {} points",
                    shape.nrows(),
                    y.shape().0
                )));
            }
            let traces = centred_traces(shape, y);
            fixed_shape_evidence_of(shape, gamma, y.shape().1, traces, context)
        }
    }
}

/// `(tr(S Yc Yc^T), tr(Yc Yc^T))` of sparse points `Y`, `Yc = Y - 1 m^T` centred by their
/// column means `m`, without forming `Yc`: `sum_ij S_ij (y_i . y_j - a_i - a_j + |m|^2)`
/// with `a_i = y_i . m`, and `sum_i |y_i|^2 - n |m|^2`. (The uncentred sums lose about
/// `log10(tr(Y Y^T) / tr(Yc Yc^T))` digits to cancellation.)
pub fn centred_traces(shape: &CsrMatrix, y: &SparsePoints<'_>) -> (f64, f64) {
    let (n, p) = y.shape();
    let mut mean = vec![0.0; p];
    for i in 0..n {
        let (cols, vals) = y.row(i);
        for (&c, &v) in cols.iter().zip(vals) {
            mean[c as usize] += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= n as f64);
    let m2: f64 = mean.iter().map(|m| m * m).sum();
    let a: Vec<f64> = (0..n)
        .map(|i| {
            let (cols, vals) = y.row(i);
            cols.iter()
                .zip(vals)
                .map(|(&c, &v)| v * mean[c as usize])
                .sum()
        })
        .collect();
    let spread = (0..n)
        .into_par_iter()
        .map(|i| {
            let (cols, vals) = shape.row(i);
            cols.iter()
                .zip(vals)
                .map(|(&j, &s)| s * (sparse_dot(y.row(i), y.row(j)) - a[i] - a[j] + m2))
                .sum::<f64>()
        })
        .sum::<f64>();
    let total = y.sq_norms().iter().sum::<f64>() - n as f64 * m2;
    (spread, total)
}

/// The exact log-likelihood of centred `n x p` data under the field `s shape + gamma I`
/// with the scale fitted, from the data's `(tr(S Y Y^T), tr(Y Y^T))`: `-(np/2) log 2pi +
/// (p/2) log|s S + gamma I| - 1/2 (s tr(S Y Y^T) + gamma tr(Y Y^T))`. Returns
/// `(s, evidence)`.
///
/// The log-likelihood is concave in `s`; it is maximised by golden-section search on
/// `log s` within `[1e-6 s0, s0]`, `s0 = p (n - 1) / tr(S Y Y^T)` (the optimum as `gamma
/// -> 0`, an upper bound of it), each step one sparse Cholesky factorisation of `s S +
/// gamma I` on one symbolic analysis. A gradient would need `tr((s S + gamma I)^{-1} S)`,
/// the diagonal of an inverse; the one-dimensional search needs only the likelihood.
///
/// # Errors
/// A shape that is not square, `gamma <= 0`, data without variance under the shape, or a
/// failed factorisation.
pub fn fixed_shape_evidence_of(
    shape: &CsrMatrix,
    gamma: f64,
    p: usize,
    (spread, total): (f64, f64),
    context: &str,
) -> Result<(f64, Evidence)> {
    let n = shape.nrows();
    let scaled = ScaledShape::new(shape, gamma, n)?;
    let (lo, hi) = scale_range((n, p), spread, context)?;
    // One evaluation (a factorisation) is the unit of work between checks of Ctrl-C.
    let at = |log_s: f64| -> Result<Evidence> {
        interrupt::check()?;
        let s = log_s.exp();
        let factor = scaled.factor(s, Solver::Auto)?;
        Ok(gaussian_terms(
            (n, p),
            factor.log_det(),
            s * spread + gamma * total,
        ))
    };
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
    Ok((best.exp(), at(best)?))
}
