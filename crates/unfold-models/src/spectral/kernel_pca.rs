//! Kernel PCA with the exponentiated quadratic (RBF) kernel, and the centred-kernel
//! eigenproblem shared by classical MDS and Isomap.
//!
//! Spec `meu_alle_drill.md` §1.2: the embedding comes from the top-q eigenpairs of the
//! doubly centred kernel `B = H K H`, `X = V Lambda^{1/2}`. A new point with kernel row
//! `k*` (against the training points) is placed by the Nyström formula
//! `x* = Lambda^{-1/2} V^T (k* - mean(k*) 1 - r + m 1)`, where `r` holds the row means of
//! `K` and `m` its grand mean; for a training point this returns its own coordinates.

use crate::orient::orient_columns;
use crate::traits::{check_fit_input, check_new_points, Embedding, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_linalg::{
    exp, partial_sym_eigen, sq_dists_to, PackedSym, PartialEigenOptions, SymOperator, Which,
};

/// The top-q eigenpairs of a doubly centred kernel matrix, with the row means needed to
/// centre new kernel rows consistently.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CentredKernel {
    /// Unit eigenvectors, n x q.
    pub vectors: DMatrix<f64>,
    /// Eigenvalues, descending, all positive.
    pub values: DVector<f64>,
    row_means: DVector<f64>,
    total_mean: f64,
}

impl CentredKernel {
    /// Takes the top `q` eigenpairs of the centred kernel `B = H K H` of a symmetric
    /// kernel `k` built by this crate (its lower triangle is used). The matrix is packed
    /// into half the memory first ([`PackedSym`]), which halves the traffic of every
    /// product; see [`CentredKernel::from_packed`]. Fails when `k` is not square or fewer
    /// than `q` eigenvalues are clearly positive.
    pub fn new(k: DMatrix<f64>, q: usize, what: &str) -> Result<Self> {
        if k.nrows() != k.ncols() {
            return Err(Error::DimensionMismatch(format!(
                "the {what} must be square, got {} x {}",
                k.nrows(),
                k.ncols()
            )));
        }
        let packed = PackedSym::from_lower(&k);
        drop(k);
        Self::from_packed(&packed, q, what)
    }

    /// Takes the top `q` eigenpairs of the centred kernel `B = H K H` of a packed
    /// symmetric kernel. `B` is never formed: block Lanczos applies it as `H (K (H X))`,
    /// and the row means of `K` come from its stored row sums. Fails when fewer than `q`
    /// eigenvalues are clearly positive.
    pub fn from_packed(k: &PackedSym, q: usize, what: &str) -> Result<Self> {
        let n = k.dim() as f64;
        let row_means = DVector::from_iterator(k.dim(), k.row_sums().iter().map(|s| s / n));
        let total_mean = row_means.mean();
        let opts = PartialEigenOptions {
            // Each block product streams the whole kernel from memory; blocks as wide as
            // the product's vectors need the fewest products (see `docs/linalg.md`).
            block_size: Some(PackedSym::block_width(q)),
            // Kernel spectra are crowded (RBF on the Swiss roll: 507, 399, 377, ...), so
            // vector errors are about tol ||B|| / gap: 1e-12 costs two more products than
            // the default 1e-10 at n = 5000 and matches ARPACK run to machine precision
            // (Procrustes disparity ~1e-26 instead of ~1e-20).
            tol: 1e-12,
            ..PartialEigenOptions::default()
        };
        let eig = partial_sym_eigen(&DoublyCentred(k), q, Which::Largest, &opts)?;
        let top = eig.values[0].abs().max(f64::MIN_POSITIVE);
        if let Some(j) = eig.values.iter().position(|&v| v <= 1e-10 * top) {
            return Err(Error::DimensionTooLarge {
                dim: q,
                limit: j + 1,
                reason: format!("the centred {what} has only {j} clearly positive eigenvalues"),
            });
        }
        let mut vectors = eig.vectors;
        orient_columns(&mut vectors);
        Ok(CentredKernel {
            vectors,
            values: eig.values,
            row_means,
            total_mean,
        })
    }

    /// The embedding of the training points, `V Lambda^{1/2}` (n x q).
    pub fn coords(&self) -> DMatrix<f64> {
        let mut x = self.vectors.clone();
        for (mut col, &l) in x.column_iter_mut().zip(self.values.iter()) {
            col *= l.sqrt();
        }
        x
    }

    /// Nyström projection of new points given their uncentred kernel rows (m x n).
    pub fn project(&self, k_new: &DMatrix<f64>) -> DMatrix<f64> {
        let mut kc = k_new.clone();
        for (i, mut row) in kc.row_iter_mut().enumerate() {
            let mean = k_new.row(i).mean();
            for (j, v) in row.iter_mut().enumerate() {
                *v += self.total_mean - mean - self.row_means[j];
            }
        }
        let mut x = kc * &self.vectors;
        for (mut col, &l) in x.column_iter_mut().zip(self.values.iter()) {
            col /= l.sqrt();
        }
        x
    }
}

/// `H K H` as an operator, `H = I - 11^T / n`: centre the block's columns, multiply by
/// `K`, centre again.
struct DoublyCentred<'a>(&'a PackedSym);

impl SymOperator for DoublyCentred<'_> {
    fn dim(&self) -> usize {
        self.0.dim()
    }

    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        let centre = |m: &mut DMatrix<f64>| {
            for mut col in m.column_iter_mut() {
                let mean = col.mean();
                col.add_scalar_mut(-mean);
            }
        };
        let mut xc = x.clone();
        centre(&mut xc);
        self.0.apply(&xc, y);
        centre(y);
    }
}

/// Settings of [`KernelPca`]: the RBF kernel `k(y, y') = exp(-gamma ||y - y'||^2)`;
/// `gamma = None` uses `1/p` (scikit-learn's default).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPcaParams {
    pub dim: usize,
    pub gamma: Option<f64>,
}

impl KernelPcaParams {
    pub fn new(dim: usize) -> Self {
        KernelPcaParams { dim, gamma: None }
    }

    pub fn gamma(mut self, gamma: f64) -> Self {
        self.gamma = Some(gamma);
        self
    }

    /// Fits kernel PCA to the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<KernelPca> {
        check_fit_input(y, self.dim, "kernel PCA")?;
        let gamma = self.gamma.unwrap_or(1.0 / y.ncols() as f64);
        if !(gamma.is_finite() && gamma > 0.0) {
            return Err(Error::invalid(
                "gamma",
                format!("must be positive and finite, got {gamma}"),
            ));
        }
        let kernel = CentredKernel::from_packed(
            &PackedSym::pairwise_kernel(y, |d2| exp(-gamma * d2)),
            self.dim,
            "RBF kernel",
        )?;
        Ok(KernelPca {
            coords: kernel.coords(),
            kernel,
            gamma,
            train: y.clone(),
        })
    }
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

pub use registration::KernelPcaMethod;

/// Kernel PCA in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::registry::{
        decode, Family, FitData, Interval, Method, MethodInfo, Model, ParamSpec, Settings,
    };
    use unfold_vem::Observer;

    /// Kernel PCA (RBF kernel).
    pub struct KernelPcaMethod;

    impl Method for KernelPcaMethod {
        fn info(&self) -> MethodInfo {
            MethodInfo::new(
                "kpca",
                Family::Spectral,
                "kernel PCA with the RBF kernel exp(-gamma |y - y'|^2)",
            )
            .params([ParamSpec::real_auto(
                "gamma",
                "1/p",
                Interval::POSITIVE,
                "kpca: the RBF precision in exp(-gamma |y - y'|^2)",
            )])
            .projects()
        }

        fn fit(
            &self,
            data: &FitData<'_>,
            s: &Settings,
            _observer: &dyn Observer,
        ) -> Result<Box<dyn Model>> {
            let params = KernelPcaParams {
                dim: s.count("dim")?,
                gamma: s.real_opt("gamma")?,
            };
            Ok(Box::new(params.fit(data.y)?))
        }

        fn decode(&self, payload: &[u8]) -> Result<Box<dyn Model>> {
            decode::<KernelPca>(payload)
        }
    }

    impl Model for KernelPca {
        fn method(&self) -> &'static str {
            "kpca"
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
        let kp = KernelPcaParams::new(2).gamma(0.3).fit(&y).unwrap();
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
    fn nystrom_reproduces_training_points() {
        let y = cloud();
        let kp = KernelPcaParams::new(3).fit(&y).unwrap_err();
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
        let kp = KernelPcaParams::new(2).gamma(0.5).fit(&y).unwrap();
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
        assert!(KernelPcaParams::new(1).gamma(-1.0).fit(&cloud()).is_err());
    }
}
