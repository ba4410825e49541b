//! The classical spectral methods: PCA, classical MDS, kernel PCA, Laplacian eigenmaps,
//! LLE, Isomap and MVU. They are baselines, special cases of the random fields (spec
//! `meu_alle_drill.md` §1) and initialisers; each is fitted in closed form by one
//! eigendecomposition (MVU: one semidefinite program, then one).

pub mod cmds;
pub mod isomap;
pub mod kernel_pca;
pub mod laplacian_eigenmaps;
pub mod lle;
pub mod mvu;
pub mod pca;
