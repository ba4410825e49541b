//! Data of extreme magnitude: every registered method, given data scaled to about 1e300
//! (squared distances overflow) or 1e-300 (they underflow), refuses it up front with a
//! message that names the magnitude and says to standardise, never an `inf`/`NaN`
//! message from deep inside and never a silent embedding; the same for points to project.
//! Kernel PCA's default bandwidth on data of large or tiny (but computable) scale is
//! refused as well, since its kernel is then trivial.

use nalgebra::DMatrix;
use unfold::core::Silent;
use unfold::models::registry::{FitData, Registry, Settings};

/// A noisy curved sheet: 50 points in 3-D.
fn data() -> DMatrix<f64> {
    DMatrix::from_fn(50, 3, |i, j| {
        let t = 1.5 + 3.0 * i as f64 / 50.0;
        [t * t.cos(), ((i * 37) % 11) as f64 / 5.0, t * t.sin()][j]
    })
}

fn small(method: &str) -> Settings {
    let s = Settings::new().with("seed", 3usize);
    match method {
        "lllvm" => s.with("max_iter", 3usize).with("k", 6usize),
        "ddrtree" => s.with("ncenters", 20usize),
        "pca" | "cmds" | "kpca" | "drtree" | "mpme" => s,
        _ => s.with("k", 6usize),
    }
}

/// The message of a refused magnitude.
fn assert_refused(text: &str, what: &str) {
    for part in ["largest absolute value", "--preprocess scale"] {
        assert!(text.contains(part), "{what}: {part:?} missing from {text}");
    }
    let lower = text.to_lowercase();
    assert!(
        !lower.contains(" inf ") && !lower.contains("nan"),
        "{what}: {text}"
    );
}

#[test]
fn every_method_refuses_data_whose_squares_overflow_or_underflow() {
    let registry = Registry::builtin();
    let y = data();
    for method in registry.methods() {
        let name = method.info().name;
        for scale in [1e300, 1e-300] {
            let scaled = &y * scale;
            match registry.fit(name, &FitData::points(&scaled), &small(name), &Silent) {
                Ok(_) => panic!("{name} fitted data scaled by {scale:e}"),
                Err(e) => assert_refused(&e.to_string(), &format!("{name} at {scale:e}")),
            }
        }
    }
}

#[test]
fn points_to_project_of_extreme_magnitude_are_refused() {
    let registry = Registry::builtin();
    let y = data();
    for method in registry.methods() {
        let info = method.info();
        if !info.projects {
            continue;
        }
        let model = registry
            .fit(info.name, &FitData::points(&y), &small(info.name), &Silent)
            .unwrap()
            .model;
        let rule = model.out_of_sample().unwrap();
        for scale in [1e300, 1e-300] {
            let new = DMatrix::from_fn(2, 3, |i, j| y[(i, j)] * scale);
            let e = rule.project(&new).unwrap_err();
            assert_refused(
                &e.to_string(),
                &format!("{} projecting at {scale:e}", info.name),
            );
        }
    }
}

#[test]
fn kernel_pca_refuses_a_default_bandwidth_that_makes_its_kernel_trivial() {
    let registry = Registry::builtin();
    let y = data();
    for scale in [1e12, 1e-12] {
        let scaled = &y * scale;
        let Err(e) = registry.fit("kpca", &FitData::points(&scaled), &small("kpca"), &Silent)
        else {
            panic!("kpca fitted data scaled by {scale:e} at the default gamma");
        };
        let e = e.to_string();
        assert!(
            e.contains("`gamma`") && e.contains("--preprocess scale"),
            "{e}"
        );
    }
}
