//! Latent variable models fitted by variational EM: LL-LVM (spec `lllvm.md`).
//!
//! The family trait, [`LatentVariableModel`], lives with its driver in `unfold-vem`, which
//! runs any model that implements it (seeded restarts, tolerances, the monotone-bound check).

pub mod lllvm;

pub use unfold_vem::LatentVariableModel;
