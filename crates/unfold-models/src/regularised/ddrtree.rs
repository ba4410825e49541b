//! Discriminative dimensionality reduction via learning a tree, DDRTree (Li Wang; spec
//! `spl_drtree_ddrtree.md` §6, Algorithm 2).
//!
//! With data `Y` (N x D), projection `W` (D x d, `W^T W = I`), latent points `Z` (N x d),
//! centres `C` (K x d), a spanning tree `S` over the centres (Laplacian `L`) and soft
//! assignments `R` (N x K, rows on the simplex), DDRTree minimises (31):
//!
//! ```text
//! f = ||Y - Z W^T||_F^2 + lambda Tr(C^T L C)
//!     + gamma [ sum_ik r_ik ||z_i - c_k||^2 + sigma sum_ik r_ik log r_ik ]
//! ```
//!
//! (`lambda Tr(C^T L C) = (lambda/2) sum_{k,k'} s_kk' ||c_k - c_k'||^2`, the ordered-pair
//! convention of Proposition 5; spec P10). Each iteration minimises exactly over one block:
//!
//! 1. `S` = minimum spanning tree of the centres under squared distances (28);
//! 2. `R` = the softmax (32), computed with a per-row log-sum-exp shift (spec P9);
//! 3. `{W, Z, C}` in closed form (Proposition 5, eq. 33), with `M = (lambda/gamma) L + Gamma`,
//!    `A = ((1+gamma)/gamma) M - R^T R` and the Woodbury form
//!    `Q = (I + R A^{-1} R^T) / (1+gamma)`: `W` = top-d eigenvectors of `Y^T Q Y`,
//!    `Z = Q Y W`, `C = M^{-1} R^T Z`.
//!
//! The N x N matrix `Q` is never formed: with `B = R^T Y` (K x D),
//! `Y^T Q Y = (Y^T Y + B^T A^{-1} B) / (1+gamma)` and `Z = (Y W + R A^{-1} B W) / (1+gamma)`,
//! so an iteration costs `O(N K (D + K) + K^3 + D^3)`. Every block step is an exact
//! minimisation, so `f` cannot increase; the fit checks this after every iteration and
//! stops when the relative change of `f` falls below `tol`.
//!
//! [`Compat::R`] reproduces the conventions of the public R package (spec §10): see
//! [`Compat`] and `docs/methods/ddrtree.md`.
//!
//! Layout: this file holds the settings, the fitted model and its registration;
//! `ddrtree/iterate.rs` the one loop of Algorithm 2 and the two conventions' stopping
//! rules, `problem.rs` the data and the `{W, Z, C}` step (Proposition 5) with the paper's
//! objective, `residual.rs` the R package's residual term, `tree.rs` the tree step and term,
//! `start.rs` the starts, `consensus.rs` the choice among them, `defaults.rs` the settings
//! chosen from the data. The soft assignments and their products are
//! [`unfold_linalg::soft_assign`], the centres' order [`unfold_graph::tree_order`], the
//! ordering of the cells [`unfold_graph::trajectory`].

mod consensus;
mod defaults;
mod iterate;
mod problem;
mod residual;
mod start;
mod tree;

pub use defaults::Chosen;
pub use residual::r_residual_term;
pub(crate) use start::top_eigenvectors;
#[cfg(test)]
pub(crate) use tree::spanning_tree;
pub(crate) use tree::tree_energy;

use crate::method::{Checked, Declared, Field, Interval, ParamSpec, Rule, Settings};
use crate::regularised::{alternating_convergence, LAMBDA_HELP};
use crate::traits::{check_fit_shape, check_fit_view};
use faer::MatRef;
use nalgebra::{DMatrix, DVector};
use problem::{gram, Problem, State};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use start::{kmeans_evenly_started, kmeans_shuffled_started};
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Observer, Result, Silent};
use unfold_graph::trajectory::{Measure, Root, Trajectory};
use unfold_graph::NeighbourGraph;
use unfold_linalg::view::as_faer;

/// Which conventions a DDRTree fit follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compat {
    /// The paper's model (31) on centred data: the objective `f` is evaluated after every
    /// iteration, must not increase, and the fit stops when its relative change is below
    /// `tol`.
    #[default]
    Paper,
    /// The R package `DDRTree` (and its port `ddrtree-python`): uncentred data, `W` from the
    /// top eigenvectors of the uncentred `Y^T Y`; `K < N` centres by Lloyd's k-means (at
    /// most 10 rounds) started from the rows `floor(linspace(1, N, K)) - 1` of `Z`; the
    /// objective is evaluated after the tree and assignment steps and before the
    /// `{W, Z, C}` step, with the package's first term (see [`r_residual_term`]) and the
    /// entropic term `-sigma sum_i log sum_k exp(-||z_i - c_k||^2 / sigma)`; the loop stops,
    /// before updating, once an iteration's relative change is below `tol`. Cells are
    /// ordered as Monocle 2 orders them ([`Measure::CellTree`]).
    R,
}

crate::choice!(Compat { Paper = "paper", R = "r" });

/// Which fit of several starts ([`DdrTreeParams::restarts`]) is kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Keep {
    /// The medoid of the starts: the fit whose tree places the cells most as the others'
    /// do (`ddrtree/consensus.rs`); of equal ones, the lower objective.
    #[default]
    Consensus,
    /// The fit of the lowest objective (31).
    Objective,
}

crate::choice!(Keep { Consensus = "consensus", Objective = "objective" });

crate::params! {
    /// Settings of [`DdrTree`]. The latent dimension, `lambda` and `sigma` are chosen from
    /// the data when not given (`defaults.rs`: the principal components above the noise,
    /// `gamma N / K` and a quarter of the noise's variance per dimension, or the R
    /// package's `5 N` and `1e-3` with [`Compat::R`]); the centres start five times, the
    /// consensus kept (once, the R package's start, with [`Compat::R`]); the rest follow
    /// the R package: `gamma = 10`, `K` by Monocle 2's rule, at most 20 iterations,
    /// `tol = 1e-3`; the points are not ordered.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DdrTreeParams {
        /// Latent dimension `d`; `None`: the number of principal components above the
        /// noise, at least 2.
        pub dim: Option<usize> = None => Rule::auto(
            "the principal components above the noise (Gavish-Donoho), at least 2",
            "latent dimension",
        )
        .min(1),
        /// Tree regularisation `lambda > 0`; `None` means `gamma N / K` ([`Compat::Paper`])
        /// or the R package's `5 N` ([`Compat::R`]).
        pub lambda: Option<f64> = None => Rule::auto(
            "gamma N / K (the R package's 5 N with --compat r)",
            LAMBDA_HELP,
        )
        .range(Interval::POSITIVE),
        /// Bandwidth `sigma > 0` of the soft assignments (32) (it divides squared
        /// distances); `None` means a quarter of the noise's variance per dimension, at most
        /// a twentieth of the variance along the first principal axis ([`Compat::Paper`]),
        /// or the R package's `1e-3` ([`Compat::R`]).
        pub sigma: Option<f64> = None => Rule::auto(
            "a quarter of the noise's variance per dimension, at most a twentieth of the \
             variance along the first principal axis (the R package's 0.001 with --compat r)",
            "ddrtree: the bandwidth of the soft assignment of points to centres",
        )
        .range(Interval::POSITIVE),
        /// Trade-off `gamma > 0` of the clustering term (not the noise precision of SPL).
        pub gamma: f64 = 10.0 => Rule::within(
            Interval::POSITIVE,
            "ddrtree: the weight of the clustering term",
        ),
        /// Number of centres `K <= N`; `None` means Monocle 2's rule ([`auto_centres`]): `K = N`
        /// with `C = Z` (the paper) below 100 points, fewer centres from there.
        pub ncenters: Option<usize> = None => Rule::auto(
            "N below 100 points, else round(200 ln N / (ln N + ln 100)) (Monocle 2's)",
            "ddrtree: the number of centres K",
        )
        .min(1),
        /// Maximum number of iterations.
        pub max_iter: usize = 20 => Rule::at_least(1, "ddrtree: the most iterations of Algorithm 2"),
        /// Starts of the centres, each fitted by Algorithm 2; [`DdrTreeParams::keep`] says
        /// which fit is kept. The first is the R package's k-means start, the others the
        /// same on the rows shuffled from `seed + r`. `None`: five, their consensus kept
        /// ([`Compat::Paper`]; `defaults.rs`), or the R package's one ([`Compat::R`])
        /// (`bench/results/trajectory_starts.md` measures what they change).
        pub restarts: Option<usize> = None => Rule::auto(
            "5 (1 with --compat r, the R package's one start)",
            "ddrtree: starts of the centres (the R package's k-means start, then the same on \
             rows shuffled from seeds seed + 1, ...); --keep says which fit is kept",
        )
        .min(1),
        /// Which start's fit is kept: the consensus of the starts, or the lowest objective.
        pub keep: Keep = Keep::Consensus => Rule::help(
            "ddrtree: which start's fit is kept: the consensus (the fit whose tree places the \
             cells most as the other starts' trees do) or the lowest objective",
        ),
        /// The seed of the shuffled rows of restarts after the first.
        pub seed: u64 = 0 => Rule::help(ParamSpec::seed().help),
        /// Relative-change tolerance of the stopping rule.
        pub tol: f64 = 1e-3 => Rule::within(
            Interval::NON_NEGATIVE,
            "ddrtree: stop when the objective's relative change falls below this",
        ),
        /// Paper or R-package conventions.
        pub compat: Compat = Compat::Paper => Rule::help(
            "ddrtree: the paper's model (centred, objective checked) or the R package's \
             conventions (and Monocle 2's pseudotime, along a tree over the cells)",
        ),
        /// Whether and from where the fit orders the points along its tree (the parameters
        /// `order`, `min_branch`, `pseudotime_neighbours`, `root_cell` and `root_state`).
        pub ordering: TreeOrdering = TreeOrdering::default() => Rule::group(),
    }
}

/// The ordering of the points along the learned tree that a fit adds
/// ([`DdrTree::ordered`]), DDRTree's parameters `order`, `min_branch`,
/// `pseudotime_neighbours`, `root_cell` and `root_state`: `root_cell` or `root_state` (not
/// both) gives the root and implies `order`, whose root is otherwise [`Root::Auto`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TreeOrdering {
    /// Where pseudotime starts; `None`: the points are not ordered.
    pub root: Option<Root>,
    /// Spurs of fewer centres start no state and make no branch point
    /// ([`DdrTree::order_with`]); `None`: chosen from the fit (the noise's radius around
    /// the tree in edges, at least 3, `defaults.rs`), 0 with [`Compat::R`] (Monocle 2's).
    pub min_branch: Option<usize>,
    /// Pseudotime is averaged over this many nearest points in the latent projection
    /// `(Y - mean) W`, the point itself included ([`Trajectory::smooth_over`]); 0 or 1: the
    /// distance along the tree. `None`: the points one centre stands for, `N / K`, at most
    /// 30 ([`defaults::pseudotime_neighbours`]), 1 with [`Compat::R`] (Monocle 2's).
    pub neighbours: Option<usize>,
}

impl Field for TreeOrdering {
    fn field_specs(_: &'static str, _: &Rule, default: &Self) -> Vec<ParamSpec> {
        let order = Rule::help(
            "ddrtree: order the points along the tree (pseudotime, states, branch points; \
             written as <out>.order.csv)",
        );
        let min_branch = Rule::auto(
            "the centres spanning the noise's 99.73% radius around the tree, at least 3 (0 \
             with --compat r)",
            "ddrtree: side branches of fewer centres start no state and make no branch \
             point (Monocle 3's minimal branch length, 10 there; 0: every centre of degree \
             above 2, as Monocle 2)",
        );
        let neighbours = Rule::auto(
            "N / K (the points one centre stands for), at most 30 (1 with --compat r)",
            "ddrtree: average each point's pseudotime over this many nearest points in the \
             latent projection, itself included (0 or 1: the distance along the tree, as \
             Monocle 2)",
        );
        let root_cell = Rule::auto(
            "an end of the tree's diameter",
            "ddrtree: the cell (0-based row) pseudotime starts from; implies --order",
        );
        let root_state = Rule::auto(
            "none",
            "ddrtree: start pseudotime at the tip of this state (as numbered from the \
             default root); implies --order",
        )
        .min(1);
        let (cell, state) = default.roots();
        [
            bool::field_specs("order", &order, &default.root.is_some()),
            Option::<usize>::field_specs("min_branch", &min_branch, &default.min_branch),
            Option::<usize>::field_specs("pseudotime_neighbours", &neighbours, &default.neighbours),
            Option::<usize>::field_specs("root_cell", &root_cell, &cell),
            Option::<usize>::field_specs("root_state", &root_state, &state),
        ]
        .concat()
    }

    fn read_into(&mut self, _: &'static str, settings: &Settings) -> Result<()> {
        self.min_branch.read_into("min_branch", settings)?;
        self.neighbours
            .read_into("pseudotime_neighbours", settings)?;
        let (mut order, (mut cell, mut state)) = (self.root.is_some(), self.roots());
        order.read_into("order", settings)?;
        let (given_cell, given_state) = (settings.get("root_cell"), settings.get("root_state"));
        if given_cell.is_some() && given_state.is_some() {
            return Err(Error::invalid(
                "root_cell",
                "give a root cell or a root state, not both",
            ));
        }
        if given_cell.is_some() || given_state.is_some() {
            (cell, state) = (None, None);
        }
        cell.read_into("root_cell", settings)?;
        state.read_into("root_state", settings)?;
        self.root = match (cell, state) {
            (Some(i), _) => Some(Root::Cell(i)),
            (None, Some(s)) => Some(Root::State(s)),
            (None, None) => order.then_some(Root::Auto),
        };
        Ok(())
    }

    fn write(&self, _: &'static str, settings: &mut Settings) {
        let (cell, state) = self.roots();
        self.root.is_some().write("order", settings);
        self.min_branch.write("min_branch", settings);
        self.neighbours.write("pseudotime_neighbours", settings);
        cell.write("root_cell", settings);
        state.write("root_state", settings);
    }
}

impl TreeOrdering {
    /// The root cell and the root state, when the root is one of them.
    fn roots(&self) -> (Option<usize>, Option<usize>) {
        match self.root {
            Some(Root::Cell(i)) => (Some(i), None),
            Some(Root::State(s)) => (None, Some(s)),
            _ => (None, None),
        }
    }
}

impl DdrTreeParams {
    /// The defaults with latent dimension `dim`.
    pub fn new(dim: usize) -> Self {
        DdrTreeParams {
            dim: Some(dim),
            ..DdrTreeParams::default()
        }
    }

    /// Fits DDRTree to the rows of `y` (N x D), then orders the points along the tree when
    /// [`DdrTreeParams::ordering`] asks for it. A kernel matrix (N x N, e.g. the paper's
    /// `exp(-||y_i - y_j||^2 / D)` of Section 6.2) may be passed as `y`; `W` is then N x d.
    ///
    /// # Errors
    /// Non-finite data, fewer than two points, `dim` not below `min(N, D)`, `lambda <= 0`,
    /// `sigma <= 0`, `gamma <= 0`, `tol < 0`, `max_iter = 0`, `K` outside `1..=N`, a
    /// singular block system, an objective that increases beyond round-off
    /// ([`Error::Numerical`]), or an ordering's root that the tree does not have.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<DdrTree> {
        self.clone().check()?.fit(y)
    }

    /// [`DdrTreeParams::fit`] of the rows of a faer view of any layout, read where they lie:
    /// a row-major view of a C-order array (N x D) is fitted without a column-major copy of
    /// `Y` (narrow data, below 96 columns, are copied row by row into the padded lanes that
    /// `R^T Y` reads, as for any layout). A column-major view gives
    /// [`DdrTreeParams::fit`]'s bits; a row-major one the same fit to round-off.
    ///
    /// # Errors
    /// As [`DdrTreeParams::fit`].
    pub fn fit_view(&self, y: MatRef<'_, f64>) -> Result<DdrTree> {
        self.clone().check()?.fit_view(y)
    }
}

impl Checked<DdrTreeParams> {
    /// [`DdrTreeParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<DdrTree> {
        self.fit_view(as_faer(y))
    }

    /// [`DdrTreeParams::fit_view`] with the parameters checked.
    pub fn fit_view(&self, y: MatRef<'_, f64>) -> Result<DdrTree> {
        self.fit_view_observed(y, &Silent)
    }

    /// [`Checked::fit_view`] reporting the recorded objective of every iteration to
    /// `observer`, which may stop the fit ([`Error::Interrupted`]).
    pub fn fit_view_observed(
        &self,
        y: MatRef<'_, f64>,
        observer: &dyn Observer,
    ) -> Result<DdrTree> {
        check_fit_view(y, self.dim.unwrap_or(1), "DDRTree")?;
        let n = y.nrows();
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return Err(Error::invalid(
                "tol",
                format!("must be finite and >= 0, got {}", self.tol),
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        let mut chosen = Vec::new();
        let k = match self.ncenters {
            Some(k) => k,
            None => {
                let (k, why) = defaults::centres(n);
                chosen.push(why);
                k
            }
        };
        if k > n {
            return Err(Error::invalid(
                "ncenters",
                format!("{k} centres for {n} points: use between 1 and {n} centres (K <= N)"),
            ));
        }
        let lambda = match (self.lambda, self.compat) {
            (Some(lambda), _) => lambda,
            (None, Compat::Paper) => {
                let (lambda, why) = defaults::balanced_lambda(n, k, self.gamma);
                chosen.push(why);
                lambda
            }
            (None, Compat::R) => 5.0 * n as f64,
        };
        let mean = column_means(y);
        // The paper's centring is never formed (no second N x D matrix): the problem
        // subtracts the mean inside its products.
        let centre = (self.compat == Compat::Paper).then_some(&mean);
        let yty = gram(y, centre);
        // Points that all coincide have no principal axis, no tree and no ordering.
        let offset = n as f64 * mean.norm_squared();
        let spread = match self.compat {
            Compat::Paper => yty.trace(),
            Compat::R => yty.trace() - offset,
        };
        if spread <= 1e-12 * (spread.abs() + offset) {
            return Err(Error::invalid(
                "data",
                format!(
                    "the {n} points have no spread (every point is the same): DDRTree needs \
                     points that differ; check the input (a constant column block, or rows \
                     copied from one cell)"
                ),
            ));
        }
        // The spectrum, when a default reads it: the dimension, and the noise that sigma
        // and the smallest branch of an ordering are measured against.
        let auto_branch = self.ordering.root.is_some()
            && self.ordering.min_branch.is_none()
            && self.compat == Compat::Paper;
        let auto_sigma = self.sigma.is_none() && self.compat == Compat::Paper;
        let spectrum = if self.dim.is_none() || auto_branch || auto_sigma {
            let uncentred = (self.compat == Compat::R).then_some(&mean);
            defaults::spectrum(&yty, uncentred, n)?
        } else {
            Vec::new()
        };
        let dim = match self.dim {
            Some(dim) => dim,
            None => {
                let (dim, why) = defaults::latent_dim(&spectrum, n, y.ncols());
                chosen.push(why);
                dim
            }
        };
        // The values were checked above; the chosen dimension needs only the shape's.
        check_fit_shape(n, y.ncols(), dim, "DDRTree")?;
        let sd = defaults::noise_sd(&spectrum, dim, n, y.ncols());
        let sigma = match self.sigma {
            Some(sigma) => sigma,
            None if auto_sigma => {
                let (sigma, why) = defaults::bandwidth(sd, &spectrum, n, R_SIGMA);
                chosen.push(why);
                sigma
            }
            None => R_SIGMA,
        };
        let problem = Problem::with_gram(y, centre, yty, lambda, sigma, self.gamma, dim);
        let w = top_eigenvectors(&problem.yty, dim)?;
        let z = problem.y_mul(&w);
        // Every point its own centre has one start.
        let restarts = match (self.restarts, self.compat) {
            _ if k == n => 1,
            (Some(r), _) => r,
            (None, Compat::Paper) => {
                let (r, why) = defaults::starts();
                chosen.push(why);
                r
            }
            (None, Compat::R) => 1,
        };
        // The starts run in parallel, each on its own shuffled rows: their fits do not
        // depend on the schedule. A caller's end ends every start at its next iteration.
        let mut runs = (0..restarts)
            .into_par_iter()
            .map(|r| {
                let c = match r {
                    _ if k == n => z.clone(),
                    0 => kmeans_evenly_started(&z, k)?,
                    _ => kmeans_shuffled_started(&z, k, self.seed.wrapping_add(r as u64))?,
                };
                let state = State {
                    w: w.clone(),
                    z: z.clone(),
                    c,
                };
                problem.run(state, self.compat, self.max_iter, self.tol, r, observer)
            })
            .collect::<Result<Vec<_>>>()?;
        let objectives: Vec<f64> = runs.iter().map(|r| iterate::sum_terms(&r.terms)).collect();
        let kept = match self.keep {
            Keep::Consensus if runs.len() > 1 && k > 1 => consensus::medoid(&runs, &objectives)?,
            // The first of equal objectives.
            _ => (0..runs.len()).fold(0, |b, r| if objectives[r] < objectives[b] { r } else { b }),
        };
        let run = runs.swap_remove(kept);
        let mut fit = DdrTree {
            mean: match self.compat {
                Compat::Paper => mean.clone(),
                Compat::R => DVector::zeros(y.ncols()),
            },
            w: run.state.w,
            centres: run.state.c,
            edges: run.edges,
            convergence: alternating_convergence(run.history, run.stop),
            lambda,
            compat: self.compat,
            evidence: Evidence::from_terms(EvidenceKind::Objective, run.terms),
            coords: run.state.z,
            trajectory: None,
            chosen,
        };
        let Some(root) = self.ordering.root else {
            return Ok(fit);
        };
        let min_branch = match self.ordering.min_branch {
            Some(m) => m,
            None if auto_branch => {
                let (m, why) = defaults::min_branch(&fit.centres, &fit.edges, sd);
                fit.chosen.push(why);
                m
            }
            None => 0,
        };
        let neighbours = match self.ordering.neighbours {
            Some(m) => m,
            None if self.compat == Compat::Paper => {
                let (m, why) = defaults::pseudotime_neighbours(n, fit.centres.nrows());
                fit.chosen.push(why);
                m
            }
            None => 1,
        };
        let mut fit = fit.ordered(root, min_branch)?;
        if neighbours > 1 && n > 1 {
            let latent = problem.y_mul(&fit.w);
            let near = unfold_graph::knn(&latent, (neighbours - 1).min(n - 1))?;
            if let Some(t) = fit.trajectory.as_mut() {
                t.smooth_over(&near.indices)?;
            }
        }
        Ok(fit)
    }
}

/// The R package's bandwidth of the soft assignments (`sigma`), kept with [`Compat::R`]
/// and where the noise cannot be measured.
const R_SIGMA: f64 = 1e-3;

/// The mean of each column of `y`, summed from the first row to the last as nalgebra's
/// `mean` sums a column, so that both layouts give the same bits: column by column when the
/// columns are contiguous, else groups of columns row by row (a row-major view is read
/// along its rows).
fn column_means(y: MatRef<'_, f64>) -> DVector<f64> {
    const GROUP: usize = 64;
    let (n, p) = (y.nrows(), y.ncols());
    let by_rows = y.col_stride() == 1 && y.row_stride() != 1;
    let mut sums = vec![0.0; p];
    sums.par_chunks_mut(GROUP)
        .enumerate()
        .for_each(|(g, sums)| {
            let cols = y.subcols(g * GROUP, sums.len());
            if by_rows {
                for i in 0..n {
                    for (s, &v) in sums.iter_mut().zip(cols.row(i).iter()) {
                        *s += v;
                    }
                }
            } else {
                for (j, s) in sums.iter_mut().enumerate() {
                    *s = cols.col(j).iter().fold(0.0, |a, &v| a + v);
                }
            }
        });
    DVector::from_iterator(p, sums.into_iter().map(|s| s / n as f64))
}

/// Monocle 2's number of centres for `n` points (`cal_ncenter` with its limit of 100):
/// `n` below 100 points, else `round(2 * 100 * ln n / (ln n + ln 100))`, which grows like
/// `200` for large `n` (143 at 100,000 points).
pub fn auto_centres(n: usize) -> usize {
    if n < 100 {
        return n;
    }
    let (ln_n, ln_limit) = ((n as f64).ln(), 100f64.ln());
    (2.0 * 100.0 * ln_n / (ln_n + ln_limit)).round() as usize
}

/// A fitted DDRTree.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DdrTree {
    /// The column means removed before fitting (zero in [`Compat::R`]).
    pub mean: DVector<f64>,
    /// Orthonormal projection `W` (D x d).
    pub w: DMatrix<f64>,
    /// The centres `C` (K x d), nodes of the learned tree.
    pub centres: DMatrix<f64>,
    /// The tree over the centres, `(a, b, ||c_a - c_b||^2)` with `a < b`, as found by the
    /// last tree step (squared lengths of that moment).
    pub edges: Vec<(usize, usize, f64)>,
    /// How the alternating minimisation ended, with the objective after every iteration
    /// (see [`Compat`] for which objective); `converged` when the relative-change rule
    /// stopped it before `max_iter`.
    pub convergence: Convergence,
    /// The `lambda` used.
    pub lambda: f64,
    /// The conventions followed.
    pub compat: Compat,
    evidence: Evidence,
    coords: DMatrix<f64>,
    /// The cells' ordering along the tree, when asked for ([`DdrTree::ordered`]).
    pub trajectory: Option<Trajectory>,
    /// The settings this fit chose from the data, with why (reported by its notes; not
    /// kept in model files).
    #[serde(skip)]
    pub chosen: Vec<Chosen>,
}

impl DdrTree {
    /// The points ordered along the learned tree from `root`: pseudotime, states and
    /// branch points ([`unfold_graph::trajectory`], Monocle 2's `orderCells`). Pseudotime
    /// is the distance along the tree; a fit with an ordering in its parameters averages it
    /// over neighbours (`pseudotime_neighbours`), which needs the data.
    pub fn order(&self, root: Root) -> Result<Trajectory> {
        self.order_with(root, 0)
    }

    /// [`DdrTree::order`] with spurs of fewer than `min_branch` centres set aside (0:
    /// every centre of degree above 2 is a branch point, as in Monocle 2). A fit with
    /// [`Compat::R`] measures pseudotime as Monocle 2 does, along a tree over the cells
    /// ([`Measure::CellTree`]).
    pub fn order_with(&self, root: Root, min_branch: usize) -> Result<Trajectory> {
        let edges: Vec<(usize, usize)> = self.edges.iter().map(|&(a, b, _)| (a, b)).collect();
        let measure = match self.compat {
            Compat::R => Measure::CellTree,
            Compat::Paper => Measure::Tree,
        };
        unfold_graph::trajectory::order_measured(
            &self.coords,
            &self.centres,
            &edges,
            root,
            min_branch,
            measure,
        )
    }

    /// This fit with its ordering from `root` kept (written as the `order` table).
    pub fn ordered(mut self, root: Root, min_branch: usize) -> Result<Self> {
        self.trajectory = Some(self.order_with(root, min_branch)?);
        Ok(self)
    }
}

impl crate::regularised::PosteriorRegularised for DdrTree {
    /// The spanning tree over the centres, unit weights.
    fn learned_graph(&self) -> Result<NeighbourGraph> {
        crate::regularised::unit_tree(self.centres.nrows(), &self.edges)
    }
}

// The latent points `Z` (N x d) and the last objective with its terms, kind `objective`.
crate::embedding!(DdrTree);

/// DDRTree in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Overlay, Registered, Table};
    use unfold_core::{Convergence, EvidenceKind};

    const ABOUT: &str = "discriminative dimensionality reduction with a tree over K centres (reversed graph embedding, as in Monocle 2)";

    impl Registered for DdrTree {
        type Params = DdrTreeParams;

        fn info() -> MethodInfo {
            MethodInfo::new("ddrtree", Family::Regularised, ABOUT).evidence(EvidenceKind::Objective)
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit_view_observed(data.y.view()?, observer)
        }
    }

    impl Model for DdrTree {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the latent points", &self.coords, None, None)?;
            let (n, d) = self.coords.shape();
            matrix("the projection W", &self.w, None, Some(d))?;
            vector("the mean", &self.mean, Some(self.w.nrows()))?;
            matrix("the centres", &self.centres, None, Some(d))?;
            let k = self.centres.nrows();
            tree_edges(&self.edges, k)?;
            positive("lambda", self.lambda)?;
            let Some(t) = &self.trajectory else {
                return Ok(());
            };
            length("the pseudotimes", t.pseudotime.len(), n)?;
            finite("the pseudotimes", &t.pseudotime)?;
            length("the states", t.state.len(), n)?;
            length("the cells' centres", t.centre.len(), n)?;
            indices("the centre of cell", &t.centre, k)?;
            length("the positions", t.position.len(), n)?;
            let ends: Vec<usize> = t.position.iter().flat_map(|p| [p.from, p.to]).collect();
            indices("the end of a cell's edge", &ends, k)?;
            let fractions: Vec<f64> = t.position.iter().map(|p| p.t).collect();
            finite("the positions", &fractions)?;
            indices("the root cell", &[t.root_cell], n)?;
            indices("branch point", &t.branch_points, k)
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }

        /// The learned tree over the centres and the centres themselves.
        fn tables(&self) -> Vec<Table> {
            let tree = DMatrix::from_fn(self.edges.len(), 3, |r, c| {
                let (i, j, d2) = self.edges[r];
                [i as f64, j as f64, d2][c]
            });
            let names = ["centre_i", "centre_j", "squared_length"];
            let axes = (1..=self.centres.ncols()).map(|j| format!("x{j}"));
            let mut tables = vec![
                Table {
                    name: "tree",
                    header: names.iter().map(|s| s.to_string()).collect(),
                    rows: tree,
                },
                Table {
                    name: "centres",
                    header: axes.collect(),
                    rows: self.centres.clone(),
                },
            ];
            if let Some(t) = &self.trajectory {
                tables.push(Table {
                    name: "order",
                    header: ["pseudotime", "state", "centre"].map(String::from).to_vec(),
                    rows: DMatrix::from_fn(t.pseudotime.len(), 3, |i, c| match c {
                        0 => t.pseudotime[i],
                        1 => t.state[i] as f64,
                        _ => t.centre[i] as f64,
                    }),
                });
            }
            tables
        }

        /// The tree over the centres (first two latent coordinates), and the pseudotime and
        /// branch points of the ordering when there is one.
        fn overlay(&self) -> Option<Overlay> {
            if self.centres.ncols() < 2 {
                return None;
            }
            let at = |c: usize| (self.centres[(c, 0)], self.centres[(c, 1)]);
            Some(Overlay {
                colour_by: self
                    .trajectory
                    .as_ref()
                    .map(|t| ("pseudotime".to_string(), t.pseudotime.clone())),
                segments: self.edges.iter().map(|&(a, b, _)| [at(a), at(b)]).collect(),
                marks: self
                    .trajectory
                    .iter()
                    .flat_map(|t| t.branch_points.iter().map(|&c| at(c)))
                    .collect(),
            })
        }

        /// The settings chosen from the data (each `name` and `name_reason`), and the
        /// ordering's root cell, branch points and number of states.
        fn notes(&self) -> Vec<(String, String)> {
            let mut notes: Vec<(String, String)> = self
                .chosen
                .iter()
                .flat_map(|c| {
                    [
                        (c.name.to_string(), c.value.clone()),
                        (format!("{}_reason", c.name), c.reason.clone()),
                    ]
                })
                .collect();
            let Some(t) = &self.trajectory else {
                return notes;
            };
            let branch_points = if t.branch_points.is_empty() {
                "none".to_string()
            } else {
                t.branch_points
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            notes.extend([
                ("root_cell".to_string(), t.root_cell.to_string()),
                ("branch_points".to_string(), branch_points),
                ("states".to_string(), t.states.to_string()),
            ]);
            notes
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
