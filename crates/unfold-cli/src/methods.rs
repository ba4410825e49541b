//! From command-line settings to a fitted model.

use crate::args::{
    CompatKind, GraphKind, InitKind, Method, MethodArgs, OrderKind, PreprocessKind, ScalingKind,
    WeightKind,
};
use nalgebra::DMatrix;
use unfold_core::Result;
use unfold_eval::{gplvm_score, GplvmScoreOptions};
use unfold_graph::{NeighbourGraph, Symmetrisation, Weighting};
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
    let graph = graph_spec(a);
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
        Method::Meu => FittedModel::Meu(meu_params(a).fit(y)?),
        Method::Alle => FittedModel::Alle(
            AlleParams::new(a.dim, a.k)
                .reg(a.reg)
                .scaling(scaling(a))
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
                scaling: scaling(a),
            }
            .fit(y)?,
        ),
        Method::Drill => FittedModel::Drill(fit_drill(a, graph, scaling(a), y)?),
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

/// The kNN graph of the settings.
fn graph_spec(a: &MethodArgs) -> GraphSpec {
    GraphSpec {
        k: a.k,
        symmetrisation: match a.graph {
            GraphKind::Union => Symmetrisation::Union,
            GraphKind::Mutual => Symmetrisation::Mutual,
        },
    }
}

fn scaling(a: &MethodArgs) -> FieldScaling {
    match a.scaling {
        ScalingKind::Unit => FieldScaling::UnitVariance,
        ScalingKind::Eigen => FieldScaling::Eigenvalue,
    }
}

/// MEU's settings from the command line.
fn meu_params(a: &MethodArgs) -> MeuParams {
    let mut params = MeuParams::new(a.dim, a.k)
        .gamma(a.gamma.unwrap_or(1e-4))
        .scaling(scaling(a))
        .pgtol(a.pgtol);
    params.graph = graph_spec(a);
    params
}

/// The methods whose fitted models project new points (`FittedModel::out_of_sample`).
pub const PROJECT: &str = "pca, cmds, kpca, lle, isomap, meu, alle, lle-pl or lllvm";

/// Whether the method's fitted models project new points (see [`PROJECT`]).
pub fn projects(method: Method) -> bool {
    matches!(
        method,
        Method::Pca
            | Method::Cmds
            | Method::Kpca
            | Method::Lle
            | Method::Isomap
            | Method::Meu
            | Method::Alle
            | Method::LlePl
            | Method::Lllvm
    )
}

/// The methods that can fit on a given graph ([`fit_on_graph`]).
pub const TAKE_GRAPHS: &str = "lllvm, meu and le";

/// Whether the method can fit on a given graph ([`fit_on_graph`]).
pub fn takes_graph(method: Method) -> bool {
    matches!(method, Method::Lllvm | Method::Meu | Method::Le)
}

/// Fits the method described by `a` on a given graph instead of its kNN graph (for the
/// methods that take one: lllvm, meu, le). LE keeps the graph's weights, or with
/// `--weights heat` puts heat-kernel weights on its edges (`--sigma`, by default the mean
/// edge length).
pub fn fit_on_graph(a: &MethodArgs, y: &DMatrix<f64>, g: &NeighbourGraph) -> Result<FittedModel> {
    match a.method {
        Method::Lllvm => Ok(FittedModel::LlLvm(
            lllvm_params(a, GraphSpec::knn(a.k)).fit_graph(y, g)?,
        )),
        Method::Meu => Ok(FittedModel::Meu(meu_params(a).fit_graph(y, g)?)),
        Method::Le => {
            let params = LaplacianEigenmapsParams::new(a.dim, a.k);
            let model = match a.weights {
                WeightKind::Binary => params.fit_graph(y, g)?,
                WeightKind::Heat => {
                    let sigma = match a.sigma {
                        Some(s) => s,
                        None => mean_edge_length(y, g)?,
                    };
                    params.fit_graph(y, &g.reweighted(y, Weighting::Heat { sigma })?)?
                }
            };
            Ok(FittedModel::LaplacianEigenmaps(model))
        }
        other => Err(unfold_core::Error::invalid(
            "method",
            format!(
                "{} builds its own kNN graph; epsilon-ball and given graphs are compared with {TAKE_GRAPHS}",
                name(other)
            ),
        )),
    }
}

/// The mean Euclidean length of the edges of `g` on the points `y`.
fn mean_edge_length(y: &DMatrix<f64>, g: &NeighbourGraph) -> Result<f64> {
    let edges = g.edges();
    if edges.is_empty() {
        return Err(unfold_core::Error::invalid(
            "graph",
            "it has no edges; give a connected graph",
        ));
    }
    let total: f64 = edges
        .iter()
        .map(|&(i, j, _)| (y.row(i) - y.row(j)).norm())
        .sum();
    Ok(total / edges.len() as f64)
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
