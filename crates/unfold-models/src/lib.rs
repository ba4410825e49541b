//! The models of unfold, one folder per family, one file per model:
//!
//! - [`spectral`]: PCA, classical MDS, kernel PCA, Laplacian eigenmaps, LLE, Isomap, MVU;
//! - [`grf`]: the Gaussian random fields MEU, ALLE, lle-pl and DRILL
//!   ([`GaussianRandomField`]);
//! - [`lvm`]: LL-LVM, fitted by variational EM ([`lvm::LatentVariableModel`]);
//! - [`regularised`]: the posterior-regularised SPL, MPME, DRTree and DDRTree
//!   ([`PosteriorRegularised`]).
//!
//! Every model is fitted from a `Params` value that is validated before any work starts
//! (linfa style), and the fitted model implements [`Embedding`] and, where a standard rule
//! exists, [`OutOfSample`]. Every method is registered in [`registry::Registry`], through
//! which the command line, model selection, model files and the Python package reach it.

// Vector instructions come from unfold-linalg's SIMD layer (`unfold_linalg::simd`).
#![forbid(unsafe_code)]

pub mod field;
pub mod grf;

#[doc(hidden)]
pub use unfold_core as __core;
pub mod lvm;
pub mod method;
pub mod optimise;
pub mod registry;
pub mod regularised;
pub mod spectral;
pub mod traits;
/// The ordering of points along a learned tree (pseudotime, states, branch points), which
/// lives in `unfold-graph` ([`unfold_graph::trajectory`]); kept here for the paths that
/// name it `unfold_models::trajectory`.
pub use unfold_graph::trajectory;

pub use grf::alle::{Alle, AlleParams, Ordering};
pub use grf::drill::{Drill, DrillParams};
pub use grf::lle_pl::{LlePl, LlePlParams};
pub use grf::meu::{Meu, MeuField, MeuParams};
pub use grf::regression::{LocalRegressions, PrecisionRule};
pub use grf::{
    FieldFitOptions, FieldFitReport, FieldScaling, GaussianRandomField, Precision, Solver,
};
pub use lvm::lllvm::{
    AlphaRule, FactorisedProblem, LlLvm, LlLvmInit, LlLvmParams, LlLvmProblem, MeanSolve,
    Posterior, Preprocess,
};
pub use regularised::ddrtree::{Compat, DdrTree, DdrTreeParams, Keep};
pub use regularised::drtree::{DrTree, DrTreeParams};
pub use regularised::mpme::{DistanceScale, Mpme, MpmeDual, MpmeEmbedding, MpmeParams};
pub use regularised::spl::{Spl, SplDual, SplParams, SplSolver};
pub use regularised::{DualSolution, PairDual, PosteriorRegularised};
pub use spectral::cmds::{Cmds, CmdsParams};
pub use spectral::isomap::{Isomap, IsomapParams};
pub use spectral::kernel_pca::{KernelPca, KernelPcaParams};
pub use spectral::laplacian_eigenmaps::{LaplacianEigenmaps, LaplacianEigenmapsParams, LeWeights};
pub use spectral::lle::{Lle, LleParams};
pub use spectral::mvu::{Mvu, MvuParams, MvuSolver};
pub use spectral::pca::{Pca, PcaParams};
pub use traits::{Embedding, OutOfSample, Projection};
pub use unfold_graph::GraphSpec;
