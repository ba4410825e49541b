//! The exact MVU semidefinite program and its primal-dual interior-point solver.

use super::{inner, mul, sym, SdpSolution};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::Side;
use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};
use unfold_linalg::view::{as_faer, as_faer_mut, par};
use unfold_linalg::Cholesky;

/// Most negative-direction step: the largest `alpha` with `X + alpha D` PSD, from the
/// smallest eigenvalue of `L^{-1} D L^{-T}` where `X = L L^T` (infinite if D is PSD).
fn max_step(l_inv: &DMatrix<f64>, d: &DMatrix<f64>) -> Result<f64> {
    let s = sym(&mul(&mul(l_inv, false, d, false), false, l_inv, true));
    let values = as_faer(&s)
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| Error::numerical("MVU step length", format!("{e:?}")))?;
    let low = values.first().copied().unwrap_or(0.0);
    Ok(if low >= 0.0 {
        f64::INFINITY
    } else {
        -1.0 / low
    })
}

/// `L^{-1}` for the Cholesky factor of a positive definite `a`.
fn inverse_factor(chol: &Cholesky) -> DMatrix<f64> {
    let l = chol.l();
    let mut inv = DMatrix::zeros(l.nrows(), l.ncols());
    invert_lower_triangular(as_faer_mut(&mut inv), as_faer(&l), par());
    inv
}

/// Factorises the Schur complement, adding a growing multiple of its largest diagonal entry
/// when rounding has made it (numerically) singular near the optimum.
fn factor_schur(m: &DMatrix<f64>) -> Result<Cholesky> {
    if let Ok(c) = Cholesky::new(m, "MVU Schur complement") {
        return Ok(c);
    }
    let big = m.diagonal().max();
    let mut shifted = m.clone();
    let mut shift = 0.0;
    for _ in 0..5 {
        let next = if shift == 0.0 {
            1e-14 * big
        } else {
            100.0 * shift
        };
        for i in 0..m.nrows() {
            shifted[(i, i)] += next - shift;
        }
        shift = next;
        if let Ok(c) = Cholesky::new(&shifted, "MVU Schur complement") {
            return Ok(c);
        }
    }
    Err(Error::numerical(
        "MVU interior-point method",
        "the Schur complement stayed singular after regularisation; the kNN graph may be too dense for the data (try a smaller k)",
    ))
}

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

/// When the interior-point iterates stall (steps below this length or a factorisation
/// failure), the best iterate is accepted if its residuals are within `STALL_ACCEPT * tol`.
const STALL_ACCEPT: f64 = 100.0;
/// Step length below which the iterates count as stalled.
const STALL_STEP: f64 = 1e-6;

/// Solves the exact MVU SDP on the face spanned by `p` for squared edge lengths `b` (mean
/// 1): `min <C, X>` s.t. `A(X) = b`, `X PSD`, with dual `max b^T y` s.t.
/// `Z = C - A^T(y) PSD`.
///
/// Convergence: relative primal infeasibility `||b - A(X)|| / (1 + ||b||)`, relative dual
/// infeasibility `||C - A^T(y) - Z||_F / (1 + ||C||_F)` and relative gap
/// `<X, Z> / (1 + |<C, X>| + |b^T y|)` all below `tol` (SDPT3's measures; the gap uses
/// `<X, Z>` rather than `<C, X> - b^T y`, which is unreliable if a rigid substructure the
/// facial reduction missed leaves the primal without an interior point and `y` unbounded).
pub(super) fn solve_exact(
    p: DMatrix<f64>,
    edges: &[(usize, usize)],
    b: &[f64],
    tol: f64,
    max_iter: usize,
) -> Result<SdpSolution> {
    let dim = p.ncols();
    let sdp = EdgeSdp { edges, p };
    let b = DVector::from_column_slice(b);
    let eye = DMatrix::<f64>::identity(dim, dim);
    let (bnorm, cnorm) = (b.norm(), (dim as f64).sqrt());
    // Starting point of SDPT3 (Toh, Todd & Tütüncü 1999, §3) for ||u_e u_e^T||_F = 2.
    let bmax = b.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let xi = 10f64.max(cnorm).max(dim as f64 * (1.0 + bmax) / 3.0);
    let eta = 10f64.max(cnorm);
    let mut x = &eye * xi;
    let mut z = &eye * eta;
    let mut y = DVector::zeros(edges.len());
    let mut best: Option<(f64, SdpSolution)> = None;
    let mut report = String::new();
    let stalled = |best: Option<(f64, SdpSolution)>, why: String| match best {
        Some((worst, sol)) if worst <= STALL_ACCEPT * tol => Ok(sol),
        _ => Err(Error::numerical(
            "MVU interior-point method",
            format!("{why}; the graph may be nearly rigid: try a smaller k, or a looser tol"),
        )),
    };
    for it in 0..=max_iter {
        let xf = sdp.lift(&x);
        let rp = &b - sdp.constraints(&xf);
        let rd = -&eye - sdp.adjoint(&y) - &z;
        let mu = inner(&x, &z) / dim as f64;
        let (pobj, dobj) = (-x.trace(), b.dot(&y));
        let pinf = rp.norm() / (1.0 + bnorm);
        let dinf = rd.norm() / (1.0 + cnorm);
        let gap = dim as f64 * mu / (1.0 + pobj.abs() + dobj.abs());
        report = format!("primal infeasibility {pinf:.1e}, dual infeasibility {dinf:.1e}, relative gap {gap:.1e}");
        let worst = pinf.max(dinf).max(gap);
        let solution = SdpSolution {
            k: xf.clone(),
            iterations: it,
            relative_gap: gap,
        };
        if worst < tol {
            return Ok(solution);
        }
        if best.as_ref().is_none_or(|(w, _)| worst < *w) {
            best = Some((worst, solution));
        }
        if it == max_iter {
            break;
        }
        let (Ok(zchol), Ok(xchol)) = (
            Cholesky::new(&z, "MVU dual slack"),
            Cholesky::new(&x, "MVU primal iterate"),
        ) else {
            return stalled(
                best,
                format!("an iterate lost positive definiteness at iteration {it} ({report})"),
            );
        };
        let zinv = zchol.inverse();
        let schur = sdp
            .edge_gram(&xf)
            .component_mul(&sdp.edge_gram(&sdp.lift(&zinv)));
        let mchol = factor_schur(&schur)?;
        let (xl, zl) = (inverse_factor(&xchol), inverse_factor(&zchol));
        let x_rd_zinv = mul(&mul(&x, false, &rd, false), false, &zinv, false);
        // HKM direction for X Z = sigma mu I with second-order term `corr` (Mehrotra):
        // dX = sigma mu Z^{-1} - X - X dZ Z^{-1} - corr Z^{-1}, dZ = Rd - A^T(dy),
        // M dy = b - A(sigma mu Z^{-1} - X Rd Z^{-1} - corr Z^{-1}).
        let direction = |sigma_mu: f64, corr: Option<&DMatrix<f64>>| {
            let mut g = &zinv * sigma_mu - &x_rd_zinv;
            let corr_zinv = corr.map(|c| mul(c, false, &zinv, false));
            if let Some(cz) = &corr_zinv {
                g -= cz;
            }
            let rhs = &b - sdp.constraints(&sdp.lift(&sym(&g)));
            // One step of iterative refinement against the unshifted Schur complement.
            let mut dy = mchol.solve_vec(&rhs);
            dy += mchol.solve_vec(&(&rhs - &schur * &dy));
            let dz = &rd - sdp.adjoint(&dy);
            let mut dx =
                &zinv * sigma_mu - &x - mul(&mul(&x, false, &dz, false), false, &zinv, false);
            if let Some(cz) = &corr_zinv {
                dx -= cz;
            }
            (sym(&dx), dy, dz)
        };
        let (dx, _, dz) = direction(0.0, None);
        let (ap, ad) = (max_step(&xl, &dx)?.min(1.0), max_step(&zl, &dz)?.min(1.0));
        let mu_aff = inner(&(&x + &dx * ap), &(&z + &dz * ad)) / dim as f64;
        let expon = 1f64.max(3.0 * ap.min(ad).powi(2));
        let sigma = (mu_aff / mu).max(0.0).powf(expon).min(1.0);
        let corr = mul(&dx, false, &dz, false);
        let (dx, dy, dz) = direction(sigma * mu, Some(&corr));
        let (ap, ad) = (max_step(&xl, &dx)?, max_step(&zl, &dz)?);
        let gamma = 0.9 + 0.09 * ap.min(ad).min(1.0);
        let (ap, ad) = ((gamma * ap).min(1.0), (gamma * ad).min(1.0));
        if ap.max(ad) < STALL_STEP {
            return stalled(
                best,
                format!("the steps stalled at iteration {it} ({report})"),
            );
        }
        x += dx * ap;
        y += dy * ad;
        z += dz * ad;
    }
    Err(Error::NotConverged {
        context: "MVU interior-point method".to_string(),
        iterations: max_iter,
        advice: format!("stopped at {report}; raise max_iter or loosen tol"),
    })
}
