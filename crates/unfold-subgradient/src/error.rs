//! Errors of the projected subgradient method.

/// Everything that can go wrong in [`crate::minimize`], [`crate::maximize`] or the argmin
/// solver. Every variant says what is wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The starting point has no coordinates.
    #[error("the starting point x0 is empty: give at least one coordinate")]
    EmptyProblem,
    /// The starting point does not match the dimension of the box projection.
    #[error("x0 has {got} coordinates but the box has {expected} bounds: give one (lower, upper) pair per coordinate")]
    DimensionMismatch {
        /// Number of bounds in the box.
        expected: usize,
        /// Length of x0.
        got: usize,
    },
    /// A coordinate of the starting point is NaN or infinite.
    #[error("x0[{index}] = {value} is not finite: start from a finite point")]
    NonFiniteStart {
        /// Offending coordinate.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A pair of bounds is empty (lower > upper) or NaN.
    #[error("bounds of coordinate {index} are invalid (lower = {lower}, upper = {upper}): need lower <= upper, no NaN (infinite bounds are allowed)")]
    BadBounds {
        /// Offending coordinate.
        index: usize,
        /// Its lower bound.
        lower: f64,
        /// Its upper bound.
        upper: f64,
    },
    /// A step-size parameter or an option is out of range.
    #[error("invalid option {name} = {value}: {requirement}")]
    InvalidOption {
        /// Name of the parameter (for example `a0`).
        name: &'static str,
        /// Value given.
        value: f64,
        /// What the parameter must satisfy.
        requirement: &'static str,
    },
    /// The objective returned NaN or an infinity.
    #[error("the objective is {value} at iteration {iteration}: the function must be finite on the feasible set (check the projection and the formula)")]
    NonFiniteValue {
        /// Iteration at which it happened (0 is the starting point).
        iteration: usize,
        /// Value returned.
        value: f64,
    },
    /// The subgradient has a NaN or infinite entry.
    #[error("subgradient entry {index} is {value} at iteration {iteration}: the subgradient must be finite (check the formula)")]
    NonFiniteSubgradient {
        /// Iteration at which it happened.
        iteration: usize,
        /// Offending entry.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A user projection returned a point with a NaN or infinite coordinate.
    #[error("the projection returned a non-finite coordinate {index} = {value} at iteration {iteration}: the projection must map finite points to finite points")]
    NonFiniteProjection {
        /// Iteration at which it happened.
        iteration: usize,
        /// Offending coordinate.
        index: usize,
        /// Its value.
        value: f64,
    },
}

/// Why [`crate::try_optimize`] failed: the errors of [`crate::optimize`], or the
/// objective's own error, which stops the method at once.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TryOptimizeError<E> {
    /// Invalid input or a non-finite objective, as in [`crate::optimize`].
    #[error(transparent)]
    Subgradient(#[from] Error),
    /// The objective returned an error.
    #[error("the objective failed at iteration {iteration}: {error}")]
    Objective {
        /// The objective's error.
        error: E,
        /// The iteration at which it failed (0 is the starting point).
        iteration: usize,
    },
}
