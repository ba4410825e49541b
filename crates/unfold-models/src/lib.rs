//! The models of unfold.
//!
//! Every model is fitted from a `Params` value that is validated before any work starts
//! (linfa style), and the fitted model implements [`Embedding`] and, where a standard rule
//! exists, [`OutOfSample`]. Fitted models are saved and loaded through [`FittedModel`].
//!
//! Spectral baselines (issue 2): [`Pca`], [`Cmds`], [`KernelPca`],
//! [`LaplacianEigenmaps`], [`Lle`], [`Isomap`].
//!
//! Gaussian random fields (issue 4, [`grf`]): [`Meu`], [`Alle`], [`LlePl`], [`Drill`].

// Vector instructions come from unfold-linalg's SIMD layer (`unfold_linalg::simd`).
#![forbid(unsafe_code)]

pub mod grf;
pub mod lvm;
pub mod neighbourhood;
mod orient;
pub mod persist;
pub mod regularised;
pub mod spectral;
pub mod traits;

pub use grf::alle::{Alle, AlleParams, Ordering};
pub use grf::drill::{Drill, DrillParams};
pub use grf::lle_pl::{LlePl, LlePlParams};
pub use grf::meu::{Meu, MeuField, MeuParams};
pub use grf::regression::{LocalRegressions, PrecisionRule};
pub use grf::{FieldFitOptions, FieldFitReport, FieldScaling, GaussianRandomField, Precision};
pub use lvm::lllvm::{AlphaRule, LlLvm, LlLvmInit, LlLvmParams, LlLvmProblem, Preprocess};
pub use neighbourhood::GraphSpec;
pub use persist::FittedModel;
pub use regularised::ddrtree::{Compat, DdrTree, DdrTreeParams};
pub use regularised::drtree::{DrTree, DrTreeParams};
pub use regularised::mpme::{DistanceScale, Mpme, MpmeDual, MpmeEmbedding, MpmeParams};
pub use regularised::spl::{Spl, SplDual, SplParams, SplSolver};
pub use regularised::{DualSolution, PosteriorRegularised};
pub use spectral::cmds::{Cmds, CmdsParams};
pub use spectral::isomap::{Isomap, IsomapParams};
pub use spectral::kernel_pca::{KernelPca, KernelPcaParams};
pub use spectral::laplacian_eigenmaps::{LaplacianEigenmaps, LaplacianEigenmapsParams, LeWeights};
pub use spectral::lle::{Lle, LleParams};
pub use spectral::mvu::{Mvu, MvuParams, MvuSolver};
pub use spectral::pca::{Pca, PcaParams};
pub use traits::{Embedding, OutOfSample, Projection};
