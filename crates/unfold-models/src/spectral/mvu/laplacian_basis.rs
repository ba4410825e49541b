//! The graph-Laplacian-basis approximation of MVU (Weinberger, Sha, Zhu & Saul 2006).

use super::{MvuParams, SdpSolution};
use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Evidence, EvidenceKind, Observer, Result};
use unfold_graph::{Laplacian, NeighbourGraph};
use unfold_linalg::{smallest_eigenpairs, Cholesky, SymMatrix};
use unfold_sdp::dense::{mul, sym};

/// Newton's method on the barrier stops when half the squared Newton decrement, a bound on
/// the distance to the central point, is below this.
const NEWTON_TOL: f64 = 1e-9;

/// Index pairs `(r, c)`, `r <= c`, of the symmetric-vector (svec) coordinates of a b x b
/// matrix: `<A, B> = svec(A) . svec(B)` with off-diagonal entries scaled by `sqrt 2`.
fn svec_pairs(b: usize) -> Vec<(usize, usize)> {
    (0..b).flat_map(|c| (0..=c).map(move |r| (r, c))).collect()
}

fn svec(a: &DMatrix<f64>, pairs: &[(usize, usize)]) -> DVector<f64> {
    let s2 = std::f64::consts::SQRT_2;
    DVector::from_iterator(
        pairs.len(),
        pairs
            .iter()
            .map(|&(r, c)| if r == c { a[(r, c)] } else { s2 * a[(r, c)] }),
    )
}

fn smat(v: &DVector<f64>, pairs: &[(usize, usize)], b: usize) -> DMatrix<f64> {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let mut a = DMatrix::zeros(b, b);
    for (&(r, c), &x) in pairs.iter().zip(v.iter()) {
        if r == c {
            a[(r, r)] = x;
        } else {
            a[(r, c)] = h * x;
            a[(c, r)] = h * x;
        }
    }
    a
}

/// The `m` eigenvectors of the 0/1 graph Laplacian `D - A` after the constant one (n x m,
/// orthonormal, orthogonal to `1`): the smoothest functions on the graph.
fn laplacian_basis(graph: &NeighbourGraph, m: usize) -> Result<DMatrix<f64>> {
    let unit = graph.edges().into_iter().map(|(i, j, _)| (i, j, 1.0));
    let lap = Laplacian::new(graph.n()).sparse(unit);
    let eig = smallest_eigenpairs(SymMatrix::Sparse(&lap), m + 1)?;
    Ok(eig.vectors.columns(1, m).into_owned())
}

/// The Laplacian-basis approximation: `K = Q Z Q^T` maximising
/// `tr(Z) - nu sum_e (u_e^T Z u_e - b_e)^2`, `u_e = Q^T (e_i - e_j)`, over `Z` PSD (each
/// Newton step's trace reported to `observer`, which may stop it), by a
/// log-barrier method (Boyd & Vandenberghe 2004, §11.3): Newton steps on
/// `t f(Z) - log det Z` with `f = -tr(Z) + nu ||A(Z) - b||^2`, `t <- 10 t`, until the
/// barrier's bound `b / t` on the suboptimality is below `tol (1 + |f|)`.
pub(super) fn solve_basis(
    graph: &NeighbourGraph,
    edges: &[(usize, usize)],
    target: &[f64],
    m: usize,
    params: &MvuParams,
    observer: &dyn Observer,
) -> Result<SdpSolution> {
    let q = laplacian_basis(graph, m)?;
    let pairs = svec_pairs(m);
    let s = pairs.len();
    let a = DMatrix::from_fn(edges.len(), s, |e, p| {
        let (i, j) = edges[e];
        let (r, c) = pairs[p];
        let (ur, uc) = (q[(i, r)] - q[(j, r)], q[(i, c)] - q[(j, c)]);
        if r == c {
            ur * ur
        } else {
            std::f64::consts::SQRT_2 * ur * uc
        }
    });
    let nu = params.penalty;
    let target = DVector::from_column_slice(target);
    let ata = mul(&a, true, &a, false) * (2.0 * nu);
    let at_b = a.tr_mul(&target) * (2.0 * nu);
    let eye = svec(&DMatrix::identity(m, m), &pairs);
    let f = |z: &DVector<f64>| -eye.dot(z) + nu * (&a * z - &target).norm_squared();
    // Start from c I with the mean squared edge length matched on average.
    let mean_u2 = (0..edges.len())
        .map(|e| a.row(e).transpose().dot(&eye))
        .sum::<f64>()
        / edges.len() as f64;
    let mut z = &eye * (1.0 / mean_u2.max(f64::MIN_POSITIVE));
    let mut t = 1.0 / f(&z).abs().max(1.0);
    let mut newton = 0;
    loop {
        // Centring: Newton's method on phi(z) = t f(z) - log det Z.
        let mut steps = 0;
        loop {
            let zm = smat(&z, &pairs, m);
            let zinv = Cholesky::new(&zm, "MVU basis iterate")?.inverse()?;
            let grad = (&ata * &z - &at_b - &eye) * t - svec(&zinv, &pairs);
            // Hessian of -log det Z: columns svec(Z^{-1} B_p Z^{-1}) for the svec basis B_p.
            let mut hess = &ata * t;
            for (p, &(r, c)) in pairs.iter().enumerate() {
                let w = if r == c {
                    zinv.column(r) * zinv.row(r)
                } else {
                    (zinv.column(r) * zinv.row(c) + zinv.column(c) * zinv.row(r))
                        * std::f64::consts::FRAC_1_SQRT_2
                };
                let mut col = hess.column_mut(p);
                col += svec(&w, &pairs);
            }
            let step = -Cholesky::new(&sym(&hess), "MVU basis Newton system")?.solve_vec(&grad);
            let decrement = -grad.dot(&step);
            if decrement / 2.0 <= NEWTON_TOL {
                break;
            }
            newton += 1;
            steps += 1;
            if steps > params.max_iter {
                return Err(Error::NotConverged {
                    context: format!(
                        "MVU Laplacian-basis barrier method (centring at t = {t:.1e})"
                    ),
                    iterations: params.max_iter,
                    advice: "raise max_iter, loosen tol or lower the penalty".to_string(),
                });
            }
            let phi = |v: &DVector<f64>| -> Option<f64> {
                let vm = smat(v, &pairs, m);
                let chol = Cholesky::new(&vm, "MVU basis trial point").ok()?;
                Some(t * f(v) - chol.log_det())
            };
            let phi0 = phi(&z).unwrap_or(f64::INFINITY);
            // Armijo's test, with room for rounding in phi (of size t |f|).
            let slack = 1e-13 * phi0.abs();
            let mut alpha = 1.0;
            loop {
                let trial = &z + &step * alpha;
                if let Some(v) = phi(&trial) {
                    if v <= phi0 - 0.25 * alpha * decrement + slack {
                        z = trial;
                        break;
                    }
                }
                alpha *= 0.5;
                if alpha < 1e-12 {
                    return Err(Error::numerical(
                        "MVU Laplacian-basis barrier method",
                        "the line search failed; try a smaller penalty",
                    ));
                }
            }
            // The trace of the Gram matrix (the variance MVU maximises) after each step.
            observer.step(
                1,
                newton,
                &Evidence::new(EvidenceKind::Objective, eye.dot(&z)),
            )?;
            // A barrier iterate is not reported as a fit before the method meets its
            // tolerance: a caller's end stops it like an interruption.
            if observer.ended() {
                return Err(Error::Interrupted);
            }
        }
        let relative_gap = m as f64 / t / (1.0 + f(&z).abs());
        if relative_gap <= params.tol {
            let zm = smat(&z, &pairs, m);
            return Ok(SdpSolution {
                k: mul(&mul(&q, false, &zm, false), false, &q, true),
                iterations: newton,
                relative_gap,
            });
        }
        t *= 10.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spectral::mvu::MvuSolver;
    use unfold_data::synthetic::swiss_roll;
    use unfold_graph::Weighting;
    use unfold_linalg::sym_eigen;
    use unfold_sdp::dense::inner;

    #[test]
    fn basis_variant_meets_its_optimality_conditions() {
        // f(Z) = -tr Z + nu ||A(Z) - b||^2 is minimised over Z PSD iff grad f PSD and
        // <grad f, Z> = 0.
        let y = swiss_roll(80, 0.0, 5).unwrap().points;
        let params = MvuParams::new(2, 6).mvu_basis(Some(10));
        let (_, graph) = params
            .graph
            .build(&y, Weighting::Distance, "MVU", &unfold_core::Silent)
            .unwrap();
        let (edges, d): (Vec<(usize, usize)>, Vec<f64>) = graph
            .edges()
            .into_iter()
            .map(|(i, j, w)| ((i, j), w * w))
            .unzip();
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let b: Vec<f64> = d.iter().map(|v| v / mean).collect();
        let k = solve_basis(&graph, &edges, &b, 10, &params, &unfold_core::Silent)
            .unwrap()
            .k;
        // Recover Z = Q^T K Q with the same basis.
        let q = laplacian_basis(&graph, 10).unwrap();
        let z = q.transpose() * &k * &q;
        let mut grad = -DMatrix::<f64>::identity(10, 10);
        for (&(i, j), &be) in edges.iter().zip(&b) {
            let u = (q.row(i) - q.row(j)).transpose();
            let r = k[(i, i)] + k[(j, j)] - 2.0 * k[(i, j)] - be;
            grad += &u * u.transpose() * (2.0 * params.penalty * r);
        }
        let g_low = sym_eigen(&sym(&grad)).unwrap().values[0];
        assert!(g_low > -1e-5 * grad.norm(), "grad f has eigenvalue {g_low}");
        let comp = inner(&grad, &z).abs();
        assert!(comp < 1e-5 * z.trace(), "complementarity {comp}");
        // K is centred and of rank <= 10.
        assert!((&k * DVector::from_element(80, 1.0)).amax() < 1e-9 * k.trace());
        let mvu = params.fit(&y).unwrap();
        assert_eq!(
            mvu.solver,
            MvuSolver::LaplacianBasis {
                basis: 10,
                penalty: params.penalty
            }
        );
        assert!(mvu.eigenvalues[10].abs() < 1e-9 * mvu.eigenvalues[0]);
    }
}
