//! Where the per-point LL-LVM family goes from the full family's fit, for
//! `bench/lllvm/family_start.py`.
//!
//! `cargo run --release -p unfold-models --example lllvm_family_start -- Y.npy K SEED ITERS` fits, on the kNN graph of `Y`'s rows (latent dimension 2, the defaults
//! otherwise, exactly ITERS EM iterations):
//! - `full`: the full family from the spectral start of SEED;
//! - `own`: the per-point family from the spectral start of SEED;
//! - `warm`: the per-point family from the full fit's marginals
//!   ([`FactorisedPosterior::marginals_of`]) and hyperparameters.
//!
//! It prints one JSON object: each fit's bound (the per-point ones before any factor is
//! freed: the bound EM climbs) and the trustworthiness of its latent means against `Y`
//! (10 neighbours).

use nalgebra::DMatrix;
use unfold_core::Silent;
use unfold_graph::{GraphSpec, Weighting};
use unfold_models::lvm::lllvm::FactorisedPosterior;
use unfold_models::method::Declared;
use unfold_models::{FactorisedProblem, LlLvmParams, LlLvmProblem};
use unfold_vem::{fit, run_from, VemOptions};

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, y_path, k, seed, iters] = args.as_slice() else {
        panic!("usage: lllvm_family_start Y.npy K SEED ITERS");
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
    let params = LlLvmParams::new(2, k).check().expect("valid settings");
    let options = VemOptions {
        max_iter: iters,
        abs_tol: 0.0,
        rel_tol: 0.0,
        seed,
        ..VemOptions::default()
    };

    let full_problem = LlLvmProblem::new(&y, &graph, &params).expect("the full family's problem");
    let full = fit(&full_problem, &options, &Silent)
        .expect("the full family's fit")
        .into_best();

    let per_point = FactorisedProblem::new(&y, &graph, &params).expect("the per-point problem");
    let order = per_point.order().to_vec();
    let own = fit(&per_point, &options, &Silent)
        .expect("the per-point family's fit")
        .into_best();

    let start = FactorisedPosterior::marginals_of(&full.posterior, &order);
    let warm = run_from(&per_point, start, full.hyper, &options, 0, &Silent)
        .expect("the per-point family's fit from the full one");

    let own_x = in_callers_order(&own.posterior.m, &order);
    let warm_x = in_callers_order(&warm.posterior.m, &order);
    println!(
        "{{\"full_bound\": {}, \"own_bound\": {}, \"warm_bound\": {}, \"full_trust\": {}, \
         \"own_trust\": {}, \"warm_trust\": {}}}",
        full.evidence.value,
        own.evidence.value,
        warm.evidence.value,
        trust(&y, &full.posterior.mu_x),
        trust(&y, &own_x),
        trust(&y, &warm_x)
    );
}
