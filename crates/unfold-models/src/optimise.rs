//! The one bounded-optimisation helper of the models: maximise a fallible objective with
//! its gradient over a box by L-BFGS-B (`unfold-lbfgsb`), with an optional diagonal
//! preconditioner, and report how the search ended as an [`unfold_core::Convergence`].
//!
//! The Gaussian random fields ([`crate::grf::GaussianRandomField::fit`]) and the duals of
//! the posterior-regularised models ([`crate::regularised::maximise_dual`]) both run
//! through [`maximise`]; an error of the objective (a precision that is not positive
//! definite, say) stops the search at once and is returned as it is.

use unfold_core::{Convergence, Error, Observer, Result};
use unfold_lbfgsb::{try_minimize_until, LbfgsbOptions, Status, TryMinimizeError};

/// How [`maximise`] searches.
#[derive(Clone, Debug, PartialEq)]
pub struct Search<'a> {
    /// A typical magnitude per variable, or `None` for all ones. The search runs on
    /// `u_e = x_e / scale_e` (box and gradient scaled to match): a diagonal preconditioner
    /// that equalises the curvature when the scales are chosen well.
    pub scales: Option<&'a [f64]>,
    /// The search runs on `f / per` (e.g. the per-feature log-likelihood), so that `pgtol`
    /// means the same whatever the size of the problem; 1 for the objective as it is.
    pub per: f64,
    /// The L-BFGS-B stopping rules, applied to the scaled problem.
    pub lbfgsb: LbfgsbOptions,
    /// What is being maximised, for the message of an optimiser error.
    pub context: &'a str,
}

/// The result of [`maximise`].
#[derive(Clone, Debug, PartialEq)]
pub struct Maximum {
    /// The argmax (inside the box).
    pub x: Vec<f64>,
    /// The objective at `x`.
    pub value: f64,
    /// Infinity norm of the projected gradient of the scaled problem at `x`.
    pub projected_gradient_norm: f64,
    /// Objective evaluations.
    pub evaluations: usize,
    /// Iterations, stopping rule and the objective after each iteration.
    pub convergence: Convergence,
}

/// The `stopped_by` name of an L-BFGS-B status ([`Convergence::stopped_by`]).
pub fn stopped_by(status: Status) -> &'static str {
    match status {
        Status::ConvergedPgtol => "pgtol",
        Status::ConvergedFactr => "factr",
        Status::MaxIterations => "max_iterations",
        Status::MaxEvaluations => "max_evaluations",
        Status::LineSearchFailed => "line_search",
        Status::Ended => "caller",
    }
}

/// Maximises `f` over the box `bounds` from `x0`. `f(x, grad)` returns the objective at
/// `x` and writes its gradient into `grad`, or fails; the first failure stops the search
/// and is returned. After every iteration `observer` may end the search there
/// ([`Observer::ended`]): the iteration's point is returned, stopped by `caller`.
///
/// # Errors
/// Wrong lengths of `x0` or the scales, a scale that is not finite and positive, an error
/// of `f`, or an optimiser error (invalid options, a non-finite objective).
pub fn maximise<F>(
    mut f: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    search: &Search<'_>,
    observer: &dyn Observer,
) -> Result<Maximum>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64>,
{
    let m = x0.len();
    let unit;
    let scales = match search.scales {
        Some(s) => s,
        None => {
            unit = vec![1.0; m];
            &unit
        }
    };
    if scales.len() != m || bounds.len() != m {
        return Err(Error::DimensionMismatch(format!(
            "{} scales and {} bounds given for {m} variables of {}",
            scales.len(),
            bounds.len(),
            search.context
        )));
    }
    if let Some(p) = scales.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(Error::invalid(
            "scales",
            format!("scale {p} must be finite and > 0, got {}", scales[p]),
        ));
    }
    let per = search.per;
    let mut x = vec![0.0; m];
    let objective = |u: &[f64], g: &mut [f64]| -> Result<f64> {
        for ((x, u), c) in x.iter_mut().zip(u).zip(scales) {
            *x = u * c;
        }
        let value = f(&x, g)?;
        g.iter_mut().zip(scales).for_each(|(g, c)| *g *= -c / per);
        Ok(-value / per)
    };
    let u0: Vec<f64> = x0.iter().zip(scales).map(|(x, c)| x / c).collect();
    let ubounds: Vec<(f64, f64)> = bounds
        .iter()
        .zip(scales)
        .map(|(&(lo, hi), c)| (lo / c, hi / c))
        .collect();
    let report = try_minimize_until(objective, &u0, &ubounds, &search.lbfgsb, || {
        observer.ended()
    })
    .map_err(|e| match e {
        TryMinimizeError::Objective { error, .. } => error,
        TryMinimizeError::Lbfgsb(e) => Error::numerical(search.context, e.to_string()),
    })?;
    let converged = matches!(
        report.status,
        Status::ConvergedPgtol | Status::ConvergedFactr
    );
    let trace = report.trace.iter().map(|v| -v * per).collect();
    Ok(Maximum {
        x: report.x.iter().zip(scales).map(|(u, c)| u * c).collect(),
        value: -report.f * per,
        projected_gradient_norm: report.projected_gradient_norm,
        evaluations: report.evaluations,
        convergence: Convergence::iterative(trace, converged, stopped_by(report.status)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(scales: Option<&[f64]>) -> Search<'_> {
        Search {
            scales,
            per: 2.0,
            lbfgsb: LbfgsbOptions::default(),
            context: "test",
        }
    }

    /// `-(x - t)^2` summed, over `[0, 1]^3`: the argmax is `clip(t)`.
    #[test]
    fn maximises_over_the_box_with_and_without_scales() {
        let t = [-0.5, 0.3, 4.0];
        let f = |x: &[f64], g: &mut [f64]| -> Result<f64> {
            for ((g, x), t) in g.iter_mut().zip(x).zip(&t) {
                *g = -2.0 * (x - t);
            }
            Ok(-x.iter().zip(&t).map(|(x, t)| (x - t).powi(2)).sum::<f64>())
        };
        for scales in [None, Some(&[10.0, 0.1, 3.0][..])] {
            let m = maximise(
                f,
                &[0.5; 3],
                &[(0.0, 1.0); 3],
                &search(scales),
                &unfold_core::Silent,
            )
            .unwrap();
            for (x, want) in m.x.iter().zip([0.0, 0.3, 1.0]) {
                assert!((x - want).abs() < 1e-8, "{x} vs {want}");
            }
            assert!(m.convergence.converged);
            assert!(m.convergence.iterations > 0);
            assert_eq!(m.convergence.trace.len(), m.convergence.iterations);
            assert!((m.convergence.trace.last().unwrap() - m.value).abs() < 1e-15);
        }
        assert!(maximise(
            f,
            &[0.5; 3],
            &[(0.0, 1.0); 3],
            &search(Some(&[1.0, 0.0, 1.0])),
            &unfold_core::Silent,
        )
        .is_err());
        assert!(maximise(
            f,
            &[0.5; 2],
            &[(0.0, 1.0); 3],
            &search(None),
            &unfold_core::Silent
        )
        .is_err());
    }

    #[test]
    fn an_objective_error_is_returned_as_it_is() {
        let mut calls = 0;
        let e = maximise(
            |x: &[f64], g: &mut [f64]| {
                calls += 1;
                if calls == 3 {
                    return Err(Error::numerical("the objective", "failed on purpose"));
                }
                g[0] = -2.0 * (x[0] - 5.0);
                Ok(-(x[0] - 5.0).powi(2))
            },
            &[0.0],
            &[(f64::NEG_INFINITY, f64::INFINITY)],
            &search(None),
            &unfold_core::Silent,
        )
        .unwrap_err();
        assert_eq!(calls, 3);
        assert!(e.to_string().contains("failed on purpose"), "{e}");
    }

    /// Ends the search once it has been asked `after` times.
    struct EndAfter {
        after: usize,
        asked: std::sync::atomic::AtomicUsize,
    }

    impl Observer for EndAfter {
        fn ended(&self) -> bool {
            self.asked
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .saturating_add(1)
                >= self.after
        }
    }

    #[test]
    fn an_observer_that_ends_the_search_gets_that_iterate() {
        // A badly scaled quadratic that takes many iterations: the run ended after its
        // second is the full run's second iterate, reported as stopped by the caller.
        let f = |x: &[f64], g: &mut [f64]| -> Result<f64> {
            let w = [1.0, 100.0, 1e4];
            for ((g, x), w) in g.iter_mut().zip(x).zip(w) {
                *g = -2.0 * w * (x - 1.0);
            }
            Ok(-x
                .iter()
                .zip(w)
                .map(|(x, w)| w * (x - 1.0).powi(2))
                .sum::<f64>())
        };
        let bounds = [(-10.0, 10.0); 3];
        let full = maximise(
            f,
            &[5.0, -3.0, 2.0],
            &bounds,
            &search(None),
            &unfold_core::Silent,
        )
        .unwrap();
        assert!(full.convergence.iterations > 3);
        let ended = EndAfter {
            after: 2,
            asked: Default::default(),
        };
        let early = maximise(f, &[5.0, -3.0, 2.0], &bounds, &search(None), &ended).unwrap();
        assert_eq!(early.convergence.stopped_by, "caller");
        assert!(!early.convergence.converged);
        assert_eq!(early.convergence.iterations, 2);
        assert_eq!(early.convergence.trace[..], full.convergence.trace[..2]);
        assert_eq!(early.value, full.convergence.trace[1]);
    }
}
