//! Quick timing of the partial eigensolvers against the full decomposition (no criterion):
//!
//! - `smallest_eigenpairs` (q = 3) of the Laplacian of a 10-NN graph of a Swiss roll;
//! - the same on the Laplacian stored densely (dense Cholesky in the shift-invert);
//! - `largest_eigenpairs` (q = 2) of a dense double-centred Gram matrix.
//!
//! `cargo run --release -p unfold-linalg --example eigen_timing -- [n]` (default n = 5000).

use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_linalg::{
    largest_eigenpairs, pairwise_sq_dists, smallest_eigenpairs, sym_eigen, CsrMatrix, SymEigen,
    SymMatrix, SymOperator,
};

fn swiss_roll(n: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    let mut y = DMatrix::zeros(n, 3);
    for i in 0..n {
        let t = 1.5 * std::f64::consts::PI * (1.0 + 2.0 * rng.random::<f64>());
        y[(i, 0)] = t * t.cos();
        y[(i, 1)] = 21.0 * rng.random::<f64>();
        y[(i, 2)] = t * t.sin();
    }
    y
}

/// Union-symmetrised 0/1 k-NN graph Laplacian `D - W`.
fn knn_laplacian(y: &DMatrix<f64>, k: usize) -> CsrMatrix {
    let n = y.nrows();
    let d = pairwise_sq_dists(y);
    let mut edges = std::collections::BTreeSet::new();
    for i in 0..n {
        let mut idx: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        idx.select_nth_unstable_by(k - 1, |&a, &b| d[(i, a)].total_cmp(&d[(i, b)]));
        for &j in &idx[..k] {
            edges.insert((i.min(j), i.max(j)));
        }
    }
    let mut t = Vec::new();
    for &(i, j) in &edges {
        t.extend([(i, i, 1.0), (j, j, 1.0), (i, j, -1.0), (j, i, -1.0)]);
    }
    CsrMatrix::from_triplets(n, n, &t)
}

fn residual(a: &dyn SymOperator, e: &SymEigen) -> f64 {
    let mut ax = DMatrix::zeros(e.vectors.nrows(), e.vectors.ncols());
    a.apply(&e.vectors, &mut ax);
    (0..e.values.len())
        .map(|j| (ax.column(j) - e.vectors.column(j) * e.values[j]).norm())
        .fold(0.0, f64::max)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(5000, |s| s.parse().expect("n"));
    let y = swiss_roll(n, 1);

    let l = knn_laplacian(&y, 10);
    let t = Instant::now();
    let part = smallest_eigenpairs(SymMatrix::Sparse(&l), 3).expect("partial");
    let t_part = t.elapsed().as_secs_f64();
    let dense = l.to_dense();
    let t = Instant::now();
    let full = sym_eigen(&dense).expect("full");
    let t_full = t.elapsed().as_secs_f64();
    let err = (0..3)
        .map(|j| (part.values[j] - full.values[j]).abs())
        .fold(0.0, f64::max);
    println!(
        "sparse 10-NN Laplacian n={n} nnz={}: smallest q=3 {t_part:.3}s, full sym_eigen {t_full:.3}s, \
         ratio {:.1}x; values {:?}, max |dvalue| {err:.1e}, max residual {:.1e}",
        l.nnz(),
        t_full / t_part,
        part.values.as_slice(),
        residual(&l, &part)
    );

    let t = Instant::now();
    let part_dense = smallest_eigenpairs(SymMatrix::Dense(&dense), 3).expect("partial");
    let t_pd = t.elapsed().as_secs_f64();
    println!(
        "same Laplacian stored dense (dense Cholesky shift-invert): smallest q=3 {t_pd:.3}s, \
         ratio to full {:.1}x, max |dvalue| {:.1e}",
        t_full / t_pd,
        (0..3)
            .map(|j| (part_dense.values[j] - full.values[j]).abs())
            .fold(0.0, f64::max)
    );

    let g = &y * y.transpose();
    let mean_r: Vec<f64> = (0..n).map(|i| g.row(i).mean()).collect();
    let mean_all = mean_r.iter().sum::<f64>() / n as f64;
    let k = DMatrix::from_fn(n, n, |i, j| g[(i, j)] - mean_r[i] - mean_r[j] + mean_all);
    let t = Instant::now();
    let part = largest_eigenpairs(SymMatrix::Dense(&k), 2).expect("partial");
    let t_part = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let full = sym_eigen(&k).expect("full");
    let t_full = t.elapsed().as_secs_f64();
    let err = (0..2)
        .map(|j| (part.values[j] - full.values[n - 1 - j]).abs())
        .fold(0.0, f64::max);
    println!(
        "dense centred Gram n={n}: largest q=2 {t_part:.3}s, full sym_eigen {t_full:.3}s, \
         ratio {:.1}x; values {:?}, max |dvalue| {err:.1e}, max residual {:.1e}",
        t_full / t_part,
        part.values.as_slice(),
        residual(&k, &part)
    );
}
