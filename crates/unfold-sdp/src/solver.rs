//! The infeasible primal-dual path-following method with the HKM direction and Mehrotra's
//! predictor-corrector.

use crate::constraints::Constraints;
use crate::dense::{inner, mul, sym};
use crate::error::Error;
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::Side;
use nalgebra::{DMatrix, DVector};
use unfold_linalg::view::{as_faer, as_faer_mut, par};
use unfold_linalg::Cholesky;

/// Settings of [`solve`].
#[derive(Clone, Debug, PartialEq)]
pub struct SdpOptions {
    /// Relative tolerance on primal infeasibility, dual infeasibility and duality gap
    /// (default 1e-6).
    pub tol: f64,
    /// Most iterations (default 200).
    pub max_iter: usize,
}

impl Default for SdpOptions {
    fn default() -> Self {
        SdpOptions {
            tol: 1e-6,
            max_iter: 200,
        }
    }
}

/// A solution of [`solve`]: the primal `X`, the dual `(y, Z)` and how close they are to
/// optimal.
#[derive(Clone, Debug)]
pub struct SdpSolution {
    /// The primal iterate `X` (r x r, positive semidefinite).
    pub x: DMatrix<f64>,
    /// The dual multipliers `y` (one per constraint).
    pub y: DVector<f64>,
    /// The dual slack `Z = C - A^T(y)` (up to the dual infeasibility).
    pub z: DMatrix<f64>,
    /// Iterations taken.
    pub iterations: usize,
    /// `||b - A(X)|| / (1 + ||b||)`.
    pub primal_infeasibility: f64,
    /// `||C - A^T(y) - Z||_F / (1 + ||C||_F)`.
    pub dual_infeasibility: f64,
    /// `<X, Z> / (1 + |<C, X>| + |b^T y|)`.
    pub relative_gap: f64,
    /// `<C, X>`.
    pub primal_objective: f64,
    /// `b^T y`.
    pub dual_objective: f64,
}

/// When the iterates stall (steps below [`STALL_STEP`] or a factorisation failure), the best
/// iterate is accepted if its residuals are within `STALL_ACCEPT * tol`.
const STALL_ACCEPT: f64 = 100.0;
/// Step length below which the iterates count as stalled.
const STALL_STEP: f64 = 1e-6;

/// Most negative-direction step: the largest `alpha` with `X + alpha D` PSD, from the
/// smallest eigenvalue of `L^{-1} D L^{-T}` where `X = L L^T` (infinite if D is PSD).
fn max_step(l_inv: &DMatrix<f64>, d: &DMatrix<f64>) -> Result<f64, Error> {
    let s = sym(&mul(&mul(l_inv, false, d, false), false, l_inv, true));
    let values = as_faer(&s)
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| Error::Eigen {
            message: format!("{e:?}"),
        })?;
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
fn factor_schur(m: &DMatrix<f64>) -> Result<Cholesky, Error> {
    if let Ok(c) = Cholesky::new(m, "SDP Schur complement") {
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
        if let Ok(c) = Cholesky::new(&shifted, "SDP Schur complement") {
            return Ok(c);
        }
    }
    Err(Error::SingularSchur)
}

/// Checks the sizes and options.
fn validate(
    c: &DMatrix<f64>,
    a: &impl Constraints,
    b: &[f64],
    options: &SdpOptions,
) -> Result<(), Error> {
    if c.nrows() != c.ncols() || c.nrows() == 0 {
        return Err(Error::Malformed {
            reason: format!(
                "C must be square and non-empty, got {} x {}",
                c.nrows(),
                c.ncols()
            ),
        });
    }
    if a.is_empty() {
        return Err(Error::Malformed {
            reason: "give at least one constraint".to_string(),
        });
    }
    if b.len() != a.len() {
        return Err(Error::Malformed {
            reason: format!("b has {} entries for {} constraints", b.len(), a.len()),
        });
    }
    let shape = a.adjoint(&DVector::zeros(a.len())).shape();
    if shape != c.shape() {
        return Err(Error::Malformed {
            reason: format!(
                "the constraints act on {} x {} matrices but C is {} x {}",
                shape.0,
                shape.1,
                c.nrows(),
                c.ncols()
            ),
        });
    }
    if c.iter().chain(b).any(|v| !v.is_finite()) {
        return Err(Error::Malformed {
            reason: "C and b must be finite".to_string(),
        });
    }
    if !(options.tol.is_finite() && options.tol > 0.0 && options.tol < 1.0) {
        return Err(Error::InvalidOption {
            name: "tol",
            value: options.tol,
            requirement: "must lie in (0, 1)",
        });
    }
    if options.max_iter == 0 {
        return Err(Error::InvalidOption {
            name: "max_iter",
            value: 0.0,
            requirement: "must be at least 1",
        });
    }
    Ok(())
}

/// Solves `min <C, X>` s.t. `A(X) = b`, `X PSD` (X r x r, `C` symmetric) together with
/// its dual `max b^T y` s.t. `Z = C - A^T(y) PSD`.
///
/// Infeasible primal-dual path following (Helmberg, Rendl, Vanderbei & Wolkowicz 1996;
/// Kojima, Shindoh & Hara 1997; Monteiro 1997: the HKM direction) with Mehrotra's
/// predictor-corrector: each iteration solves the Schur system `M dy = rhs` twice, once for
/// the affine-scaling direction (`sigma = 0`) and once for the corrected direction with
/// `sigma = (mu_aff / mu)^e`, `e = max(1, 3 min(alpha_p, alpha_d)^2)`, and steps a fraction
/// `0.9 + 0.09 min(alpha_p, alpha_d)` of the way to the boundary of the cone. The start is
/// SDPT3's (Toh, Todd & Tütüncü 1999, §3) with [`Constraints::norm_bound`] for every
/// `||A_k||_F`.
///
/// Convergence: relative primal infeasibility `||b - A(X)|| / (1 + ||b||)`, relative dual
/// infeasibility `||C - A^T(y) - Z||_F / (1 + ||C||_F)` and relative gap
/// `<X, Z> / (1 + |<C, X>| + |b^T y|)` all below `tol` (SDPT3's measures; the gap uses
/// `<X, Z>` rather than `<C, X> - b^T y`, which is unreliable when the primal has no
/// interior point and `y` is unbounded).
///
/// # Errors
/// [`Error::Malformed`] (no constraints, sizes that disagree, non-finite data) /
/// [`Error::InvalidOption`] for bad input; [`Error::Stalled`] when
/// the iterates stall and no iterate came within `100 tol`; [`Error::SingularSchur`];
/// [`Error::NotConverged`] after `max_iter` iterations.
pub fn solve(
    c: &DMatrix<f64>,
    a: &impl Constraints,
    b: &[f64],
    options: &SdpOptions,
) -> Result<SdpSolution, Error> {
    solve_observed(c, a, b, options, &mut |_, _| true)
}

/// [`solve`] telling `progress(iteration, primal objective)` each iterate (from 0, the
/// start); `false` ends the solve with [`Error::Stopped`] (the caller's interrupt).
pub fn solve_observed(
    c: &DMatrix<f64>,
    a: &impl Constraints,
    b: &[f64],
    options: &SdpOptions,
    progress: &mut dyn FnMut(usize, f64) -> bool,
) -> Result<SdpSolution, Error> {
    validate(c, a, b, options)?;
    let SdpOptions { tol, max_iter } = *options;
    let dim = c.nrows();
    let c = sym(c);
    let b = DVector::from_column_slice(b);
    let eye = DMatrix::<f64>::identity(dim, dim);
    let (bnorm, cnorm) = (b.norm(), c.norm());
    let anorm = a.norm_bound();
    let bmax = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let xi = 10f64
        .max(cnorm)
        .max(dim as f64 * (1.0 + bmax) / (1.0 + anorm));
    let eta = 10f64.max(cnorm).max(anorm);
    let mut x = &eye * xi;
    let mut z = &eye * eta;
    let mut y = DVector::zeros(a.len());
    let mut best: Option<(f64, SdpSolution)> = None;
    let mut report = String::new();
    let stalled = |best: Option<(f64, SdpSolution)>, reason: String| match best {
        Some((worst, sol)) if worst <= STALL_ACCEPT * tol => Ok(sol),
        _ => Err(Error::Stalled { reason }),
    };
    for it in 0..=max_iter {
        let rp = &b - a.apply(&x);
        let rd = &c - a.adjoint(&y) - &z;
        let mu = inner(&x, &z) / dim as f64;
        let (pobj, dobj) = (inner(&c, &x), b.dot(&y));
        let pinf = rp.norm() / (1.0 + bnorm);
        let dinf = rd.norm() / (1.0 + cnorm);
        let gap = dim as f64 * mu / (1.0 + pobj.abs() + dobj.abs());
        report = format!("primal infeasibility {pinf:.1e}, dual infeasibility {dinf:.1e}, relative gap {gap:.1e}");
        let worst = pinf.max(dinf).max(gap);
        let solution = SdpSolution {
            x: x.clone(),
            y: y.clone(),
            z: z.clone(),
            iterations: it,
            primal_infeasibility: pinf,
            dual_infeasibility: dinf,
            relative_gap: gap,
            primal_objective: pobj,
            dual_objective: dobj,
        };
        if worst < tol {
            return Ok(solution);
        }
        if !progress(it, pobj) {
            return Err(Error::Stopped);
        }
        if best.as_ref().is_none_or(|(w, _)| worst < *w) {
            best = Some((worst, solution));
        }
        if it == max_iter {
            break;
        }
        let (Ok(zchol), Ok(xchol)) = (
            Cholesky::new(&z, "SDP dual slack"),
            Cholesky::new(&x, "SDP primal iterate"),
        ) else {
            return stalled(
                best,
                format!("an iterate lost positive definiteness at iteration {it} ({report})"),
            );
        };
        // Its only error is an interruption of the process (above 4096 rows).
        let zinv = zchol.inverse().map_err(|_| Error::Stopped)?;
        let schur = a.schur(&x, &zinv);
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
            let rhs = &b - a.apply(&sym(&g));
            // One step of iterative refinement against the unshifted Schur complement.
            let mut dy = mchol.solve_vec(&rhs);
            dy += mchol.solve_vec(&(&rhs - &schur * &dy));
            let dz = &rd - a.adjoint(&dy);
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
        iterations: max_iter,
        report,
    })
}
