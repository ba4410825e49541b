//! # unfold
//!
//! Probabilistic spectral dimensionality reduction in Rust. This facade re-exports the
//! workspace crates; see the README and `docs/` for a guided tour.

pub use unfold_cli as cli;
pub use unfold_core as core;
pub use unfold_data as data;
pub use unfold_eval as eval;
pub use unfold_glasso as glasso;
pub use unfold_graph as graph;
pub use unfold_lbfgsb as lbfgsb;
pub use unfold_linalg as linalg;
pub use unfold_models as models;
pub use unfold_sdp as sdp;
pub use unfold_select as select;
pub use unfold_subgradient as subgradient;
pub use unfold_vem as vem;

pub use unfold_core::{Error, Evidence, EvidenceKind, Result};
