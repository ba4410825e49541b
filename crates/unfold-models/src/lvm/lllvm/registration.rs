//! LL-LVM in the method registry ([`crate::registry`]).

use super::{LlLvm, LlLvmParams};
use crate::method::{decode, Declared, Family, FitData, Method, MethodInfo, Model, Settings};
use unfold_core::{Convergence, EvidenceKind, Observer, Result};

/// The locally linear latent variable model.
pub struct LlLvmMethod;

impl Method for LlLvmMethod {
    fn info(&self) -> MethodInfo {
        MethodInfo::new(
            "lllvm",
            Family::LatentVariable,
            "the locally linear latent variable model, fitted by \
             variational EM",
        )
        .params(LlLvmParams::specs())
        .evidence(EvidenceKind::Elbo)
        .projects()
        .takes_graph()
    }

    fn fit(
        &self,
        data: &FitData<'_>,
        s: &Settings,
        observer: &dyn Observer,
    ) -> Result<Box<dyn Model>> {
        let params = LlLvmParams::read_checked(s)?;
        Ok(Box::new(match data.graph {
            None => params.fit_observed(data.y, observer)?,
            Some(g) => params.fit_graph_observed(data.y, g, observer)?,
        }))
    }

    fn decode(&self, payload: &[u8]) -> Result<Box<dyn Model>> {
        decode::<LlLvm>(payload)
    }
}

impl Model for LlLvm {
    fn method(&self) -> &'static str {
        "lllvm"
    }

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
        square("the covariance of q(x)", &self.sigma_x, ndx)?;
        square("the covariance of q(C)", &self.sigma_c, ndx)?;
        graph("the graph", &self.graph, n)?;
        neighbours(self.k, n)?;
        positive("the scale", self.scale)?;
        positive("epsilon", self.epsilon)?;
        positive("alpha", self.hyper.alpha)?;
        positive("gamma", self.hyper.gamma)
    }

    fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
        Some(self)
    }

    fn convergence(&self) -> Convergence {
        self.convergence.clone()
    }
}
