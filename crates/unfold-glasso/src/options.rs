//! Penalty, options and the fitted result.

use nalgebra::DMatrix;

/// The L1 penalty `sum_{i,j} rho_ij |Theta_ij|` (sum over ordered pairs, so an off-diagonal
/// pair costs `2 rho_ij |Theta_ij|`, as in scikit-learn and R's glasso).
#[derive(Debug, Clone, PartialEq)]
pub enum Penalty {
    /// The same `rho >= 0` (finite) for every entry.
    Scalar(f64),
    /// A symmetric p x p matrix of penalties `rho_ij >= 0`. Off-diagonal entries may be
    /// `+inf`: they force `Theta_ij = 0` exactly (a support mask, e.g. a kNN graph). The
    /// diagonal is used only with `penalize_diagonal` (then it must be finite) and is
    /// ignored otherwise.
    Matrix(DMatrix<f64>),
}

/// Options of [`crate::graphical_lasso`].
#[derive(Debug, Clone, PartialEq)]
pub struct GlassoOptions {
    /// Penalise the diagonal `rho_ii Theta_ii` (R's glasso does; scikit-learn does not).
    /// Default false.
    pub penalize_diagonal: bool,
    /// Stop when the duality gap [`GlassoFit::duality_gap`] is at most `tol` in absolute
    /// value (default 1e-4, scikit-learn's default). It costs two Cholesky factorisations, so
    /// it is computed when scikit-learn's cheap gap `tr(S Theta) - p + sum rho |Theta|`
    /// (every sweep) is at most `tol`, and every 10th sweep. With screening, component c of
    /// size m_c gets `tol * m_c / p`.
    pub tol: f64,
    /// Maximum number of sweeps over the columns (default 100).
    pub max_iter: usize,
    /// Floor of the inner lasso tolerance: a coordinate-descent pass has converged when
    /// `max_j W_jj |beta_j change| <= t * mean_i W_ii`, where
    /// `t = clamp(0.1 |gap| / p, inner_tol, 1e-3)` follows the duality gap of the previous
    /// sweep, tenfold tighter when a sweep fails to halve the gap (inexact block coordinate
    /// descent; `t = 1e-3` in the first sweep). Default 1e-7.
    pub inner_tol: f64,
    /// Maximum coordinate-descent passes per inner lasso (default 1000).
    pub inner_max_iter: usize,
    /// Start from a previous fit: `(W, Theta)` (covariance, precision), both p x p, e.g. the
    /// fit at a nearby penalty. The diagonal of W is reset to `S_ii (+ rho_ii)`. If that W is
    /// indefinite, or the sweeps collapse from it (a W from another penalty need not be dual
    /// feasible), the solve restarts from `W = S + diag(rho)` with only the lasso
    /// coefficients `-Theta_ji / Theta_ii` warm.
    pub warm_start: Option<(DMatrix<f64>, DMatrix<f64>)>,
    /// Split the problem into the connected components of `{ |S_ij| > rho_ij }` and solve
    /// them separately (exact: Witten, Friedman & Simon 2011; Mazumder & Hastie 2012).
    /// Default true.
    pub screen: bool,
}

impl Default for GlassoOptions {
    fn default() -> Self {
        GlassoOptions {
            penalize_diagonal: false,
            tol: 1e-4,
            max_iter: 100,
            inner_tol: 1e-7,
            inner_max_iter: 1000,
            warm_start: None,
            screen: true,
        }
    }
}

/// A fitted graphical lasso.
#[derive(Debug, Clone, PartialEq)]
pub struct GlassoFit {
    /// The estimated precision `Theta` (symmetric, p x p).
    pub precision: DMatrix<f64>,
    /// The estimated covariance `W` (the dual variable, `W ≈ Theta^{-1}`; exact on the
    /// diagonal: `W_ii = S_ii + rho_ii` or `S_ii`).
    pub covariance: DMatrix<f64>,
    /// The penalised log-likelihood `log det Theta - tr(S Theta) - sum rho_ij |Theta_ij|`
    /// (NaN if the returned Theta is not positive definite, which can only happen without
    /// convergence).
    pub objective: f64,
    /// The duality gap `dual(W) - primal(Theta)` between the returned covariance W (dual
    /// feasible: `|W_ij - S_ij| <= rho_ij`, `W_ii = S_ii + rho_ii`) with dual objective
    /// `-log det W - p`, and the returned precision with primal objective [`objective`]:
    ///
    /// ```text
    /// gap = tr(S Theta) - p + sum_ij rho_ij |Theta_ij| - log det W - log det Theta
    /// ```
    ///
    /// (entries with infinite penalty have `Theta_ij = 0` and contribute nothing; `rho_ii = 0`
    /// when the diagonal is unpenalised). With `W = Theta^{-1}` it is scikit-learn's
    /// `tr(S Theta) - p + sum rho |Theta|`; it is 0 at the optimum, and `+inf` if W or Theta
    /// is not positive definite. Summed over screened components.
    ///
    /// [`objective`]: GlassoFit::objective
    pub duality_gap: f64,
    /// Number of sweeps over the columns (the maximum over the screened components).
    pub iterations: usize,
    /// The duality gap after each sweep, summed over the components (one that stopped
    /// earlier counts with its last gap); `gap_trace.len() == iterations`.
    pub gap_trace: Vec<f64>,
    /// Whether `|duality_gap| <= tol` was reached.
    pub converged: bool,
    /// Number of connected components solved separately (1 without screening).
    pub components: usize,
}
