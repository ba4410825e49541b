//! Linear algebra kernels of unfold.
//!
//! Public types are `nalgebra` matrices (column-major, like faer); heavy kernels run on
//! `faer` through zero-copy views ([`view`]). Everything here is model-agnostic.

pub mod distance;
pub mod sparse;
pub mod view;

pub use distance::{pairwise_sq_dists, sq_dists_to};
pub use sparse::CsrMatrix;
