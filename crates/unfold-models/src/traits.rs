//! The traits every fitted embedding implements.

use faer::MatRef;
use nalgebra::DMatrix;
use unfold_core::{Error, Evidence, Result};
use unfold_graph::NeighbourGraph;

/// A fitted embedding of the training points.
pub trait Embedding {
    /// The embedding, one row per training point (n x q), in input order.
    fn coords(&self) -> &DMatrix<f64>;

    /// The neighbourhood graph the model was fitted on, if it has one.
    fn graph(&self) -> Option<&NeighbourGraph> {
        None
    }

    /// The model's labelled probabilistic score ([`Evidence::none`] for methods without one).
    fn evidence(&self) -> Evidence {
        Evidence::none()
    }
}

/// Implements [`Embedding`] for a fitted model with the fields `coords: DMatrix<f64>` and
/// `evidence: Evidence`, and with `graph` also `graph: NeighbourGraph`:
///
/// ```
/// # use nalgebra::DMatrix;
/// # use unfold_core::Evidence;
/// struct Fitted {
///     coords: DMatrix<f64>,
///     evidence: Evidence,
/// }
/// unfold_models::embedding!(Fitted);
/// ```
#[macro_export]
macro_rules! embedding {
    ($model:ty) => {
        impl $crate::Embedding for $model {
            fn coords(&self) -> &$crate::traits::macro_types::DMatrix<f64> {
                &self.coords
            }

            fn evidence(&self) -> $crate::traits::macro_types::Evidence {
                self.evidence.clone()
            }
        }
    };
    ($model:ty, trained) => {
        impl $crate::Embedding for $model {
            fn coords(&self) -> &$crate::traits::macro_types::DMatrix<f64> {
                &self.trained.coords
            }

            fn graph(&self) -> Option<&$crate::traits::macro_types::NeighbourGraph> {
                Some(&self.trained.graph)
            }

            fn evidence(&self) -> $crate::traits::macro_types::Evidence {
                self.evidence.clone()
            }
        }
    };
    ($model:ty, graph) => {
        impl $crate::Embedding for $model {
            fn coords(&self) -> &$crate::traits::macro_types::DMatrix<f64> {
                &self.coords
            }

            fn graph(&self) -> Option<&$crate::traits::macro_types::NeighbourGraph> {
                Some(&self.graph)
            }

            fn evidence(&self) -> $crate::traits::macro_types::Evidence {
                self.evidence.clone()
            }
        }
    };
}

/// The types [`embedding!`] names, reachable from any crate.
#[doc(hidden)]
pub mod macro_types {
    pub use nalgebra::DMatrix;
    pub use unfold_core::Evidence;
    pub use unfold_graph::NeighbourGraph;
}

/// Out-of-sample projection of new points into a fitted embedding.
pub trait OutOfSample: Embedding {
    /// Projects new points (rows of `y_new`, same features as the training data).
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection>;
}

/// Projected positions of new points: the mean (m x q), and a q x q covariance per point
/// where the model defines one.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub mean: DMatrix<f64>,
    pub covariance: Option<Vec<DMatrix<f64>>>,
}

impl Projection {
    /// A projection with positions only.
    pub fn point(mean: DMatrix<f64>) -> Self {
        Projection {
            mean,
            covariance: None,
        }
    }
}

/// Checks new points before projection: finite values of a magnitude unfold computes with
/// ([`unfold_core::check_points`]) and the training feature count.
pub fn check_new_points(y_new: &DMatrix<f64>, p: usize) -> Result<()> {
    unfold_core::check_points(y_new, "the points to project")?;
    if y_new.ncols() != p {
        return Err(Error::DimensionMismatch(format!(
            "the points to project have {} features but the model was fitted on {p}",
            y_new.ncols()
        )));
    }
    Ok(())
}

/// Refuses a fit of `method` on `n` points that holds `matrices` dense n x n matrices of
/// f64 at its peak when they exceed the memory limit (`--max-memory`, `UNFOLD_MAX_MEMORY`
/// or the machine's available memory), before allocating them; `alternative` is what to
/// use instead.
pub(crate) fn check_dense_memory(
    method: &str,
    n: usize,
    matrices: f64,
    alternative: &str,
) -> Result<()> {
    unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
        method,
        n,
        bytes: &|m| (8.0 * matrices * (m as f64) * (m as f64)).min(u64::MAX as f64) as u64,
        holds: format!("{matrices} dense n x n matrices"),
        alternative,
    })
}

/// Refuses a dense copy of sparse `n x p` points that would exceed the memory limit
/// (`--max-memory`, `UNFOLD_MAX_MEMORY` or the machine's available memory), naming the
/// route that needs none: PCA first, which reads sparse points where they lie.
pub fn check_dense_copy(n: usize, p: usize) -> Result<()> {
    let bytes = |m: usize| (m as u64).saturating_mul(p as u64).saturating_mul(8);
    unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
        method: "a dense copy of the sparse input",
        n,
        bytes: &bytes,
        holds: format!("{n} x {p} float64 values"),
        alternative: "reduce the features first by PCA, which reads sparse points without a \
                      dense copy (--preprocess pca:50 on the command line; unfold.PCA, \
                      unfold.tl.pca or scanpy.pp.pca in Python, then use_rep='X_pca'); the \
                      neighbour methods isomap, le and lle also take sparse points as they are",
    })
}

/// Checks training data and latent dimension: finite values of a magnitude unfold computes
/// with ([`unfold_core::check_points`]: squared distances neither overflow nor underflow),
/// at least two points, and `1 <= dim < min(p, n)` (every method here reduces dimension).
pub fn check_fit_input(y: &DMatrix<f64>, dim: usize, method: &str) -> Result<()> {
    check_fit_values(
        y.as_slice(),
        y.shape(),
        unfold_core::Order::Columns,
        dim,
        method,
    )
}

/// [`check_fit_input`] for a method whose embedding comes from an n x n eigenproblem on
/// the points' graph or kernel (Laplacian eigenmaps, LLE, Isomap, MVU, kernel PCA): any
/// `1 <= dim < n`, as many coordinates as the data have features or more, as
/// scikit-learn's spectral methods allow.
pub fn check_fit_points(y: &DMatrix<f64>, dim: usize, method: &str) -> Result<()> {
    unfold_core::check_point_values(
        y.as_slice(),
        y.nrows(),
        y.ncols(),
        unfold_core::Order::Columns,
        "the data",
    )?;
    at_least_two_points(y.nrows(), method)?;
    unfold_core::check_dim(
        dim,
        y.nrows(),
        "there must be more points than latent dimensions",
    )
}

/// [`check_fit_points`] of dense or sparse points (sparse values are checked when the
/// points are made).
pub fn check_fit_rows(y: unfold_graph::PointRows<'_>, dim: usize, method: &str) -> Result<()> {
    match y {
        unfold_graph::PointRows::Dense(y) => check_fit_points(y, dim, method),
        unfold_graph::PointRows::Sparse(y) => {
            let n = y.shape().0;
            at_least_two_points(n, method)?;
            unfold_core::check_dim(dim, n, "there must be more points than latent dimensions")
        }
    }
}

/// Every fit needs two points.
fn at_least_two_points(n: usize, method: &str) -> Result<()> {
    if n < 2 {
        return Err(Error::TooFewPoints {
            what: method.to_string(),
            needed: 2,
            got: n,
            advice: "provide more points".to_string(),
        });
    }
    Ok(())
}

/// [`check_fit_input`] of n x p points given as values in `order`.
pub fn check_fit_values(
    values: &[f64],
    (n, p): (usize, usize),
    order: unfold_core::Order,
    dim: usize,
    method: &str,
) -> Result<()> {
    unfold_core::check_point_values(values, n, p, order, "the data")?;
    check_fit_shape(n, p, dim, method)
}

/// [`check_fit_input`] of the points of a faer view of any layout, read where they lie (a
/// row-major view of a C-order array is not copied): the same checks and errors, a value
/// that is not finite named by the first one in the view's storage order (row after row
/// when its rows are contiguous, else column after column).
pub fn check_fit_view(y: MatRef<'_, f64>, dim: usize, method: &str) -> Result<()> {
    let (n, p) = (y.nrows(), y.ncols());
    if n == 0 || p == 0 {
        return Err(Error::Empty("the data".to_string()));
    }
    // The lines in storage order, as the columns of `lines`.
    let by_rows = y.col_stride() == 1 && y.row_stride() != 1;
    let lines = if by_rows { y.transpose() } else { y };
    let mut largest = 0.0f64;
    for j in 0..lines.ncols() {
        let line = lines.col(j);
        let (line_largest, nan) = match line.try_as_col_major() {
            Some(line) => unfold_core::magnitude(line.as_slice()),
            None => unfold_core::magnitude(&line.iter().copied().collect::<Vec<_>>()),
        };
        if nan || line_largest.is_infinite() {
            let i = (0..lines.nrows())
                .find(|&i| !lines[(i, j)].is_finite())
                .expect("a value that is not finite");
            let (row, col) = if by_rows { (j, i) } else { (i, j) };
            return Err(Error::NonFinite {
                what: "the data".to_string(),
                row,
                col,
            });
        }
        largest = largest.max(line_largest);
    }
    // The magnitude check reads the largest absolute value only.
    unfold_core::check_point_values(&[largest], 1, 1, unfold_core::Order::Columns, "the data")?;
    check_fit_shape(n, p, dim, method)
}

/// The shape half of [`check_fit_input`]: at least two points and `1 <= dim < min(p, n)`.
pub(crate) fn check_fit_shape(n: usize, p: usize, dim: usize, method: &str) -> Result<()> {
    at_least_two_points(n, method)?;
    unfold_core::check_dim(
        dim,
        p,
        &format!("{method} reduces the {p} feature(s) of the data"),
    )?;
    unfold_core::check_dim(dim, n, "there must be more points than latent dimensions")
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_linalg::view::as_faer;

    /// A view of either layout is refused as its matrix is, with the same message.
    #[test]
    fn views_are_checked_as_their_matrix() {
        let base = DMatrix::from_fn(9, 5, |i, j| (i * 5 + j) as f64 * 0.25 - 3.0);
        let with = |i: usize, j: usize, v: f64| {
            let mut y = base.clone();
            y[(i, j)] = v;
            y
        };
        let cases = [
            (base.clone(), 2),
            (base.clone(), 5),
            (base.clone(), 0),
            (base.rows(0, 1).into_owned(), 1),
            (with(3, 2, f64::NAN), 2),
            (with(8, 4, f64::INFINITY), 2),
            (with(0, 1, 1e61), 2),
            (base.map(|v| v * 1e-62), 2),
            (DMatrix::zeros(9, 5), 2),
            (DMatrix::zeros(0, 5), 2),
        ];
        for (y, dim) in cases {
            let want = format!("{:?}", check_fit_input(&y, dim, "X"));
            let rows: Vec<f64> = y.transpose().as_slice().to_vec();
            let row_major = MatRef::from_row_major_slice(&rows, y.nrows(), y.ncols());
            let wide = DMatrix::from_fn(y.nrows() + 3, y.ncols(), |i, j| {
                if i < y.nrows() {
                    y[(i, j)]
                } else {
                    f64::NAN
                }
            });
            let strided = as_faer(&wide).subrows(0, y.nrows());
            for view in [as_faer(&y), row_major, strided, strided.reverse_rows()] {
                let got = format!("{:?}", check_fit_view(view, dim, "X"));
                if view.row_stride() < 0 {
                    assert_eq!(got.starts_with("Ok"), want.starts_with("Ok"), "{want}");
                } else {
                    assert_eq!(got, want);
                }
            }
        }
        // The first bad value in storage order: (0, 1) in the rows, (2, 0) in the columns.
        let y = with(0, 1, f64::NAN)
            .map_with_location(|i, j, v| if (i, j) == (2, 0) { f64::NAN } else { v });
        let rows: Vec<f64> = y.transpose().as_slice().to_vec();
        let row_major = MatRef::from_row_major_slice(&rows, 9, 5);
        let at = |r: Result<()>| match r {
            Err(Error::NonFinite { row, col, .. }) => (row, col),
            other => panic!("{other:?}"),
        };
        assert_eq!(at(check_fit_view(row_major, 2, "X")), (0, 1));
        assert_eq!(at(check_fit_view(as_faer(&y), 2, "X")), (2, 0));
        assert_eq!(at(check_fit_input(&y, 2, "X")), (2, 0));
    }
}
