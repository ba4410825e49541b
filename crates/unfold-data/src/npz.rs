//! NumPy `.npz` archives: a zip file of `.npy` members, written by `numpy.savez` (stored)
//! or `numpy.savez_compressed` (deflate).
//!
//! Only what those two functions write is read: the central directory at the end of the
//! file (with its ZIP64 forms, which NumPy uses), members stored or deflated, each checked
//! against its CRC-32. Sizes in the archive are trusted only as far as the file's own length
//! allows: nothing is allocated from a claimed size.

use crate::npy::parse_npy;
use nalgebra::DMatrix;
use std::io::Read;
use unfold_core::{Error, Result};

/// The local file header's signature, which also opens every zip archive.
pub(crate) const MAGIC: &[u8; 4] = b"PK\x03\x04";
const CENTRAL: u32 = 0x0201_4b50;
const END: u32 = 0x0605_4b50;
const END64: u32 = 0x0606_4b50;
const END64_LOCATOR: u32 = 0x0706_4b50;

fn corrupt(source: &str, message: impl Into<String>) -> Error {
    Error::Parse {
        source_name: source.to_string(),
        line: 1,
        message: format!("not a readable .npz archive: {}", message.into()),
    }
}

/// Little-endian reads that fail, instead of panicking, past the end of the bytes.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u16(&self, at: usize) -> Option<u64> {
        let b = self.0.get(at..at.checked_add(2)?)?;
        Some(u16::from_le_bytes([b[0], b[1]]) as u64)
    }

    fn u32(&self, at: usize) -> Option<u64> {
        let b = self.0.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes(b.try_into().ok()?) as u64)
    }

    fn u64(&self, at: usize) -> Option<u64> {
        let b = self.0.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }
}

/// One member of the archive, from its central directory entry.
struct Member {
    name: String,
    method: u64,
    crc: u32,
    compressed: u64,
    size: u64,
    local_header: u64,
}

/// The central directory's entries.
fn members(bytes: &[u8], source: &str) -> Result<Vec<Member>> {
    let b = Bytes(bytes);
    let bad = |m: &str| corrupt(source, m);
    // The end record is the last 22 bytes plus a comment of at most 65,535 bytes.
    let lowest = bytes.len().saturating_sub(22 + 65_535);
    let end = (lowest..=bytes.len().saturating_sub(22))
        .rev()
        .find(|&at| b.u32(at) == Some(END as u64))
        .ok_or_else(|| bad("no end of central directory record (truncated?)"))?;
    let mut count = b.u16(end + 10).ok_or_else(|| bad("truncated end record"))?;
    let mut start = b.u32(end + 16).ok_or_else(|| bad("truncated end record"))?;
    if (count == 0xffff || start == 0xffff_ffff) && end >= 20 {
        // ZIP64: a locator just before the end record points at the ZIP64 end record.
        if b.u32(end - 20) == Some(END64_LOCATOR as u64) {
            let at = b
                .u64(end - 12)
                .ok_or_else(|| bad("truncated ZIP64 locator"))? as usize;
            if b.u32(at) != Some(END64 as u64) {
                return Err(bad("the ZIP64 end record is missing"));
            }
            count = b
                .u64(at + 32)
                .ok_or_else(|| bad("truncated ZIP64 end record"))?;
            start = b
                .u64(at + 48)
                .ok_or_else(|| bad("truncated ZIP64 end record"))?;
        }
    }
    let mut at = usize::try_from(start).map_err(|_| bad("central directory out of range"))?;
    let mut out = Vec::new();
    for _ in 0..count {
        let field = |off: usize, width: u8| {
            let v = match width {
                2 => b.u16(at + off),
                _ => b.u32(at + off),
            };
            v.ok_or_else(|| bad("truncated central directory"))
        };
        if field(0, 4)? != CENTRAL as u64 {
            return Err(bad("a central directory entry has a bad signature"));
        }
        let (name_len, extra_len, comment_len) = (
            field(28, 2)? as usize,
            field(30, 2)? as usize,
            field(32, 2)? as usize,
        );
        let name = bytes
            .get(at + 46..at + 46 + name_len)
            .ok_or_else(|| bad("truncated member name"))?;
        let mut member = Member {
            name: String::from_utf8_lossy(name).into_owned(),
            method: field(10, 2)?,
            crc: field(16, 4)? as u32,
            compressed: field(20, 4)?,
            size: field(24, 4)?,
            local_header: field(42, 4)?,
        };
        let extra = bytes
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or_else(|| bad("truncated extra field"))?;
        read_zip64_extra(extra, &mut member);
        out.push(member);
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

/// Replaces the 32-bit sizes and offset saturated at `0xffffffff` by the 64-bit values
/// of the ZIP64 extra field (id 1), which holds exactly the saturated ones, in order.
fn read_zip64_extra(extra: &[u8], m: &mut Member) {
    let e = Bytes(extra);
    let mut at = 0;
    while let (Some(id), Some(len)) = (e.u16(at), e.u16(at + 2)) {
        if id == 1 {
            let mut field = at + 4;
            for value in [&mut m.size, &mut m.compressed, &mut m.local_header] {
                if *value == 0xffff_ffff {
                    if let Some(v) = e.u64(field) {
                        *value = v;
                    }
                    field += 8;
                }
            }
        }
        at += 4 + len as usize;
    }
}

/// The names of the arrays in an archive (member names without `.npy`).
fn array_name(member: &str) -> &str {
    member.strip_suffix(".npy").unwrap_or(member)
}

/// The decompressed bytes of one member, checked against its CRC-32.
fn member_bytes(bytes: &[u8], m: &Member, source: &str) -> Result<Vec<u8>> {
    let b = Bytes(bytes);
    let bad = |msg: String| corrupt(source, format!("member {}: {msg}", m.name));
    let at = usize::try_from(m.local_header).map_err(|_| bad("offset out of range".into()))?;
    if b.u32(at) != Some(u32::from_le_bytes(*MAGIC) as u64) {
        return Err(bad("its local header is missing".into()));
    }
    let (name_len, extra_len) = (b.u16(at + 26), b.u16(at + 28));
    let (Some(name_len), Some(extra_len)) = (name_len, extra_len) else {
        return Err(bad("truncated local header".into()));
    };
    let start = at + 30 + name_len as usize + extra_len as usize;
    let data = usize::try_from(m.compressed)
        .ok()
        .and_then(|len| bytes.get(start..start.checked_add(len)?))
        .ok_or_else(|| {
            bad(format!(
                "{} compressed bytes claimed past the end of the file",
                m.compressed
            ))
        })?;
    let out = match m.method {
        0 => data.to_vec(),
        8 => {
            let mut out = Vec::new();
            // At most the claimed size plus one byte is inflated, so a member that inflates
            // beyond its claim is caught without inflating all of it.
            flate2::read::DeflateDecoder::new(data)
                .take(m.size.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| bad(format!("its deflate stream is corrupt ({e})")))?;
            out
        }
        other => {
            return Err(bad(format!(
                "compression method {other} is not supported (numpy.savez and savez_compressed write 0 and 8)"
            )))
        }
    };
    if out.len() as u64 != m.size {
        return Err(bad(format!(
            "{} bytes where the archive says {}",
            out.len(),
            m.size
        )));
    }
    let mut crc = flate2::Crc::new();
    crc.update(&out);
    if crc.sum() != m.crc {
        return Err(bad("CRC-32 mismatch: the archive is corrupt".into()));
    }
    Ok(out)
}

/// Reads one array of a `.npz` archive: the one named `name`, or the only one when
/// `name` is `None`. `source` names the input in messages.
pub fn parse_npz(bytes: &[u8], source: &str, name: Option<&str>) -> Result<DMatrix<f64>> {
    let members = members(bytes, source)?;
    let names: Vec<&str> = members.iter().map(|m| array_name(&m.name)).collect();
    let member = match name {
        Some(want) => members.iter().find(|m| array_name(&m.name) == want),
        None if members.len() == 1 => members.first(),
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
    let npy = member_bytes(bytes, member, source)?;
    parse_npy(&npy, &format!("{source}:{}", array_name(&member.name)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

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
    }
}
