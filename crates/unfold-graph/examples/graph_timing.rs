//! Wall-clock timings of the graph kernels on the sizes the benchmarks use.
//!
//! `cargo run --release -p unfold-graph --example graph_timing`
//! Each line is the best of several runs, in milliseconds.

use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_graph::{
    knn, knn_with, minimum_spanning_tree, shortest_paths, KnnAlgorithm, NeighbourGraph,
    Symmetrisation, Weighting,
};

fn uniform(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| rng.random::<f64>())
}

/// Best wall time in milliseconds over `reps` runs of `f`.
fn best_ms<T>(reps: usize, mut f: impl FnMut() -> T) -> String {
    let best = (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min);
    format!("{best:.2} ms")
}

fn main() {
    println!("threads: {}", rayon::current_num_threads());
    for (n, p) in [
        (5000, 3),
        (20000, 3),
        (5000, 8),
        (5000, 12),
        (5000, 16),
        (5000, 50),
        (20000, 50),
    ] {
        let y = uniform(n, p, 1);
        let tree = if p <= 16 {
            best_ms(5, || knn_with(&y, 10, KnnAlgorithm::KdTree).unwrap())
        } else {
            "-".into()
        };
        let brute = best_ms(3, || knn_with(&y, 10, KnnAlgorithm::BruteForce).unwrap());
        let auto = best_ms(3, || knn(&y, 10).unwrap());
        println!("knn k=10 n={n} p={p}: kd-tree {tree}, brute force {brute}, auto {auto}");
    }
    let y = uniform(5000, 3, 2);
    let r = knn(&y, 10).unwrap();
    let g = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Distance).unwrap();
    println!("10-NN union graph n=5000: {} edges", g.n_edges());
    let build = best_ms(10, || {
        NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Distance).unwrap()
    });
    println!("from_knn: {build}");
    let lap = best_ms(10, || g.laplacian_sparse());
    println!("laplacian_sparse: {lap}");
    let mst = best_ms(10, || minimum_spanning_tree(&g).unwrap());
    println!("minimum_spanning_tree: {mst}");
    let sp = best_ms(3, || shortest_paths(&g).unwrap());
    println!("shortest_paths (all pairs): {sp}");
    let ball = best_ms(5, || {
        NeighbourGraph::epsilon_ball(&y, 0.08, Weighting::Binary).unwrap()
    });
    println!("epsilon_ball r=0.08 n=5000 p=3: {ball}");
}
