//! Preconditioned conjugate gradients that stop on the energy error.
//!
//! For a symmetric positive definite `A`, conjugate gradients minimise the energy
//! `E(x) = x^T A x / 2 - b^T x` over growing Krylov spaces, and every step lowers it by
//! exactly `alpha_i rho_i / 2` (`rho_i = r_i^T M^{-1} r_i`, `alpha_i` the step length). The
//! energy error left at step `j`, `E(x_j) - E(x*) = (x_j - x*)^T A (x_j - x*) / 2`, is the sum
//! of all later decreases. The Hestenes–Stiefel estimate sums the next `delay` of them: a
//! lower bound on the error at step `j` that is tight once the convergence is steady
//! (Strakoš and Tichý, 2002). The solve stops at step `j + delay` when the estimate for step
//! `j` falls below the tolerance, so the iterate returned is better still.
//!
//! This is the criterion a variational bound needs: where `x` maximises a bound that is
//! `-E(x)` plus a constant, the energy error is exactly what an inexact solve costs the
//! bound, in its own units. faer's conjugate gradients stop on the residual's norm, which
//! says nothing about that without the smallest eigenvalue of `A`.

use crate::dense::dot;
use unfold_core::{Error, Result};

/// Stopping rule of [`conjugate_gradients`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgOptions {
    /// Stop when the estimated energy error falls below this.
    pub energy_tolerance: f64,
    /// The number of later energy decreases summed for the estimate.
    pub delay: usize,
    /// The most iterations; more is an error.
    pub max_iterations: usize,
}

/// What a solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgOutcome {
    /// Iterations run (products with `A`).
    pub iterations: usize,
    /// The energy decrease from the start: `E(x_0) - E(x)`.
    pub energy_decrease: f64,
    /// The estimated energy error of the returned iterate's predecessor `delay` steps back
    /// (an upper estimate for the returned iterate's own error).
    pub energy_error: f64,
}

/// Solves `A x = b` from the start in `x` by conjugate gradients preconditioned with `M`,
/// where `apply(v, out)` sets `out = A v` and `precondition(r, out)` sets `out = M^{-1} r`
/// (both symmetric positive definite). `apply` may fail (a long product that checks for
/// Ctrl-C inside itself); its error is passed on.
///
/// # Errors
/// [`Error::Numerical`] (naming `context`) when a search direction has non-positive
/// curvature or non-positive preconditioned residual norm (the operator or the
/// preconditioner is not positive definite, in exact arithmetic or in floating point), or
/// when `max_iterations` pass before the estimate falls below the tolerance;
/// [`Error::Interrupted`] if a stop is requested (checked before each product); `apply`'s
/// errors.
pub fn conjugate_gradients(
    apply: impl Fn(&[f64], &mut [f64]) -> Result<()>,
    precondition: impl Fn(&[f64], &mut [f64]),
    b: &[f64],
    x: &mut [f64],
    options: CgOptions,
    context: &str,
) -> Result<CgOutcome> {
    let n = b.len();
    assert_eq!(x.len(), n, "conjugate_gradients: x and b differ in length");
    let mut r = vec![0.0; n];
    apply(x, &mut r)?;
    for (ri, bi) in r.iter_mut().zip(b) {
        *ri = bi - *ri;
    }
    let mut z = vec![0.0; n];
    precondition(&r, &mut z);
    let mut rho = dot(&r, &z);
    let mut p = z.clone();
    let mut ap = vec![0.0; n];
    // The energy decreases of the steps so far.
    let mut decreases: Vec<f64> = Vec::new();
    let delay = options.delay.max(1);
    let mut outcome = CgOutcome {
        iterations: 0,
        energy_decrease: 0.0,
        energy_error: 0.0,
    };
    if rho == 0.0 {
        return Ok(outcome);
    }
    let rho_start = rho.abs();
    for it in 0..options.max_iterations {
        if rho.is_nan() || rho <= 0.0 {
            return Err(Error::numerical(
                context,
                format!(
                    "the preconditioner is not positive definite (r^T M^-1 r = {rho:e} at \
                     iteration {it}); it cannot be in exact arithmetic"
                ),
            ));
        }
        unfold_core::interrupt::check()?;
        apply(&p, &mut ap)?;
        let curvature = dot(&p, &ap);
        if curvature.is_nan() || curvature <= 0.0 {
            return Err(Error::numerical(
                context,
                format!(
                    "the system lost positive definiteness (p^T A p = {curvature:e} at \
                     iteration {it}); it cannot in exact arithmetic"
                ),
            ));
        }
        let step = rho / curvature;
        for i in 0..n {
            x[i] += step * p[i];
            r[i] -= step * ap[i];
        }
        decreases.push(0.5 * step * rho);
        outcome.iterations = it + 1;
        outcome.energy_decrease += 0.5 * step * rho;
        if decreases.len() >= delay {
            let estimate: f64 = decreases[decreases.len() - delay..].iter().sum();
            outcome.energy_error = estimate;
            if estimate <= options.energy_tolerance {
                return Ok(outcome);
            }
        }
        precondition(&r, &mut z);
        let next = dot(&r, &z);
        // The preconditioned residual has fallen to round-off (its sign may then be
        // either): the solve has converged, whatever the estimate says.
        if next.abs() <= f64::EPSILON * f64::EPSILON * rho_start {
            return Ok(outcome);
        }
        let beta = next / rho;
        rho = next;
        for i in 0..n {
            p[i] = z[i] + beta * p[i];
        }
    }
    Err(Error::numerical(
        context,
        format!(
            "conjugate gradients did not converge in {} iterations (estimated energy error \
             {:e}, tolerance {:e})",
            options.max_iterations, outcome.energy_error, options.energy_tolerance
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// A symmetric positive definite matrix with eigenvalues spread over four decades.
    fn spd(n: usize) -> DMatrix<f64> {
        let q = DMatrix::from_fn(n, n, |i, j| {
            ((i * 13 + j * 7) % 11) as f64 - 5.0 + (i == j) as u8 as f64 * 20.0
        })
        .qr()
        .q();
        let d = DVector::from_fn(n, |i, _| 10f64.powf(4.0 * i as f64 / (n - 1) as f64 - 2.0));
        &q * DMatrix::from_diagonal(&d) * q.transpose()
    }

    #[test]
    fn the_energy_error_is_below_the_tolerance_and_the_decrease_is_exact() {
        let n = 60;
        let a = spd(n);
        let b = DVector::from_fn(n, |i, _| (i as f64 * 0.37).sin());
        let exact = a.clone().cholesky().unwrap().solve(&b);
        let energy = |x: &DVector<f64>| 0.5 * x.dot(&(&a * x)) - b.dot(x);
        let x0 = DVector::from_fn(n, |i, _| (i % 3) as f64);
        for tolerance in [1e-4, 1e-8] {
            let mut x = x0.clone();
            let outcome = conjugate_gradients(
                |v, out| {
                    out.copy_from_slice((&a * DVector::from_column_slice(v)).as_slice());
                    Ok(())
                },
                // Jacobi.
                |r, out| {
                    for i in 0..n {
                        out[i] = r[i] / a[(i, i)];
                    }
                },
                b.as_slice(),
                x.as_mut_slice(),
                CgOptions {
                    energy_tolerance: tolerance,
                    delay: 10,
                    max_iterations: 10 * n,
                },
                "test",
            )
            .unwrap();
            // The energy error, up to the round-off of two energies of that size.
            let error = energy(&x) - energy(&exact);
            let round_off = 1e-12 * energy(&exact).abs();
            assert!(
                error >= -round_off && error <= tolerance,
                "error {error} at {tolerance}"
            );
            let decrease = energy(&x0) - energy(&x);
            assert!((decrease - outcome.energy_decrease).abs() < 1e-9 * decrease.abs());
            assert!(outcome.iterations < 10 * n);
        }
    }

    #[test]
    fn an_indefinite_operator_is_refused() {
        let a = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, -2.0, 3.0]));
        let mut x = vec![0.0; 3];
        let err = conjugate_gradients(
            |v, out| {
                out.copy_from_slice((&a * DVector::from_column_slice(v)).as_slice());
                Ok(())
            },
            |r, out| out.copy_from_slice(r),
            &[0.5, 1.0, 0.0],
            &mut x,
            CgOptions {
                energy_tolerance: 1e-12,
                delay: 2,
                max_iterations: 30,
            },
            "test system",
        )
        .unwrap_err();
        assert!(err.to_string().contains("positive definiteness"), "{err}");
    }
}
