//! Posterior-regularised models (Li Wang's family: SPL, MPME, DRTree, DDRTree).
//!
//! The posterior of the embedding is regularised by expected-distance constraints; their
//! Lagrange multipliers are the weights of a learned graph, one per candidate pair
//! `(i, j)`, `i > j`. A model exposes its concave dual over those weights, the box of the
//! weights and the embedding read off the optimal weights; [`maximise_dual`] solves any
//! such model by L-BFGS-B (`unfold-lbfgsb`).
//!
//! The matrix `diag(S 1) - S + shift I` of the weighted pairs ([`weighted_pairs`] fed to
//! [`unfold_graph::Laplacian`]) and [`pair_contrasts`], `Tr(G A_ij) = G_ii + G_jj - 2 G_ij`
//! (`A_ij` as in seed 001 §0), are the two kernels every dual here uses.

pub mod ddrtree;
pub mod drtree;
pub mod mpme;
pub mod spl;

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Evidence, Result};
use unfold_graph::NeighbourGraph;
use unfold_lbfgsb::{minimize, LbfgsbOptions, Status};

/// A posterior-regularised model: a concave dual objective over graph weights (one per
/// candidate pair), their box, and the embedding from the weights (DESIGN.md).
pub trait PosteriorRegularised {
    /// The candidate pairs `(i, j)` with `i > j`, one dual variable each, in order.
    fn pairs(&self) -> &[(usize, usize)];

    /// The dual objective at weights `s` (to be MAXIMISED); when `grad` is given, writes a
    /// (super)gradient into it. Fails on a wrong length or a numerical breakdown.
    fn dual(&self, s: &[f64], grad: Option<&mut [f64]>) -> Result<f64>;

    /// The box `(lower, upper)` of every weight (`upper` may be `f64::INFINITY`).
    fn bounds(&self) -> Vec<(f64, f64)>;

    /// The embedding (n x d) read off the weights `s`.
    fn embed(&self, s: &[f64]) -> Result<DMatrix<f64>>;

    /// The dual value at `s` with its named terms, labelled [`unfold_core::EvidenceKind::Objective`]
    /// (a dual objective, not a likelihood).
    fn evidence(&self, s: &[f64]) -> Result<Evidence>;
}

/// The result of maximising a dual.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DualSolution {
    /// Optimal weights, one per pair of [`PosteriorRegularised::pairs`].
    pub weights: Vec<f64>,
    /// Dual value at `weights`.
    pub value: f64,
    /// Optimiser iterations.
    pub iterations: usize,
    /// Projected-gradient infinity norm at `weights`.
    pub projected_gradient_norm: f64,
    /// True when the optimiser met its tolerance (not an iteration or line-search stop).
    pub converged: bool,
}

/// Maximises the dual of `model` by L-BFGS-B from `start` (all zeros when `None`).
///
/// With `scales`, the search runs on `v_p = s_p / scales[p]` (box and gradient scaled to
/// match): a diagonal preconditioner. For log-det duals the curvature along `s_p` near the
/// optimum is about `phi_p^2 / (2d)`, so `scales[p] = d / phi_p` equalises it across pairs
/// (as MEU does, `docs/methods/meu.md`), and the L-BFGS-B tolerance `pgtol` then applies to
/// the relative residual `(d/2)(E_p / phi_p - 1)` of an expected-distance constraint.
///
/// # Errors
/// A wrong start or scale length, a non-positive scale, invalid options, or a non-finite
/// dual (the model's own error is returned when it caused the breakdown).
pub fn maximise_dual<M: PosteriorRegularised + ?Sized>(
    model: &M,
    start: Option<&[f64]>,
    scales: Option<&[f64]>,
    opts: &LbfgsbOptions,
) -> Result<DualSolution> {
    let m = model.pairs().len();
    let unit = vec![1.0; m];
    let scales = scales.unwrap_or(&unit);
    if scales.len() != m {
        return Err(Error::DimensionMismatch(format!(
            "{} scales given for {m} pairs",
            scales.len()
        )));
    }
    if let Some(p) = scales.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(Error::invalid(
            "scales",
            format!("scale {p} must be finite and > 0, got {}", scales[p]),
        ));
    }
    let v0 = match start {
        Some(s) if s.len() != m => {
            return Err(Error::DimensionMismatch(format!(
                "the start has {} weights but the model has {m} pairs",
                s.len()
            )))
        }
        Some(s) => s.iter().zip(scales).map(|(s, c)| s / c).collect(),
        None => vec![0.0; m],
    };
    let bounds: Vec<(f64, f64)> = model
        .bounds()
        .iter()
        .zip(scales)
        .map(|(&(l, u), c)| (l / c, u / c))
        .collect();
    let mut failure: Option<Error> = None;
    let mut s = vec![0.0; m];
    let report = minimize(
        |v: &[f64], g: &mut [f64]| {
            for ((s, v), c) in s.iter_mut().zip(v).zip(scales) {
                *s = v * c;
            }
            match model.dual(&s, Some(&mut *g)) {
                Ok(value) => {
                    g.iter_mut().zip(scales).for_each(|(g, c)| *g *= -c);
                    -value
                }
                Err(e) => {
                    failure.get_or_insert(e);
                    f64::NAN
                }
            }
        },
        &v0,
        &bounds,
        opts,
    );
    if let Some(e) = failure {
        return Err(e);
    }
    let report = report.map_err(|e| Error::numerical("L-BFGS-B on the dual", e.to_string()))?;
    Ok(DualSolution {
        value: -report.f,
        iterations: report.iterations,
        projected_gradient_norm: report.projected_gradient_norm,
        converged: matches!(
            report.status,
            Status::ConvergedPgtol | Status::ConvergedFactr
        ),
        weights: report.x.iter().zip(scales).map(|(v, c)| v * c).collect(),
    })
}

/// The preconditioner `factor / phi_p` of [`maximise_dual`] for distances `phi`; a zero
/// distance (duplicate points) takes the smallest positive one (1 if there is none).
pub fn inverse_distance_scales(phi: &[f64], factor: f64) -> Vec<f64> {
    let floor = phi
        .iter()
        .copied()
        .filter(|&p| p > 0.0)
        .fold(f64::INFINITY, f64::min);
    phi.iter()
        .map(|&p| {
            if p > 0.0 {
                factor / p
            } else if floor.is_finite() {
                factor / floor
            } else {
                1.0
            }
        })
        .collect()
}

/// The learned graph: the pairs with a non-zero weight, weighted by it.
pub fn learned_graph(n: usize, pairs: &[(usize, usize)], s: &[f64]) -> Result<NeighbourGraph> {
    let edges: Vec<(usize, usize, f64)> = pairs
        .iter()
        .zip(s)
        .filter(|(_, &w)| w > 0.0)
        .map(|(&(i, j), &w)| (j, i, w))
        .collect();
    NeighbourGraph::from_edges(n, &edges)
}

/// The pairs with a non-zero weight as edges `(i, j, s_ij)`, in order: with
/// [`unfold_graph::Laplacian`] they give the learned graph's `diag(S 1) - S` (scaled,
/// shifted, dense or sparse; a zero weight adds nothing to the dense matrix and is left
/// out of the sparse pattern).
pub fn weighted_pairs<'a>(
    pairs: &'a [(usize, usize)],
    s: &'a [f64],
) -> impl Iterator<Item = (usize, usize, f64)> + Clone + 'a {
    pairs
        .iter()
        .zip(s)
        .filter(|(_, &w)| w != 0.0)
        .map(|(&(i, j), &w)| (i, j, w))
}

/// `Tr(G A_ij) = G_ii + G_jj - 2 G_ij` for every pair: the derivative of `Tr(G Q)` along a
/// pair weight of `Q = diag(S 1) - S + shift I`.
pub fn pair_contrasts(g: &DMatrix<f64>, pairs: &[(usize, usize)]) -> Vec<f64> {
    pairs
        .iter()
        .map(|&(i, j)| g[(i, i)] + g[(j, j)] - 2.0 * g[(i, j)])
        .collect()
}

/// Fails unless `s` has one weight per pair.
pub(crate) fn check_weights(s: &[f64], m: usize) -> Result<()> {
    if s.len() != m {
        return Err(Error::DimensionMismatch(format!(
            "{} weights given for {m} pairs",
            s.len()
        )));
    }
    if let Some(p) = s.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(
            "weights",
            format!("weight {p} is not finite ({})", s[p]),
        ));
    }
    Ok(())
}

/// The settings every dual of this family shares: the slack penalty `C > 0` (infinity for
/// hard constraints) and an embedding dimension of at least 1.
pub(crate) fn check_slack_and_dim(c: f64, dim: usize) -> Result<()> {
    if c.is_nan() || c <= 0.0 {
        return Err(Error::invalid(
            "C",
            format!("the slack penalty must be > 0 (or infinity), got {c}"),
        ));
    }
    if dim == 0 {
        return Err(Error::invalid(
            "dim",
            "the embedding dimension must be >= 1",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_graph::Laplacian;

    /// A separable concave dual `sum_p -(s_p - t_p)^2` with box `[0, 1]`: optimum `clip(t)`.
    struct Toy {
        pairs: Vec<(usize, usize)>,
        target: Vec<f64>,
    }

    impl PosteriorRegularised for Toy {
        fn pairs(&self) -> &[(usize, usize)] {
            &self.pairs
        }
        fn dual(&self, s: &[f64], grad: Option<&mut [f64]>) -> Result<f64> {
            check_weights(s, self.pairs.len())?;
            if let Some(g) = grad {
                for ((g, s), t) in g.iter_mut().zip(s).zip(&self.target) {
                    *g = -2.0 * (s - t);
                }
            }
            Ok(-s
                .iter()
                .zip(&self.target)
                .map(|(s, t)| (s - t).powi(2))
                .sum::<f64>())
        }
        fn bounds(&self) -> Vec<(f64, f64)> {
            vec![(0.0, 1.0); self.pairs.len()]
        }
        fn embed(&self, s: &[f64]) -> Result<DMatrix<f64>> {
            Ok(DMatrix::from_column_slice(s.len(), 1, s))
        }
        fn evidence(&self, s: &[f64]) -> Result<Evidence> {
            Ok(Evidence::new(
                unfold_core::EvidenceKind::Objective,
                self.dual(s, None)?,
            ))
        }
    }

    #[test]
    fn maximise_dual_respects_box_and_scales() {
        let toy = Toy {
            pairs: vec![(1, 0), (2, 0), (2, 1)],
            target: vec![-0.5, 0.3, 4.0],
        };
        for scales in [None, Some(&[10.0, 0.1, 3.0][..])] {
            let sol = maximise_dual(&toy, None, scales, &LbfgsbOptions::default()).unwrap();
            for (w, want) in sol.weights.iter().zip([0.0, 0.3, 1.0]) {
                assert!((w - want).abs() < 1e-8, "{w} vs {want}");
            }
            assert!(sol.converged);
        }
        assert!(maximise_dual(&toy, Some(&[0.0]), None, &LbfgsbOptions::default()).is_err());
        assert!(maximise_dual(
            &toy,
            None,
            Some(&[1.0, 0.0, 1.0]),
            &LbfgsbOptions::default()
        )
        .is_err());
    }

    #[test]
    fn precision_matches_laplacian_and_contrasts() {
        let pairs = [(1, 0), (2, 1), (3, 0)];
        let s = [0.5, 2.0, 1.5];
        let q = Laplacian::new(4)
            .shift(0.25)
            .dense(weighted_pairs(&pairs, &s));
        let l = Laplacian::new(4)
            .sparse(weighted_pairs(&pairs, &s))
            .to_dense();
        assert!((&q - &l - DMatrix::from_diagonal_element(4, 4, 0.25)).amax() < 1e-15);
        // Tr(Q A_ij) = Q_ii + Q_jj - 2 Q_ij.
        let c = pair_contrasts(&q, &pairs);
        assert!((c[0] - (q[(1, 1)] + q[(0, 0)] - 2.0 * q[(1, 0)])).abs() < 1e-15);
        assert!(((l.row_sum()).amax()) < 1e-15);
    }
}
