//! Conversion between Python and Rust: NumPy arrays and matrices, edge arrays and graphs,
//! unfold errors and panics as Python exceptions.

use nalgebra::DMatrix;
use numpy::ndarray::{Array2, ShapeBuilder};
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use unfold_core::{Error, Order};
use unfold_graph::NeighbourGraph;
use unfold_models::registry::Points;

/// An unfold error as the Python exception of its kind.
pub(crate) fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::Io { .. } => PyOSError::new_err(message),
        Error::OverMemoryLimit(_) => PyMemoryError::new_err(message),
        Error::Numerical { .. } | Error::NotConverged { .. } => PyRuntimeError::new_err(message),
        // Stopped by Ctrl-C heard on another thread of the process.
        Error::Interrupted => PyKeyboardInterrupt::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// Runs `work` without the GIL, turning an unfold error into its Python exception and a
/// panic into a `RuntimeError`; Ctrl-C stops it as [`compute_interruptible`] does.
pub(crate) fn compute<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> unfold_core::Result<T> + Send,
) -> PyResult<T> {
    let unused = std::sync::atomic::AtomicBool::new(false);
    compute_interruptible(py, &unused, |_| Ok(()), work)
}

/// A caught run of `work` as [`compute`] returns it.
fn outcome<T>(run: std::thread::Result<unfold_core::Result<T>>) -> PyResult<T> {
    run.map_err(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".to_string());
        PyRuntimeError::new_err(format!(
            "internal error in unfold (a bug; please report it with the input): {what}"
        ))
    })?
    .map_err(to_py)
}

/// [`compute`] for a fit that can be stopped: `work` runs on a thread of its own while
/// this one, between short waits without the GIL, lets the interpreter run its signal
/// handlers and calls `tick` (progress). When a signal handler raises (Ctrl-C's
/// `KeyboardInterrupt`), the process's interruption flag is set
/// ([`unfold_core::interrupt`]), which the long kernels check at least every half second
/// of work, and the handler's exception is raised once the work has returned (the flag is
/// then cleared). When `tick` raises (a listener's stop), only `interrupted` is set, which
/// this fit's observer reports ([`unfold_core::Observer::stopped`]) at its next
/// iteration. The interpreter's own handlers do the hearing, so whatever handler a
/// notebook installs is respected.
pub(crate) fn compute_interruptible<T: Send>(
    py: Python<'_>,
    interrupted: &std::sync::atomic::AtomicBool,
    mut tick: impl FnMut(Python<'_>) -> PyResult<()>,
    work: impl FnOnce() -> unfold_core::Result<T> + Send,
) -> PyResult<T> {
    use std::sync::atomic::Ordering;
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let wait = std::time::Duration::from_millis(100);
    std::thread::scope(|scope| {
        let (done, mut finished) = channel();
        scope.spawn(move || {
            // The receiver outlives the scope's threads, so the send cannot fail.
            let _ = done.send(catch_unwind(AssertUnwindSafe(work)));
        });
        let mut heard: Option<PyErr> = None;
        let mut signalled = false;
        loop {
            // The receiver goes into the wait without the GIL and comes back (it is Send,
            // not Sync).
            let (received, back) = py.detach(move || (finished.recv_timeout(wait), finished));
            finished = back;
            match received {
                // A heard interrupt is raised even if the fit finished before it stopped:
                // the handler has consumed the signal, and Ctrl-C must not be lost.
                Ok(run) => {
                    if signalled {
                        unfold_core::interrupt::clear();
                    }
                    return heard.map_or_else(|| outcome(run), Err);
                }
                Err(RecvTimeoutError::Timeout) if heard.is_none() => {
                    if let Err(e) = py.check_signals() {
                        unfold_core::interrupt::request();
                        signalled = true;
                        interrupted.store(true, Ordering::Relaxed);
                        heard = Some(e);
                    } else if let Err(e) = tick(py) {
                        interrupted.store(true, Ordering::Relaxed);
                        heard = Some(e);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    if signalled {
                        unfold_core::interrupt::clear();
                    }
                    return Err(PyRuntimeError::new_err(
                        "internal error in unfold: the fit's thread ended without a result",
                    ));
                }
            }
        }
    })
}

/// A float64 array (n x p, any memory order) as an n x p matrix: one pass over the data,
/// a copy for C order (nalgebra stores columns), a plain copy for Fortran order, and an
/// element-wise copy for strided or unaligned arrays (e.g. one received by a Dask worker).
pub(crate) fn matrix(x: &PyReadonlyArray2<'_, f64>) -> DMatrix<f64> {
    let shape = x.shape();
    let (n, p) = (shape[0], shape[1]);
    match x.as_slice() {
        Ok(data) if x.is_fortran_contiguous() => DMatrix::from_column_slice(n, p, data),
        Ok(data) if x.is_c_contiguous() => {
            unfold_linalg::from_rows(n, p, |i| &data[i * p..(i + 1) * p])
        }
        _ => {
            let view = x.as_array();
            DMatrix::from_fn(n, p, |i, j| view[(i, j)])
        }
    }
}

/// The points of a float64 array (n x p) where they lie: a C- or Fortran-order array is
/// read in place ([`Points`]: the methods that read a view, PCA and DDRTree, fit without a
/// copy; the others copy once, inside the fit), a strided or unaligned one (e.g. one
/// received by a Dask worker) is copied first.
pub(crate) enum ArrayPoints<'a> {
    InPlace(&'a [f64], usize, usize, Order),
    Copied(DMatrix<f64>),
}

impl<'a> ArrayPoints<'a> {
    pub(crate) fn of(x: &'a PyReadonlyArray2<'_, f64>) -> Self {
        let shape = x.shape();
        let (n, p) = (shape[0], shape[1]);
        match x.as_slice() {
            Ok(data) if x.is_fortran_contiguous() => {
                ArrayPoints::InPlace(data, n, p, Order::Columns)
            }
            Ok(data) if x.is_c_contiguous() => ArrayPoints::InPlace(data, n, p, Order::Rows),
            _ => ArrayPoints::Copied(matrix(x)),
        }
    }

    /// The view of the points.
    pub(crate) fn points(&self) -> unfold_core::Result<Points<'_>> {
        match self {
            ArrayPoints::InPlace(values, n, p, order) => Points::new(values, *n, *p, *order),
            ArrayPoints::Copied(y) => Ok(Points::from(y)),
        }
    }
}

/// A matrix as a Fortran-order NumPy array that takes over its storage (no copy).
pub(crate) fn array<'py>(py: Python<'py>, m: DMatrix<f64>) -> Bound<'py, PyArray2<f64>> {
    let (n, q) = m.shape();
    let data: Vec<f64> = m.data.into();
    Array2::from_shape_vec((n, q).f(), data)
        .expect("the matrix's length is n * q")
        .into_pyarray(py)
}

/// A graph on `n` points from the edge arrays `(i, j)` (0-based; weights are the method's
/// own).
pub(crate) fn graph_of(
    n: usize,
    edges: (Vec<i64>, Vec<i64>),
) -> unfold_core::Result<NeighbourGraph> {
    let (i, j) = edges;
    if i.len() != j.len() {
        return Err(Error::invalid(
            "graph",
            format!(
                "the edge lists have different lengths ({} and {})",
                i.len(),
                j.len()
            ),
        ));
    }
    let mut list = Vec::with_capacity(i.len());
    for (&a, &b) in i.iter().zip(&j) {
        if a < 0 || b < 0 || a as usize >= n || b as usize >= n || a == b {
            return Err(Error::invalid(
                "graph",
                format!("({a}, {b}) is not a pair of distinct point indices 0..{n}"),
            ));
        }
        list.push((a as usize, b as usize, 1.0));
    }
    NeighbourGraph::from_edges(n, &list)
}

/// Panics on purpose: the test that a panic reaches Python as a `RuntimeError`.
#[pyfunction]
pub(crate) fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    compute(py, || -> unfold_core::Result<()> {
        panic!("a deliberate panic")
    })
}
