//! The traits every fitted embedding implements.

use nalgebra::DMatrix;
use unfold_core::{Error, Evidence, Result};
use unfold_graph::NeighbourGraph;

/// A fitted embedding of the training points.
pub trait Embedding {
    /// The embedding, one row per training point (n x q), in input order.
    fn coords(&self) -> &DMatrix<f64>;

    /// The neighbourhood graph the model was fitted on, if it has one.
    fn graph(&self) -> Option<&NeighbourGraph> {
        None
    }

    /// The model's labelled probabilistic score ([`Evidence::none`] for methods without one).
    fn evidence(&self) -> Evidence {
        Evidence::none()
    }
}

/// Implements [`Embedding`] for a fitted model with the fields `coords: DMatrix<f64>` and
/// `evidence: Evidence`, and with `graph` also `graph: NeighbourGraph`:
///
/// ```
/// # use nalgebra::DMatrix;
/// # use unfold_core::Evidence;
/// struct Fitted {
///     coords: DMatrix<f64>,
///     evidence: Evidence,
/// }
/// unfold_models::embedding!(Fitted);
/// ```
#[macro_export]
macro_rules! embedding {
    ($model:ty) => {
        impl $crate::Embedding for $model {
            fn coords(&self) -> &$crate::traits::macro_types::DMatrix<f64> {
                &self.coords
            }

            fn evidence(&self) -> $crate::traits::macro_types::Evidence {
                self.evidence.clone()
            }
        }
    };
    ($model:ty, trained) => {
        impl $crate::Embedding for $model {
            fn coords(&self) -> &$crate::traits::macro_types::DMatrix<f64> {
                &self.trained.coords
            }

            fn graph(&self) -> Option<&$crate::traits::macro_types::NeighbourGraph> {
                Some(&self.trained.graph)
            }

            fn evidence(&self) -> $crate::traits::macro_types::Evidence {
                self.evidence.clone()
            }
        }
    };
    ($model:ty, graph) => {
        impl $crate::Embedding for $model {
            fn coords(&self) -> &$crate::traits::macro_types::DMatrix<f64> {
                &self.coords
            }

            fn graph(&self) -> Option<&$crate::traits::macro_types::NeighbourGraph> {
                Some(&self.graph)
            }

            fn evidence(&self) -> $crate::traits::macro_types::Evidence {
                self.evidence.clone()
            }
        }
    };
}

/// The types [`embedding!`] names, reachable from any crate.
#[doc(hidden)]
pub mod macro_types {
    pub use nalgebra::DMatrix;
    pub use unfold_core::Evidence;
    pub use unfold_graph::NeighbourGraph;
}

/// Out-of-sample projection of new points into a fitted embedding.
pub trait OutOfSample: Embedding {
    /// Projects new points (rows of `y_new`, same features as the training data).
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection>;
}

/// Projected positions of new points: the mean (m x q), and a q x q covariance per point
/// where the model defines one.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    pub mean: DMatrix<f64>,
    pub covariance: Option<Vec<DMatrix<f64>>>,
}

impl Projection {
    /// A projection with positions only.
    pub fn point(mean: DMatrix<f64>) -> Self {
        Projection {
            mean,
            covariance: None,
        }
    }
}

/// Checks new points before projection: finite values of a magnitude unfold computes with
/// ([`unfold_core::check_points`]) and the training feature count.
pub fn check_new_points(y_new: &DMatrix<f64>, p: usize) -> Result<()> {
    unfold_core::check_points(y_new, "the points to project")?;
    if y_new.ncols() != p {
        return Err(Error::DimensionMismatch(format!(
            "the points to project have {} features but the model was fitted on {p}",
            y_new.ncols()
        )));
    }
    Ok(())
}

/// Refuses a fit of `method` on `n` points that holds `matrices` dense n x n matrices of
/// f64 at its peak when they exceed the memory limit (`--max-memory`, `UNFOLD_MAX_MEMORY`
/// or the machine's available memory), before allocating them; `alternative` is what to
/// use instead.
pub(crate) fn check_dense_memory(
    method: &str,
    n: usize,
    matrices: f64,
    alternative: &str,
) -> Result<()> {
    unfold_core::MemoryLimit::from_env_or_machine()?.check(&unfold_core::Footprint {
        method,
        n,
        bytes: &|m| (8.0 * matrices * (m as f64) * (m as f64)).min(u64::MAX as f64) as u64,
        holds: format!("{matrices} dense n x n matrices"),
        alternative,
    })
}

/// Checks training data and latent dimension: finite values of a magnitude unfold computes
/// with ([`unfold_core::check_points`]: squared distances neither overflow nor underflow),
/// at least two points, and `1 <= dim < min(p, n)` (every method here reduces dimension).
pub fn check_fit_input(y: &DMatrix<f64>, dim: usize, method: &str) -> Result<()> {
    check_fit_values(
        y.as_slice(),
        y.shape(),
        unfold_core::Order::Columns,
        dim,
        method,
    )
}

/// [`check_fit_input`] of n x p points given as values in `order`.
pub fn check_fit_values(
    values: &[f64],
    (n, p): (usize, usize),
    order: unfold_core::Order,
    dim: usize,
    method: &str,
) -> Result<()> {
    unfold_core::check_point_values(values, n, p, order, "the data")?;
    check_fit_shape(n, p, dim, method)
}

/// The shape half of [`check_fit_input`]: at least two points and `1 <= dim < min(p, n)`.
fn check_fit_shape(n: usize, p: usize, dim: usize, method: &str) -> Result<()> {
    if n < 2 {
        return Err(Error::TooFewPoints {
            what: method.to_string(),
            needed: 2,
            got: n,
            advice: "provide more points".to_string(),
        });
    }
    unfold_core::check_dim(
        dim,
        p,
        &format!("{method} reduces the {p} feature(s) of the data"),
    )?;
    unfold_core::check_dim(dim, n, "there must be more points than latent dimensions")
}
