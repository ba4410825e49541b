//! The registry and its settings: Python keyword values as the registry's typed
//! [`Settings`], the listing of every method and its parameters, and the memory limit.

use crate::conversion::to_py;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::OnceLock;
use unfold_models::registry::{DefaultValue, ParamKind, ParamSpec, Registry, Settings, Value};

/// unfold's built-in methods, built once.
pub(crate) fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::builtin)
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
pub(crate) fn settings_of(method: &str, given: &Bound<'_, PyDict>) -> PyResult<Settings> {
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
pub(crate) fn methods(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
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
        d.set_item("sparse_points", info.sparse_points)?;
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

/// Checks that an `n` x `p` float64 copy of sparse input fits the memory limit (the one
/// [`set_max_memory`] sets), before it is made: the methods compute on dense points.
#[pyfunction]
pub(crate) fn check_dense_copy(n: usize, p: usize) -> PyResult<()> {
    unfold_models::traits::check_dense_copy(n, p).map_err(to_py)
}

/// Sets the most memory a fit may use, as the command line's `--max-memory` does: bytes
/// with an optional suffix K, M, G or T (e.g. "4G"), or `None` for the default
/// (`UNFOLD_MAX_MEMORY`, else the machine's available memory). Methods whose memory grows
/// faster than n then raise `MemoryError` before allocating more.
#[pyfunction]
#[pyo3(signature = (size))]
pub(crate) fn set_max_memory(size: Option<&str>) -> PyResult<()> {
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
