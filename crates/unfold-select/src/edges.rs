//! Edge hypothesis tests: does a suspected edge (a short circuit between two folds of a
//! manifold, spec `lllvm.md` §4.2) raise or lower the evidence?

use serde::Serialize;
use unfold_core::{Evidence, Result};
use unfold_graph::NeighbourGraph;

/// The evidence of a graph with and without one edge.
#[derive(Clone, Debug, Serialize)]
pub struct EdgeTest {
    pub edge: (usize, usize),
    /// Whether the base graph has the edge.
    pub in_graph: bool,
    pub with_edge: f64,
    pub without_edge: f64,
    /// `with_edge - without_edge`: negative when the data speak against the edge.
    pub change: f64,
}

/// For each suspected edge, fits the model (through `fit`) on the base graph with the edge
/// added (weight 1) or removed, and reports the change in evidence. `fit` must return
/// evidence of one kind for every graph (its graph-dependent constants included).
///
/// # Errors
/// An invalid edge (out of range, a self loop) or a failed fit.
pub fn edge_tests<F>(
    base: &NeighbourGraph,
    edges: &[(usize, usize)],
    fit: F,
) -> Result<Vec<EdgeTest>>
where
    F: Fn(&NeighbourGraph) -> Result<Evidence>,
{
    let base_value = fit(base)?.value;
    edges
        .iter()
        .map(|&(i, j)| {
            let in_graph = base.has_edge(i, j);
            let other = if in_graph {
                fit(&base.without_edge(i, j)?)?.value
            } else {
                fit(&base.with_edge(i, j, 1.0)?)?.value
            };
            let (with_edge, without_edge) = if in_graph {
                (base_value, other)
            } else {
                (other, base_value)
            };
            Ok(EdgeTest {
                edge: (i, j),
                in_graph,
                with_edge,
                without_edge,
                change: with_edge - without_edge,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_core::EvidenceKind;

    #[test]
    fn change_is_with_minus_without_whichever_way_the_edge_starts() {
        let base = NeighbourGraph::from_edges(4, &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)]).unwrap();
        // A score that penalises the edge (0, 3) by 5 and rewards (1, 2) by 2.
        let score = |g: &NeighbourGraph| {
            let v = -5.0 * f64::from(u8::from(g.has_edge(0, 3)))
                + 2.0 * f64::from(u8::from(g.has_edge(1, 2)));
            Ok(Evidence::new(EvidenceKind::Elbo, v))
        };
        let t = edge_tests(&base, &[(0, 3), (1, 2)], score).unwrap();
        assert!(!t[0].in_graph && (t[0].change + 5.0).abs() < 1e-15);
        assert!(t[1].in_graph && (t[1].change - 2.0).abs() < 1e-15);
        assert!(edge_tests(&base, &[(0, 9)], score).is_err());
    }
}
