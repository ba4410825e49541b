//! Progress of an iterative fit: the [`Observer`] a fit reports each iteration to, and why
//! an EM run stopped ([`Stop`]). Every iterative fit of unfold (EM, the field searches,
//! DDRTree's alternations) reports through this one trait, so the command line's progress
//! bars and the Python package's progress follow any model. A fit that changes what it was
//! given to go on (a kNN graph joined across its components) says so through
//! [`Observer::warn`]: the command line prints it and writes it to the report, Python
//! raises it as a `UserWarning`.

use crate::Evidence;

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stop {
    /// The bound changed by less than `abs_tol`.
    AbsTol,
    /// The bound changed by less than `rel_tol * |bound|`.
    RelTol,
    /// `max_iter` iterations were run without meeting a tolerance.
    MaxIter,
    /// The caller asked the fit to end and keep its current iterate ([`Observer::ended`]).
    Caller,
}

/// Receives progress from an iterative fit. Runs of different restarts call it concurrently.
pub trait Observer: Sync {
    /// Called after iteration `iteration` (1-based) of restart `restart` with its bound.
    fn iteration(&self, _restart: usize, _iteration: usize, _evidence: &Evidence) {}
    /// Called once when restart `restart` stops.
    fn finished(&self, _restart: usize, _stop: Stop, _evidence: &Evidence) {}
    /// Called when the fit goes on with something the user should know it changed. By
    /// default the message goes to standard error.
    fn warn(&self, message: &str) {
        eprintln!("unfold: warning: {message}");
    }
    /// Asked after every iteration (and every evaluation of a search): `true` stops the
    /// fit with [`crate::Error::Interrupted`]. Python answers it from Ctrl-C.
    fn stopped(&self) -> bool {
        false
    }
    /// Asked after every iteration, once [`Observer::step`] has returned: `true` ends the
    /// fit there with its current iterate, as a met tolerance would but reported as
    /// stopped by the caller (a Python `callback` returning False). Unlike
    /// [`Observer::stopped`] the fit returns a model. A method whose iterates are not a
    /// solution before they converge (MVU's interior-point method) stops with
    /// [`crate::Error::Interrupted`] instead.
    fn ended(&self) -> bool {
        false
    }
    /// [`Observer::iteration`], then [`crate::Error::Interrupted`] if the observer asks to
    /// stop: the one call a fit's loop makes after each iteration.
    fn step(&self, restart: usize, iteration: usize, evidence: &Evidence) -> crate::Result<()> {
        self.iteration(restart, iteration, evidence);
        self.checkpoint()
    }
    /// [`crate::Error::Interrupted`] if the observer asks to stop or the process's
    /// interruption flag is set ([`crate::interrupt`]): a check between the steps of a
    /// long iteration.
    fn checkpoint(&self) -> crate::Result<()> {
        if self.stopped() || crate::interrupt::requested() {
            Err(crate::Error::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// An observer that ignores progress (its warnings still go to standard error).
pub struct Silent;

impl Observer for Silent {}
