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
//! A single call into a library kernel that cannot check the flag itself (faer's sparse
//! numeric factorisation, a dense eigendecomposition) runs through [`abandonable`], which
//! stops waiting for it on a request.
//!
//! A stop asked by one fit's own observer (a Python `callback` returning `False`) is not
//! process-wide; it is heard at that fit's iteration boundaries only.
//!
//! The command line exits on SIGINT and SIGTERM itself and does not use this flag.

use crate::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

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

/// How often [`abandonable`] looks at the flag while it waits.
const POLL: Duration = Duration::from_millis(20);

/// Runs `work`, one call that cannot check the flag itself, on a thread of its own and
/// waits for it while checking the flag every 20 ms. On a request it returns
/// [`Error::Interrupted`] at once and leaves `work` to run to its end unobserved, its result
/// dropped: the stop is heard within the poll interval, at the cost of the abandoned call's
/// remaining CPU time (and its memory until then) in the background.
///
/// On a thread of a rayon pool (a sweep's candidates, a test's one-thread pool) `work`
/// runs on the calling thread instead, for two reasons: the waiting thread would hold one
/// of the pool's threads idle while the parallel kernels in `work` wait for the pool (with
/// every thread of the pool so waiting, they would wait forever), and a custom pool's
/// size must bound those kernels, which a thread outside it would run on the global
/// pool. A panic in `work` is resumed on the calling thread.
///
/// # Errors
/// [`Error::Interrupted`] if a stop is requested before `work` ends, and
/// [`Error::Numerical`] if the system cannot start a thread.
pub fn abandonable<T, F>(work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    check()?;
    if rayon::current_thread_index().is_some() {
        return Ok(work());
    }
    let (done, finished) = channel();
    let worker = std::thread::Builder::new()
        .name("unfold-kernel".into())
        .spawn(move || {
            // The receiver is gone once the caller has stopped waiting; the result is
            // then dropped here.
            let _ = done.send(work());
        })
        .map_err(|e| Error::numerical("a long kernel", format!("cannot start a thread: {e}")))?;
    loop {
        match finished.recv_timeout(POLL) {
            Ok(value) => return Ok(value),
            Err(RecvTimeoutError::Timeout) => check()?,
            Err(RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the kernel's thread ended without sending its result"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    /// The flag is process-wide: the tests that set it run one at a time.
    static FLAG: Mutex<()> = Mutex::new(());

    #[test]
    fn abandonable_returns_the_value_of_work_that_ends() {
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(abandonable(|| 6 * 7).unwrap(), 42);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let on_pool = pool.install(|| abandonable(rayon::current_thread_index).unwrap());
        assert_eq!(
            on_pool,
            Some(0),
            "on a pool the work runs on the calling thread"
        );
    }

    #[test]
    fn abandonable_stops_waiting_on_a_request() {
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        let start = Instant::now();
        let requester = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            request();
        });
        let result = abandonable(|| std::thread::sleep(Duration::from_secs(5)));
        let waited = start.elapsed();
        requester.join().unwrap();
        clear();
        assert!(matches!(result, Err(Error::Interrupted)), "{result:?}");
        assert!(
            waited < Duration::from_secs(5),
            "the caller waited for the abandoned work ({waited:?})"
        );
    }

    #[test]
    fn abandonable_resumes_a_panic_of_work() {
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        let caught = std::panic::catch_unwind(|| abandonable(|| panic!("inside the kernel")));
        let message = caught.unwrap_err();
        assert_eq!(message.downcast_ref::<&str>(), Some(&"inside the kernel"));
    }
}
