//! Errors of the graphical lasso.

/// Everything that can go wrong in [`crate::graphical_lasso`]. Non-convergence is not an
/// error: it is reported as `converged: false` in the fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// S has no rows.
    #[error("the covariance matrix S is empty: give at least one variable")]
    Empty,
    /// S is not square.
    #[error("S must be square, got {rows} x {cols}")]
    NotSquare {
        /// Rows of S.
        rows: usize,
        /// Columns of S.
        cols: usize,
    },
    /// S has a NaN or infinite entry.
    #[error(
        "S[({row}, {col})] = {value} is not finite: remove NaN/Inf from the data before forming S"
    )]
    NonFinite {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// Its value.
        value: f64,
    },
    /// S is not symmetric (beyond `1e-10 * max|S|`).
    #[error("S is not symmetric: S[({row}, {col})] = {upper} but S[({col}, {row})] = {lower}; pass (S + S^T)/2")]
    NotSymmetric {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// `S[row, col]`.
        upper: f64,
        /// `S[col, row]`.
        lower: f64,
    },
    /// A diagonal entry of S is negative: S is not a covariance matrix.
    #[error(
        "S[({index}, {index})] = {value} < 0: a covariance matrix has a non-negative diagonal"
    )]
    NegativeVariance {
        /// Variable.
        index: usize,
        /// Its variance.
        value: f64,
    },
    /// A penalty is NaN, negative, or infinite where that is not allowed.
    #[error("penalty at ({row}, {col}) = {value} is invalid: {requirement}")]
    BadPenalty {
        /// Row of the entry (0 for a scalar penalty).
        row: usize,
        /// Column of the entry (0 for a scalar penalty).
        col: usize,
        /// Its value.
        value: f64,
        /// What it must satisfy.
        requirement: &'static str,
    },
    /// The penalty matrix does not have the shape of S.
    #[error(
        "the penalty matrix is {rows} x {cols} but S is {p} x {p}: give one penalty per entry of S"
    )]
    PenaltyShape {
        /// Rows of the penalty matrix.
        rows: usize,
        /// Columns of the penalty matrix.
        cols: usize,
        /// Dimension of S.
        p: usize,
    },
    /// The penalty matrix is not symmetric.
    #[error("the penalty matrix is not symmetric: P[({row}, {col})] = {upper} but P[({col}, {row})] = {lower}")]
    PenaltyNotSymmetric {
        /// Row of the entry.
        row: usize,
        /// Column of the entry.
        col: usize,
        /// `P[row, col]`.
        upper: f64,
        /// `P[col, row]`.
        lower: f64,
    },
    /// An option is out of range.
    #[error("invalid option {name} = {value}: {requirement}")]
    InvalidOption {
        /// Name of the option.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must satisfy.
        requirement: &'static str,
    },
    /// The warm start is unusable.
    #[error("invalid warm start: {reason}")]
    BadWarmStart {
        /// What is wrong.
        reason: String,
    },
    /// The penalised likelihood is unbounded: no maximiser exists.
    #[error(
        "the graphical lasso has no solution: {reason}; increase rho (or penalise the diagonal)"
    )]
    NoSolution {
        /// Where it was detected.
        reason: String,
    },
    /// The caller's progress callback asked to stop ([`crate::graphical_lasso_observed`]).
    #[error("the graphical lasso was stopped by its caller before it converged")]
    Stopped,
}
