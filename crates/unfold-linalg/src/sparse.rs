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

impl CsrMatrix {
    /// Builds a matrix from `(row, col, value)` triplets; repeated positions are summed.
    ///
    /// # Panics
    /// If an index is out of range (a programming error).
    pub fn from_triplets(nrows: usize, ncols: usize, triplets: &[(usize, usize, f64)]) -> Self {
        let mut sorted: Vec<(usize, usize, f64)> = triplets.to_vec();
        for &(i, j, _) in &sorted {
            assert!(i < nrows && j < ncols, "triplet ({i}, {j}) out of range");
        }
        sorted.sort_by_key(|a| (a.0, a.1));
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices = Vec::with_capacity(sorted.len());
        let mut values: Vec<f64> = Vec::with_capacity(sorted.len());
        let mut last: Option<(usize, usize)> = None;
        for (i, j, v) in sorted {
            if last == Some((i, j)) {
                *values.last_mut().expect("a previous entry exists") += v;
            } else {
                indices.push(j);
                values.push(v);
                indptr[i + 1] += 1;
                last = Some((i, j));
            }
        }
        for i in 0..nrows {
            indptr[i + 1] += indptr[i];
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
        let mut triplets = Vec::with_capacity(self.nnz() + self.nrows);
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            triplets.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
            triplets.push((i, i, shift));
        }
        CsrMatrix::from_triplets(self.nrows, self.ncols, &triplets)
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
}
