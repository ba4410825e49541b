//! The driver on small models whose EM path is known exactly.

use std::sync::Mutex;
use unfold_core::{Evidence, EvidenceKind, Result, Rng};
use unfold_core::{Observer, Silent, Stop};
use unfold_vem::LatentVariableModel;
use unfold_vem::{fit, run_from, VemOptions};

/// Coordinate ascent on the concave bound -(a - b)^2 - (a - 1)^2 - 0.1 (b - 2)^2 with the
/// "posterior" a and the "hyperparameter" b. Each step maximises over one variable exactly;
/// the joint maximum is at a = 13/12, b = 2a - 1.
struct Quadratic;

impl LatentVariableModel for Quadratic {
    type Posterior = f64;
    type Hyper = f64;
    fn init(&self, rng: &mut Rng) -> Result<(f64, f64)> {
        use rand::Rng as _;
        Ok((rng.random_range(-5.0..5.0), rng.random_range(-5.0..5.0)))
    }
    fn e_step(&self, a: &mut f64, b: &f64) -> Result<()> {
        *a = 0.5 * (b + 1.0);
        Ok(())
    }
    fn m_step(&self, a: &f64, b: &mut f64) -> Result<()> {
        *b = (a + 0.2) / 1.1;
        Ok(())
    }
    fn elbo(&self, a: &f64, b: &f64) -> Result<Evidence> {
        let t1 = -(a - b).powi(2);
        let t2 = -(a - 1.0).powi(2) - 0.1 * (b - 2.0).powi(2);
        Ok(Evidence {
            value: t1 + t2,
            kind: EvidenceKind::Elbo,
            terms: vec![("coupling".into(), t1), ("priors".into(), t2)],
        })
    }
}

/// A model whose "E-step" makes the bound worse: the driver must refuse it.
struct Broken;

impl LatentVariableModel for Broken {
    type Posterior = f64;
    type Hyper = ();
    fn init(&self, _: &mut Rng) -> Result<(f64, ())> {
        Ok((0.0, ()))
    }
    fn e_step(&self, a: &mut f64, _: &()) -> Result<()> {
        *a += 1.0;
        Ok(())
    }
    fn m_step(&self, _: &f64, _: &mut ()) -> Result<()> {
        Ok(())
    }
    fn elbo(&self, a: &f64, _: &()) -> Result<Evidence> {
        Ok(Evidence::new(EvidenceKind::Elbo, -a * a))
    }
}

#[test]
fn converges_to_the_joint_maximum_with_a_monotone_trace() {
    // Stationarity: 2a = b + 1 and 1.1 b = a + 0.2, so b = 2a - 1 and a = 1.3 / 1.2.
    let a_star = 1.3 / 1.2;
    let options = VemOptions {
        max_iter: 500,
        abs_tol: 0.0,
        rel_tol: 1e-15,
        ..VemOptions::default()
    };
    let run = run_from(&Quadratic, 4.0, -3.0, &options, 0, &Silent).unwrap();
    assert!((run.posterior - a_star).abs() < 1e-6, "{}", run.posterior);
    assert!((run.hyper - (2.0 * a_star - 1.0)).abs() < 1e-6);
    let b = run.bounds();
    assert!(b.windows(2).all(|w| w[1] >= w[0]));
    assert_eq!(run.stop, Stop::RelTol);
    assert_eq!(run.evidence.terms.len(), 2);
}

#[test]
fn a_decreasing_bound_is_an_error() {
    let err = run_from(&Broken, 0.0, (), &VemOptions::default(), 0, &Silent).unwrap_err();
    assert!(err.to_string().contains("decreased"), "{err}");
}

#[test]
fn restarts_are_seeded_and_the_best_is_kept() {
    let options = VemOptions {
        max_iter: 3,
        abs_tol: 0.0,
        rel_tol: 0.0,
        restarts: 5,
        seed: 11,
        ..VemOptions::default()
    };
    let f1 = fit(&Quadratic, &options, &Silent).unwrap();
    let f2 = fit(&Quadratic, &options, &Silent).unwrap();
    assert_eq!(f1.runs.len(), 5);
    for (r1, r2) in f1.runs.iter().zip(&f2.runs) {
        assert_eq!(r1.bounds(), r2.bounds());
        assert_eq!(r1.stop, Stop::MaxIter);
    }
    let best = f1.best().evidence.value;
    assert!(f1.runs.iter().all(|r| r.evidence.value <= best));
    assert_eq!(f1.runs[2].seed, Some(13));
    let mean = f1.mean_bound();
    assert!(mean <= best);
}

#[test]
fn observer_sees_every_iteration() {
    struct Count(Mutex<Vec<(usize, usize)>>);
    impl Observer for Count {
        fn iteration(&self, restart: usize, iteration: usize, _: &Evidence) {
            self.0.lock().unwrap().push((restart, iteration));
        }
    }
    let count = Count(Mutex::new(Vec::new()));
    let options = VemOptions {
        max_iter: 4,
        abs_tol: 0.0,
        rel_tol: 0.0,
        restarts: 2,
        ..VemOptions::default()
    };
    fit(&Quadratic, &options, &count).unwrap();
    let mut seen = count.0.into_inner().unwrap();
    seen.sort();
    assert_eq!(seen.len(), 8);
    assert_eq!(seen[0], (0, 1));
    assert_eq!(seen[7], (1, 4));
}

/// An observer that asks to stop after the third iteration it sees: the fit stops there
/// (at most one more iteration per other running restart) with `Error::Interrupted`.
#[test]
fn a_stopped_observer_interrupts_the_fit() {
    struct StopAfter(Mutex<usize>);
    impl Observer for StopAfter {
        fn iteration(&self, _: usize, _: usize, _: &Evidence) {
            *self.0.lock().unwrap() += 1;
        }
        fn stopped(&self) -> bool {
            *self.0.lock().unwrap() >= 3
        }
    }
    let stop = StopAfter(Mutex::new(0));
    let options = VemOptions {
        max_iter: 50,
        abs_tol: 0.0,
        rel_tol: 0.0,
        restarts: 2,
        ..VemOptions::default()
    };
    assert!(matches!(
        fit(&Quadratic, &options, &stop),
        Err(unfold_core::Error::Interrupted)
    ));
    assert!(stop.0.into_inner().unwrap() <= 4);
}

#[test]
fn bad_options_are_errors() {
    let bad = VemOptions {
        restarts: 0,
        ..VemOptions::default()
    };
    assert!(fit(&Quadratic, &bad, &Silent).is_err());
    let bad = VemOptions {
        abs_tol: f64::NAN,
        ..VemOptions::default()
    };
    assert!(run_from(&Quadratic, 0.0, 0.0, &bad, 0, &Silent).is_err());
}

/// A model whose bound is not finite: the driver names the cause and the terms.
struct NotFinite;

impl LatentVariableModel for NotFinite {
    type Posterior = ();
    type Hyper = ();
    fn init(&self, _: &mut Rng) -> Result<((), ())> {
        Ok(((), ()))
    }
    fn e_step(&self, _: &mut (), _: &()) -> Result<()> {
        Ok(())
    }
    fn m_step(&self, _: &(), _: &mut ()) -> Result<()> {
        Ok(())
    }
    fn elbo(&self, _: &(), _: &()) -> Result<Evidence> {
        Ok(Evidence {
            value: f64::NAN,
            kind: EvidenceKind::Elbo,
            terms: vec![("log_det".into(), f64::NEG_INFINITY)],
        })
    }
}

#[test]
fn a_non_finite_bound_is_an_error_naming_its_terms() {
    let err = fit(&NotFinite, &VemOptions::default(), &Silent)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not finite") && err.contains("log_det = -inf"),
        "{err}"
    );
}
