//! The embedding of a field: the principal eigenvectors of its centred covariance
//! ([`laplacian_embedding`], [`covariance_embedding`]) and how they become coordinates
//! ([`FieldScaling`]).

use super::precision::Precision;
use nalgebra::{DMatrix, DVector, RowDVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};
use unfold_graph::NeighbourGraph;
use unfold_linalg::{fix_signs, smallest_eigenpairs, CentredKernel, CsrMatrix, SymMatrix};

/// How the principal eigenvectors of the centred covariance become coordinates (the paper
/// leaves it open, spec §11 item 9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldScaling {
    /// Each coordinate has unit variance, `X^T X / n = I` (the author's code).
    #[default]
    UnitVariance,
    /// Eigenvectors times the square roots of their eigenvalues of `H K H` (classical MDS).
    Eigenvalue,
}

crate::choice!(FieldScaling { UnitVariance = "unit", Eigenvalue = "eigen" });

/// The top-q eigenvectors of the centred covariance and their eigenvalues (descending).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldEmbedding {
    /// Coordinates, n x q, scaled as asked.
    pub coords: DMatrix<f64>,
    /// Eigenvalues of `H K H` for the embedding axes, descending.
    pub eigenvalues: DVector<f64>,
}

fn scale_columns(
    vectors: DMatrix<f64>,
    values: &DVector<f64>,
    scaling: FieldScaling,
) -> DMatrix<f64> {
    let n = vectors.nrows() as f64;
    let mut x = vectors;
    for (mut col, &l) in x.column_iter_mut().zip(values.iter()) {
        match scaling {
            FieldScaling::UnitVariance => col *= n.sqrt(),
            FieldScaling::Eigenvalue => col *= l.sqrt(),
        }
    }
    fix_signs(&mut x);
    x
}

/// The embedding of a field whose precision is `L + gamma I` with `L` a graph Laplacian
/// (`L 1 = 0`): the principal eigenvectors of `H (L + gamma I)^{-1} H` are the eigenvectors
/// of the q smallest eigenvalues `mu` of `L` on the complement of the constant vector,
/// with eigenvalues `1 / (mu + gamma)` (spec §2.6, the sparse shortcut of §10 item 3).
///
/// When the edges with non-zero weight split the points into c > 1 components (MEU can
/// set every multiplier of a point to zero), `L` has c null vectors; those orthogonal to
/// the constant vector have the largest eigenvalue `1 / gamma` of `H K H` and come first,
/// as in the dense computation (component indicators, not a manifold). That needs
/// `gamma > 0`: with the pseudo-inverse the problem has no embedding and fails.
pub fn laplacian_embedding(
    l: &CsrMatrix,
    gamma: f64,
    q: usize,
    scaling: FieldScaling,
) -> Result<FieldEmbedding> {
    let c = laplacian_components(l)?;
    if c > 1 && gamma <= 0.0 {
        return Err(Error::numerical(
            "the field's Laplacian",
            format!("its edges form {c} disconnected components, so the pseudo-inverse (gamma = 0) has no embedding; use gamma > 0 or a larger k"),
        ));
    }
    let want = (q + c).min(l.nrows());
    let eig = smallest_eigenpairs(SymMatrix::Sparse(l), want)?;
    // The first c eigenvectors span the null space; keep its part orthogonal to 1.
    let null = eig.vectors.columns(0, c);
    let ones = DVector::from_element(l.nrows(), 1.0 / (l.nrows() as f64).sqrt());
    let coef = null.tr_mul(&ones);
    let mut basis: Vec<DVector<f64>> = Vec::new();
    for j in 0..c {
        let mut v = DVector::zeros(c);
        v[j] = 1.0;
        v -= &coef * (coef.dot(&v) / coef.norm_squared());
        for b in &basis {
            v -= b * b.dot(&v);
        }
        if v.norm() > 1e-8 {
            let v = v.normalize();
            basis.push(v);
        }
    }
    let mut vectors = DMatrix::zeros(l.nrows(), q);
    let mut mu = DVector::zeros(q);
    for (col, b) in basis.iter().take(q).enumerate() {
        vectors.set_column(col, &(null * b).normalize());
    }
    for col in basis.len().min(q)..q {
        let j = c + col - basis.len();
        if j >= want {
            return Err(Error::DimensionTooLarge {
                dim: q,
                limit: col + 1,
                reason: "the field has fewer non-constant eigenvectors than the latent dimension"
                    .into(),
            });
        }
        vectors.set_column(col, &eig.vectors.column(j));
        mu[col] = eig.values[j];
    }
    let eigenvalues = mu.map(|m| 1.0 / (m.max(0.0) + gamma));
    let coords = scale_columns(vectors, &eigenvalues, scaling);
    Ok(FieldEmbedding {
        coords,
        eigenvalues,
    })
}

/// The number of connected components of the graph of `L`'s non-zero off-diagonal entries.
fn laplacian_components(l: &CsrMatrix) -> Result<usize> {
    let n = l.nrows();
    let mut edges = Vec::new();
    for i in 0..n {
        let (cols, vals) = l.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            if j > i && v != 0.0 {
                edges.push((i, j, 1.0));
            }
        }
    }
    Ok(NeighbourGraph::from_edges(n, &edges)?.components().count)
}

/// The conditional mean of a new node of the Laplacian field `L + gamma I`, joined to the
/// training nodes `j` by edges of weight `w_j`, given the training embedding: the new
/// row of the precision is `(sum_j w_j + gamma, -w_j)`, so `x_* = sum_j w_j x_j / (sum_j w_j +
/// gamma)` (spec `meu_alle_drill.md` §2.6; the projection of MEU and of any field whose
/// precision has the Laplacian form). The terms are added in the order of `edges`.
pub fn new_node_mean(
    coords: &DMatrix<f64>,
    edges: impl IntoIterator<Item = (usize, f64)> + Clone,
    gamma: f64,
) -> RowDVector<f64> {
    let total = edges.clone().into_iter().map(|(_, w)| w).sum::<f64>() + gamma;
    let mut mean = RowDVector::zeros(coords.ncols());
    for (j, w) in edges {
        mean += coords.row(j) * (w / total);
    }
    mean
}

/// The embedding from a dense covariance `K`: the top-q eigenpairs of `H K H` (used when
/// the precision is not a Laplacian, as in DRILL, spec §7).
pub fn covariance_embedding(
    k: DMatrix<f64>,
    q: usize,
    scaling: FieldScaling,
) -> Result<FieldEmbedding> {
    Ok(kernel_embedding(
        CentredKernel::new(k, q, "implied covariance")?,
        scaling,
    ))
}

/// The coordinates of a centred covariance's top eigenpairs, scaled as asked.
pub(super) fn kernel_embedding(ck: CentredKernel, scaling: FieldScaling) -> FieldEmbedding {
    let coords = scale_columns(ck.vectors, &ck.values, scaling);
    FieldEmbedding {
        coords,
        eigenvalues: ck.values,
    }
}

/// The latent field's scale per embedding axis: `sigma_c^2 = x_c^T P x_c / n`, the
/// maximum-likelihood variance of coordinate column `c` as a draw of the fitted field.
/// Conditional variances of projected points are in these units.
pub fn latent_scales(prec: &Precision, coords: &DMatrix<f64>) -> DVector<f64> {
    let n = coords.nrows() as f64;
    DVector::from_iterator(
        coords.ncols(),
        coords.column_iter().map(|c| {
            prec.quadratic_trace(&DMatrix::from_column_slice(c.len(), 1, c.as_slice())) / n
        }),
    )
}
