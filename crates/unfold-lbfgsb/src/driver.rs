//! The L-BFGS-B iteration (Byrd, Lu, Nocedal & Zhu 1995, Algorithm L-BFGS-B):
//! Cauchy point, subspace minimisation, strong-Wolfe line search inside the box, update.

use crate::bounds::Bounds;
use crate::cauchy::cauchy_point;
use crate::dense::dot;
use crate::linesearch::{search, SearchEnd};
use crate::memory::Memory;
use crate::subspace::subspace_point;
use crate::{Error, LbfgsbOptions, LbfgsbReport, Status, TryMinimizeError};
use std::convert::Infallible;

/// Evaluation counter with the budget; checks that the objective stays finite.
#[derive(Debug, Clone)]
struct Counter {
    evaluations: usize,
    max_evaluations: usize,
}

impl Counter {
    /// Evaluates `f(x)` and its gradient into `g`; `None` if the budget is exhausted. An
    /// error of the objective stops the run with [`TryMinimizeError::Objective`].
    fn eval<E, F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>>(
        &mut self,
        f: &mut F,
        x: &[f64],
        g: &mut [f64],
        iteration: usize,
    ) -> Result<Option<f64>, TryMinimizeError<E>> {
        if self.evaluations >= self.max_evaluations {
            return Ok(None);
        }
        self.evaluations += 1;
        let value = f(x, g).map_err(|error| TryMinimizeError::Objective {
            error,
            iterations: iteration,
            evaluation: self.evaluations,
        })?;
        let bad = if !value.is_finite() {
            Some("f".to_string())
        } else {
            g.iter()
                .position(|v| !v.is_finite())
                .map(|i| format!("gradient[{i}] = {}", g[i]))
        };
        match bad {
            None => Ok(Some(value)),
            Some(what) if self.evaluations == 1 => Err(Error::NonFiniteAtStart {
                what: format!("{what} at x0"),
            }
            .into()),
            Some(what) => Err(Error::NonFiniteDuringRun {
                what,
                evaluation: self.evaluations,
                iteration,
            }
            .into()),
        }
    }
}

/// Validates the inputs and returns the box and the projected start.
fn prepare(
    x0: &[f64],
    bounds: &[(f64, f64)],
    opts: &LbfgsbOptions,
) -> Result<(Bounds, Vec<f64>, bool), Error> {
    opts.validate()?;
    if x0.is_empty() {
        return Err(Error::Empty);
    }
    if x0.len() != bounds.len() {
        return Err(Error::LengthMismatch {
            x0: x0.len(),
            bounds: bounds.len(),
        });
    }
    let bounds = Bounds::new(bounds)?;
    if let Some(index) = x0.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFiniteStart {
            index,
            value: x0[index],
        });
    }
    let mut x = x0.to_vec();
    let projected = bounds.project(&mut x);
    Ok((bounds, x, projected))
}

/// Search direction `d = x_bar - x` from the Cauchy point and subspace minimisation, or
/// `None` if it is not a descent direction (or the middle matrix is singular).
fn direction(x: &[f64], g: &[f64], bounds: &Bounds, mem: &Memory) -> Option<Vec<f64>> {
    let m_mat = mem.middle()?;
    let cp = cauchy_point(x, g, bounds, mem, &m_mat);
    let xbar = subspace_point(x, g, bounds, mem, &m_mat, &cp)?;
    let d: Vec<f64> = xbar.iter().zip(x).map(|(a, b)| a - b).collect();
    (dot(&d, g) < 0.0).then_some(d)
}

/// Initial trial step and largest allowed step of the line search along `d`.
///
/// With curvature pairs in memory, `x + d` is the (projected) quasi-Newton point: start at
/// 1 and never go beyond it (nor beyond the box). With an empty memory `d` is the
/// projected-gradient step of `B = I`, whose scale is arbitrary. At the first iteration
/// start at `1 / ||d||`, except when every variable has both bounds (then `x + d` is a
/// meaningful point of the box and the unit step is tried first), and with any finite bound
/// cap the step at 1 (`x + d` is feasible). After a memory reset, or when every pair so far
/// was skipped, start at 1 and allow extrapolation up to the largest feasible step.
fn initial_step(
    bounds: &Bounds,
    mem: &Memory,
    first: bool,
    d: &[f64],
    feasible: f64,
) -> (f64, f64) {
    if !mem.is_empty() {
        return (1.0, feasible.min(1.0));
    }
    if !first {
        let stp_max = feasible.min(1e10);
        return (1.0f64.min(stp_max), stp_max);
    }
    let stp_max = if bounds.any_finite() {
        feasible.min(1.0)
    } else {
        feasible.min(1e10)
    };
    if bounds.all_boxed() {
        (1.0f64.min(stp_max), stp_max)
    } else {
        ((1.0 / dot(d, d).sqrt()).min(stp_max), stp_max)
    }
}

/// A resumable L-BFGS-B run: the current iterate, its gradient and the memory.
/// [`Run::step`] performs one iteration; [`minimize`] and the argmin adapter drive it.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    bounds: Bounds,
    opts: LbfgsbOptions,
    x: Vec<f64>,
    g: Vec<f64>,
    fx: f64,
    mem: Memory,
    counter: Counter,
    iterations: usize,
    trace: Vec<f64>,
    retried: bool,
    x0_projected: bool,
}

impl Run {
    /// Validates the input, projects `x0` onto the box and evaluates `f` there.
    pub(crate) fn start<E, F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>>(
        f: &mut F,
        x0: &[f64],
        bounds: &[(f64, f64)],
        opts: &LbfgsbOptions,
    ) -> Result<Self, TryMinimizeError<E>> {
        let (bounds, x, x0_projected) = prepare(x0, bounds, opts)?;
        let mut counter = Counter {
            evaluations: 0,
            max_evaluations: opts.max_evaluations,
        };
        let mut g = vec![0.0; x.len()];
        // max_evaluations >= 1 is validated, so the budget cannot be exhausted here.
        let fx = counter
            .eval(f, &x, &mut g, 0)?
            .ok_or(TryMinimizeError::Lbfgsb(Error::InvalidOption {
                name: "max_evaluations",
                value: "0".into(),
                reason: "at least one evaluation (at x0) is needed",
            }))?;
        Ok(Self {
            bounds,
            opts: opts.clone(),
            x,
            g,
            fx,
            mem: Memory::new(opts.m),
            counter,
            iterations: 0,
            trace: Vec::new(),
            retried: false,
            x0_projected,
        })
    }

    /// Current iterate, objective value and gradient.
    pub(crate) fn current(&self) -> (&[f64], f64, &[f64]) {
        (&self.x, self.fx, &self.g)
    }

    /// One iteration: a step, or a memory reset after a failed direction or line search.
    /// Returns the final status once a stopping rule holds.
    pub(crate) fn step<E, F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>>(
        &mut self,
        f: &mut F,
    ) -> Result<Option<Status>, TryMinimizeError<E>> {
        let (bounds, opts) = (&self.bounds, &self.opts);
        if bounds.projected_gradient_norm(&self.x, &self.g) <= opts.pgtol {
            return Ok(Some(Status::ConvergedPgtol));
        }
        if self.iterations >= opts.max_iterations {
            return Ok(Some(Status::MaxIterations));
        }
        if self.counter.evaluations >= opts.max_evaluations {
            return Ok(Some(Status::MaxEvaluations));
        }
        let Some(d) = direction(&self.x, &self.g, bounds, &self.mem) else {
            if self.mem.is_empty() {
                return Ok(Some(Status::LineSearchFailed));
            }
            self.mem.reset();
            return Ok(None);
        };
        let n = self.x.len();
        let g0 = dot(&self.g, &d);
        let feasible = bounds.max_step(&self.x, &d);
        let (stp0, stp_max) = initial_step(bounds, &self.mem, self.iterations == 0, &d, feasible);
        let x = &self.x;
        let counter = &mut self.counter;
        let iterations = self.iterations;
        let mut x_trial = x.clone();
        let mut g_trial = vec![0.0; n];
        let outcome = search(
            |t| {
                for i in 0..n {
                    x_trial[i] = x[i] + t * d[i];
                }
                bounds.project(&mut x_trial);
                Ok::<_, TryMinimizeError<E>>(
                    counter
                        .eval(f, &x_trial, &mut g_trial, iterations)?
                        .map(|v| (v, dot(&g_trial, &d))),
                )
            },
            self.fx,
            g0,
            stp0,
            stp_max,
        )?;
        let accepted = outcome.filter(|r| r.end == SearchEnd::Converged || r.f < self.fx);
        let Some(result) = accepted else {
            if self.counter.evaluations >= opts.max_evaluations {
                return Ok(Some(Status::MaxEvaluations));
            }
            if self.retried || self.mem.is_empty() {
                return Ok(Some(Status::LineSearchFailed));
            }
            self.retried = true;
            self.mem.reset();
            return Ok(None);
        };
        self.iterations += 1;
        // The last trial point may not be the one evaluated if the budget ran out.
        for i in 0..n {
            x_trial[i] = self.x[i] + result.step * d[i];
        }
        bounds.project(&mut x_trial);
        let s: Vec<f64> = x_trial.iter().zip(&self.x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = g_trial.iter().zip(&self.g).map(|(a, b)| a - b).collect();
        let f_old = self.fx;
        self.x = x_trial;
        self.g = g_trial;
        self.fx = result.f;
        self.trace.push(result.f);
        self.mem.push(s, y);
        if f_old - self.fx > 0.0 {
            self.retried = false;
        }
        if result.end == SearchEnd::Budget {
            return Ok(Some(Status::MaxEvaluations));
        }
        if bounds.projected_gradient_norm(&self.x, &self.g) <= opts.pgtol {
            return Ok(Some(Status::ConvergedPgtol));
        }
        let scale = f_old.abs().max(self.fx.abs()).max(1.0);
        if opts.factr == 0.0 && f_old - self.fx <= 0.0 {
            // A step that met the line search's conditions within round-off but did not
            // lower f: with factr = 0 the caller wants pgtol, so the memory (whose
            // direction was nearly orthogonal to the gradient) is reset and the search
            // retried once before giving up, as after a failed line search.
            if self.retried {
                return Ok(Some(Status::LineSearchFailed));
            }
            self.retried = true;
            self.mem.reset();
            return Ok(None);
        }
        if (f_old - self.fx) / scale <= opts.factr * f64::EPSILON {
            return Ok(Some(Status::ConvergedFactr));
        }
        Ok(None)
    }

    /// The report for a run that stopped with `status`.
    pub(crate) fn report(&self, status: Status) -> LbfgsbReport {
        LbfgsbReport {
            projected_gradient_norm: self.bounds.projected_gradient_norm(&self.x, &self.g),
            x: self.x.clone(),
            f: self.fx,
            g: self.g.clone(),
            iterations: self.iterations,
            trace: self.trace.clone(),
            evaluations: self.counter.evaluations,
            status,
            x0_projected: self.x0_projected,
        }
    }
}

/// Minimises `f` over the box `bounds` from `x0` with L-BFGS-B.
///
/// `f(x, g)` returns the objective at `x` and writes its gradient into `g`. Bounds are
/// `(lower, upper)` per variable; use `f64::NEG_INFINITY` / `f64::INFINITY` for missing ones.
/// A start outside the box is projected onto it (`x0_projected` in the report).
///
/// Stops (SciPy-compatible) when the projected-gradient infinity norm is `<= pgtol`, when
/// the relative reduction `(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1) <= factr * eps`, or
/// at the iteration / evaluation limits. A failed line search resets the memory and retries
/// along the projected gradient once, then stops with [`Status::LineSearchFailed`].
/// An objective that can fail uses [`try_minimize`], of which this is the infallible case.
///
/// # Errors
/// Invalid input (lengths, bounds, non-finite `x0`, options) or a non-finite objective
/// value or gradient (at the start or during the run).
pub fn minimize<F>(
    mut f: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    opts: &LbfgsbOptions,
) -> Result<LbfgsbReport, Error>
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    try_minimize(|x, g| Ok::<f64, Infallible>(f(x, g)), x0, bounds, opts).map_err(|e| match e {
        TryMinimizeError::Lbfgsb(e) => e,
        TryMinimizeError::Objective { error, .. } => match error {},
    })
}

/// [`minimize`] with a fallible objective: `f(x, g)` returns the objective at `x` (writing
/// its gradient into `g`) or an error, which stops the run at once and is returned as
/// [`TryMinimizeError::Objective`] with the iterations completed and the evaluation that
/// failed. Everything else is as [`minimize`].
///
/// ```
/// use unfold_lbfgsb::{try_minimize, LbfgsbOptions, TryMinimizeError};
/// // ln(x) is defined for x > 0 only: the objective refuses the rest.
/// let f = |x: &[f64], g: &mut [f64]| {
///     if x[0] <= 0.0 {
///         return Err(format!("ln({}) is undefined", x[0]));
///     }
///     g[0] = 1.0 - 1.0 / x[0];
///     Ok(x[0] - x[0].ln())
/// };
/// let r = try_minimize(f, &[3.0], &[(1e-3, 10.0)], &LbfgsbOptions::default()).unwrap();
/// assert!((r.x[0] - 1.0).abs() < 1e-5);
/// let e = try_minimize(f, &[-1.0], &[(-2.0, 10.0)], &LbfgsbOptions::default()).unwrap_err();
/// assert!(matches!(e, TryMinimizeError::Objective { evaluation: 1, .. }));
/// ```
///
/// # Errors
/// As [`minimize`], and the first error of the objective.
pub fn try_minimize<E, F>(
    f: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    opts: &LbfgsbOptions,
) -> Result<LbfgsbReport, TryMinimizeError<E>>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>,
{
    try_minimize_until(f, x0, bounds, opts, || false)
}

/// [`try_minimize`] that asks `ended()` after every iteration: `true` ends the run there
/// with [`Status::Ended`], reporting the iteration's accepted point (a caller's early
/// stop that keeps the iterate).
///
/// ```
/// use unfold_lbfgsb::{try_minimize_until, LbfgsbOptions, Status};
/// let f = |x: &[f64], g: &mut [f64]| {
///     g[0] = 2.0 * (x[0] - 1.0);
///     Ok::<f64, String>((x[0] - 1.0).powi(2))
/// };
/// let r = try_minimize_until(f, &[3.0], &[(-10.0, 10.0)], &LbfgsbOptions::default(), || true)
///     .unwrap();
/// assert_eq!((r.status, r.iterations), (Status::Ended, 1));
/// assert!(r.f < 4.0);
/// ```
///
/// # Errors
/// As [`try_minimize`].
pub fn try_minimize_until<E, F>(
    mut f: F,
    x0: &[f64],
    bounds: &[(f64, f64)],
    opts: &LbfgsbOptions,
    mut ended: impl FnMut() -> bool,
) -> Result<LbfgsbReport, TryMinimizeError<E>>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>,
{
    let mut run = Run::start(&mut f, x0, bounds, opts)?;
    loop {
        if let Some(status) = run.step(&mut f)? {
            return Ok(run.report(status));
        }
        if ended() {
            return Ok(run.report(Status::Ended));
        }
    }
}
