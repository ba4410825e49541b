//! The kNN graph every graph-based model starts from: its specification and its build.

use crate::{knn, Knn, NeighbourGraph, Symmetrisation, Weighting};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::Result;

/// How the neighbourhood graph is built: `k` nearest neighbours per point, symmetrised by
/// union (an edge when either point is among the other's k nearest) or mutual (both).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphSpec {
    /// Neighbours per point.
    pub k: usize,
    /// How the directed kNN lists become an undirected graph.
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
    /// graph-based model of unfold needs one connected component). `method` names the
    /// caller in the error for a bad `k`.
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
