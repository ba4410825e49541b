//! SIGINT and SIGTERM for the commands that compute: the process stops at once with exit
//! status 128 + the signal (130, 143) and one line on standard error, but never while an
//! output is being written (writes hold [`Interrupt::writing`]). Every output is written
//! through a temporary file and a rename, so a stopped command leaves each file either
//! as it was or whole. Once the command's outputs are written (the [`Interrupt`] dropped),
//! a signal takes its default action again.

use indicatif::ProgressBar;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use unfold_core::{Error, Result};

/// The installed handler of one command.
pub(crate) struct Interrupt {
    /// Set when the command is over: the watcher returns.
    over: Arc<AtomicBool>,
    writes: Arc<Mutex<()>>,
}

impl Interrupt {
    /// Installs the handler; on a signal the watcher clears `bar`, prints
    /// `message(signal name)` and exits.
    pub(crate) fn install(
        bar: ProgressBar,
        message: impl Fn(&str) -> String + Send + 'static,
    ) -> Result<Interrupt> {
        let signal = Arc::new(AtomicUsize::new(0));
        let stop = Interrupt {
            over: Arc::new(AtomicBool::new(false)),
            writes: Arc::new(Mutex::new(())),
        };
        for sig in [SIGINT, SIGTERM] {
            signal_hook::flag::register_conditional_default(sig, stop.over.clone())
                .and_then(|_| signal_hook::flag::register_usize(sig, signal.clone(), sig as usize))
                .map_err(|e| {
                    Error::invalid("signals", format!("cannot handle signal {sig}: {e}"))
                })?;
        }
        let (over, writes) = (stop.over.clone(), stop.writes.clone());
        std::thread::spawn(move || loop {
            if over.load(Ordering::SeqCst) {
                return;
            }
            let sig = signal.load(Ordering::SeqCst);
            if sig != 0 {
                let _writing = writes.lock().unwrap_or_else(|e| e.into_inner());
                if over.load(Ordering::SeqCst) {
                    return;
                }
                bar.abandon();
                let name = if sig == SIGINT as usize {
                    "SIGINT"
                } else {
                    "SIGTERM"
                };
                eprintln!("{}", message(name));
                std::process::exit(128 + sig as i32);
            }
            std::thread::sleep(Duration::from_millis(50));
        });
        Ok(stop)
    }

    /// Holds off the signal until the guard is dropped.
    pub(crate) fn writing(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        self.over.store(true, Ordering::SeqCst);
    }
}
