//! Trajectory metrics (`unfold_eval`'s, dynverse's definitions) for `unfold.metrics`.
//!
//! A trajectory crosses as two float64 arrays: its edges `(m, 3)` rows `(a, b, length)`
//! and its cells `(n, 3)` rows `(from, to, t)`; node ids must be whole numbers `>= 0`.
//! The Python module (`python/unfold/metrics.py`) builds them from what the user has.

use crate::conversion::{array, compute};
use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use unfold_core::{Error, Result};
use unfold_eval::{HimOptions, Root, TrajectoryLayout, Waypoints};

/// Registers the functions of this module on `_native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(trajectory_geodesic_distances, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_waypoints, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_agreement, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_pseudotime, m)?)?;
    m.add_function(wrap_pyfunction!(rank_correlation, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_branches, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_f1_branches, m)?)?;
    m.add_function(wrap_pyfunction!(f1_labels, m)?)?;
    m.add_function(wrap_pyfunction!(trajectory_him, m)?)?;
    Ok(())
}

/// Rows `(id, id, value)` of an `(r, 3)` array, the ids whole numbers `>= 0`.
fn triples(x: &PyReadonlyArray2<'_, f64>, what: &str) -> Result<Vec<(usize, usize, f64)>> {
    let shape = x.shape();
    if shape[1] != 3 {
        return Err(Error::DimensionMismatch(format!(
            "{what} must have 3 columns, got {}",
            shape[1]
        )));
    }
    let view = x.as_array();
    let id = |r: usize, c: usize| -> Result<usize> {
        let v = view[(r, c)];
        // Whole and below 2^53, so that the conversion is exact.
        if v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0 {
            Ok(v as usize)
        } else {
            Err(Error::invalid(
                what,
                format!("row {r}, column {c} is {v}, not a node id (a whole number >= 0)"),
            ))
        }
    };
    (0..shape[0])
        .map(|r| Ok((id(r, 0)?, id(r, 1)?, view[(r, 2)])))
        .collect()
}

fn layout(
    edges: &PyReadonlyArray2<'_, f64>,
    cells: &PyReadonlyArray2<'_, f64>,
    what: &str,
) -> Result<TrajectoryLayout> {
    Ok(TrajectoryLayout::new(
        triples(edges, &format!("the {what}'s edges"))?,
        triples(cells, &format!("the {what}'s cells"))?,
    ))
}

/// The distances along the tree from the cells `rows` to every cell, `(len(rows), n)`.
#[pyfunction]
pub(crate) fn trajectory_geodesic_distances<'py>(
    py: Python<'py>,
    edges: PyReadonlyArray2<'py, f64>,
    cells: PyReadonlyArray2<'py, f64>,
    rows: Vec<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let t = layout(&edges, &cells, "trajectory").map_err(crate::conversion::to_py)?;
    let d = compute(py, || unfold_eval::geodesic_distances(&t, &rows))?;
    Ok(array(py, d))
}

/// About `count` waypoint cells spread over the trajectory, ascending.
#[pyfunction]
pub(crate) fn trajectory_waypoints(
    py: Python<'_>,
    edges: PyReadonlyArray2<'_, f64>,
    cells: PyReadonlyArray2<'_, f64>,
    count: usize,
) -> PyResult<Vec<usize>> {
    let t = layout(&edges, &cells, "trajectory").map_err(crate::conversion::to_py)?;
    compute(py, || unfold_eval::waypoint_cells(&t, count))
}

/// Spearman's correlation of the geodesic distances from the waypoints (`None`: every
/// cell) to every cell.
#[pyfunction]
#[pyo3(signature = (pred_edges, pred_cells, ref_edges, ref_cells, waypoints=None))]
pub(crate) fn trajectory_correlation(
    py: Python<'_>,
    pred_edges: PyReadonlyArray2<'_, f64>,
    pred_cells: PyReadonlyArray2<'_, f64>,
    ref_edges: PyReadonlyArray2<'_, f64>,
    ref_cells: PyReadonlyArray2<'_, f64>,
    waypoints: Option<usize>,
) -> PyResult<f64> {
    let (p, r) = pair(&pred_edges, &pred_cells, &ref_edges, &ref_cells)?;
    let waypoints = waypoints.map_or(Waypoints::All, Waypoints::PerTrajectory);
    compute(py, || unfold_eval::geodesic_correlation(&p, &r, waypoints))
}

/// Spearman's correlation of the distances along the trees between every pair of the
/// cells `cells`, for every pair of the trajectories (each an `(edges, cells)` pair), as a
/// symmetric `(m, m)` array.
#[pyfunction]
pub(crate) fn trajectory_agreement<'py>(
    py: Python<'py>,
    trajectories: Vec<(PyReadonlyArray2<'py, f64>, PyReadonlyArray2<'py, f64>)>,
    cells: Vec<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let layouts = trajectories
        .iter()
        .enumerate()
        .map(|(i, (e, c))| layout(e, c, &format!("trajectory {i}")))
        .collect::<Result<Vec<_>>>()
        .map_err(crate::conversion::to_py)?;
    let a = compute(py, || unfold_eval::geodesic_agreement(&layouts, &cells))?;
    Ok(array(py, a))
}

fn pair(
    pred_edges: &PyReadonlyArray2<'_, f64>,
    pred_cells: &PyReadonlyArray2<'_, f64>,
    ref_edges: &PyReadonlyArray2<'_, f64>,
    ref_cells: &PyReadonlyArray2<'_, f64>,
) -> PyResult<(TrajectoryLayout, TrajectoryLayout)> {
    let p = layout(pred_edges, pred_cells, "predicted trajectory");
    let r = layout(ref_edges, ref_cells, "reference trajectory");
    p.and_then(|p| Ok((p, r?)))
        .map_err(crate::conversion::to_py)
}

/// The distance along the tree from the root (a node or a cell, exactly one) to every
/// cell.
#[pyfunction]
#[pyo3(signature = (edges, cells, root_node=None, root_cell=None))]
pub(crate) fn trajectory_pseudotime<'py>(
    py: Python<'py>,
    edges: PyReadonlyArray2<'py, f64>,
    cells: PyReadonlyArray2<'py, f64>,
    root_node: Option<usize>,
    root_cell: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let t = layout(&edges, &cells, "trajectory").map_err(crate::conversion::to_py)?;
    let root = match (root_node, root_cell) {
        (Some(k), None) => Root::Node(k),
        (None, Some(i)) => Root::Cell(i),
        _ => {
            return Err(crate::conversion::to_py(Error::invalid(
                "root",
                "give exactly one of root_node and root_cell",
            )))
        }
    };
    let d = compute(py, || unfold_eval::pseudotime(&t, root))?;
    Ok(PyArray1::from_vec(py, d))
}

/// Spearman's correlation of two value vectors (e.g. pseudotimes), 0 when either is
/// constant.
#[pyfunction]
pub(crate) fn rank_correlation(
    py: Python<'_>,
    a: PyReadonlyArray1<'_, f64>,
    b: PyReadonlyArray1<'_, f64>,
) -> PyResult<f64> {
    let (a, b) = (a.as_array().to_vec(), b.as_array().to_vec());
    compute(py, || {
        // Leave every malformed input to spearman's errors.
        let constant = |v: &[f64]| v.iter().all(|&x| x == v[0]);
        let valid = a.len() == b.len() && a.len() >= 2 && !a.iter().chain(&b).any(|v| v.is_nan());
        if valid && (constant(&a) || constant(&b)) {
            return Ok(0.0);
        }
        unfold_eval::spearman(&a, &b)
    })
}

/// Each cell's branch, `0..B`.
#[pyfunction]
pub(crate) fn trajectory_branches(
    py: Python<'_>,
    edges: PyReadonlyArray2<'_, f64>,
    cells: PyReadonlyArray2<'_, f64>,
) -> PyResult<Vec<usize>> {
    let t = layout(&edges, &cells, "trajectory").map_err(crate::conversion::to_py)?;
    compute(py, || unfold_eval::branches(&t))
}

/// `(recovery, relevance, f1)` of the two trajectories' branch groupings.
#[pyfunction]
pub(crate) fn trajectory_f1_branches(
    py: Python<'_>,
    pred_edges: PyReadonlyArray2<'_, f64>,
    pred_cells: PyReadonlyArray2<'_, f64>,
    ref_edges: PyReadonlyArray2<'_, f64>,
    ref_cells: PyReadonlyArray2<'_, f64>,
) -> PyResult<(f64, f64, f64)> {
    let (p, r) = pair(&pred_edges, &pred_cells, &ref_edges, &ref_cells)?;
    let f = compute(py, || unfold_eval::f1_branches(&p, &r))?;
    Ok((f.recovery, f.relevance, f.f1))
}

/// `(recovery, relevance, f1)` of two labelings (ids `>= 0`).
#[pyfunction]
pub(crate) fn f1_labels(
    py: Python<'_>,
    pred: PyReadonlyArray1<'_, i64>,
    reference: PyReadonlyArray1<'_, i64>,
) -> PyResult<(f64, f64, f64)> {
    let ids = |x: &PyReadonlyArray1<'_, i64>, what: &str| -> PyResult<Vec<usize>> {
        x.as_array()
            .iter()
            .map(|&v| {
                usize::try_from(v).map_err(|_| {
                    crate::conversion::to_py(Error::invalid(
                        what,
                        format!("{v} is not a group id (a whole number >= 0)"),
                    ))
                })
            })
            .collect()
    };
    let (p, r) = (
        ids(&pred, "predicted labels")?,
        ids(&reference, "reference labels")?,
    );
    let f = compute(py, || unfold_eval::f1_labels(&p, &r))?;
    Ok((f.recovery, f.relevance, f.f1))
}

/// `(distance, hamming, ipsen_mikhailov, nodes, exact_matching)` between two trees.
#[pyfunction]
pub(crate) fn trajectory_him(
    py: Python<'_>,
    pred_edges: PyReadonlyArray2<'_, f64>,
    ref_edges: PyReadonlyArray2<'_, f64>,
    gamma: f64,
    max_matching_steps: usize,
) -> PyResult<(f64, f64, f64, usize, bool)> {
    let p = triples(&pred_edges, "the predicted trajectory's edges");
    let r = triples(&ref_edges, "the reference trajectory's edges");
    let (p, r) = p
        .and_then(|p| Ok((p, r?)))
        .map_err(crate::conversion::to_py)?;
    let opts = HimOptions {
        gamma,
        max_matching_steps,
    };
    let h = compute(py, || unfold_eval::him(&p, &r, &opts))?;
    Ok((
        h.distance,
        h.hamming,
        h.ipsen_mikhailov,
        h.nodes,
        h.exact_matching,
    ))
}
