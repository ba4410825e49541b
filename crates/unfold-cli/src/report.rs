//! The JSON report of a fit (DESIGN.md: method, n, p, dim, k, seconds, iterations,
//! converged, evidence, trace).

use serde::Serialize;
use unfold_core::Evidence;
use unfold_models::registry::FitReport;

#[derive(Serialize, Debug)]
pub struct EvidenceReport {
    pub kind: String,
    /// `null` when the method has no probabilistic score.
    pub value: Option<f64>,
    pub terms: Vec<(String, f64)>,
}

impl From<&Evidence> for EvidenceReport {
    fn from(e: &Evidence) -> Self {
        EvidenceReport {
            kind: e.kind.as_str().to_string(),
            value: e.value.is_finite().then_some(e.value),
            terms: e.terms.clone(),
        }
    }
}

#[derive(Serialize, Debug)]
pub struct Report {
    pub method: String,
    pub n: usize,
    pub p: usize,
    pub dim: usize,
    /// Neighbours per point, for graph-based methods.
    pub k: Option<usize>,
    pub seconds: f64,
    /// Iterations of an iterative fit (0 for closed-form fits).
    pub iterations: usize,
    pub converged: bool,
    /// What stopped the fit: `closed_form`, a tolerance (`pgtol`, `factr`, `tolerance`) or
    /// a limit (`max_iterations`, ...).
    pub stopped_by: String,
    pub evidence: EvidenceReport,
    /// Objective per iteration, where the fit is iterative.
    pub trace: Vec<f64>,
    /// The model's notes (DDRTree's ordering: root cell, branch points, states).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<(String, String)>,
    /// What the fit changed to go on (a kNN graph joined across its components), as
    /// printed on standard error.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Report {
    /// The report of a fit of `dim` coordinates to `n` points x `p` features, with `k`
    /// neighbours where the method uses them.
    pub fn new(
        fit: &FitReport,
        n: usize,
        p: usize,
        dim: usize,
        k: Option<usize>,
        notes: Vec<(String, String)>,
        warnings: Vec<String>,
    ) -> Self {
        Report {
            method: fit.method.clone(),
            n,
            p,
            dim,
            k,
            seconds: fit.seconds,
            iterations: fit.iterations,
            converged: fit.converged,
            stopped_by: fit.stopped_by.clone(),
            evidence: (&fit.evidence).into(),
            trace: fit.trace.clone(),
            notes,
            warnings,
        }
    }
}
