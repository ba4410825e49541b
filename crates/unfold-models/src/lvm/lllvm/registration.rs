//! LL-LVM in the method registry ([`crate::registry`]).

use super::{LlLvm, LlLvmParams};
use crate::method::{Checked, Family, FitData, MethodInfo, Model, Registered};
use unfold_core::{Convergence, EvidenceKind, Observer, Result};

impl Registered for LlLvm {
    type Params = LlLvmParams;

    fn info() -> MethodInfo {
        MethodInfo::new(
            "lllvm",
            Family::LatentVariable,
            "the locally linear latent variable model, fitted by \
             variational EM",
        )
        .evidence(EvidenceKind::Elbo)
        .projects()
        .takes_graph()
    }

    fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
        let y = data.y.matrix();
        match data.graph {
            None => p.fit_observed(&y, observer),
            Some(g) => p.fit_graph_observed(&y, g, observer),
        }
    }
}

impl Model for LlLvm {
    fn validate(&self) -> Result<()> {
        use crate::method::validate::*;
        matrix("the embedding", &self.coords, None, None)?;
        let (n, dx) = self.coords.shape();
        let ndx = n
            .checked_mul(dx)
            .ok_or_else(|| corrupt(format!("{n} x {dx} latent values overflow")))?;
        matrix("the training points", &self.y, Some(n), None)?;
        let dy = self.y.ncols();
        vector("the mean", &self.mean, Some(dy))?;
        matrix("the mean of q(C)", &self.mu_c, Some(dy), Some(ndx))?;
        for (name, c) in [("q(x)", &self.sigma_x), ("q(C)", &self.sigma_c)] {
            if !c.has_shape_for(n, dx) {
                let (r, k) = c.stored().shape();
                return Err(corrupt(format!(
                    "the covariance of {name} is {r} x {k}, neither {ndx} x {ndx} nor {dx} x {ndx}"
                )));
            }
            matrix("a covariance", c.stored(), None, None)?;
        }
        if self.sigma_x.is_per_point() != self.sigma_c.is_per_point() {
            return Err(corrupt(
                "the covariances of q(x) and q(C) are of different families",
            ));
        }
        graph("the graph", &self.graph, n)?;
        neighbours(self.k, n)?;
        positive("the scale", self.scale)?;
        positive("epsilon", self.epsilon)?;
        positive("alpha", self.hyper.alpha)?;
        positive("gamma", self.hyper.gamma)
    }

    /// The variational family, whose bounds are compared only with each other.
    fn notes(&self) -> Vec<(String, String)> {
        let family = match self.posterior() {
            super::Posterior::Factorised => {
                "factorised (one Gaussian per point; the reported bound frees q(x) or q(C) \
                 across points, whichever gives more of those whose system's factor fits the \
                 memory limit, named by its last term)"
            }
            _ => "full (joint Gaussians)",
        };
        vec![("posterior".into(), family.into())]
    }

    fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
        Some(self)
    }

    fn convergence(&self) -> Convergence {
        self.convergence.clone()
    }
}
