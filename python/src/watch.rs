//! What a fit or a sweep says and hears while it runs without the interpreter's lock
//! ([`Watch`]): its warnings, raised as `UserWarning`s once it returns; its iterations,
//! for `verbose` and for the Python listener (the progress bar, `verbose=2`'s lines and
//! the user's callback); lines about finished stages (a sweep's candidates); Ctrl-C or
//! an exception of the listener, which stop it between iterations
//! ([`unfold_core::Observer::stopped`], [`compute_interruptible`]); and a listener that
//! returns False (the user's callback did), which ends the fit with its current iterate
//! ([`unfold_core::Observer::ended`]).

use crate::conversion::compute_interruptible;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use unfold_core::{Evidence, EvidenceKind};

/// One iteration as the fit reported it: restart, iteration, kind and value.
type Heard = (usize, usize, EvidenceKind, f64);

/// The observer of one fit or sweep (see the module's doc).
pub(crate) struct Watch {
    /// Keep every iteration for the listener (only when there is one).
    every: bool,
    /// The stack level its warnings are raised at: that of the user's line.
    level: i32,
    warnings: Mutex<Vec<String>>,
    /// The iterations not yet handed to the listener.
    heard: Mutex<Vec<Heard>>,
    latest: Mutex<Option<Heard>>,
    /// Lines about finished stages, not yet printed.
    lines: Mutex<Vec<String>>,
    interrupted: AtomicBool,
    /// The listener returned False: end the fit with its current iterate.
    ended: AtomicBool,
}

impl unfold_core::Observer for Watch {
    fn iteration(&self, restart: usize, iteration: usize, evidence: &Evidence) {
        let heard = (restart, iteration, evidence.kind, evidence.value);
        if self.every {
            if let Ok(mut all) = self.heard.lock() {
                all.push(heard);
            }
        }
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some(heard);
        }
    }

    fn warn(&self, message: &str) {
        if let Ok(mut kept) = self.warnings.lock() {
            kept.push(message.to_string());
        }
    }

    fn stopped(&self) -> bool {
        self.interrupted.load(Ordering::Relaxed)
    }

    fn ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }
}

/// Writes `line` to Python's `sys.stderr` (a notebook shows it under the cell).
pub(crate) fn write_stderr(py: Python<'_>, line: &str) -> PyResult<()> {
    let stderr = py.import("sys")?.getattr("stderr")?;
    stderr.call_method1("write", (line,))?;
    stderr.call_method0("flush")?;
    Ok(())
}

impl Watch {
    /// A watch; with `listener`, every iteration is kept for it. Its warnings are raised at
    /// stack `level` (1: the line that called into the native module, 2: its caller, ...).
    pub(crate) fn new(listener: bool, level: i32) -> Watch {
        Watch {
            every: listener,
            level,
            warnings: Default::default(),
            heard: Default::default(),
            latest: Default::default(),
            lines: Default::default(),
            interrupted: AtomicBool::new(false),
            ended: AtomicBool::new(false),
        }
    }

    /// A line to print (with `verbose`) about a finished stage.
    pub(crate) fn say(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(line);
        }
    }

    /// Runs `work` so that Ctrl-C stops it ([`compute_interruptible`]). Every tenth of a
    /// second it prints the stage lines when `verbose >= 1`, and a line about the latest
    /// iteration about once a second when `verbose == 1`; hands each iteration to
    /// `listener(restart, iteration, kind, value)`, whose exception stops the work and is
    /// raised, and whose False ends it with its current iterate (a method that cannot keep
    /// one, MVU, then raises `unfold.FitStopped`). Then raises the work's warnings.
    pub(crate) fn run<T: Send>(
        &self,
        py: Python<'_>,
        label: &str,
        verbose: u32,
        listener: Option<&Bound<'_, PyAny>>,
        work: impl FnOnce() -> unfold_core::Result<T> + Send,
    ) -> PyResult<T> {
        let start = Instant::now();
        let mut said = (None, start);
        let mut tick = |py: Python<'_>| -> PyResult<()> {
            self.hand_on(listener)?;
            if verbose == 0 {
                return Ok(());
            }
            let lines = std::mem::take(&mut *self.lines.lock().unwrap_or_else(|e| e.into_inner()));
            for line in lines {
                write_stderr(py, &format!("unfold {label}: {line}\n"))?;
            }
            if verbose > 1 || said.1.elapsed().as_secs_f64() < 1.0 {
                return Ok(());
            }
            let latest = self.latest.lock().ok().and_then(|l| *l);
            if let Some((restart, iteration, kind, value)) = latest {
                if Some((restart, iteration)) != said.0 {
                    let line = format!(
                        "unfold {label}: restart {restart}, iteration {iteration}: {kind} {value:.6} \
                         ({:.1} s)\n",
                        start.elapsed().as_secs_f64()
                    );
                    write_stderr(py, &line)?;
                    said = (Some((restart, iteration)), Instant::now());
                }
            }
            Ok(())
        };
        let result = compute_interruptible(py, &self.interrupted, &mut tick, work);
        let result = match result {
            Err(e)
                if self.ended.load(Ordering::Relaxed)
                    && !self.interrupted.load(Ordering::Relaxed)
                    && e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) =>
            {
                let stopped = py.import("unfold._progress")?.getattr("FitStopped")?;
                return Err(PyErr::from_value(stopped.call1((format!(
                    "unfold {label}: the callback returned False, and this method's iterates \
                     are not a fit before it converges; the fit was stopped and nothing was \
                     kept"
                ),))?));
            }
            other => other?,
        };
        // The last iterations and lines, heard after the last tick. The work is done, so a
        // listener's stop comes too late to stop it, and is not raised.
        let _ = tick(py);
        let kept = self.warnings.lock().map(|w| w.clone()).unwrap_or_default();
        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
        for message in kept {
            let text = std::ffi::CString::new(message.replace('\0', " "))
                .expect("no interior NUL after the replacement");
            PyErr::warn(py, &category, &text, self.level)?;
        }
        Ok(result)
    }

    /// Hands the iterations heard since the last call to `listener`, in order.
    fn hand_on(&self, listener: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let Some(listener) = listener else {
            return Ok(());
        };
        let heard = std::mem::take(&mut *self.heard.lock().unwrap_or_else(|e| e.into_inner()));
        for (restart, iteration, kind, value) in heard {
            let answer = listener.call1((restart, iteration, kind.as_str(), value))?;
            if answer.extract::<bool>().ok() == Some(false) {
                self.ended.store(true, Ordering::Relaxed);
            }
        }
        Ok(())
    }
}
