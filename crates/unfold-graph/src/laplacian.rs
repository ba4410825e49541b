//! The weighted graph Laplacian of an edge list, dense or sparse: one builder for every
//! model whose precision has the Laplacian form.

use nalgebra::DMatrix;
use unfold_linalg::CsrMatrix;

/// Builds `scale (diag(W 1) - W) + shift I` from weighted edges `(i, j, w_ij)`, each
/// unordered pair given once (`i != j`): off-diagonal `-scale w_ij`, diagonal
/// `shift + scale sum_j w_ij` (spec `meu_alle_drill.md` notation table: `L 1 = 0`,
/// `l_ii = sum_{j in N(i)} lambda_ij`). A pair given twice has its weights added.
///
/// Sums run in the order of the edges, so the same list gives the same bits: a vertex's
/// degree adds its edges' weights in list order, the shift last in [`Laplacian::sparse`]
/// and first in the dense builders (where the diagonal starts from it).
///
/// ```
/// use unfold_graph::Laplacian;
///
/// // A path 0 - 1 - 2 with weights 2 and 3, scaled by 2, plus 0.5 I.
/// let edges = [(0, 1, 2.0), (1, 2, 3.0)];
/// let l = Laplacian::new(3).scale(2.0).shift(0.5);
/// let dense = l.dense(edges);
/// assert_eq!(dense[(1, 1)], 0.5 + 2.0 * 5.0);
/// assert_eq!(dense[(0, 1)], -4.0);
/// assert_eq!(l.sparse(edges).to_dense(), dense);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Laplacian {
    n: usize,
    scale: f64,
    shift: f64,
}

impl Laplacian {
    /// The plain Laplacian `diag(W 1) - W` on `n` vertices (scale 1, no shift).
    pub fn new(n: usize) -> Self {
        Laplacian {
            n,
            scale: 1.0,
            shift: 0.0,
        }
    }

    /// Multiplies every weight by `scale`.
    pub fn scale(self, scale: f64) -> Self {
        Laplacian { scale, ..self }
    }

    /// Adds `shift I`.
    pub fn shift(self, shift: f64) -> Self {
        Laplacian { shift, ..self }
    }

    /// The dense n x n matrix.
    pub fn dense(&self, edges: impl IntoIterator<Item = (usize, usize, f64)>) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.n, self.n);
        self.add_to(&mut m, edges);
        m
    }

    /// Adds the matrix onto `m` (n x n) in place: first `shift` to the diagonal, then each
    /// edge in turn. Dense precisions that carry more than a Laplacian (MEU's `11^T / n`)
    /// start from that and add the Laplacian here, with no second n x n matrix.
    ///
    /// # Panics
    /// If `m` is not n x n or an edge is out of range.
    pub fn add_to(
        &self,
        m: &mut DMatrix<f64>,
        edges: impl IntoIterator<Item = (usize, usize, f64)>,
    ) {
        assert_eq!(
            m.shape(),
            (self.n, self.n),
            "Laplacian::add_to: wrong shape"
        );
        for i in 0..self.n {
            m[(i, i)] += self.shift;
        }
        for (i, j, w) in edges {
            debug_assert_ne!(i, j, "a Laplacian edge joins two vertices");
            let v = self.scale * w;
            m[(i, i)] += v;
            m[(j, j)] += v;
            m[(i, j)] -= v;
            m[(j, i)] -= v;
        }
    }

    /// The CSR matrix. Its pattern is the given edges (in both directions, zero weights
    /// included: leave those out of `edges` to drop them) plus the whole diagonal. The
    /// edges are read twice (row lengths first, then the entries, straight into their
    /// rows), so the iterator must be cheap to clone.
    ///
    /// # Panics
    /// If an edge is out of range.
    pub fn sparse<I>(&self, edges: I) -> CsrMatrix
    where
        I: IntoIterator<Item = (usize, usize, f64)>,
        I::IntoIter: Clone,
    {
        let n = self.n;
        let edges = edges.into_iter();
        // Row `i` holds its incident edges in the order given, then its diagonal; the
        // rows are then sorted by column (stably: a pair given twice sums in order).
        let mut start = vec![0usize; n + 1];
        for (i, j, _) in edges.clone() {
            start[i + 1] += 1;
            start[j + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i] + 1;
        }
        let mut next = start[..n].to_vec();
        let mut entries = vec![(0usize, 0.0f64); start[n]];
        let mut degree = vec![0.0; n];
        for (i, j, w) in edges {
            debug_assert_ne!(i, j, "a Laplacian edge joins two vertices");
            let v = self.scale * w;
            entries[next[i]] = (j, -v);
            entries[next[j]] = (i, -v);
            next[i] += 1;
            next[j] += 1;
            degree[i] += v;
            degree[j] += v;
        }
        for i in 0..n {
            entries[start[i + 1] - 1] = (i, degree[i] + self.shift);
        }
        CsrMatrix::from_row_buckets(n, n, &start, entries)
    }

    /// The CSR matrix of a graph already stored by rows: row `i`'s neighbours
    /// `indices[indptr[i]..indptr[i + 1]]`, sorted, without `i`, with their `weights`
    /// (every edge in both rows, as [`crate::NeighbourGraph`] keeps them). The diagonal goes
    /// between the neighbours below and above `i`, so nothing is sorted or listed twice; a
    /// degree sums its row in order, as [`Laplacian::sparse`] sums the same edges.
    pub fn sparse_from_rows(
        &self,
        indptr: &[usize],
        indices: &[usize],
        weights: &[f64],
    ) -> CsrMatrix {
        let n = self.n;
        let nnz = indices.len() + n;
        let mut ptr = Vec::with_capacity(n + 1);
        let (mut cols, mut values) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
        ptr.push(0);
        for i in 0..n {
            let (js, ws) = (
                &indices[indptr[i]..indptr[i + 1]],
                &weights[indptr[i]..indptr[i + 1]],
            );
            let at = js.partition_point(|&j| j < i);
            let degree = ws.iter().map(|w| self.scale * w).fold(0.0, |a, v| a + v);
            cols.extend(&js[..at]);
            values.extend(ws[..at].iter().map(|w| -(self.scale * w)));
            cols.push(i);
            values.push(degree + self.shift);
            cols.extend(&js[at..]);
            values.extend(ws[at..].iter().map(|w| -(self.scale * w)));
            ptr.push(cols.len());
        }
        CsrMatrix::from_sorted_rows(n, n, ptr, cols, values)
            .expect("a graph's rows are sorted, unique and free of self loops")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_agree_and_rows_sum_to_the_shift() {
        let edges = [(0, 1, 0.5), (1, 3, 2.0), (0, 3, 1.5), (2, 3, 0.0)];
        let lap = Laplacian::new(4).scale(3.0).shift(0.25);
        let dense = lap.dense(edges);
        let sparse = lap.sparse(edges);
        assert_eq!(sparse.to_dense(), dense);
        // The zero-weight edge stays in the pattern: 4 edges twice plus the diagonal.
        assert_eq!(sparse.nnz(), 2 * 4 + 4);
        for i in 0..4 {
            assert!((dense.row(i).sum() - 0.25).abs() < 1e-15);
        }
        assert_eq!(dense, dense.transpose());
        assert_eq!(dense[(3, 3)], 0.25 + 3.0 * 2.0 + 3.0 * 1.5 + 0.0);
    }

    #[test]
    fn add_to_keeps_what_was_there() {
        let mut m = DMatrix::from_element(3, 3, 1.0);
        Laplacian::new(3).shift(2.0).add_to(&mut m, [(0, 2, 4.0)]);
        let expected =
            DMatrix::from_row_slice(3, 3, &[7.0, 1.0, -3.0, 1.0, 3.0, 1.0, -3.0, 1.0, 7.0]);
        assert_eq!(m, expected);
    }
}
