//! Posterior-regularised models (Li Wang's family: SPL, MPME, DRTree, DDRTree).
//!
//! The posterior of the embedding is regularised by a learned graph: expected-distance
//! constraints whose Lagrange multipliers weigh the candidate pairs (SPL, MPME), or a
//! spanning tree found by alternating minimisation (DRTree over the points, DDRTree over
//! centres). What all four share is [`PosteriorRegularised`]: the objective at the fit with
//! its named terms (kind `objective`, not a likelihood), the learned graph, the embedding
//! and how the fit ended.
//!
//! SPL and MPME also expose their concave dual over the pair weights ([`PairDual`]): the
//! dual, the box of the weights and the embedding read off the optimal weights;
//! [`maximise_dual`] solves any such dual by L-BFGS-B (`unfold-lbfgsb`).
//!
//! The matrix `diag(S 1) - S + shift I` of the weighted pairs ([`weighted_pairs`] fed to
//! [`unfold_graph::Laplacian`]) and [`pair_contrasts`], `Tr(G A_ij) = G_ii + G_jj - 2 G_ij`
//! (`A_ij` as in seed 001 §0), are the two kernels every dual here uses.

pub mod ddrtree;
pub mod drtree;
pub mod mpme;
pub mod spl;

use crate::method::{Field, Interval, Model, ParamSpec, Rule, Settings};
use crate::optimise::{maximise, Search};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Observer, Result, Stop};
use unfold_graph::NeighbourGraph;
use unfold_lbfgsb::LbfgsbOptions;

/// A fitted posterior-regularised model (SPL, MPME, DRTree, DDRTree): its objective with
/// named terms and the graph it learned, on top of what every fitted model gives
/// ([`Model`]: the embedding, how the fit converged, the model file).
pub trait PosteriorRegularised: Model {
    /// The objective at the fit with its named terms, kind
    /// [`unfold_core::EvidenceKind::Objective`] (SPL and MPME: the dual; DRTree and DDRTree:
    /// the minimised objective).
    fn objective(&self) -> Evidence {
        self.evidence()
    }

    /// The learned graph: the pairs with a non-zero weight (SPL, MPME), the spanning tree
    /// over the points (DRTree) or over the centres (DDRTree), weighted as the model
    /// weighs it.
    fn learned_graph(&self) -> Result<NeighbourGraph>;
}

/// The concave dual of SPL and MPME over graph weights (one per candidate pair), their
/// box, and the embedding from the weights (DESIGN.md's sketch of the posterior-regularised
/// trait).
pub trait PairDual {
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
    /// Optimal weights, one per pair of [`PairDual::pairs`].
    pub weights: Vec<f64>,
    /// Dual value at `weights`.
    pub value: f64,
    /// Projected-gradient infinity norm at `weights` (of the preconditioned search).
    pub projected_gradient_norm: f64,
}

/// Maximises the dual of `model` by L-BFGS-B from `start` (all zeros when `None`), through
/// [`crate::optimise::maximise`], each evaluation of the dual reported to `observer`, whose
/// stop ends the search with [`Error::Interrupted`].
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
pub fn maximise_dual<M: PairDual + ?Sized>(
    model: &M,
    start: Option<&[f64]>,
    scales: Option<&[f64]>,
    opts: &LbfgsbOptions,
    observer: &dyn Observer,
) -> Result<(DualSolution, Convergence)> {
    let m = model.pairs().len();
    let v0 = match start {
        Some(s) if s.len() != m => {
            return Err(Error::DimensionMismatch(format!(
                "the start has {} weights but the model has {m} pairs",
                s.len()
            )))
        }
        Some(s) => s.to_vec(),
        None => vec![0.0; m],
    };
    let search = Search {
        scales,
        per: 1.0,
        lbfgsb: opts.clone(),
        context: "L-BFGS-B on the dual",
    };
    let mut evaluations = 0;
    let best = maximise(
        |s: &[f64], g: &mut [f64]| {
            let value = model.dual(s, Some(g))?;
            evaluations += 1;
            observer.step(
                1,
                evaluations,
                &Evidence::new(EvidenceKind::Objective, value),
            )?;
            Ok(value)
        },
        &v0,
        &model.bounds(),
        &search,
        observer,
    )?;
    let solution = DualSolution {
        weights: best.x,
        value: best.value,
        projected_gradient_norm: best.projected_gradient_norm,
    };
    Ok((solution, best.convergence))
}

/// The tree `(a, b, squared length)` over `n` nodes as a graph with unit weights (the
/// graph DRTree and DDRTree learn).
pub(crate) fn unit_tree(n: usize, edges: &[(usize, usize, f64)]) -> Result<NeighbourGraph> {
    let unit: Vec<_> = edges.iter().map(|&(a, b, _)| (a, b, 1.0)).collect();
    NeighbourGraph::from_edges(n, &unit)
}

/// How an alternating minimisation (DRTree, DDRTree) ended: the objective after every
/// iteration, stopped by the relative-change `tolerance`, by `max_iterations`, or by the
/// `caller` ([`Observer::ended`]).
pub(crate) fn alternating_convergence(history: Vec<f64>, stop: Stop) -> Convergence {
    let stopped_by = match stop {
        Stop::AbsTol | Stop::RelTol => "tolerance",
        Stop::MaxIter => "max_iterations",
        Stop::Caller => "caller",
    };
    let converged = matches!(stop, Stop::AbsTol | Stop::RelTol);
    Convergence::iterative(history, converged, stopped_by)
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

/// The slack penalty `C > 0` of SPL and MPME (`f64::INFINITY`: hard constraints, no
/// slack), their parameter `C`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlackPenalty(pub f64);

/// The parameter `C` of SPL and MPME.
impl Field for SlackPenalty {
    fn field_specs(_: &'static str, _: &Rule, default: &Self) -> Vec<ParamSpec> {
        let rule = Rule::within(
            Interval::POSITIVE_OR_INF,
            "spl, mpme: the bound C on the dual variables (slack penalty; inf for hard \
             constraints)",
        );
        f64::field_specs("C", &rule, &default.0)
    }

    fn read_into(&mut self, _: &'static str, settings: &Settings) -> Result<()> {
        self.0.read_into("C", settings)
    }

    fn write(&self, _: &'static str, settings: &mut Settings) {
        self.0.write("C", settings);
    }
}

/// The help of the parameter `lambda` of MPME, DRTree and DDRTree.
pub const LAMBDA_HELP: &str = "mpme: the weight of the log-determinant; drtree: the tree \
     penalty; ddrtree: the weight of the tree term";

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_core::Silent;
    use unfold_graph::Laplacian;

    /// A separable concave dual `sum_p -(s_p - t_p)^2` with box `[0, 1]`: optimum `clip(t)`.
    struct Toy {
        pairs: Vec<(usize, usize)>,
        target: Vec<f64>,
    }

    impl PairDual for Toy {
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
            let (sol, convergence) =
                maximise_dual(&toy, None, scales, &LbfgsbOptions::default(), &Silent).unwrap();
            for (w, want) in sol.weights.iter().zip([0.0, 0.3, 1.0]) {
                assert!((w - want).abs() < 1e-8, "{w} vs {want}");
            }
            assert!(convergence.converged);
            assert_eq!(convergence.trace.len(), convergence.iterations);
        }
        assert!(
            maximise_dual(&toy, Some(&[0.0]), None, &LbfgsbOptions::default(), &Silent).is_err()
        );
        assert!(maximise_dual(
            &toy,
            None,
            Some(&[1.0, 0.0, 1.0]),
            &LbfgsbOptions::default(),
            &Silent
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

    /// The four models report through the shared trait: an objective with named terms that
    /// add up to it, a learned graph and a convergence whose trace ends at the objective.
    #[test]
    fn all_four_models_report_through_the_trait() {
        use crate::{DdrTreeParams, DrTreeParams, MpmeParams, SplParams};
        fn check(model: &dyn PosteriorRegularised, vertices: usize, tree: bool) {
            let objective = model.objective();
            assert_eq!(objective.kind, unfold_core::EvidenceKind::Objective);
            assert!(objective.terms.len() >= 2, "{objective:?}");
            let sum: f64 = objective.terms.iter().map(|t| t.1).sum();
            assert_eq!(sum, objective.value);
            let graph = model.learned_graph().unwrap();
            assert_eq!(graph.n(), vertices);
            if tree {
                assert_eq!(graph.n_edges(), vertices - 1);
            }
            let c = model.convergence();
            assert!(c.iterations > 0 && c.trace.len() == c.iterations);
        }
        let y = ddrtree::tests::branching(40, 3, 2);
        let spl = SplParams::new(2).k(6).gamma(1e-3).c(1e3).fit(&y).unwrap();
        check(&spl, 40, false);
        let mpme = MpmeParams::new(2).lambda(10.0).c(1.0).fit(&y).unwrap();
        check(&mpme, 40, false);
        let drtree = DrTreeParams::new(2, 0.5).fit(&y).unwrap();
        check(&drtree, 40, true);
        assert_eq!(
            drtree.convergence.trace.last(),
            Some(&drtree.objective().value)
        );
        let ddrtree = DdrTreeParams::new(2).fit(&y).unwrap();
        check(&ddrtree, ddrtree.centres.nrows(), true);
        assert_eq!(
            ddrtree.convergence.trace.last(),
            Some(&ddrtree.objective().value)
        );
    }
}
