//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0).
//!
//! Reading accepts little-endian `f8`, `f4`, `i8` and `i4` arrays of one or two
//! dimensions in C or Fortran order (a 1-D array becomes a column). Writing produces
//! version 1.0, `<f8`, C order: rows are points, as NumPy users expect.

use nalgebra::DMatrix;
use rayon::prelude::*;
use std::path::Path;
use unfold_core::{Error, Result};

pub(crate) const MAGIC: &[u8] = b"\x93NUMPY";

fn corrupt(source: &str, message: impl Into<String>) -> Error {
    Error::Parse {
        source_name: source.to_string(),
        line: 1,
        message: format!("not a readable .npy file: {}", message.into()),
    }
}

/// The value of `key` in the header dictionary, as raw text up to the next top-level comma.
fn header_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let start = header.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = header[start..].trim_start().strip_prefix(':')?.trim_start();
    if rest.starts_with('(') {
        rest.find(')').map(|e| &rest[..=e])
    } else {
        rest.find([',', '}']).map(|e| rest[..e].trim())
    }
}

/// Reads a 1-D or 2-D numeric array from a `.npy` file.
pub fn read_npy(path: &Path) -> Result<DMatrix<f64>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_npy(&bytes, &path.display().to_string())
}

/// Reads a 1-D or 2-D numeric array from the bytes of a `.npy` file; `path` names the
/// source in messages.
pub fn parse_npy(bytes: &[u8], path: &str) -> Result<DMatrix<f64>> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(corrupt(path, "missing the \\x93NUMPY magic bytes"));
    }
    let (header_len, offset) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes(bytes[8..12].try_into().expect("four bytes")) as usize,
            12,
        ),
        v => return Err(corrupt(path, format!("unsupported format version {v}"))),
    };
    let data_start = offset + header_len;
    let header = bytes
        .get(offset..data_start)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| corrupt(path, "truncated or non-text header"))?;
    let descr = header_value(header, "descr")
        .map(|d| d.trim_matches(|c| c == '\'' || c == '"'))
        .ok_or_else(|| corrupt(path, "no 'descr' in the header"))?;
    let fortran = match header_value(header, "fortran_order") {
        Some("True") => true,
        Some("False") => false,
        _ => return Err(corrupt(path, "no valid 'fortran_order' in the header")),
    };
    let shape_text =
        header_value(header, "shape").ok_or_else(|| corrupt(path, "no 'shape' in the header"))?;
    let shape: Vec<usize> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| corrupt(path, format!("bad shape {shape_text}")))?;
    let (rows, cols) = match shape[..] {
        [n] => (n, 1),
        [n, p] => (n, p),
        _ => {
            return Err(corrupt(
                path,
                format!("shape {shape_text}: only 1-D and 2-D arrays are supported"),
            ))
        }
    };
    let width = match descr {
        "<f8" | "<i8" => 8,
        "<f4" | "<i4" => 4,
        other => {
            return Err(corrupt(
                path,
                format!("dtype {other:?} is not supported (use little-endian float64, float32, int64 or int32)"),
            ))
        }
    };
    let payload = &bytes[data_start.min(bytes.len())..];
    // Checked against the file's length before anything is allocated, so a header that
    // claims more than the file holds is refused, however large.
    let expected = rows.checked_mul(cols).and_then(|c| c.checked_mul(width));
    if expected != Some(payload.len()) {
        return Err(corrupt(
            path,
            format!(
                "expected {} data bytes for shape {shape_text}, found {}",
                expected.map_or("more than 2^64".to_string(), |e| e.to_string()),
                payload.len()
            ),
        ));
    }
    // Decoded straight into the column-major matrix (no intermediate copy: at 10^5 x 2000
    // each copy is 1.6 GB), column by column in parallel.
    let value = |c: &[u8]| match descr {
        "<f8" => f64::from_le_bytes(c.try_into().expect("eight bytes")),
        "<i8" => i64::from_le_bytes(c.try_into().expect("eight bytes")) as f64,
        "<f4" => f32::from_le_bytes(c.try_into().expect("four bytes")) as f64,
        _ => i32::from_le_bytes(c.try_into().expect("four bytes")) as f64,
    };
    let mut m = unfold_linalg::zeroed(rows, cols);
    if rows > 0 {
        m.as_mut_slice()
            .par_chunks_mut(rows)
            .enumerate()
            .for_each(|(j, column)| {
                for (i, v) in column.iter_mut().enumerate() {
                    let at = if fortran { j * rows + i } else { i * cols + j } * width;
                    *v = value(&payload[at..at + width]);
                }
            });
    }
    Ok(m)
}

/// Writes a matrix as a version 1.0 `<f8` C-order `.npy` file, atomically.
pub fn write_npy(path: &Path, m: &DMatrix<f64>) -> Result<()> {
    unfold_core::write_atomic(path, &npy_bytes(m))
}

/// The bytes of a version 1.0 `<f8` C-order `.npy` file holding `m`.
pub(crate) fn npy_bytes(m: &DMatrix<f64>) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}",
        m.nrows(),
        m.ncols()
    );
    // Pad so that the data starts on a 64-byte boundary, ending in a newline.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for row in m.row_iter() {
        for v in row.iter() {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory per test (tests run in parallel), removed by the test.
    fn tmp_dir(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("unfold-npy-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn round_trip_and_alignment() {
        let m = DMatrix::from_fn(4, 3, |i, j| (i as f64 - 1.5) * 10.0 + j as f64 / 7.0);
        let dir = tmp_dir("round");
        let p = dir.join("a.npy");
        write_npy(&p, &m).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!((bytes.len() - 4 * 3 * 8) % 64, 0);
        assert_eq!(bytes[bytes.len() - 4 * 3 * 8 - 1], b'\n');
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(read_npy(&p).unwrap(), m);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn hand_made(header: &str, payload: &[u8], version: u8) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[version, 0]);
        if version == 1 {
            b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            b.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(payload);
        b
    }

    #[test]
    fn reads_other_dtypes_orders_and_versions() {
        let ints: Vec<u8> = [1i32, 2, 3, 4, 5, 6]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let dir = tmp_dir("dtypes");
        let p = dir.join("i4.npy");
        std::fs::write(
            &p,
            hand_made(
                "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n",
                &ints,
                2,
            ),
        )
        .unwrap();
        assert_eq!(
            read_npy(&p).unwrap(),
            DMatrix::from_column_slice(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        );
        let floats: Vec<u8> = [0.5f32, -2.0, 8.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        std::fs::write(
            &p,
            hand_made(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n",
                &floats,
                1,
            ),
        )
        .unwrap();
        assert_eq!(
            read_npy(&p).unwrap(),
            DMatrix::from_column_slice(3, 1, &[0.5, -2.0, 8.0])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_corrupt_files() {
        let dir = tmp_dir("corrupt");
        let p = dir.join("bad.npy");
        std::fs::write(&p, b"hello").unwrap();
        assert!(read_npy(&p).unwrap_err().to_string().contains("magic"));
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n";
        std::fs::write(&p, hand_made(h, &[0u8; 24], 1)).unwrap();
        assert!(read_npy(&p)
            .unwrap_err()
            .to_string()
            .contains("expected 32 data bytes"));
        std::fs::write(&p, hand_made(&h.replace("<f8", ">f8"), &[0u8; 32], 1)).unwrap();
        assert!(read_npy(&p)
            .unwrap_err()
            .to_string()
            .contains("not supported"));
        std::fs::write(&p, &hand_made(h, &[0u8; 32], 1)[..20]).unwrap();
        assert!(read_npy(&p).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
