//! The fitted model: `fit` and the `NativeModel` class (embedding, evidence, convergence,
//! graph, tables, projection, model-file bytes and pickling).

use crate::conversion::{array, compute, graph_of, matrix, to_py, ArrayPoints};
use crate::settings::{registry, settings_of};
use crate::watch::{write_stderr, Watch};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::borrow::Cow;
use std::path::Path;
use unfold_core::{Error, Evidence};
use unfold_eval::{heldout_log_density, GplvmScoreOptions};
use unfold_linalg::SparsePoints;
use unfold_models::method::Points;
use unfold_models::registry::{FitData, Model, Registry};

/// Fits `method` to the points `x` (n x p, float64) with `settings` (registry names), on
/// the given graph `(i, j)` for methods that take one; `verbose` and `listener` as
/// [`Watch::run`] uses them.
#[pyfunction]
#[pyo3(signature = (method, x, settings, graph=None, verbose=0, listener=None))]
pub(crate) fn fit(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    graph: Option<(Vec<i64>, Vec<i64>)>,
    verbose: u32,
    listener: Option<Bound<'_, PyAny>>,
) -> PyResult<NativeModel> {
    let y = ArrayPoints::of(&x);
    fit_on(
        py,
        method,
        || y.points(),
        settings,
        graph,
        verbose,
        listener,
    )
}

/// [`fit`] of sparse points given as canonical CSR arrays (columns ascending within a
/// row, none twice), read where they lie, for the methods that take sparse points; the
/// registry fits a dense copy for the others.
#[pyfunction]
#[pyo3(signature = (method, shape, indptr, indices, data, settings, graph=None, verbose=0, listener=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_sparse(
    py: Python<'_>,
    method: &str,
    shape: (usize, usize),
    indptr: Vec<usize>,
    indices: PyReadonlyArray1<'_, i32>,
    data: PyReadonlyArray1<'_, f64>,
    settings: &Bound<'_, PyDict>,
    graph: Option<(Vec<i64>, Vec<i64>)>,
    verbose: u32,
    listener: Option<Bound<'_, PyAny>>,
) -> PyResult<NativeModel> {
    let rows = SparsePoints::new(
        shape.0,
        shape.1,
        indptr,
        Cow::Borrowed(indices.as_slice()?),
        Cow::Borrowed(data.as_slice()?),
    )
    .map_err(to_py)?;
    fit_on(
        py,
        method,
        || Ok(Points::sparse(&rows)),
        settings,
        graph,
        verbose,
        listener,
    )
}

/// The fit of [`fit`] and [`fit_sparse`], on the points `points` gives.
fn fit_on<'a>(
    py: Python<'_>,
    method: &str,
    points: impl Fn() -> unfold_core::Result<Points<'a>> + Sync,
    settings: &Bound<'_, PyDict>,
    graph: Option<(Vec<i64>, Vec<i64>)>,
    verbose: u32,
    listener: Option<Bound<'_, PyAny>>,
) -> PyResult<NativeModel> {
    let settings = settings_of(method, settings)?;
    // Warnings point at the user's line: it called `fit`, which called `_fit`, which
    // called this.
    let watch = Watch::new(listener.is_some(), 3);
    let fitted = watch.run(py, method, verbose, listener.as_ref(), || {
        let points = points()?;
        let graph = graph.map(|g| graph_of(points.shape().0, g)).transpose()?;
        let data = FitData::view(points).with_graph(graph.as_ref());
        let fitted = registry().fit(method, &data, &settings, &watch)?;
        // The evidence on the training data, while they are here (Laplacian eigenmaps and
        // LLE compute theirs on demand; the others return the fit's own).
        let evidence = fitted.model.evidence_on(points)?;
        Ok((fitted, evidence))
    })?;
    let (fitted, evidence) = fitted;
    if verbose > 0 {
        let c = fitted.model.convergence();
        let line = format!(
            "unfold {method}: fitted {} points in {:.2} s ({}; {} {})\n",
            fitted.model.coords().nrows(),
            fitted.report.seconds,
            match c.iterations {
                0 => "closed form".to_string(),
                i => format!("{i} iterations, stopped by {}", c.stopped_by),
            },
            evidence.kind,
            evidence.value
        );
        write_stderr(py, &line)?;
    }
    Ok(NativeModel {
        model: fitted.model,
        seconds: Some(fitted.report.seconds),
        evidence: Some(evidence),
    })
}

/// A fitted model of any method.
#[pyclass(module = "unfold._native", frozen)]
pub(crate) struct NativeModel {
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

impl NativeModel {
    /// A model fitted outside [`fit`] in `seconds`, with its own evidence.
    pub(crate) fn fitted(model: Box<dyn Model>, seconds: f64) -> Self {
        let evidence = Some(model.evidence());
        NativeModel {
            model,
            seconds: Some(seconds),
            evidence,
        }
    }
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
        let y = ArrayPoints::of(&y);
        let e = compute(py, || self.model.evidence_on(y.points()?))?;
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
