//! The JSON report of a fit (DESIGN.md: method, n, p, dim, k, seconds, iterations,
//! converged, evidence, trace).

use serde::Serialize;
use unfold_core::Evidence;

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
    /// Iterations of an iterative fit (0 for closed-form spectral methods).
    pub iterations: usize,
    pub converged: bool,
    pub evidence: EvidenceReport,
    /// Objective per iteration, where the fit is iterative.
    pub trace: Vec<f64>,
}
