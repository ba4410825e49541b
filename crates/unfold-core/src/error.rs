use std::path::PathBuf;

/// The result type of every fallible unfold function.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in unfold, each with enough detail for a user to act on.
///
/// Bad input is reported here and never by a panic. Messages say what is wrong and, where
/// there is one, what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A NaN or infinite value in the input.
    #[error("{what} contains a non-finite value (NaN or Inf) at row {row}, column {col}; remove or impute it before fitting")]
    NonFinite {
        what: String,
        row: usize,
        col: usize,
    },
    /// There is no data at all.
    #[error("{0} is empty: there are no points to work with")]
    Empty(String),
    /// Too few points for the requested neighbourhood size or model.
    #[error("{what} needs at least {needed} points but the data has {got}; {advice}")]
    TooFewPoints {
        what: String,
        needed: usize,
        got: usize,
        advice: String,
    },
    /// Two input points coincide where the method cannot cope with it.
    #[error("points {first} and {second} (0-based rows) are identical, which {method} cannot handle; remove duplicate rows or add a little jitter")]
    DuplicatePoints {
        first: usize,
        second: usize,
        method: String,
    },
    /// The neighbourhood graph falls apart into several pieces.
    #[error("the neighbourhood graph has {components} connected components (largest {largest} of {n} points); {advice}")]
    DisconnectedGraph {
        components: usize,
        largest: usize,
        n: usize,
        advice: String,
    },
    /// The requested latent dimension is not below the limit the method allows.
    #[error("{}", dimension_too_large(*dim, *limit, reason))]
    DimensionTooLarge {
        dim: usize,
        limit: usize,
        reason: String,
    },
    /// A matrix that must be symmetric positive definite is not.
    #[error("{context}: matrix is not positive definite (failed at pivot {pivot}); {advice}")]
    NotPositiveDefinite {
        context: String,
        pivot: usize,
        advice: String,
    },
    /// Shapes of arguments disagree.
    #[error("dimension mismatch: {0}")]
    DimensionMismatch(String),
    /// The caller asked the fit to stop ([`crate::Observer::stopped`]: Ctrl-C in Python).
    #[error("the fit was interrupted before it finished; nothing was kept")]
    Interrupted,
    /// A parameter outside its valid range.
    #[error("invalid value for `{name}`: {message}")]
    InvalidParameter { name: String, message: String },
    /// A text input (CSV, .npy header, option value) could not be read.
    #[error("{source_name}, line {line}: {message}")]
    Parse {
        source_name: String,
        line: usize,
        message: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A saved model file of the wrong format, version or kind, or corrupt.
    #[error("model file {}: {message}", path.display())]
    ModelFile { path: PathBuf, message: String },
    /// A numerical procedure failed (non-finite objective, breakdown, ...).
    #[error("{context}: {message}")]
    Numerical { context: String, message: String },
    /// A dense method would need more memory than the limit allows (refused before it
    /// allocates anything large; see [`crate::MemoryLimit`]).
    #[error("{0}")]
    OverMemoryLimit(Box<crate::MemoryRefusal>),
    /// An iterative method stopped before its tolerance was met where that is an error.
    #[error("{context} did not converge after {iterations} iterations; {advice}")]
    NotConverged {
        context: String,
        iterations: usize,
        advice: String,
    },
}

/// The message of [`Error::DimensionTooLarge`]: with a limit of 1 or less no latent
/// dimension is possible, so the fix is in the data, not in the dimension.
fn dimension_too_large(dim: usize, limit: usize, reason: &str) -> String {
    if limit <= 1 {
        format!(
            "latent dimension {dim} is impossible: no dimension of at least 1 is below the \
             limit {limit} ({reason}); the input needs more features (columns) or points"
        )
    } else {
        format!("latent dimension {dim} is too large: it must be less than {limit} ({reason})")
    }
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(name: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name: name.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Numerical`].
    pub fn numerical(context: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Numerical {
            context: context.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
