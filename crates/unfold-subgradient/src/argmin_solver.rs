//! The projected subgradient method as an argmin [`Solver`], so that argmin's `Executor`,
//! observers and termination criteria work with it.

use crate::method::{check_eval, prepare, projected_step, StepOutcome};
use crate::{Projection, Sense, StepRule};
use argmin::core::{
    CostFunction, Error as ArgminError, Gradient, IterState, Problem, Solver, State,
    TerminationReason, TerminationStatus, KV,
};

/// argmin state used by [`ProjectedSubgradient`]: parameters and subgradients are `Vec<f64>`.
pub type SubgradientState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

/// Projected (sub)gradient method for argmin's `Executor`.
///
/// The problem's `cost` is `f` and its `gradient` a subgradient (supergradient when
/// maximising). argmin keeps the best iterate by the **lowest** state cost, so in
/// [`Sense::Maximise`] the state cost is `-f(x)` (and `best_cost` is `-max f`). Set the
/// iteration limit with `Executor::configure(|s| s.param(x0).max_iters(n))`.
pub struct ProjectedSubgradient {
    sense: Sense,
    step: StepRule,
    normalized: bool,
    projection: Projection,
    gradient_mapping_tol: f64,
    optimum_reached: bool,
    mapping: f64,
}

impl ProjectedSubgradient {
    /// A solver with the given sense, step rule and projection (gradient-mapping tolerance
    /// 1e-10, unnormalised direction). Fails on invalid step parameters.
    pub fn new(sense: Sense, step: StepRule, projection: Projection) -> Result<Self, crate::Error> {
        step.validate()?;
        Ok(ProjectedSubgradient {
            sense,
            step,
            normalized: false,
            projection,
            gradient_mapping_tol: 1e-10,
            optimum_reached: false,
            mapping: f64::INFINITY,
        })
    }

    /// Uses the normalised direction `g / ||g||` (see [`crate::SubgradientOptions::normalized`]).
    pub fn normalized(mut self, normalized: bool) -> Self {
        self.normalized = normalized;
        self
    }

    /// Sets the gradient-mapping tolerance (must be finite and >= 0).
    pub fn gradient_mapping_tol(mut self, tol: f64) -> Result<Self, crate::Error> {
        if !(tol.is_finite() && tol >= 0.0) {
            return Err(crate::Error::InvalidOption {
                name: "gradient_mapping_tol",
                value: tol,
                requirement: "a tolerance must be finite and >= 0",
            });
        }
        self.gradient_mapping_tol = tol;
        Ok(self)
    }

    /// The state cost for an objective value.
    fn cost_of(&self, f: f64) -> f64 {
        match self.sense {
            Sense::Minimise => f,
            Sense::Maximise => -f,
        }
    }

    /// The objective value for a state cost.
    fn f_of(&self, cost: f64) -> f64 {
        self.cost_of(cost)
    }
}

/// Evaluates cost and gradient through argmin's problem wrapper (so evaluations are counted).
fn evaluate<O>(
    problem: &mut Problem<O>,
    x: &Vec<f64>,
    t: usize,
) -> Result<(f64, Vec<f64>), ArgminError>
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    let f = problem.cost(x)?;
    let g = problem.gradient(x)?;
    if g.len() != x.len() {
        return Err(crate::Error::DimensionMismatch {
            expected: x.len(),
            got: g.len(),
        }
        .into());
    }
    check_eval(f, &g, t)?;
    Ok((f, g))
}

impl<O> Solver<O, SubgradientState> for ProjectedSubgradient
where
    O: CostFunction<Param = Vec<f64>, Output = f64>
        + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>,
{
    fn name(&self) -> &str {
        "Projected subgradient"
    }

    fn init(
        &mut self,
        problem: &mut Problem<O>,
        mut state: SubgradientState,
    ) -> Result<(SubgradientState, Option<KV>), ArgminError> {
        let x0 = state.take_param().ok_or_else(|| {
            ArgminError::msg(
                "ProjectedSubgradient needs a starting point: configure(|s| s.param(x0))",
            )
        })?;
        let x = prepare(&x0, &self.projection, || Ok(()))?;
        let (f, g) = evaluate(problem, &x, 0)?;
        self.optimum_reached = false;
        Ok((state.param(x).cost(self.cost_of(f)).gradient(g), None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        mut state: SubgradientState,
    ) -> Result<(SubgradientState, Option<KV>), ArgminError> {
        let t = state.get_iter() as usize + 1;
        let x = state
            .take_param()
            .ok_or_else(|| ArgminError::msg("ProjectedSubgradient: no current parameter"))?;
        let g = state
            .take_gradient()
            .ok_or_else(|| ArgminError::msg("ProjectedSubgradient: no current subgradient"))?;
        let f = self.f_of(state.get_cost());
        let mut x_new = vec![0.0; x.len()];
        match projected_step(
            &x,
            f,
            &g,
            t,
            self.sense,
            &self.step,
            self.normalized,
            &self.projection,
            &mut x_new,
        )? {
            StepOutcome::ZeroSubgradient => {
                self.mapping = 0.0;
                return Ok((state.param(x).gradient(g), None));
            }
            StepOutcome::OptimumReached => {
                self.optimum_reached = true;
                return Ok((state.param(x).gradient(g), None));
            }
            StepOutcome::Moved { mapping } => self.mapping = mapping,
        }
        let (f_new, g_new) = evaluate(problem, &x_new, t)?;
        Ok((
            state.param(x_new).cost(self.cost_of(f_new)).gradient(g_new),
            None,
        ))
    }

    fn terminate(&mut self, _state: &SubgradientState) -> TerminationStatus {
        if self.optimum_reached {
            return TerminationStatus::Terminated(TerminationReason::SolverExit(
                "Polyak optimal value reached".to_string(),
            ));
        }
        if self.mapping <= self.gradient_mapping_tol {
            return TerminationStatus::Terminated(TerminationReason::SolverConverged);
        }
        TerminationStatus::NotTerminated
    }
}
