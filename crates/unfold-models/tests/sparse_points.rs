//! Sparse points through the registry: the neighbour methods (Isomap, Laplacian
//! eigenmaps, LLE) fit them as they are and give the fit of the same points dense; repeated
//! rows are merged and separate components joined as for dense points; a sparse Isomap or
//! LLE projects new points and survives its model file; the other methods fit a dense copy.

use nalgebra::DMatrix;
use std::path::Path;
use std::sync::Mutex;
use unfold_core::Observer;
use unfold_linalg::SparsePoints;
use unfold_models::method::Points;
use unfold_models::registry::{FitData, Model, Registry, Settings};

/// Keeps the warnings of a fit.
#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl Observer for Warnings {
    fn warn(&self, message: &str) {
        self.0.lock().unwrap().push(message.to_string());
    }
}

/// Points on a curved sheet seen through 100 local features: feature `f` is a bump
/// centred at grid point `c_f` of the unit square, `exp(-|t - c_f|^2 / (2 s^2))` where
/// `|t - c_f| < 2.5 s` and 0 beyond, so each point has about 15 non-zeros. With `split`,
/// the second half of the points lies in a copy of the square that uses 100 other
/// features, so the kNN graph falls into two components. Rows 7, 40 and 41 repeat rows 3,
/// 12 and 12. Seeded by `seed`.
fn bumps(n: usize, split: bool, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    use rand::Rng;
    let s = 0.1;
    let p = if split { 200 } else { 100 };
    let mut y = DMatrix::zeros(n, p);
    for i in 0..n {
        let t = [rng.random::<f64>(), rng.random::<f64>()];
        let offset = if split && i >= n / 2 { 100 } else { 0 };
        for f in 0..100 {
            let c = [(f % 10) as f64 / 9.0, (f / 10) as f64 / 9.0];
            let d2 = (t[0] - c[0]).powi(2) + (t[1] - c[1]).powi(2);
            if d2 < (2.5 * s) * (2.5 * s) {
                y[(i, offset + f)] = (-d2 / (2.0 * s * s)).exp();
            }
        }
    }
    for (copy, of) in [(7, 3), (40, 12), (41, 12)] {
        let row = y.row(of).into_owned();
        y.set_row(copy, &row);
    }
    y
}

fn fit(name: &str, data: &FitData<'_>, settings: &Settings) -> (Box<dyn Model>, Vec<String>) {
    let warnings = Warnings::default();
    let fitted = Registry::builtin()
        .fit(name, data, settings, &warnings)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (fitted.model, warnings.0.into_inner().unwrap())
}

fn assert_close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}");
    let err = (a - b).abs().max();
    assert!(err <= tol * b.abs().max(), "{what}: max difference {err}");
}

/// Each neighbour method on sparse points equals its fit of the dense points: embedding,
/// evidence, warnings (the same copies merged, the same components joined) and, for
/// Isomap and LLE, the projection of new points, also after a round trip through the model
/// file.
#[test]
fn neighbour_methods_fit_sparse_points_as_dense_ones() {
    let registry = Registry::builtin();
    for split in [false, true] {
        let y = bumps(240, split, 5);
        let sparse = SparsePoints::from_dense(&y).unwrap();
        assert!(sparse.nnz() < y.len() / 5, "the points are sparse");
        for name in ["isomap", "le", "lle"] {
            assert!(registry.get(name).unwrap().info().sparse_points);
            let settings = Settings::new().with("k", 6usize).with("dim", 2usize);
            let (dense_fit, dense_warnings) = fit(name, &FitData::points(&y), &settings);
            let (sparse_fit, sparse_warnings) =
                fit(name, &FitData::view(Points::sparse(&sparse)), &settings);
            let what = format!("{name}, split {split}");
            // LLE's bottom eigenvectors of M = (I - W)^T (I - W) magnify the rounding of
            // the weights (their local Gram matrices are summed in another order) by about
            // ||M|| / gap; its evidence, which reads the weights directly, is compared at
            // 1e-9 below.
            let tol = if name == "lle" { 1e-6 } else { 1e-9 };
            assert_close(sparse_fit.coords(), dense_fit.coords(), tol, &what);
            assert_eq!(sparse_warnings, dense_warnings, "{what}");
            // Isomap needs distinct points (Laplacian eigenmaps and LLE do not).
            assert_eq!(
                sparse_warnings
                    .iter()
                    .any(|w| w.contains("3 of the 240 points")),
                name == "isomap",
                "{what}: {sparse_warnings:?}"
            );
            assert_eq!(
                sparse_warnings
                    .iter()
                    .any(|w| w.contains("2 separate components")),
                split,
                "{what}"
            );
            let e_dense = dense_fit.evidence_on(Points::from(&y)).unwrap();
            let e_sparse = sparse_fit.evidence_on(Points::sparse(&sparse)).unwrap();
            assert_eq!(e_sparse.kind, e_dense.kind);
            assert_eq!(
                e_dense.value.is_finite(),
                name != "isomap",
                "{what}: Isomap has none"
            );
            assert!(
                e_dense.value.is_nan() && e_sparse.value.is_nan()
                    || (e_dense.value - e_sparse.value).abs() <= 1e-9 * e_dense.value.abs(),
                "{what}: evidence {} vs {}",
                e_sparse.value,
                e_dense.value
            );
            if name != "le" {
                let new = bumps(60, split, 6).rows(24, 12).into_owned();
                let want = dense_fit
                    .out_of_sample()
                    .unwrap()
                    .project(&new)
                    .unwrap()
                    .mean;
                let got = sparse_fit
                    .out_of_sample()
                    .unwrap()
                    .project(&new)
                    .unwrap()
                    .mean;
                assert_close(&got, &want, tol, &what);
                let bytes = Registry::to_bytes(sparse_fit.as_ref()).unwrap();
                let loaded = registry.from_bytes(&bytes, Path::new("m.bin")).unwrap();
                let again = loaded.out_of_sample().unwrap().project(&new).unwrap().mean;
                assert_eq!(
                    again, got,
                    "{what}: the loaded model projects as the fitted one"
                );
            }
        }
    }
}

/// A method that needs dense points fits a dense copy of sparse ones, the same fit.
#[test]
fn other_methods_fit_a_dense_copy() {
    let y = bumps(120, false, 5);
    let sparse = SparsePoints::from_dense(&y).unwrap();
    let settings = Settings::new().with("k", 6usize);
    let (dense_fit, _) = fit("meu", &FitData::points(&y), &settings);
    let (sparse_fit, _) = fit("meu", &FitData::view(Points::sparse(&sparse)), &settings);
    assert!(!Registry::builtin().get("meu").unwrap().info().sparse_points);
    assert_eq!(sparse_fit.coords(), dense_fit.coords());
}

/// `duplicates = jitter` would make sparse points dense: refused, naming merge.
#[test]
fn jitter_of_sparse_points_is_refused() {
    let sparse = SparsePoints::from_dense(&bumps(60, false, 5)).unwrap();
    let settings = Settings::new()
        .with("k", 6usize)
        .with("duplicates", "jitter");
    let err = Registry::builtin()
        .fit(
            "isomap",
            &FitData::view(Points::sparse(&sparse)),
            &settings,
            &Warnings::default(),
        )
        .err()
        .unwrap();
    assert!(err.to_string().contains("duplicates = merge"), "{err}");
}
