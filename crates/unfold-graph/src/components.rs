//! Connected components.

use crate::graph::NeighbourGraph;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};

/// The connected components of a graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Components {
    /// Number of components.
    pub count: usize,
    /// `labels[i]` is the component of point `i`; components are numbered in order of
    /// their smallest point (point 0 is in component 0).
    pub labels: Vec<usize>,
    /// `sizes[c]` is the number of points in component `c`.
    pub sizes: Vec<usize>,
}

/// The edges `(i, j, distance)` that [`NeighbourGraph::joined`] adds.
pub type JoiningEdges = Vec<(usize, usize, f64)>;

impl NeighbourGraph {
    /// Connected components by breadth-first search.
    pub fn components(&self) -> Components {
        let n = self.n();
        let mut labels = vec![usize::MAX; n];
        let mut sizes = Vec::new();
        let mut queue = Vec::with_capacity(n);
        for start in 0..n {
            if labels[start] != usize::MAX {
                continue;
            }
            let c = sizes.len();
            labels[start] = c;
            queue.clear();
            queue.push(start);
            let mut head = 0;
            while head < queue.len() {
                let i = queue[head];
                head += 1;
                for &j in self.neighbours(i).0 {
                    if labels[j] == usize::MAX {
                        labels[j] = c;
                        queue.push(j);
                    }
                }
            }
            sizes.push(queue.len());
        }
        Components {
            count: sizes.len(),
            labels,
            sizes,
        }
    }

    /// A copy joined into one connected component by the edges of
    /// [`crate::joining_edges`]: the closest pairs of points between components, along a
    /// minimum spanning tree of the components. The new edges are weighted by `w` of their
    /// length and returned as `(i, j, distance)`; a connected graph comes back unchanged
    /// with none.
    ///
    /// # Errors
    /// `points` with another row count than the graph, or bad points or weights.
    pub fn joined<'p>(
        &self,
        points: impl Into<crate::PointRows<'p>>,
        w: crate::Weighting,
    ) -> Result<(NeighbourGraph, JoiningEdges)> {
        let points = points.into();
        if points.n() != self.n() {
            return Err(Error::DimensionMismatch(format!(
                "the graph has {} points but the point matrix has {} rows",
                self.n(),
                points.n()
            )));
        }
        let c = self.components();
        let added = points.joining_edges(&c.labels, c.count)?;
        let mut edges = self.edges();
        for &(i, j, d) in &added {
            edges.push((i, j, w.edge_weight(i, j, d)?));
        }
        Ok((NeighbourGraph::from_edges(self.n(), &edges)?, added))
    }

    /// Fails with [`Error::DisconnectedGraph`] unless the graph is connected.
    pub fn ensure_connected(&self) -> Result<()> {
        let c = self.components();
        if c.count == 1 {
            return Ok(());
        }
        Err(disconnected(&c, self.n()))
    }
}

/// The error for a graph with components `c`, with advice.
pub(crate) fn disconnected(c: &Components, n: usize) -> Error {
    let largest = c.sizes.iter().copied().max().unwrap_or(0);
    let mut sizes = c.sizes.clone();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let shown: Vec<String> = sizes.iter().take(8).map(usize::to_string).collect();
    let more = if sizes.len() > 8 { ", ..." } else { "" };
    Error::DisconnectedGraph {
        components: c.count,
        largest,
        n,
        advice: format!(
            "component sizes {}{more}; increase k (e.g. double it) or the ball radius, use Union rather than Mutual symmetrisation, or fit the components separately",
            shown.join(", ")
        ),
    }
}
