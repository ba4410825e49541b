//! Algorithm 2: one loop for both conventions. An iteration is the tree and assignment
//! steps ([`Problem::tree_step`]: (28) and (32)) and the `{W, Z, C}` step
//! ([`Problem::update_wzc`]: Proposition 5); the conventions differ only in which objective
//! they record and where ([`Compat::Paper`]: the paper's `f` after the update, which must
//! not increase; [`Compat::R`]: the R package's before it) and share the stopping rule, a
//! relative change below `tol`.

use super::problem::{Problem, State};
use super::tree::{spanning_tree, tree_energy, tree_laplacian};
use super::Compat;
use nalgebra::DMatrix;
use unfold_core::{Error, Evidence, EvidenceKind, Observer, Result, Stop};
use unfold_graph::tree_order;
use unfold_linalg::soft_assign::Assignment;

/// How a fit's loop ended.
pub(super) struct Run {
    pub(super) state: State,
    /// The tree of the last iteration's tree step.
    pub(super) edges: Vec<(usize, usize, f64)>,
    /// The recorded objective, one value per iteration.
    pub(super) history: Vec<f64>,
    /// The terms of the last objective in `history`.
    pub(super) terms: Vec<(String, f64)>,
    /// What ended the loop: the stopping rule ([`Stop::RelTol`]), the iteration limit, or
    /// the caller.
    pub(super) stop: Stop,
}

/// Steps 1 and 2 of an iteration: the tree over the centres, its Laplacian, and the
/// assignments with the centres numbered along the tree.
pub(super) struct TreeStep {
    pub(super) edges: Vec<(usize, usize, f64)>,
    pub(super) lap: DMatrix<f64>,
    pub(super) assign: Assignment,
}

/// The objective a convention records, and what it carries between iterations.
enum Objective {
    /// The paper's `f` (31), at the updated state with the iteration's tree and
    /// assignments.
    Paper,
    /// The R package's, at the state before the update: its residual term at that state
    /// (from the start, then from each update) and the tree and entropic terms.
    R { residual: f64 },
}

impl Problem<'_> {
    /// Algorithm 2 from `state` (the PCA start and the initial centres) under the
    /// conventions `compat`, for at most `max_iter` iterations, each recorded objective
    /// reported to `observer` as start `restart`'s, whose stop ends the loop with
    /// [`Error::Interrupted`].
    ///
    /// Each iteration's assignments hand their buffers to the next iteration's
    /// ([`Assignment::from_points`]), so the row storage of `R` is allocated once per fit.
    pub(super) fn run(
        &self,
        mut state: State,
        compat: Compat,
        max_iter: usize,
        tol: f64,
        restart: usize,
        observer: &dyn Observer,
    ) -> Result<Run> {
        let mut objective = match compat {
            Compat::Paper => Objective::Paper,
            // The start is `Z = Y W`, so `Y^T Z = Y^T Y W`.
            Compat::R => Objective::R {
                residual: self.r_residual_term(&state.z, &state.w, &(&self.yty * &state.w))?,
            },
        };
        let mut trace = Trace::new(compat, tol, restart, observer);
        let mut spare = None;
        let mut edges = Vec::new();
        for _ in 0..max_iter {
            let step = self.tree_step(&state, spare.take())?;
            if let Objective::R { residual } = objective {
                let terms = vec![
                    ("residual".into(), residual),
                    (
                        "tree".into(),
                        self.lambda * tree_energy(&state.c, &step.edges),
                    ),
                    ("assignment".into(), self.gamma * step.assign.soft_min()),
                ];
                if let Some(stop) = trace.stops(terms)? {
                    return Ok(trace.ended(state, step.edges, stop));
                }
            }
            let with_residual = matches!(objective, Objective::R { .. });
            let (next, next_residual) = self.update_wzc(&step.lap, &step.assign, with_residual)?;
            state = next;
            match &mut objective {
                Objective::R { residual } => {
                    *residual = next_residual.expect("requested with the update");
                }
                Objective::Paper => {
                    let terms = self.objective_terms(&state, &step.edges, &step.assign);
                    if let Some(stop) = trace.stops(terms)? {
                        return Ok(trace.ended(state, step.edges, stop));
                    }
                }
            }
            spare = Some(step.assign);
            edges = step.edges;
        }
        Ok(trace.ended(state, edges, Stop::MaxIter))
    }

    /// Steps 1 and 2 at `state`: the minimum spanning tree of the centres (28), its
    /// Laplacian, and the assignments (32) with the centres in the tree's depth-first order
    /// ([`tree_order`]), on the buffers of `spare` (an earlier iteration's assignments).
    pub(super) fn tree_step(&self, state: &State, spare: Option<Assignment>) -> Result<TreeStep> {
        let k = state.c.nrows();
        let edges = spanning_tree(&state.c)?;
        let lap = tree_laplacian(&edges, k);
        let order = tree_order(&edges, k)?;
        let assign = Assignment::from_points(&state.z, &state.c, self.sigma, order, spare);
        Ok(TreeStep { edges, lap, assign })
    }
}

/// The recorded objective, the stopping rule and the observer told of each value.
struct Trace<'o> {
    history: Vec<f64>,
    /// The terms of the last value of `history`.
    terms: Vec<(String, f64)>,
    tol: f64,
    /// Whether the objective is the paper's `f`, which exact block minimisation cannot
    /// increase (the R package's can).
    monotone: bool,
    /// The start this loop fits, as the observer hears it.
    restart: usize,
    observer: &'o dyn Observer,
}

impl<'o> Trace<'o> {
    fn new(compat: Compat, tol: f64, restart: usize, observer: &'o dyn Observer) -> Trace<'o> {
        Trace {
            history: Vec::new(),
            terms: Vec::new(),
            tol,
            monotone: compat == Compat::Paper,
            restart,
            observer,
        }
    }

    /// Records an iteration's objective (the sum of `terms`); [`Stop::RelTol`] when its
    /// relative change from the previous iteration's is below `tol`, else [`Stop::Caller`]
    /// when the observer ends the fit ([`Observer::ended`]).
    ///
    /// # Errors
    /// For the paper's objective, an increase beyond round-off ([`OBJECTIVE_SLACK`]);
    /// [`Error::Interrupted`] when the observer asks to stop.
    fn stops(&mut self, terms: Vec<(String, f64)>) -> Result<Option<Stop>> {
        let f = sum_terms(&terms);
        let prev = self.history.last().copied();
        if let Some(prev) = prev.filter(|_| self.monotone) {
            if f > prev + OBJECTIVE_SLACK * prev.abs().max(1.0) {
                return Err(Error::numerical(
                    "DDRTree",
                    format!(
                        "the objective increased from {prev} to {f} at iteration {}, which \
                         exact block minimisation cannot do; the block systems are badly \
                         conditioned: increase sigma or rescale the data",
                        self.history.len() + 1
                    ),
                ));
            }
        }
        self.history.push(f);
        self.terms = terms;
        self.observer.step(
            self.restart,
            self.history.len(),
            &Evidence::new(EvidenceKind::Objective, f),
        )?;
        if prev.is_some_and(|prev| relative_change(prev, f) < self.tol) {
            Ok(Some(Stop::RelTol))
        } else {
            Ok(self.observer.ended().then_some(Stop::Caller))
        }
    }

    /// The loop's result at `state` with the tree `edges`.
    fn ended(self, state: State, edges: Vec<(usize, usize, f64)>, stop: Stop) -> Run {
        Run {
            state,
            edges,
            history: self.history,
            terms: self.terms,
            stop,
        }
    }
}

/// The sum of the terms in order, as the objective adds them.
pub(super) fn sum_terms(terms: &[(String, f64)]) -> f64 {
    terms[1..].iter().fold(terms[0].1, |f, t| f + t.1)
}

/// Allowed increase of the objective between iterations, relative to its size (round-off).
const OBJECTIVE_SLACK: f64 = 1e-9;

fn relative_change(prev: f64, next: f64) -> f64 {
    (next - prev).abs() / prev.abs()
}
