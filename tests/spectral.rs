//! The spectral baselines on the LL-LVM paper's Swiss roll: quality the issue requires,
//! and out-of-sample projection of held-out points.

use nalgebra::DMatrix;
use unfold::data::synthetic::swiss_roll;
use unfold::eval::{procrustes, trustworthiness};
use unfold::models::{Embedding, IsomapParams, LleParams, OutOfSample};

#[test]
fn isomap_and_lle_are_trustworthy_on_the_swiss_roll() {
    let data = swiss_roll(1000, 0.0, 7).unwrap();
    let iso = IsomapParams::new(2, 10).fit(&data.points).unwrap();
    let t_iso = trustworthiness(&data.points, iso.coords(), 10).unwrap();
    assert!(t_iso >= 0.95, "Isomap trustworthiness {t_iso}");
    let lle = LleParams::new(2, 10).fit(&data.points).unwrap();
    let t_lle = trustworthiness(&data.points, lle.coords(), 10).unwrap();
    assert!(t_lle >= 0.95, "LLE trustworthiness {t_lle}");
}

/// Fits on the first 900 points, projects the last 100, aligns the training embedding to
/// the true coordinates and applies the same similarity transform to the projections:
/// held-out points must land about as close to their truth as training points do.
fn held_out_error(
    model: &dyn OutOfSample,
    truth: &DMatrix<f64>,
    y_test: &DMatrix<f64>,
) -> (f64, f64) {
    let n_train = model.coords().nrows();
    let fit = procrustes(model.coords(), &truth.rows(0, n_train).into_owned()).unwrap();
    let proj = model.project(y_test).unwrap().mean;
    let aligned = (&proj * &fit.rotation) * fit.scale;
    let test_truth = truth.rows(n_train, y_test.nrows());
    let mut err = 0.0;
    for i in 0..y_test.nrows() {
        let a = aligned.row(i).transpose() + &fit.translation;
        err += (a - test_truth.row(i).transpose()).norm_squared();
    }
    let spread: f64 = {
        let mean = test_truth.row_mean();
        (0..y_test.nrows())
            .map(|i| (test_truth.row(i) - &mean).norm_squared())
            .sum()
    };
    (err / spread, fit.error)
}

#[test]
fn held_out_points_land_where_they_belong() {
    let data = swiss_roll(1000, 0.0, 11).unwrap();
    let truth = data.latent.clone().unwrap();
    let train = data.points.rows(0, 900).into_owned();
    let test = data.points.rows(900, 100).into_owned();
    let iso = IsomapParams::new(2, 10).fit(&train).unwrap();
    let (test_err, train_err) = held_out_error(&iso, &truth, &test);
    assert!(
        test_err < 2.0 * train_err + 0.01,
        "Isomap held-out {test_err} vs training {train_err}"
    );
    let lle = LleParams::new(2, 10).fit(&train).unwrap();
    let (test_err, train_err) = held_out_error(&lle, &truth, &test);
    assert!(
        test_err < 2.0 * train_err + 0.01,
        "LLE held-out {test_err} vs training {train_err}"
    );
}
