//! Every invalid input and a non-finite objective give a precise error, never a panic.

mod common;

use common::rosenbrock;
use unfold_lbfgsb::{minimize, Error, LbfgsbOptions, Status};

const INF: f64 = f64::INFINITY;

fn run(x0: &[f64], bounds: &[(f64, f64)], opts: &LbfgsbOptions) -> Result<Status, Error> {
    minimize(rosenbrock, x0, bounds, opts).map(|r| r.status)
}

#[test]
fn invalid_inputs_are_named() {
    let d = LbfgsbOptions::default();
    assert_eq!(run(&[], &[], &d), Err(Error::Empty));
    assert_eq!(
        run(&[0.0, 0.0], &[(-1.0, 1.0)], &d),
        Err(Error::LengthMismatch { x0: 2, bounds: 1 })
    );
    assert_eq!(
        run(&[0.0, 0.0], &[(-1.0, 1.0), (f64::NAN, 1.0)], &d),
        Err(Error::NanBound { index: 1 })
    );
    let e = run(&[0.0, 0.0], &[(2.0, 1.0), (0.0, 1.0)], &d).unwrap_err();
    assert_eq!(
        e,
        Error::LowerAboveUpper {
            index: 0,
            lower: 2.0,
            upper: 1.0
        }
    );
    assert!(e.to_string().contains("variable 0"));
    assert!(matches!(
        run(&[0.0, 0.0], &[(-1.0, 1.0), (INF, INF)], &d),
        Err(Error::UnreachableBound { index: 1, .. })
    ));
    assert!(matches!(
        run(&[0.0, f64::NAN], &[(-1.0, 1.0); 2], &d),
        Err(Error::NonFiniteStart { index: 1, .. })
    ));
    for (opts, name) in [
        (LbfgsbOptions { m: 0, ..d.clone() }, "m"),
        (
            LbfgsbOptions {
                pgtol: -1.0,
                ..d.clone()
            },
            "pgtol",
        ),
        (
            LbfgsbOptions {
                factr: f64::NAN,
                ..d.clone()
            },
            "factr",
        ),
        (
            LbfgsbOptions {
                max_evaluations: 0,
                ..d.clone()
            },
            "max_evaluations",
        ),
    ] {
        match run(&[0.0, 0.0], &[(-1.0, 1.0); 2], &opts) {
            Err(Error::InvalidOption { name: got, .. }) => assert_eq!(got, name),
            other => panic!("expected InvalidOption({name}), got {other:?}"),
        }
    }
}

#[test]
fn non_finite_objective_at_start() {
    let e = minimize(
        |_x, g| {
            g[0] = 1.0;
            f64::NAN
        },
        &[0.0],
        &[(-1.0, 1.0)],
        &LbfgsbOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::NonFiniteAtStart { .. }), "{e}");
    let e = minimize(
        |_x, g| {
            g[0] = f64::INFINITY;
            0.0
        },
        &[0.0],
        &[(-1.0, 1.0)],
        &LbfgsbOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("gradient[0]"), "{e}");
}

#[test]
fn non_finite_objective_during_run() {
    // f = -x is unbounded below; it turns NaN beyond x = 5.
    let e = minimize(
        |x, g| {
            g[0] = -1.0;
            if x[0] > 5.0 {
                f64::NAN
            } else {
                -x[0]
            }
        },
        &[0.0],
        &[(-INF, INF)],
        &LbfgsbOptions::default(),
    )
    .unwrap_err();
    match e {
        Error::NonFiniteDuringRun { evaluation, .. } => assert!(evaluation > 1),
        other => panic!("expected NonFiniteDuringRun, got {other:?}"),
    }
}

#[test]
fn unbounded_problem_terminates() {
    // f = -x on [0, inf) with f bounded only by the evaluation budget: never loops forever.
    let r = minimize(
        |x, g| {
            g[0] = -1.0;
            -x[0]
        },
        &[0.0],
        &[(0.0, INF)],
        &LbfgsbOptions {
            max_evaluations: 200,
            ..LbfgsbOptions::default()
        },
    )
    .unwrap();
    assert!(r.evaluations <= 200);
    assert!(r.x[0] > 1e3);
}
