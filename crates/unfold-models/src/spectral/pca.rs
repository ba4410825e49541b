//! Principal component analysis.
//!
//! The data are centred, `Yc = Y - 1 mu^T`, and the embedding is `X = Yc V` where the
//! columns of `V` are the top-q eigenvectors of the covariance `Yc^T Yc / (n - 1)`, found
//! by [`unfold_linalg::pca`]: exactly (the covariance or, when p > n, the Gram
//! eigenproblem) or by randomized subspace iteration for large inputs with few components
//! (`solver`: auto, exact, randomized). Projection of a new point is exact:
//! `x = V^T (y - mu)`.

use crate::method::{Checked, Declared, Points, Rule};
use crate::traits::{check_new_points, Embedding, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::Result;
use unfold_linalg::{principal_components_of, PcaSolver, PrincipalComponents};

crate::params! {
    /// Settings of [`Pca`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct PcaParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// How the components are computed ([`PcaSolver::Auto`] by default).
        pub solver: PcaSolver = PcaSolver::Auto => Rule::help(
            "pca: exact (covariance or Gram eigenproblem), randomized (Halko et al. \
             subspace iteration, for large inputs and few components) or auto (by the \
             data's shape)",
        ),
        /// Seed of the randomized solver's test matrix.
        pub seed: u64 = 0 => Rule::help("seed for every random choice"),
    }
}

crate::choice!(PcaSolver { Auto = "auto", Exact = "exact", Randomized = "randomized" });

impl PcaParams {
    /// `dim` components, the solver chosen by the data's shape, seed 0.
    pub fn new(dim: usize) -> Self {
        PcaParams {
            dim,
            ..PcaParams::default()
        }
    }

    /// Fits PCA to the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Pca> {
        self.fit_view(y.into())
    }

    /// Fits PCA to points of either layout (a C-order array row after row), read in
    /// place: the same fit as [`PcaParams::fit`] of the matrix, without a copy.
    pub fn fit_view(&self, y: Points<'_>) -> Result<Pca> {
        self.clone().check()?.fit_view(y)
    }
}

impl Checked<PcaParams> {
    /// [`PcaParams::fit_view`] with the parameters checked.
    pub fn fit_view(&self, y: Points<'_>) -> Result<Pca> {
        y.check_fit(self.dim, "PCA")?;
        let pc = principal_components_of(y.view()?, self.dim, self.solver, self.seed)?;
        Ok(Pca::from(pc))
    }
}

impl From<PrincipalComponents> for Pca {
    fn from(pc: PrincipalComponents) -> Self {
        Pca {
            mean: pc.mean,
            components: pc.components,
            explained_variance: pc.variances,
            coords: pc.coords,
        }
    }
}

/// A fitted PCA: mean, principal axes (p x q, orthonormal columns) and the variance along
/// each axis.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Pca {
    pub mean: DVector<f64>,
    pub components: DMatrix<f64>,
    pub explained_variance: DVector<f64>,
    coords: DMatrix<f64>,
}

impl Embedding for Pca {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }
}

impl OutOfSample for Pca {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        check_new_points(y_new, self.mean.len())?;
        let mut centred = y_new.clone();
        for mut row in centred.row_iter_mut() {
            row -= self.mean.transpose();
        }
        Ok(Projection::point(centred * &self.components))
    }
}

/// PCA in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered, Table};
    use unfold_core::Observer;

    impl Registered for Pca {
        type Params = PcaParams;

        fn info() -> MethodInfo {
            MethodInfo::new("pca", Family::Spectral, "principal component analysis").projects()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, _: &dyn Observer) -> Result<Self> {
            p.fit_view(data.y)
        }
    }

    impl Model for Pca {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            let (p, q) = self.components.shape();
            matrix("the principal axes", &self.components, None, None)?;
            vector("the mean", &self.mean, Some(p))?;
            vector("the explained variances", &self.explained_variance, Some(q))?;
            matrix("the embedding", &self.coords, None, Some(q))
        }

        fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
            Some(self)
        }

        /// `axes`: one row per feature, its mean and its loading on each axis; `variance`:
        /// one row per axis.
        fn tables(&self) -> Vec<Table> {
            let (p, q) = self.components.shape();
            let mut header = vec!["mean".to_string()];
            header.extend((1..=q).map(|j| format!("pc{j}")));
            let axes = DMatrix::from_fn(p, q + 1, |i, j| match j {
                0 => self.mean[i],
                j => self.components[(i, j - 1)],
            });
            let variance = DMatrix::from_column_slice(q, 1, self.explained_variance.as_slice());
            vec![
                Table {
                    name: "axes",
                    header,
                    rows: axes,
                },
                Table {
                    name: "variance",
                    header: vec!["variance".to_string()],
                    rows: variance,
                },
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_core::Error;

    fn sample() -> DMatrix<f64> {
        // An anisotropic cloud: variance mostly along (1, 1, 0), then (1, -1, 0).
        DMatrix::from_fn(60, 3, |i, j| {
            let t = (i as f64 * 0.37).sin() * 5.0;
            let s = (i as f64 * 1.91).cos();
            let u = (i as f64 * 2.71).sin() * 0.1;
            [t + s, t - s, u][j] + 1.0
        })
    }

    /// Points given row after row fit as the matrix does, through the registry (PCA reads
    /// them in place, Isomap copies them to the same matrix), and bad rows are refused
    /// with the cell or the count.
    #[test]
    fn rows_in_place_fit_as_the_matrix() {
        use crate::registry::{FitData, Points, Registry, Settings};
        use unfold_core::Order;
        let y = sample();
        let values: Vec<f64> = y.transpose().as_slice().to_vec();
        let rows = Points::new(&values, 60, 3, Order::Rows).unwrap();
        let registry = Registry::builtin();
        let silent = &unfold_core::Silent;
        let a = registry
            .fit("pca", &FitData::points(&y), &Settings::new(), silent)
            .unwrap();
        let b = registry
            .fit("pca", &FitData::view(rows), &Settings::new(), silent)
            .unwrap();
        let (ea, eb) = (a.model.coords(), b.model.coords());
        assert!((ea - eb).amax() < 1e-12 * ea.amax(), "{ea} {eb}");
        assert_eq!(b.report.method, "pca");
        let fit = |data: FitData<'_>| {
            let s = Settings::new().with("k", 8usize);
            registry.fit("isomap", &data, &s, silent).unwrap().model
        };
        let (c, d) = (fit(FitData::points(&y)), fit(FitData::view(rows)));
        assert_eq!(c.coords(), d.coords());
        let mut bad = values.clone();
        bad[7 * 3 + 2] = f64::NAN;
        let bad = Points::new(&bad, 60, 3, Order::Rows).unwrap();
        let e = PcaParams::new(2).fit_view(bad).unwrap_err();
        assert!(matches!(e, Error::NonFinite { row: 7, col: 2, .. }), "{e}");
        let e = PcaParams::new(3).fit_view(rows).unwrap_err();
        assert!(e.to_string().contains("feature"), "{e}");
    }

    #[test]
    fn axes_are_covariance_eigenvectors() {
        let y = sample();
        let pca = PcaParams::new(2).fit(&y).unwrap();
        let n = y.nrows() as f64;
        let mean = y.row_mean();
        let yc = DMatrix::from_fn(60, 3, |i, j| y[(i, j)] - mean[j]);
        let cov = yc.tr_mul(&yc) / (n - 1.0);
        for j in 0..2 {
            let v = pca.components.column(j);
            let cv = &cov * v;
            let lambda = pca.explained_variance[j];
            assert!((cv - v * lambda).norm() < 1e-10 * lambda);
        }
        assert!(pca.explained_variance[0] > pca.explained_variance[1]);
        let vtv = pca.components.tr_mul(&pca.components);
        assert!((vtv - DMatrix::identity(2, 2)).norm() < 1e-12);
    }

    #[test]
    fn projection_of_training_points_is_exact() {
        let y = sample();
        let pca = PcaParams::new(2).fit(&y).unwrap();
        let proj = pca.project(&y).unwrap();
        assert!((proj.mean - pca.coords()).norm() < 1e-10);
    }

    #[test]
    fn wide_data_uses_gram_route() {
        let y = DMatrix::from_fn(5, 8, |i, j| ((i * 8 + j) as f64 * 0.7).sin());
        let wide = PcaParams::new(2).fit(&y).unwrap();
        // Same answer from the covariance route on the transposed problem's eigenvectors.
        let mean = y.row_mean();
        let yc = DMatrix::from_fn(5, 8, |i, j| y[(i, j)] - mean[j]);
        let cov = yc.tr_mul(&yc) / 4.0;
        for j in 0..2 {
            let v = wide.components.column(j);
            assert!((&cov * v - v * wide.explained_variance[j]).norm() < 1e-10);
        }
    }

    #[test]
    fn rejects_bad_input() {
        let y = sample();
        assert!(matches!(
            PcaParams::new(3).fit(&y),
            Err(Error::DimensionTooLarge { .. })
        ));
        let mut bad = y.clone();
        bad[(4, 1)] = f64::INFINITY;
        assert!(matches!(
            PcaParams::new(2).fit(&bad),
            Err(Error::NonFinite { row: 4, col: 1, .. })
        ));
        let pca = PcaParams::new(2).fit(&y).unwrap();
        assert!(matches!(
            pca.project(&DMatrix::zeros(2, 4)),
            Err(Error::DimensionMismatch(_))
        ));
    }
}
