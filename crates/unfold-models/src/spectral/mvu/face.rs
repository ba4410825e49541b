//! Facial reduction of the MVU program: the face of the PSD cone that holds every
//! feasible Gram matrix, from centring and the affine dependencies of graph cliques.

use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};
use unfold_graph::NeighbourGraph;
use unfold_linalg::sym_eigen;
use unfold_sdp::dense::mul;

/// Maximal cliques of the graph (Bron & Kerbosch 1973 with Tomita's pivot), each listed
/// once from its lowest-numbered vertex.
fn maximal_cliques(graph: &NeighbourGraph) -> Vec<Vec<usize>> {
    fn extend(
        graph: &NeighbourGraph,
        r: &mut Vec<usize>,
        p: Vec<usize>,
        x: Vec<usize>,
        out: &mut Vec<Vec<usize>>,
    ) {
        if p.is_empty() {
            if x.is_empty() {
                out.push(r.clone());
            }
            return;
        }
        let adjacent = |u: usize, v: usize| graph.has_edge(u, v);
        let pivot = p
            .iter()
            .chain(&x)
            .copied()
            .max_by_key(|&u| p.iter().filter(|&&v| adjacent(u, v)).count())
            .expect("p is not empty");
        let (mut p, mut x) = (p, x);
        for v in p.clone() {
            if adjacent(pivot, v) {
                continue;
            }
            r.push(v);
            let keep = |s: &[usize]| s.iter().copied().filter(|&u| adjacent(u, v)).collect();
            extend(graph, r, keep(&p), keep(&x), out);
            r.pop();
            p.retain(|&u| u != v);
            x.push(v);
        }
    }
    let mut out = Vec::new();
    for v in 0..graph.n() {
        let (nbrs, _) = graph.neighbours(v);
        let p = nbrs.iter().copied().filter(|&u| u > v).collect();
        let x = nbrs.iter().copied().filter(|&u| u < v).collect();
        extend(graph, &mut vec![v], p, x, &mut out);
    }
    out
}

/// Relative size below which an eigenvalue counts as zero when finding affine
/// dependencies of a clique and the face they leave.
const RANK_TOL: f64 = 1e-9;

/// An orthonormal basis `V` (n x r) of the smallest face of the PSD cone that holds every
/// feasible `K` (facial reduction; Krislock & Wolkowicz 2010 for the same device in
/// sensor network localisation). Centring gives `K 1 = 0`. A clique `C` of the graph fixes
/// all distances among its points, hence their Gram matrix about their centroid; when the
/// points are affinely dependent (more than `p + 1` of them in `p` dimensions, or
/// degenerate), every `w` supported on `C` with `sum_i w_i = 0` and `sum_i w_i y_i = 0`
/// has `w^T K w = sum_ij w_i w_j (-d_ij / 2) = ||sum_i w_i y_i||^2 = 0`, so `K w = 0`. `V`
/// spans the orthogonal complement of `1` and all such `w`. Without this reduction the
/// program has no strictly feasible point and the interior-point method stalls.
pub(super) fn face_basis(y: &DMatrix<f64>, graph: &NeighbourGraph) -> Result<DMatrix<f64>> {
    let n = y.nrows();
    let mut normals = vec![DVector::from_element(n, 1.0 / (n as f64).sqrt())];
    for clique in maximal_cliques(graph) {
        let c = clique.len();
        if c < 3 {
            continue;
        }
        // Rows [y_i - mean, 1] with the coordinates scaled to O(1); the dependencies are
        // the null vectors of M M^T.
        let mut mean = nalgebra::RowDVector::zeros(y.ncols());
        for &i in &clique {
            mean += y.row(i);
        }
        mean /= c as f64;
        let centred = DMatrix::from_fn(c, y.ncols(), |a, j| y[(clique[a], j)] - mean[j]);
        let h = centred.row_iter().map(|r| r.norm()).fold(0.0, f64::max);
        let mut m = DMatrix::from_element(c, y.ncols() + 1, 1.0);
        m.columns_mut(0, y.ncols()).copy_from(&(centred / h));
        let eig = (&m * m.transpose()).symmetric_eigen();
        let top = eig.eigenvalues.max();
        for (k, &val) in eig.eigenvalues.iter().enumerate() {
            if val <= RANK_TOL * top {
                let mut w = DVector::zeros(n);
                for (a, &i) in clique.iter().enumerate() {
                    w[i] = eig.eigenvectors[(a, k)];
                }
                normals.push(w);
            }
        }
    }
    // The face is the null space of sum_w w w^T.
    let w = DMatrix::from_columns(&normals);
    let s = mul(&w, false, &w, true);
    let eig = sym_eigen(&s)?;
    let top = eig.values.max();
    let r = eig.values.iter().filter(|&&v| v <= RANK_TOL * top).count();
    if r == 0 {
        return Err(Error::numerical(
            "MVU facial reduction",
            "the graph's cliques fix every point: no freedom is left to unfold",
        ));
    }
    Ok(eig.vectors.columns(0, r).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_basis_removes_centring_and_clique_dependencies() {
        // Seven points on a line, each joined to the next two: the triangles
        // (i, i+1, i+2) are collinear cliques, so the face is that of rank-one K only.
        let t = [0.0, 1.0, 1.5, 3.0, 3.2, 4.0, 6.0];
        let y = DMatrix::from_fn(7, 2, |i, j| [t[i], 2.0 * t[i]][j]);
        let edges: Vec<(usize, usize, f64)> = (0..7)
            .flat_map(|i| (i + 1..(i + 3).min(7)).map(move |j| (i, j, 1.0)))
            .collect();
        let graph = NeighbourGraph::from_edges(7, &edges).unwrap();
        let cliques = maximal_cliques(&graph);
        assert_eq!(cliques.len(), 5);
        assert!(cliques.iter().all(|c| c.len() == 3));
        let v = face_basis(&y, &graph).unwrap();
        assert_eq!(v.ncols(), 1);
        let tc = DVector::from_fn(7, |i, _| t[i] - t.iter().sum::<f64>() / 7.0);
        assert!((v.column(0).dot(&tc).abs() - tc.norm()).abs() < 1e-10 * tc.norm());
        // A generic point set in the plane: a 4-clique has one dependency, a triangle none.
        let y = DMatrix::from_row_slice(5, 2, &[0.0, 0.0, 1.0, 0.1, 0.2, 1.0, 0.9, 1.3, 2.0, 2.2]);
        let graph = NeighbourGraph::from_edges(
            5,
            &[
                (0, 1, 1.0),
                (0, 2, 1.0),
                (0, 3, 1.0),
                (1, 2, 1.0),
                (1, 3, 1.0),
                (2, 3, 1.0),
                (3, 4, 1.0),
            ],
        )
        .unwrap();
        let v = face_basis(&y, &graph).unwrap();
        assert_eq!(v.ncols(), 3);
        assert!((v.transpose() * &v - DMatrix::<f64>::identity(3, 3)).norm() < 1e-12);
        assert!((v.transpose() * DVector::from_element(5, 1.0)).norm() < 1e-12);
    }
}
