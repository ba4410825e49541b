//! [`argmin`] adapter: run [`crate::minimize`] as an argmin [`Solver`].
//!
//! The whole L-BFGS-B run happens in one `next_iter` call (the solver keeps its own
//! iteration state); the executor then sees a terminated solver. The full report is
//! available from [`LbfgsbSolver::report`] after the run.

use argmin::core::{
    ArgminError, CostFunction, Gradient, IterState, Problem, Solver, TerminationReason,
    TerminationStatus, KV,
};

use crate::{minimize, LbfgsbOptions, LbfgsbReport, Status};

/// The argmin state used by [`LbfgsbSolver`]: parameters and gradients are `Vec<f64>`.
pub type LbfgsbState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// L-BFGS-B as an argmin solver, with box `bounds` and [`LbfgsbOptions`].
#[derive(Debug, Clone)]
pub struct LbfgsbSolver {
    bounds: Vec<(f64, f64)>,
    opts: LbfgsbOptions,
    report: Option<LbfgsbReport>,
}

impl LbfgsbSolver {
    /// A solver over the box `bounds` (one `(lower, upper)` pair per variable).
    pub fn new(bounds: Vec<(f64, f64)>, opts: LbfgsbOptions) -> Self {
        Self {
            bounds,
            opts,
            report: None,
        }
    }

    /// The report of the last run, if any.
    pub fn report(&self) -> Option<&LbfgsbReport> {
        self.report.as_ref()
    }
}

impl<O> Solver<O, LbfgsbState> for LbfgsbSolver
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    fn name(&self) -> &str {
        "L-BFGS-B"
    }

    fn next_iter(
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
        let mut failure: Option<argmin::core::Error> = None;
        let result = minimize(
            |x, g| {
                let p = x.to_vec();
                let value = problem.cost(&p).and_then(|v| {
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
                    Ok(v)
                });
                value.unwrap_or_else(|e| {
                    failure.get_or_insert(e);
                    f64::NAN
                })
            },
            &x0,
            &self.bounds,
            &self.opts,
        );
        if let Some(e) = failure {
            return Err(e);
        }
        let report = result?;
        let state = state
            .param(report.x.clone())
            .gradient(report.g.clone())
            .cost(report.f);
        self.report = Some(report);
        Ok((state, None))
    }

    fn terminate(&mut self, _state: &LbfgsbState) -> TerminationStatus {
        match self.report.as_ref().map(|r| r.status) {
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
