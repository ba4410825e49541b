//! The process's interruption flag (`unfold_core::interrupt`, which Python sets on Ctrl-C)
//! stops every method inside its long kernels, not only at iteration boundaries: with the
//! flag set, each fit returns `Error::Interrupted` before any result, and once it is
//! cleared the same fits succeed. LL-LVM's per-point family is also stopped inside its
//! E-step, between its updates. This file holds one test, so that no other test of this
//! binary runs while the process-wide flag is set.

use nalgebra::DMatrix;
use unfold_core::{interrupt, seeded_rng, Error, Silent};
use unfold_graph::{GraphSpec, Weighting};
use unfold_models::lvm::lllvm::{FactorisedProblem, LlLvmParams};
use unfold_models::lvm::LatentVariableModel;
use unfold_models::method::Declared;
use unfold_models::registry::{FitData, Registry, Settings};

/// 400 points of a noisy curved sheet: enough for the partial eigensolvers (Lanczos) of
/// the spectral methods.
fn sheet() -> DMatrix<f64> {
    DMatrix::from_fn(400, 3, |i, j| {
        let t = 1.5 + 3.0 * i as f64 / 400.0;
        [t * t.cos(), ((i * 37) % 23) as f64 / 5.0, t * t.sin()][j]
    })
}

fn small(method: &str) -> Settings {
    let s = Settings::new().with("seed", 3usize);
    match method {
        "lllvm" => s.with("max_iter", 3usize).with("k", 6usize),
        "mpme" => s.with("lambda", 0.5),
        "spl" | "drill" | "mvu" => s.with("k", 5usize),
        "ddrtree" => s.with("ncenters", 20usize),
        "pca" | "cmds" | "kpca" | "drtree" => s,
        _ => s.with("k", 8usize),
    }
}

/// PCA of a dense matrix is one eigendecomposition of its small covariance: nothing in it
/// is long enough to check.
const ONE_STEP: [&str; 1] = ["pca"];

#[test]
fn the_interruption_flag_stops_every_method_and_clearing_it_lets_them_run() {
    let registry = Registry::builtin();
    let y = sheet();
    let data = FitData::points(&y);
    interrupt::request();
    let mut ran = Vec::new();
    for method in registry.methods() {
        let name = method.info().name;
        match registry.fit(name, &data, &small(name), &Silent) {
            Err(Error::Interrupted) => {}
            Ok(_) => ran.push(name),
            Err(e) => panic!("{name}: {e}"),
        }
    }
    interrupt::clear();
    assert_eq!(
        ran, ONE_STEP,
        "methods that ran to the end with the flag set"
    );
    for method in registry.methods() {
        let name = method.info().name;
        if let Err(e) = registry.fit(name, &data, &small(name), &Silent) {
            panic!("{name} after the flag was cleared: {e}");
        }
    }

    // LL-LVM's per-point E-step, entered with the flag set: it stops inside the step (the
    // EM driver's own checks come only after it), and runs once the flag is cleared.
    let graph = GraphSpec::knn(6)
        .build(&y, Weighting::Binary, "test", &Silent)
        .unwrap()
        .1;
    let params = LlLvmParams::new(2, 6).check().unwrap();
    let problem = FactorisedProblem::new(&y, &graph, &params).unwrap();
    let (mut q, h) = problem.init(&mut seeded_rng(1)).unwrap();
    interrupt::request();
    let stopped = problem.e_step(&mut q, &h);
    interrupt::clear();
    assert!(matches!(stopped, Err(Error::Interrupted)), "{stopped:?}");
    let (mut q, h) = problem.init(&mut seeded_rng(1)).unwrap();
    problem.e_step(&mut q, &h).unwrap();
}
