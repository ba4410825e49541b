//! Held-out log predictive density of an embedding: how well left-out points, placed in the
//! latent space by a model's out-of-sample rule, are predicted by the Gaussian process that
//! the GP-LVM score fits from the training embedding to the training data.

use crate::check::paired_points;
use crate::gplvm_bound::fit_bound;
use crate::gplvm_score::{factor_with_jitter, gplvm_score, rbf, uses_bound, KERNEL_CONTEXT};
use crate::{GplvmHyperparameters, GplvmScoreOptions};
use nalgebra::DMatrix;
use unfold_core::{Error, Result};
use unfold_linalg::{pairwise_sq_dists, sq_dists_to};

/// The held-out score of [`heldout_log_density`].
#[derive(Clone, Debug, PartialEq)]
pub struct HeldOutScore {
    /// `sum_i log p(y*_i | x*_i, X, Y)` over the held-out points (higher is better).
    pub log_density: f64,
    /// The same per held-out point, in row order.
    pub per_point: Vec<f64>,
    /// The kernel hyperparameters fitted on the training embedding and data.
    pub hyperparameters: GplvmHyperparameters,
    /// `None`: the exact GP predictive, hyperparameters from the exact score. `Some(m)`: the
    /// predictive of the sparse variational posterior with `m` inducing points,
    /// hyperparameters from the sparse bound (where `opts.solver` picks the bound: above
    /// [`GPLVM_EXACT_MAX_POINTS`](crate::GPLVM_EXACT_MAX_POINTS) training points by default).
    pub inducing: Option<usize>,
}

/// The log predictive density of held-out data `y_test` (m x p) at their latent positions
/// `x_test` (m x q, from the model's out-of-sample projection), under the Gaussian process
/// of [`gplvm_score`] fitted to the training embedding `x_train` (n x q) and data `y_train`
/// (n x p). Each feature is centred by its training mean; with the kernel `k` (RBF + bias)
/// of the score, `K = k(X, X) + noise I`, `k_* = k(X, x_*)`, every held-out point gets the
/// GP predictive (Rasmussen & Williams 2006, eq. 2.25-2.26, with the noise of a new
/// observation added to the variance)
///
/// `y_*d ~ N(k_*^T K^{-1} y_d, alpha + bias + noise - k_*^T K^{-1} k_*)`, features
/// independent,
///
/// and the score is the sum of these log densities over points and features (each point is
/// predicted from the training data alone, not from the other held-out points).
///
/// Where `opts.solver` picks the sparse bound ([`GplvmSolver::Auto`](crate::GplvmSolver) above
/// [`GPLVM_EXACT_MAX_POINTS`](crate::GPLVM_EXACT_MAX_POINTS) training points), the
/// hyperparameters come from [`gplvm_bound`](crate::gplvm_bound) and each point gets the
/// predictive of its variational posterior (Titsias 2009, eq. 8), in O(n m^2):
/// `N(K_*m S K_mn y_d / s^2, alpha + bias + noise - K_*m K_mm^{-1} K_m* + K_*m S K_m*)`,
/// `S = (K_mm + K_mn K_nm / s^2)^{-1}`: a proper Gaussian density (not a bound) of an
/// approximate GP, equal to the exact one when the inducing points are all the points.
///
/// # Errors
/// As [`gplvm_score`] (or [`gplvm_bound`](crate::gplvm_bound)) for the training pair;
/// `x_test`, `y_test` empty, non-finite, of different row counts, or with columns that do
/// not match the training pair.
pub fn heldout_log_density(
    x_train: &DMatrix<f64>,
    y_train: &DMatrix<f64>,
    x_test: &DMatrix<f64>,
    y_test: &DMatrix<f64>,
    opts: &GplvmScoreOptions,
) -> Result<HeldOutScore> {
    paired_points(x_test, "held-out embedding", y_test, "held-out data")?;
    for (test, train, what) in [
        (x_test, x_train, "latent dimensions"),
        (y_test, y_train, "features"),
    ] {
        if test.ncols() != train.ncols() {
            return Err(Error::DimensionMismatch(format!(
                "the held-out points have {} {what} but the training points {}",
                test.ncols(),
                train.ncols()
            )));
        }
    }
    let mean = y_train.row_mean();
    let centre =
        |y: &DMatrix<f64>| DMatrix::from_fn(y.nrows(), y.ncols(), |i, j| y[(i, j)] - mean[j]);
    let (h, inducing, predicted, variance) = if uses_bound(opts, x_train.nrows()) {
        let (fitted, problem) = fit_bound(x_train, y_train, opts)?;
        let h = fitted.hyperparameters;
        let (predicted, variance) = problem.predict(&problem.factor(&h)?, &h, x_test);
        (h, Some(fitted.inducing), predicted, variance)
    } else {
        let h = gplvm_score(x_train, y_train, opts)?.hyperparameters;
        let (predicted, variance) = exact_predictive(x_train, &centre(y_train), x_test, &h)?;
        (h, None, predicted, variance)
    };
    let residual = centre(y_test) - predicted;
    let p = y_test.ncols() as f64;
    let per_point: Vec<f64> = variance
        .iter()
        .enumerate()
        .map(|(i, &var)| {
            // Round-off can only make the variance smaller than the noise floor.
            let var = var.max(h.noise);
            let sq = residual.row(i).norm_squared();
            -0.5 * (p * (2.0 * std::f64::consts::PI * var).ln() + sq / var)
        })
        .collect();
    Ok(HeldOutScore {
        log_density: per_point.iter().sum(),
        per_point,
        hyperparameters: h,
        inducing,
    })
}

/// The exact GP predictive mean (m x p, of the centred data) and variance of a new
/// observation at each row of `x_test`, given the training latent points and centred data.
fn exact_predictive(
    x_train: &DMatrix<f64>,
    y_centred: &DMatrix<f64>,
    x_test: &DMatrix<f64>,
    h: &GplvmHyperparameters,
) -> Result<(DMatrix<f64>, Vec<f64>)> {
    let mut k = rbf(&pairwise_sq_dists(x_train), h).add_scalar(h.bias);
    k.fill_diagonal(h.alpha + h.bias + h.noise);
    let (chol, jitter) = factor_with_jitter(k, KERNEL_CONTEXT)?;
    let alpha = chol.solve(y_centred); // K^{-1} Y
    let k_star = rbf(&sq_dists_to(x_train, x_test), h).add_scalar(h.bias); // n x m
    let predicted = k_star.tr_mul(&alpha); // m x p
    let v = chol.solve(&k_star); // K^{-1} k_*
    let prior = h.alpha + h.bias + h.noise + jitter;
    let variance = (0..x_test.nrows())
        .map(|i| prior - k_star.column(i).dot(&v.column(i)))
        .collect();
    Ok((predicted, variance))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use unfold_core::seeded_rng;

    fn helix(n: usize, seed: u64) -> (DMatrix<f64>, DMatrix<f64>) {
        let mut rng = seeded_rng(seed);
        let t = DMatrix::from_fn(n, 1, |_, _| rng.random_range(0.0f64..4.0));
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let s = t[(i, 0)];
            [s.cos(), s.sin(), 0.4 * s][j] + 0.03 * rng.random_range(-1.0..1.0)
        });
        (t, y)
    }

    /// The predictive density of one new point equals the ratio of the joint Gaussian
    /// densities of the training data with and without it (same kernel, same centring).
    #[test]
    fn equals_the_ratio_of_joint_densities() {
        let (x, y) = helix(40, 3);
        let (xt, yt) = (x.rows(0, 30).into_owned(), y.rows(0, 30).into_owned());
        let opts = GplvmScoreOptions::default();
        let got = heldout_log_density(
            &xt,
            &yt,
            &x.rows(30, 10).into_owned(),
            &y.rows(30, 10).into_owned(),
            &opts,
        )
        .unwrap();
        let h = got.hyperparameters;
        let mean = yt.row_mean();
        let log_joint = |rows: &[usize]| {
            let m = rows.len();
            let k = DMatrix::from_fn(m, m, |a, b| {
                let d2 = (x[(rows[a], 0)] - x[(rows[b], 0)]).powi(2);
                let noise = if a == b { h.noise } else { 0.0 };
                h.alpha * (-d2 / (2.0 * h.lengthscale * h.lengthscale)).exp() + h.bias + noise
            });
            let chol = k.clone().cholesky().unwrap();
            let log_det: f64 = 2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
            (0..3)
                .map(|d| {
                    let yd = DMatrix::from_fn(m, 1, |a, _| y[(rows[a], d)] - mean[d]);
                    let quad = (yd.transpose() * chol.solve(&yd))[(0, 0)];
                    -0.5 * (m as f64 * (2.0 * std::f64::consts::PI).ln() + log_det + quad)
                })
                .sum::<f64>()
        };
        let train: Vec<usize> = (0..30).collect();
        let base = log_joint(&train);
        for (i, &lp) in got.per_point.iter().enumerate() {
            let mut with = train.clone();
            with.push(30 + i);
            let expected = log_joint(&with) - base;
            assert!(
                (lp - expected).abs() < 1e-8 * expected.abs().max(1.0),
                "point {i}: {lp} vs {expected}"
            );
        }
        assert!((got.log_density - got.per_point.iter().sum::<f64>()).abs() < 1e-12);
    }

    /// Held-out points at their true latent positions are predicted far better than at
    /// shuffled ones.
    #[test]
    fn true_positions_beat_shuffled_ones() {
        let (x, y) = helix(120, 5);
        let (xt, yt) = (x.rows(0, 100).into_owned(), y.rows(0, 100).into_owned());
        let (xs, ys) = (x.rows(100, 20).into_owned(), y.rows(100, 20).into_owned());
        let opts = GplvmScoreOptions::default();
        let right = heldout_log_density(&xt, &yt, &xs, &ys, &opts).unwrap();
        let shuffled = DMatrix::from_fn(20, 1, |i, _| xs[((i + 7) % 20, 0)]);
        let wrong = heldout_log_density(&xt, &yt, &shuffled, &ys, &opts).unwrap();
        assert!(right.log_density > 0.0, "{}", right.log_density);
        assert!(
            right.log_density > wrong.log_density + 100.0,
            "{} vs {}",
            right.log_density,
            wrong.log_density
        );
    }

    #[test]
    fn mismatched_shapes_are_errors() {
        let (x, y) = helix(30, 1);
        let opts = GplvmScoreOptions::default();
        let two_d = DMatrix::zeros(3, 2);
        assert!(matches!(
            heldout_log_density(&x, &y, &two_d, &y.rows(0, 3).into_owned(), &opts),
            Err(Error::DimensionMismatch(_))
        ));
        assert!(heldout_log_density(
            &x,
            &y,
            &x.rows(0, 3).into_owned(),
            &y.rows(0, 2).into_owned(),
            &opts
        )
        .is_err());
    }

    /// With every training point inducing, the sparse variational predictive is the exact
    /// one (same hyperparameters); through the public function the bound's predictive is
    /// labelled with its inducing points and close to the exact score.
    #[test]
    fn sparse_predictive_equals_the_exact_one_with_every_point_inducing() {
        use crate::gplvm_bound::SparseProblem;
        use crate::gplvm_score::centred_columns;
        use crate::GplvmSolver;
        let (x, y) = helix(140, 8);
        let (xt, yt) = (x.rows(0, 120).into_owned(), y.rows(0, 120).into_owned());
        let (xs, ys) = (x.rows(120, 20).into_owned(), y.rows(120, 20).into_owned());
        let h = GplvmHyperparameters::new(1.2, 0.8, 0.3, 1e-3);
        let problem = SparseProblem::new(&xt, &yt, 120).unwrap();
        let (mean, var) = problem.predict(&problem.factor(&h).unwrap(), &h, &xs);
        let (mean_exact, var_exact) =
            exact_predictive(&xt, &centred_columns(&yt), &xs, &h).unwrap();
        assert!(
            (&mean - &mean_exact).abs().max() < 1e-8,
            "{}",
            (&mean - &mean_exact).abs().max()
        );
        for (v, w) in var.iter().zip(&var_exact) {
            assert!((v - w).abs() < 1e-8 * w, "{v} vs {w}");
        }
        let opts = GplvmScoreOptions::default();
        let exact = heldout_log_density(&xt, &yt, &xs, &ys, &opts).unwrap();
        assert_eq!(exact.inducing, None);
        let sparse = GplvmScoreOptions {
            solver: GplvmSolver::Bound,
            inducing: Some(40),
            ..opts
        };
        let bound = heldout_log_density(&xt, &yt, &xs, &ys, &sparse).unwrap();
        assert_eq!(bound.inducing, Some(40));
        let diff = (bound.log_density - exact.log_density).abs();
        assert!(
            diff < 1e-3 * exact.log_density.abs(),
            "{} vs {}",
            bound.log_density,
            exact.log_density
        );
    }
}
