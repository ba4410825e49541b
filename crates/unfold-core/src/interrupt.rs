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
use std::panic::AssertUnwindSafe;
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
/// Called on a thread of a rayon pool (a sweep's candidates, a test's one-thread pool),
/// `work` runs on a pool of its own of the same size, for two reasons: the parallel
/// kernels in `work` must not queue on the caller's pool, whose threads may all be waiting
/// here (they would wait forever), and the caller's pool size must still bound them, which
/// a plain thread would not (its kernels would run on the global pool). A panic in `work`
/// is resumed on the calling thread.
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
    let (done, finished) = channel();
    // The receiver is gone once the caller has stopped waiting; the result is then
    // dropped where `work` ran.
    let job = move || {
        let _ = done.send(std::panic::catch_unwind(AssertUnwindSafe(work)));
    };
    let cannot_start = |e: &dyn std::fmt::Display| {
        Error::numerical("a long kernel", format!("cannot start a thread: {e}"))
    };
    if rayon::current_thread_index().is_some() {
        // Dropping the pool ends its threads once the job has run.
        rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .thread_name(|i| format!("unfold-kernel-{i}"))
            .build()
            .map_err(|e| cannot_start(&e))?
            .spawn(job);
    } else {
        std::thread::Builder::new()
            .name("unfold-kernel".into())
            .spawn(job)
            .map_err(|e| cannot_start(&e))?;
    }
    loop {
        match finished.recv_timeout(POLL) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(RecvTimeoutError::Timeout) => check()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::numerical(
                    "a long kernel",
                    "its thread ended without a result",
                ))
            }
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

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// `f` called on this thread, or on the thread of a one-thread pool (as a sweep's
    /// candidate is).
    fn called<T: Send>(on_pool: bool, f: impl FnOnce() -> T + Send) -> T {
        if on_pool {
            pool(1).install(f)
        } else {
            f()
        }
    }

    #[test]
    fn abandonable_returns_the_value_of_work_that_ends() {
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(abandonable(|| 6 * 7).unwrap(), 42);
        let sweep = pool(3);
        let (caller, (kernel, threads)) = sweep.install(|| {
            let caller = std::thread::current().id();
            let inside =
                abandonable(|| (std::thread::current().id(), rayon::current_num_threads()));
            (caller, inside.unwrap())
        });
        assert_ne!(
            kernel, caller,
            "on a pool the work leaves the calling thread"
        );
        assert_eq!(
            threads, 3,
            "on a pool the work's kernels keep the pool's size"
        );
    }

    /// Every thread of a sweep's pool waiting on a kernel whose own kernels are parallel:
    /// those run on the kernels' pools, not queued behind the waiting threads.
    #[test]
    fn abandonable_work_runs_its_parallel_kernels_while_the_whole_pool_waits() {
        use rayon::prelude::*;
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        let sweep = pool(2);
        let sums: Vec<u64> = sweep.install(|| {
            (0..4u64)
                .into_par_iter()
                .map(|i| {
                    abandonable(move || (0..10_000u64).into_par_iter().map(|j| i + j).sum())
                        .unwrap()
                })
                .collect()
        });
        let expected: Vec<u64> = (0..4u64)
            .map(|i| (0..10_000u64).map(|j| i + j).sum())
            .collect();
        assert_eq!(sums, expected);
    }

    /// The stop is heard while the work runs, off a pool and on one (a sweep's candidate).
    #[test]
    fn abandonable_stops_waiting_on_a_request() {
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        for on_pool in [false, true] {
            let start = Instant::now();
            let requester = std::thread::spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                request();
            });
            let result = called(on_pool, || {
                abandonable(|| std::thread::sleep(Duration::from_secs(5)))
            });
            let waited = start.elapsed();
            requester.join().unwrap();
            clear();
            assert!(matches!(result, Err(Error::Interrupted)), "{result:?}");
            assert!(
                waited < Duration::from_secs(5),
                "the caller waited for the abandoned work (on a pool: {on_pool}, {waited:?})"
            );
        }
    }

    #[test]
    fn abandonable_resumes_a_panic_of_work() {
        let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        for on_pool in [false, true] {
            let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
                called(on_pool, || abandonable(|| panic!("inside the kernel")))
            }));
            let message = caught.unwrap_err();
            assert_eq!(message.downcast_ref::<&str>(), Some(&"inside the kernel"));
        }
    }
}
