//! The points a method is fitted to, as a view of either dense layout: a column-major
//! matrix (nalgebra's, NumPy's Fortran order) or values row after row (NumPy's C order),
//! so that no caller copies its data into another layout first; or as sparse rows
//! ([`SparsePoints`]). Methods that read the view (PCA, DDRTree) fit on it in place; the
//! neighbour methods that take sparse points ([`crate::method::MethodInfo::sparse_points`])
//! read them as they are; the others take [`Points::matrix`], which borrows a column-major
//! matrix and copies the other layouts once, inside the fit. The registry densifies sparse
//! points for a method that does not take them, within the memory limit, before the
//! method sees them.

use faer::MatRef;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use unfold_core::{Error, Order, Result};
use unfold_graph::{Knn, PointRows};
use unfold_linalg::SparsePoints;

/// An n x p matrix of points (one per row), viewed where it lies.
#[derive(Clone, Copy, Debug)]
pub struct Points<'a> {
    values: &'a [f64],
    n: usize,
    p: usize,
    order: Order,
    /// The matrix itself when the points were given as one, so that
    /// [`Points::matrix`] borrows it.
    matrix: Option<&'a DMatrix<f64>>,
    /// The points when they were given as sparse rows (`values` is then empty).
    sparse: Option<&'a SparsePoints<'a>>,
}

impl<'a> Points<'a> {
    /// The n x p points whose values `values` holds in `order`.
    ///
    /// # Errors
    /// `values` does not hold n p values.
    pub fn new(values: &'a [f64], n: usize, p: usize, order: Order) -> Result<Self> {
        if n.checked_mul(p) != Some(values.len()) {
            return Err(Error::DimensionMismatch(format!(
                "{} values for {n} points in {p} dimensions",
                values.len()
            )));
        }
        Ok(Points {
            values,
            n,
            p,
            order,
            matrix: None,
            sparse: None,
        })
    }

    /// Points given as sparse rows.
    pub fn sparse(y: &'a SparsePoints<'a>) -> Self {
        let (n, p) = y.shape();
        Points {
            values: &[],
            n,
            p,
            order: Order::Rows,
            matrix: None,
            sparse: Some(y),
        }
    }

    /// `f` of the points as [`PointRows`]: sparse rows as they are, dense points as a
    /// column-major matrix ([`Points::matrix`]), for the methods that take either.
    pub fn with_rows<T>(&self, f: impl FnOnce(PointRows<'_>) -> T) -> T {
        match self.sparse {
            Some(sparse) => f(PointRows::Sparse(sparse)),
            None => f(PointRows::Dense(&self.matrix())),
        }
    }

    /// The sparse rows, when the points were given as such.
    pub fn as_sparse(&self) -> Option<&'a SparsePoints<'a>> {
        self.sparse
    }

    /// The number of points n and their dimension p.
    pub fn shape(&self) -> (usize, usize) {
        (self.n, self.p)
    }

    /// The points as a faer view, of either dense layout.
    ///
    /// # Errors
    /// Sparse points, which have none (the registry densifies them for a method that
    /// does not take them).
    pub fn view(&self) -> Result<MatRef<'a, f64>> {
        if self.sparse.is_some() {
            return Err(Error::invalid(
                "points",
                "sparse points have no dense view; densify them first",
            ));
        }
        Ok(match self.order {
            Order::Columns => MatRef::from_column_major_slice(self.values, self.n, self.p),
            Order::Rows => MatRef::from_row_major_slice(self.values, self.n, self.p),
        })
    }

    /// Checks the points for a fit of `method` in `dim` dimensions
    /// ([`crate::traits::check_fit_input`]); sparse points had their values checked when
    /// they were made.
    pub fn check_fit(&self, dim: usize, method: &str) -> Result<()> {
        match self.sparse {
            Some(_) => crate::traits::check_fit_shape(self.n, self.p, dim, method),
            None => {
                crate::traits::check_fit_values(self.values, self.shape(), self.order, dim, method)
            }
        }
    }

    /// The points as a column-major matrix: borrowed when they were given as one, else
    /// copied once (rows by [`unfold_linalg::from_rows`], in parallel blocks of columns).
    /// Sparse points are made dense.
    pub fn matrix(&self) -> Cow<'a, DMatrix<f64>> {
        if let Some(sparse) = self.sparse {
            return Cow::Owned(sparse.to_dense());
        }
        match (self.matrix, self.order) {
            (Some(m), _) => Cow::Borrowed(m),
            (None, Order::Columns) => {
                Cow::Owned(DMatrix::from_column_slice(self.n, self.p, self.values))
            }
            (None, Order::Rows) => {
                let (values, p) = (self.values, self.p);
                Cow::Owned(unfold_linalg::from_rows(self.n, p, |i| {
                    &values[i * p..(i + 1) * p]
                }))
            }
        }
    }
}

impl<'a> From<&'a DMatrix<f64>> for Points<'a> {
    fn from(y: &'a DMatrix<f64>) -> Self {
        Points {
            values: y.as_slice(),
            n: y.nrows(),
            p: y.ncols(),
            order: Order::Columns,
            matrix: Some(y),
            sparse: None,
        }
    }
}

/// The training points a fitted model keeps to find the neighbours of new points: dense,
/// or sparse rows as they were given (model files from format version 5 on; older files
/// hold dense points).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TrainingPoints {
    Dense(DMatrix<f64>),
    Sparse(SparsePoints<'static>),
}

impl TrainingPoints {
    /// A copy of the points `y`.
    pub fn of(y: PointRows<'_>) -> Self {
        match y {
            PointRows::Dense(y) => TrainingPoints::Dense(y.clone()),
            PointRows::Sparse(y) => TrainingPoints::Sparse(y.clone().into_owned()),
        }
    }

    /// The points, for the searches of [`unfold_graph`].
    pub fn rows(&self) -> PointRows<'_> {
        match self {
            TrainingPoints::Dense(y) => PointRows::Dense(y),
            TrainingPoints::Sparse(y) => PointRows::Sparse(y),
        }
    }

    /// The number of points and their dimension.
    pub fn shape(&self) -> (usize, usize) {
        match self {
            TrainingPoints::Dense(y) => y.shape(),
            TrainingPoints::Sparse(y) => y.shape(),
        }
    }

    /// The `k` nearest training points of every new point (a row of `y_new`, checked
    /// first: [`crate::traits::check_new_points`]).
    ///
    /// # Errors
    /// Bad new points; `k` larger than the training points.
    pub fn knn_query(&self, y_new: &DMatrix<f64>, k: usize) -> Result<Knn> {
        crate::traits::check_new_points(y_new, self.shape().1)?;
        match self {
            TrainingPoints::Dense(y) => unfold_graph::knn_query(y, y_new, k),
            TrainingPoints::Sparse(y) => {
                unfold_graph::knn_query_sparse(y, &SparsePoints::from_dense(y_new)?, k)
            }
        }
    }

    /// Checks decoded points: `n` rows of finite values (canonical sparse rows).
    ///
    /// # Errors
    /// What is wrong, naming `what`.
    pub fn validate(&self, what: &str, n: usize) -> Result<()> {
        match self {
            TrainingPoints::Dense(y) => crate::method::validate::matrix(what, y, Some(n), None),
            TrainingPoints::Sparse(y) => {
                y.check()?;
                crate::method::validate::length(what, y.shape().0, n)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both layouts view the same matrix; a column-major matrix is borrowed, rows are
    /// copied; a wrong count is refused.
    #[test]
    fn both_layouts_view_the_same_points() {
        let y = DMatrix::from_fn(4, 3, |i, j| (10 * i + j) as f64);
        let rows: Vec<f64> = y.transpose().as_slice().to_vec();
        let a = Points::from(&y);
        let b = Points::new(&rows, 4, 3, Order::Rows).unwrap();
        let c = Points::new(y.as_slice(), 4, 3, Order::Columns).unwrap();
        for p in [a, b, c] {
            assert_eq!(p.shape(), (4, 3));
            let v = p.view().unwrap();
            assert!((0..4).all(|i| (0..3).all(|j| v[(i, j)] == y[(i, j)])));
            assert_eq!(*p.matrix(), y);
        }
        assert!(matches!(a.matrix(), Cow::Borrowed(_)));
        assert!(matches!(b.matrix(), Cow::Owned(_)));
        assert!(matches!(
            Points::new(&rows, 4, 4, Order::Rows),
            Err(Error::DimensionMismatch(_))
        ));
    }
}
