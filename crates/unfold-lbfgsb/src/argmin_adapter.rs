//! [`argmin`] adapter: L-BFGS-B as an argmin [`Solver`], one L-BFGS-B iteration per
//! `next_iter` (a memory reset after a failed direction or line search also counts as one).
//!
//! `init` evaluates the objective at the (projected) initial parameter; each `next_iter`
//! writes the new iterate, its cost and gradient into the [`IterState`]; the solver
//! terminates with `SolverConverged` (pgtol or factr rule) or `SolverExit(status)`. The
//! executor's own `max_iters` bounds the number of iterations as well as
//! [`LbfgsbOptions::max_iterations`]. Errors returned by the objective are propagated.

use argmin::core::{
    ArgminError, CostFunction, Gradient, IterState, Problem, Solver, TerminationReason,
    TerminationStatus, KV,
};

use crate::driver::Run;
use crate::{LbfgsbOptions, LbfgsbReport, Status, TryMinimizeError};

/// The argmin state used by [`LbfgsbSolver`]: parameters and gradients are `Vec<f64>`.
pub type LbfgsbState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// L-BFGS-B as an argmin solver, with box `bounds` and [`LbfgsbOptions`].
#[derive(Debug, Clone)]
pub struct LbfgsbSolver {
    bounds: Vec<(f64, f64)>,
    opts: LbfgsbOptions,
    run: Option<Run>,
    status: Option<Status>,
}

impl LbfgsbSolver {
    /// A solver over the box `bounds` (one `(lower, upper)` pair per variable).
    pub fn new(bounds: Vec<(f64, f64)>, opts: LbfgsbOptions) -> Self {
        Self {
            bounds,
            opts,
            run: None,
            status: None,
        }
    }

    /// The report of the run so far (`None` before `init`); its status is the final one if
    /// the solver terminated, else `MaxIterations` (the executor stopped it).
    pub fn report(&self) -> Option<LbfgsbReport> {
        let status = self.status.unwrap_or(Status::MaxIterations);
        self.run.as_ref().map(|r| r.report(status))
    }
}

/// Runs `body` with the objective `x -> (cost, gradient)` of `problem`; an argmin error
/// from the objective stops the L-BFGS-B run and is returned as it is.
fn with_objective<O, T>(
    problem: &mut Problem<O>,
    body: impl FnOnce(
        &mut dyn FnMut(&[f64], &mut [f64]) -> Result<f64, argmin::core::Error>,
    ) -> Result<T, TryMinimizeError<argmin::core::Error>>,
) -> Result<T, argmin::core::Error>
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    let mut objective = |x: &[f64], g: &mut [f64]| -> Result<f64, argmin::core::Error> {
        let p = x.to_vec();
        let value = problem.cost(&p)?;
        let grad = problem.gradient(&p)?;
        if grad.len() != g.len() {
            return Err(ArgminError::InvalidParameter {
                text: format!(
                    "gradient has length {} but the parameter has {}",
                    grad.len(),
                    g.len()
                ),
            }
            .into());
        }
        g.copy_from_slice(&grad);
        Ok(value)
    };
    body(&mut objective).map_err(|e| match e {
        TryMinimizeError::Lbfgsb(e) => e.into(),
        TryMinimizeError::Objective { error, .. } => error,
    })
}

/// Writes the run's current iterate into the argmin state.
fn update(state: LbfgsbState, run: &Run) -> LbfgsbState {
    let (x, f, g) = run.current();
    state.param(x.to_vec()).gradient(g.to_vec()).cost(f)
}

impl<O> Solver<O, LbfgsbState> for LbfgsbSolver
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    fn name(&self) -> &str {
        "L-BFGS-B"
    }

    fn init(
        &mut self,
        problem: &mut Problem<O>,
        mut state: LbfgsbState,
    ) -> Result<(LbfgsbState, Option<KV>), argmin::core::Error> {
        let x0 = state.take_param().ok_or_else(|| -> argmin::core::Error {
            ArgminError::NotInitialized {
                text: "L-BFGS-B needs an initial parameter vector: call configure(|s| s.param(x0))"
                    .into(),
            }
            .into()
        })?;
        let (bounds, opts) = (&self.bounds, &self.opts);
        let run = with_objective(problem, |mut f| Run::start(&mut f, &x0, bounds, opts))?;
        let state = update(state, &run);
        self.run = Some(run);
        self.status = None;
        Ok((state, None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: LbfgsbState,
    ) -> Result<(LbfgsbState, Option<KV>), argmin::core::Error> {
        let run = self.run.as_mut().ok_or_else(|| -> argmin::core::Error {
            ArgminError::NotInitialized {
                text: "L-BFGS-B solver used before init".into(),
            }
            .into()
        })?;
        self.status = with_objective(problem, |mut f| run.step(&mut f))?;
        Ok((update(state, run), None))
    }

    fn terminate(&mut self, _state: &LbfgsbState) -> TerminationStatus {
        match self.status {
            None => TerminationStatus::NotTerminated,
            Some(Status::ConvergedPgtol | Status::ConvergedFactr) => {
                TerminationStatus::Terminated(TerminationReason::SolverConverged)
            }
            Some(status) => {
                TerminationStatus::Terminated(TerminationReason::SolverExit(format!("{status:?}")))
            }
        }
    }
}
