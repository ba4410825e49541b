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

pub mod alle;
pub mod cmds;
pub mod ddrtree;
pub mod drill;
pub mod drtree;
pub mod grf;
pub mod isomap;
pub mod kernel_pca;
pub mod laplacian_eigenmaps;
pub mod lle;
pub mod lle_pl;
pub mod lllvm;
pub mod meu;
pub mod mpme;
pub mod mvu;
pub mod neighbourhood;
mod orient;
pub mod pca;
pub mod persist;
pub mod posterior;
pub mod regression;
pub mod spl;
pub mod traits;

pub use alle::{Alle, AlleParams, Ordering};
pub use cmds::{Cmds, CmdsParams};
pub use ddrtree::{Compat, DdrTree, DdrTreeParams};
pub use drill::{Drill, DrillParams};
pub use drtree::{DrTree, DrTreeParams};
pub use grf::{FieldFitOptions, FieldFitReport, FieldScaling, GaussianRandomField, Precision};
pub use isomap::{Isomap, IsomapParams};
pub use kernel_pca::{KernelPca, KernelPcaParams};
pub use laplacian_eigenmaps::{LaplacianEigenmaps, LaplacianEigenmapsParams, LeWeights};
pub use lle::{Lle, LleParams};
pub use lle_pl::{LlePl, LlePlParams};
pub use lllvm::{AlphaRule, LlLvm, LlLvmInit, LlLvmParams, LlLvmProblem, Preprocess};
pub use meu::{Meu, MeuField, MeuParams};
pub use mpme::{DistanceScale, Mpme, MpmeDual, MpmeEmbedding, MpmeParams};
pub use mvu::{Mvu, MvuParams, MvuSolver};
pub use neighbourhood::GraphSpec;
pub use pca::{Pca, PcaParams};
pub use persist::FittedModel;
pub use posterior::{DualSolution, PosteriorRegularised};
pub use regression::{LocalRegressions, PrecisionRule};
pub use spl::{Spl, SplDual, SplParams, SplSolver};
pub use traits::{Embedding, OutOfSample, Projection};
