//! `unfold._native`: the registry, fitted models and model selection of unfold for Python.
//!
//! The Python package (`python/unfold/`) builds its scikit-learn estimators from
//! [`methods`] (one class per registered method, its parameters from the method's
//! declaration), fits through [`fit`] and keeps the fitted [`NativeModel`]; `select` runs
//! a [`Sweep`] serially ([`sweep_table`]) or one candidate per Dask task
//! ([`sweep_trial`], then [`sweep_assemble`]), the same code the command line runs.
//!
//! Every call that computes releases the GIL. Errors become Python exceptions with the
//! Rust error's message (bad input `ValueError`, a setting of the wrong type `TypeError`,
//! files `OSError`, a memory refusal `MemoryError`, a numerical failure `RuntimeError`);
//! a panic, which would be a bug, becomes a `RuntimeError` saying so rather than
//! unwinding into the interpreter.

use nalgebra::DMatrix;
use numpy::ndarray::{Array2, ShapeBuilder};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use unfold_core::{Error, Evidence, EvidenceKind};
use unfold_eval::{heldout_log_density, GplvmScoreOptions};
use unfold_graph::{NeighbourGraph, Symmetrisation};
use unfold_models::registry::{
    DefaultValue, FitData, Model, ParamKind, ParamSpec, Registry, Rows, Settings, Value,
};
use unfold_select::{Candidate, Plan, Score, Selection, Sweep, Table, Trial};

/// unfold's built-in methods, built once.
fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
}

/// An unfold error as the Python exception of its kind.
fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::Io { .. } => PyOSError::new_err(message),
        Error::OverMemoryLimit(_) => PyMemoryError::new_err(message),
        Error::Numerical { .. } | Error::NotConverged { .. } => PyRuntimeError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// Runs `work` without the GIL, turning an unfold error into its Python exception and a
/// panic into a `RuntimeError`.
fn compute<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> unfold_core::Result<T> + Send,
) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|panic| {
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

/// A float64 array (n x p, any memory order) as an n x p matrix: one pass over the data,
/// a copy for C order (nalgebra stores columns), a plain copy for Fortran order, and an
/// element-wise copy for strided or unaligned arrays (e.g. one received by a Dask worker).
fn matrix(x: &PyReadonlyArray2<'_, f64>) -> DMatrix<f64> {
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

/// A matrix as a Fortran-order NumPy array that takes over its storage (no copy).
fn array<'py>(py: Python<'py>, m: DMatrix<f64>) -> Bound<'py, PyArray2<f64>> {
    let (n, q) = m.shape();
    let data: Vec<f64> = m.data.into();
    Array2::from_shape_vec((n, q).f(), data)
        .expect("the matrix's length is n * q")
        .into_pyarray(py)
}

/// A Python value as the typed value of parameter `spec`.
fn value_of(spec: &ParamSpec, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    let wrong = |what: &str| {
        PyTypeError::new_err(format!(
            "invalid value for `{}`: expected {}, got {what}",
            spec.name,
            spec.allowed()
        ))
    };
    let type_name = || {
        v.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "an object".to_string())
    };
    let is_bool = v.is_instance_of::<pyo3::types::PyBool>();
    Ok(match &spec.kind {
        ParamKind::Count { .. } => {
            if is_bool {
                return Err(wrong("a bool"));
            }
            match v.extract::<i64>() {
                Ok(c) if c >= 0 => Value::Count(c as usize),
                Ok(c) => {
                    return Err(PyValueError::new_err(format!(
                        "invalid value for `{}`: expected {}, got {c}",
                        spec.name,
                        spec.allowed()
                    )))
                }
                Err(_) => return Err(wrong(&type_name())),
            }
        }
        ParamKind::Real(_) => {
            if is_bool || v.is_instance_of::<pyo3::types::PyString>() {
                return Err(wrong(&type_name()));
            }
            Value::Real(v.extract::<f64>().map_err(|_| wrong(&type_name()))?)
        }
        ParamKind::Reals(_) => {
            if let Ok(x) = v.extract::<f64>() {
                Value::Reals(vec![x])
            } else {
                Value::Reals(v.extract::<Vec<f64>>().map_err(|_| wrong(&type_name()))?)
            }
        }
        ParamKind::Flag => {
            if !is_bool {
                return Err(wrong(&type_name()));
            }
            Value::Flag(v.extract::<bool>()?)
        }
        ParamKind::Choice(_) => {
            Value::Choice(v.extract::<String>().map_err(|_| wrong(&type_name()))?)
        }
        ParamKind::RealOr(..) => {
            if let Ok(word) = v.extract::<String>() {
                Value::Choice(word)
            } else if is_bool {
                return Err(wrong("a bool"));
            } else {
                Value::Real(v.extract::<f64>().map_err(|_| wrong(&type_name()))?)
            }
        }
    })
}

/// The settings of `method` from a dict `{registry name: value}` (`None` values are left
/// to the method's default).
fn settings_of(method: &str, given: &Bound<'_, PyDict>) -> PyResult<Settings> {
    let specs = registry().params(method).map_err(to_py)?;
    let mut settings = Settings::new();
    for (key, v) in given.iter() {
        if v.is_none() {
            continue;
        }
        let name: String = key.extract()?;
        let spec = specs.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<&str> = specs.iter().map(|p| p.name).collect();
            PyValueError::new_err(format!(
                "invalid value for `{name}`: `{method}` has no such parameter; its parameters are {}",
                names.join(", ")
            ))
        })?;
        let value = value_of(spec, &v)?;
        spec.check(&value).map_err(to_py)?;
        settings.set(spec.name, value);
    }
    Ok(settings)
}

/// A parameter's value as a Python object.
fn py_value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Count(c) => c.into_pyobject(py)?.into_any(),
        Value::Real(r) => r.into_pyobject(py)?.into_any(),
        Value::Reals(r) => PyTuple::new(py, r)?.into_any(),
        Value::Flag(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Choice(w) => w.into_pyobject(py)?.into_any(),
    })
}

/// Every registered method: name, family, description, evidence kind, whether it projects
/// and takes a graph, and its parameters (name, help, type, allowed values in words,
/// choices, default or `None` with the words saying how it is computed).
#[pyfunction]
fn methods(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for method in registry().methods() {
        let info = method.info();
        let d = PyDict::new(py);
        d.set_item("name", info.name)?;
        d.set_item("family", info.family.as_str())?;
        d.set_item("about", info.about)?;
        d.set_item("evidence", info.evidence.as_str())?;
        d.set_item("projects", info.projects)?;
        d.set_item("takes_graph", info.takes_graph)?;
        let params = PyList::empty(py);
        for p in registry().params(info.name).map_err(to_py)? {
            let q = PyDict::new(py);
            q.set_item("name", p.name)?;
            q.set_item("help", p.help)?;
            q.set_item("allowed", p.allowed())?;
            let (kind, choices): (&str, Vec<&str>) = match &p.kind {
                ParamKind::Count { .. } => ("int", vec![]),
                ParamKind::Real(_) => ("float", vec![]),
                ParamKind::Reals(_) => ("floats", vec![]),
                ParamKind::Flag => ("bool", vec![]),
                ParamKind::Choice(words) => ("str", words.to_vec()),
                ParamKind::RealOr(_, words) => ("float or str", words.to_vec()),
            };
            q.set_item("kind", kind)?;
            q.set_item("choices", choices)?;
            match &p.default {
                DefaultValue::Is(v) => {
                    q.set_item("default", py_value(py, v)?)?;
                    q.set_item("auto", py.None())?;
                }
                DefaultValue::Auto(how) => {
                    q.set_item("default", py.None())?;
                    q.set_item("auto", *how)?;
                }
            }
            params.append(q)?;
        }
        d.set_item("params", params)?;
        list.append(d)?;
    }
    Ok(list)
}

/// A graph on `n` points from the edge arrays `(i, j)` (0-based; weights are the method's
/// own).
fn graph_of(n: usize, edges: (Vec<i64>, Vec<i64>)) -> unfold_core::Result<NeighbourGraph> {
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

/// Fits `method` to the points `x` (n x p, float64) with `settings` (registry names), on
/// the given graph `(i, j)` for methods that take one.
#[pyfunction]
#[pyo3(signature = (method, x, settings, graph=None))]
fn fit(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    graph: Option<(Vec<i64>, Vec<i64>)>,
) -> PyResult<NativeModel> {
    let settings = settings_of(method, settings)?;
    // A C-order array goes to the methods that read rows in place (PCA) as it is.
    if let (None, Ok(values), true) = (&graph, x.as_slice(), x.is_c_contiguous()) {
        let (n, p) = (x.shape()[0], x.shape()[1]);
        let fitted = compute(py, || {
            let rows = Rows::new(values, n, p)?;
            registry().fit_rows(method, rows, &settings, &unfold_core::Silent)
        })?;
        if let Some(fitted) = fitted {
            return Ok(NativeModel {
                evidence: Some(fitted.report.evidence),
                seconds: Some(fitted.report.seconds),
                model: fitted.model,
            });
        }
    }
    let y = matrix(&x);
    let fitted = compute(py, || {
        let graph = graph.map(|g| graph_of(y.nrows(), g)).transpose()?;
        let data = FitData {
            y: &y,
            graph: graph.as_ref(),
        };
        let fitted = registry().fit(method, &data, &settings, &unfold_core::Silent)?;
        // The evidence on the training data, while they are here (Laplacian eigenmaps and
        // LLE compute theirs on demand; the others return the fit's own).
        let evidence = fitted.model.evidence_on(&y)?;
        Ok((fitted, evidence))
    })?;
    let (fitted, evidence) = fitted;
    Ok(NativeModel {
        model: fitted.model,
        seconds: Some(fitted.report.seconds),
        evidence: Some(evidence),
    })
}

/// A fitted model of any method.
#[pyclass(module = "unfold._native", frozen)]
struct NativeModel {
    model: Box<dyn Model>,
    /// Seconds the Rust fit took (`None` for a model read from bytes).
    seconds: Option<f64>,
    /// The evidence on the training data, computed at the fit (`None` for a model read
    /// from bytes: then the model's own).
    evidence: Option<Evidence>,
}

fn evidence_tuple<'py>(py: Python<'py>, e: &Evidence) -> PyResult<Bound<'py, PyTuple>> {
    let terms = PyDict::new(py);
    for (name, v) in &e.terms {
        terms.set_item(name, v)?;
    }
    PyTuple::new(
        py,
        [
            e.kind.as_str().into_pyobject(py)?.into_any(),
            e.value.into_pyobject(py)?.into_any(),
            terms.into_any(),
        ],
    )
}

#[pymethods]
impl NativeModel {
    /// Seconds the fit took inside Rust (`None` for a loaded model): the time the Python
    /// layer adds is the call's time less this.
    #[getter]
    fn fit_seconds(&self) -> Option<f64> {
        self.seconds
    }

    /// The method's name.
    #[getter]
    fn method(&self) -> &'static str {
        self.model.method()
    }

    /// The embedding of the training points (n x q).
    fn embedding<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        array(py, self.model.coords().clone())
    }

    /// `(kind, value, terms)` of the model's evidence on its training data (for a fit made
    /// here, as `evidence_on` gives it on the fitted points).
    fn evidence<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match &self.evidence {
            Some(e) => evidence_tuple(py, e),
            None => evidence_tuple(py, &self.model.evidence()),
        }
    }

    /// `(kind, value, terms)` of the model's evidence on its training data `y` (Laplacian
    /// eigenmaps and LLE compute theirs here).
    fn evidence_on<'py>(
        &self,
        py: Python<'py>,
        y: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let y = matrix(&y);
        let e = compute(py, || self.model.evidence_on(&y))?;
        evidence_tuple(py, &e)
    }

    /// The log predictive density of new points `y_test` under the GP-LVM score's Gaussian
    /// process from the embedding to the training data `y_train`, at the points' projected
    /// positions (the held-out score of `select`).
    fn heldout_log_density(
        &self,
        py: Python<'_>,
        y_train: PyReadonlyArray2<'_, f64>,
        y_test: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<f64> {
        let (train, test) = (matrix(&y_train), matrix(&y_test));
        compute(py, || {
            let rule = self.model.out_of_sample().ok_or_else(|| {
                Error::invalid(
                    "score",
                    format!("{} cannot project points", self.model.method()),
                )
            })?;
            let projected = rule.project(&test)?;
            let held = heldout_log_density(
                self.model.coords(),
                &train,
                &projected.mean,
                &test,
                &GplvmScoreOptions::default(),
            )?;
            Ok(held.log_density)
        })
    }

    /// `{iterations, converged, stopped_by, trace}` of the fit.
    fn convergence<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.model.convergence();
        let d = PyDict::new(py);
        d.set_item("iterations", c.iterations)?;
        d.set_item("converged", c.converged)?;
        d.set_item("stopped_by", c.stopped_by)?;
        d.set_item("trace", PyArray1::from_vec(py, c.trace))?;
        Ok(d)
    }

    /// The graph the model fitted or learned as `(n, i, j, weight)` arrays, or `None`.
    fn edges<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(edges) = self.model.learned_edges() else {
            return Ok(None);
        };
        let n = self.model.coords().nrows();
        let i: Vec<i64> = edges.iter().map(|e| e.0 as i64).collect();
        let j: Vec<i64> = edges.iter().map(|e| e.1 as i64).collect();
        let w: Vec<f64> = edges.iter().map(|e| e.2).collect();
        Ok(Some(PyTuple::new(
            py,
            [
                n.into_pyobject(py)?.into_any(),
                PyArray1::from_vec(py, i).into_any(),
                PyArray1::from_vec(py, j).into_any(),
                PyArray1::from_vec(py, w).into_any(),
            ],
        )?))
    }

    /// Extra output tables as `[(name, header, rows)]` (DDRTree's tree and centres).
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for t in self.model.tables() {
            let item = PyTuple::new(
                py,
                [
                    t.name.into_pyobject(py)?.into_any(),
                    t.header.into_pyobject(py)?.into_any(),
                    array(py, t.rows).into_any(),
                ],
            )?;
            list.append(item)?;
        }
        Ok(list)
    }

    /// The model's notes as `[(name, value)]` (DDRTree's ordering: root cell, branch
    /// points, states).
    fn notes(&self) -> Vec<(String, String)> {
        self.model.notes()
    }

    /// Whether the model projects new points.
    #[getter]
    fn projects(&self) -> bool {
        self.model.out_of_sample().is_some()
    }

    /// Projects new points (m x p): `(mean, covariances)`, the covariances an (m, q, q)
    /// array where the model defines them, else `None`.
    fn project<'py>(
        &self,
        py: Python<'py>,
        y: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let y = matrix(&y);
        let projection = compute(py, || {
            let rule = self.model.out_of_sample().ok_or_else(|| {
                Error::invalid(
                    "transform",
                    format!(
                        "{} has no out-of-sample rule; the methods that project are {}",
                        self.model.method(),
                        registry().names_where(|i| i.projects)
                    ),
                )
            })?;
            rule.project(&y)
        })?;
        let covariance = match projection.covariance {
            None => py.None().into_bound(py),
            Some(covs) => {
                let q = projection.mean.ncols();
                let mut flat = Vec::with_capacity(covs.len() * q * q);
                for c in &covs {
                    for r in 0..q {
                        for s in 0..q {
                            flat.push(c[(r, s)]);
                        }
                    }
                }
                let a = numpy::ndarray::Array3::from_shape_vec((covs.len(), q, q), flat)
                    .expect("m * q * q values");
                a.into_pyarray(py).into_any()
            }
        };
        PyTuple::new(py, [array(py, projection.mean).into_any(), covariance])
    }

    /// The model file's bytes (the versioned header, then the model).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = compute(py, || Registry::to_bytes(self.model.as_ref()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A model from the bytes of a model file (written by `to_bytes`, `unfold fit
    /// --save` or a pickle).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<NativeModel> {
        let model = compute(py, || {
            registry().from_bytes(data, Path::new("<bytes from Python>"))
        })?;
        Ok(NativeModel {
            model,
            seconds: None,
            evidence: None,
        })
    }

    /// Pickles as the model file.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let load = py.get_type::<NativeModel>().getattr("from_bytes")?;
        let args = PyTuple::new(py, [self.to_bytes(py)?])?;
        PyTuple::new(py, [load, args.into_any()])
    }

    fn __repr__(&self) -> String {
        let (n, q) = self.model.coords().shape();
        format!(
            "<unfold {} model: {n} points in {q} dimensions>",
            self.model.method()
        )
    }
}

/// A plan from the dict the Python `select` builds.
fn plan_of(d: &Bound<'_, PyDict>, n: usize) -> PyResult<Plan> {
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(key)?
            .ok_or_else(|| PyValueError::new_err(format!("the plan has no `{key}`")))
    };
    let symmetrisations = get("symmetrisations")?
        .extract::<Vec<String>>()?
        .iter()
        .map(|s| match s.as_str() {
            "union" => Ok(Symmetrisation::Union),
            "mutual" => Ok(Symmetrisation::Mutual),
            other => Err(PyValueError::new_err(format!(
                "invalid value for `graph`: expected union or mutual, got `{other}`"
            ))),
        })
        .collect::<PyResult<_>>()?;
    let graphs = get("graphs")?
        .extract::<Vec<(Vec<i64>, Vec<i64>)>>()?
        .into_iter()
        .map(|g| graph_of(n, g).map_err(to_py))
        .collect::<PyResult<_>>()?;
    Ok(Plan {
        ks: get("ks")?.extract()?,
        symmetrisations,
        dims: get("dims")?.extract()?,
        radii: get("radii")?.extract()?,
        graphs,
        restarts: get("restarts")?.extract()?,
        seed: get("seed")?.extract()?,
        score: Score::parse(&get("score")?.extract::<String>()?).map_err(to_py)?,
        holdout: get("holdout")?.extract()?,
    })
}

/// One candidate's outcome as it crosses between processes: `(index, evidence kind,
/// value, error, seconds)`.
type TrialTuple = (usize, Option<String>, Option<f64>, Option<String>, f64);

/// Runs `work` on the sweep of `method` over the points `x` with `settings` and `plan`
/// (checked as `select` checks them), without the GIL.
fn with_sweep<T: Send>(
    py: Python<'_>,
    method: &str,
    x: &PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    work: impl FnOnce(&Sweep<'_>) -> unfold_core::Result<T> + Send,
) -> PyResult<T> {
    let settings = settings_of(method, settings)?;
    let y = matrix(x);
    let plan = plan_of(plan, y.nrows())?;
    compute(py, || {
        work(&Sweep::new(registry(), method, &settings, &y, plan)?)
    })
}

/// The number of candidates of a sweep.
#[pyfunction]
fn sweep_size(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
) -> PyResult<usize> {
    with_sweep(py, method, &x, settings, plan, |sweep| {
        Ok(sweep.candidates().len())
    })
}

/// The whole sweep in this process (candidates in parallel): the CSV table of `unfold
/// select`. With `out`, each finished candidate's row is appended to that table as it
/// completes, and with `resume` the candidates already there are skipped
/// (`unfold_select::Table`, as `unfold select --out --resume`); the complete table then
/// replaces it.
#[pyfunction]
#[pyo3(signature = (method, x, settings, plan, out=None, resume=false))]
fn sweep_table(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    out: Option<PathBuf>,
    resume: bool,
) -> PyResult<String> {
    with_sweep(py, method, &x, settings, plan, |sweep| {
        let (table, finished) = match out {
            None => return Ok(sweep.table(&sweep.run(|| ())?)),
            Some(path) if resume => {
                let r = Table::resume(&path, sweep.table_spec())?;
                (r.table, r.finished)
            }
            Some(path) => (Table::create(&path, sweep.table_spec())?, Vec::new()),
        };
        let selection = sweep.run_rest(finished, |t| table.append(t))?;
        table.finish(&selection)
    })
}

/// `(index, evidence kind, value, error, seconds)` of candidate number `index`'s trial.
fn trial_tuple(index: usize, trial: &Trial) -> TrialTuple {
    (
        index,
        trial.evidence.as_ref().map(|e| e.kind.as_str().to_string()),
        trial.evidence.as_ref().map(|e| e.value),
        trial.error.clone(),
        trial.seconds,
    )
}

/// The trial a tuple of `sweep_trial` describes, with its candidate's index.
fn trial_of(candidates: &[Candidate], tuple: TrialTuple) -> unfold_core::Result<(usize, Trial)> {
    let (index, kind, value, error, seconds) = tuple;
    let candidate = candidates
        .get(index)
        .ok_or_else(|| Error::invalid("trials", format!("there is no candidate number {index}")))?;
    let evidence = match (kind, value) {
        (Some(kind), Some(value)) => Some(Evidence::new(
            EvidenceKind::parse(&kind).ok_or_else(|| {
                Error::invalid("trials", format!("unknown evidence kind `{kind}`"))
            })?,
            value,
        )),
        _ => None,
    };
    Ok((
        index,
        Trial {
            candidate: *candidate,
            evidence,
            error,
            seconds,
        },
    ))
}

/// The trial of each tuple (`sweep_trial`'s, any order), one per candidate, in the
/// candidates' order.
fn trials_of(candidates: &[Candidate], trials: Vec<TrialTuple>) -> unfold_core::Result<Vec<Trial>> {
    let mut rows: Vec<Option<Trial>> = vec![None; candidates.len()];
    for tuple in trials {
        let (index, trial) = trial_of(candidates, tuple)?;
        rows[index] = Some(trial);
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.ok_or_else(|| Error::invalid("trials", format!("candidate {i} has no trial")))
        })
        .collect()
}

/// Candidate number `index` of a sweep, fitted and scored: `(index, kind, value, error,
/// seconds)`, a failed fit with its error rather than an exception (one Dask task).
#[pyfunction]
fn sweep_trial(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    index: usize,
) -> PyResult<TrialTuple> {
    let trial = with_sweep(py, method, &x, settings, plan, |sweep| sweep.trial(index))?;
    Ok(trial_tuple(index, &trial))
}

/// The table of a sweep whose trials ran elsewhere (`sweep_trial`'s tuples, any order),
/// ranked exactly as the serial sweep ranks its own.
#[pyfunction]
fn sweep_assemble(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    trials: Vec<TrialTuple>,
) -> PyResult<String> {
    with_sweep(py, method, &x, settings, plan, |sweep| {
        let trials = trials_of(sweep.candidates(), trials)?;
        Ok(sweep.table(&Selection::from_trials(trials)?))
    })
}

/// The table of a distributed sweep, kept by the driver: each task's row is appended as
/// the task completes, and a resumed table's finished candidates are not submitted again.
#[pyclass(module = "unfold._native")]
struct SweepTable {
    table: Table,
    finished: Vec<TrialTuple>,
}

#[pymethods]
impl SweepTable {
    /// Starts the table at `out` for the sweep (or, with `resume`, reads the rows already
    /// there, refusing a table of another sweep).
    #[new]
    fn new(
        py: Python<'_>,
        method: &str,
        x: PyReadonlyArray2<'_, f64>,
        settings: &Bound<'_, PyDict>,
        plan: &Bound<'_, PyDict>,
        out: PathBuf,
        resume: bool,
    ) -> PyResult<Self> {
        with_sweep(py, method, &x, settings, plan, |sweep| {
            let spec = sweep.table_spec();
            if !resume {
                return Ok(SweepTable {
                    table: Table::create(&out, spec)?,
                    finished: Vec::new(),
                });
            }
            let r = Table::resume(&out, spec)?;
            let candidates = r.table.spec().candidates();
            let finished = r
                .finished
                .iter()
                .map(|t| {
                    let i = candidates.iter().position(|c| *c == t.candidate);
                    trial_tuple(i.expect("a resumed trial is a candidate"), t)
                })
                .collect();
            Ok(SweepTable {
                table: r.table,
                finished,
            })
        })
    }

    /// The trials already in the table, as `sweep_trial`'s tuples.
    fn finished(&self) -> Vec<TrialTuple> {
        self.finished.clone()
    }

    /// Appends the row of one finished task (a `sweep_trial` tuple) and syncs it to disk.
    fn append(&self, py: Python<'_>, trial: TrialTuple) -> PyResult<()> {
        compute(py, || {
            let (_, t) = trial_of(self.table.spec().candidates(), trial)?;
            self.table.append(&t)
        })
    }

    /// Ranks every trial (the finished ones and the new, any order) and replaces the table
    /// with the complete one; returns its text.
    fn finish(&self, py: Python<'_>, trials: Vec<TrialTuple>) -> PyResult<String> {
        compute(py, || {
            let trials = trials_of(self.table.spec().candidates(), trials)?;
            self.table.finish(&Selection::from_trials(trials)?)
        })
    }
}

/// Sets the most memory a fit may use, as the command line's `--max-memory` does: bytes
/// with an optional suffix K, M, G or T (e.g. "4G"), or `None` for the default
/// (`UNFOLD_MAX_MEMORY`, else the machine's available memory). Methods whose memory grows
/// faster than n then raise `MemoryError` before allocating more.
#[pyfunction]
#[pyo3(signature = (size))]
fn set_max_memory(size: Option<&str>) -> PyResult<()> {
    let limit = match size {
        Some(text) => Some(unfold_core::MemoryLimit::given(
            unfold_core::parse_size(text, "max_memory").map_err(to_py)?,
            "unfold.set_max_memory",
        )),
        None => None,
    };
    unfold_core::MemoryLimit::set_process(limit);
    Ok(())
}

/// Panics on purpose: the test that a panic reaches Python as a `RuntimeError`.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    compute(py, || -> unfold_core::Result<()> {
        panic!("a deliberate panic")
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(methods, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_class::<NativeModel>()?;
    m.add_function(wrap_pyfunction!(sweep_size, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_trial, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_assemble, m)?)?;
    m.add_class::<SweepTable>()?;
    m.add_function(wrap_pyfunction!(set_max_memory, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
