//! The points a method is fitted to, as a view of either layout: a column-major matrix
//! (nalgebra's, NumPy's Fortran order) or values row after row (NumPy's C order), so that
//! no caller copies its data into another layout first. Methods that read the view (PCA,
//! DDRTree) fit on it in place; the others take [`Points::matrix`], which borrows a
//! column-major matrix and copies the other layout once, inside the fit.

use faer::MatRef;
use nalgebra::DMatrix;
use std::borrow::Cow;
use unfold_core::{Error, Order, Result};

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
        })
    }

    /// The number of points n and their dimension p.
    pub fn shape(&self) -> (usize, usize) {
        (self.n, self.p)
    }

    /// The points as a faer view, of either layout.
    pub fn view(&self) -> MatRef<'a, f64> {
        match self.order {
            Order::Columns => MatRef::from_column_major_slice(self.values, self.n, self.p),
            Order::Rows => MatRef::from_row_major_slice(self.values, self.n, self.p),
        }
    }

    /// Checks the points for a fit of `method` in `dim` dimensions
    /// ([`crate::traits::check_fit_input`]).
    pub fn check_fit(&self, dim: usize, method: &str) -> Result<()> {
        crate::traits::check_fit_values(self.values, self.shape(), self.order, dim, method)
    }

    /// The points as a column-major matrix: borrowed when they were given as one, else
    /// copied once (rows by [`unfold_linalg::from_rows`], in parallel blocks of columns).
    pub fn matrix(&self) -> Cow<'a, DMatrix<f64>> {
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
            let v = p.view();
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
