//! Quality metrics for embeddings and clusterings.
//!
//! Every function takes points as the ROWS of an `n x p` (data) or `n x q` (embedding)
//! `nalgebra` matrix, validates its input up front and reports bad input as an
//! [`unfold_core::Error`], never by a panic.
//!
//! * [`procrustes`] / [`procrustes_error`]: distance to a known ground truth after the best
//!   similarity transform (Gower 1975; SciPy's `disparity`).
//! * [`trustworthiness`] / [`continuity`]: rank-based preservation of k-neighbourhoods
//!   (Venna & Kaski 2001; scikit-learn's `trustworthiness`).
//! * [`residual_variance`]: `1 - rho^2` between given (e.g. geodesic) distances and embedding
//!   distances (Tenenbaum, de Silva & Langford 2000).
//! * [`loo_1nn_accuracy`]: leave-one-out 1-nearest-neighbour classification accuracy.
//! * [`gplvm_score`]: the GP-LVM likelihood of an embedding (Lawrence 2005), the score of
//!   Lawrence (2012, §4): a Gaussian process from the latent points to the data, kernel
//!   hyperparameters maximised; [`gplvm_bound`], its sparse variational lower bound
//!   (Titsias 2009) for large n; [`gplvm_evidence`], the one that `GplvmScoreOptions::solver`
//!   picks (exact up to [`GPLVM_EXACT_MAX_POINTS`] points by default), labelled.
//! * [`kmeans`], [`hungarian`], [`clustering_accuracy`], [`nmi`]: clustering of an
//!   embedding and its agreement with known classes.
//! * Trajectories (a tree over the cells, [`TrajectoryLayout`]) against a reference, with
//!   dynverse's definitions (`docs/trajectory_metrics.md`): [`geodesic_correlation`],
//!   [`pseudotime_correlation`], [`f1_branches`] / [`f1_labels`] and [`him`].
//!
//! Neighbours are always ordered by the pair (distance, index): of two points at the same
//! distance the one with the smaller row index is the nearer. See `docs/eval.md` for the
//! formulas.
//!
//! ```
//! use nalgebra::DMatrix;
//! use unfold_eval::{kmeans, nmi, procrustes, trustworthiness, KMeansOptions};
//!
//! // Twelve points on a line and an embedding that is the line scaled by -2 and shifted.
//! let truth = DMatrix::from_fn(12, 1, |i, _| i as f64);
//! let embedding = truth.map(|t| 5.0 - 2.0 * t);
//! let fit = procrustes(&embedding, &truth)?;
//! assert!(fit.error < 1e-20 && (fit.scale - 0.5).abs() < 1e-12);
//! assert_eq!(trustworthiness(&truth, &embedding, 3)?, 1.0);
//!
//! // Two clusters on the line, recovered by k-means up to relabelling.
//! let clusters = kmeans(&truth, 2, &KMeansOptions::default())?;
//! let classes: Vec<usize> = (0..12).map(|i| usize::from(i >= 6)).collect();
//! assert_eq!(nmi(&clusters.labels, &classes)?, 1.0);
//! # Ok::<(), unfold_core::Error>(())
//! ```

mod assignment;
mod check;
mod clustering;
mod correlation;
mod gplvm_bound;
mod gplvm_score;
mod heldout;
mod kmeans;
mod knn;
mod neighbourhood;
mod procrustes;
mod ranks;
mod residual;
mod rows;
mod trajectory;

pub use assignment::hungarian;
pub use clustering::{clustering_accuracy, nmi};
pub use correlation::spearman;
pub use gplvm_bound::{gplvm_bound, gplvm_lower_bound, GplvmBound, GPLVM_DEFAULT_INDUCING};
pub use gplvm_score::{
    gplvm_evidence, gplvm_log_likelihood, gplvm_score, GplvmEvidence, GplvmHyperparameters,
    GplvmScore, GplvmScoreOptions, GplvmSolver, GPLVM_EXACT_MAX_POINTS,
};
pub use heldout::{heldout_log_density, HeldOutScore};
pub use kmeans::{
    kmeans, kmeans_with, EmptyClusters, KMeansFit, KMeansInit, KMeansOptions, NearestCentres,
};
pub use knn::loo_1nn_accuracy;
pub use neighbourhood::{continuity, trustworthiness};
pub use procrustes::{procrustes, procrustes_error, Procrustes};
pub use residual::residual_variance;
pub use trajectory::{
    branches, f1_branches, f1_labels, geodesic_agreement, geodesic_correlation, geodesic_distances,
    him, pseudotime, pseudotime_correlation, waypoint_cells, BranchF1, Him, HimOptions, Root,
    TrajectoryLayout, Waypoints, TIE_PRECISION,
};
