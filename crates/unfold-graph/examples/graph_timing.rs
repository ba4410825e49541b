//! Wall-clock timings of the graph kernels on the sizes the benchmarks use.
//!
//! `cargo run --release -p unfold-graph --example graph_timing`
//! Each figure is the best of several runs. Set `RAYON_NUM_THREADS` to fix the threads.

use nalgebra::DMatrix;
use rand::Rng;
use std::time::Instant;
use unfold_graph::{
    knn, knn_with, minimum_spanning_tree, shortest_paths, KnnAlgorithm, NeighbourGraph,
    Symmetrisation, Weighting,
};

/// n x p points uniform on the unit cube (intrinsic dimension p).
fn uniform(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| rng.random::<f64>())
}

/// A swiss roll (a 2-D sheet curled in 3-D) mixed into p coordinates by a random matrix
/// (intrinsic dimension 2).
fn sheet(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    let roll = DMatrix::from_fn(n, 3, |_, _| rng.random::<f64>());
    let roll = DMatrix::from_fn(n, 3, |i, c| {
        let a = 1.5 * std::f64::consts::PI * (1.0 + 2.0 * roll[(i, 0)]);
        [a * a.cos(), 20.0 * roll[(i, 1)], a * a.sin()][c]
    });
    let mix = DMatrix::from_fn(3, p, |_, _| rng.random::<f64>() - 0.5);
    roll * mix
}

/// Best wall time over `reps` runs of `f`, formatted in milliseconds.
fn best_ms<T>(reps: usize, mut f: impl FnMut() -> T) -> String {
    let best = (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min);
    format!("{best:.1} ms")
}

fn main() {
    println!("threads: {}", rayon::current_num_threads());
    println!("kNN, k = 10: kd-tree | brute force | auto");
    for (n, p) in [(5000, 3), (20000, 3), (5000, 8), (5000, 50), (20000, 50)] {
        for (name, y) in [("uniform", uniform(n, p, 1)), ("sheet", sheet(n, p, 1))] {
            let tree = if p <= 8 || name == "sheet" {
                best_ms(3, || knn_with(&y, 10, KnnAlgorithm::KdTree).unwrap())
            } else {
                "(slow)".into()
            };
            let brute = best_ms(3, || knn_with(&y, 10, KnnAlgorithm::BruteForce).unwrap());
            let auto = best_ms(3, || knn(&y, 10).unwrap());
            println!("  n={n:>5} p={p:>2} {name:>7}: {tree} | {brute} | {auto}");
        }
    }
    let y = uniform(5000, 3, 2);
    let r = knn(&y, 10).unwrap();
    let g = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Distance).unwrap();
    println!(
        "10-NN union graph, n = 5000 uniform in 3-D: {} edges",
        g.n_edges()
    );
    let build = best_ms(5, || {
        NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Distance)
    });
    println!("  from_knn: {build}");
    println!(
        "  laplacian_sparse: {}",
        best_ms(5, || g.laplacian_sparse())
    );
    println!(
        "  minimum_spanning_tree: {}",
        best_ms(5, || minimum_spanning_tree(&g))
    );
    println!(
        "  shortest_paths (all pairs): {}",
        best_ms(3, || shortest_paths(&g))
    );
    let ball = best_ms(5, || {
        NeighbourGraph::epsilon_ball(&y, 0.08, Weighting::Binary)
    });
    println!("  epsilon_ball r = 0.08: {ball}");
}
