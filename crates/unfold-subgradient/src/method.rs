//! The projected (sub)gradient iteration and its plain-function API.

use crate::error::TryOptimizeError;
use crate::{Error, Projection, StepRule};
use std::convert::Infallible;

/// Whether the objective is minimised (subgradient descent on a convex function) or
/// maximised (supergradient ascent on a concave function).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sense {
    /// `x_{t+1} = P(x_t - a_t g_t)`.
    #[default]
    Minimise,
    /// `x_{t+1} = P(x_t + a_t g_t)`.
    Maximise,
}

impl Sense {
    /// True when `a` is strictly better than `b` in this sense.
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            Sense::Minimise => a < b,
            Sense::Maximise => a > b,
        }
    }

    /// `+1` for maximisation, `-1` for minimisation: the sign of the step along `g`.
    fn direction(self) -> f64 {
        match self {
            Sense::Minimise => -1.0,
            Sense::Maximise => 1.0,
        }
    }
}

/// Options of [`minimize`] and [`maximize`].
#[derive(Debug, Clone, PartialEq)]
pub struct SubgradientOptions {
    /// Step-size rule (default `OverT { a0: 1.0 }`, the papers' `1/t`).
    pub step: StepRule,
    /// Use the normalised direction `g / ||g||` with the `OverT`, `OverSqrtT` and `Constant`
    /// rules (then `a_t` is the Euclidean length of the unprojected step). Default false.
    pub normalized: bool,
    /// Maximum number of steps (default 1000). The iterate after the last step is evaluated.
    pub max_iterations: usize,
    /// Stop when the best value has not improved by more than
    /// `stall_tol * max(1, |best f|)` during `patience` consecutive steps. `None` (default)
    /// disables the test.
    pub patience: Option<usize>,
    /// Relative improvement that counts for the stall test (default 1e-10).
    pub stall_tol: f64,
    /// Stop when the gradient mapping `||x_t - P(x_t -/+ a_t g_t)|| / a_t <= tol`, where `a_t`
    /// is the current multiplier of `g_t` (default 1e-10; 0 disables it unless `g = 0`).
    pub gradient_mapping_tol: f64,
    /// Record `f(x_t)` of every evaluated iterate in the report (default false).
    pub record_trace: bool,
}

impl Default for SubgradientOptions {
    fn default() -> Self {
        SubgradientOptions {
            step: StepRule::OverT { a0: 1.0 },
            normalized: false,
            max_iterations: 1000,
            patience: None,
            stall_tol: 1e-10,
            gradient_mapping_tol: 1e-10,
            record_trace: false,
        }
    }
}

impl SubgradientOptions {
    /// Checks the step rule and the tolerances.
    pub fn validate(&self) -> Result<(), Error> {
        self.step.validate()?;
        for (name, value) in [
            ("stall_tol", self.stall_tol),
            ("gradient_mapping_tol", self.gradient_mapping_tol),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(Error::InvalidOption {
                    name,
                    value,
                    requirement: "a tolerance must be finite and >= 0",
                });
            }
        }
        if self.patience == Some(0) {
            return Err(Error::InvalidOption {
                name: "patience",
                value: 0.0,
                requirement: "patience must be at least 1 step (or None to disable the stall test)",
            });
        }
        Ok(())
    }
}

/// Why the method stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The gradient mapping fell below `gradient_mapping_tol` (or the subgradient is zero):
    /// the current point is stationary for the projected problem.
    GradientMappingSmall,
    /// Polyak's rule: `f(x_t)` attained the given optimal value `f*`.
    OptimumReached,
    /// The best value did not improve during `patience` steps.
    Stalled,
    /// `max_iterations` steps were taken.
    MaxIterations,
    /// The caller ended the method after an evaluation ([`try_maximize_until`]).
    Ended,
}

/// Result of [`minimize`] or [`maximize`].
#[derive(Debug, Clone, PartialEq)]
pub struct SubgradientReport {
    /// The last evaluated iterate.
    pub x: Vec<f64>,
    /// `f(x)` at the last iterate.
    pub f: f64,
    /// The best iterate seen (subgradient methods are not monotone).
    pub best_x: Vec<f64>,
    /// `f(best_x)`.
    pub best_f: f64,
    /// Number of steps taken.
    pub iterations: usize,
    /// Number of calls of the objective (`iterations + 1`).
    pub evaluations: usize,
    /// Why the method stopped.
    pub status: Status,
    /// Gradient mapping norm of the last step (0 if no step was taken and `g = 0`, NaN if no
    /// step was computed).
    pub gradient_mapping_norm: f64,
    /// `f` at every evaluated iterate, if `record_trace` was set (else empty).
    pub trace: Vec<f64>,
}

/// Outcome of one projected step.
pub(crate) enum StepOutcome {
    /// `x_new` holds `P(x -/+ a g)`; the gradient mapping norm is given.
    Moved {
        /// `||x - x_new|| / a`.
        mapping: f64,
    },
    /// The subgradient is zero: `x` is stationary.
    ZeroSubgradient,
    /// Polyak's optimal value has been attained.
    OptimumReached,
}

/// Computes `x_new = P(x -/+ a_t g)` for step `t >= 1`; shared by the plain API and the
/// argmin solver.
#[allow(clippy::too_many_arguments)]
pub(crate) fn projected_step(
    x: &[f64],
    f: f64,
    g: &[f64],
    t: usize,
    sense: Sense,
    opts_step: &StepRule,
    normalized: bool,
    projection: &Projection,
    x_new: &mut [f64],
) -> Result<StepOutcome, Error> {
    let g_norm2: f64 = g.iter().map(|v| v * v).sum();
    if g_norm2 == 0.0 {
        return Ok(StepOutcome::ZeroSubgradient);
    }
    let Some(a) = opts_step.multiplier(t, f, g_norm2, sense, normalized) else {
        return Ok(StepOutcome::OptimumReached);
    };
    let s = sense.direction() * a;
    for ((xn, &xi), &gi) in x_new.iter_mut().zip(x).zip(g) {
        *xn = xi + s * gi;
    }
    projection.apply_checked(x_new, t)?;
    let d2: f64 = x
        .iter()
        .zip(x_new.iter())
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    Ok(StepOutcome::Moved {
        mapping: d2.sqrt() / a,
    })
}

/// Checks `f` and `g` for non-finite values.
pub(crate) fn check_eval(f: f64, g: &[f64], iteration: usize) -> Result<(), Error> {
    if !f.is_finite() {
        return Err(Error::NonFiniteValue {
            iteration,
            value: f,
        });
    }
    if let Some(index) = g.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFiniteSubgradient {
            iteration,
            index,
            value: g[index],
        });
    }
    Ok(())
}

/// Validates `x0`, the projection and the options, and returns the projected start.
pub(crate) fn prepare(
    x0: &[f64],
    projection: &Projection,
    opts_validate: impl FnOnce() -> Result<(), Error>,
) -> Result<Vec<f64>, Error> {
    if x0.is_empty() {
        return Err(Error::EmptyProblem);
    }
    if let Some(index) = x0.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFiniteStart {
            index,
            value: x0[index],
        });
    }
    projection.validate(x0.len())?;
    opts_validate()?;
    let mut x = x0.to_vec();
    projection.apply_checked(&mut x, 0)?;
    Ok(x)
}

/// Minimises a convex function by projected subgradient descent.
///
/// `f(x, g)` returns `f(x)` and writes a subgradient `g in ∂f(x)`. The start `x0` is first
/// projected onto the feasible set. See [`SubgradientOptions`] for the step rule and the
/// stopping tests.
///
/// ```
/// use unfold_subgradient::{minimize, Projection, StepRule, SubgradientOptions};
/// // min |x - 3| over 0 <= x <= 2: the solution is the clipped point 2, f* = 1.
/// let opts = SubgradientOptions { step: StepRule::Polyak { f_star: 1.0 }, ..Default::default() };
/// let r = minimize(
///     |x: &[f64], g: &mut [f64]| { g[0] = (x[0] - 3.0).signum(); (x[0] - 3.0).abs() },
///     &[0.0],
///     &Projection::Box(vec![(0.0, 2.0)]),
///     &opts,
/// )
/// .unwrap();
/// assert!((r.best_x[0] - 2.0).abs() < 1e-12);
/// ```
pub fn minimize<F>(
    f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
) -> Result<SubgradientReport, Error>
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    optimize(Sense::Minimise, f, x0, projection, opts)
}

/// Maximises a concave function by projected supergradient ascent (SPL's Algorithm 1 with
/// `StepRule::OverT { a0: 1.0 }` and `Projection::NonNegative`).
///
/// `f(x, g)` returns `f(x)` and writes a supergradient `g` (`f(y) <= f(x) + g^T (y - x)`).
pub fn maximize<F>(
    f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
) -> Result<SubgradientReport, Error>
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    optimize(Sense::Maximise, f, x0, projection, opts)
}

/// Projected (sub)gradient method in the given [`Sense`]; [`minimize`] and [`maximize`] call it.
/// It is [`try_optimize`] with an objective that cannot fail.
pub fn optimize<F>(
    sense: Sense,
    mut f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
) -> Result<SubgradientReport, Error>
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    let infallible = |x: &[f64], g: &mut [f64]| Ok::<f64, Infallible>(f(x, g));
    try_optimize(sense, infallible, x0, projection, opts).map_err(|e| match e {
        TryOptimizeError::Subgradient(e) => e,
        TryOptimizeError::Objective { error, .. } => match error {},
    })
}

/// [`maximize`] with a fallible objective ([`try_optimize`]).
///
/// # Errors
/// As [`maximize`], and the first error of the objective.
pub fn try_maximize<E, F>(
    f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
) -> Result<SubgradientReport, TryOptimizeError<E>>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>,
{
    try_optimize(Sense::Maximise, f, x0, projection, opts)
}

/// [`try_maximize`] that asks `ended()` after every evaluation (once the best point is
/// updated): `true` ends the method there with [`Status::Ended`] (a caller's early stop
/// that keeps the best point so far).
///
/// # Errors
/// As [`try_maximize`].
pub fn try_maximize_until<E, F>(
    f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
    ended: impl FnMut() -> bool,
) -> Result<SubgradientReport, TryOptimizeError<E>>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>,
{
    optimize_until(Sense::Maximise, f, x0, projection, opts, ended)
}

/// [`optimize`] with a fallible objective: `f(x, g)` returns `f(x)` (writing a subgradient
/// into `g`) or an error, which stops the method at once and is returned as
/// [`TryOptimizeError::Objective`] with the iteration at which it happened.
///
/// # Errors
/// As [`optimize`], and the first error of the objective.
pub fn try_optimize<E, F>(
    sense: Sense,
    f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
) -> Result<SubgradientReport, TryOptimizeError<E>>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>,
{
    optimize_until(sense, f, x0, projection, opts, || false)
}

/// [`try_optimize`] with the caller's `ended` asked after every evaluation.
fn optimize_until<E, F>(
    sense: Sense,
    mut f: F,
    x0: &[f64],
    projection: &Projection,
    opts: &SubgradientOptions,
    mut ended: impl FnMut() -> bool,
) -> Result<SubgradientReport, TryOptimizeError<E>>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, E>,
{
    let mut x = prepare(x0, projection, || opts.validate())?;
    let n = x.len();
    let mut g = vec![0.0; n];
    let mut x_new = vec![0.0; n];
    let mut best_x = x.clone();
    let mut best_f = f64::NAN;
    let mut reference = f64::NAN; // best value at the last significant improvement
    let mut last_improvement = 0;
    let mut trace = Vec::new();
    let mut evaluations = 0;
    let mut mapping = f64::NAN;
    let mut t = 0;
    let (fx, status) = loop {
        let fx = f(&x, &mut g).map_err(|error| TryOptimizeError::Objective {
            error,
            iteration: t,
        })?;
        evaluations += 1;
        check_eval(fx, &g, t)?;
        if opts.record_trace {
            trace.push(fx);
        }
        if best_f.is_nan() || sense.better(fx, best_f) {
            best_f = fx;
            best_x.copy_from_slice(&x);
        }
        let threshold = opts.stall_tol * reference.abs().max(1.0);
        if reference.is_nan() || sense.better(best_f, reference + sense.direction() * threshold) {
            reference = best_f;
            last_improvement = t;
        }
        if let Some(p) = opts.patience {
            if t - last_improvement >= p {
                break (fx, Status::Stalled);
            }
        }
        if ended() {
            break (fx, Status::Ended);
        }
        match projected_step(
            &x,
            fx,
            &g,
            t + 1,
            sense,
            &opts.step,
            opts.normalized,
            projection,
            &mut x_new,
        )? {
            StepOutcome::ZeroSubgradient => {
                mapping = 0.0;
                break (fx, Status::GradientMappingSmall);
            }
            StepOutcome::OptimumReached => break (fx, Status::OptimumReached),
            StepOutcome::Moved { mapping: m } => {
                if t == opts.max_iterations {
                    break (fx, Status::MaxIterations);
                }
                mapping = m;
                if m <= opts.gradient_mapping_tol {
                    break (fx, Status::GradientMappingSmall);
                }
            }
        }
        std::mem::swap(&mut x, &mut x_new);
        t += 1;
    };
    Ok(SubgradientReport {
        x,
        f: fx,
        best_x,
        best_f,
        iterations: t,
        evaluations,
        status,
        gradient_mapping_norm: mapping,
        trace,
    })
}
