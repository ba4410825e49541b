//! The fallible entry point: an objective's error stops the run at once and comes back
//! with the iterations done; the report's trace holds the objective after each iteration.

mod common;

use common::rosenbrock;
use unfold_lbfgsb::{minimize, try_minimize, LbfgsbOptions, Status, TryMinimizeError};

const INF: f64 = f64::INFINITY;

#[test]
fn an_error_at_the_third_evaluation_stops_the_run() {
    let mut calls = 0;
    let e = try_minimize(
        |x, g| {
            calls += 1;
            if calls == 3 {
                return Err("singular at the third evaluation");
            }
            Ok(rosenbrock(x, g))
        },
        &[-1.2, 1.0],
        &[(-INF, INF); 2],
        &LbfgsbOptions::default(),
    )
    .unwrap_err();
    assert_eq!(calls, 3, "the run went on after the error");
    match e {
        TryMinimizeError::Objective {
            error,
            iterations,
            evaluation,
        } => {
            assert_eq!(error, "singular at the third evaluation");
            assert_eq!(evaluation, 3);
            assert!(
                iterations <= 2,
                "{iterations} iterations before evaluation 3"
            );
        }
        other => panic!("expected the objective's error, got {other:?}"),
    }
}

#[test]
fn invalid_input_is_reported_before_any_evaluation() {
    let e = try_minimize(
        |_, _| -> Result<f64, String> { panic!("must not be called") },
        &[],
        &[],
        &LbfgsbOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e, TryMinimizeError::Lbfgsb(unfold_lbfgsb::Error::Empty));
}

#[test]
fn fallible_and_infallible_runs_agree_to_the_bit() {
    let bounds = [(-2.0, 0.5), (-INF, INF), (0.0, 3.0)];
    let x0 = [-1.2, 1.0, 2.0];
    let opts = LbfgsbOptions::default();
    let a = minimize(rosenbrock, &x0, &bounds, &opts).unwrap();
    let b = try_minimize(|x, g| Ok::<_, ()>(rosenbrock(x, g)), &x0, &bounds, &opts).unwrap();
    assert_eq!(a, b);
}

#[test]
fn the_trace_has_one_value_per_iteration() {
    let r = minimize(
        rosenbrock,
        &[-1.2, 1.0],
        &[(-INF, INF); 2],
        &LbfgsbOptions::default(),
    )
    .unwrap();
    assert!(matches!(
        r.status,
        Status::ConvergedPgtol | Status::ConvergedFactr
    ));
    assert!(r.iterations > 0);
    assert_eq!(r.trace.len(), r.iterations);
    assert_eq!(*r.trace.last().unwrap(), r.f);
    assert!(
        r.trace.windows(2).all(|w| w[1] <= w[0]),
        "not monotone: {:?}",
        r.trace
    );
}
