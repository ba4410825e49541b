//! The GP-LVM likelihood of an embedding (Lawrence 2005; the score of Lawrence 2012, §4,
//! after Harmeling 2007): the maximised marginal likelihood of a Gaussian process from the
//! fixed latent points to the data.

use crate::check::paired_points;
use crate::gplvm_bound::{gplvm_bound, GplvmBound};
use nalgebra::DMatrix;
use unfold_core::{Error, Evidence, EvidenceKind, Result};
use unfold_lbfgsb::{try_minimize, LbfgsbOptions, Status, TryMinimizeError};
use unfold_linalg::{pairwise_sq_dists, Cholesky};

/// Kernel hyperparameters of `k(x, x') = alpha exp(-||x - x'||^2 / (2 lengthscale^2))
/// + bias + noise delta(x, x')` (RBF + bias + white noise, the GP toolbox default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GplvmHyperparameters {
    /// RBF variance `alpha > 0`.
    pub alpha: f64,
    /// RBF length scale `ell > 0`, in latent units.
    pub lengthscale: f64,
    /// Bias (constant kernel) variance `> 0`.
    pub bias: f64,
    /// White-noise variance `sigma^2 > 0`.
    pub noise: f64,
}

impl GplvmHyperparameters {
    /// The hyperparameters in field order.
    pub const fn new(alpha: f64, lengthscale: f64, bias: f64, noise: f64) -> Self {
        Self {
            alpha,
            lengthscale,
            bias,
            noise,
        }
    }

    /// `(ln alpha, ln ell, ln bias, ln noise)`: the optimiser's coordinates.
    pub(crate) fn logs(&self) -> [f64; 4] {
        [self.alpha, self.lengthscale, self.bias, self.noise].map(f64::ln)
    }

    pub(crate) fn from_logs(z: &[f64]) -> Self {
        Self::new(z[0].exp(), z[1].exp(), z[2].exp(), z[3].exp())
    }

    pub(crate) fn check(&self, name: &str) -> Result<()> {
        let logs = self.logs();
        match logs.iter().position(|z| z.is_nan() || z.is_infinite()) {
            None => Ok(()),
            Some(i) => Err(Error::invalid(
                format!("{name}.{}", ["alpha", "lengthscale", "bias", "noise"][i]),
                "every kernel hyperparameter must be finite and positive",
            )),
        }
    }
}

/// Options of [`gplvm_score`].
#[derive(Clone, Debug, PartialEq)]
pub struct GplvmScoreOptions {
    /// L-BFGS-B iteration limit per start (`>= 1`).
    pub max_iter: usize,
    /// Projected-gradient tolerance on the per-entry objective `-log p(Y | X) / (n p)` in
    /// log-hyperparameter coordinates (finite, `>= 0`).
    pub pgtol: f64,
    /// Number of deterministic starts (`>= 1`); the highest likelihood wins. Start `r`
    /// multiplies the base length scale by `1, 1/4, 4, 1/16, 16, ...` and the base noise by
    /// `1, 0.1, 5` in turn.
    pub starts: usize,
    /// Base start; `None` = data-driven: `alpha = v` (the mean feature variance),
    /// `lengthscale` = median pairwise latent distance, `bias = 0.1 v`, `noise = 0.1 v`.
    pub initial: Option<GplvmHyperparameters>,
    /// Exact likelihood or sparse lower bound, read by [`gplvm_evidence`] and
    /// [`heldout_log_density`](crate::heldout_log_density) (default [`GplvmSolver::Auto`]:
    /// exact up to [`GPLVM_EXACT_MAX_POINTS`] points, the bound above).
    pub solver: GplvmSolver,
    /// Inducing points of the bound (`1..=n`), chosen among the latent points by farthest-point
    /// sampling; `None` = `min(n, GPLVM_DEFAULT_INDUCING)` (200). Read only where the bound is
    /// used.
    pub inducing: Option<usize>,
}

impl Default for GplvmScoreOptions {
    fn default() -> Self {
        Self {
            max_iter: 500,
            pgtol: 1e-7,
            starts: 3,
            initial: None,
            solver: GplvmSolver::Auto,
            inducing: None,
        }
    }
}

/// Which objective the GP-LVM score maximises over the kernel hyperparameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GplvmSolver {
    /// The exact likelihood up to [`GPLVM_EXACT_MAX_POINTS`] points, the sparse bound above.
    #[default]
    Auto,
    /// Always the exact likelihood (O(n^3) time, O(n^2) memory).
    Exact,
    /// Always the sparse variational lower bound of Titsias (2009) (O(n m^2) time,
    /// O(n m) memory).
    Bound,
}

/// Largest number of points that [`GplvmSolver::Auto`] scores exactly; above it the sparse
/// bound is used. Measured with `examples/gplvm_score_timing.rs` (true latent points, 2
/// cores shared with other jobs): the exact score takes 13 s at n = 1000, 53 s (sheet) to
/// 149 s (Swiss roll) at n = 2000 and 17 minutes at n = 4000 (time grows as n^3), while
/// the bound with 200 inducing points takes 4.5 s on the roll at n = 2000, 0.008 nats below
/// the exact score; see `docs/eval.md`.
pub const GPLVM_EXACT_MAX_POINTS: usize = 2000;

/// The maximised GP-LVM log marginal likelihood and where it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct GplvmScore {
    /// `max log p(Y | X)` over the hyperparameters (higher = better embedding).
    pub log_likelihood: f64,
    /// The maximising kernel hyperparameters.
    pub hyperparameters: GplvmHyperparameters,
    /// Diagonal jitter that was added to `K` at the optimum because its Cholesky factor
    /// failed in floating point (0 almost always).
    pub jitter: f64,
    /// L-BFGS-B iterations of the winning start.
    pub iterations: usize,
    /// Likelihood evaluations over all starts (each one Cholesky factorisation and inverse).
    pub evaluations: usize,
    /// Whether the winning start met the projected-gradient or relative-decrease test.
    pub converged: bool,
}

/// The GP-LVM score as [`gplvm_evidence`] computed it: the exact maximised log-likelihood,
/// or the maximised sparse lower bound on it. Only values of the same variant (and, for
/// bounds, the same number of inducing points) compare.
#[derive(Clone, Debug, PartialEq)]
pub enum GplvmEvidence {
    /// [`gplvm_score`]: `max log p(Y | X)`.
    Exact(GplvmScore),
    /// [`gplvm_bound`]: `max F <= max log p(Y | X)`.
    Bound(GplvmBound),
}

impl GplvmEvidence {
    /// The maximised value: the exact log-likelihood or the lower bound.
    pub fn value(&self) -> f64 {
        match self {
            GplvmEvidence::Exact(s) => s.log_likelihood,
            GplvmEvidence::Bound(b) => b.lower_bound,
        }
    }

    /// Whether the value is a lower bound rather than the exact log-likelihood.
    pub fn is_bound(&self) -> bool {
        matches!(self, GplvmEvidence::Bound(_))
    }

    /// [`EvidenceKind::LogLikelihood`] for the exact score, [`EvidenceKind::Elbo`] (a
    /// variational lower bound on the log-likelihood) for the bound.
    pub fn kind(&self) -> EvidenceKind {
        match self {
            GplvmEvidence::Exact(_) => EvidenceKind::LogLikelihood,
            GplvmEvidence::Bound(_) => EvidenceKind::Elbo,
        }
    }

    /// The value labelled by its kind, for reports and selection tables.
    pub fn evidence(&self) -> Evidence {
        Evidence::new(self.kind(), self.value())
    }

    /// The maximising kernel hyperparameters.
    pub fn hyperparameters(&self) -> GplvmHyperparameters {
        match self {
            GplvmEvidence::Exact(s) => s.hyperparameters,
            GplvmEvidence::Bound(b) => b.hyperparameters,
        }
    }

    /// Whether the winning start of the optimiser converged.
    pub fn converged(&self) -> bool {
        match self {
            GplvmEvidence::Exact(s) => s.converged,
            GplvmEvidence::Bound(b) => b.converged,
        }
    }
}

/// Validated problem: squared latent distances and per-feature centred data.
struct Problem {
    d2: DMatrix<f64>,
    y: DMatrix<f64>,
}

/// Log-likelihood, its gradient in `(ln alpha, ln ell, ln bias, ln noise)` and the jitter.
struct Evaluation {
    ll: f64,
    grad: [f64; 4],
    jitter: f64,
}

impl Problem {
    fn new(x: &DMatrix<f64>, y: &DMatrix<f64>) -> Result<Problem> {
        check_pair(x, y)?;
        Ok(Problem {
            d2: pairwise_sq_dists(x),
            y: centred_columns(y),
        })
    }

    /// Mean per-feature variance of the centred data.
    fn mean_variance(&self) -> f64 {
        mean_variance(&self.y)
    }

    /// Median distance over the pairs of distinct latent points (1 if all coincide).
    fn median_distance(&self) -> f64 {
        median_distance(&self.d2)
    }

    /// `log p(Y | X) = -(n p / 2) ln 2 pi - (p / 2) ln|K| - tr(K^{-1} Y Y^T) / 2` and
    /// `d/d theta = tr(W dK/d theta) / 2` with `W = K^{-1} Y Y^T K^{-1} - p K^{-1}`.
    fn evaluate(&self, h: &GplvmHyperparameters) -> Result<Evaluation> {
        let (n, p) = self.y.shape();
        let inv_two_ell2 = 0.5 / (h.lengthscale * h.lengthscale);
        let k_rbf = rbf(&self.d2, h);
        let mut k = k_rbf.add_scalar(h.bias);
        k.fill_diagonal(h.alpha + h.bias + h.noise);
        let (chol, jitter) = factor_with_jitter(k, KERNEL_CONTEXT)?;
        let a = chol.solve(&self.y); // K^{-1} Y
        let quad = self.y.dot(&a); // tr(K^{-1} Y Y^T)
        let np = (n * p) as f64;
        let ll = -0.5 * (np * (2.0 * std::f64::consts::PI).ln() + p as f64 * chol.log_det() + quad);
        let mut w = chol.inverse()?;
        w.gemm(1.0, &a, &a.transpose(), -(p as f64));
        let (mut g_alpha, mut g_ell) = (0.0, 0.0);
        for ((wij, kij), d2) in w.iter().zip(k_rbf.iter()).zip(self.d2.iter()) {
            g_alpha += wij * kij;
            g_ell += wij * kij * d2;
        }
        let grad = [
            0.5 * g_alpha,
            g_ell * inv_two_ell2,
            0.5 * h.bias * w.sum(),
            0.5 * h.noise * w.trace(),
        ];
        Ok(Evaluation { ll, grad, jitter })
    }
}

/// The checks every GP-LVM score makes of its latent points and data: non-empty, finite,
/// the same number of rows, at least 2 points.
pub(crate) fn check_pair(x: &DMatrix<f64>, y: &DMatrix<f64>) -> Result<()> {
    paired_points(x, "embedding X", y, "data Y")?;
    if x.nrows() < 2 {
        return Err(Error::TooFewPoints {
            what: "the GP-LVM score".to_string(),
            needed: 2,
            got: x.nrows(),
            advice: "a Gaussian process likelihood compares points with each other".to_string(),
        });
    }
    Ok(())
}

/// Mean per-feature variance `||Y_c||_F^2 / (n p)` of centred data.
pub(crate) fn mean_variance(y: &DMatrix<f64>) -> f64 {
    y.norm_squared() / y.len() as f64
}

/// Median distance over the pairs of distinct points of a squared-distance matrix `d2`
/// (1 if all coincide).
pub(crate) fn median_distance(d2: &DMatrix<f64>) -> f64 {
    let n = d2.nrows();
    let mut d: Vec<f64> = (0..n)
        .flat_map(|j| (0..j).map(move |i| (i, j)))
        .map(|(i, j)| d2[(i, j)])
        .filter(|&v| v > 0.0)
        .collect();
    if d.is_empty() {
        return 1.0;
    }
    let mid = d.len() / 2;
    d.select_nth_unstable_by(mid, f64::total_cmp);
    d[mid].sqrt()
}

/// Each column of `y` minus its mean.
pub(crate) fn centred_columns(y: &DMatrix<f64>) -> DMatrix<f64> {
    let mut yc = y.clone();
    for mut col in yc.column_iter_mut() {
        let mean = col.mean();
        col.add_scalar_mut(-mean);
    }
    yc
}

/// The RBF part `alpha exp(-d2 / (2 ell^2))` of the kernel, entry by entry of the squared
/// distances `d2`.
pub(crate) fn rbf(d2: &DMatrix<f64>, h: &GplvmHyperparameters) -> DMatrix<f64> {
    let inv_two_ell2 = 0.5 / (h.lengthscale * h.lengthscale);
    d2.map(|d2| h.alpha * (-d2 * inv_two_ell2).exp())
}

/// Cholesky of `k`; only if that fails (not positive definite in floating point), retries
/// with `1e-10, 1e-9, ..., 1e-4` times `mean(diag K)` added to the diagonal and returns the
/// jitter used. `context` names the matrix in the error if even the largest jitter fails.
pub(crate) fn factor_with_jitter(mut k: DMatrix<f64>, context: &str) -> Result<(Cholesky, f64)> {
    let scale = k.diagonal().mean();
    let mut added = 0.0;
    loop {
        match Cholesky::new(&k, context) {
            Ok(chol) => return Ok((chol, added)),
            Err(Error::NotPositiveDefinite { .. }) if added < 1e-4 * scale => {
                let next = (10.0 * added).max(1e-10 * scale);
                let diagonal = k.diagonal().add_scalar(next - added);
                k.set_diagonal(&diagonal);
                added = next;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Context of the exact score's kernel matrix in errors.
pub(crate) const KERNEL_CONTEXT: &str = "GP-LVM score kernel matrix";

/// Box for `(ln alpha, ln ell, ln bias, ln noise)`, relative to the mean feature variance
/// `v` and the median latent distance `dmed`; it keeps `cond(K) <~ n 1e10`.
fn log_bounds(v: f64, dmed: f64) -> [(f64, f64); 4] {
    let range = |lo: f64, hi: f64| (lo.ln(), hi.ln());
    [
        range(1e-8 * v, 1e4 * v),
        range(1e-3 * dmed, 1e3 * dmed),
        range(1e-8 * v, 1e4 * v),
        range(1e-6 * v, 1e4 * v),
    ]
}

/// `log p(Y | X)` of the GP with the given hyperparameters (no optimisation), `Y` centred
/// per feature. Errors as [`gplvm_score`], plus non-positive or non-finite hyperparameters.
pub fn gplvm_log_likelihood(
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
    hyperparameters: &GplvmHyperparameters,
) -> Result<f64> {
    hyperparameters.check("hyperparameters")?;
    Ok(Problem::new(x, y)?.evaluate(hyperparameters)?.ll)
}

/// The GP-LVM score of an embedding `x` (n x q) of data `y` (n x p) by the objective that
/// `opts.solver` names: [`gplvm_score`] (exact) or [`gplvm_bound`] (sparse lower bound).
/// With the default [`GplvmSolver::Auto`] it is exact up to [`GPLVM_EXACT_MAX_POINTS`]
/// points and the bound with `min(n, 200)` inducing points above; the result says which.
///
/// # Errors
/// Those of the function it calls.
pub fn gplvm_evidence(
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
    opts: &GplvmScoreOptions,
) -> Result<GplvmEvidence> {
    if uses_bound(opts, x.nrows()) {
        gplvm_bound(x, y, opts).map(GplvmEvidence::Bound)
    } else {
        gplvm_score(x, y, opts).map(GplvmEvidence::Exact)
    }
}

/// Whether `opts.solver` asks for the sparse bound on `n` points.
pub(crate) fn uses_bound(opts: &GplvmScoreOptions, n: usize) -> bool {
    match opts.solver {
        GplvmSolver::Auto => n > GPLVM_EXACT_MAX_POINTS,
        GplvmSolver::Exact => false,
        GplvmSolver::Bound => true,
    }
}

/// The GP-LVM likelihood score of an embedding `x` (n x q) of data `y` (n x p): the log
/// marginal likelihood of a Gaussian process from the fixed latent points to the centred
/// data, all p features independent with one shared RBF + bias + white kernel,
///
/// `log p(Y | X) = -(n p / 2) ln 2 pi - (p / 2) ln|K| - tr(K^{-1} Y Y^T) / 2`,
///
/// maximised over the four kernel hyperparameters by L-BFGS-B on their logarithms (Lawrence
/// 2005, JMLR 6, eq. 6; the embedding score of Lawrence 2012, §4; `lvmScoreModel` of the GP
/// toolbox). Higher is better. Each feature is centred first (as the toolbox does).
///
/// Exact: one Cholesky factorisation and inverse of `K` (O(n^3)) per evaluation, whatever
/// `n` (`opts.solver` `Auto` and `Exact` mean the same here; [`gplvm_evidence`] switches to
/// the bound at large `n`). The hyperparameters are kept in a box relative to the mean
/// feature variance `v` and the median latent distance `dmed` (alpha, bias in
/// `[1e-8 v, 1e4 v]`, noise in `[1e-6 v, 1e4 v]`, lengthscale in `[1e-3 dmed, 1e3 dmed]`;
/// `dmed = 1` if all latent points coincide).
///
/// Errors: empty or non-finite `x` or `y`, different row counts, `n < 2`, every feature
/// constant, invalid options (also `solver = Bound`, which is [`gplvm_bound`]'s), or a
/// kernel matrix that is not positive definite even with jitter.
pub fn gplvm_score(
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
    opts: &GplvmScoreOptions,
) -> Result<GplvmScore> {
    check_options(opts)?;
    if opts.solver == GplvmSolver::Bound {
        return Err(Error::invalid(
            "GplvmScoreOptions.solver",
            "gplvm_score computes the exact likelihood; for the sparse bound call gplvm_bound \
             or gplvm_evidence",
        ));
    }
    check_memory(x.nrows())?;
    let problem = Problem::new(x, y)?;
    let v = problem.mean_variance();
    check_variance(v)?;
    let objective = |h: &GplvmHyperparameters| problem.evaluate(h).map(|e| (e.ll, e.grad));
    let np = problem.y.len() as f64;
    let best = maximise(objective, v, problem.median_distance(), np, 1e5, opts)?;
    let e = problem.evaluate(&best.hyperparameters)?;
    Ok(GplvmScore {
        log_likelihood: e.ll,
        hyperparameters: best.hyperparameters,
        jitter: e.jitter,
        iterations: best.iterations,
        evaluations: best.evaluations,
        converged: best.converged,
    })
}

/// Dense n x n matrices the exact score holds at its peak: the latent squared distances,
/// the kernel, its Cholesky factor, its inverse and the gradient's weight matrix.
const EXACT_MATRICES: u64 = 5;

/// Refuses an exact score on `n` points whose dense matrices exceed the memory limit
/// (`--max-memory`, `UNFOLD_MAX_MEMORY` or the machine's), before allocating them.
fn check_memory(n: usize) -> Result<()> {
    unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
        method: "the exact GP-LVM score",
        n,
        bytes: &|m| (8 * EXACT_MATRICES).saturating_mul((m as u64).saturating_mul(m as u64)),
        holds: format!("{EXACT_MATRICES} dense n x n matrices"),
        alternative: "the sparse bound (GplvmSolver::Bound, used by default above 2000 points)",
    })
}

/// `max_iter >= 1`, `starts >= 1`, `pgtol` finite and `>= 0`.
pub(crate) fn check_options(opts: &GplvmScoreOptions) -> Result<()> {
    if opts.max_iter == 0 || opts.starts == 0 || !(opts.pgtol >= 0.0 && opts.pgtol.is_finite()) {
        let message = "max_iter and starts must be >= 1, pgtol finite and >= 0";
        return Err(Error::invalid("GplvmScoreOptions", message));
    }
    Ok(())
}

/// The data vary (mean feature variance `v > 0`).
pub(crate) fn check_variance(v: f64) -> Result<()> {
    if v <= 0.0 {
        return Err(Error::invalid(
            "y",
            "every feature of the data is constant, so there is nothing to score; \
             pass data that varies between points",
        ));
    }
    Ok(())
}

/// Where the multi-start search of [`maximise`] ended.
pub(crate) struct Maximum {
    /// The hyperparameters of the winning start.
    pub(crate) hyperparameters: GplvmHyperparameters,
    /// L-BFGS-B iterations of the winning start.
    pub(crate) iterations: usize,
    /// Objective evaluations over all starts.
    pub(crate) evaluations: usize,
    /// Whether the winning start converged.
    pub(crate) converged: bool,
}

/// Maximises an objective given as `(value, gradient in (ln alpha, ln ell, ln bias,
/// ln noise))` by L-BFGS-B on `-value / np` from the deterministic starts of `opts`, inside
/// the box of [`log_bounds`] for the mean feature variance `v` and median latent distance
/// `dmed`, stopping at `opts.pgtol` or a relative decrease of `factr` machine epsilons; the
/// start with the highest value wins.
pub(crate) fn maximise(
    objective: impl Fn(&GplvmHyperparameters) -> Result<(f64, [f64; 4])>,
    v: f64,
    dmed: f64,
    np: f64,
    factr: f64,
    opts: &GplvmScoreOptions,
) -> Result<Maximum> {
    let base = opts.initial.unwrap_or(GplvmHyperparameters {
        alpha: v,
        lengthscale: dmed,
        bias: 0.1 * v,
        noise: 0.1 * v,
    });
    base.check("initial")?;
    let bounds = log_bounds(v, dmed);
    let lbfgsb = LbfgsbOptions {
        pgtol: opts.pgtol,
        factr,
        max_iterations: opts.max_iter,
        max_evaluations: 3 * opts.max_iter,
        ..LbfgsbOptions::default()
    };
    let mut best: Option<(f64, Vec<f64>, usize, bool)> = None;
    let mut evaluations = 0;
    for r in 0..opts.starts {
        let exponent = r.div_ceil(2) as i32 * if r % 2 == 1 { -1 } else { 1 };
        let mut z0 = base.logs();
        z0[1] += f64::from(exponent) * 4f64.ln();
        z0[3] += [1.0f64, 0.1, 5.0][r % 3].ln();
        let per_entry = |z: &[f64], g: &mut [f64]| -> Result<f64> {
            let (value, grad) = objective(&GplvmHyperparameters::from_logs(z))?;
            for (gi, ei) in g.iter_mut().zip(grad) {
                *gi = -ei / np;
            }
            Ok(-value / np)
        };
        let report = try_minimize(per_entry, &z0, &bounds, &lbfgsb).map_err(|e| match e {
            TryMinimizeError::Objective { error, .. } => error,
            TryMinimizeError::Lbfgsb(e) => {
                Error::numerical("GP-LVM score optimiser", e.to_string())
            }
        })?;
        evaluations += report.evaluations;
        let converged = matches!(
            report.status,
            Status::ConvergedPgtol | Status::ConvergedFactr
        );
        if best.as_ref().is_none_or(|b| -report.f > b.0) {
            best = Some((-report.f, report.x, report.iterations, converged));
        }
    }
    let (_, z, iterations, converged) =
        best.ok_or_else(|| Error::numerical("GP-LVM score", "no start ran"))?;
    Ok(Maximum {
        hyperparameters: GplvmHyperparameters::from_logs(&z),
        iterations,
        evaluations,
        converged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use unfold_core::seeded_rng;

    /// A noisy helix arc in 3-D sampled at `n` latent positions `t`, and `t` itself.
    fn curve(n: usize, seed: u64) -> (DMatrix<f64>, DMatrix<f64>) {
        let mut rng = seeded_rng(seed);
        let t = DMatrix::from_fn(n, 1, |i, _| 3.0 * i as f64 / (n - 1) as f64);
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let s = t[(i, 0)];
            [s.cos(), s.sin(), 0.5 * s][j] + 0.05 * rng.random_range(-1.0..1.0)
        });
        (t, y)
    }

    fn random(n: usize, m: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = seeded_rng(seed);
        DMatrix::from_fn(n, m, |_, _| rng.random_range(-1.0..1.0))
    }

    /// Sum over the centred columns of the dense multivariate normal log-density, with
    /// nalgebra's own Cholesky and a kernel matrix built entry by entry.
    fn independent_ll(x: &DMatrix<f64>, y: &DMatrix<f64>, h: &GplvmHyperparameters) -> f64 {
        let n = x.nrows();
        let k = DMatrix::from_fn(n, n, |i, j| {
            let d2 = (x.row(i) - x.row(j)).norm_squared();
            let white = if i == j { h.noise } else { 0.0 };
            h.alpha * (-d2 / (2.0 * h.lengthscale.powi(2))).exp() + h.bias + white
        });
        let chol = nalgebra::Cholesky::new(k).unwrap();
        let log_det: f64 = chol.l().diagonal().iter().map(|d| 2.0 * d.ln()).sum();
        y.column_iter()
            .map(|col| {
                let c = col.add_scalar(-col.mean());
                let quad = c.dot(&chol.solve(&c));
                -0.5 * (n as f64 * (2.0 * std::f64::consts::PI).ln() + log_det + quad)
            })
            .sum()
    }

    const POINTS: [GplvmHyperparameters; 3] = [
        GplvmHyperparameters::new(1.0, 0.7, 0.1, 0.05),
        GplvmHyperparameters::new(0.2, 2.5, 1.5, 0.3),
        GplvmHyperparameters::new(3.0, 0.2, 0.01, 0.002),
    ];

    #[test]
    fn log_likelihood_matches_dense_normal_density() {
        let (x, y) = (random(30, 2, 1), random(30, 4, 2).add_scalar(3.0));
        for h in &POINTS {
            let ours = gplvm_log_likelihood(&x, &y, h).unwrap();
            let reference = independent_ll(&x, &y, h);
            assert!(
                (ours - reference).abs() < 1e-9 * reference.abs(),
                "{ours} vs {reference}"
            );
        }
    }

    #[test]
    fn gradient_matches_central_differences() {
        let problem = Problem::new(&random(25, 2, 3), &random(25, 3, 4)).unwrap();
        for h in &POINTS {
            let z = h.logs();
            let e = problem.evaluate(h).unwrap();
            let norm = e.grad.iter().map(|g| g * g).sum::<f64>().sqrt();
            for i in 0..4 {
                let step = 1e-5;
                let at = |s: f64| {
                    let mut zs = z;
                    zs[i] += s;
                    problem
                        .evaluate(&GplvmHyperparameters::from_logs(&zs))
                        .unwrap()
                        .ll
                };
                let fd = (at(step) - at(-step)) / (2.0 * step);
                let err = (fd - e.grad[i]).abs() / e.grad[i].abs().max(1e-3 * norm);
                assert!(
                    err < 1e-6,
                    "component {i}: {} vs {fd} (rel {err})",
                    e.grad[i]
                );
            }
        }
    }

    #[test]
    fn fit_is_a_stationary_point_and_beats_its_starts() {
        let (x, y) = curve(60, 5);
        let score = gplvm_score(&x, &y, &GplvmScoreOptions::default()).unwrap();
        assert!(score.converged && score.jitter == 0.0);
        let h = score.hyperparameters;
        assert!(
            (score.log_likelihood - independent_ll(&x, &y, &h)).abs()
                < 1e-9 * score.log_likelihood.abs()
        );
        let problem = Problem::new(&x, &y).unwrap();
        let bounds = log_bounds(problem.mean_variance(), problem.median_distance());
        let e = problem.evaluate(&h).unwrap();
        let z = h.logs();
        for i in 0..4 {
            // Projected gradient of the per-entry objective, as L-BFGS-B measures it.
            let g = -e.grad[i] / y.len() as f64;
            let projected = (z[i] - g).clamp(bounds[i].0, bounds[i].1) - z[i];
            assert!(projected.abs() < 1e-5, "component {i}: {projected}");
        }
        // The noise is close to that of the uniform(-0.05, 0.05) perturbation (0.05^2 / 3).
        assert!(h.noise > 2e-4 && h.noise < 2e-3, "noise {}", h.noise);
        let start = GplvmScoreOptions {
            max_iter: 1,
            starts: 1,
            ..Default::default()
        };
        let one_step = gplvm_score(&x, &y, &start).unwrap();
        assert!(score.log_likelihood > one_step.log_likelihood);
    }

    #[test]
    fn true_latent_scores_far_above_a_permutation() {
        let (x, y) = curve(80, 6);
        let mut order: Vec<usize> = (0..80).collect();
        let mut rng = seeded_rng(7);
        for i in (1..80).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let shuffled = DMatrix::from_fn(80, 1, |i, _| x[(order[i], 0)]);
        let opts = GplvmScoreOptions::default();
        let good = gplvm_score(&x, &y, &opts).unwrap().log_likelihood;
        let bad = gplvm_score(&shuffled, &y, &opts).unwrap().log_likelihood;
        assert!(good > bad + 300.0, "true {good} vs permuted {bad}");
    }

    #[test]
    fn jitter_rescues_a_singular_kernel_and_is_reported() {
        let (chol, jitter) = factor_with_jitter(DMatrix::from_element(5, 5, 2.0), "K").unwrap();
        assert!(jitter > 0.0 && jitter <= 2e-4);
        assert!(((chol.l() * chol.l().transpose())[(0, 1)] - 2.0).abs() < 1e-12);
        let (_, none) = factor_with_jitter(DMatrix::identity(5, 5), "K").unwrap();
        assert_eq!(none, 0.0);
    }

    #[test]
    fn rejects_bad_input() {
        let (x, y) = curve(10, 8);
        let opts = GplvmScoreOptions::default();
        let mut nan = y.clone();
        nan[(3, 1)] = f64::NAN;
        assert!(matches!(
            gplvm_score(&x, &nan, &opts),
            Err(Error::NonFinite { .. })
        ));
        assert!(matches!(
            gplvm_score(&x.rows(0, 9).into_owned(), &y, &opts),
            Err(Error::DimensionMismatch(_))
        ));
        let one = |m: &DMatrix<f64>| m.rows(0, 1).into_owned();
        assert!(matches!(
            gplvm_score(&one(&x), &one(&y), &opts),
            Err(Error::TooFewPoints { .. })
        ));
        assert!(matches!(
            gplvm_score(&x, &DMatrix::from_element(10, 2, 4.0), &opts),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            gplvm_score(&DMatrix::zeros(10, 0), &y, &opts),
            Err(Error::Empty(_))
        ));
        for bad in [
            GplvmScoreOptions {
                starts: 0,
                ..Default::default()
            },
            GplvmScoreOptions {
                pgtol: f64::NAN,
                ..Default::default()
            },
            GplvmScoreOptions {
                initial: Some(GplvmHyperparameters::new(1.0, 1.0, 1.0, -1.0)),
                ..Default::default()
            },
        ] {
            assert!(matches!(
                gplvm_score(&x, &y, &bad),
                Err(Error::InvalidParameter { .. })
            ));
        }
        // All latent points equal: still a valid (poor) score, not an error.
        assert!(gplvm_score(&DMatrix::zeros(10, 2), &y, &opts)
            .unwrap()
            .log_likelihood
            .is_finite());
    }
}
