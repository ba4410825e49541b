//! The undirected weighted neighbourhood graph.

use crate::knn::{within_radius, Knn};
use crate::laplacian::Laplacian;
use crate::weights::{Symmetrisation, Weighting};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{check_finite, check_points, Error, Result};
use unfold_linalg::CsrMatrix;

/// An undirected graph on points `0..n` with one finite, strictly positive weight per
/// unordered pair `{i, j}` (DESIGN.md: one parameter per unordered pair) and no self loops.
///
/// Storage is compressed sparse rows holding **both** directions, each row's neighbours
/// sorted by index, so the adjacency `W` (`w_ij = w_ji`) is stored exactly as a symmetric
/// CSR matrix. Deserialisation re-validates all of this, so a corrupt file is an error,
/// not a broken graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GraphParts", into = "GraphParts")]
pub struct NeighbourGraph {
    n: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    weights: Vec<f64>,
}

/// The serialised form of a [`NeighbourGraph`].
#[derive(Serialize, Deserialize)]
struct GraphParts {
    n: usize,
    indptr: Vec<usize>,
    indices: Vec<usize>,
    weights: Vec<f64>,
}

impl From<NeighbourGraph> for GraphParts {
    fn from(g: NeighbourGraph) -> Self {
        GraphParts {
            n: g.n,
            indptr: g.indptr,
            indices: g.indices,
            weights: g.weights,
        }
    }
}

impl TryFrom<GraphParts> for NeighbourGraph {
    type Error = Error;

    fn try_from(p: GraphParts) -> Result<Self> {
        let bad = |m: String| {
            Err(Error::invalid(
                "graph",
                format!("stored graph is corrupt: {m}"),
            ))
        };
        if p.n.checked_add(1) != Some(p.indptr.len())
            || p.indptr[0] != 0
            || p.indptr[p.n] != p.indices.len()
        {
            return bad("row pointers do not match the number of points and entries".into());
        }
        if p.weights.len() != p.indices.len() || p.indptr.windows(2).any(|w| w[0] > w[1]) {
            return bad("row pointers decrease or weights and indices differ in length".into());
        }
        let g = NeighbourGraph {
            n: p.n,
            indptr: p.indptr,
            indices: p.indices,
            weights: p.weights,
        };
        for i in 0..g.n {
            let (js, ws) = g.neighbours(i);
            if js.windows(2).any(|w| w[0] >= w[1]) {
                return bad(format!(
                    "neighbours of point {i} are not strictly increasing"
                ));
            }
            for (&j, &w) in js.iter().zip(ws) {
                if j >= g.n || j == i || !(w > 0.0 && w.is_finite()) {
                    return bad(format!("edge ({i}, {j}) with weight {w} is invalid"));
                }
                if g.weight(j, i) != Some(w) {
                    return bad(format!("edge ({i}, {j}) is not stored symmetrically"));
                }
            }
        }
        Ok(g)
    }
}

/// Fails unless `n >= 1`.
fn check_nonempty(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::Empty("graph".into()));
    }
    Ok(())
}

/// Fails unless `i` and `j` are distinct points of a graph on `n` points.
fn check_pair(n: usize, i: usize, j: usize) -> Result<()> {
    if i >= n || j >= n {
        return Err(Error::invalid(
            "edge",
            format!("edge ({i}, {j}) refers to a point outside 0..{n}"),
        ));
    }
    if i == j {
        return Err(Error::invalid(
            "edge",
            format!("self loop ({i}, {i}): a neighbourhood graph has no self loops"),
        ));
    }
    Ok(())
}

/// Fails unless `w` is finite and strictly positive.
fn check_weight(i: usize, j: usize, w: f64) -> Result<()> {
    if !(w > 0.0 && w.is_finite()) {
        return Err(Error::invalid(
            "weight",
            format!("edge ({i}, {j}) has weight {w}; weights must be finite and positive (leave the edge out instead of giving it weight 0)"),
        ));
    }
    Ok(())
}

impl NeighbourGraph {
    /// Assembles the CSR arrays from per-point neighbour lists that are already symmetric
    /// and free of self loops and repeated neighbours; sorts each list.
    fn from_rows(mut rows: Vec<Vec<(usize, f64)>>) -> Self {
        let n = rows.len();
        let mut indptr = Vec::with_capacity(n + 1);
        indptr.push(0);
        let nnz = rows.iter().map(Vec::len).sum();
        let mut indices = Vec::with_capacity(nnz);
        let mut weights = Vec::with_capacity(nnz);
        for row in &mut rows {
            row.sort_unstable_by_key(|&(j, _)| j);
            for &(j, w) in row.iter() {
                indices.push(j);
                weights.push(w);
            }
            indptr.push(indices.len());
        }
        NeighbourGraph {
            n,
            indptr,
            indices,
            weights,
        }
    }

    /// The kNN graph: directed relations `i -> j` for `j` in `knn.indices[i]`, made
    /// undirected by `sym`, weighted by `w` of the kNN distance (if both directions are
    /// listed with different distances, the smaller is used).
    ///
    /// # Errors
    /// An inconsistent `knn` (ragged lists, index out of range, self neighbour, repeated
    /// neighbour, negative or non-finite distance), invalid `w`, or an invalid weight
    /// (see [`Weighting::edge_weight`]).
    pub fn from_knn(knn: &Knn, sym: Symmetrisation, w: Weighting) -> Result<Self> {
        w.validate()?;
        let n = knn.indices.len();
        check_nonempty(n)?;
        if knn.distances.len() != n {
            return Err(Error::DimensionMismatch(format!(
                "kNN result has {} index lists but {} distance lists",
                n,
                knn.distances.len()
            )));
        }
        // Validate each point's list (sorted in a scratch row to find repeats) and count
        // every relation under its unordered pair `(a, b)`, `a < b`, bucketed by `a`.
        let mut bucket = vec![0usize; n + 1];
        let mut row: Vec<(usize, f64)> = Vec::new();
        for (i, (js, ds)) in knn.indices.iter().zip(&knn.distances).enumerate() {
            if js.len() != ds.len() {
                return Err(Error::DimensionMismatch(format!(
                    "point {i} has {} neighbour indices but {} distances",
                    js.len(),
                    ds.len()
                )));
            }
            row.clear();
            for (&j, &d) in js.iter().zip(ds) {
                check_pair(n, i, j)?;
                if !(d >= 0.0 && d.is_finite()) {
                    return Err(Error::invalid(
                        "knn",
                        format!("distance {d} from point {i} to {j} is negative or not finite"),
                    ));
                }
                row.push((j, d));
                bucket[i.min(j) + 1] += 1;
            }
            row.sort_unstable_by_key(|&(j, _)| j);
            if let Some(w) = row.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(Error::invalid(
                    "knn",
                    format!(
                        "point {} is listed twice among the neighbours of point {i}",
                        w[0].0
                    ),
                ));
            }
        }
        for a in 0..n {
            bucket[a + 1] += bucket[a];
        }
        // The relations by pair (a counting sort), each bucket then ordered by `b`, so a
        // pair listed in both directions shows up twice in a row: no lookups in other
        // points' lists (random memory accesses).
        let mut next = bucket.clone();
        let mut by_first = vec![(0usize, 0.0f64); bucket[n]];
        for (i, (js, ds)) in knn.indices.iter().zip(&knn.distances).enumerate() {
            for (&j, &d) in js.iter().zip(ds) {
                let a = i.min(j);
                by_first[next[a]] = (i.max(j), d);
                next[a] += 1;
            }
        }
        // Keep each edge once, with its weight, compacting the buckets in place.
        let mut kept = 0;
        for a in 0..n {
            let (from, to) = (bucket[a], bucket[a + 1]);
            bucket[a] = kept;
            by_first[from..to].sort_unstable_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)));
            let mut p = from;
            while p < to {
                let (b, d) = by_first[p];
                let both = p + 1 < to && by_first[p + 1].0 == b;
                p += if both { 2 } else { 1 };
                if both || sym == Symmetrisation::Union {
                    // Ordered by distance within the pair: `d` is the smaller of the two.
                    by_first[kept] = (b, w.edge_weight(a, b, d)?);
                    kept += 1;
                }
            }
        }
        bucket[n] = kept;
        let edges = (0..n).flat_map(|a| {
            by_first[bucket[a]..bucket[a + 1]]
                .iter()
                .map(move |&(b, w)| (a, b, w))
        });
        Ok(Self::from_pairs(n, edges))
    }

    /// The graph with the undirected edges `(i, j, w_ij)` of `pairs`, valid and each pair
    /// listed once, stored in both directions: rows are filled by a counting sort (two
    /// passes over `pairs`), then each row is ordered by neighbour.
    fn from_pairs(n: usize, pairs: impl Iterator<Item = (usize, usize, f64)> + Clone) -> Self {
        let mut indptr = vec![0usize; n + 1];
        for (i, j, _) in pairs.clone() {
            indptr[i + 1] += 1;
            indptr[j + 1] += 1;
        }
        for i in 0..n {
            indptr[i + 1] += indptr[i];
        }
        let mut next = indptr.clone();
        let mut indices = vec![0usize; indptr[n]];
        let mut weights = vec![0.0f64; indptr[n]];
        for (i, j, w) in pairs {
            (indices[next[i]], weights[next[i]]) = (j, w);
            next[i] += 1;
            (indices[next[j]], weights[next[j]]) = (i, w);
            next[j] += 1;
        }
        let mut row = Vec::new();
        for i in 0..n {
            let range = indptr[i]..indptr[i + 1];
            row.clear();
            row.extend(
                indices[range.clone()]
                    .iter()
                    .copied()
                    .zip(weights[range.clone()].iter().copied()),
            );
            row.sort_unstable_by_key(|&(j, _)| j);
            for (p, (j, w)) in range.zip(&row) {
                (indices[p], weights[p]) = (*j, *w);
            }
        }
        NeighbourGraph {
            n,
            indptr,
            indices,
            weights,
        }
    }

    /// The epsilon-ball graph: `i ~ j` iff the Euclidean distance `||y_i - y_j|| <= eps`,
    /// weighted by `w`. Points are the rows of `points`. Points with no neighbour within
    /// `eps` stay isolated (see [`NeighbourGraph::ensure_connected`]).
    ///
    /// # Errors
    /// Empty or non-finite `points`, `eps` not finite and positive, invalid `w` or weight.
    pub fn epsilon_ball(points: &DMatrix<f64>, eps: f64, w: Weighting) -> Result<Self> {
        check_points(points, "points")?;
        w.validate()?;
        if !(eps > 0.0 && eps.is_finite()) {
            return Err(Error::invalid(
                "eps",
                format!("the ball radius must be finite and positive, got {eps}"),
            ));
        }
        let found = within_radius(points, eps)?;
        let mut rows = Vec::with_capacity(found.len());
        for (i, list) in found.into_iter().enumerate() {
            let row = list
                .into_iter()
                .map(|(d, j)| Ok((j, w.edge_weight(i, j, d)?)))
                .collect::<Result<Vec<_>>>()?;
            rows.push(row);
        }
        Ok(Self::from_rows(rows))
    }

    /// A graph on `n` points from undirected edges `(i, j, w_ij)` (either orientation).
    ///
    /// # Errors
    /// `n = 0`, an index out of range, a self loop, a weight that is not finite and
    /// positive, or the same unordered pair listed twice.
    pub fn from_edges(n: usize, edges: &[(usize, usize, f64)]) -> Result<Self> {
        check_nonempty(n)?;
        for &(i, j, w) in edges {
            check_pair(n, i, j)?;
            check_weight(i, j, w)?;
        }
        let g = Self::from_pairs(n, edges.iter().copied());
        for i in 0..n {
            if let Some(p) = g.neighbours(i).0.windows(2).find(|p| p[0] == p[1]) {
                return Err(Error::invalid(
                    "edges",
                    format!("the pair ({i}, {}) is listed more than once", p[0]),
                ));
            }
        }
        Ok(g)
    }

    /// The graph with adjacency `a` (n x n): `i ~ j` iff `a_ij != 0`, weight `a_ij`.
    ///
    /// # Errors
    /// Not square or empty, a non-finite or negative entry, a non-zero diagonal entry, or
    /// `a_ij != a_ji` (exact symmetry is required: symmetrise first if needed).
    pub fn from_adjacency(a: &DMatrix<f64>) -> Result<Self> {
        check_finite(a, "adjacency matrix")?;
        let n = a.nrows();
        if a.ncols() != n {
            return Err(Error::DimensionMismatch(format!(
                "an adjacency matrix must be square, got {} x {}",
                n,
                a.ncols()
            )));
        }
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for j in 0..n {
            for i in 0..n {
                let w = a[(i, j)];
                if w == 0.0 {
                    continue;
                }
                if i == j {
                    return Err(Error::invalid(
                        "adjacency",
                        format!("diagonal entry ({i}, {i}) is {w}; a neighbourhood graph has no self loops"),
                    ));
                }
                check_weight(i, j, w)?;
                if a[(j, i)] != w {
                    return Err(Error::invalid(
                        "adjacency",
                        format!(
                            "not symmetric: entry ({i}, {j}) is {w} but ({j}, {i}) is {}",
                            a[(j, i)]
                        ),
                    ));
                }
                rows[i].push((j, w));
            }
        }
        Ok(Self::from_rows(rows))
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of undirected edges (unordered pairs).
    pub fn n_edges(&self) -> usize {
        self.indices.len() / 2
    }

    /// Neighbours of point `i` in increasing index order, and their edge weights (both
    /// empty for `i >= n`, like [`NeighbourGraph::has_edge`] answering false).
    pub fn neighbours(&self, i: usize) -> (&[usize], &[f64]) {
        if i >= self.n {
            return (&[], &[]);
        }
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.weights[r])
    }

    /// All edges `(i, j, w_ij)` with `i < j`, sorted by `(i, j)`.
    pub fn edges(&self) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::with_capacity(self.n_edges());
        for i in 0..self.n {
            let (js, ws) = self.neighbours(i);
            for (&j, &w) in js.iter().zip(ws) {
                if i < j {
                    out.push((i, j, w));
                }
            }
        }
        out
    }

    /// Whether `{i, j}` is an edge (false for out-of-range indices).
    pub fn has_edge(&self, i: usize, j: usize) -> bool {
        self.weight(i, j).is_some()
    }

    /// The weight of edge `{i, j}`, `None` if absent or out of range.
    pub fn weight(&self, i: usize, j: usize) -> Option<f64> {
        let (js, ws) = self.neighbours(i);
        js.binary_search(&j).ok().map(|p| ws[p])
    }

    /// Neighbour lists with weights, as `from_rows` takes them.
    fn rows(&self) -> Vec<Vec<(usize, f64)>> {
        (0..self.n)
            .map(|i| {
                let (js, ws) = self.neighbours(i);
                js.iter().copied().zip(ws.iter().copied()).collect()
            })
            .collect()
    }

    /// A copy with edge `{i, j}` added, or its weight replaced, with weight `w`.
    ///
    /// # Errors
    /// Out-of-range indices, `i == j`, or `w` not finite and positive.
    pub fn with_edge(&self, i: usize, j: usize, w: f64) -> Result<Self> {
        check_pair(self.n, i, j)?;
        check_weight(i, j, w)?;
        let mut rows = self.rows();
        for (a, b) in [(i, j), (j, i)] {
            rows[a].retain(|&(m, _)| m != b);
            rows[a].push((b, w));
        }
        Ok(Self::from_rows(rows))
    }

    /// A copy with edge `{i, j}` removed.
    ///
    /// # Errors
    /// Out-of-range indices, `i == j`, or no such edge.
    pub fn without_edge(&self, i: usize, j: usize) -> Result<Self> {
        check_pair(self.n, i, j)?;
        if !self.has_edge(i, j) {
            return Err(Error::invalid(
                "edge",
                format!("({i}, {j}) is not an edge of the graph, so it cannot be removed"),
            ));
        }
        let mut rows = self.rows();
        rows[i].retain(|&(m, _)| m != j);
        rows[j].retain(|&(m, _)| m != i);
        Ok(Self::from_rows(rows))
    }

    /// Weighted degrees `d_i = sum_j w_ij` (the row sums of `W`).
    pub fn degrees(&self) -> Vec<f64> {
        (0..self.n)
            .map(|i| self.neighbours(i).1.iter().sum())
            .collect()
    }

    /// The same edges with weights recomputed by `w` from the Euclidean distances between
    /// the rows of `points` (n x p).
    ///
    /// # Errors
    /// Empty or non-finite `points`, a row count other than `n`, invalid `w` or weight.
    pub fn reweighted<'p>(
        &self,
        points: impl Into<crate::PointRows<'p>>,
        w: Weighting,
    ) -> Result<Self> {
        let points = points.into();
        w.validate()?;
        if points.n() != self.n {
            return Err(Error::DimensionMismatch(format!(
                "the graph has {} points but the point matrix has {} rows",
                self.n,
                points.n()
            )));
        }
        let pairs = (0..self.n).flat_map(|i| self.neighbours(i).0.iter().map(move |&j| (i, j)));
        let lengths = points.distances(pairs.clone())?;
        let weights = pairs
            .zip(lengths)
            .map(|((i, j), d)| w.edge_weight(i, j, d))
            .collect::<Result<_>>()?;
        Ok(NeighbourGraph {
            weights,
            ..self.clone()
        })
    }

    /// The dense symmetric adjacency `W` (zero diagonal).
    pub fn adjacency_dense(&self) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(self.n, self.n);
        for i in 0..self.n {
            let (js, ws) = self.neighbours(i);
            for (&j, &w) in js.iter().zip(ws) {
                a[(i, j)] = w;
            }
        }
        a
    }

    /// The dense graph Laplacian `L = diag(W 1) - W`: symmetric, positive semidefinite,
    /// rows summing to zero, `x^T L x = sum_{i<j} w_ij (x_i - x_j)^2` (each unordered pair
    /// once; a sum over ordered pairs is twice this).
    pub fn laplacian_dense(&self) -> DMatrix<f64> {
        Laplacian::new(self.n).dense(self.edges())
    }

    /// The Laplacian `diag(W 1) - W` in CSR form; the pattern is the edges plus the full
    /// diagonal (an explicit 0 for an isolated point). The edges come sorted, so each
    /// degree sums its row's weights in column order, as [`NeighbourGraph::degrees`] does.
    pub fn laplacian_sparse(&self) -> CsrMatrix {
        Laplacian::new(self.n).sparse_from_rows(&self.indptr, &self.indices, &self.weights)
    }
}
