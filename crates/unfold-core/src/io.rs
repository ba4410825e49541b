//! Safe file output (nothing is ever left half-written) and model files for any
//! serialisable model.

use crate::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::io::Write;
use std::path::Path;

const MODEL_MAGIC: &[u8; 8] = b"UNFOLDCM";
/// Version of the layout written by [`save_model`].
const MODEL_VERSION: u32 = 1;

/// Saves any serialisable model to `path` atomically: 8 magic bytes `UNFOLDCM`, the format
/// version (`u32`, little-endian), the length-prefixed `kind` tag, then the model encoded
/// with bincode 2 through serde. A researcher's own model gets files like the built-in
/// ones' without writing any of this.
pub fn save_model<T: Serialize>(path: &Path, kind: &str, model: &T) -> Result<()> {
    let mut bytes = MODEL_MAGIC.to_vec();
    bytes.extend_from_slice(&MODEL_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    bytes.extend_from_slice(kind.as_bytes());
    let payload = bincode::serde::encode_to_vec(model, bincode::config::standard())
        .map_err(|e| Error::numerical("encoding the model", e.to_string()))?;
    bytes.extend_from_slice(&payload);
    write_atomic(path, &bytes)
}

/// Loads a model saved by [`save_model`] with the same `kind`; a file of another kind,
/// version or format, or a truncated one, is an error that says which.
pub fn load_model<T: DeserializeOwned>(path: &Path, kind: &str) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let bad = |message: String| Error::ModelFile {
        path: path.to_path_buf(),
        message,
    };
    if bytes.len() < 16 || &bytes[..8] != MODEL_MAGIC {
        return Err(bad("not a model file written by `save_model`".to_string()));
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    if word(8) != MODEL_VERSION {
        return Err(bad(format!(
            "format version {}, but this build reads version {MODEL_VERSION}",
            word(8)
        )));
    }
    let len = word(12) as usize;
    let stored = bytes
        .get(16..16 + len)
        .ok_or_else(|| bad("the file is truncated".to_string()))?;
    if stored != kind.as_bytes() {
        return Err(bad(format!(
            "it holds a `{}` model, not `{kind}`",
            String::from_utf8_lossy(stored)
        )));
    }
    let (model, used) =
        bincode::serde::decode_from_slice::<T, _>(&bytes[16 + len..], bincode::config::standard())
            .map_err(|e| bad(format!("the file is corrupt or truncated ({e})")))?;
    if used != bytes.len() - 16 - len {
        return Err(bad(
            "the file is corrupt: unexpected bytes after the model".to_string()
        ));
    }
    Ok(model)
}

/// Writes `bytes` to `path` through a temporary file in the same directory, synced and
/// then renamed over the target, so a reader sees either the old file or the whole new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid("path", format!("{} is not a file path", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_round_trip_and_wrong_kinds_or_corruption_are_refused() {
        let dir = std::env::temp_dir().join(format!("unfold-core-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.bin");
        let model = (vec![1.5_f64, -2.0], String::from("heat"));
        save_model(&path, "toy", &model).unwrap();
        let back: (Vec<f64>, String) = load_model(&path, "toy").unwrap();
        assert_eq!(back, model);
        let err = load_model::<(Vec<f64>, String)>(&path, "other").unwrap_err();
        assert!(err.to_string().contains("`toy` model"), "{err}");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(load_model::<(Vec<f64>, String)>(&path, "toy").is_err());
        std::fs::write(&path, b"not a model at all").unwrap();
        assert!(load_model::<(Vec<f64>, String)>(&path, "toy").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn writes_whole_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("unfold-core-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 1);
        assert!(write_atomic(&dir.join("missing/x.txt"), b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
