//! Classical multidimensional scaling (spec `meu_alle_drill.md` §1.1).
//!
//! `B = -1/2 H D H` for the matrix `D` of squared distances; the embedding is the top-q
//! eigenvectors of `B` scaled by the square roots of their eigenvalues, `X = V Lambda^{1/2}`.
//! On Euclidean distances this equals PCA up to the sign of each axis. New points are
//! placed by Gower's formula, which is the Nyström projection with the kernel `-D/2`.

use crate::method::{Checked, Declared, Rule};
use crate::traits::{
    check_dense_memory, check_fit_input, check_new_points, Embedding, OutOfSample, Projection,
};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_linalg::{sq_dists_to, CentredKernel, PackedSym};

crate::params! {
    /// Settings of [`Cmds`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct CmdsParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
    }
}

impl CmdsParams {
    /// Classical MDS in `dim` dimensions.
    pub fn new(dim: usize) -> Self {
        CmdsParams { dim }
    }

    /// Classical MDS of the Euclidean distances between the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Cmds> {
        self.clone().check()?.fit(y)
    }

    /// Classical MDS of a given symmetric matrix of squared distances (n x n). The fitted
    /// model cannot project new data points (it has no coordinates to measure from).
    pub fn fit_sq_distances(&self, d2: &DMatrix<f64>) -> Result<Cmds> {
        self.clone().check()?.fit_sq_distances(d2)
    }
}

impl Checked<CmdsParams> {
    /// [`CmdsParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Cmds> {
        check_fit_input(y, self.dim, "classical MDS")?;
        // The packed kernel (half of n x n) and the Lanczos blocks.
        check_dense_memory(
            "classical MDS",
            y.nrows(),
            0.5,
            "pca (the same embedding of Euclidean distances, in O(n p) memory)",
        )?;
        let kernel = CentredKernel::from_packed(
            &PackedSym::pairwise_kernel(y, |d2| -0.5 * d2)?,
            self.dim,
            "distance matrix",
        )?;
        Ok(Cmds {
            coords: kernel.coords(),
            kernel,
            train: Some(y.clone()),
        })
    }

    /// [`CmdsParams::fit_sq_distances`] with the parameters checked.
    pub fn fit_sq_distances(&self, d2: &DMatrix<f64>) -> Result<Cmds> {
        unfold_core::check_finite(d2, "the distance matrix")?;
        let n = d2.nrows();
        if d2.ncols() != n {
            return Err(Error::DimensionMismatch(format!(
                "a distance matrix must be square, got {n} x {}",
                d2.ncols()
            )));
        }
        unfold_core::check_dim(
            self.dim,
            n,
            "there must be more points than latent dimensions",
        )?;
        let asymmetry = (d2 - d2.transpose()).amax();
        if asymmetry > 1e-10 * d2.amax() {
            return Err(Error::invalid(
                "distance matrix",
                format!("must be symmetric, but entries differ from their mirror by up to {asymmetry:e}"),
            ));
        }
        let kernel = CentredKernel::new(d2 * -0.5, self.dim, "distance matrix")?;
        Ok(Cmds {
            coords: kernel.coords(),
            kernel,
            train: None,
        })
    }
}

/// A fitted classical MDS.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cmds {
    pub kernel: CentredKernel,
    train: Option<DMatrix<f64>>,
    coords: DMatrix<f64>,
}

impl Embedding for Cmds {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }
}

impl OutOfSample for Cmds {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let train = self.train.as_ref().ok_or_else(|| {
            Error::invalid(
                "model",
                "this MDS was fitted on a distance matrix, so new points cannot be placed",
            )
        })?;
        check_new_points(y_new, train.ncols())?;
        let k_new = sq_dists_to(y_new, train) * -0.5;
        Ok(Projection::point(self.kernel.project(&k_new)))
    }
}

/// Classical MDS in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::Observer;

    impl Registered for Cmds {
        type Params = CmdsParams;

        fn info() -> MethodInfo {
            MethodInfo::new(
                "cmds",
                Family::Spectral,
                "classical multidimensional scaling of Euclidean distances",
            )
            .projects()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, _: &dyn Observer) -> Result<Self> {
            p.fit(&data.y.matrix())
        }
    }

    impl Model for Cmds {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            kernel(&self.kernel)?;
            let (n, q) = self.kernel.vectors.shape();
            if let Some(train) = &self.train {
                matrix("the training points", train, Some(n), None)?;
            }
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
    use crate::spectral::pca::PcaParams;

    #[test]
    fn equals_pca_up_to_sign() {
        let y = DMatrix::from_fn(50, 4, |i, j| {
            ((i * 4 + j) as f64 * 0.917).cos() * (4 - j) as f64
        });
        let cmds = CmdsParams::new(2).fit(&y).unwrap();
        let pca = PcaParams::new(2).fit(&y).unwrap();
        for j in 0..2 {
            let a = cmds.coords().column(j);
            let b = pca.coords().column(j);
            let same = (a - b).norm().min((a + b).norm());
            assert!(same < 1e-8 * b.norm(), "axis {j}: {same}");
        }
        let proj = cmds.project(&y).unwrap();
        assert!((proj.mean - cmds.coords()).norm() < 1e-8);
    }

    #[test]
    fn distance_input_checks_shape() {
        assert!(CmdsParams::new(1)
            .fit_sq_distances(&DMatrix::zeros(3, 4))
            .is_err());
    }
}
