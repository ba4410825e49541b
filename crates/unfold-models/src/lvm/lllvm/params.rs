//! The settings of an LL-LVM fit, declared once ([`LlLvmParams`]: the registry's parameters
//! and the options of the Rust API), the fits they start, and the comparison of graphs and
//! latent dimensions by the bounds of their restarts.

use super::{FactorisedProblem, LlLvm, LlLvmProblem};
use crate::method::{
    Checked, Choice, Declared, Interval, Param, ParamKind, ParamSpec, Rule, Value,
};
use crate::traits::check_fit_input;
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Observer, Result, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, Weighting};
use unfold_vem::VemOptions;

/// How the precision `alpha` of the prior on x is set in the M-step (spec §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum AlphaRule {
    /// Held fixed, as in the authors' final code (1e-3) and the paper's figures.
    Fixed(f64),
    /// Maximises the bound by the 1-D root find of §3.4, as the paper's text says.
    Optimise,
}

/// The word of [`AlphaRule::Optimise`] in the parameter `alpha`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AlphaWord {
    Optimise,
}

crate::choice!(AlphaWord { Optimise = "optimise" } aliases { "optimize" = Optimise });

/// The parameter `alpha`: a number (`fixed:VALUE` on the command line, the rule's range)
/// for [`AlphaRule::Fixed`], or the word `optimise`.
impl Param for AlphaRule {
    fn kind(rule: &Rule) -> ParamKind {
        ParamKind::RealOr(rule.range, AlphaWord::NAMES)
    }

    fn to_value(&self) -> Option<Value> {
        match self {
            AlphaRule::Fixed(alpha) => alpha.to_value(),
            AlphaRule::Optimise => AlphaWord::Optimise.to_value(),
        }
    }

    fn from_value(value: Option<&Value>) -> Option<Self> {
        match value {
            Some(Value::Real(alpha)) => Some(AlphaRule::Fixed(*alpha)),
            word => AlphaWord::from_value(word).map(|_| AlphaRule::Optimise),
        }
    }
}

/// The starting point of q(C) (and with it of EM).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LlLvmInit {
    /// The authors' start: covariance of q(C) equal to the prior covariance
    /// `(eps J J^T + Omega^{-1})^{-1}` and mean `randn(dy, n dx)` times it (§3.6).
    Random,
    /// A data-driven start: x from Laplacian eigenmaps on the same graph (scaled so that
    /// neighbour distances match those in y, plus a small seeded jitter), then q(C) from
    /// the model's own C-update given that x.
    Spectral,
}

crate::choice!(LlLvmInit { Random = "random", Spectral = "spectral" });

/// Preprocessing of the data before fitting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Preprocess {
    /// Subtract the mean point only (the model needs centred data; spec pitfall 10).
    Centre,
    /// Centre and divide by the largest absolute entry, as the authors' code does (the
    /// default). The model is not scale-invariant: alpha and epsilon are fixed constants, and
    /// on data with entries far above 1 EM can settle in the collapsed solution `C = 0`
    /// where every difference is noise (a 200-point Swiss roll with heights up to 10 does).
    CentreMaxAbs,
}

crate::choice!(Preprocess { CentreMaxAbs = "maxabs", Centre = "centre" });

/// The variational family of q(x) q(C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Posterior {
    /// The paper's: one joint Gaussian over all latent positions and one matrix normal over
    /// all maps, on dense (n dx)^2 covariances (`O(n^3)` per EM iteration).
    Full,
    /// One Gaussian per point and per map (`specs/lllvm_scale.md`) on sparse matrices: the
    /// exact bound at block-diagonal covariances, a fraction of a nat per point below the
    /// full family's.
    Factorised,
    /// [`Posterior::Full`] up to [`FULL_FAMILY_MAX_POINTS`] points where it fits in memory,
    /// [`Posterior::Factorised`] beyond.
    Auto,
}

crate::choice!(Posterior { Auto = "auto", Full = "full", Factorised = "factorised" } aliases { "factorized" = Factorised });

/// How the per-point family solves for the means of q(x) and q(C) on every EM iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MeanSolve {
    /// q(x)'s means by conjugate gradients on `Lam_x` (faster than the direct solve on every
    /// data set measured, `bench/results/lllvm_families.md`); q(C)'s by factorising `K_C`,
    /// or by conjugate gradients on `Lam_C` where that factor would not fit the memory
    /// limit or costs several times the operations (a graph of high local dimension): the
    /// default.
    Auto,
    /// Both by conjugate gradients, each product one solve with the graph's factor; they
    /// stop when the bound they leave unclaimed is below 1e-6 nats.
    Cg,
    /// Both by factorising their quasi-definite systems `K_x` (`n (dx + dy)` rows, its fill
    /// growing with `(dx + dy)^2`) and `K_C` with a fill-reducing ordering: the exact
    /// reference.
    Direct,
}

crate::choice!(MeanSolve { Auto = "auto", Cg = "cg", Direct = "direct" });

impl MeanSolve {
    fn auto() -> MeanSolve {
        MeanSolve::Auto
    }
}

/// The most points for which [`Posterior::Auto`] picks the full family.
pub const FULL_FAMILY_MAX_POINTS: usize = 2000;

crate::params! {
    /// Settings of an LL-LVM fit.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct LlLvmParams {
        /// Latent dimension dx (must be below the data dimension dy).
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// The neighbourhood graph (the paper: kNN, union symmetrisation).
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        pub alpha: AlphaRule = AlphaRule::Fixed(1e-3) => Rule::within(
            Interval::POSITIVE,
            "lllvm: precision of the prior on x: fixed:VALUE (the authors' code: fixed:1e-3) \
             or optimise (the paper's text)",
        ),
        /// The fixed constant of the C prior and the likelihood (spec pitfall 2).
        pub epsilon: f64 = 1e-3 => Rule::within(
            Interval::POSITIVE,
            "lllvm: the fixed epsilon of the prior on the maps and of the likelihood",
        ),
        /// The most EM iterations of one restart.
        pub max_iter: usize = 50 => Rule::at_least(1, "lllvm: the most EM iterations per restart"),
        /// Seeded restarts (the best final bound is kept); restart `r` starts from seed
        /// `seed + r`.
        pub restarts: usize = 1 => Rule::at_least(
            1,
            "lllvm: seeded restarts (seeds seed, seed + 1, ...); the best bound is kept",
        ),
        /// The start: from Laplacian eigenmaps (the default: the bound prefers it,
        /// `bench/results/lllvm_families.md`) or the authors' random one.
        pub init: LlLvmInit = LlLvmInit::Spectral => Rule::help(
            "lllvm: the start of q(C): from Laplacian eigenmaps (the default; a higher bound \
             than the random start on 106 of 120 seeded fits) or the authors' random one",
        ),
        /// Preprocessing of the data before fitting.
        pub scaling: Preprocess = Preprocess::CentreMaxAbs => Rule::help(
            "lllvm: centre the data and divide by its largest entry (the authors' code), or \
             only centre",
        ),
        /// The seed of the first restart.
        pub seed: u64 = 0 => Rule::help(ParamSpec::seed().help),
        /// The initial noise precision gamma.
        pub gamma0: f64 = 1.0,
        /// Stop EM when the bound changes by less than this between iterations (the
        /// authors' 1e-3; 0 disables).
        pub abs_tol: f64 = 1e-3,
        /// Stop EM when the bound changes by less than `rel_tol * |bound|` (0, the default,
        /// disables).
        pub rel_tol: f64 = 0.0,
        /// The variational family (the full one of the paper, or one Gaussian per point).
        #[serde(default = "Posterior::auto")]
        pub posterior: Posterior = Posterior::Auto => Rule::help(
            "lllvm: the variational family: full (the paper's joint Gaussians, O(n^3)), \
             factorised (one Gaussian per point, sparse; its bound is a little lower) or auto \
             (full up to 2000 points where it fits in memory)",
        ),
        /// How the per-point family solves for the means of q(x) and q(C).
        #[serde(default = "MeanSolve::auto")]
        pub mean_solve: MeanSolve = MeanSolve::Auto => Rule::help(
            "lllvm, per-point family: solve for the means of q(x) and q(C) by conjugate \
             gradients (cg, stopping 1e-6 nats short of the optimum at most), by factorising \
             their sparse systems (direct, the exact reference; q(x)'s fill grows with \
             (dx + dy)^2), or q(x)'s by conjugate gradients and q(C)'s by its factor unless \
             that would not fit the memory limit or cost several times more (auto)",
        ),
        /// The memory the fit may use (`None`: `MemoryLimit::from_env_or_machine`); a fit
        /// whose [`LlLvmParams::footprint`] exceeds it is refused before anything large is
        /// allocated.
        #[serde(default)]
        pub memory_limit: Option<unfold_core::MemoryLimit> = None,
    }
}

impl Posterior {
    fn auto() -> Posterior {
        Posterior::Auto
    }
}

impl LlLvmParams {
    /// The paper's settings (union kNN, `eps = 1e-3`, alpha fixed at 1e-3, `gamma0 = 1`, data
    /// centred and scaled to largest entry 1, at most 50 EM iterations with the absolute
    /// tolerance 1e-3 of their code, one restart with seed 0) but the start: the spectral
    /// one, which the bound prefers (`init(LlLvmInit::Random)` gives the authors').
    pub fn new(dim: usize, k: usize) -> Self {
        LlLvmParams {
            dim,
            graph: GraphSpec::knn(k),
            ..LlLvmParams::default()
        }
    }

    /// The options of variational EM: `max_iter`, `restarts`, `seed` and the tolerances.
    pub fn vem(&self) -> VemOptions {
        VemOptions {
            max_iter: self.max_iter,
            abs_tol: self.abs_tol,
            rel_tol: self.rel_tol,
            restarts: self.restarts,
            seed: self.seed,
            ..VemOptions::default()
        }
    }

    /// Fits LL-LVM on the rows of `y` with the kNN graph of [`LlLvmParams::graph`].
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<LlLvm> {
        self.fit_observed(y, &Silent)
    }

    /// [`LlLvmParams::fit`] reporting every EM iteration to `observer`.
    pub fn fit_observed(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<LlLvm> {
        self.clone().check()?.fit_observed(y, observer)
    }

    /// Fits LL-LVM on the rows of `y` with a given graph (its weights are ignored: the model
    /// uses the 0/1 adjacency).
    pub fn fit_graph(&self, y: &DMatrix<f64>, graph: &NeighbourGraph) -> Result<LlLvm> {
        self.fit_graph_observed(y, graph, &Silent)
    }

    /// [`LlLvmParams::fit_graph`] reporting every EM iteration to `observer`.
    pub fn fit_graph_observed(
        &self,
        y: &DMatrix<f64>,
        graph: &NeighbourGraph,
        observer: &dyn Observer,
    ) -> Result<LlLvm> {
        self.clone().check()?.fit_graph_observed(y, graph, observer)
    }

    /// The final bounds of every restart for each graph on the same data (spec §4.1–4.2):
    /// the k scan, or a graph with and without a suspected short-circuit edge. Compare the
    /// means: the bound includes the graph-dependent constants, as it must.
    pub fn compare_graphs(
        &self,
        y: &DMatrix<f64>,
        graphs: &[NeighbourGraph],
    ) -> Result<Vec<RestartBounds>> {
        let params = self.clone().check()?;
        graphs.iter().map(|g| params.restart_bounds(y, g)).collect()
    }

    /// The final bounds of every restart for each latent dimension on the kNN graph of
    /// [`LlLvmParams::graph`] (spec §4.3). Every dimension is fitted in one family: for
    /// [`Posterior::Auto`], the one the largest dimension gets, so that no bound of one
    /// family is ranked against one of the other.
    pub fn compare_dims(&self, y: &DMatrix<f64>, dims: &[usize]) -> Result<Vec<RestartBounds>> {
        let max = dims.iter().copied().max().unwrap_or(1);
        check_fit_input(y, max, "LL-LVM")?;
        let (_, graph) = self.graph.build(y, Weighting::Binary, "LL-LVM", &Silent)?;
        let posterior = LlLvmParams {
            dim: max,
            ..self.clone()
        }
        .check()?
        .family(y.nrows(), y.ncols());
        dims.iter()
            .map(|&dim| {
                LlLvmParams {
                    dim,
                    posterior,
                    ..self.clone()
                }
                .check()?
                .restart_bounds(y, &graph)
            })
            .collect()
    }
}

impl Checked<LlLvmParams> {
    /// [`LlLvmParams::fit_observed`] with the parameters checked.
    pub fn fit_observed(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<LlLvm> {
        check_fit_input(y, self.dim, "LL-LVM")?;
        let (_, graph) = self.graph.build(y, Weighting::Binary, "LL-LVM", observer)?;
        self.fit_graph_observed(y, &graph, observer)
    }

    /// [`LlLvmParams::fit_graph_observed`] with the parameters checked.
    pub fn fit_graph_observed(
        &self,
        y: &DMatrix<f64>,
        graph: &NeighbourGraph,
        observer: &dyn Observer,
    ) -> Result<LlLvm> {
        let k = self.graph.k;
        match self.family(y.nrows(), y.ncols()) {
            Posterior::Factorised => {
                let problem = FactorisedProblem::new(y, graph, self)?;
                let fit = unfold_vem::fit(&problem, &self.vem(), observer)?;
                let restart_bounds = fit.runs.iter().map(|r| r.evidence.value).collect();
                let best = fit.into_best();
                let evidence = problem.reported_bound(&best.posterior, &best.hyper, self)?;
                Ok(problem.into_fitted(best, evidence, restart_bounds, k))
            }
            _ => {
                let problem = LlLvmProblem::new(y, graph, self)?;
                let fit = unfold_vem::fit(&problem, &self.vem(), observer)?;
                let restart_bounds = fit.runs.iter().map(|r| r.evidence.value).collect();
                Ok(problem.into_fitted(fit.into_best(), restart_bounds, k))
            }
        }
    }

    /// The family a fit on `n` points of dimension `dy` uses: the one asked for, and for
    /// [`Posterior::Auto`] the full family up to [`FULL_FAMILY_MAX_POINTS`] points where
    /// its dense covariances fit in memory, the per-point family otherwise.
    pub fn family(&self, n: usize, dy: usize) -> Posterior {
        match self.posterior {
            Posterior::Auto if n <= FULL_FAMILY_MAX_POINTS && self.check_memory(n, dy).is_ok() => {
                Posterior::Full
            }
            Posterior::Auto => Posterior::Factorised,
            family => family,
        }
    }

    /// The final bound of every restart of a fit on `graph`, in the family of
    /// [`Checked::family`]. Bounds of the two families differ by the per-point family's
    /// gap (a fraction of a nat per point): compare graphs within one family.
    pub fn restart_bounds(
        &self,
        y: &DMatrix<f64>,
        graph: &NeighbourGraph,
    ) -> Result<RestartBounds> {
        match self.family(y.nrows(), y.ncols()) {
            Posterior::Factorised => {
                let problem = FactorisedProblem::new(y, graph, self)?;
                RestartBounds::from_fit(&unfold_vem::fit(&problem, &self.vem(), &Silent)?)
            }
            _ => {
                let problem = LlLvmProblem::new(y, graph, self)?;
                RestartBounds::from_fit(&unfold_vem::fit(&problem, &self.vem(), &Silent)?)
            }
        }
    }
}

/// The final bound of each restart of one fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RestartBounds {
    pub bounds: Vec<f64>,
}

impl RestartBounds {
    fn from_fit<P, H>(fit: &unfold_vem::Fit<P, H>) -> Result<Self> {
        Ok(RestartBounds {
            bounds: fit.runs.iter().map(|r| r.evidence.value).collect(),
        })
    }

    /// The mean over restarts (the paper's criterion).
    pub fn mean(&self) -> f64 {
        self.bounds.iter().sum::<f64>() / self.bounds.len() as f64
    }

    /// The best restart's bound.
    pub fn best(&self) -> f64 {
        self.bounds
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }
}
