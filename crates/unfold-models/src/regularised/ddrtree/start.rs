//! The start of a fit: the top eigenvectors that give `W` (also the `W` step of every
//! update), and the k-means starts of the centres: the R package's, and the same on
//! shuffled rows for further restarts.

use nalgebra::DMatrix;
use rand::seq::SliceRandom;
use unfold_core::{seeded_rng, Result};
use unfold_eval::{kmeans_with, EmptyClusters, KMeansInit, KMeansOptions};
use unfold_linalg::soft_assign::nearest_centres;
use unfold_linalg::{largest_eigenpairs, SymMatrix};

/// Top-`dim` eigenvectors (descending eigenvalues) of a symmetric matrix.
pub(crate) fn top_eigenvectors(a: &DMatrix<f64>, dim: usize) -> Result<DMatrix<f64>> {
    Ok(largest_eigenpairs(SymMatrix::Dense(a), dim)?.vectors)
}

/// The R package's k-means start of the centres: Lloyd's k-means on the rows of `z`
/// (`unfold_eval::kmeans_with`) started from the rows `floor(linspace(1, N, K)) - 1` (the
/// package's `seq(1, N, length.out = K)` subsetting), at most [`KMEANS_ROUNDS`] rounds,
/// stopping early when the assignments no longer change or the squared centre shift is at
/// most [`KMEANS_TOL`] times the mean per-column variance. An empty cluster keeps its
/// previous centre. The labels come from the vectorised [`nearest_centres`].
pub(crate) fn kmeans_evenly_started(z: &DMatrix<f64>, k: usize) -> Result<DMatrix<f64>> {
    let opts = KMeansOptions {
        max_iter: KMEANS_ROUNDS,
        tol: KMEANS_TOL,
        init: KMeansInit::EvenlySpaced,
        empty: EmptyClusters::KeepCentre,
        ..KMeansOptions::default()
    };
    Ok(kmeans_with(z, k, &opts, &nearest_centres)?.centres)
}

/// The centres of a further restart: the R package's start on the rows of `z` in an order
/// shuffled from `seed`, so that its evenly spaced rows are `K` rows drawn at random (a
/// start whose distribution does not depend on the order of the rows). k-means++ seeding
/// was measured first and chose worse trees with 20 genes
/// (`bench/results/trajectory_starts.md`).
pub(crate) fn kmeans_shuffled_started(
    z: &DMatrix<f64>,
    k: usize,
    seed: u64,
) -> Result<DMatrix<f64>> {
    let mut order: Vec<usize> = (0..z.nrows()).collect();
    order.shuffle(&mut seeded_rng(seed));
    kmeans_evenly_started(&z.select_rows(&order), k)
}

/// Rounds of Lloyd's k-means in the centre initialisation (the R port's `max_iter = 10`).
const KMEANS_ROUNDS: usize = 10;
/// Relative centre-shift tolerance of the k-means initialisation.
const KMEANS_TOL: f64 = 1e-4;
