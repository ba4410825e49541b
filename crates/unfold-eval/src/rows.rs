//! Rows of squared-distance matrices, computed block by block and never stored whole.
//!
//! For `n` points an `n x n` distance matrix costs `8 n^2` bytes (200 MB at n = 5000) and
//! a slow symmetrisation pass; the metrics only ever look at one row at a time, so they get
//! the rows of a block of points from one [`sq_dists_to`] product (a fast matrix product)
//! and work on them in parallel.
//!
//! The Gram expansion `||a||^2 + ||b||^2 - 2 a.b` loses relative accuracy when the points
//! sit far from the origin compared with their spread, so every set is centred first
//! (distances are translation invariant).

use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_linalg::sq_dists_to;

/// About this many distances per matrix and block (2 MB of f64, cache-sized).
const BLOCK_ENTRIES: usize = 1 << 18;

/// `f(i, rows)` for every point `i`, in parallel, with `rows[m]` the squared Euclidean
/// distances from point `i` to every point of `sets[m]` (all sets have the same number of
/// rows; the entry for `i` itself is ~0 and must be skipped by `f`). Results in point order,
/// independent of the thread count.
pub(crate) fn map_distance_rows<T, F>(sets: &[&DMatrix<f64>], f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, &[&[f64]]) -> T + Sync,
{
    let n = sets.first().map_or(0, |x| x.nrows());
    in_blocks(sets, (BLOCK_ENTRIES / n.max(1)).max(1), f)
}

/// [`map_distance_rows`] with `block` points per block.
fn in_blocks<T, F>(sets: &[&DMatrix<f64>], block: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, &[&[f64]]) -> T + Sync,
{
    let n = sets.first().map_or(0, |x| x.nrows());
    let centred: Vec<DMatrix<f64>> = sets.iter().map(|x| centred(x)).collect();
    let mut out = Vec::with_capacity(n);
    for start in (0..n).step_by(block) {
        let len = block.min(n - start);
        // Column c of each n x len matrix: distances from point start + c to all points.
        let dists: Vec<DMatrix<f64>> = centred
            .iter()
            .map(|x| sq_dists_to(x, &x.rows(start, len).clone_owned()))
            .collect();
        out.par_extend((0..len).into_par_iter().map(|c| {
            let rows: Vec<&[f64]> = dists
                .iter()
                .map(|d| &d.as_slice()[c * n..(c + 1) * n])
                .collect();
            f(start + c, &rows)
        }));
    }
    out
}

/// `x` with its column means subtracted.
fn centred(x: &DMatrix<f64>) -> DMatrix<f64> {
    let mean = x.row_mean();
    let mut c = x.clone();
    for mut row in c.row_iter_mut() {
        row -= &mean;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_the_distances_of_each_point() {
        let x = DMatrix::from_fn(9, 3, |i, j| ((i * 5 + j * 2) as f64).sin());
        let y = DMatrix::from_fn(9, 1, |i, _| i as f64);
        let row_of = |i: usize, rows: &[&[f64]]| (i, rows[0].to_vec(), rows[1].to_vec());
        let got = in_blocks(&[&x, &y], 4, row_of);
        assert_eq!(got, map_distance_rows(&[&x, &y], row_of));
        for (i, (idx, rx, ry)) in got.into_iter().enumerate() {
            assert_eq!(idx, i);
            for j in 0..9 {
                assert!((rx[j] - (x.row(i) - x.row(j)).norm_squared()).abs() < 1e-12);
                assert!((ry[j] - ((i as f64) - (j as f64)).powi(2)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn far_from_the_origin_distances_stay_accurate() {
        // Spread 1e-3 around 1e5: uncentred, the Gram expansion would lose every digit.
        let x = DMatrix::from_fn(6, 2, |i, j| 1e5 + 1e-3 * ((i * 3 + j) as f64).sin());
        let got = map_distance_rows(&[&x], |_, rows| rows[0].to_vec());
        for (i, row) in got.iter().enumerate() {
            for (j, &d) in row.iter().enumerate() {
                let exact = (x.row(i) - x.row(j)).norm_squared();
                assert!(
                    (d - exact).abs() < 1e-9 * 1e-6,
                    "({i}, {j}): {d} vs {exact}"
                );
            }
        }
    }
}
