//! Two questions about LL-LVM's start, for `bench/lllvm/family_start.py` and
//! `bench/lllvm/gamma_start.py`.
//!
//! `cargo run --release -p unfold-models --example lllvm_starts -- MODE Y.npy K SEED ITERS`
//! fits on the kNN graph of `Y`'s rows (latent dimension 2, the spectral start of SEED, the
//! defaults otherwise, exactly ITERS EM iterations) and prints one JSON object: each fit's
//! bound (the per-point family's before any factor is freed: the bound EM climbs) and the
//! trustworthiness of its latent means against `Y` (10 neighbours).
//!
//! - `MODE = family`: where the per-point family goes from the full family's fit. Fits
//!   `full` (the full family), `own` (the per-point family from its own start) and `warm`
//!   (the per-point family from the full fit's marginals,
//!   [`FactorisedPosterior::marginals_of`], and hyperparameters).
//! - `MODE = gamma`: the paper's `gamma0 = 1` against a `gamma0` fitted to the start, each
//!   family with each (`full_paper`, `full_fitted`, `per_point_paper`,
//!   `per_point_fitted`). The fitted value is the fixed point of the M-step's closed form
//!   for gamma at the spectral start's latent means, with the full family's q(C) from them
//!   (rounds of: the start at `gamma0`, then `gamma0` from it, until it changes by less
//!   than 1e-9 of itself); it is printed as `fitted_gamma0`.

use nalgebra::DMatrix;
use unfold_core::{seeded_rng, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, Weighting};
use unfold_models::lvm::lllvm::FactorisedPosterior;
use unfold_models::lvm::LatentVariableModel;
use unfold_models::method::{Checked, Declared};
use unfold_models::{FactorisedProblem, LlLvmParams, LlLvmProblem};
use unfold_vem::{fit, run_from, VemOptions};

/// The data, its graph and the fits' settings.
struct Setup {
    y: DMatrix<f64>,
    graph: NeighbourGraph,
    k: usize,
    seed: u64,
    options: VemOptions,
}

impl Setup {
    fn params(&self, gamma0: f64) -> Checked<LlLvmParams> {
        let mut params = LlLvmParams::new(2, self.k);
        params.gamma0 = gamma0;
        params.check().expect("valid settings")
    }

    fn full_problem(&self, gamma0: f64) -> LlLvmProblem {
        LlLvmProblem::new(&self.y, &self.graph, &self.params(gamma0)).expect("the problem")
    }

    fn per_point_problem(&self, gamma0: f64) -> FactorisedProblem {
        FactorisedProblem::new(&self.y, &self.graph, &self.params(gamma0)).expect("the problem")
    }

    /// Trustworthiness of latent means against the data, 10 neighbours.
    fn trust(&self, x: &DMatrix<f64>) -> f64 {
        unfold_eval::trustworthiness(&self.y, x, 10).expect("at least 21 points")
    }

    /// The same for the per-point family's means (row `a` is point `order[a]`).
    fn trust_per_point(&self, m: &DMatrix<f64>, problem: &FactorisedProblem) -> f64 {
        let mut x = m.clone();
        for (a, &i) in problem.order().iter().enumerate() {
            x.set_row(i, &m.row(a));
        }
        self.trust(&x)
    }
}

/// `MODE = family` (module docs).
fn family(s: &Setup) -> Vec<(String, f64)> {
    let full_problem = s.full_problem(1.0);
    let full = fit(&full_problem, &s.options, &Silent)
        .expect("the full family's fit")
        .into_best();
    let per_point = s.per_point_problem(1.0);
    let own = fit(&per_point, &s.options, &Silent)
        .expect("the per-point family's fit")
        .into_best();
    let start = FactorisedPosterior::marginals_of(&full.posterior, per_point.order());
    let warm = run_from(&per_point, start, full.hyper, &s.options, 0, &Silent)
        .expect("the per-point family's fit from the full one");
    vec![
        ("full_bound".into(), full.evidence.value),
        ("own_bound".into(), own.evidence.value),
        ("warm_bound".into(), warm.evidence.value),
        ("full_trust".into(), s.trust(&full.posterior.mu_x)),
        (
            "own_trust".into(),
            s.trust_per_point(&own.posterior.m, &per_point),
        ),
        (
            "warm_trust".into(),
            s.trust_per_point(&warm.posterior.m, &per_point),
        ),
    ]
}

/// The fixed point of gamma's M-step at the spectral start (module docs), to a relative
/// change of 1e-9 (the rounds contract by about 8x each on the bench's data).
fn fitted_gamma0(s: &Setup) -> f64 {
    let mut gamma0 = 1.0;
    for _ in 0..100 {
        let problem = s.full_problem(gamma0);
        let (q, mut h) = problem.init(&mut seeded_rng(s.seed)).expect("the start");
        problem.m_step(&q, &mut h).expect("the M-step");
        let done = (h.gamma - gamma0).abs() <= 1e-9 * h.gamma;
        gamma0 = h.gamma;
        if done {
            break;
        }
    }
    gamma0
}

/// `MODE = gamma` (module docs).
fn gamma(s: &Setup) -> Vec<(String, f64)> {
    let fitted = fitted_gamma0(s);
    let mut out = vec![("fitted_gamma0".into(), fitted)];
    for (name, gamma0) in [("paper", 1.0), ("fitted", fitted)] {
        let full = fit(&s.full_problem(gamma0), &s.options, &Silent)
            .expect("the full family's fit")
            .into_best();
        out.push((format!("full_{name}_bound"), full.evidence.value));
        out.push((format!("full_{name}_trust"), s.trust(&full.posterior.mu_x)));
        let per_point = s.per_point_problem(gamma0);
        let run = fit(&per_point, &s.options, &Silent)
            .expect("the per-point family's fit")
            .into_best();
        out.push((format!("per_point_{name}_bound"), run.evidence.value));
        let trust = s.trust_per_point(&run.posterior.m, &per_point);
        out.push((format!("per_point_{name}_trust"), trust));
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, mode, y_path, k, seed, iters] = args.as_slice() else {
        panic!("usage: lllvm_starts family|gamma Y.npy K SEED ITERS");
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
    let setup = Setup {
        y,
        graph,
        k,
        seed,
        options,
    };
    let fields = match mode.as_str() {
        "family" => family(&setup),
        "gamma" => gamma(&setup),
        other => panic!("MODE is family or gamma, not {other}"),
    };
    let fields: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("\"{name}\": {value}"))
        .collect();
    println!("{{{}}}", fields.join(", "));
}
