//! Locally linear embedding (Roweis & Saul 2000; spec `meu_alle_drill.md` §4.1).
//!
//! Each point is reconstructed from its k nearest neighbours with weights summing to one:
//! with `Z` the neighbours minus the point (k x p) and the local Gram matrix
//! `C = Z Z^T + reg tr(Z Z^T) I`, the weights are `w = C^{-1} 1 / (1^T C^{-1} 1)`.
//! The embedding is given by the eigenvectors of the q smallest non-zero eigenvalues of
//! `M = (I - W)^T (I - W)` (the constant vector is dropped), scaled so that
//! `X^T X / n = I`. A new point is placed at `sum_j w_j x_j` with its weights computed the
//! same way from its k nearest training points. The data enter through neighbours and the
//! dot products of their differences only, so sparse points are fitted as they are and
//! kept sparse for new points.

use crate::field::reconstruction::{
    cost_matrix, reconstruction_weights, reconstruction_weights_sparse,
};
use crate::method::{Checked, Declared, Interval, Rule, TrainingPoints};
use crate::traits::{check_fit_rows, Embedding, OutOfSample, Projection};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unfold_core::{Observer, Result, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, PointRows, Weighting};
use unfold_linalg::{fix_signs, smallest_eigenpairs, SparsePoints, SymMatrix};

crate::params! {
    /// Settings of [`Lle`]. `reg` is the Tikhonov regulariser relative to the trace of the
    /// local Gram matrix (scikit-learn's default 1e-3); it is needed whenever k > p.
    #[derive(Clone, Debug, PartialEq)]
    pub struct LleParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        pub reg: f64 = 1e-3 => Rule::within(
            Interval::NON_NEGATIVE,
            "lle, alle, lle-pl: regulariser of the local Gram matrix, relative to its trace",
        ),
    }
}

impl LleParams {
    /// LLE in `dim` dimensions on the union kNN graph with `k` neighbours.
    pub fn new(dim: usize, k: usize) -> Self {
        LleParams {
            dim,
            graph: GraphSpec::knn(k),
            ..LleParams::default()
        }
    }

    /// Fits LLE to the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Lle> {
        self.clone().check()?.fit(y, &Silent)
    }
}

impl Checked<LleParams> {
    /// [`LleParams::fit`] with the parameters checked, on dense or sparse points.
    pub fn fit<'p>(&self, y: impl Into<PointRows<'p>>, observer: &dyn Observer) -> Result<Lle> {
        let y = y.into();
        check_fit_rows(y, self.dim, "LLE")?;
        let (nn, graph) = self.graph.build(y, Weighting::Binary, "LLE", observer)?;
        let weights = all_weights(y, &nn.indices, self.reg)?;
        let m = cost_matrix(&nn.indices, &weights, None);
        let eig = smallest_eigenpairs(SymMatrix::Sparse(&m), self.dim + 1)?;
        let mut coords = eig.vectors.columns(1, self.dim) * (y.n() as f64).sqrt();
        fix_signs(&mut coords);
        Ok(Lle {
            eigenvalues: eig.values.rows(1, self.dim).into_owned(),
            k: self.graph.k,
            reg: self.reg,
            train: TrainingPoints::of(y),
            graph,
            coords,
        })
    }
}

/// Reconstruction weights of every row of `y` from its neighbours `nbrs[i]`.
fn all_weights(y: PointRows<'_>, nbrs: &[Vec<usize>], reg: f64) -> Result<Vec<Vec<f64>>> {
    (0..y.n())
        .into_par_iter()
        .map(|i| match y {
            PointRows::Dense(y) => {
                reconstruction_weights(y, &y.row(i).transpose(), &nbrs[i], reg, i)
            }
            PointRows::Sparse(y) => reconstruction_weights_sparse(y, y.row(i), &nbrs[i], reg, i),
        })
        .collect()
}

/// A fitted LLE.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Lle {
    /// Eigenvalues of `M` for the embedding axes, ascending.
    pub eigenvalues: DVector<f64>,
    pub k: usize,
    pub reg: f64,
    train: TrainingPoints,
    graph: NeighbourGraph,
    coords: DMatrix<f64>,
}

/// [`Lle`] as files before format version 5 hold it, with dense training points.
#[derive(Deserialize)]
struct LleV4 {
    eigenvalues: DVector<f64>,
    k: usize,
    reg: f64,
    train: DMatrix<f64>,
    graph: NeighbourGraph,
    coords: DMatrix<f64>,
}

impl Lle {
    /// LLE as a Gaussian random field (spec §4.3): the exact log-likelihood of the centred
    /// training data under the precision `s (I - W)^T (I - W) + gamma I`, with the shape
    /// fixed by the fitted weights and the scale `s` fitted by maximum likelihood
    /// ([`crate::field::fixed_shape_evidence`]), comparable with MEU's and ALLE's likelihoods.
    /// The neighbour lists are the fit's: the kNN lists with the edges that joined the
    /// graph's components, if any.
    pub fn field_evidence(&self, gamma: f64) -> Result<unfold_core::Evidence> {
        let y = self.train.rows();
        let (nn, ..) = GraphSpec::knn(self.k).neighbours(y, Weighting::Binary, "LLE")?;
        let weights = all_weights(y, &nn.indices, self.reg)?;
        let shape = cost_matrix(&nn.indices, &weights, None);
        Ok(crate::field::fixed_shape_evidence_on(&shape, gamma, y, "LLE as a field")?.1)
    }
}

impl Embedding for Lle {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    fn graph(&self) -> Option<&NeighbourGraph> {
        Some(&self.graph)
    }
}

impl OutOfSample for Lle {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let nn = self.train.knn_query(y_new, self.k)?;
        let mut mean = DMatrix::zeros(y_new.nrows(), self.coords.ncols());
        for i in 0..y_new.nrows() {
            let (nbrs, reg) = (&nn.indices[i], self.reg);
            let w = match &self.train {
                TrainingPoints::Dense(t) => {
                    reconstruction_weights(t, &y_new.row(i).transpose(), nbrs, reg, i)?
                }
                TrainingPoints::Sparse(t) => {
                    let point = SparsePoints::from_dense(&y_new.rows(i, 1).into_owned())?;
                    reconstruction_weights_sparse(t, point.row(0), nbrs, reg, i)?
                }
            };
            for (&a, &wa) in nn.indices[i].iter().zip(&w) {
                let xa = self.coords.row(a) * wa;
                let mut row = mean.row_mut(i);
                row += xa;
            }
        }
        Ok(Projection::point(mean))
    }
}

/// LLE in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{decode_whole, Family, FitData, MethodInfo, Model, Points, Registered};
    use unfold_core::EvidenceKind;
    use unfold_core::Observer;

    const ABOUT: &str =
        "locally linear embedding (evidence: the field s M + gamma I with s fitted)";

    impl Registered for Lle {
        type Params = LleParams;

        fn info() -> MethodInfo {
            MethodInfo::new("lle", Family::Spectral, ABOUT)
                .evidence(EvidenceKind::LogLikelihood)
                .projects()
                .sparse_points()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            data.y.with_rows(|y| p.fit(y, observer))
        }

        /// Files before format version 5 hold the training points dense.
        fn from_payload(payload: &[u8], version: u32) -> Result<Self> {
            if version >= 5 {
                return decode_whole(payload, "model");
            }
            let old: LleV4 = decode_whole(payload, "model")?;
            Ok(Lle {
                eigenvalues: old.eigenvalues,
                k: old.k,
                reg: old.reg,
                train: TrainingPoints::Dense(old.train),
                graph: old.graph,
                coords: old.coords,
            })
        }
    }

    impl Model for Lle {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the embedding", &self.coords, None, None)?;
            let (n, q) = self.coords.shape();
            vector("the eigenvalues", &self.eigenvalues, Some(q))?;
            self.train.validate("the training points", n)?;
            graph("the graph", &self.graph, n)?;
            neighbours(self.k, n)?;
            non_negative("reg", self.reg)
        }

        fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
            Some(self)
        }

        /// The exact likelihood of the field with LLE's precision shape and a fitted scale,
        /// with MEU's base precision.
        fn evidence_on(&self, _y: Points<'_>) -> Result<unfold_core::Evidence> {
            self.field_evidence(crate::field::DEFAULT_GAMMA)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_core::Error;

    #[test]
    fn weights_are_barycentric_in_the_plane() {
        // y0 inside the triangle of its three neighbours in 2-D: with reg -> 0 the weights
        // are its barycentric coordinates and reconstruct it exactly.
        let y = DMatrix::from_row_slice(3, 2, &[0.0, 0.0, 4.0, 0.0, 0.0, 2.0]);
        let y0 = DVector::from_vec(vec![1.0, 0.5]);
        let w = reconstruction_weights(&y, &y0, &[0, 1, 2], 0.0, 9).unwrap();
        let expected = [0.5, 0.25, 0.25];
        for (a, b) in w.iter().zip(expected) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn cost_matrix_matches_dense_product() {
        let nbrs = vec![vec![1, 2], vec![0, 2], vec![1, 0]];
        let weights = vec![vec![0.3, 0.7], vec![0.5, 0.5], vec![-0.2, 1.2]];
        let m = cost_matrix(&nbrs, &weights, None).to_dense();
        let mut iw = DMatrix::<f64>::identity(3, 3);
        for (i, (idx, w)) in nbrs.iter().zip(&weights).enumerate() {
            for (&a, &wa) in idx.iter().zip(w) {
                iw[(i, a)] -= wa;
            }
        }
        assert!((m - iw.tr_mul(&iw)).norm() < 1e-14);
    }

    #[test]
    fn duplicate_points_are_reported() {
        let mut y = DMatrix::from_fn(30, 3, |i, j| ((i * 3 + j) as f64 * 0.37).sin());
        for i in 1..5 {
            let r = y.row(0).into_owned();
            y.set_row(i, &r);
        }
        match LleParams::new(2, 4).fit(&y) {
            Err(Error::DuplicatePoints { .. }) => {}
            other => panic!("expected duplicate points, got {other:?}"),
        }
    }
}
