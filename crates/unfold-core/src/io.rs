//! Safe file output (nothing is ever left half-written) and the one header of model files.
//!
//! The layout of model files, their versions and the compatibility promise are described in
//! `docs/model-files.md`.

use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

const MODEL_MAGIC: &[u8; 8] = b"UNFOLDMD";
/// Version of the model file layout written by this build; bumped whenever the header or a
/// saved model's layout changes. Version 2: the header names the model's kind. Version 3:
/// the header also holds the payload's length and checksum ([`payload_checksum`]).
/// Version 4: a transform block (the fitted preprocessing of the training data, empty when
/// there was none) before the payload, under the same checksum. Version 5: the training
/// points a model keeps for new points (Isomap's, LLE's) may be sparse rows, so the payload of
/// such a model holds them as one of two layouts; older payloads are read as dense.
pub const MODEL_FORMAT_VERSION: u32 = 5;
/// The oldest format version this build reads. Every released version from this one on
/// loads in every later build (`docs/model-files.md`); raising it breaks that promise.
pub const OLDEST_MODEL_FORMAT_VERSION: u32 = 2;

/// The 64-bit FNV-1a hash of `bytes` (offset basis `0xcbf29ce484222325`, prime
/// `0x100000001b3`): the checksum of a model file's payload. Any single changed byte
/// changes it; it guards against damage, not against deliberate forgery.
pub fn payload_checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The parts of a model file ([`read_model_file`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelFileParts<'a> {
    /// The format version the file was written by.
    pub version: u32,
    /// The method's registered name.
    pub kind: &'a str,
    /// The encoded preprocessing the model was fitted after; empty for none (and in files
    /// of versions 2 and 3).
    pub transform: &'a [u8],
    /// The model encoded with bincode 2 through serde.
    pub payload: &'a [u8],
}

/// The bytes of a model file (format version 5): 8 magic bytes `UNFOLDMD`, the format
/// version (`u32`, little-endian), the length-prefixed `kind` (`u32` length, then the
/// method's name), the transform's length and the payload's length (`u64` each), the
/// checksum of the transform followed by the payload ([`payload_checksum`], `u64`), then
/// the transform (empty when the model was fitted on the data as given) and the payload
/// (the model encoded with bincode 2 through serde). Every model, built-in or a
/// researcher's own, is saved under this one header.
pub fn model_file_bytes(kind: &str, transform: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut bytes = MODEL_MAGIC.to_vec();
    bytes.extend_from_slice(&MODEL_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    bytes.extend_from_slice(kind.as_bytes());
    bytes.extend_from_slice(&(transform.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let body_at = bytes.len() + 8;
    bytes.extend_from_slice(&0u64.to_le_bytes());
    bytes.extend_from_slice(transform);
    bytes.extend_from_slice(payload);
    let checksum = payload_checksum(&bytes[body_at..]);
    bytes[body_at - 8..body_at].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

/// Reads the header of a model file: the kind, the transform and the payload. Files of
/// every format version from [`OLDEST_MODEL_FORMAT_VERSION`] to [`MODEL_FORMAT_VERSION`]
/// are read (version 2 has no checksum, versions 2 and 3 no transform). A file that is not
/// a model file, of another format version (both versions are named), truncated, extended,
/// or whose contents do not match their checksum is refused with a message that says
/// which; `path` only names the source in messages.
pub fn read_model_file<'a>(bytes: &'a [u8], path: &Path) -> Result<ModelFileParts<'a>> {
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
    let truncated = || bad("the file is corrupt: it is truncated".to_string());
    let field = |at: usize, len: usize| bytes.get(at..at.checked_add(len)?);
    let word = |at: usize| -> Result<u32> {
        let b = field(at, 4).ok_or_else(truncated)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let long = |at: usize| -> Result<u64> {
        let b = field(at, 8).ok_or_else(truncated)?;
        let mut le = [0u8; 8];
        le.copy_from_slice(b);
        Ok(u64::from_le_bytes(le))
    };
    let version = word(8)?;
    let (oldest, newest) = (OLDEST_MODEL_FORMAT_VERSION, MODEL_FORMAT_VERSION);
    if version > newest {
        return Err(bad(format!(
            "written by format version {version}; this build reads versions {oldest} to {newest}: update unfold"
        )));
    }
    if version < oldest {
        return Err(bad(format!(
            "written by format version {version}, from before the first release; this build reads versions {oldest} to {newest}: refit the model"
        )));
    }
    let len = word(12)? as usize;
    let kind = field(16, len).ok_or_else(truncated)?;
    let kind = std::str::from_utf8(kind)
        .map_err(|_| bad("the file is corrupt: its model kind is not text".to_string()))?;
    let mut at = 16 + len;
    let mut transform_len = 0u64;
    if version >= 4 {
        transform_len = long(at)?;
        at += 8;
    }
    if version >= 3 {
        let (payload_len, checksum) = (long(at)?, long(at + 8)?);
        at += 16;
        let found = (bytes.len() - at) as u64;
        let stated = transform_len.saturating_add(payload_len);
        if stated != found {
            return Err(bad(format!(
                "the file is corrupt: its header states {stated} bytes of contents but {found} follow ({})",
                if found < stated { "truncated" } else { "extra bytes" }
            )));
        }
        if payload_checksum(&bytes[at..]) != checksum {
            return Err(bad(
                "the file is corrupt (checksum mismatch): its contents were changed after they were written; save the model again from its source"
                    .to_string(),
            ));
        }
    }
    // `transform_len <= found` was checked above (it is 0 before version 4).
    let (transform, payload) = bytes[at..].split_at(transform_len as usize);
    Ok(ModelFileParts {
        version,
        kind,
        transform,
        payload,
    })
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
    fn model_file_header_round_trips_and_refuses_foreign_old_new_and_damaged_files() {
        let p = Path::new("m.bin");
        let bytes = model_file_bytes("heat", &[], &[1, 2, 3]);
        assert_eq!(bytes.len(), 8 + 4 + 4 + 4 + 24 + 3);
        let parts = read_model_file(&bytes, p).unwrap();
        assert_eq!(
            (parts.kind, parts.transform, parts.payload),
            ("heat", &[][..], &[1u8, 2, 3][..])
        );
        // A transform block comes back apart from the payload, under the one checksum.
        let with = model_file_bytes("heat", &[7, 8], &[1, 2, 3]);
        let parts = read_model_file(&with, p).unwrap();
        assert_eq!(
            (parts.transform, parts.payload),
            (&[7u8, 8][..], &[1u8, 2, 3][..])
        );
        let mut damaged = with.clone();
        let at = damaged.len() - 4;
        damaged[at] ^= 1;
        assert!(read_model_file(&damaged, p)
            .unwrap_err()
            .to_string()
            .contains("checksum mismatch"));
        // A transform length beyond the file is truncation, not an out-of-bounds slice.
        let mut long = with.clone();
        long[20..28].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read_model_file(&long, p)
            .unwrap_err()
            .to_string()
            .contains("corrupt"));
        let msg = |b: &[u8]| read_model_file(b, p).unwrap_err().to_string();
        assert!(msg(b"hello world, not a model").contains("not an unfold model"));
        let mut old = bytes.clone();
        old[8] = 1;
        assert!(msg(&old).contains(
            "format version 1, from before the first release; this build reads versions 2 to 5"
        ));
        let mut future = bytes.clone();
        future[8] = 9;
        assert!(
            msg(&future).contains(
                "written by format version 9; this build reads versions 2 to 5: update unfold"
            ),
            "{}",
            msg(&future)
        );
        for cut in [13, 17, 22, 30, bytes.len() - 1] {
            assert!(
                msg(&bytes[..cut]).contains("truncated"),
                "{cut}: {}",
                msg(&bytes[..cut])
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(msg(&longer).contains("extra bytes"));
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 4;
        assert!(msg(&flipped).contains("corrupt (checksum mismatch)"));
        // A version-2 file (no length, no checksum) still loads.
        let mut v2 = b"UNFOLDMD".to_vec();
        v2.extend_from_slice(&2u32.to_le_bytes());
        v2.extend_from_slice(&4u32.to_le_bytes());
        v2.extend_from_slice(b"heat\x01\x02");
        let parts = read_model_file(&v2, p).unwrap();
        assert_eq!((parts.kind, parts.payload), ("heat", &[1u8, 2][..]));
        assert!(parts.transform.is_empty());
        // A kind length near u32::MAX is truncation, not an out-of-bounds slice.
        let mut huge = bytes.clone();
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(msg(&huge).contains("truncated"));
    }

    #[test]
    fn the_payload_checksum_is_64_bit_fnv_1a() {
        // Reference values of FNV-1a 64 (the empty string is the offset basis).
        assert_eq!(payload_checksum(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(payload_checksum(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(payload_checksum(b"foobar"), 0x8594_4171_f739_67e8);
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
