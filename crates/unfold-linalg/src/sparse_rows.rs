//! A sparse data matrix in compressed sparse row form, borrowed where it lies
//! ([`SparseRows`]): scipy's CSR arrays (`indptr`, `indices`, `data`, with 32- or 64-bit
//! indices and 32- or 64-bit values) are read without a copy. It offers what the
//! randomized PCA needs ([`crate::pca::principal_components_sparse`]): the column means and
//! the products `Y z` and `Y^T w` with thin dense matrices, in `O(nnz l)` work and
//! `O((n + p) l)` memory beyond the input.
//!
//! Both products run on fixed blocks of [`BLOCK`] rows in parallel; `Y^T w` sums the
//! blocks' partial products in block order, a few at a time, so the bits do not depend on
//! the number of threads and at most [`PARTIALS`] partial `p x l` products are alive.

use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{Error, Result};

/// Rows per block of the parallel products.
const BLOCK: usize = 4096;
/// Blocks whose partial `Y^T w` products are formed at once.
const PARTIALS: usize = 8;

/// An index type of a CSR array: 32- or 64-bit, signed or not.
pub trait SparseIndex: Copy + Send + Sync {
    /// The index as a position, `None` if it is negative or does not fit.
    fn position(self) -> Option<usize>;
}

/// A value type of a CSR array.
pub trait SparseValue: Copy + Send + Sync {
    /// The value in double precision.
    fn value(self) -> f64;
}

macro_rules! index_types {
    ($($t:ty),*) => {$(
        impl SparseIndex for $t {
            fn position(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
        }
    )*};
}
index_types!(i32, i64, u32, u64, usize);

impl SparseValue for f32 {
    fn value(self) -> f64 {
        f64::from(self)
    }
}

impl SparseValue for f64 {
    fn value(self) -> f64 {
        self
    }
}

/// An `nrows x ncols` matrix in compressed sparse row form: row `i`'s entries are
/// `data[indptr[i]..indptr[i + 1]]` in the columns `indices[...]` (in any order; a column
/// given twice in a row counts as the sum of its entries, as in scipy).
#[derive(Clone, Copy, Debug)]
pub struct SparseRows<'a, I, T> {
    nrows: usize,
    ncols: usize,
    indptr: &'a [I],
    indices: &'a [I],
    data: &'a [T],
}

impl<'a, I: SparseIndex, T: SparseValue> SparseRows<'a, I, T> {
    /// Checks the arrays: `indptr` of length `nrows + 1`, starting at 0, never decreasing
    /// and ending at the number of entries; every column index below `ncols`; every value
    /// finite.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming what is malformed, [`Error::NonFinite`] naming
    /// the row and column of a NaN or infinite value.
    pub fn new(
        nrows: usize,
        ncols: usize,
        indptr: &'a [I],
        indices: &'a [I],
        data: &'a [T],
    ) -> Result<Self> {
        let bad = |message: String| Error::invalid("sparse matrix", message);
        if indptr.len() != nrows + 1 {
            return Err(bad(format!(
                "indptr has {} entries; {nrows} rows need {}",
                indptr.len(),
                nrows + 1
            )));
        }
        if indices.len() != data.len() {
            return Err(bad(format!(
                "{} column indices for {} values",
                indices.len(),
                data.len()
            )));
        }
        let mut previous = 0;
        for (i, &at) in indptr.iter().enumerate() {
            let at = at.position().filter(|&a| a >= previous && a <= data.len());
            match at {
                Some(a) if i > 0 || a == 0 => previous = a,
                _ => {
                    return Err(bad(format!(
                        "indptr[{i}] is not a row start: indptr must start at 0, never \
                         decrease and end at the number of values ({})",
                        data.len()
                    )))
                }
            }
        }
        if previous != data.len() {
            return Err(bad(format!(
                "indptr ends at {previous} but there are {} values",
                data.len()
            )));
        }
        let rows = SparseRows {
            nrows,
            ncols,
            indptr,
            indices,
            data,
        };
        for i in 0..nrows {
            let (cols, vals) = rows.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                let col = j.position().filter(|&c| c < ncols).ok_or_else(|| {
                    bad(format!(
                        "row {i} has an entry in a column outside 0..{ncols}"
                    ))
                })?;
                if !v.value().is_finite() {
                    return Err(Error::NonFinite {
                        what: "the sparse matrix".to_string(),
                        row: i,
                        col,
                    });
                }
            }
        }
        Ok(rows)
    }

    /// Rows and columns.
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }

    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }

    /// The columns and values of row `i`.
    /// The entries of row `i` as `(column, value)`, in the order stored.
    pub fn entries(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + 'a {
        let (cols, vals) = self.row(i);
        cols.iter()
            .zip(vals)
            .map(|(&c, &v)| (c.position().unwrap_or(0), v.value()))
    }

    fn row(&self, i: usize) -> (&'a [I], &'a [T]) {
        let start = self.indptr[i].position().unwrap_or(0);
        let end = self.indptr[i + 1].position().unwrap_or(start);
        (&self.indices[start..end], &self.data[start..end])
    }

    /// The mean of each column (rows without an entry count as zeros).
    pub fn column_means(&self) -> nalgebra::DVector<f64> {
        let ones = DMatrix::from_element(self.nrows, 1, 1.0 / self.nrows as f64);
        let sums = self.tr_mul(&ones);
        nalgebra::DVector::from_column_slice(sums.as_slice())
    }

    /// `Y z` for a dense `z` (ncols x l).
    pub fn mul(&self, z: &DMatrix<f64>) -> DMatrix<f64> {
        assert_eq!(z.nrows(), self.ncols, "Y z: z has the wrong number of rows");
        let l = z.ncols();
        // Rows of z contiguous: z^T (l x p) column-major.
        let zt = z.transpose();
        let zt = zt.as_slice();
        let mut rows = vec![0.0; self.nrows * l];
        rows.par_chunks_mut(BLOCK * l.max(1))
            .enumerate()
            .for_each(|(b, out)| {
                for (r, out_row) in out.chunks_mut(l.max(1)).enumerate() {
                    let (cols, vals) = self.row(b * BLOCK + r);
                    for (&j, &v) in cols.iter().zip(vals) {
                        let at = j.position().unwrap_or(0) * l;
                        axpy(out_row, v.value(), &zt[at..at + l]);
                    }
                }
            });
        DMatrix::from_row_slice(self.nrows, l, &rows)
    }

    /// `Y^T w` for a dense `w` (nrows x l).
    pub fn tr_mul(&self, w: &DMatrix<f64>) -> DMatrix<f64> {
        assert_eq!(
            w.nrows(),
            self.nrows,
            "Y^T w: w has the wrong number of rows"
        );
        let l = w.ncols();
        let wt = w.transpose();
        let blocks = self.nrows.div_ceil(BLOCK);
        // Columns of the result contiguous: (Y^T w)^T (l x p) column-major.
        let mut total = DMatrix::zeros(l, self.ncols);
        for first in (0..blocks).step_by(PARTIALS) {
            let partials: Vec<DMatrix<f64>> = (first..blocks.min(first + PARTIALS))
                .into_par_iter()
                .map(|b| {
                    let mut part = DMatrix::zeros(l, self.ncols);
                    let out = part.as_mut_slice();
                    for i in b * BLOCK..self.nrows.min((b + 1) * BLOCK) {
                        let wi = &wt.as_slice()[i * l..(i + 1) * l];
                        let (cols, vals) = self.row(i);
                        for (&j, &v) in cols.iter().zip(vals) {
                            let at = j.position().unwrap_or(0) * l;
                            axpy(&mut out[at..at + l], v.value(), wi);
                        }
                    }
                    part
                })
                .collect();
            for part in partials {
                total += part;
            }
        }
        total.transpose()
    }

    /// The dense matrix (for small inputs and tests).
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.nrows, self.ncols);
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                m[(i, j.position().unwrap_or(0))] += v.value();
            }
        }
        m
    }
}

/// `out += a x` on equal-length slices.
#[inline]
fn axpy(out: &mut [f64], a: f64, x: &[f64]) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o += a * v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded sparse matrix as CSR arrays, with an empty row, unsorted columns and one
    /// column given twice in a row.
    pub(crate) fn random_csr(n: usize, p: usize, seed: u64) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
        use rand::Rng;
        let mut rng = unfold_core::seeded_rng(seed);
        let (mut indptr, mut indices, mut data) = (vec![0i64], Vec::new(), Vec::new());
        for i in 0..n {
            if i != 3 {
                for _ in 0..rng.random_range(0..6) {
                    indices.push(rng.random_range(0..p) as i64);
                    data.push(rng.random_range(-2.0..3.0));
                }
            }
            if i == 5 {
                indices.push(indices[indices.len() - 1]);
                data.push(0.5);
            }
            indptr.push(indices.len() as i64);
        }
        (indptr, indices, data)
    }

    #[test]
    fn products_and_means_equal_the_dense_ones_on_any_thread_count() {
        let (n, p) = (9000, 40);
        let (indptr, indices, data) = random_csr(n, p, 3);
        let y = SparseRows::new(n, p, &indptr, &indices, &data).unwrap();
        let dense = y.to_dense();
        let z = DMatrix::from_fn(p, 5, |i, j| ((i * 3 + j) % 7) as f64 - 3.0);
        let w = DMatrix::from_fn(n, 4, |i, j| ((i + 5 * j) % 11) as f64 - 5.0);
        assert!((y.mul(&z) - &dense * &z).amax() < 1e-12);
        assert!((y.tr_mul(&w) - dense.transpose() * &w).amax() < 1e-9);
        let means = y.column_means();
        for j in 0..p {
            assert!((means[j] - dense.column(j).mean()).abs() < 1e-14);
        }
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| (y.mul(&z), y.tr_mul(&w)))
        };
        assert_eq!(on(1), on(2));
        // The same matrix with 32-bit indices and single-precision values (exact here).
        let (i32ptr, i32idx): (Vec<i32>, Vec<i32>) = (
            indptr.iter().map(|&v| v as i32).collect(),
            indices.iter().map(|&v| v as i32).collect(),
        );
        let single: Vec<f32> = data.iter().map(|&v| v as f32).collect();
        let y32 = SparseRows::new(n, p, &i32ptr, &i32idx, &single).unwrap();
        let exact: Vec<f64> = single.iter().map(|&v| f64::from(v)).collect();
        let y64 = SparseRows::new(n, p, &indptr, &indices, &exact).unwrap();
        assert_eq!(y32.tr_mul(&w), y64.tr_mul(&w));
    }

    #[test]
    fn malformed_arrays_and_non_finite_values_are_refused_by_name() {
        let (indptr, indices, mut data) = random_csr(20, 6, 1);
        let err = |r: Result<SparseRows<'_, i64, f64>>| r.unwrap_err().to_string();
        assert!(err(SparseRows::new(19, 6, &indptr, &indices, &data)).contains("indptr has 21"));
        assert!(err(SparseRows::new(20, 2, &indptr, &indices, &data)).contains("outside 0..2"));
        let mut backwards = indptr.clone();
        backwards[4] = backwards[5] + 1;
        assert!(err(SparseRows::new(20, 6, &backwards, &indices, &data))
            .contains("indptr[5] is not a row start"));
        let mut negative = indices.clone();
        negative[0] = -1;
        assert!(err(SparseRows::new(20, 6, &indptr, &negative, &data)).contains("outside"));
        assert!(
            err(SparseRows::new(20, 6, &indptr, &indices[1..], &data)).contains("column indices")
        );
        let at = indptr[7] as usize;
        data[at] = f64::NAN;
        let nan = SparseRows::new(20, 6, &indptr, &indices, &data).unwrap_err();
        assert!(
            matches!(nan, Error::NonFinite { row: 7, col, .. } if col == indices[at] as usize),
            "{nan}"
        );
    }
}
