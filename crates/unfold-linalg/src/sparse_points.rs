//! Points as sparse rows ([`SparsePoints`]): the canonical compressed sparse row form
//! (columns ascending within a row, none twice), borrowed where it lies (scipy's canonical
//! CSR with 32-bit column indices and float64 values) or owned (a fitted model's training
//! points). It offers what the neighbour methods need without a dense copy: the rows, their
//! squared norms, exact squared distances and dot products of two rows by merging their
//! columns, and a selection of rows.

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use unfold_core::{Error, Order, Result};

/// One sparse row: its column indices (ascending) and values.
pub type SparseRow<'r> = (&'r [i32], &'r [f64]);

/// An `nrows x ncols` matrix of points, one per row, in canonical compressed sparse row
/// form: row `i`'s entries are `values[indptr[i]..indptr[i + 1]]` in the columns
/// `indices[...]`, ascending. Explicit zeros may be stored; they count as absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SparsePoints<'a> {
    nrows: usize,
    ncols: usize,
    indptr: Vec<usize>,
    indices: Cow<'a, [i32]>,
    values: Cow<'a, [f64]>,
}

impl<'a> SparsePoints<'a> {
    /// Checks the arrays: `indptr` of length `nrows + 1`, starting at 0, never decreasing
    /// and ending at the number of values; the columns of every row ascending, none twice,
    /// each below `ncols`; every value finite and of a magnitude unfold computes with
    /// ([`unfold_core::check_point_values`]).
    ///
    /// # Errors
    /// [`Error::Empty`] without rows or columns; [`Error::InvalidParameter`] naming what is
    /// malformed (unsorted or repeated columns: scipy's `sum_duplicates()` makes a matrix
    /// canonical); [`Error::NonFinite`] naming the row and column of a NaN or infinite
    /// value.
    pub fn new(
        nrows: usize,
        ncols: usize,
        indptr: Vec<usize>,
        indices: Cow<'a, [i32]>,
        values: Cow<'a, [f64]>,
    ) -> Result<Self> {
        let points = SparsePoints {
            nrows,
            ncols,
            indptr,
            indices,
            values,
        };
        points.check()?;
        Ok(points)
    }

    /// The checks of [`SparsePoints::new`], for points decoded from a file.
    ///
    /// # Errors
    /// As [`SparsePoints::new`].
    pub fn check(&self) -> Result<()> {
        let bad = |message: String| Error::invalid("sparse points", message);
        let (nrows, ncols, indptr, indices, values) = (
            self.nrows,
            self.ncols,
            &self.indptr,
            &self.indices,
            &self.values,
        );
        if nrows == 0 || ncols == 0 {
            return Err(Error::Empty("the sparse points".to_string()));
        }
        if i32::try_from(ncols).is_err() {
            return Err(bad(format!(
                "{ncols} columns; sparse points have at most {} (32-bit column indices)",
                i32::MAX
            )));
        }
        if indptr.len() != nrows + 1 {
            return Err(bad(format!(
                "indptr has {} entries; {nrows} rows need {}",
                indptr.len(),
                nrows + 1
            )));
        }
        if indices.len() != values.len() {
            return Err(bad(format!(
                "{} column indices for {} values",
                indices.len(),
                values.len()
            )));
        }
        if indptr[0] != 0 || indptr.windows(2).any(|w| w[1] < w[0]) || indptr[nrows] != values.len()
        {
            return Err(bad(format!(
                "indptr must start at 0, never decrease and end at the number of values ({})",
                values.len()
            )));
        }
        let mut largest = 0.0f64;
        for i in 0..nrows {
            let (cols, vals) = (
                &indices[indptr[i]..indptr[i + 1]],
                &values[indptr[i]..indptr[i + 1]],
            );
            let mut previous = -1i64;
            for (&c, &v) in cols.iter().zip(vals) {
                if i64::from(c) <= previous || c as usize >= ncols {
                    return Err(bad(format!(
                        "row {i}'s columns are not ascending, repeated or outside 0..{ncols}; \
                         make the matrix canonical first (scipy: sum_duplicates())"
                    )));
                }
                previous = i64::from(c);
                if !v.is_finite() {
                    return Err(Error::NonFinite {
                        what: "the data".to_string(),
                        row: i,
                        col: c as usize,
                    });
                }
                largest = largest.max(v.abs());
            }
        }
        unfold_core::check_point_values(&[largest], 1, 1, Order::Columns, "the data")
    }

    /// The non-zero entries of a dense matrix, as sparse points.
    ///
    /// # Errors
    /// As [`SparsePoints::new`].
    pub fn from_dense(y: &DMatrix<f64>) -> Result<SparsePoints<'static>> {
        let (n, p) = y.shape();
        let mut indptr = Vec::with_capacity(n + 1);
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        indptr.push(0);
        for i in 0..n {
            for c in 0..p {
                let v = y[(i, c)];
                if v != 0.0 {
                    indices.push(i32::try_from(c).unwrap_or(i32::MAX));
                    values.push(v);
                }
            }
            indptr.push(values.len());
        }
        SparsePoints::new(n, p, indptr, Cow::Owned(indices), Cow::Owned(values))
    }

    /// The number of points and their dimension.
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }

    /// The number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Row `i`: its columns and values.
    #[inline]
    pub fn row(&self, i: usize) -> SparseRow<'_> {
        let range = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[range.clone()], &self.values[range])
    }

    /// The largest number of entries in a row.
    pub fn max_row_nnz(&self) -> usize {
        self.indptr
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// The squared Euclidean norm of every row.
    pub fn sq_norms(&self) -> Vec<f64> {
        (0..self.nrows)
            .map(|i| self.row(i).1.iter().map(|v| v * v).sum())
            .collect()
    }

    /// The bytes the arrays hold.
    pub fn bytes(&self) -> usize {
        8 * self.indptr.len() + 4 * self.indices.len() + 8 * self.values.len()
    }

    /// The dense matrix.
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut y = DMatrix::zeros(self.nrows, self.ncols);
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                y[(i, c as usize)] = v;
            }
        }
        y
    }

    /// The rows `rows`, in that order, as owned points.
    ///
    /// # Panics
    /// A row index out of range.
    pub fn select_rows(&self, rows: &[usize]) -> SparsePoints<'static> {
        let mut indptr = Vec::with_capacity(rows.len() + 1);
        let total: usize = rows.iter().map(|&i| self.row(i).0.len()).sum();
        let (mut indices, mut values) = (Vec::with_capacity(total), Vec::with_capacity(total));
        indptr.push(0);
        for &i in rows {
            let (cols, vals) = self.row(i);
            indices.extend_from_slice(cols);
            values.extend_from_slice(vals);
            indptr.push(values.len());
        }
        SparsePoints {
            nrows: rows.len(),
            ncols: self.ncols,
            indptr,
            indices: Cow::Owned(indices),
            values: Cow::Owned(values),
        }
    }

    /// The points with their arrays owned.
    pub fn into_owned(self) -> SparsePoints<'static> {
        SparsePoints {
            nrows: self.nrows,
            ncols: self.ncols,
            indptr: self.indptr,
            indices: Cow::Owned(self.indices.into_owned()),
            values: Cow::Owned(self.values.into_owned()),
        }
    }
}

/// The exact squared distance between two sparse rows: the sum of `(a_c - b_c)^2` over the
/// union of their columns, in column order.
pub fn sparse_sq_dist((ca, va): SparseRow<'_>, (cb, vb): SparseRow<'_>) -> f64 {
    let (mut s, mut t, mut sum) = (0, 0, 0.0);
    while s < ca.len() || t < cb.len() {
        let d = match (ca.get(s), cb.get(t)) {
            (Some(x), Some(y)) if x == y => {
                s += 1;
                t += 1;
                va[s - 1] - vb[t - 1]
            }
            (Some(x), Some(y)) if x < y => {
                s += 1;
                va[s - 1]
            }
            (Some(_), None) => {
                s += 1;
                va[s - 1]
            }
            _ => {
                t += 1;
                vb[t - 1]
            }
        };
        sum += d * d;
    }
    sum
}

/// The difference `a - b` of two sparse rows, on the union of their columns (ascending).
pub fn sparse_difference((ca, va): SparseRow<'_>, (cb, vb): SparseRow<'_>) -> (Vec<i32>, Vec<f64>) {
    let (mut cols, mut vals) = (Vec::with_capacity(ca.len() + cb.len()), Vec::new());
    let (mut s, mut t) = (0, 0);
    loop {
        let (c, v) = match (ca.get(s), cb.get(t)) {
            (Some(&x), Some(&y)) if x == y => {
                (s, t) = (s + 1, t + 1);
                (x, va[s - 1] - vb[t - 1])
            }
            (Some(&x), Some(&y)) if x < y => {
                s += 1;
                (x, va[s - 1])
            }
            (Some(&x), None) => {
                s += 1;
                (x, va[s - 1])
            }
            (_, Some(&y)) => {
                t += 1;
                (y, -vb[t - 1])
            }
            (None, None) => break,
        };
        cols.push(c);
        vals.push(v);
    }
    (cols, vals)
}

/// The dot product of two sparse rows.
pub fn sparse_dot((ca, va): SparseRow<'_>, (cb, vb): SparseRow<'_>) -> f64 {
    let (mut s, mut t, mut sum) = (0, 0, 0.0);
    while s < ca.len() && t < cb.len() {
        match ca[s].cmp(&cb[t]) {
            std::cmp::Ordering::Less => s += 1,
            std::cmp::Ordering::Greater => t += 1,
            std::cmp::Ordering::Equal => {
                sum += va[s] * vb[t];
                s += 1;
                t += 1;
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> DMatrix<f64> {
        DMatrix::from_row_slice(
            4,
            5,
            &[
                0.0, 1.5, 0.0, -2.0, 0.0, //
                3.0, 0.0, 0.0, 0.0, 0.0, //
                0.0, 0.0, 0.0, 0.0, 0.0, //
                1.0, 1.0, 2.0, 0.0, -1.0,
            ],
        )
    }

    /// Distances, dot products and norms equal the dense ones; rows select and round trip.
    #[test]
    fn matches_the_dense_points() {
        let y = example();
        let s = SparsePoints::from_dense(&y).unwrap();
        assert_eq!(s.shape(), (4, 5));
        assert_eq!(s.nnz(), 7);
        assert_eq!(s.max_row_nnz(), 4);
        assert_eq!(s.to_dense(), y);
        for (i, norm) in s.sq_norms().into_iter().enumerate() {
            assert_eq!(norm, y.row(i).norm_squared());
            for j in 0..4 {
                let d = (y.row(i) - y.row(j)).norm_squared();
                assert_eq!(sparse_sq_dist(s.row(i), s.row(j)), d);
                assert_eq!(sparse_dot(s.row(i), s.row(j)), y.row(i).dot(&y.row(j)));
                let (cols, vals) = sparse_difference(s.row(i), s.row(j));
                let mut diff = DMatrix::zeros(1, 5);
                cols.iter()
                    .zip(&vals)
                    .for_each(|(&c, &v)| diff[c as usize] = v);
                assert_eq!(diff, y.row(i) - y.row(j));
            }
        }
        let picked = s.select_rows(&[3, 0, 3]);
        assert_eq!(picked.to_dense(), y.select_rows([3, 0, 3].iter()));
    }

    /// Unsorted or repeated columns, a bad indptr, NaN and an empty matrix are refused,
    /// each naming what is wrong.
    #[test]
    fn refuses_malformed_arrays() {
        let make = |indptr: Vec<usize>, indices: Vec<i32>, values: Vec<f64>| {
            SparsePoints::new(2, 3, indptr, Cow::Owned(indices), Cow::Owned(values))
        };
        let err = make(vec![0, 2, 2], vec![2, 1], vec![1.0, 1.0]).unwrap_err();
        assert!(err.to_string().contains("sum_duplicates"), "{err}");
        let err = make(vec![0, 2, 2], vec![1, 1], vec![1.0, 1.0]).unwrap_err();
        assert!(err.to_string().contains("repeated"), "{err}");
        let err = make(vec![0, 1, 3], vec![1], vec![1.0]).unwrap_err();
        assert!(err.to_string().contains("indptr"), "{err}");
        let err = make(vec![0, 1, 1], vec![3], vec![1.0]).unwrap_err();
        assert!(err.to_string().contains("outside 0..3"), "{err}");
        let err = make(vec![0, 1, 1], vec![2], vec![f64::NAN]).unwrap_err();
        assert!(
            matches!(err, Error::NonFinite { row: 0, col: 2, .. }),
            "{err}"
        );
        assert!(matches!(
            SparsePoints::new(0, 3, vec![0], Cow::Owned(vec![]), Cow::Owned(vec![])),
            Err(Error::Empty(_))
        ));
    }
}
