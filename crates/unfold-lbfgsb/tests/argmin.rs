//! The argmin adapter runs through `Executor` and agrees with `minimize`.

mod common;

use argmin::core::{CostFunction, Error, Executor, Gradient, TerminationReason};
use common::rosenbrock;
use unfold_lbfgsb::{minimize, LbfgsbOptions, LbfgsbSolver, Status};

struct Rosenbrock;

impl CostFunction for Rosenbrock {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        Ok(rosenbrock(x, &mut vec![0.0; x.len()]))
    }
}

impl Gradient for Rosenbrock {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let mut g = vec![0.0; x.len()];
        rosenbrock(x, &mut g);
        Ok(g)
    }
}

struct Failing;

impl CostFunction for Failing {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, _x: &Vec<f64>) -> Result<f64, Error> {
        Err(Error::msg("model blew up"))
    }
}

impl Gradient for Failing {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, Error> {
        Ok(vec![0.0; x.len()])
    }
}

#[test]
fn executor_runs_lbfgsb_with_bounds() {
    let bounds = vec![(-2.0, 0.5), (f64::NEG_INFINITY, f64::INFINITY)];
    let solver = LbfgsbSolver::new(bounds.clone(), LbfgsbOptions::default());
    let res = Executor::new(Rosenbrock, solver)
        .configure(|s| s.param(vec![-1.2, 1.0]).max_iters(1000))
        .run()
        .unwrap();
    let best = res.state.best_param.clone().unwrap();
    let direct = minimize(rosenbrock, &[-1.2, 1.0], &bounds, &LbfgsbOptions::default()).unwrap();
    // Same iterates as minimize: one executor iteration per L-BFGS-B iteration.
    assert_eq!(best, direct.x);
    assert_eq!(best[0], 0.5);
    assert!((best[1] - 0.25).abs() < 1e-5);
    assert!((res.state.best_cost - 0.25).abs() < 1e-9);
    assert_eq!(res.state.iter as usize, direct.iterations);
    assert_eq!(
        res.state.termination_status,
        argmin::core::TerminationStatus::Terminated(TerminationReason::SolverConverged)
    );
    let report = res.solver().report().unwrap();
    assert_eq!(report.status, direct.status);
    assert_eq!(report.evaluations, direct.evaluations);
    assert!(matches!(
        report.status,
        Status::ConvergedPgtol | Status::ConvergedFactr
    ));
}

#[test]
fn executor_max_iters_stops_early() {
    let solver = LbfgsbSolver::new(
        vec![(f64::NEG_INFINITY, f64::INFINITY); 2],
        LbfgsbOptions::default(),
    );
    let res = Executor::new(Rosenbrock, solver)
        .configure(|s| s.param(vec![-1.2, 1.0]).max_iters(5))
        .run()
        .unwrap();
    assert_eq!(res.state.iter, 5);
    let limited = LbfgsbOptions {
        max_iterations: 5,
        ..LbfgsbOptions::default()
    };
    let direct = minimize(
        rosenbrock,
        &[-1.2, 1.0],
        &[(f64::NEG_INFINITY, f64::INFINITY); 2],
        &limited,
    )
    .unwrap();
    assert_eq!(res.state.param.clone().unwrap(), direct.x);
}

#[test]
fn executor_reports_objective_errors() {
    let solver = LbfgsbSolver::new(vec![(-1.0, 1.0)], LbfgsbOptions::default());
    let err = Executor::new(Failing, solver)
        .configure(|s| s.param(vec![0.0]))
        .run()
        .err()
        .unwrap();
    assert!(err.to_string().contains("model blew up"), "{err}");
    let solver = LbfgsbSolver::new(vec![(-1.0, 1.0)], LbfgsbOptions::default());
    let err = Executor::new(Rosenbrock, solver).run().err().unwrap();
    assert!(err.to_string().contains("initial parameter"), "{err}");
}
