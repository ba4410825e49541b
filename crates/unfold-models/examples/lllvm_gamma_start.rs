//! The paper's start of LL-LVM's noise precision (`gamma0 = 1`) against one fitted to the
//! spectral start, in both variational families, for `bench/lllvm/gamma_start.py`.
//!
//! `cargo run --release -p unfold-models --example lllvm_gamma_start -- Y.npy K SEED ITERS`
//! fits, on the kNN graph of `Y`'s rows (latent dimension 2, the spectral start of SEED,
//! the defaults otherwise, exactly ITERS EM iterations), each family twice: with
//! `gamma0 = 1`, and with `gamma0` fitted to the start. The fitted value is the fixed point
//! of the M-step's closed form for gamma at the spectral start's latent means, with the
//! full family's q(C) from them (twenty rounds of: the start at `gamma0`, then `gamma0`
//! from it). It prints one JSON object: the fitted `gamma0`, and each fit's bound and the
//! trustworthiness of its latent means against `Y` (10 neighbours).

use nalgebra::DMatrix;
use unfold_core::{seeded_rng, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, Weighting};
use unfold_models::lvm::LatentVariableModel;
use unfold_models::method::{Checked, Declared};
use unfold_models::{FactorisedProblem, LlLvmParams, LlLvmProblem};
use unfold_vem::{fit, VemOptions};

/// Trustworthiness of the latent means against the data, 10 neighbours.
fn trust(y: &DMatrix<f64>, x: &DMatrix<f64>) -> f64 {
    unfold_eval::trustworthiness(y, x, 10).expect("at least 21 points")
}

/// The per-point family's means in the rows' order (row `a` of `m` is point `order[a]`).
fn in_callers_order(m: &DMatrix<f64>, order: &[usize]) -> DMatrix<f64> {
    let mut out = m.clone();
    for (a, &i) in order.iter().enumerate() {
        out.set_row(i, &m.row(a));
    }
    out
}

fn checked(k: usize, gamma0: f64) -> Checked<LlLvmParams> {
    let mut params = LlLvmParams::new(2, k);
    params.gamma0 = gamma0;
    params.check().expect("valid settings")
}

/// The fixed point of gamma's M-step at the spectral start of `seed`.
fn fitted_gamma0(y: &DMatrix<f64>, graph: &NeighbourGraph, k: usize, seed: u64) -> f64 {
    let mut gamma0 = 1.0;
    for _ in 0..20 {
        let problem = LlLvmProblem::new(y, graph, &checked(k, gamma0)).expect("the problem");
        let (q, mut h) = problem.init(&mut seeded_rng(seed)).expect("the start");
        problem.m_step(&q, &mut h).expect("the M-step");
        gamma0 = h.gamma;
    }
    gamma0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, y_path, k, seed, iters] = args.as_slice() else {
        panic!("usage: lllvm_gamma_start Y.npy K SEED ITERS");
    };
    let (k, seed, iters): (usize, u64, usize) = (
        k.parse().expect("K"),
        seed.parse().expect("SEED"),
        iters.parse().expect("ITERS"),
    );
    let y = unfold_data::read_npy(std::path::Path::new(y_path)).expect("a readable .npy");
    let (_, graph) = GraphSpec::knn(k)
        .build(&y, Weighting::Binary, "LL-LVM", &Silent)
        .expect("a kNN graph");
    let options = VemOptions {
        max_iter: iters,
        abs_tol: 0.0,
        rel_tol: 0.0,
        seed,
        ..VemOptions::default()
    };
    let fitted = fitted_gamma0(&y, &graph, k, seed);
    let mut fields = vec![format!("\"fitted_gamma0\": {fitted}")];
    for (name, gamma0) in [("paper", 1.0), ("fitted", fitted)] {
        let params = checked(k, gamma0);
        let full = LlLvmProblem::new(&y, &graph, &params).expect("the full family's problem");
        let run = fit(&full, &options, &Silent).expect("a fit").into_best();
        fields.push(format!("\"full_{name}_bound\": {}", run.evidence.value));
        fields.push(format!(
            "\"full_{name}_trust\": {}",
            trust(&y, &run.posterior.mu_x)
        ));
        let per_point = FactorisedProblem::new(&y, &graph, &params).expect("the problem");
        let run = fit(&per_point, &options, &Silent)
            .expect("a fit")
            .into_best();
        let x = in_callers_order(&run.posterior.m, per_point.order());
        fields.push(format!(
            "\"per_point_{name}_bound\": {}",
            run.evidence.value
        ));
        fields.push(format!("\"per_point_{name}_trust\": {}", trust(&y, &x)));
    }
    println!("{{{}}}", fields.join(", "));
}
