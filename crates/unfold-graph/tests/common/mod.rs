//! Helpers shared by the integration tests.
#![allow(dead_code)]

use nalgebra::DMatrix;
use rand::Rng;

/// n x p points, uniform on [0, 1)^p, from a fixed seed.
pub fn uniform(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| rng.random::<f64>())
}

/// n x p points with integer coordinates in 0..levels: many exact ties and duplicates.
pub fn grid(n: usize, p: usize, levels: u32, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| rng.random_range(0..levels) as f64)
}

/// Squared distance summed in coordinate order, written independently of the crate.
pub fn sq(y: &DMatrix<f64>, i: usize, z: &DMatrix<f64>, j: usize) -> f64 {
    let mut s = 0.0;
    for c in 0..y.ncols() {
        let d = y[(i, c)] - z[(j, c)];
        s += d * d;
    }
    s
}

/// Brute-force reference: for each query row, all reference rows sorted by
/// (distance, index), self excluded when `exclude_self`, first k kept.
pub fn naive_knn(
    reference: &DMatrix<f64>,
    queries: &DMatrix<f64>,
    k: usize,
    exclude_self: bool,
) -> (Vec<Vec<usize>>, Vec<Vec<f64>>) {
    let mut idx = Vec::new();
    let mut dst = Vec::new();
    for q in 0..queries.nrows() {
        let mut all: Vec<(f64, usize)> = (0..reference.nrows())
            .filter(|&j| !(exclude_self && j == q))
            .map(|j| (sq(reference, j, queries, q), j))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        all.truncate(k);
        idx.push(all.iter().map(|e| e.1).collect());
        dst.push(all.iter().map(|e| e.0.sqrt()).collect());
    }
    (idx, dst)
}

/// A random graph on n points: each pair is an edge with probability `prob`, weight in
/// [0.1, 2.1).
pub fn random_edges(n: usize, prob: f64, seed: u64) -> Vec<(usize, usize, f64)> {
    let mut rng = unfold_core::seeded_rng(seed);
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if rng.random::<f64>() < prob {
                edges.push((i, j, 0.1 + 2.0 * rng.random::<f64>()));
            }
        }
    }
    edges
}
