//! NumPy `.npz` archives: a zip file of `.npy` members, written by `numpy.savez` (stored)
//! or `numpy.savez_compressed` (deflate).
//!
//! The zip container (the central directory at the end of the file, with the ZIP64 forms
//! NumPy uses) is read by the `zip` crate, with stored and deflated members only; each
//! member is checked against its size and its CRC-32 as it is read. Nothing is allocated
//! from a size the archive claims: a member grows only as its bytes arrive, and one that
//! inflates beyond its claim is caught one byte past it.

use crate::npy::parse_npy;
use nalgebra::DMatrix;
use std::io::{Cursor, Read, Seek};
use unfold_core::{Error, Result};
use zip::read::ZipFile;
use zip::result::ZipError;
use zip::{CompressionMethod, ZipArchive};

/// The local file header's signature, which also opens every zip archive.
pub(crate) const MAGIC: &[u8; 4] = b"PK\x03\x04";

pub(crate) fn corrupt(source: &str, message: impl Into<String>) -> Error {
    Error::Parse {
        source_name: source.to_string(),
        line: 1,
        message: format!("not a readable .npz archive: {}", message.into()),
    }
}

/// The names of the arrays in an archive (member names without `.npy`).
pub(crate) fn array_name(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

/// Member `index` of an archive, opened for reading (decompressed as it is read; the zip
/// reader checks its CRC-32 when its end is read), with its name; a member compressed by
/// other than the two methods NumPy writes is refused.
pub(crate) fn open_member<'z, R: Read + Seek>(
    archive: &'z mut ZipArchive<R>,
    index: usize,
    source: &str,
) -> Result<(ZipFile<'z, R>, String)> {
    let name = archive
        .name_for_index(index)
        .unwrap_or_default()
        .to_string();
    let bad = |msg: String| corrupt(source, format!("member {name}: {msg}"));
    let method = archive
        .by_index_raw(index)
        .map_err(|e| bad(format!("its local header cannot be read ({e})")))?
        .compression();
    if method != CompressionMethod::Stored && method != CompressionMethod::Deflated {
        return Err(bad(format!(
            "compression method {method} is not supported (numpy.savez and savez_compressed write Stored and Deflated)"
        )));
    }
    let member = archive
        .by_index(index)
        .map_err(|e| bad(format!("its local header cannot be read ({e})")))?;
    Ok((member, name))
}

/// The message for a read error of member `name`: a CRC-32 mismatch, or corrupt data.
pub(crate) fn member_error(source: &str, name: &str, e: &std::io::Error) -> Error {
    let what = if e.to_string().contains("checksum") {
        "CRC-32 mismatch: the archive is corrupt".to_string()
    } else {
        format!("its data are corrupt ({e})")
    };
    corrupt(source, format!("member {name}: {what}"))
}

/// The message for member `name` holding `found` bytes where the archive claims `size`.
pub(crate) fn size_error(source: &str, name: &str, found: u64, size: u64) -> Error {
    corrupt(
        source,
        format!("member {name}: {found} bytes where the archive says {size}"),
    )
}

/// The decompressed bytes of member `index`, checked against its size and CRC-32.
fn member_bytes<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    index: usize,
    source: &str,
) -> Result<Vec<u8>> {
    let (mut member, name) = open_member(archive, index, source)?;
    let size = member.size();
    let mut out = Vec::new();
    // At most the claimed size plus one byte is read, so a member that inflates beyond its
    // claim is caught without inflating all of it; the CRC-32 is checked at the end.
    (&mut member)
        .take(size.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| member_error(source, &name, &e))?;
    if out.len() as u64 != size {
        return Err(size_error(source, &name, out.len() as u64, size));
    }
    Ok(out)
}

/// Opens the zip archive `reader`; `source` names it in messages.
pub(crate) fn open_archive<R: Read + Seek>(reader: R, source: &str) -> Result<ZipArchive<R>> {
    ZipArchive::new(reader).map_err(|e| {
        let reason = match e {
            ZipError::Io(e) => format!("it ends early ({e})"),
            e => e.to_string(),
        };
        corrupt(
            source,
            format!(
                "no valid end of central directory record and directory (truncated?): {reason}"
            ),
        )
    })
}

/// Reads one array of a `.npz` archive: the one named `name`, or the only one when
/// `name` is `None`. `source` names the input in messages.
pub fn parse_npz(bytes: &[u8], source: &str, name: Option<&str>) -> Result<DMatrix<f64>> {
    let mut archive = open_archive(Cursor::new(bytes), source)?;
    let names: Vec<String> = archive
        .file_names()
        .map(|n| array_name(n).to_string())
        .collect();
    let index = match name {
        Some(want) => names.iter().position(|n| n == want),
        None if names.len() == 1 => Some(0),
        None => {
            return Err(Error::invalid(
                "input",
                format!(
                    "{source} holds {} arrays ({}); name one as {source}:NAME",
                    names.len(),
                    names.join(", ")
                ),
            ))
        }
    }
    .ok_or_else(|| {
        Error::invalid(
            "input",
            format!(
                "{source} has no array {:?}; it holds: {}",
                name.unwrap_or_default(),
                if names.is_empty() {
                    "nothing".to_string()
                } else {
                    names.join(", ")
                }
            ),
        )
    })?;
    let npy = member_bytes(&mut archive, index, source)?;
    parse_npy(&npy, &format!("{source}:{}", names[index]))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const CENTRAL: u32 = 0x0201_4b50;
    const END: u32 = 0x0605_4b50;

    /// A zip archive of `(name, bytes)` members, stored (method 0) or deflated (8), with
    /// the sizes in ZIP64 extra fields when `zip64` (as `numpy.savez` writes them).
    pub(crate) fn archive(members: &[(&str, Vec<u8>)], deflate: bool, zip64: bool) -> Vec<u8> {
        use std::io::Write;
        let mut out = Vec::new();
        let mut central = Vec::new();
        for (name, data) in members {
            let mut crc = flate2::Crc::new();
            crc.update(data);
            let body = if deflate {
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            } else {
                data.clone()
            };
            let offset = out.len() as u32;
            let (csize, usize_) = if zip64 {
                (u32::MAX, u32::MAX)
            } else {
                (body.len() as u32, data.len() as u32)
            };
            let mut extra = Vec::new();
            if zip64 {
                extra.extend_from_slice(&1u16.to_le_bytes());
                extra.extend_from_slice(&16u16.to_le_bytes());
                extra.extend_from_slice(&(data.len() as u64).to_le_bytes());
                extra.extend_from_slice(&(body.len() as u64).to_le_bytes());
            }
            let method: u16 = if deflate { 8 } else { 0 };
            let header = |sig: u32, central_entry: bool| {
                let mut h = sig.to_le_bytes().to_vec();
                if central_entry {
                    h.extend_from_slice(&45u16.to_le_bytes());
                }
                h.extend_from_slice(&45u16.to_le_bytes());
                h.extend_from_slice(&0u16.to_le_bytes());
                h.extend_from_slice(&method.to_le_bytes());
                h.extend_from_slice(&[0; 4]);
                h.extend_from_slice(&crc.sum().to_le_bytes());
                h.extend_from_slice(&csize.to_le_bytes());
                h.extend_from_slice(&usize_.to_le_bytes());
                h.extend_from_slice(&(name.len() as u16).to_le_bytes());
                h.extend_from_slice(&(extra.len() as u16).to_le_bytes());
                if central_entry {
                    // Comment length, disk, internal and external attributes.
                    h.extend_from_slice(&[0; 10]);
                    h.extend_from_slice(&offset.to_le_bytes());
                }
                h.extend_from_slice(name.as_bytes());
                h.extend_from_slice(&extra);
                h
            };
            out.extend(header(u32::from_le_bytes(*MAGIC), false));
            out.extend_from_slice(&body);
            central.extend(header(CENTRAL, true));
        }
        let start = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(&END.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&start.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    pub(crate) fn npy(m: &DMatrix<f64>) -> Vec<u8> {
        crate::npy::npy_bytes(m)
    }

    #[test]
    fn reads_stored_deflated_and_zip64_members_by_name() {
        let a = DMatrix::from_fn(5, 3, |i, j| i as f64 * 0.5 - j as f64);
        let b = DMatrix::from_fn(2, 2, |i, j| (i * 2 + j) as f64);
        let members = [("X.npy", npy(&a)), ("labels.npy", npy(&b))];
        for deflate in [false, true] {
            for zip64 in [false, true] {
                let z = archive(&members, deflate, zip64);
                assert_eq!(parse_npz(&z, "t.npz", Some("X")).unwrap(), a);
                assert_eq!(parse_npz(&z, "t.npz", Some("labels")).unwrap(), b);
                let e = parse_npz(&z, "t.npz", None).unwrap_err().to_string();
                assert!(
                    e.contains("2 arrays (X, labels)") && e.contains("t.npz:NAME"),
                    "{e}"
                );
                let e = parse_npz(&z, "t.npz", Some("Y")).unwrap_err().to_string();
                assert!(
                    e.contains("no array \"Y\"") && e.contains("X, labels"),
                    "{e}"
                );
            }
        }
        let single = archive(&[("arr_0.npy", npy(&a))], true, true);
        assert_eq!(parse_npz(&single, "s.npz", None).unwrap(), a);
    }

    /// Archives written by NumPy itself (tests/npz/README.md): stored with ZIP64 extra
    /// fields, and deflated.
    #[test]
    fn reads_what_numpy_writes() {
        let x = DMatrix::from_fn(4, 3, |i, j| (i * 3 + j) as f64 / 8.0 - 0.5);
        let obs = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]);
        for bytes in [
            &include_bytes!("../tests/npz/savez.npz")[..],
            &include_bytes!("../tests/npz/savez_compressed.npz")[..],
        ] {
            assert_eq!(parse_npz(bytes, "numpy.npz", Some("X")).unwrap(), x);
            assert_eq!(parse_npz(bytes, "numpy.npz", Some("obs")).unwrap(), obs);
        }
        let one = include_bytes!("../tests/npz/positional.npz");
        assert_eq!(parse_npz(one, "p.npz", None).unwrap(), x.transpose());
        assert_eq!(
            parse_npz(one, "p.npz", Some("arr_0")).unwrap(),
            x.transpose()
        );
    }

    #[test]
    fn corrupt_archives_are_refused_with_the_reason() {
        let a = DMatrix::from_fn(4, 2, |i, j| (i + j) as f64);
        let z = archive(&[("X.npy", npy(&a))], true, false);
        let e = parse_npz(&z[..z.len() - 10], "t.npz", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("end of central directory"), "{e}");
        // A flipped byte inside the deflated data: the stream or the CRC catches it.
        let mut flipped = z.clone();
        flipped[45] ^= 0x40;
        let e = parse_npz(&flipped, "t.npz", None).unwrap_err().to_string();
        assert!(e.contains("corrupt") || e.contains("bytes where"), "{e}");
        let stored = archive(&[("X.npy", npy(&a))], false, false);
        let mut flipped = stored.clone();
        let last_data = stored.len() - 22 - 46 - 5 - 1;
        flipped[last_data] ^= 0x01;
        let e = parse_npz(&flipped, "t.npz", None).unwrap_err().to_string();
        assert!(e.contains("CRC-32 mismatch"), "{e}");
        // A member compressed otherwise than stored or deflated (12: bzip2).
        let mut bzip2 = stored.clone();
        let central = bzip2.len() - 22 - 46 - 5;
        bzip2[8..10].copy_from_slice(&12u16.to_le_bytes());
        bzip2[central + 10..central + 12].copy_from_slice(&12u16.to_le_bytes());
        let e = parse_npz(&bzip2, "t.npz", None).unwrap_err().to_string();
        assert!(
            e.contains("member X.npy: compression method") && e.contains("not supported"),
            "{e}"
        );
        // A stored member whose claimed size is larger than its bytes.
        let mut short = stored.clone();
        let size = (npy(&a).len() as u32 + 8).to_le_bytes();
        short[22..26].copy_from_slice(&size);
        short[central + 24..central + 28].copy_from_slice(&size);
        let e = parse_npz(&short, "t.npz", None).unwrap_err().to_string();
        assert!(e.contains("bytes where the archive says"), "{e}");
        // An archive of no members.
        let empty = archive(&[], false, false);
        let e = parse_npz(&empty, "t.npz", Some("X"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("it holds: nothing"), "{e}");
    }
}
