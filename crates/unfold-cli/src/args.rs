//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use unfold_models::AlphaRule;

#[derive(Parser, Debug)]
#[command(
    name = "unfold",
    version,
    about = "Probabilistic spectral dimensionality reduction"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Fit every method on a bundled data set; write plots and a summary table.
    Demo(DemoArgs),
    /// Fit one method to a CSV file and write the embedding, a report, a model file.
    Fit(FitArgs),
    /// Place new points into the embedding of a saved model.
    Project(ProjectArgs),
    /// Compare a model's evidence over neighbourhood sizes, graphs, latent dimensions and
    /// restarts; write the table and a plot of the evidence against k.
    Select(SelectArgs),
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Directory for the plots and the summary.
    #[arg(long, default_value = "unfold-demo")]
    pub out: PathBuf,
    /// Number of Swiss roll points.
    #[arg(long, default_value_t = 1000)]
    pub n: usize,
    /// Neighbours per point.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Seed of the data generator.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    Pca,
    Cmds,
    Kpca,
    Le,
    Lle,
    Isomap,
    Meu,
    Alle,
    #[value(name = "lle-pl")]
    LlePl,
    Drill,
    Mvu,
    Lllvm,
    Spl,
    Mpme,
    Drtree,
    Ddrtree,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphKind {
    Union,
    Mutual,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WeightKind {
    Binary,
    Heat,
}

/// Options shared by `fit` and `demo`: which method, and its settings.
#[derive(Args, Debug, Clone)]
pub struct MethodArgs {
    /// The method to fit.
    #[arg(long, value_enum)]
    pub method: Method,
    /// Latent dimension.
    #[arg(long, default_value_t = 2)]
    pub dim: usize,
    /// Neighbours per point (graph-based methods).
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Symmetrisation of the kNN graph.
    #[arg(long, value_enum, default_value_t = GraphKind::Union)]
    pub graph: GraphKind,
    /// Seed for every random choice.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Kernel PCA: RBF precision in exp(-gamma |y - y'|^2) (default 1/p). MEU: precision
    /// of the base density, L + gamma I (default 1e-4; 0 for the pseudo-inverse). SPL:
    /// the weight of the graph term (default 1e-3). DDRTree: gamma (default 10).
    #[arg(long)]
    pub gamma: Option<f64>,
    /// Laplacian eigenmaps: edge weights.
    #[arg(long, value_enum, default_value_t = WeightKind::Binary)]
    pub weights: WeightKind,
    /// Laplacian eigenmaps: heat kernel width (default: mean kNN distance). DDRTree: the
    /// soft-assignment bandwidth sigma (default 1e-3).
    #[arg(long)]
    pub sigma: Option<f64>,
    /// LLE, ALLE, lle-pl: regulariser of the local Gram matrix, relative to its trace.
    #[arg(long, default_value_t = 1e-3)]
    pub reg: f64,
    /// MEU, ALLE, lle-pl, DRILL: coordinates with unit variance (the author's code) or
    /// scaled by the square roots of the eigenvalues of H K H.
    #[arg(long, value_enum, default_value_t = ScalingKind::Unit)]
    pub scaling: ScalingKind,
    /// MEU: stop when the largest projected gradient entry (of the scaled multipliers) is
    /// at most this.
    #[arg(long, default_value_t = 1e-5)]
    pub pgtol: f64,
    /// ALLE: order of the points (parents come later).
    #[arg(long, value_enum, default_value_t = OrderKind::Random)]
    pub ordering: OrderKind,
    /// lle-pl: fix every precision m_ii to 1 (standard LLE) instead of estimating it.
    #[arg(long)]
    pub unit_precision: bool,
    /// DRILL: L1 penalty on the precision (glasso convention on S = Y Y^T / p; default
    /// 0.1 times the mean diagonal of S). Give several, comma-separated, to pick the best
    /// by the GP-LVM likelihood score.
    #[arg(long, value_delimiter = ',')]
    pub rho: Vec<f64>,
    /// DRILL: all pairs of points as neighbours (L1 alone picks the structure).
    #[arg(long)]
    pub all_pairs: bool,
    /// MVU: solve in the basis of this many bottom Laplacian eigenvectors (the approximation
    /// of Weinberger et al. 2006, for n above the exact solver's limit) instead of exactly.
    #[arg(long)]
    pub mvu_basis: Option<usize>,
    /// SPL, MPME: the bound C on the dual variables (`inf` for none; default: SPL 1e3, MPME
    /// inf).
    #[arg(long = "C")]
    pub c: Option<f64>,
    /// MPME: the weight lambda of the log-determinant (default 1); DRTree: the tree
    /// penalty (default 1); DDRTree: lambda (default 5 N, the R package's).
    #[arg(long)]
    pub lambda: Option<f64>,
    /// DDRTree: number of centres K (default N, the paper's; large data need K < N).
    #[arg(long)]
    pub ncenters: Option<usize>,
    /// DDRTree: the paper's model (centred, objective checked) or the R package's
    /// conventions.
    #[arg(long, value_enum, default_value_t = CompatKind::Paper)]
    pub compat: CompatKind,
    /// LL-LVM: the precision alpha of the prior on x, `fixed:VALUE` (the authors' code:
    /// fixed:1e-3) or `optimise` (the paper's text).
    #[arg(long, default_value = "fixed:1e-3", value_parser = parse_alpha)]
    pub alpha: AlphaRule,
    /// LL-LVM: the fixed epsilon of the prior on the maps and of the likelihood.
    #[arg(long, default_value_t = 1e-3)]
    pub epsilon: f64,
    /// LL-LVM: the most EM iterations per restart.
    #[arg(long, default_value_t = 50)]
    pub max_iter: usize,
    /// LL-LVM: seeded restarts (seeds --seed, --seed + 1, ...); the best bound is kept.
    #[arg(long, default_value_t = 1)]
    pub restarts: usize,
    /// LL-LVM: the start of q(C): the authors' random one or from Laplacian eigenmaps.
    #[arg(long, value_enum, default_value_t = InitKind::Random)]
    pub init: InitKind,
    /// LL-LVM: centre the data and divide by its largest entry (the authors' code), or
    /// only centre.
    #[arg(long, value_enum, default_value_t = PreprocessKind::MaxAbs)]
    pub preprocess: PreprocessKind,
}

/// `fixed:VALUE` or `optimise`.
fn parse_alpha(s: &str) -> Result<AlphaRule, String> {
    match s {
        "optimise" | "optimize" => Ok(AlphaRule::Optimise),
        _ => match s.strip_prefix("fixed:").map(str::parse::<f64>) {
            Some(Ok(v)) if v > 0.0 && v.is_finite() => Ok(AlphaRule::Fixed(v)),
            _ => Err(format!(
                "expected `fixed:VALUE` with VALUE > 0 or `optimise`, got `{s}`"
            )),
        },
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScoreKind {
    Evidence,
    Gplvm,
    Trustworthiness,
    Heldout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompatKind {
    Paper,
    R,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InitKind {
    Random,
    Spectral,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PreprocessKind {
    #[value(name = "maxabs")]
    MaxAbs,
    Centre,
}

impl MethodArgs {
    /// The settings the command line gives for `method` with the flags `extra` (e.g.
    /// `["--k", "7"]`) and defaults elsewhere.
    pub fn parse_with(method: &str, extra: &[&str]) -> Self {
        Self::try_parse_with(method, extra).expect("the demo passes valid method flags")
    }

    /// [`MethodArgs::parse_with`] for flags a user gave, with clap's message on an error.
    pub fn try_parse_with(method: &str, extra: &[&str]) -> Result<Self, String> {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            m: MethodArgs,
        }
        let head = ["unfold", "--method", method];
        Wrapper::try_parse_from(head.iter().chain(extra))
            .map(|w| w.m)
            .map_err(|e| e.to_string())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScalingKind {
    Unit,
    Eigen,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OrderKind {
    /// Along the first principal component.
    Pc,
    /// A random permutation from --seed.
    Random,
}

#[derive(Args, Debug)]
pub struct FitArgs {
    #[command(flatten)]
    pub method: MethodArgs,
    /// Input CSV: one point per row, optional header row.
    #[arg(long)]
    pub input: PathBuf,
    /// A column holding labels rather than features (header name or 0-based index).
    #[arg(long)]
    pub label_column: Option<String>,
    /// Output CSV of the embedding (header x1,...,xQ; input row order).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Save the fitted model here (for `unfold project`).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Write a JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write an SVG scatter plot of the first two coordinates here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write the model's graph as a CSV edge list `i,j,weight` here (`unfold select
    /// --graphs` reads it): the kNN graph it was fitted on, the graph SPL or MPME learned
    /// (weighted by the dual variables), or DRILL's learned structure (the non-zero
    /// entries of its precision, weighted by `-Lambda_ij`).
    #[arg(long)]
    pub graph_out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ProjectArgs {
    /// A model saved by `unfold fit --save`.
    #[arg(long)]
    pub model: PathBuf,
    /// CSV of new points with the training data's features.
    #[arg(long)]
    pub input: PathBuf,
    /// A column of the input holding labels, to ignore.
    #[arg(long)]
    pub label_column: Option<String>,
    /// Output CSV of the projected coordinates.
    #[arg(long)]
    pub out: PathBuf,
    /// Output CSV of the per-axis variances of the projected points (models with a
    /// conditional distribution: meu, alle, lle-pl, lllvm).
    #[arg(long)]
    pub variances: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SelectArgs {
    /// The method to compare settings of (one that reports evidence: lllvm, meu, alle,
    /// lle-pl, drill, le, lle, ...).
    #[arg(long, value_enum)]
    pub method: Method,
    /// Input CSV: one point per row, optional header row.
    #[arg(long)]
    pub input: PathBuf,
    /// A column holding labels rather than features.
    #[arg(long)]
    pub label_column: Option<String>,
    /// Neighbourhood sizes: a range `5..12` (inclusive) or a list `5,7,9`.
    #[arg(long, default_value = "5..12")]
    pub k: String,
    /// Latent dimensions, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "2")]
    pub dim: Vec<usize>,
    /// Symmetrisations of the kNN graph, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "union")]
    pub graph: Vec<GraphKind>,
    /// Compare epsilon-ball graphs of these radii instead of kNN graphs (methods that fit
    /// on a given graph: lllvm).
    #[arg(long, value_delimiter = ',', conflicts_with = "graphs")]
    pub radius: Vec<f64>,
    /// Compare these graphs instead of kNN graphs: CSV edge lists `i,j` (0-based rows),
    /// e.g. a graph learned by DRILL or MPME (methods that fit on a given graph: lllvm).
    #[arg(long, value_delimiter = ',')]
    pub graphs: Vec<PathBuf>,
    /// Seeded restarts per setting (seeds seed, seed + 1, ...).
    #[arg(long, default_value_t = 1)]
    pub restarts: usize,
    /// Seed of the first restart.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// What ranks the candidates: the model's own evidence, or an external score of the
    /// embedding for any model: the GP-LVM log-likelihood score of the data given the
    /// embedding (Lawrence 2012's metric), trustworthiness with 10 neighbours, or
    /// `heldout`: the log predictive density of left-out points (`--holdout`), projected by
    /// the model fitted without them, under the GP-LVM score's Gaussian process.
    #[arg(long, value_enum, default_value_t = ScoreKind::Evidence)]
    pub score: ScoreKind,
    /// Fraction of the points left out for `--score heldout` (the same seeded split for
    /// every candidate).
    #[arg(long, default_value_t = 0.1)]
    pub holdout: f64,
    /// Further settings of the method, as `unfold fit` takes them, in one string (e.g.
    /// `--method-args "--max-iter 200 --preprocess centre"` for lllvm).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub method_args: String,
    /// Output CSV, one row per candidate (default: printed).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// SVG plot of the evidence against k (one line per restart, the best k marked).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// JSON with every trial and the summary per setting.
    #[arg(long)]
    pub report: Option<PathBuf>,
}
