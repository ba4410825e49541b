//! Values computed by the reference implementations on the same data: scikit-learn 1.x
//! `sklearn.manifold.trustworthiness` and SciPy `scipy.spatial.procrustes` (disparity).
//!
//! Python that produced them:
//! ```python
//! n = 30; i = np.arange(n)[:, None]
//! high = np.sin(1.3*i + 0.7*np.arange(4)[None, :]**2 + 0.1*i*np.arange(4)[None, :])
//! low = high[:, :2] + 0.3*np.cos(0.9*i*np.arange(1, 3)[None, :])
//! trustworthiness(high, low, n_neighbors=k); trustworthiness(low, high, n_neighbors=k)
//! procrustes(high, np.hstack([low, np.zeros((n, 2))]))[2]; procrustes(high[:, :2], low)[2]
//! ```

use nalgebra::DMatrix;
use unfold_eval::{continuity, procrustes_error, trustworthiness};

fn data() -> (DMatrix<f64>, DMatrix<f64>) {
    let n = 30;
    let high = DMatrix::from_fn(n, 4, |i, j| {
        let (i, j) = (i as f64, j as f64);
        (1.3 * i + 0.7 * j * j + 0.1 * i * j).sin()
    });
    let low = DMatrix::from_fn(n, 2, |i, j| {
        high[(i, j)] + 0.3 * (0.9 * i as f64 * (j + 1) as f64).cos()
    });
    (high, low)
}

#[test]
fn trustworthiness_and_continuity_match_scikit_learn() {
    let (high, low) = data();
    let expected = [
        (1, 0.7476190476190476, 0.7976190476190476),
        (3, 0.7675555555555555, 0.8106666666666666),
        (7, 0.7994987468671679, 0.8353383458646617),
        (14, 0.8344537815126051, 0.7991596638655463),
    ];
    for (k, t, c) in expected {
        assert!(
            (trustworthiness(&high, &low, k).unwrap() - t).abs() < 1e-15,
            "T, k = {k}"
        );
        assert!(
            (continuity(&high, &low, k).unwrap() - c).abs() < 1e-15,
            "C, k = {k}"
        );
    }
}

#[test]
fn procrustes_error_matches_scipy_disparity() {
    let (high, low) = data();
    let e = procrustes_error(&low, &high).unwrap();
    assert!((e - 0.4677621464738766).abs() < 1e-13, "{e}");
    let e = procrustes_error(&low, &high.columns(0, 2).clone_owned()).unwrap();
    assert!((e - 0.08451896602800661).abs() < 1e-13, "{e}");
}
