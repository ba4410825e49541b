//! The Gaussian random fields fitted by maximum likelihood or by local regressions: MEU,
//! ALLE, lle-pl and DRILL, one file each (spec `meu_alle_drill.md`). The field machinery
//! they share (the [`GaussianRandomField`] trait, precisions, factors and embeddings) is in
//! [`crate::field`], re-exported here.

pub mod alle;
pub mod drill;
pub mod lle_pl;
pub mod meu;
pub mod regression;

pub use crate::field::*;
