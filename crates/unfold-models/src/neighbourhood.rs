//! The kNN graph every graph-based spectral method starts from.

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::Result;
use unfold_graph::{knn, Knn, NeighbourGraph, Symmetrisation, Weighting};

/// How the neighbourhood graph is built: `k` nearest neighbours per point, symmetrised by
/// union (an edge when either point is among the other's k nearest) or mutual (both).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphSpec {
    pub k: usize,
    pub symmetrisation: Symmetrisation,
}

impl GraphSpec {
    /// A union kNN graph.
    pub fn knn(k: usize) -> Self {
        GraphSpec {
            k,
            symmetrisation: Symmetrisation::Union,
        }
    }

    /// Builds the kNN lists and the symmetric graph on the rows of `y`, and fails with
    /// [`unfold_core::Error::DisconnectedGraph`] when the graph falls apart (every
    /// spectral method here needs one connected component).
    pub fn build(
        &self,
        y: &DMatrix<f64>,
        weighting: Weighting,
        method: &str,
    ) -> Result<(Knn, NeighbourGraph)> {
        unfold_core::check_k(y.nrows(), self.k, method)?;
        let nn = knn(y, self.k)?;
        let graph = NeighbourGraph::from_knn(&nn, self.symmetrisation, weighting)?;
        graph.ensure_connected()?;
        Ok((nn, graph))
    }
}
