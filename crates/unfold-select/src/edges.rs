//! Edge hypothesis tests: does a suspected edge (a short circuit between two folds of a
//! manifold, spec `lllvm.md` §4.2) raise or lower the evidence? And the edge lists that
//! give a sweep its graphs (`unfold select --graphs`).

use serde::Serialize;
use std::path::Path;
use unfold_core::{Error, Evidence, Result};
use unfold_data::{parse_csv, CsvOptions};
use unfold_graph::NeighbourGraph;

/// Reads the edge list at `path` as a graph on `n` points ([`parse_edge_list`]).
pub fn read_edge_list(path: &Path, n: usize) -> Result<NeighbourGraph> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_edge_list(&bytes, &path.display().to_string(), n)
}

/// A graph on `n` points from an edge list: CSV rows `i,j` of 0-based point indices (two
/// distinct points, each pair once), an optional header row and an optional third column
/// (a weight, as `unfold fit --graph-out` writes; ignored: every edge has weight 1).
/// `source` names the input in error messages.
///
/// # Errors
/// Text that is not UTF-8 or not CSV, fewer than two columns, an index that is not a
/// whole number in `0..n`, a self loop or a pair listed twice (the error names the row).
pub fn parse_edge_list(bytes: &[u8], source: &str, n: usize) -> Result<NeighbourGraph> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::Parse {
        source_name: source.to_string(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        message: "not UTF-8 text; an edge list is CSV rows i,j".to_string(),
    })?;
    let table = parse_csv(text, source, &CsvOptions { label_column: None })?;
    let m = &table.points;
    if m.ncols() < 2 {
        return Err(Error::invalid(
            "graphs",
            format!("{source}: an edge list needs two columns i,j"),
        ));
    }
    let index = |v: f64| (v >= 0.0 && v.fract() == 0.0 && v < n as f64).then_some(v as usize);
    let mut edges = Vec::with_capacity(m.nrows());
    for r in 0..m.nrows() {
        let (i, j) = (m[(r, 0)], m[(r, 1)]);
        match (index(i), index(j)) {
            (Some(i), Some(j)) if i != j => edges.push((i, j, 1.0)),
            _ => {
                return Err(Error::invalid(
                    "graphs",
                    format!(
                    "{source}, edge {}: ({i}, {j}) is not a pair of distinct point indices 0..{n}",
                    r + 1
                ),
                ))
            }
        }
    }
    NeighbourGraph::from_edges(n, &edges)
        .map_err(|e| Error::invalid("graphs", format!("{source}: {e}")))
}

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
