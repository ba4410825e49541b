//! Sparse input that is never densified: PCA of a scipy CSR matrix read where it lies
//! ([`unfold_linalg::principal_components_sparse`], centring implicit).

use crate::conversion::{array, compute};
use crate::model::NativeModel;
use numpy::{Element, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use unfold_linalg::{principal_components_sparse, SparseIndex, SparseRows, SparseValue};
use unfold_models::spectral::pca::Pca;

/// What a sparse PCA returns to Python: the model, the mean, the axes and the variances.
type Fitted<'py> = (
    NativeModel,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, numpy::PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// The PCA of the CSR matrix `(data, indices, indptr)` of `shape` with `dim` components
/// (the randomized solver, seeded by `seed`): a `pca` model and its mean, axes (p x dim)
/// and variances. `indptr` and `indices` are int32 or int64 (the same), `data` float32 or
/// float64; the arrays are read in place, without the GIL.
#[pyfunction]
#[pyo3(signature = (shape, indptr, indices, data, dim, seed=0))]
pub(crate) fn pca_sparse<'py>(
    py: Python<'py>,
    shape: (usize, usize),
    indptr: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    dim: usize,
    seed: u64,
) -> PyResult<Fitted<'py>> {
    if let (Ok(p), Ok(i)) = (
        indptr.extract::<PyReadonlyArray1<'_, i32>>(),
        indices.extract::<PyReadonlyArray1<'_, i32>>(),
    ) {
        return with_values(py, shape, p, i, data, dim, seed);
    }
    if let (Ok(p), Ok(i)) = (
        indptr.extract::<PyReadonlyArray1<'_, i64>>(),
        indices.extract::<PyReadonlyArray1<'_, i64>>(),
    ) {
        return with_values(py, shape, p, i, data, dim, seed);
    }
    Err(PyTypeError::new_err(
        "a CSR matrix's indptr and indices must both be int32 or both int64 arrays",
    ))
}

fn with_values<'py, I: Element + SparseIndex>(
    py: Python<'py>,
    shape: (usize, usize),
    indptr: PyReadonlyArray1<'_, I>,
    indices: PyReadonlyArray1<'_, I>,
    data: &Bound<'py, PyAny>,
    dim: usize,
    seed: u64,
) -> PyResult<Fitted<'py>> {
    if let Ok(d) = data.extract::<PyReadonlyArray1<'_, f64>>() {
        return fit(py, shape, &indptr, &indices, &d, dim, seed);
    }
    if let Ok(d) = data.extract::<PyReadonlyArray1<'_, f32>>() {
        return fit(py, shape, &indptr, &indices, &d, dim, seed);
    }
    Err(PyTypeError::new_err(
        "a CSR matrix's data must be a float32 or float64 array",
    ))
}

fn fit<'py, I: Element + SparseIndex, T: Element + SparseValue>(
    py: Python<'py>,
    (n, p): (usize, usize),
    indptr: &PyReadonlyArray1<'_, I>,
    indices: &PyReadonlyArray1<'_, I>,
    data: &PyReadonlyArray1<'_, T>,
    dim: usize,
    seed: u64,
) -> PyResult<Fitted<'py>> {
    let (indptr, indices, data) = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
    let start = std::time::Instant::now();
    let pc = compute(py, || {
        let y = SparseRows::new(n, p, indptr, indices, data)?;
        principal_components_sparse(&y, dim, seed)
    })?;
    let (mean, components, variances) = (
        pc.mean.as_slice().to_vec(),
        pc.components.clone(),
        pc.variances.as_slice().to_vec(),
    );
    let model = NativeModel::fitted(Box::new(Pca::from(pc)), start.elapsed().as_secs_f64());
    Ok((
        model,
        PyArray1::from_vec(py, mean),
        array(py, components),
        PyArray1::from_vec(py, variances),
    ))
}
