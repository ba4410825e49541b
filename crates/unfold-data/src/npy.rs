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

/// Reads a 1-D or 2-D numeric array from a `.npy` file. The file is read piece by piece
/// straight into the matrix (positional reads in parallel), so its bytes and the matrix
/// never live together: at 10^5 x 2000 that is 1.5 GiB less at the peak than reading the
/// whole file first.
#[cfg(unix)]
pub fn read_npy(path: &Path) -> Result<DMatrix<f64>> {
    use std::os::unix::fs::FileExt;
    let source = path.display().to_string();
    let io = |e| Error::io(path, e);
    let file = std::fs::File::open(path).map_err(io)?;
    let len = usize::try_from(file.metadata().map_err(io)?.len()).unwrap_or(usize::MAX);
    let head = |n: usize| -> Result<Vec<u8>> {
        let mut head = vec![0u8; n.min(len)];
        file.read_exact_at(&mut head, 0).map_err(io)?;
        Ok(head)
    };
    let (_, data_start) = header_span(&head(12)?, &source)?;
    let layout = Layout::parse(&head(data_start)?, &source)?;
    layout.check_payload(len.saturating_sub(data_start), &source)?;
    layout
        .decode(&Payload::File {
            file: &file,
            start: data_start,
        })
        .map_err(io)
}

/// Reads a 1-D or 2-D numeric array from a `.npy` file.
#[cfg(not(unix))]
pub fn read_npy(path: &Path) -> Result<DMatrix<f64>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_npy(&bytes, &path.display().to_string())
}

/// Reads a 1-D or 2-D numeric array from the bytes of a `.npy` file; `path` names the
/// source in messages.
pub fn parse_npy(bytes: &[u8], path: &str) -> Result<DMatrix<f64>> {
    let layout = Layout::parse(bytes, path)?;
    let payload = &bytes[layout.data_start.min(bytes.len())..];
    layout.check_payload(payload.len(), path)?;
    Ok(layout
        .decode(&Payload::Bytes(payload))
        .expect("in-memory pieces cannot fail"))
}

/// The offset of the header and of the data (the header's end) from the first bytes of a
/// `.npy` file (at least 12, or the whole file).
fn header_span(bytes: &[u8], path: &str) -> Result<(usize, usize)> {
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
    Ok((offset, offset + header_len))
}

/// The element types read.
#[derive(Clone, Copy)]
enum Dtype {
    F8,
    I8,
    F4,
    I4,
}

impl Dtype {
    fn width(self) -> usize {
        match self {
            Dtype::F8 | Dtype::I8 => 8,
            Dtype::F4 | Dtype::I4 => 4,
        }
    }

    /// The value of one element's little-endian bytes.
    #[inline(always)]
    fn value(self, c: &[u8]) -> f64 {
        match self {
            Dtype::F8 => f64::from_le_bytes(c.try_into().expect("eight bytes")),
            Dtype::I8 => i64::from_le_bytes(c.try_into().expect("eight bytes")) as f64,
            Dtype::F4 => f32::from_le_bytes(c.try_into().expect("four bytes")) as f64,
            Dtype::I4 => i32::from_le_bytes(c.try_into().expect("four bytes")) as f64,
        }
    }
}

/// What the header of a `.npy` file says of its array.
struct Layout {
    data_start: usize,
    rows: usize,
    cols: usize,
    fortran: bool,
    dtype: Dtype,
    shape_text: String,
}

/// Where the array's bytes are: in memory, or in a file from `start` on.
enum Payload<'a> {
    Bytes(&'a [u8]),
    #[cfg(unix)]
    File {
        file: &'a std::fs::File,
        start: usize,
    },
}

impl Payload<'_> {
    /// The bytes `range` of the payload, read into `buf` when they are in a file.
    fn piece<'s>(
        &'s self,
        range: std::ops::Range<usize>,
        buf: &'s mut Vec<u8>,
    ) -> std::io::Result<&'s [u8]> {
        match self {
            Payload::Bytes(bytes) => Ok(&bytes[range]),
            #[cfg(unix)]
            Payload::File { file, start } => {
                use std::os::unix::fs::FileExt;
                buf.resize(range.len(), 0);
                file.read_exact_at(buf, (start + range.start) as u64)?;
                Ok(buf)
            }
        }
    }
}

/// Bytes of the payload decoded per piece (a piece of rows of a C-order array, or of
/// columns of a Fortran-order one).
const PIECE_BYTES: usize = 8 << 20;

impl Layout {
    /// The layout from the first bytes of a `.npy` file (at least its whole header).
    fn parse(bytes: &[u8], path: &str) -> Result<Layout> {
        let (offset, data_start) = header_span(bytes, path)?;
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
        let shape_text = header_value(header, "shape")
            .ok_or_else(|| corrupt(path, "no 'shape' in the header"))?;
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
        let dtype = match descr {
            "<f8" => Dtype::F8,
            "<i8" => Dtype::I8,
            "<f4" => Dtype::F4,
            "<i4" => Dtype::I4,
            other => {
                return Err(corrupt(
                    path,
                    format!("dtype {other:?} is not supported (use little-endian float64, float32, int64 or int32)"),
                ))
            }
        };
        Ok(Layout {
            data_start,
            rows,
            cols,
            fortran,
            dtype,
            shape_text: shape_text.to_string(),
        })
    }

    /// Refuses a payload of other than `rows cols width` bytes, before anything is
    /// allocated, so a header that claims more than the file holds is refused, however
    /// large.
    fn check_payload(&self, found: usize, path: &str) -> Result<()> {
        let expected = self
            .rows
            .checked_mul(self.cols)
            .and_then(|c| c.checked_mul(self.dtype.width()));
        if expected != Some(found) {
            return Err(corrupt(
                path,
                format!(
                    "expected {} data bytes for shape {}, found {found}",
                    expected.map_or("more than 2^64".to_string(), |e| e.to_string()),
                    self.shape_text
                ),
            ));
        }
        Ok(())
    }

    /// The array as a column-major matrix, decoded piece by piece in parallel straight
    /// into it (no intermediate copy of the whole).
    fn decode(&self, payload: &Payload<'_>) -> std::io::Result<DMatrix<f64>> {
        let (rows, cols, dtype) = (self.rows, self.cols, self.dtype);
        let width = dtype.width();
        let mut m = unfold_linalg::zeroed(rows, cols);
        if rows == 0 || cols == 0 {
            return Ok(m);
        }
        if self.fortran {
            // Whole columns per piece: the payload is the matrix's own order.
            let per = (PIECE_BYTES / (rows * width)).max(1);
            m.as_mut_slice()
                .par_chunks_mut(rows * per)
                .enumerate()
                .try_for_each_init(Vec::new, |buf, (p, out)| {
                    let at = p * rows * per * width;
                    let bytes = payload.piece(at..at + out.len() * width, buf)?;
                    for (v, c) in out.iter_mut().zip(bytes.chunks_exact(width)) {
                        *v = dtype.value(c);
                    }
                    std::io::Result::Ok(())
                })?;
        } else {
            // Whole rows per piece, scattered into the columns.
            let per = (PIECE_BYTES / (cols * width)).max(1);
            unfold_linalg::view::as_faer_mut(&mut m)
                .par_row_chunks_mut(per)
                .enumerate()
                .try_for_each_init(Vec::new, |buf, (p, mut out)| {
                    let at = p * per * cols * width;
                    let bytes = payload.piece(at..at + out.nrows() * cols * width, buf)?;
                    for j in 0..cols {
                        let col = out.as_mut().col_mut(j).try_as_col_major_mut();
                        let col = col
                            .expect("a column of a column-major matrix")
                            .as_slice_mut();
                        for (i, v) in col.iter_mut().enumerate() {
                            let e = (i * cols + j) * width;
                            *v = dtype.value(&bytes[e..e + width]);
                        }
                    }
                    std::io::Result::Ok(())
                })?;
        }
        Ok(m)
    }
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

    /// Arrays of several pieces (C order: pieces of rows scattered into the columns;
    /// Fortran order: pieces of columns) read from the file equal the matrix and the
    /// in-memory decoding, for eight- and four-byte elements.
    #[test]
    fn reads_arrays_of_several_pieces() {
        let (n, p) = (3000, 800);
        assert!(n * p * 8 > PIECE_BYTES && n * 8 * 2 < PIECE_BYTES);
        let m = DMatrix::from_fn(n, p, |i, j| (i * p + j) as f64 * 0.25 - 7.0);
        let dir = tmp_dir("pieces");
        let c_order = dir.join("c.npy");
        write_npy(&c_order, &m).unwrap();
        assert_eq!(read_npy(&c_order).unwrap(), m);
        let bytes = std::fs::read(&c_order).unwrap();
        assert_eq!(parse_npy(&bytes, "c.npy").unwrap(), m);
        // Fortran order, float32 (every value above is exact in f32), version 3.0.
        let payload: Vec<u8> = m.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect();
        let header = format!("{{'descr': '<f4', 'fortran_order': True, 'shape': ({n}, {p}), }}\n");
        let f_order = dir.join("f.npy");
        std::fs::write(&f_order, hand_made(&header, &payload, 3)).unwrap();
        assert!(payload.len() > PIECE_BYTES);
        assert_eq!(read_npy(&f_order).unwrap(), m);
        // A file cut short is refused before anything is decoded.
        let bytes = std::fs::read(&f_order).unwrap();
        std::fs::write(&f_order, &bytes[..bytes.len() - 4]).unwrap();
        let e = read_npy(&f_order).unwrap_err().to_string();
        assert!(e.contains("expected 9600000 data bytes"), "{e}");
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
