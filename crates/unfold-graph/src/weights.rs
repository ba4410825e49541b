//! Symmetrisation of directed kNN relations and edge weights from distances.

use serde::{Deserialize, Serialize};
use unfold_core::{Error, Result};

/// How directed kNN relations become undirected edges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Symmetrisation {
    /// `i ~ j` if `j` is among the k nearest of `i` **or** `i` among those of `j`.
    /// Every point then has at least k neighbours.
    #[default]
    Union,
    /// `i ~ j` only if each is among the k nearest of the other. Degrees are at most k and
    /// isolated points are possible.
    Mutual,
}

/// The weight `w_ij` of an edge as a function of the Euclidean distance `d_ij` between its
/// endpoints. Every stored weight is finite and strictly positive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Weighting {
    /// `w_ij = 1` (the 0/1 adjacency of Laplacian eigenmaps).
    #[default]
    Binary,
    /// The heat kernel `w_ij = exp(-d_ij^2 / (2 sigma^2))`, i.e. Belkin & Niyogi's
    /// `exp(-||x_i - x_j||^2 / t)` with `t = 2 sigma^2`. `sigma > 0`.
    Heat {
        /// Length scale of the kernel.
        sigma: f64,
    },
    /// `w_ij = d_ij`, the Euclidean edge length (Isomap's graph distances). Coincident
    /// points would give a zero-length edge and are rejected.
    Distance,
}

impl Weighting {
    /// Fails unless the parameters are valid (`sigma` finite and positive).
    pub fn validate(&self) -> Result<()> {
        if let Weighting::Heat { sigma } = *self {
            if !(sigma.is_finite() && sigma > 0.0) {
                return Err(Error::invalid(
                    "sigma",
                    format!("the heat-kernel width must be finite and positive, got {sigma}; a common choice is the median kNN distance"),
                ));
            }
        }
        Ok(())
    }

    /// The weight of edge `(i, j)` at Euclidean distance `d`, checked to be finite and
    /// positive.
    ///
    /// # Errors
    /// [`Error::DuplicatePoints`] for a zero-length edge under [`Weighting::Distance`];
    /// [`Error::Numerical`] if the heat kernel underflows to zero (sigma far too small).
    pub fn edge_weight(&self, i: usize, j: usize, d: f64) -> Result<f64> {
        let w = match *self {
            Weighting::Binary => 1.0,
            Weighting::Heat { sigma } => (-(d * d) / (2.0 * sigma * sigma)).exp(),
            Weighting::Distance => d,
        };
        if w > 0.0 && w.is_finite() {
            return Ok(w);
        }
        match *self {
            Weighting::Distance if d == 0.0 => Err(Error::DuplicatePoints {
                first: i.min(j),
                second: i.max(j),
                method: "distance weighting (a zero-length edge)".into(),
            }),
            _ => Err(Error::numerical(
                format!("weight of edge ({i}, {j}) at distance {d} under {self:?}"),
                "the weight is zero or not finite; for the heat kernel increase sigma (e.g. to the median kNN distance)",
            )),
        }
    }
}
