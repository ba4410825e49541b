//! From command-line settings to a fitted model.

use crate::args::{GraphKind, Method, MethodArgs, WeightKind};
use nalgebra::DMatrix;
use unfold_core::Result;
use unfold_graph::Symmetrisation;
use unfold_models::{
    CmdsParams, FittedModel, GraphSpec, IsomapParams, KernelPcaParams, LaplacianEigenmapsParams,
    LeWeights, LleParams, PcaParams,
};

/// The method's name on the command line.
pub fn name(method: Method) -> &'static str {
    match method {
        Method::Pca => "pca",
        Method::Cmds => "cmds",
        Method::Kpca => "kpca",
        Method::Le => "le",
        Method::Lle => "lle",
        Method::Isomap => "isomap",
    }
}

/// Whether the method builds a neighbourhood graph (and so uses `k`).
pub fn uses_graph(method: Method) -> bool {
    matches!(method, Method::Le | Method::Lle | Method::Isomap)
}

/// Fits the method described by `a` to the rows of `y`.
pub fn fit(a: &MethodArgs, y: &DMatrix<f64>) -> Result<FittedModel> {
    let graph = GraphSpec {
        k: a.k,
        symmetrisation: match a.graph {
            GraphKind::Union => Symmetrisation::Union,
            GraphKind::Mutual => Symmetrisation::Mutual,
        },
    };
    Ok(match a.method {
        Method::Pca => FittedModel::Pca(PcaParams::new(a.dim).fit(y)?),
        Method::Cmds => FittedModel::Cmds(CmdsParams::new(a.dim).fit(y)?),
        Method::Kpca => FittedModel::KernelPca(
            KernelPcaParams {
                dim: a.dim,
                gamma: a.gamma,
            }
            .fit(y)?,
        ),
        Method::Le => FittedModel::LaplacianEigenmaps(
            LaplacianEigenmapsParams {
                dim: a.dim,
                graph,
                weights: match a.weights {
                    WeightKind::Binary => LeWeights::Binary,
                    WeightKind::Heat => LeWeights::Heat { sigma: a.sigma },
                },
            }
            .fit(y)?,
        ),
        Method::Lle => FittedModel::Lle(
            LleParams {
                dim: a.dim,
                graph,
                reg: a.reg,
            }
            .fit(y)?,
        ),
        Method::Isomap => FittedModel::Isomap(IsomapParams { dim: a.dim, graph }.fit(y)?),
    })
}
