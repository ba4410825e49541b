//! The start of a fit: the top eigenvectors that give `W` (also the `W` step of every
//! update), and the k-means starts of the centres: the R package's, and seeded k-means++
//! ones for further restarts.

use nalgebra::DMatrix;
use unfold_core::Result;
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
    kmeans_started(z, k, KMeansInit::EvenlySpaced, 0)
}

/// The centres of a further restart: the same rounds of Lloyd's k-means as
/// [`kmeans_evenly_started`], started by k-means++ seeding (Arthur and Vassilvitskii 2007)
/// drawn from `seed`: a start whose distribution does not depend on the order of the
/// rows.
pub(crate) fn kmeans_plus_plus_started(
    z: &DMatrix<f64>,
    k: usize,
    seed: u64,
) -> Result<DMatrix<f64>> {
    kmeans_started(z, k, KMeansInit::PlusPlus, seed)
}

fn kmeans_started(z: &DMatrix<f64>, k: usize, init: KMeansInit, seed: u64) -> Result<DMatrix<f64>> {
    let opts = KMeansOptions {
        restarts: 1,
        max_iter: KMEANS_ROUNDS,
        tol: KMEANS_TOL,
        seed,
        init,
        empty: EmptyClusters::KeepCentre,
    };
    Ok(kmeans_with(z, k, &opts, &nearest_centres)?.centres)
}

/// Rounds of Lloyd's k-means in the centre initialisation (the R port's `max_iter = 10`).
const KMEANS_ROUNDS: usize = 10;
/// Relative centre-shift tolerance of the k-means initialisation.
const KMEANS_TOL: f64 = 1e-4;
