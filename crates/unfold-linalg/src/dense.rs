//! Small dense-matrix helpers.

use crate::lane_sum;
use faer::MatRef;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

/// The dot product of two slices of the same length (the shorter one's length otherwise).
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Replaces a square matrix by its symmetric part `(A + A^T) / 2`, in place, so that the
/// round-off asymmetry of a product such as `B^T A B` does not fail the symmetry checks
/// of the eigensolvers and factorisations. The diagonal is unchanged, and each mirrored
/// pair gets the same bits, `0.5 (a_ij + a_ji)`.
///
/// # Panics
/// If `m` is not square.
pub fn symmetrise(m: &mut DMatrix<f64>) {
    assert!(m.is_square(), "symmetrise: the matrix is not square");
    let n = m.nrows();
    for j in 0..n {
        for i in 0..j {
            let v = 0.5 * (m[(i, j)] + m[(j, i)]);
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
}

/// [`symmetrise`] of an owned matrix, returned.
pub fn symmetrised(mut m: DMatrix<f64>) -> DMatrix<f64> {
    symmetrise(&mut m);
    m
}

/// An n x p matrix of zeros from zeroed memory: the operating system hands out zero pages
/// as they are first touched, so the cost of touching them falls on whoever writes the
/// matrix (in parallel, for the fills here) rather than on one thread writing zeros
/// first, as `DMatrix::zeros` does; large ones are backed by huge pages
/// ([`advise_huge_pages`](crate::simd::advise_huge_pages)), one fault per 2 MiB (reading a
/// 200 MB CSV file: 0.7x to 0.8x the time with the read buffer's pages advised alike).
pub fn zeroed(n: usize, p: usize) -> DMatrix<f64> {
    let mut data = vec![0.0; n * p];
    crate::simd::advise_huge_pages(&mut data);
    DMatrix::from_vec(n, p, data)
}

/// The mean of each column of a faer view, the same bits on any number of threads:
/// contiguous columns (nalgebra's storage) each by a [`lane_sum`] in parallel; rows (a
/// row-major view of a C-order array) by fixed blocks of rows in parallel, each adding its
/// rows in order and the blocks' sums added in block order (within rounding of the
/// column-major sums).
pub fn column_means(y: MatRef<'_, f64>) -> DVector<f64> {
    let (n, p) = (y.nrows(), y.ncols());
    if n == 0 {
        return DVector::from_element(p, f64::NAN);
    }
    if y.row_stride() == 1 {
        let means: Vec<f64> = (0..p)
            .into_par_iter()
            .map(|j| {
                let col = y.col(j).try_as_col_major().expect("unit row stride");
                let col = col.as_slice();
                lane_sum(n, |i| col[i]) / n as f64
            })
            .collect();
        return DVector::from_vec(means);
    }
    let blocks: Vec<Vec<f64>> = (0..n.div_ceil(MEAN_ROWS))
        .into_par_iter()
        .map(|b| {
            let mut sums = vec![0.0; p];
            for i in b * MEAN_ROWS..((b + 1) * MEAN_ROWS).min(n) {
                let row = y.row(i);
                match row.try_as_row_major() {
                    Some(row) => {
                        for (s, &v) in sums.iter_mut().zip(row.as_slice()) {
                            *s += v;
                        }
                    }
                    None => {
                        for (s, &v) in sums.iter_mut().zip(row.iter()) {
                            *s += v;
                        }
                    }
                }
            }
            sums
        })
        .collect();
    let mut sums = vec![0.0; p];
    for block in blocks {
        for (s, v) in sums.iter_mut().zip(block) {
            *s += v;
        }
    }
    DVector::from_iterator(p, sums.into_iter().map(|s| s / n as f64))
}

/// Rows per block of [`column_means`] on a view without contiguous columns.
const MEAN_ROWS: usize = 4096;

/// Columns per parallel block of [`from_rows`].
const ROW_COPY_COLUMNS: usize = 32;

/// The n x p matrix whose row `i` is `row(i)` (p values each): the copy of row-major data
/// (a C-order NumPy array, the rows of a parsed file) into nalgebra's column-major
/// storage. Blocks of 32 columns are filled in parallel, each row by row, so that the
/// reads of a row's values are contiguous and the block's columns stay in cache.
///
/// # Panics
/// If a row does not have p values.
pub fn from_rows<'a, F>(n: usize, p: usize, row: F) -> DMatrix<f64>
where
    F: Fn(usize) -> &'a [f64] + Sync,
{
    let mut m = zeroed(n, p);
    if n == 0 || p == 0 {
        return m;
    }
    m.as_mut_slice()
        .par_chunks_mut(n * ROW_COPY_COLUMNS)
        .enumerate()
        .for_each(|(b, block)| {
            let j0 = b * ROW_COPY_COLUMNS;
            let width = block.len() / n;
            for i in 0..n {
                let r = row(i);
                assert_eq!(r.len(), p, "row {i} has {} values, not {p}", r.len());
                for (c, &v) in r[j0..j0 + width].iter().enumerate() {
                    block[c * n + i] = v;
                }
            }
        });
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::as_faer;

    #[test]
    fn zeroed_is_zeros() {
        for (n, p) in [(0, 0), (0, 3), (3, 0), (1000, 7)] {
            assert_eq!(zeroed(n, p), DMatrix::zeros(n, p));
        }
    }

    #[test]
    fn column_means_match_the_plain_mean() {
        for (n, p) in [(1, 3), (7, 2), (1000, 5)] {
            let y = DMatrix::from_fn(n, p, |i, j| {
                ((i * 7 + j * 3) as f64 * 0.37).sin() + j as f64
            });
            let means = column_means(as_faer(&y));
            for j in 0..p {
                let want = y.column(j).mean();
                assert!(
                    (means[j] - want).abs() <= 1e-14 * want.abs().max(1.0),
                    "{n}x{p} column {j}"
                );
            }
        }
        assert!(column_means(as_faer(&DMatrix::zeros(0, 2)))
            .iter()
            .all(|m| m.is_nan()));
        // A row-major view gives the same means to rounding.
        for (n, p) in [(1, 3), (13, 9), (10_000, 17)] {
            let y = DMatrix::from_fn(n, p, |i, j| ((i * 7 + j * 3) as f64 * 0.37).sin() * 1e3);
            let rows: Vec<f64> = y.transpose().as_slice().to_vec();
            let view = MatRef::from_row_major_slice(&rows, n, p);
            let (a, b) = (column_means(view), column_means(as_faer(&y)));
            assert!((&a - &b).amax() <= 1e-12 * 1e3, "{n}x{p}");
        }
    }

    #[test]
    fn rows_are_copied_into_columns() {
        for (n, p) in [(0, 3), (3, 0), (1, 1), (7, 31), (9, 32), (11, 70)] {
            let data: Vec<f64> = (0..n * p).map(|v| v as f64 * 0.5 - 3.0).collect();
            let m = from_rows(n, p, |i| &data[i * p..(i + 1) * p]);
            assert_eq!(m, DMatrix::from_row_slice(n, p, &data));
        }
    }

    #[test]
    fn symmetric_part_to_the_bit() {
        let a = DMatrix::from_fn(5, 5, |i, j| ((i * 5 + j) as f64 * 0.731).sin());
        let s = symmetrised(a.clone());
        assert_eq!(s, s.transpose());
        assert_eq!(s, (&a + a.transpose()) * 0.5);
    }
}
