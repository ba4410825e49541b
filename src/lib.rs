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

/// What writing a model of one's own needs, in one import (`use unfold::prelude::*;`):
/// the registry's `Registered`, `Method` and `Model`, the `params!` declaration, the family traits, the fitted-model traits, the
/// graph builders and the common result types. `examples/custom_model/main.rs` uses it.
pub mod prelude {
    pub use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Result};
    pub use unfold_core::{Observer, Silent};
    pub use unfold_graph::{knn_query, GraphSpec, Laplacian, NeighbourGraph, Weighting};
    pub use unfold_models::grf::{
        new_node_mean, FieldFit, FieldFitOptions, FieldScaling, GaussianRandomField, Precision,
        PrecisionDerivative,
    };
    pub use unfold_models::method::{Checked, Declared, Rule};
    pub use unfold_models::registry::{
        decode, registered, Family, FitData, Method, MethodInfo, Model, ParamSpec, Points,
        Registered, Registry, Settings,
    };
    pub use unfold_models::{embedding, params};
    pub use unfold_models::{Embedding, OutOfSample, Projection};
}
