//! The same bits on any thread count: every registered method fitted, its evidence, its
//! projection of new points (where it projects) and a small selection sweep, each inside
//! rayon pools of 1, 2 and 3 threads, compared bit for bit. Every parallel kernel of the
//! workspace (rayon loops, faer's kernels through `unfold_linalg::view::par`) splits its
//! work by fixed blocks and adds partial results in block order, never by thread count.

use nalgebra::DMatrix;
use unfold::core::EvidenceKind;
use unfold::core::Silent;
use unfold::models::registry::{FitData, Registry, Settings};
use unfold::select::{Plan, Score, Sweep};

/// A noisy curved sheet in 3-D.
fn data(n: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, 3, |i, j| {
        let t = 1.5 + 3.0 * i as f64 / n as f64;
        [t * t.cos(), ((i * 37) % 11) as f64 / 5.0, t * t.sin()][j]
    })
}

/// Settings that keep each fit small.
fn small(method: &str) -> Settings {
    let s = Settings::new().with("seed", 3usize);
    match method {
        "lllvm" => s.with("max_iter", 4usize).with("k", 6usize),
        "mpme" => s.with("lambda", 0.5),
        "ddrtree" => s.with("ncenters", 20usize),
        "pca" | "cmds" | "kpca" | "drtree" => s,
        _ => s.with("k", 6usize),
    }
}

/// The bits of every number a method gives: the embedding, the evidence on the training
/// data, the projection of new points (mean and covariances), and the sweep's scores.
fn outputs(registry: &Registry, name: &str, y: &DMatrix<f64>) -> Vec<u64> {
    let fitted = registry
        .fit(name, &FitData::points(y), &small(name), &Silent)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let model = fitted.model;
    let mut bits: Vec<u64> = model.coords().iter().map(|v| v.to_bits()).collect();
    bits.push(model.evidence_on(y.into()).unwrap().value.to_bits());
    if let Some(rule) = model.out_of_sample() {
        let new = DMatrix::from_fn(3, y.ncols(), |i, j| y[(7 * i + 5, j)] * 1.01 + 0.02);
        let p = rule.project(&new).unwrap_or_else(|e| panic!("{name}: {e}"));
        bits.extend(p.mean.iter().map(|v| v.to_bits()));
        for c in p.covariance.iter().flatten() {
            bits.extend(c.iter().map(|v| v.to_bits()));
        }
    }
    let info = registry.get(name).unwrap().info();
    if info.has("k") {
        // Methods without evidence are ranked by the GP-LVM score.
        let score = match info.evidence {
            EvidenceKind::None => Score::Gplvm,
            _ => Score::Evidence,
        };
        // Two candidates run side by side; one for the slow dense methods.
        let ks = match name {
            "mvu" | "drill" => vec![5],
            _ => vec![5, 7],
        };
        let plan = Plan {
            ks,
            score,
            ..Plan::default()
        };
        let sweep = Sweep::new(registry, name, &small(name), y, plan)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let selection = sweep.run(|| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
        for trial in &selection.trials {
            let value = trial.evidence.as_ref().map_or(f64::NAN, |e| e.value);
            bits.push(value.to_bits());
        }
    }
    bits
}

#[test]
fn every_method_gives_the_same_bits_on_1_2_and_3_threads() {
    let registry = Registry::builtin();
    let y = data(120);
    assert_eq!(registry.names().len(), 16);
    let pools: Vec<rayon::ThreadPool> = [1, 2, 3]
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
        })
        .collect();
    let mut differ = Vec::new();
    for method in registry.methods() {
        let name = method.info().name;
        let runs: Vec<Vec<u64>> = pools
            .iter()
            .map(|pool| pool.install(|| outputs(&registry, name, &y)))
            .collect();
        for (t, run) in runs.iter().enumerate().skip(1) {
            if run != &runs[0] {
                let worst = run
                    .iter()
                    .zip(&runs[0])
                    .map(|(a, b)| (f64::from_bits(*a) - f64::from_bits(*b)).abs())
                    .fold(0.0, f64::max);
                let first = run.iter().zip(&runs[0]).position(|(a, b)| a != b);
                differ.push(format!(
                    "{name} on {} threads (by {worst:e}, first at {first:?} of {})",
                    t + 1,
                    run.len()
                ));
            }
        }
    }
    // LL-LVM's dense (n dim) x (n dim) products run in parallel from 512 rows on.
    let y = data(260);
    let runs: Vec<Vec<u64>> = pools
        .iter()
        .map(|pool| pool.install(|| lllvm_fit(&registry, &y)))
        .collect();
    if runs[1..].iter().any(|run| run != &runs[0]) {
        differ.push("lllvm at n = 260".into());
    }
    // DDRTree from 96 features on takes R^T Y by dense products over blocks of rows.
    let wide = DMatrix::from_fn(1500, 120, |i, j| {
        let t = i as f64 / 1500.0;
        ((j + 1) as f64 * t * 3.0).sin() + 0.01 * ((i * 31 + j * 17) % 13) as f64
    });
    let runs: Vec<Vec<u64>> = pools
        .iter()
        .map(|pool| {
            pool.install(|| {
                let fitted = registry
                    .fit(
                        "ddrtree",
                        &FitData::points(&wide),
                        &small("ddrtree"),
                        &Silent,
                    )
                    .unwrap();
                fitted.model.coords().iter().map(|v| v.to_bits()).collect()
            })
        })
        .collect();
    if runs[1..].iter().any(|run| run != &runs[0]) {
        differ.push("ddrtree at D = 120".into());
    }
    assert!(
        differ.is_empty(),
        "not the same bits as on 1 thread: {differ:?}"
    );
}

/// The bits of LL-LVM's embedding and bound after two EM iterations.
fn lllvm_fit(registry: &Registry, y: &DMatrix<f64>) -> Vec<u64> {
    let settings = small("lllvm").with("max_iter", 2usize);
    let model = registry
        .fit("lllvm", &FitData::points(y), &settings, &Silent)
        .unwrap()
        .model;
    let mut bits: Vec<u64> = model.coords().iter().map(|v| v.to_bits()).collect();
    bits.push(model.evidence().value.to_bits());
    bits
}
