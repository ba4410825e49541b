//! The exact MVU semidefinite program on its face, as an `unfold_sdp` problem.

use super::SdpSolution;
use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Evidence, EvidenceKind, Observer, Result};
use unfold_sdp::dense::{mul, sym};
use unfold_sdp::{Constraints, SdpOptions};

/// The MVU program on the face `K = P X P^T` (`P` from [`super::face::face_basis`]): the
/// linear maps between `X` (r x r) and the edge constraints, with `C = -I`,
/// `A(X)_e = u_e^T X u_e` and `u_e = P^T (e_i - e_j)`.
struct EdgeSdp<'a> {
    edges: &'a [(usize, usize)],
    /// n x r, orthonormal columns orthogonal to `1`.
    p: DMatrix<f64>,
}

impl EdgeSdp<'_> {
    /// `P x P^T` (n x n).
    fn lift(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        mul(&mul(&self.p, false, x, false), false, &self.p, true)
    }

    /// `A(x)_e = u_e^T x u_e` from the lifted (symmetric) `P x P^T`.
    fn constraints(&self, xf: &DMatrix<f64>) -> DVector<f64> {
        DVector::from_iterator(
            self.edges.len(),
            self.edges
                .iter()
                .map(|&(i, j)| xf[(i, i)] + xf[(j, j)] - 2.0 * xf[(i, j)]),
        )
    }

    /// `U^T x U` with entries `(e_i - e_j)^T xf (e_k - e_l)` for edges `(i, j)`, `(k, l)`.
    fn edge_gram(&self, xf: &DMatrix<f64>) -> DMatrix<f64> {
        let m = self.edges.len();
        let w = DMatrix::from_fn(xf.nrows(), m, |r, f| {
            let (k, l) = self.edges[f];
            xf[(r, k)] - xf[(r, l)]
        });
        DMatrix::from_fn(m, m, |e, f| {
            let (i, j) = self.edges[e];
            w[(i, f)] - w[(j, f)]
        })
    }
}

impl Constraints for EdgeSdp<'_> {
    fn len(&self) -> usize {
        self.edges.len()
    }

    fn apply(&self, x: &DMatrix<f64>) -> DVector<f64> {
        self.constraints(&self.lift(x))
    }

    /// `A^T(y) = sum_e y_e u_e u_e^T = P^T L_y P`, `L_y` the Laplacian with weights `y`.
    fn adjoint(&self, y: &DVector<f64>) -> DMatrix<f64> {
        let n = self.p.nrows();
        let mut l = DMatrix::zeros(n, n);
        for (&(i, j), &w) in self.edges.iter().zip(y.iter()) {
            l[(i, i)] += w;
            l[(j, j)] += w;
            l[(i, j)] -= w;
            l[(j, i)] -= w;
        }
        sym(&mul(&mul(&self.p, true, &l, false), false, &self.p, false))
    }

    /// For rank-one constraints the HKM Schur complement is the Hadamard product
    /// `(U^T X U) o (U^T Z^{-1} U)`.
    fn schur(&self, x: &DMatrix<f64>, z_inv: &DMatrix<f64>) -> DMatrix<f64> {
        self.edge_gram(&self.lift(x))
            .component_mul(&self.edge_gram(&self.lift(z_inv)))
    }

    /// `||u_e u_e^T||_F = ||P^T (e_i - e_j)||^2 <= 2`, taken as 2.
    fn norm_bound(&self) -> f64 {
        2.0
    }
}

/// Solves the exact MVU SDP on the face spanned by `p` for squared edge lengths `b` (mean
/// 1): `min <-I, X>` s.t. `A(X) = b`, `X PSD`, by `unfold_sdp::solve`, and returns
/// `K = P X P^T`. Each iterate's objective (the trace of `X`, maximised) goes to
/// `observer`, whose stop ends the solve with [`Error::Interrupted`].
pub(super) fn solve_exact(
    p: DMatrix<f64>,
    edges: &[(usize, usize)],
    b: &[f64],
    (tol, max_iter): (f64, usize),
    observer: &dyn Observer,
) -> Result<SdpSolution> {
    let dim = p.ncols();
    let sdp = EdgeSdp { edges, p };
    let c = -DMatrix::<f64>::identity(dim, dim);
    let context = "MVU interior-point method";
    let mut progress = |it: usize, objective: f64| {
        let trace = Evidence::new(EvidenceKind::Objective, -objective);
        // An interior-point iterate is not feasible before convergence: a caller's end
        // stops the solve like an interruption.
        observer.step(1, it + 1, &trace).is_ok() && !observer.ended()
    };
    let options = SdpOptions { tol, max_iter };
    let solution =
        unfold_sdp::solve_observed(&c, &sdp, b, &options, &mut progress).map_err(|e| match e {
            unfold_sdp::Error::Stopped => Error::Interrupted,
            unfold_sdp::Error::Stalled { reason } => Error::numerical(
                context,
                format!("{reason}; the graph may be nearly rigid: try a smaller k, or a looser tol"),
            ),
            unfold_sdp::Error::SingularSchur => Error::numerical(
                context,
                "the Schur complement stayed singular after regularisation; the kNN graph may be too dense for the data (try a smaller k)",
            ),
            unfold_sdp::Error::NotConverged { iterations, report } => Error::NotConverged {
                context: context.to_string(),
                iterations,
                advice: format!("stopped at {report}; raise max_iter or loosen tol"),
            },
            unfold_sdp::Error::Eigen { message } => Error::numerical("MVU step length", message),
            other => Error::numerical(context, other.to_string()),
        })?;
    Ok(SdpSolution {
        k: sdp.lift(&solution.x),
        iterations: solution.iterations,
        relative_gap: solution.relative_gap,
    })
}
