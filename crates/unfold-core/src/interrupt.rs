//! The process's interruption flag: Ctrl-C reaches the long kernels through it.
//!
//! A signal is sent to a process, not to one fit, so the request is process-wide: the
//! Python package sets it from the interpreter's signal check while a fit runs without the
//! interpreter's lock ([`request`]), and clears it once the interrupted call has returned
//! ([`clear`]). Every long loop of the core (a Lanczos block product, a Dijkstra source, a
//! golden-section evaluation, a step of an EM iteration, a supernode of a selected
//! inversion, a batch of kNN queries) calls [`check`] between units of work that take well
//! under half a second, and so returns [`Error::Interrupted`] soon after the request.
//! [`crate::Observer::checkpoint`] reads it too, so every iteration boundary also stops.
//!
//! A stop asked by one fit's own observer (a Python `callback` returning `False`) is not
//! process-wide; it is heard at that fit's iteration boundaries only.
//!
//! The command line exits on SIGINT and SIGTERM itself and does not use this flag.

use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every running fit of the process to stop at its next check.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Withdraws the request, so that later fits run (called once the interrupted call has
/// returned).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop has been requested.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// [`Error::Interrupted`] if a stop has been requested: the check a long kernel makes
/// between units of work.
#[inline]
pub fn check() -> Result<()> {
    if requested() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
