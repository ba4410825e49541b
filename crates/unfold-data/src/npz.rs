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
use std::io::{Cursor, Read};
use unfold_core::{Error, Result};
use zip::result::ZipError;
use zip::{CompressionMethod, ZipArchive};

/// The local file header's signature, which also opens every zip archive.
pub(crate) const MAGIC: &[u8; 4] = b"PK\x03\x04";

fn corrupt(source: &str, message: impl Into<String>) -> Error {
    Error::Parse {
        source_name: source.to_string(),
        line: 1,
        message: format!("not a readable .npz archive: {}", message.into()),
    }
}

/// The names of the arrays in an archive (member names without `.npy`).
fn array_name(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

/// The decompressed bytes of member `index`, checked against its size and CRC-32.
fn member_bytes(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    source: &str,
) -> Result<Vec<u8>> {
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
    let mut member = archive
        .by_index(index)
        .map_err(|e| bad(format!("its local header cannot be read ({e})")))?;
    let size = member.size();
    let mut out = Vec::new();
    // At most the claimed size plus one byte is read, so a member that inflates beyond its
    // claim is caught without inflating all of it; the CRC-32 is checked at the end.
    (&mut member)
        .take(size.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| {
            if e.to_string().contains("checksum") {
                bad("CRC-32 mismatch: the archive is corrupt".into())
            } else {
                bad(format!("its data are corrupt ({e})"))
            }
        })?;
    if out.len() as u64 != size {
        return Err(bad(format!(
            "{} bytes where the archive says {size}",
            out.len()
        )));
    }
    Ok(out)
}

/// Reads one array of a `.npz` archive: the one named `name`, or the only one when
/// `name` is `None`. `source` names the input in messages.
pub fn parse_npz(bytes: &[u8], source: &str, name: Option<&str>) -> Result<DMatrix<f64>> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
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
    })?;
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

/// A sparse matrix in compressed sparse row form, as `scipy.sparse.save_npz` writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseCsr {
    pub nrows: usize,
    pub ncols: usize,
    pub indptr: Vec<i64>,
    pub indices: Vec<i64>,
    pub data: Vec<f64>,
}

impl SparseCsr {
    /// The matrix as [`unfold_linalg::SparseRows`], its arrays checked.
    pub fn rows(&self) -> Result<unfold_linalg::SparseRows<'_, i64, f64>> {
        unfold_linalg::SparseRows::new(
            self.nrows,
            self.ncols,
            &self.indptr,
            &self.indices,
            &self.data,
        )
    }
}

/// The members `scipy.sparse.save_npz` writes.
const SPARSE_MEMBERS: [&str; 5] = ["data", "format", "indices", "indptr", "shape"];

/// The sparse matrix of a `.npz` archive written by `scipy.sparse.save_npz` (members
/// `data`, `format`, `indices`, `indptr`, `shape`), or `None` for any other archive.
///
/// # Errors
/// A corrupt archive, a format other than CSR (named, with the conversion), or arrays
/// that do not make a matrix.
pub fn parse_sparse_npz(bytes: &[u8], source: &str) -> Result<Option<SparseCsr>> {
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| corrupt(source, format!("not a readable zip archive ({e})")))?;
    let mut names: Vec<String> = archive
        .file_names()
        .map(|n| array_name(n).to_string())
        .collect();
    names.sort();
    if names != SPARSE_MEMBERS {
        return Ok(None);
    }
    let mut member = |name: &str| -> Result<Vec<u8>> {
        let index = archive
            .index_for_name(&format!("{name}.npy"))
            .ok_or_else(|| corrupt(source, format!("no member {name}.npy")))?;
        member_bytes(&mut archive, index, source)
    };
    // `format` is a 0-d string array after the .npy header's newline: bytes ('|S3', as
    // scipy writes it) or UTF-32 ('<U3').
    let format = member("format")?;
    let value: Vec<u8> = format
        .iter()
        .position(|&b| b == b'\n')
        .map(|at| {
            format[at + 1..]
                .iter()
                .copied()
                .filter(|&b| b != 0)
                .collect()
        })
        .unwrap_or_default();
    let has = |word: &str| value == word.as_bytes();
    if !has("csr") {
        let named = ["csc", "coo", "bsr", "dia"].into_iter().find(|w| has(w));
        return Err(Error::invalid(
            "input",
            format!(
                "{source} holds a sparse matrix in {} format; save it as CSR: \
                 scipy.sparse.save_npz(path, X.tocsr())",
                named.unwrap_or("another")
            ),
        ));
    }
    let array = |name: &str, bytes: Vec<u8>| -> Result<Vec<f64>> {
        Ok(parse_npy(&bytes, &format!("{source}:{name}"))?
            .as_slice()
            .to_vec())
    };
    let whole = |name: &str, values: Vec<f64>| -> Result<Vec<i64>> {
        values
            .into_iter()
            .map(|v| {
                if v.fract() == 0.0 && (0.0..9.0e15).contains(&v) {
                    Ok(v as i64)
                } else {
                    Err(corrupt(source, format!("{name} holds {v}, not an index")))
                }
            })
            .collect()
    };
    let shape = whole("shape", array("shape", member("shape")?)?)?;
    let [nrows, ncols] = shape[..] else {
        return Err(corrupt(
            source,
            format!("shape has {} entries, not 2", shape.len()),
        ));
    };
    let indptr = whole("indptr", array("indptr", member("indptr")?)?)?;
    let indices = whole("indices", array("indices", member("indices")?)?)?;
    let data = array("data", member("data")?)?;
    let csr = SparseCsr {
        nrows: nrows as usize,
        ncols: ncols as usize,
        indptr,
        indices,
        data,
    };
    csr.rows()?;
    Ok(Some(csr))
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

    /// `scipy.sparse.save_npz`'s members: a CSR matrix is read with its arrays; another
    /// format is refused naming it; other archives are not sparse.
    #[test]
    fn reads_a_sparse_csr_archive_and_refuses_other_formats() {
        let col = |v: &[f64]| npy(&DMatrix::from_column_slice(v.len(), 1, v));
        // As scipy writes it ('|S3'), and as NumPy writes a str ('<U3').
        let format = |w: &str| -> Vec<u8> {
            let mut b = b"\x93NUMPY\x01\x00\x06\x00{...}\n".to_vec();
            if w == "csc" {
                b.extend(w.chars().flat_map(|c| (c as u32).to_le_bytes()));
            } else {
                b.extend(w.bytes());
            }
            b
        };
        let members = |f: &str| {
            vec![
                ("data.npy", col(&[1.0, 2.0, 3.0])),
                ("indices.npy", col(&[0.0, 2.0, 1.0])),
                ("indptr.npy", col(&[0.0, 2.0, 2.0, 3.0])),
                ("format.npy", format(f)),
                ("shape.npy", col(&[3.0, 4.0])),
            ]
        };
        let csr = parse_sparse_npz(&archive(&members("csr"), true, false), "m.npz")
            .unwrap()
            .unwrap();
        assert_eq!((csr.nrows, csr.ncols), (3, 4));
        assert_eq!(csr.indptr, vec![0, 2, 2, 3]);
        let dense = csr.rows().unwrap().to_dense();
        assert_eq!(dense[(0, 2)], 2.0);
        assert_eq!(dense[(2, 1)], 3.0);
        let csc = parse_sparse_npz(&archive(&members("csc"), false, false), "m.npz");
        assert!(csc.unwrap_err().to_string().contains("in csc format"));
        let plain = archive(&[("x.npy", col(&[1.0]))], false, false);
        assert_eq!(parse_sparse_npz(&plain, "x.npz").unwrap(), None);
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
