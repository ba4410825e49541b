//! Compressed sparse row matrices: the storage of sparse Laplacians and precisions.

/// A sparse matrix in compressed sparse row form with sorted, unique column indices.
#[derive(Clone, Debug, PartialEq)]
pub struct CsrMatrix {
    nrows: usize,
    ncols: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    values: Vec<f64>,
}

/// Where row `i` (sorted columns `cols`, values `vals`) meets the diagonal: the end of the
/// entries below it, the stored diagonal value (0 if not stored) and the start of the
/// entries above it.
pub(crate) fn diagonal_split(cols: &[usize], vals: &[f64], i: usize) -> (usize, f64, usize) {
    let at = cols.partition_point(|&j| j < i);
    match cols.get(at) {
        Some(&j) if j == i => (at, vals[at], at + 1),
        _ => (at, 0.0, at),
    }
}

impl CsrMatrix {
    /// A matrix from its CSR arrays: row `i` holds `indices[indptr[i]..indptr[i + 1]]`
    /// (strictly increasing columns) with those `values`.
    ///
    /// # Errors
    /// [`unfold_core::Error::InvalidParameter`] if the arrays do not describe such a matrix.
    pub fn from_sorted_rows(
        nrows: usize,
        ncols: usize,
        indptr: Vec<usize>,
        indices: Vec<usize>,
        values: Vec<f64>,
    ) -> unfold_core::Result<Self> {
        let bad = |m: &str| Err(unfold_core::Error::invalid("CSR arrays", m.to_string()));
        if indptr.len() != nrows + 1
            || indptr[0] != 0
            || indptr[nrows] != indices.len()
            || values.len() != indices.len()
        {
            return bad("row pointers, indices and values do not match in length");
        }
        for i in 0..nrows {
            if indptr[i] > indptr[i + 1] {
                return bad("row pointers decrease");
            }
            let row = &indices[indptr[i]..indptr[i + 1]];
            if row.windows(2).any(|w| w[0] >= w[1]) || row.last().is_some_and(|&j| j >= ncols) {
                return bad("a row's columns are not strictly increasing and in range");
            }
        }
        Ok(CsrMatrix {
            nrows,
            ncols,
            indptr,
            indices,
            values,
        })
    }

    /// Builds a matrix from `(row, col, value)` triplets; repeated positions are summed.
    ///
    /// # Panics
    /// If an index is out of range (a programming error).
    pub fn from_triplets(nrows: usize, ncols: usize, triplets: &[(usize, usize, f64)]) -> Self {
        // Bucket by row (a counting sort, O(nnz)), then order each row by column; the sort
        // is stable, so repeated positions are summed in the order they were given.
        let mut start = vec![0usize; nrows + 1];
        for &(i, j, _) in triplets {
            assert!(i < nrows && j < ncols, "triplet ({i}, {j}) out of range");
            start[i + 1] += 1;
        }
        for i in 0..nrows {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut bucketed = vec![(0usize, 0.0f64); triplets.len()];
        for &(i, j, v) in triplets {
            bucketed[next[i]] = (j, v);
            next[i] += 1;
        }
        Self::from_row_buckets(nrows, ncols, &start, bucketed)
    }

    /// Builds a matrix from entries grouped by row: row `i` holds the `(col, value)` pairs
    /// `entries[start[i]..start[i + 1]]` in any column order. Each row is sorted by column
    /// (stably, so repeated positions are summed in the order they were given).
    ///
    /// # Panics
    /// If `start` is not `nrows + 1` non-decreasing offsets ending at `entries.len()`, or
    /// a column is out of range (programming errors).
    pub fn from_row_buckets(
        nrows: usize,
        ncols: usize,
        start: &[usize],
        mut entries: Vec<(usize, f64)>,
    ) -> Self {
        assert!(
            start.len() == nrows + 1 && start[0] == 0 && start[nrows] == entries.len(),
            "row offsets do not match the entries"
        );
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices = Vec::with_capacity(entries.len());
        let mut values: Vec<f64> = Vec::with_capacity(entries.len());
        for i in 0..nrows {
            let row = &mut entries[start[i]..start[i + 1]];
            row.sort_by_key(|e| e.0);
            assert!(
                row.last().is_none_or(|e| e.0 < ncols),
                "column out of range in row {i}"
            );
            let first = indices.len();
            for &(j, v) in row.iter() {
                if indices.len() > first && indices.last() == Some(&j) {
                    *values.last_mut().expect("a previous entry exists") += v;
                } else {
                    indices.push(j);
                    values.push(v);
                }
            }
            indptr[i + 1] = indices.len();
        }
        CsrMatrix {
            nrows,
            ncols,
            indptr,
            indices,
            values,
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Column indices and values of row `i`.
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }

    /// The value at `(i, j)`, zero where nothing is stored.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        let (cols, vals) = self.row(i);
        cols.binary_search(&j).map_or(0.0, |p| vals[p])
    }

    /// Row pointers, column indices and values (the raw CSR arrays).
    pub fn parts(&self) -> (&[usize], &[usize], &[f64]) {
        (&self.indptr, &self.indices, &self.values)
    }

    /// `y = A x`.
    pub fn matvec(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.ncols);
        assert_eq!(y.len(), self.nrows);
        for (i, yi) in y.iter_mut().enumerate() {
            let (cols, vals) = self.row(i);
            *yi = cols.iter().zip(vals).map(|(&j, &v)| v * x[j]).sum();
        }
    }

    /// `A + shift I` (square matrices): diagonal entries that are not stored are added.
    ///
    /// # Panics
    /// If the matrix is not square (a programming error).
    pub fn add_to_diagonal(&self, shift: f64) -> CsrMatrix {
        assert_eq!(
            self.nrows, self.ncols,
            "add_to_diagonal: matrix is not square"
        );
        let mut out = CsrMatrix {
            nrows: self.nrows,
            ncols: self.ncols,
            indptr: Vec::with_capacity(self.nrows + 1),
            indices: Vec::with_capacity(self.nnz() + self.nrows),
            values: Vec::with_capacity(self.nnz() + self.nrows),
        };
        out.indptr.push(0);
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            let (at, diagonal, rest) = diagonal_split(cols, vals, i);
            out.indices.extend(&cols[..at]);
            out.values.extend(&vals[..at]);
            out.indices.push(i);
            out.values.push(diagonal + shift);
            out.indices.extend(&cols[rest..]);
            out.values.extend(&vals[rest..]);
            out.indptr.push(out.indices.len());
        }
        out
    }

    /// `S A S` with `S = diag(s)` (square matrices), keeping the sparsity pattern.
    ///
    /// # Panics
    /// If the matrix is not square or `s` has the wrong length (a programming error).
    pub fn scale_symmetric(&self, s: &[f64]) -> CsrMatrix {
        assert_eq!(
            self.nrows, self.ncols,
            "scale_symmetric: matrix is not square"
        );
        assert_eq!(s.len(), self.nrows, "scale_symmetric: wrong length of s");
        let mut out = self.clone();
        for i in 0..self.nrows {
            for p in self.indptr[i]..self.indptr[i + 1] {
                out.values[p] *= s[i] * s[self.indices[p]];
            }
        }
        out
    }

    /// The dense copy of the matrix.
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let mut d = nalgebra::DMatrix::zeros(self.nrows, self.ncols);
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                d[(i, j)] = v;
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_sum_and_multiply() {
        let a =
            CsrMatrix::from_triplets(3, 3, &[(0, 0, 1.0), (2, 1, 2.0), (0, 0, 0.5), (1, 2, -1.0)]);
        assert_eq!(a.nnz(), 3);
        assert_eq!(a.get(0, 0), 1.5);
        assert_eq!(a.get(1, 1), 0.0);
        let mut y = [0.0; 3];
        a.matvec(&[1.0, 2.0, 3.0], &mut y);
        assert_eq!(y, [1.5, -3.0, 4.0]);
        let d = a.to_dense();
        assert_eq!(d[(2, 1)], 2.0);
    }

    #[test]
    fn sorted_rows_are_taken_as_given_and_bad_arrays_refused() {
        let a =
            CsrMatrix::from_sorted_rows(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0])
                .unwrap();
        assert_eq!(
            a,
            CsrMatrix::from_triplets(2, 3, &[(0, 0, 1.0), (0, 2, 2.0), (1, 1, 3.0)])
        );
        let refused = |indptr: Vec<usize>, indices: Vec<usize>, values: Vec<f64>| {
            CsrMatrix::from_sorted_rows(2, 3, indptr, indices, values).is_err()
        };
        assert!(refused(vec![0, 2], vec![0, 2], vec![1.0, 2.0])); // too few pointers
        assert!(refused(vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0])); // values short
        assert!(refused(vec![0, 2, 3], vec![2, 0, 1], vec![1.0; 3])); // unsorted
        assert!(refused(vec![0, 2, 3], vec![1, 1, 1], vec![1.0; 3])); // repeated
        assert!(refused(vec![0, 2, 3], vec![0, 3, 1], vec![1.0; 3])); // out of range
        assert!(refused(vec![0, 3, 2], vec![0, 1, 2], vec![1.0; 3])); // decreasing
    }

    #[test]
    fn unsorted_triplets_and_a_shifted_diagonal() {
        // Rows 0 and 2 have a stored diagonal, row 1 has none, row 3 is empty.
        let t = [
            (2, 3, 4.0),
            (0, 2, 1.0),
            (2, 2, 5.0),
            (0, 0, 2.0),
            (1, 0, 3.0),
            (2, 0, 6.0),
        ];
        let a = CsrMatrix::from_triplets(4, 4, &t);
        let mut dense = nalgebra::DMatrix::zeros(4, 4);
        for &(i, j, v) in &t {
            dense[(i, j)] += v;
        }
        assert_eq!(a.to_dense(), dense);
        let shifted = a.add_to_diagonal(0.5);
        assert_eq!(
            shifted.to_dense(),
            dense + nalgebra::DMatrix::identity(4, 4) * 0.5
        );
        for i in 0..4 {
            let (cols, _) = shifted.row(i);
            assert!(
                cols.windows(2).all(|w| w[0] < w[1]),
                "row {i} is not sorted: {cols:?}"
            );
        }
        assert_eq!(shifted.nnz(), a.nnz() + 2);
    }
}
