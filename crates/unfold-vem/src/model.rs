//! The contract of a latent variable model fitted by variational EM (DESIGN.md). The
//! driver in `unfold-vem` runs any model that implements it: initialisation, E-steps,
//! M-step, the bound after each M-step, convergence, restarts and observers.

use unfold_core::{Evidence, Result, Rng};

/// A latent variable model fitted by variational EM: a variational posterior `q` over the
/// latent variables and hyperparameters `h`, with a lower bound on the log evidence that
/// no E-step or M-step may decrease.
pub trait LatentVariableModel: Sync {
    /// The variational posterior (e.g. the means and covariances of q(x) and q(C)).
    type Posterior: Clone + Send;
    /// The hyperparameters fitted in the M-step.
    type Hyper: Clone + Send;

    /// A starting point drawn from `rng` (the same seed gives the same start).
    fn init(&self, rng: &mut Rng) -> Result<(Self::Posterior, Self::Hyper)>;
    /// Updates the posterior with the hyperparameters fixed (all E-steps of one iteration).
    fn e_step(&self, q: &mut Self::Posterior, h: &Self::Hyper) -> Result<()>;
    /// Updates the hyperparameters with the posterior fixed.
    fn m_step(&self, q: &Self::Posterior, h: &mut Self::Hyper) -> Result<()>;
    /// The evidence lower bound with its terms, of kind [`unfold_core::EvidenceKind::Elbo`].
    fn elbo(&self, q: &Self::Posterior, h: &Self::Hyper) -> Result<Evidence>;
}
