//! The kNN graph every graph-based model starts from: its specification and its build.

use crate::{JoiningEdges, Knn, NeighbourGraph, PointRows, Symmetrisation, Weighting};
use serde::{Deserialize, Serialize};
use unfold_core::{Observer, Result};

/// What a kNN graph that falls apart into several components becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Connect {
    /// Join the components through their closest pairs of points (one edge per pair of
    /// components along a minimum spanning tree of the components, as scikit-learn's
    /// Isomap does), with a warning that names the edges.
    #[default]
    Nearest,
    /// Leave the graph as the kNN lists make it: models that need one component refuse it
    /// ([`unfold_core::Error::DisconnectedGraph`]); SPL, proper on any graph, embeds the
    /// components apart.
    Off,
}

/// How the neighbourhood graph is built: `k` nearest neighbours per point, symmetrised by
/// union (an edge when either point is among the other's k nearest) or mutual (both), and
/// joined into one component or refused when it falls apart.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphSpec {
    /// Neighbours per point.
    pub k: usize,
    /// How the directed kNN lists become an undirected graph.
    pub symmetrisation: Symmetrisation,
    /// What a graph of several components becomes.
    pub connect: Connect,
}

impl GraphSpec {
    /// A union kNN graph, its components joined through their closest pairs.
    pub fn knn(k: usize) -> Self {
        GraphSpec {
            k,
            symmetrisation: Symmetrisation::Union,
            connect: Connect::Nearest,
        }
    }

    /// This graph with `connect`.
    pub fn connect(self, connect: Connect) -> Self {
        GraphSpec { connect, ..self }
    }

    /// Builds the kNN lists and the symmetric graph on the rows of `y` as
    /// [`GraphSpec::neighbours`] does, telling `observer` of the edges it added to join the
    /// graph's components, and fails with [`unfold_core::Error::DisconnectedGraph`] when
    /// the graph is left in several ([`Connect::Off`]): every graph-based model of unfold
    /// but SPL needs one component. `method` names the caller in the error for a bad `k`.
    pub fn build<'p>(
        &self,
        y: impl Into<PointRows<'p>>,
        weighting: Weighting,
        method: &str,
        observer: &dyn Observer,
    ) -> Result<(Knn, NeighbourGraph)> {
        let (nn, graph) = self.build_any(y, weighting, method, observer)?;
        // With Connect::Nearest the graph is joined into one component already.
        if self.connect == Connect::Off {
            graph.ensure_connected()?;
        }
        Ok((nn, graph))
    }

    /// [`GraphSpec::build`] for a model that is proper on a graph of several components:
    /// with [`Connect::Off`] the graph is left as the kNN lists make it.
    pub fn build_any<'p>(
        &self,
        y: impl Into<PointRows<'p>>,
        weighting: Weighting,
        method: &str,
        observer: &dyn Observer,
    ) -> Result<(Knn, NeighbourGraph)> {
        let (nn, graph, added) = self.neighbours(y, weighting, method)?;
        if !added.is_empty() {
            observer.warn(&joined_message(self.k, &added));
        }
        Ok((nn, graph))
    }

    /// The kNN lists and the symmetric graph on the rows of `y`. With [`Connect::Nearest`]
    /// a graph of several components is joined through their closest pairs
    /// ([`NeighbourGraph::joined`], the added edges returned): each added edge `(i, j)`
    /// also enters the neighbour lists of `i` and `j` (in order of distance, where it is
    /// not there already), so models that read the lists see the same connected
    /// structure. With [`Connect::Off`] the graph is left as the lists make it.
    pub fn neighbours<'p>(
        &self,
        y: impl Into<PointRows<'p>>,
        weighting: Weighting,
        method: &str,
    ) -> Result<(Knn, NeighbourGraph, JoiningEdges)> {
        let y = y.into();
        unfold_core::check_k(y.n(), self.k, method)?;
        let mut nn = y.knn(self.k)?;
        let graph = NeighbourGraph::from_knn(&nn, self.symmetrisation, weighting)?;
        if self.connect == Connect::Off || graph.components().count == 1 {
            return Ok((nn, graph, Vec::new()));
        }
        let (graph, added) = graph.joined(y, weighting)?;
        for &(i, j, d) in &added {
            for (a, b) in [(i, j), (j, i)] {
                if !nn.indices[a].contains(&b) {
                    let at = nn.distances[a].partition_point(|&x| x <= d);
                    nn.indices[a].insert(at, b);
                    nn.distances[a].insert(at, d);
                }
            }
        }
        Ok((nn, graph, added))
    }
}

/// The warning for a graph joined by `added`: how many edges, and where.
fn joined_message(k: usize, added: &JoiningEdges) -> String {
    const SHOWN: usize = 5;
    let edges: Vec<String> = added
        .iter()
        .take(SHOWN)
        .map(|&(i, j, d)| format!("{i}-{j} ({d:.4})"))
        .collect();
    let more = if added.len() > SHOWN {
        format!(" and {} more", added.len() - SHOWN)
    } else {
        String::new()
    };
    format!(
        "the kNN graph (k = {k}) has {} separate components; joined them by {} edge{} between \
         their closest points (points, distance): {}{more}. Raise k to join them by the data's \
         own neighbours, or pass connect = off to refuse such data",
        added.len() + 1,
        added.len(),
        if added.len() == 1 { "" } else { "s" },
        edges.join(", ")
    )
}
