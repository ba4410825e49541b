//! From command-line settings to a fitted model.

use crate::args::{
    CompatKind, GraphKind, InitKind, Method, MethodArgs, OrderKind, PreprocessKind, ScalingKind,
    WeightKind,
};
use nalgebra::DMatrix;
use unfold_core::Result;
use unfold_eval::{gplvm_score, GplvmScoreOptions};
use unfold_graph::{NeighbourGraph, Symmetrisation};
use unfold_models::{
    AlleParams, CmdsParams, Compat, DdrTreeParams, DrTreeParams, DrillParams, Embedding,
    FieldScaling, FittedModel, GraphSpec, IsomapParams, KernelPcaParams, LaplacianEigenmapsParams,
    LeWeights, LlLvmInit, LlLvmParams, LleParams, LlePlParams, MeuParams, MpmeParams, MvuParams,
    Ordering, PcaParams, PrecisionRule, Preprocess, SplParams,
};
use unfold_vem::Observer;

/// The method's name on the command line.
pub fn name(method: Method) -> &'static str {
    match method {
        Method::Pca => "pca",
        Method::Cmds => "cmds",
        Method::Kpca => "kpca",
        Method::Le => "le",
        Method::Lle => "lle",
        Method::Isomap => "isomap",
        Method::Meu => "meu",
        Method::Alle => "alle",
        Method::LlePl => "lle-pl",
        Method::Drill => "drill",
        Method::Mvu => "mvu",
        Method::Lllvm => "lllvm",
        Method::Spl => "spl",
        Method::Mpme => "mpme",
        Method::Drtree => "drtree",
        Method::Ddrtree => "ddrtree",
    }
}

/// Whether the method builds a neighbourhood graph (and so uses `k`).
pub fn uses_graph(method: Method) -> bool {
    !matches!(
        method,
        Method::Pca | Method::Cmds | Method::Kpca | Method::Mpme | Method::Drtree | Method::Ddrtree
    )
}

/// Fits the method described by `a` to the rows of `y`; iterative fits report their
/// iterations to `observer`.
pub fn fit(a: &MethodArgs, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<FittedModel> {
    let graph = GraphSpec {
        k: a.k,
        symmetrisation: match a.graph {
            GraphKind::Union => Symmetrisation::Union,
            GraphKind::Mutual => Symmetrisation::Mutual,
        },
    };
    let scaling = match a.scaling {
        ScalingKind::Unit => FieldScaling::UnitVariance,
        ScalingKind::Eigen => FieldScaling::Eigenvalue,
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
        Method::Meu => {
            let mut params = MeuParams::new(a.dim, a.k)
                .gamma(a.gamma.unwrap_or(1e-4))
                .scaling(scaling)
                .pgtol(a.pgtol);
            params.graph = graph;
            FittedModel::Meu(params.fit(y)?)
        }
        Method::Alle => FittedModel::Alle(
            AlleParams::new(a.dim, a.k)
                .reg(a.reg)
                .scaling(scaling)
                .ordering(match a.ordering {
                    OrderKind::Pc => Ordering::FirstPrincipalComponent,
                    OrderKind::Random => Ordering::Random(a.seed),
                })
                .fit(y)?,
        ),
        Method::LlePl => FittedModel::LlePl(
            LlePlParams {
                dim: a.dim,
                graph,
                reg: a.reg,
                precision: if a.unit_precision {
                    PrecisionRule::Unit
                } else {
                    PrecisionRule::Estimated
                },
                scaling,
            }
            .fit(y)?,
        ),
        Method::Drill => FittedModel::Drill(fit_drill(a, graph, scaling, y)?),
        Method::Mvu => {
            let mut params = MvuParams::new(a.dim, a.k);
            params.graph = graph;
            if let Some(b) = a.mvu_basis {
                params = params.basis(b);
            }
            FittedModel::Mvu(params.fit(y)?)
        }
        Method::Lllvm => FittedModel::LlLvm(lllvm_params(a, graph).fit_observed(y, observer)?),
        Method::Spl => {
            let mut params = SplParams::new(a.dim);
            params.graph = graph;
            params.gamma = a.gamma.unwrap_or(params.gamma);
            params.c = a.c.unwrap_or(params.c);
            FittedModel::Spl(params.fit(y)?)
        }
        Method::Mpme => {
            let mut params = MpmeParams::new(a.dim);
            params.lambda = a.lambda.unwrap_or(params.lambda);
            params.c = a.c.unwrap_or(params.c);
            FittedModel::Mpme(params.fit(y)?)
        }
        Method::Drtree => {
            FittedModel::DrTree(DrTreeParams::new(a.dim, a.lambda.unwrap_or(1.0)).fit(y)?)
        }
        Method::Ddrtree => {
            let mut params = DdrTreeParams::new(a.dim);
            params.lambda = a.lambda;
            params.sigma = a.sigma.unwrap_or(params.sigma);
            params.gamma = a.gamma.unwrap_or(params.gamma);
            params.ncenters = a.ncenters;
            params.compat = match a.compat {
                CompatKind::Paper => Compat::Paper,
                CompatKind::R => Compat::R,
            };
            FittedModel::DdrTree(params.fit(y)?)
        }
    })
}

/// Whether the method can fit on a given graph ([`fit_on_graph`]).
pub fn takes_graph(method: Method) -> bool {
    matches!(method, Method::Lllvm)
}

/// Fits the method described by `a` on a given graph instead of its kNN graph (for the
/// methods that take one: lllvm).
pub fn fit_on_graph(a: &MethodArgs, y: &DMatrix<f64>, g: &NeighbourGraph) -> Result<FittedModel> {
    match a.method {
        Method::Lllvm => Ok(FittedModel::LlLvm(
            lllvm_params(a, GraphSpec::knn(a.k)).fit_graph(y, g)?,
        )),
        other => Err(unfold_core::Error::invalid(
            "method",
            format!(
                "{} builds its own kNN graph; epsilon-ball and given graphs are compared with lllvm",
                name(other)
            ),
        )),
    }
}

/// LL-LVM's settings from the command line.
fn lllvm_params(a: &MethodArgs, graph: GraphSpec) -> LlLvmParams {
    let mut params = LlLvmParams::new(a.dim, a.k)
        .alpha(a.alpha)
        .epsilon(a.epsilon)
        .init(match a.init {
            InitKind::Random => LlLvmInit::Random,
            InitKind::Spectral => LlLvmInit::Spectral,
        })
        .preprocess(match a.preprocess {
            PreprocessKind::MaxAbs => Preprocess::CentreMaxAbs,
            PreprocessKind::Centre => Preprocess::Centre,
        })
        .restarts(a.restarts, a.seed)
        .max_iter(a.max_iter);
    params.graph = graph;
    params
}

/// DRILL with the given penalty, or the best of several by the GP-LVM likelihood score.
fn fit_drill(
    a: &MethodArgs,
    graph: GraphSpec,
    scaling: FieldScaling,
    y: &DMatrix<f64>,
) -> Result<unfold_models::Drill> {
    let mut params = DrillParams::new(a.dim, a.k, 0.0).scaling(scaling);
    params.graph = (!a.all_pairs).then_some(graph);
    let rhos = if a.rho.is_empty() {
        vec![0.1 * mean_second_moment(y)]
    } else {
        a.rho.clone()
    };
    if let [rho] = rhos[..] {
        params.rho = rho;
        return params.fit(y);
    }
    let (best, scores) = params.fit_best(y, &rhos, |d| {
        Ok(gplvm_score(d.coords(), y, &GplvmScoreOptions::default())?.log_likelihood)
    })?;
    for (rho, s) in scores {
        eprintln!("drill: rho {rho:.3e}: GP-LVM score {s:.3}");
    }
    Ok(best)
}

/// The mean diagonal of `S = Y_c Y_c^T / p`: the mean squared norm of a centred point over p.
pub fn mean_second_moment(y: &DMatrix<f64>) -> f64 {
    let (n, p) = (y.nrows() as f64, y.ncols() as f64);
    let total: f64 = y
        .column_iter()
        .map(|c| {
            let m = c.mean();
            c.iter().map(|v| (v - m).powi(2)).sum::<f64>()
        })
        .sum();
    total / (n * p)
}
