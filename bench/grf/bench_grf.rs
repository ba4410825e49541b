//! MEU at scale (issue 15): one configuration per run, one Markdown table row.
//!
//! `cargo run --release --example bench_grf -- <data> <n> <fit|eval|analyse> [auto|amd|nd]`
//! where `<data>` is `roll` (Swiss roll, noise 0.05), `roll-noisy` (noise 0.5), `s-curve`
//! (noise 0.05) or `roll-p100` (the roll mapped linearly into 100 dimensions plus noise 0.05);
//! k = 10 (union graph), gamma = 1e-4. The last argument is the sparse engine's
//! fill-reducing ordering: `auto` by default, as a user's fit (from 10,000 points on the
//! cheaper factorisation of minimum degree and nested dissection); `amd` or `nd` force one.
//! The fit always runs as a user's, with `auto`. It prints: the graph's edges, the ordering
//! used, the seconds of the symbolic analysis, the sparse factor's stored values, the
//! seconds of one log-likelihood-and-gradient evaluation by the sparse path and (up to
//! n = 4000, where the n x n matrices fit comfortably) by the dense path, and with `fit`
//! the whole sparse fit to pgtol 1e-5 (kNN graph, search, embedding), its iterations and
//! stopping rule (each evaluation of the search goes to stderr with its time); `fit-factr`
//! also stops, as SciPy's L-BFGS-B does by default, when the log-likelihood's relative
//! change falls below 1e7 * eps (the rule for n = 10^6, see the table's notes); last, the
//! process's peak resident memory. Each evaluation time is the median of 3 at the initial
//! multipliers. `analyse` prints one row per ordering with only the symbolic analysis:
//! its seconds, the factor's values and the factorisation's Gflop (load-independent).
//! `bench/grf/run.sh` runs the matrix into `bench/results/grf.md`.

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use std::time::Instant;
use unfold::models::grf::grounded::SparseOrdering;
use unfold::models::grf::meu::MeuField;
use unfold::models::grf::Solver;
use unfold::models::{GaussianRandomField, MeuParams};

#[path = "../peak_memory.rs"]
mod peak_memory;
use peak_memory::peak_mib;

fn data(name: &str, n: usize) -> DMatrix<f64> {
    let synthetic = |d: unfold::core::Result<unfold::data::Dataset>| {
        d.expect("valid generator settings").points
    };
    use unfold::data::synthetic::{s_curve, swiss_roll};
    match name {
        "roll" => synthetic(swiss_roll(n, 0.05, 1)),
        "roll-noisy" => synthetic(swiss_roll(n, 0.5, 1)),
        "s-curve" => synthetic(s_curve(n, 0.05, 1)),
        "roll-p100" => {
            let roll = synthetic(swiss_roll(n, 0.05, 1));
            let p = 100;
            let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(2);
            let mut draw = || -> f64 { StandardNormal.sample(&mut rng) };
            let map = DMatrix::from_fn(3, p, |_, _| draw());
            let noise = DMatrix::from_fn(n, p, |_, _| 0.05 * draw());
            roll * map / (p as f64).sqrt() + noise
        }
        other => panic!("unknown data set {other}"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn eval_seconds(field: &MeuField, lambda: &[f64]) -> f64 {
    let mut g = vec![0.0; lambda.len()];
    median(
        (0..3)
            .map(|_| {
                let t = Instant::now();
                field
                    .log_likelihood_gradient(lambda, &mut g)
                    .expect("gradient");
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

/// Prints every evaluation of the search to stderr with the seconds since the start (the
/// progress of a long fit, in its log).
struct Progress(Instant);

impl unfold::core::Observer for Progress {
    fn iteration(&self, _restart: usize, evaluation: usize, evidence: &unfold::Evidence) {
        eprintln!(
            "evaluation {evaluation} at {:.1} s: {} {:.6e}",
            self.0.elapsed().as_secs_f64(),
            evidence.kind,
            evidence.value
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, n, mode, ordering) = match &args[..] {
        [name, n, mode] => (name, n, mode, "auto"),
        [name, n, mode, ordering] => (name, n, mode, ordering.as_str()),
        _ => {
            eprintln!(
                "usage: bench_grf <roll|roll-noisy|s-curve|roll-p100> <n> \
                 <fit|fit-factr|eval|analyse> \
                 [auto|amd|nd]"
            );
            std::process::exit(2);
        }
    };
    let choice = match ordering {
        "auto" => SparseOrdering::Auto,
        "amd" => SparseOrdering::Amd,
        "nd" => SparseOrdering::Dissection,
        other => panic!("unknown ordering {other}"),
    };
    let n: usize = n.parse().expect("n is an integer");
    let y = data(name, n);
    let p = y.ncols();
    let (yc, _) = unfold::data::centre(&y);
    let graph = unfold::graph::GraphSpec::knn(10)
        .build(
            &y,
            unfold::graph::Weighting::Binary,
            "bench",
            &unfold::prelude::Silent,
        )
        .expect("kNN graph")
        .1;
    let edges: Vec<(usize, usize)> = graph.edges().iter().map(|&(i, j, _)| (i, j)).collect();
    if mode == "analyse" {
        // Both orderings' symbolic analyses only: no numeric work, independent of the load.
        for (label, choice) in [
            ("amd", SparseOrdering::Amd),
            ("nd", SparseOrdering::Dissection),
        ] {
            let field = MeuField::new(&yc, edges.clone(), 1e-4).with_ordering(choice);
            let t = Instant::now();
            let engine = field.engine().expect("analysis");
            let seconds = t.elapsed().as_secs_f64();
            let analysis = engine.analysis();
            println!(
                "| {name} | {n} | {p} | {} | {label} | {seconds:.2} | {} | {:.1} | {:.3} |",
                edges.len(),
                analysis.factor_len(),
                analysis.factor_len() as f64 / n as f64,
                analysis.factor_flops() / 1e9
            );
        }
        return;
    }
    let sparse = MeuField::new(&yc, edges.clone(), 1e-4)
        .with_solver(Solver::Sparse)
        .with_ordering(choice);
    let lambda = sparse.initial();
    let t = Instant::now();
    let engine = sparse.engine().expect("analysis");
    let analysis_s = t.elapsed().as_secs_f64();
    let stored = engine.analysis().factor_len();
    let used = if engine.dissected() { "nd" } else { "amd" };
    let sparse_s = eval_seconds(&sparse, &lambda);
    let dense_s = (n <= 4000).then(|| {
        let dense = MeuField::new(&yc, edges.clone(), 1e-4).with_solver(Solver::Dense);
        eval_seconds(&dense, &lambda)
    });
    let (dense_cell, ratio_cell) = match dense_s {
        Some(d) => (format!("{d:.4}"), format!("{:.0}x", d / sparse_s)),
        None => ("-".into(), "-".into()),
    };
    // The fit builds its own engine: free this one's analysis first.
    drop(sparse);
    let fit_cells = if mode == "fit" || mode == "fit-factr" {
        let t = Instant::now();
        let mut params = MeuParams::new(2, 10).solver(Solver::Sparse);
        if mode == "fit-factr" {
            // SciPy's L-BFGS-B default: also stop when the relative change of the
            // log-likelihood falls below 1e7 * eps (about 2.2e-9).
            params = params.factr(1e7);
        }
        let meu = params
            .fit_observed(&y, None, &Progress(t))
            .expect("MEU fits");
        let fit = t.elapsed().as_secs_f64();
        let c = &meu.convergence;
        format!(
            "{fit:.1} | {} | {} | {} | {:.1e}",
            c.iterations, meu.report.evaluations, c.stopped_by, meu.report.projected_gradient
        )
    } else {
        "- | - | - | - | -".into()
    };
    println!(
        "| {name} | {n} | {p} | {} | {used} | {analysis_s:.2} | {stored} | {:.1} | {sparse_s:.4} | {dense_cell} | {ratio_cell} | {fit_cells} | {:.0} |",
        edges.len(),
        stored as f64 / n as f64,
        peak_mib()
    );
}
