//! `unfold._native`: the registry, fitted models and model selection of unfold for Python.
//!
//! The Python package (`python/unfold/`) builds its scikit-learn estimators from
//! [`methods`](settings::methods) (one class per registered method, its parameters from the
//! method's declaration), fits through [`fit`](model::fit) and keeps the fitted
//! [`NativeModel`](model::NativeModel); `select` runs a [`Sweep`](unfold_select::Sweep)
//! serially ([`sweep_table`](sweeps::sweep_table)) or one candidate per Dask task
//! ([`sweep_trial`](sweeps::sweep_trial), then [`sweep_assemble`](sweeps::sweep_assemble)),
//! the same code the command line runs.
//!
//! Every call that computes releases the GIL. Errors become Python exceptions with the
//! Rust error's message (bad input `ValueError`, a setting of the wrong type `TypeError`,
//! files `OSError`, a memory refusal `MemoryError`, a numerical failure `RuntimeError`);
//! a panic, which would be a bug, becomes a `RuntimeError` saying so rather than
//! unwinding into the interpreter.

mod conversion;
mod metrics;
mod model;
mod settings;
mod sparse;
mod sweeps;
mod watch;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(settings::methods, m)?)?;
    m.add_function(wrap_pyfunction!(model::fit, m)?)?;
    m.add_function(wrap_pyfunction!(model::fit_sparse, m)?)?;
    m.add_class::<model::NativeModel>()?;
    m.add_function(wrap_pyfunction!(sweeps::sweep_size, m)?)?;
    m.add_function(wrap_pyfunction!(sweeps::sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(sweeps::sweep_trial, m)?)?;
    m.add_function(wrap_pyfunction!(sweeps::sweep_assemble, m)?)?;
    m.add_class::<sweeps::SweepTable>()?;
    m.add_function(wrap_pyfunction!(settings::set_max_memory, m)?)?;
    m.add_function(wrap_pyfunction!(settings::check_dense_copy, m)?)?;
    m.add_function(wrap_pyfunction!(sparse::pca_sparse, m)?)?;
    metrics::register(m)?;
    m.add_function(wrap_pyfunction!(conversion::_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
