//! Safe file output (nothing is ever left half-written) and the one header of model files.

use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

const MODEL_MAGIC: &[u8; 8] = b"UNFOLDMD";
/// Version of the model file layout; bumped whenever the header or a saved model's layout
/// changes. Version 2: the header names the model's kind.
pub const MODEL_FORMAT_VERSION: u32 = 2;

/// The bytes of a model file: 8 magic bytes `UNFOLDMD`, the format version (`u32`,
/// little-endian), the length-prefixed `kind` (the method's name), then the payload (the
/// model encoded with bincode 2 through serde). Every model, built-in or a researcher's
/// own, is saved under this one header.
pub fn model_file_bytes(kind: &str, payload: &[u8]) -> Vec<u8> {
    let mut bytes = MODEL_MAGIC.to_vec();
    bytes.extend_from_slice(&MODEL_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    bytes.extend_from_slice(kind.as_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// Reads the header of a model file: the kind and the payload. A file that is not a
/// model file, of another format version, or truncated is refused with a message that
/// says which; `path` only names the source in messages.
pub fn read_model_file<'a>(bytes: &'a [u8], path: &Path) -> Result<(&'a str, &'a [u8])> {
    let bad = |message: String| Error::ModelFile {
        path: path.to_path_buf(),
        message,
    };
    if bytes.len() < 12 || &bytes[..8] != MODEL_MAGIC {
        return Err(bad(
            "not an unfold model file (missing the UNFOLDMD header); pass a file written by `unfold fit --save`"
                .to_string(),
        ));
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version != MODEL_FORMAT_VERSION {
        return Err(bad(format!(
            "format version {version}, but this build reads version {MODEL_FORMAT_VERSION}; refit the model with this version"
        )));
    }
    if bytes.len() < 16 {
        return Err(bad("the file is truncated".to_string()));
    }
    let len = word(12) as usize;
    let kind = bytes
        .get(16..16usize.saturating_add(len))
        .ok_or_else(|| bad("the file is truncated".to_string()))?;
    let kind = std::str::from_utf8(kind)
        .map_err(|_| bad("the file is corrupt: its model kind is not text".to_string()))?;
    Ok((kind, &bytes[16 + len..]))
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
    fn model_file_header_round_trips_and_refuses_foreign_old_and_truncated_files() {
        let p = Path::new("m.bin");
        let bytes = model_file_bytes("heat", &[1, 2, 3]);
        let (kind, payload) = read_model_file(&bytes, p).unwrap();
        assert_eq!((kind, payload), ("heat", &[1u8, 2, 3][..]));
        let msg = |b: &[u8]| read_model_file(b, p).unwrap_err().to_string();
        assert!(msg(b"hello world, not a model").contains("not an unfold model"));
        let mut old = bytes.clone();
        old[8] = 1;
        assert!(msg(&old).contains("format version 1, but this build reads version 2"));
        assert!(msg(&bytes[..17]).contains("truncated"));
        assert!(msg(&bytes[..13]).contains("truncated"));
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
