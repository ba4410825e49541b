//! Saving and loading fitted models.
//!
//! File layout: 8 magic bytes `UNFOLDMD`, the format version as a little-endian `u32`, then
//! the model encoded with bincode 2 (standard configuration) through serde. Files are
//! written through a temporary file and renamed, so they are never half-written. A file of
//! another kind, another format version, or a corrupt one is refused with a message that
//! says which.

use crate::traits::{Embedding, OutOfSample};
use crate::{
    Alle, Cmds, DdrTree, DrTree, Drill, Isomap, KernelPca, LaplacianEigenmaps, LlLvm, Lle, LlePl,
    Meu, Mpme, Mvu, Pca, Spl,
};
use serde::{Deserialize, Serialize};
use std::path::Path;
use unfold_core::{Error, Evidence, Result};

const MAGIC: &[u8; 8] = b"UNFOLDMD";
/// Version of the model file format; bumped whenever a saved model's layout changes.
pub const FORMAT_VERSION: u32 = 1;

/// Any fitted model of unfold, as saved to and loaded from a model file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FittedModel {
    Pca(Pca),
    Cmds(Cmds),
    KernelPca(KernelPca),
    LaplacianEigenmaps(LaplacianEigenmaps),
    Lle(Lle),
    Isomap(Isomap),
    Meu(Meu),
    Alle(Alle),
    LlePl(LlePl),
    Drill(Drill),
    Mvu(Mvu),
    LlLvm(LlLvm),
    Spl(Spl),
    Mpme(Mpme),
    DrTree(DrTree),
    DdrTree(DdrTree),
}

impl FittedModel {
    /// The method's name as the command line spells it.
    pub fn method(&self) -> &'static str {
        match self {
            FittedModel::Pca(_) => "pca",
            FittedModel::Cmds(_) => "cmds",
            FittedModel::KernelPca(_) => "kpca",
            FittedModel::LaplacianEigenmaps(_) => "le",
            FittedModel::Lle(_) => "lle",
            FittedModel::Isomap(_) => "isomap",
            FittedModel::Meu(_) => "meu",
            FittedModel::Alle(_) => "alle",
            FittedModel::LlePl(_) => "lle-pl",
            FittedModel::Drill(_) => "drill",
            FittedModel::Mvu(_) => "mvu",
            FittedModel::LlLvm(_) => "lllvm",
            FittedModel::Spl(_) => "spl",
            FittedModel::Mpme(_) => "mpme",
            FittedModel::DrTree(_) => "drtree",
            FittedModel::DdrTree(_) => "ddrtree",
        }
    }

    /// The fitted embedding.
    pub fn embedding(&self) -> &dyn Embedding {
        match self {
            FittedModel::Pca(m) => m,
            FittedModel::Cmds(m) => m,
            FittedModel::KernelPca(m) => m,
            FittedModel::LaplacianEigenmaps(m) => m,
            FittedModel::Lle(m) => m,
            FittedModel::Isomap(m) => m,
            FittedModel::Meu(m) => m,
            FittedModel::Alle(m) => m,
            FittedModel::LlePl(m) => m,
            FittedModel::Drill(m) => m,
            FittedModel::Mvu(m) => m,
            FittedModel::LlLvm(m) => m,
            FittedModel::Spl(m) => m,
            FittedModel::Mpme(m) => m,
            FittedModel::DrTree(m) => m,
            FittedModel::DdrTree(m) => m,
        }
    }

    /// The model's labelled evidence on its training data `y`: its own for the models
    /// that have one, and for Laplacian eigenmaps and LLE the exact log-likelihood of the
    /// Gaussian random field with their precision shape and a fitted scale
    /// (`gamma` is the base precision, as MEU's). Methods outside the family (PCA, CMDS,
    /// kernel PCA, Isomap, MVU) have none.
    pub fn field_evidence(&self, y: &nalgebra::DMatrix<f64>, gamma: f64) -> Result<Evidence> {
        match self {
            FittedModel::LaplacianEigenmaps(m) => m.field_evidence(y, gamma),
            FittedModel::Lle(m) => m.field_evidence(gamma),
            other => Ok(other.embedding().evidence()),
        }
    }

    /// The out-of-sample rule, for the methods that have one.
    pub fn out_of_sample(&self) -> Option<&dyn OutOfSample> {
        match self {
            FittedModel::Pca(m) => Some(m),
            FittedModel::Cmds(m) => Some(m),
            FittedModel::KernelPca(m) => Some(m),
            FittedModel::LaplacianEigenmaps(_) => None,
            FittedModel::Lle(m) => Some(m),
            FittedModel::Isomap(m) => Some(m),
            FittedModel::Meu(m) => Some(m),
            FittedModel::Alle(m) => Some(m),
            FittedModel::LlePl(m) => Some(m),
            FittedModel::LlLvm(m) => Some(m),
            FittedModel::Drill(_)
            | FittedModel::Mvu(_)
            | FittedModel::Spl(_)
            | FittedModel::Mpme(_)
            | FittedModel::DrTree(_)
            | FittedModel::DdrTree(_) => None,
        }
    }

    /// The model file's bytes: header and payload.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let payload = bincode::serde::encode_to_vec(self, bincode::config::standard())
            .map_err(|e| Error::numerical("encoding the model", e.to_string()))?;
        bytes.extend_from_slice(&payload);
        Ok(bytes)
    }

    /// Reads a model from bytes; `path` only names the source in error messages.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self> {
        let bad = |message: String| Error::ModelFile {
            path: path.to_path_buf(),
            message,
        };
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(bad(
                "not an unfold model file (missing the UNFOLDMD header); pass a file written by `unfold fit --save`"
                    .to_string(),
            ));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("four bytes"));
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}, but this build reads version {FORMAT_VERSION}; refit the model with this version"
            )));
        }
        let (model, used) = bincode::serde::decode_from_slice::<FittedModel, _>(
            &bytes[12..],
            bincode::config::standard(),
        )
        .map_err(|e| bad(format!("the file is corrupt or truncated ({e})")))?;
        if used != bytes.len() - 12 {
            return Err(bad(format!(
                "the file is corrupt: {} unexpected bytes after the model",
                bytes.len() - 12 - used
            )));
        }
        Ok(model)
    }

    /// Saves the model to `path` (atomically: a temporary file, then a rename).
    pub fn save(&self, path: &Path) -> Result<()> {
        unfold_core::write_atomic(path, &self.to_bytes()?)
    }

    /// Loads a model saved by [`FittedModel::save`].
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PcaParams;
    use nalgebra::DMatrix;

    fn model() -> FittedModel {
        let y = DMatrix::from_fn(20, 3, |i, j| {
            ((i * 3 + j) as f64 * 0.61).sin() * (j + 1) as f64
        });
        FittedModel::Pca(PcaParams::new(2).fit(&y).unwrap())
    }

    #[test]
    fn round_trip_gives_identical_numbers() {
        let m = model();
        let bytes = m.to_bytes().unwrap();
        let back = FittedModel::from_bytes(&bytes, Path::new("m.bin")).unwrap();
        assert_eq!(back.embedding().coords(), m.embedding().coords());
        let y = DMatrix::from_fn(4, 3, |i, j| (i + j) as f64);
        let a = m.out_of_sample().unwrap().project(&y).unwrap();
        let b = back.out_of_sample().unwrap().project(&y).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn field_models_round_trip_with_identical_projections() {
        use crate::{
            AlleParams, DdrTreeParams, DrTreeParams, DrillParams, LlLvmParams, LlePlParams,
            MeuParams, MpmeParams, MvuParams, SplParams,
        };
        let y = DMatrix::from_fn(50, 3, |i, j| {
            let t = 1.5 + 3.0 * i as f64 / 50.0;
            [t * t.cos(), ((i * 37) % 11) as f64 / 5.0, t * t.sin()][j]
        });
        let new = DMatrix::from_fn(3, 3, |i, j| y[(10 * i + 5, j)] * 1.01 + 0.02);
        let models = [
            FittedModel::Meu(MeuParams::new(2, 5).fit(&y).unwrap()),
            FittedModel::Alle(AlleParams::new(2, 5).fit(&y).unwrap()),
            FittedModel::LlePl(LlePlParams::new(2, 5).fit(&y).unwrap()),
            FittedModel::Drill(DrillParams::new(2, 5, 0.05).fit(&y).unwrap()),
            FittedModel::Mvu(MvuParams::new(2, 5).fit(&y).unwrap()),
            FittedModel::LlLvm(LlLvmParams::new(2, 5).max_iter(5).fit(&y).unwrap()),
            FittedModel::Spl(SplParams::new(2).fit(&y).unwrap()),
            FittedModel::Mpme(MpmeParams::new(2).lambda(0.5).fit(&y).unwrap()),
            FittedModel::DrTree(DrTreeParams::new(2, 1.0).fit(&y).unwrap()),
            FittedModel::DdrTree(DdrTreeParams::new(2).fit(&y).unwrap()),
        ];
        for m in models {
            let back = FittedModel::from_bytes(&m.to_bytes().unwrap(), Path::new("m")).unwrap();
            assert_eq!(back.method(), m.method());
            assert_eq!(back.embedding().coords(), m.embedding().coords());
            let (a, b) = (back.embedding().evidence(), m.embedding().evidence());
            assert_eq!(a.value.to_bits(), b.value.to_bits());
            assert_eq!((a.kind, a.terms), (b.kind, b.terms));
            if let Some(rule) = m.out_of_sample() {
                let a = rule.project(&new).unwrap();
                let b = back.out_of_sample().unwrap().project(&new).unwrap();
                assert_eq!(a, b, "{}", m.method());
            }
        }
    }

    #[test]
    fn refuses_foreign_old_and_corrupt_files() {
        let p = Path::new("m.bin");
        let bytes = model().to_bytes().unwrap();
        let msg = |r: Result<FittedModel>| r.unwrap_err().to_string();
        assert!(msg(FittedModel::from_bytes(b"hello world, not a model", p))
            .contains("not an unfold model"));
        let mut old = bytes.clone();
        old[8] = 99;
        assert!(msg(FittedModel::from_bytes(&old, p)).contains("format version 99"));
        assert!(msg(FittedModel::from_bytes(&bytes[..bytes.len() / 2], p)).contains("corrupt"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(msg(FittedModel::from_bytes(&extra, p)).contains("corrupt"));
    }
}
