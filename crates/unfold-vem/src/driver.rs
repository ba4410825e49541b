//! The variational EM loop, its stopping rules and parallel seeded restarts.

use crate::LatentVariableModel;
use rayon::prelude::*;
use unfold_core::{seeded_rng, Error, Evidence, EvidenceKind, Observer, Result, Stop};

/// Settings of a variational EM fit.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VemOptions {
    /// The most EM iterations of one run (each: all E-steps, the M-step, the bound).
    pub max_iter: usize,
    /// Stop when the bound changes by less than this between iterations (0 disables).
    pub abs_tol: f64,
    /// Stop when the bound changes by less than `rel_tol * |bound|` (0 disables).
    pub rel_tol: f64,
    /// Number of seeded restarts; restart `r` draws its start from seed `seed + r`.
    pub restarts: usize,
    /// Seed of the first restart.
    pub seed: u64,
    /// A decrease of the bound larger than `decrease_tol * max(1, |bound|)` is an error: EM
    /// never lowers its bound, so such a decrease is a wrong update, not noise.
    pub decrease_tol: f64,
}

impl Default for VemOptions {
    fn default() -> Self {
        VemOptions {
            max_iter: 100,
            abs_tol: 1e-3,
            rel_tol: 1e-9,
            restarts: 1,
            seed: 0,
            decrease_tol: 1e-9,
        }
    }
}

impl VemOptions {
    fn check(&self) -> Result<()> {
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        if self.restarts == 0 {
            return Err(Error::invalid("restarts", "must be at least 1"));
        }
        for (name, v) in [
            ("abs_tol", self.abs_tol),
            ("rel_tol", self.rel_tol),
            ("decrease_tol", self.decrease_tol),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::invalid(
                    name,
                    format!("must be a finite number >= 0, got {v}"),
                ));
            }
        }
        Ok(())
    }
}

/// One EM run: the final posterior and hyperparameters with the bound after every iteration.
#[derive(Clone, Debug)]
pub struct Run<P, H> {
    pub posterior: P,
    pub hyper: H,
    /// The bound after the last iteration, with its terms.
    pub evidence: Evidence,
    /// The bound after each iteration (iteration `t` is entry `t - 1`).
    pub trace: Vec<Evidence>,
    pub stop: Stop,
    /// The seed the start was drawn from (`None` for [`run_from`] with a given start).
    pub seed: Option<u64>,
}

impl<P, H> Run<P, H> {
    /// Number of iterations run.
    pub fn iterations(&self) -> usize {
        self.trace.len()
    }

    /// Whether a tolerance was met (not `max_iter`, nor the caller's end).
    pub fn converged(&self) -> bool {
        matches!(self.stop, Stop::AbsTol | Stop::RelTol)
    }

    /// The bound values of the trace.
    pub fn bounds(&self) -> Vec<f64> {
        self.trace.iter().map(|e| e.value).collect()
    }
}

/// All restarts of a fit; [`Fit::best`] is the one with the highest final bound.
#[derive(Clone, Debug)]
pub struct Fit<P, H> {
    pub runs: Vec<Run<P, H>>,
    best: usize,
}

impl<P, H> Fit<P, H> {
    /// The restart with the highest final bound (the lowest seed among ties).
    pub fn best(&self) -> &Run<P, H> {
        &self.runs[self.best]
    }

    /// Consumes the fit and returns its best run.
    pub fn into_best(mut self) -> Run<P, H> {
        self.runs.swap_remove(self.best)
    }

    /// The mean final bound over restarts (the paper's criterion for comparing graphs).
    pub fn mean_bound(&self) -> f64 {
        self.runs.iter().map(|r| r.evidence.value).sum::<f64>() / self.runs.len() as f64
    }
}

/// Runs EM from a given start `(q, h)`; `restart` only labels the observer's calls.
pub fn run_from<M: LatentVariableModel>(
    model: &M,
    mut q: M::Posterior,
    mut h: M::Hyper,
    options: &VemOptions,
    restart: usize,
    observer: &dyn Observer,
) -> Result<Run<M::Posterior, M::Hyper>> {
    options.check()?;
    let mut trace: Vec<Evidence> = Vec::new();
    let mut stop = Stop::MaxIter;
    for iteration in 1..=options.max_iter {
        // A stop asked between the steps ends the iteration there.
        model.e_step(&mut q, &h)?;
        observer.checkpoint()?;
        model.m_step(&q, &mut h)?;
        observer.checkpoint()?;
        let evidence = model.elbo(&q, &h)?;
        check_bound(&evidence, iteration)?;
        observer.step(restart, iteration, &evidence)?;
        let previous = trace.last().map(|e| e.value);
        let value = evidence.value;
        trace.push(evidence);
        if let Some(prev) = previous {
            let change = value - prev;
            if change < -options.decrease_tol * prev.abs().max(1.0) {
                return Err(Error::numerical(
                    "variational EM",
                    format!(
                        "the bound decreased from {prev} to {value} at iteration {iteration}; \
                         EM never lowers its bound, so an update is wrong (please report this)"
                    ),
                ));
            }
            if change.abs() < options.abs_tol {
                stop = Stop::AbsTol;
                break;
            }
            if change.abs() < options.rel_tol * value.abs() {
                stop = Stop::RelTol;
                break;
            }
        }
        if observer.ended() {
            stop = Stop::Caller;
            break;
        }
    }
    let evidence = trace.last().cloned().expect("max_iter >= 1 was checked");
    observer.finished(restart, stop, &evidence);
    Ok(Run {
        posterior: q,
        hyper: h,
        evidence,
        trace,
        stop,
        seed: None,
    })
}

fn check_bound(evidence: &Evidence, iteration: usize) -> Result<()> {
    if evidence.kind != EvidenceKind::Elbo {
        return Err(Error::numerical(
            "variational EM",
            format!(
                "the model reported evidence of kind {} where a lower bound (elbo) is required",
                evidence.kind
            ),
        ));
    }
    if !evidence.value.is_finite() {
        let terms: Vec<String> = evidence
            .terms
            .iter()
            .map(|(name, v)| format!("{name} = {v}"))
            .collect();
        return Err(Error::numerical(
            "variational EM",
            format!(
                "the bound is not finite at iteration {iteration} ({}); the data may need \
                 scaling or the graph may be degenerate",
                terms.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Runs `options.restarts` seeded restarts in parallel and keeps them all; the best is the
/// one with the highest final bound. The result does not depend on the thread count.
pub fn fit<M: LatentVariableModel>(
    model: &M,
    options: &VemOptions,
    observer: &dyn Observer,
) -> Result<Fit<M::Posterior, M::Hyper>> {
    options.check()?;
    let runs: Vec<Run<M::Posterior, M::Hyper>> = (0..options.restarts)
        .into_par_iter()
        .map(|r| {
            let seed = options.seed.wrapping_add(r as u64);
            let mut rng = seeded_rng(seed);
            let (q, h) = model.init(&mut rng)?;
            let mut run = run_from(model, q, h, options, r, observer)?;
            run.seed = Some(seed);
            Ok(run)
        })
        .collect::<Result<_>>()?;
    let mut best = 0;
    for (i, run) in runs.iter().enumerate() {
        if run.evidence.value > runs[best].evidence.value {
            best = i;
        }
    }
    Ok(Fit { runs, best })
}
