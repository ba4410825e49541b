//! The state every fitted field model keeps to embed and project new points (MEU, ALLE,
//! lle-pl), declared and checked once.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::Result;
use unfold_graph::NeighbourGraph;

/// The centred training points, their mean, the graph and the embedding of a fitted field
/// model. Each model keeps it as its last field, where these four were before, so model
/// files keep their layout.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Trained {
    /// The column means removed from the training points.
    pub mean: DVector<f64>,
    /// The centred training points (n x p).
    pub train: DMatrix<f64>,
    /// The graph the field lives on.
    pub graph: NeighbourGraph,
    /// The embedding (n x q).
    pub coords: DMatrix<f64>,
}

impl Trained {
    /// Checks a decoded model's state ([`crate::method::Model::validate`]) with the
    /// eigenvalues and latent scale of its q axes and its neighbours per point `k`;
    /// returns the number of points n.
    pub fn validate(
        &self,
        eigenvalues: &DVector<f64>,
        latent_scale: &DVector<f64>,
        k: usize,
    ) -> Result<usize> {
        use crate::method::validate::*;
        matrix("the embedding", &self.coords, None, None)?;
        let (n, q) = self.coords.shape();
        matrix("the training points", &self.train, Some(n), None)?;
        vector("the mean", &self.mean, Some(self.train.ncols()))?;
        vector("the eigenvalues", eigenvalues, Some(q))?;
        vector("the latent scale", latent_scale, Some(q))?;
        graph("the graph", &self.graph, n)?;
        neighbours(k, n)?;
        Ok(n)
    }
}
