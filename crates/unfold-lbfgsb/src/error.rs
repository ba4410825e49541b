//! Errors returned by [`crate::minimize`]. Bad input never panics; each variant says what is
//! wrong and what to do about it.

/// Everything that can go wrong before or during an L-BFGS-B run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The problem has no variables.
    #[error("x0 is empty: give at least one variable")]
    Empty,
    /// `x0` and `bounds` disagree in length.
    #[error("x0 has {x0} entries but bounds has {bounds}: give exactly one (lower, upper) pair per variable")]
    LengthMismatch {
        /// Length of `x0`.
        x0: usize,
        /// Length of `bounds`.
        bounds: usize,
    },
    /// A bound is NaN.
    #[error("bound of variable {index} is NaN: use f64::NEG_INFINITY / f64::INFINITY for a missing bound")]
    NanBound {
        /// Variable index.
        index: usize,
    },
    /// Lower bound above upper bound.
    #[error(
        "variable {index} has lower bound {lower} > upper bound {upper}: swap or fix the bounds"
    )]
    LowerAboveUpper {
        /// Variable index.
        index: usize,
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// Lower bound is +inf or upper bound is -inf: the box contains no finite point.
    #[error("variable {index} has bounds ({lower}, {upper}), which contain no finite point: the lower bound must be < +inf and the upper bound > -inf")]
    UnreachableBound {
        /// Variable index.
        index: usize,
        /// Lower bound.
        lower: f64,
        /// Upper bound.
        upper: f64,
    },
    /// A starting value is NaN or infinite.
    #[error("x0[{index}] = {value} is not finite: start from a finite point")]
    NonFiniteStart {
        /// Variable index.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// The objective returned a non-finite value or gradient at the (projected) starting point.
    #[error("the objective is not finite at the starting point ({what}): check the function or start elsewhere")]
    NonFiniteAtStart {
        /// Which quantity (`"f"` or `"gradient[i]"`).
        what: String,
    },
    /// The objective returned a non-finite value or gradient during the run.
    #[error("the objective became non-finite during the run ({what}) at evaluation {evaluation}, iteration {iteration}: restrict the bounds to the domain where f is finite")]
    NonFiniteDuringRun {
        /// Which quantity (`"f"` or `"gradient[i]"`).
        what: String,
        /// Evaluation count (1-based) at which it happened.
        evaluation: usize,
        /// Completed iterations at that time.
        iteration: usize,
    },
    /// An option is out of range.
    #[error("invalid option {name} = {value}: {reason}")]
    InvalidOption {
        /// Option name.
        name: &'static str,
        /// Value given, formatted.
        value: String,
        /// What is required.
        reason: &'static str,
    },
}

/// Why [`crate::try_minimize`] failed: the errors of [`crate::minimize`], or the objective's
/// own error, which stops the run at once.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TryMinimizeError<E> {
    /// Invalid input or a non-finite objective, as in [`crate::minimize`].
    #[error(transparent)]
    Lbfgsb(#[from] Error),
    /// The objective returned an error.
    #[error(
        "the objective failed at evaluation {evaluation} (after {iterations} iterations): {error}"
    )]
    Objective {
        /// The objective's error.
        error: E,
        /// Iterations completed before the failing evaluation.
        iterations: usize,
        /// The evaluation (1-based) that failed.
        evaluation: usize,
    },
}
