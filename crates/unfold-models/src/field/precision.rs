//! The precision of a field and its factorisation: [`Precision`] (sparse or dense), the
//! derivative along one parameter ([`PrecisionDerivative`]), the factor with the covariance
//! on demand ([`FieldFactor`], [`Covariance`]) and the choice of dense or sparse
//! factorisation ([`Solver`]).

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_linalg::{
    Cholesky, CsrMatrix, SelectedInverse, SparseCholesky, SparseFactor, SparseSymbolic,
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

crate::choice!(Solver { Auto = "auto", Dense = "dense", Sparse = "sparse" });

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

    /// The factor of a grounded Laplacian field ([`GroundedLaplacian`](crate::field::grounded::GroundedLaplacian)) standing
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
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] when the process's interruption flag is set
    /// during a large dense inverse ([`Cholesky::inverse`]) or a selected inversion.
    pub fn covariance(&self) -> Result<Covariance> {
        Ok(match &self.factor {
            Factor::Dense(chol) => Covariance::Dense(chol.inverse()?),
            Factor::Sparse(f) => Covariance::Selected {
                inverse: f.selected_inverse()?,
                ground: None,
            },
            Factor::Grounded { factor, ground } => Covariance::Selected {
                inverse: factor.selected_inverse()?,
                ground: Some(*ground),
            },
        })
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
    let k = factor.covariance()?;
    derivatives.iter().map(|d| k.trace(d)).collect()
}

/// Entries of the covariance `K = P^{-1}` ([`FieldFactor::covariance`]). A grounded
/// field's entries differ from `K`'s by `a_i + a_j + c`, which no derivative with
/// `dP 1 = 0` sees (module [`grounded`](crate::field::grounded)).
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
