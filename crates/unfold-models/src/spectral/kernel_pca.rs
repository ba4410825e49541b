//! Kernel PCA with the exponentiated quadratic (RBF) kernel: the centred-kernel
//! eigenproblem ([`unfold_linalg::CentredKernel`], spec `meu_alle_drill.md` §1.2) of the
//! RBF kernel matrix, with its Nyström projection of new points.

use crate::method::{Checked, Declared, Interval, Rule};
use crate::traits::{
    check_dense_memory, check_fit_points, check_new_points, Embedding, OutOfSample, Projection,
};
use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_linalg::{exp, sq_dists_to, CentredKernel, PackedSym};

crate::params! {
    /// Settings of [`KernelPca`]: the RBF kernel `k(y, y') = exp(-gamma ||y - y'||^2)`;
    /// `gamma = None` uses `1/p` (scikit-learn's default).
    #[derive(Clone, Debug, PartialEq)]
    pub struct KernelPcaParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub gamma: Option<f64> = None => Rule::auto(
            "1/p",
            "kpca: the RBF precision in exp(-gamma |y - y'|^2)",
        )
        .range(Interval::POSITIVE),
    }
}

impl KernelPcaParams {
    /// Kernel PCA in `dim` dimensions with `gamma = 1/p`.
    pub fn new(dim: usize) -> Self {
        KernelPcaParams {
            dim,
            ..KernelPcaParams::default()
        }
    }

    /// Fits kernel PCA to the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<KernelPca> {
        self.clone().check()?.fit(y)
    }
}

impl Checked<KernelPcaParams> {
    /// [`KernelPcaParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<KernelPca> {
        check_fit_points(y, self.dim, "kernel PCA")?;
        let gamma = self.gamma.unwrap_or(1.0 / y.ncols() as f64);
        // The packed kernel: half of n x n.
        check_dense_memory(
            "kernel PCA",
            y.nrows(),
            0.5,
            "le or lle on a sparse kNN graph, or kernel PCA on a subsample",
        )?;
        let packed = PackedSym::pairwise_kernel(y, |d2| exp(-gamma * d2))?;
        check_bandwidth(packed.row_sums(), gamma)?;
        let kernel = CentredKernel::from_packed(&packed, self.dim, "RBF kernel")?;
        Ok(KernelPca {
            coords: kernel.coords(),
            kernel,
            gamma,
            train: y.clone(),
        })
    }
}

/// Refuses a bandwidth for which the RBF kernel carries no information about the data:
/// every off-diagonal entry underflows to zero (each point's row sums to its own 1: the
/// kernel is the identity, whose centred eigenvectors are arbitrary), or every entry is 1
/// to machine precision (the centred kernel is rounding noise). Both happen at the
/// default `gamma = 1/p` on data of large or tiny scale.
fn check_bandwidth(row_sums: &[f64], gamma: f64) -> Result<()> {
    let n = row_sums.len() as f64;
    let (low, high) = row_sums
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &s| {
            (lo.min(s), hi.max(s))
        });
    let problem = if high - 1.0 <= 1e-12 {
        "the identity to machine precision (every pair of points is so far apart that \
         exp(-gamma |y - y'|^2) underflows to 0)"
    } else if low >= n * (1.0 - 1e-12) {
        "1 everywhere to machine precision (every pair of points is so close that \
         exp(-gamma |y - y'|^2) rounds to 1)"
    } else {
        return Ok(());
    };
    Err(Error::invalid(
        "gamma",
        format!(
            "with gamma = {gamma:e} the RBF kernel of the data is {problem}, so its \
             eigenvectors say nothing about the data; give --gamma near 1 / (a typical \
             squared distance between points), or standardise the data (`--preprocess \
             scale`), for which the default 1/p suits"
        ),
    ))
}

/// `exp(-gamma d2)` entrywise, in parallel (the same `exp` as the fit).
fn rbf(mut d2: DMatrix<f64>, gamma: f64) -> DMatrix<f64> {
    d2.as_mut_slice()
        .par_iter_mut()
        .for_each(|v| *v = exp(-gamma * *v));
    d2
}

/// A fitted RBF kernel PCA.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelPca {
    pub kernel: CentredKernel,
    pub gamma: f64,
    train: DMatrix<f64>,
    coords: DMatrix<f64>,
}

impl Embedding for KernelPca {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }
}

impl OutOfSample for KernelPca {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        check_new_points(y_new, self.train.ncols())?;
        let k_new = rbf(sq_dists_to(y_new, &self.train), self.gamma);
        Ok(Projection::point(self.kernel.project(&k_new)))
    }
}

/// Kernel PCA in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::Observer;

    impl Registered for KernelPca {
        type Params = KernelPcaParams;

        fn info() -> MethodInfo {
            MethodInfo::new(
                "kpca",
                Family::Spectral,
                "kernel PCA with the RBF kernel exp(-gamma |y - y'|^2)",
            )
            .projects()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, _: &dyn Observer) -> Result<Self> {
            p.fit(&data.y.matrix())
        }
    }

    impl Model for KernelPca {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            kernel(&self.kernel)?;
            let (n, q) = self.kernel.vectors.shape();
            positive("gamma", self.gamma)?;
            matrix("the training points", &self.train, Some(n), None)?;
            matrix("the embedding", &self.coords, Some(n), Some(q))
        }

        fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
            Some(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloud() -> DMatrix<f64> {
        DMatrix::from_fn(40, 3, |i, j| {
            ((i * 3 + j) as f64 * 0.731).sin() * (1.0 + j as f64)
        })
    }

    #[test]
    fn eigenpairs_of_centred_kernel() {
        let y = cloud();
        let kp = KernelPcaParams::new(2).gamma(Some(0.3)).fit(&y).unwrap();
        // Build H K H directly and check B v = lambda v.
        let n = y.nrows();
        let k = DMatrix::from_fn(n, n, |i, j| {
            (-0.3 * (y.row(i) - y.row(j)).norm_squared()).exp()
        });
        let h = DMatrix::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
        let b = &h * k * &h;
        for j in 0..2 {
            let v = kp.kernel.vectors.column(j);
            assert!((&b * v - v * kp.kernel.values[j]).norm() < 1e-9);
        }
    }

    #[test]
    fn a_bandwidth_that_makes_the_kernel_trivial_is_refused() {
        let y = cloud();
        // At the default gamma = 1/3: far apart, the identity; close together, all ones.
        for (scale, words) in [(1e10, "the identity"), (1e-10, "1 everywhere")] {
            let text = KernelPcaParams::new(2)
                .fit(&(&y * scale))
                .unwrap_err()
                .to_string();
            for part in [words, "`gamma`", "--preprocess scale"] {
                assert!(text.contains(part), "{part:?} missing from {text}");
            }
            // A gamma matched to the scale gives the unscaled embedding.
            let scaled = KernelPcaParams::new(2)
                .gamma(Some(0.3 / (scale * scale)))
                .fit(&(&y * scale))
                .unwrap();
            let plain = KernelPcaParams::new(2).gamma(Some(0.3)).fit(&y).unwrap();
            assert!((scaled.coords() - plain.coords()).norm() < 1e-8 * plain.coords().norm());
        }
    }

    #[test]
    fn nystrom_reproduces_training_points() {
        let y = cloud();
        // The kernel is n x n: as many coordinates as features are allowed, n are not.
        assert_eq!(KernelPcaParams::new(3).fit(&y).unwrap().coords().ncols(), 3);
        let kp = KernelPcaParams::new(y.nrows()).fit(&y).unwrap_err();
        assert!(matches!(kp, Error::DimensionTooLarge { .. }));
        let kp = KernelPcaParams::new(2).fit(&y).unwrap();
        let proj = kp.project(&y).unwrap();
        assert!((proj.mean - kp.coords()).norm() < 1e-8);
    }

    #[test]
    fn packed_kernel_gives_the_full_decomposition() {
        // Several panels of the packed kernel, odd size; against the full decomposition
        // of the dense `H K H` with std's exp.
        let n = 601;
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let t = 1.5 + 3.0 * i as f64 / n as f64;
            [t * t.cos(), ((i * 37) % 11) as f64 / 2.0, t * t.sin()][j]
        });
        let kp = KernelPcaParams::new(2).gamma(Some(0.5)).fit(&y).unwrap();
        let k = DMatrix::from_fn(n, n, |i, j| {
            (-0.5 * (y.row(i) - y.row(j)).norm_squared()).exp()
        });
        let h = DMatrix::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
        let full = unfold_linalg::sym_eigen(&(&h * &k * &h)).unwrap();
        for j in 0..2 {
            let (want, v) = (full.values[n - 1 - j], full.vectors.column(n - 1 - j));
            assert!((kp.kernel.values[j] - want).abs() < 1e-10 * want);
            let got = kp.kernel.vectors.column(j);
            assert!((got - v).norm().min((got + v).norm()) < 1e-8);
        }
        // The dense constructor packs the same matrix, and refuses a non-square one.
        let wide = DMatrix::zeros(n, n + 1);
        let err = CentredKernel::new(wide, 2, "RBF kernel").unwrap_err();
        assert!(matches!(err, Error::DimensionMismatch(_)));
        let dense = CentredKernel::new(k, 2, "RBF kernel").unwrap();
        assert!((&dense.values - &kp.kernel.values).amax() < 1e-10 * dense.values[0]);
    }

    #[test]
    fn rejects_bad_gamma() {
        let err = KernelPcaParams::new(1)
            .gamma(Some(-1.0))
            .fit(&cloud())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value for `gamma`: expected a number in (0, inf), got -1"
        );
    }
}
