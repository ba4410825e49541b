//! Tests of DDRTree, split as the math is: the update (`update`), the loop of Algorithm 2
//! as a fit (`fit`), the consensus of starts (`consensus`), the settings chosen from the data (`defaults`) and the ordering
//! (`ordering`); the data and first steps they share are here.

mod consensus;
mod defaults;
mod fit;
mod ordering;
mod update;

use super::iterate::sum_terms;
use super::*;
use crate::traits::Embedding;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use unfold_linalg::gemm::tr_mul_self;
use unfold_linalg::soft_assign::{Assignment, DENSE_PRODUCT_COLS};
use unfold_linalg::symmetrised;
use unfold_linalg::view::as_faer;

/// A noisy three-branch tree in 2-D, rotated into `p` dimensions, plus an offset.
pub(crate) fn branching(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    let basis = DMatrix::<f64>::from_fn(p, p, |_, _| StandardNormal.sample(&mut rng))
        .qr()
        .q();
    let dirs = [(1.0, 0.0), (-0.5, 0.8), (-0.5, -0.8)];
    DMatrix::from_fn(n, p, |_, _| 0.0).map_with_location(|i, j, _| {
        let (dx, dy) = dirs[i % 3];
        let t = (i / 3) as f64 / (n / 3) as f64 * 4.0;
        let latent = [t * dx, t * dy];
        let mut v = 1.5 + 0.05 * rng.random::<f64>();
        for (l, &x) in latent.iter().enumerate() {
            v += basis[(j, l)] * x;
        }
        v
    })
}

fn noise(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| StandardNormal.sample(&mut rng))
}

/// The tree, its Laplacian and the assignments of a first iteration.
type FirstStep = (Vec<(usize, usize, f64)>, DMatrix<f64>, Assignment);

/// A problem at its first iteration: state, tree, Laplacian and assignments.
fn first_iteration(y: &DMatrix<f64>, k: usize, sigma: f64) -> (Problem<'_>, FirstStep) {
    let problem = Problem::new(as_faer(y), 3.0, sigma, 2.0, 2);
    let w = top_eigenvectors(&problem.yty, 2).unwrap();
    let z = y * &w;
    let c = kmeans_evenly_started(&z, k).unwrap();
    let step = problem.tree_step(&State { w, z, c }, None).unwrap();
    (problem, (step.edges, step.lap, step.assign))
}

fn centred(y: DMatrix<f64>) -> DMatrix<f64> {
    let mean = y.row_mean();
    DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - mean[j])
}
