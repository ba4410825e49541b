//! Quick timing of unfold-linalg's CSR kernels against faer's sparse row matrix (no
//! criterion), on the 0/1 Laplacian `D - W` of a union-symmetrised 10-NN graph of points
//! drawn uniformly in the unit square, in random order (as data arrive):
//!
//! - `matvec`: `y = A x` for one vector (ours: `CsrMatrix::matvec`, sequential; faer:
//!   `sparse_dense_matmul` with one column, sequential);
//! - `block`: `Y = A X` for X with 2 and 8 columns, the products of block Lanczos (ours:
//!   `SymOperator::apply`, parallel over blocks of rows; faer: `sparse_dense_matmul` with
//!   rayon);
//! - `symmetric check`: ours is the check every eigenpair function runs first (timed through
//!   `smallest_eigenpairs` with `q = 0`, which returns its error right after the check);
//!   faer has none, so its counterpart is the transpose (`to_col_major`) compared entry by
//!   entry with the matrix.
//!
//! Both hold the same arrays (faer's matrix is built from ours). Each timing is the median
//! of `reps` runs.
//!
//! `cargo run --release -p unfold-linalg --example sparse_vs_faer -- [n ...]` (default
//! 5000 50000).

use faer::sparse::linalg::matmul::sparse_dense_matmul;
use faer::sparse::{SparseRowMatRef, SymbolicSparseRowMatRef};
use faer::{Accum, Par};
use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_linalg::view::{as_faer, as_faer_mut, par};
use unfold_linalg::{smallest_eigenpairs, CsrMatrix, SymMatrix, SymOperator};

const K: usize = 10;

/// Exact 10-NN of uniform points in the unit square by a grid of cells holding about K
/// points each, searched ring by ring until the ring's inner distance exceeds the k-th
/// distance found.
fn knn_laplacian(n: usize, seed: u64) -> CsrMatrix {
    let mut rng = unfold_core::seeded_rng(seed);
    let pts: Vec<[f64; 2]> = (0..n).map(|_| [rng.random(), rng.random()]).collect();
    let g = ((n / K) as f64).sqrt().ceil().max(1.0) as usize;
    let cell = |v: f64| ((v * g as f64) as usize).min(g - 1);
    let mut cells = vec![Vec::new(); g * g];
    for (i, p) in pts.iter().enumerate() {
        cells[cell(p[1]) * g + cell(p[0])].push(i);
    }
    let mut edges = std::collections::BTreeSet::new();
    for (i, p) in pts.iter().enumerate() {
        let (cx, cy) = (cell(p[0]) as isize, cell(p[1]) as isize);
        let mut best: Vec<(f64, usize)> = Vec::new();
        for r in 0..g as isize {
            for y in cy - r..=cy + r {
                for x in cx - r..=cx + r {
                    let ring = (y - cy).abs() == r || (x - cx).abs() == r;
                    if !ring || x < 0 || y < 0 || x >= g as isize || y >= g as isize {
                        continue;
                    }
                    for &j in &cells[y as usize * g + x as usize] {
                        if j != i {
                            let d = (pts[j][0] - p[0]).powi(2) + (pts[j][1] - p[1]).powi(2);
                            best.push((d, j));
                        }
                    }
                }
            }
            best.sort_by(|a, b| a.0.total_cmp(&b.0));
            best.truncate(K);
            // Every point outside the rings searched is at least r / g away.
            let reach = r as f64 / g as f64;
            if best.len() == K && best[K - 1].0 <= reach * reach {
                break;
            }
        }
        for &(_, j) in &best {
            edges.insert((i.min(j), i.max(j)));
        }
    }
    let mut degree = vec![0.0; n];
    let mut t = Vec::with_capacity(2 * edges.len() + n);
    for &(i, j) in &edges {
        t.push((i, j, -1.0));
        t.push((j, i, -1.0));
        degree[i] += 1.0;
        degree[j] += 1.0;
    }
    t.extend(degree.iter().enumerate().map(|(i, &d)| (i, i, d)));
    CsrMatrix::from_triplets(n, n, &t)
}

fn median_secs(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[reps / 2]
}

/// faer's counterpart of the symmetry check: the transpose, compared with the matrix.
fn faer_is_symmetric(a: SparseRowMatRef<'_, usize, f64>, tol: f64) -> bool {
    let t = a.to_col_major().expect("memory for the transpose");
    let (sym_a, val_a) = a.parts();
    // The column-major arrays of A are the row-major arrays of A^T.
    let (sym_t, val_t) = t.as_ref().parts();
    sym_a.row_ptr() == sym_t.col_ptr()
        && sym_a.col_idx() == sym_t.row_idx()
        && val_a.iter().zip(val_t).all(|(x, y)| (x - y).abs() <= tol)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes"))
        .collect();
    let sizes = if args.is_empty() {
        vec![5000, 50000]
    } else {
        args
    };
    println!(
        "threads: {} (rayon)\n| n | nnz | kernel | unfold (ms) | faer (ms) | faer / unfold |\n|---|---|---|---|---|---|",
        rayon::current_num_threads()
    );
    for n in sizes {
        let a = knn_laplacian(n, 1);
        let (indptr, indices, values) = a.parts();
        let symbolic = SymbolicSparseRowMatRef::new_checked(n, n, indptr, None, indices);
        let fa = SparseRowMatRef::new(symbolic, values);
        let reps = if n <= 10_000 { 201 } else { 51 };
        let row = |kernel: &str, ours: f64, theirs: f64| {
            println!(
                "| {n} | {} | {kernel} | {:.3} | {:.3} | {:.2} |",
                a.nnz(),
                1e3 * ours,
                1e3 * theirs,
                theirs / ours
            );
        };

        let x: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f64 / 1000.0)
            .collect();
        let mut y = vec![0.0; n];
        let ours = median_secs(reps, || a.matvec(&x, &mut y));
        let (xm, mut ym) = (DMatrix::from_column_slice(n, 1, &x), DMatrix::zeros(n, 1));
        let theirs = median_secs(reps, || {
            sparse_dense_matmul(
                as_faer_mut(&mut ym),
                Accum::Replace,
                fa,
                as_faer(&xm),
                1.0,
                Par::Seq,
            )
        });
        let diff = ym
            .iter()
            .zip(&y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert!(diff < 1e-12, "matvec results differ by {diff}");
        row("matvec", ours, theirs);

        for b in [2, 8] {
            let xb = DMatrix::from_fn(n, b, |i, j| ((i * 31 + j * 17) % 97) as f64 / 97.0);
            let (mut ours_y, mut faer_y) = (DMatrix::zeros(n, b), DMatrix::zeros(n, b));
            let ours = median_secs(reps, || a.apply(&xb, &mut ours_y));
            let theirs = median_secs(reps, || {
                sparse_dense_matmul(
                    as_faer_mut(&mut faer_y),
                    Accum::Replace,
                    fa,
                    as_faer(&xb),
                    1.0,
                    par(),
                )
            });
            assert!((&ours_y - &faer_y).amax() < 1e-12, "block products differ");
            row(&format!("block product, {b} columns"), ours, theirs);
        }

        let ours = median_secs(reps, || {
            assert!(smallest_eigenpairs(SymMatrix::Sparse(&a), 0).is_err());
        });
        let theirs = median_secs(reps, || assert!(faer_is_symmetric(fa, 0.0)));
        row("symmetric check", ours, theirs);
    }
}
