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
    let data_start = data_start(&head(12)?, &source)?;
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

/// Where the data start (the header's end), from the first bytes of a `.npy` file (at
/// least 12, or the whole file): the magic bytes, the version and the header's length.
pub(crate) fn data_start(bytes: &[u8], path: &str) -> Result<usize> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(corrupt(path, "missing the \\x93NUMPY magic bytes"));
    }
    match bytes[6] {
        1 => Ok(10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize),
        2 | 3 if bytes.len() >= 12 => {
            let len = u32::from_le_bytes(bytes[8..12].try_into().expect("four bytes"));
            Ok(12usize.saturating_add(len as usize))
        }
        v => Err(corrupt(path, format!("unsupported format version {v}"))),
    }
}

/// The element types read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dtype {
    F8,
    I8,
    F4,
    I4,
}

impl Dtype {
    pub(crate) fn width(self) -> usize {
        match self {
            Dtype::F8 | Dtype::I8 => 8,
            Dtype::F4 | Dtype::I4 => 4,
        }
    }

    /// The value of one element's little-endian bytes.
    #[inline(always)]
    pub(crate) fn value(self, c: &[u8]) -> f64 {
        match self {
            Dtype::F8 => f64::from_le_bytes(c.try_into().expect("eight bytes")),
            Dtype::I8 => i64::from_le_bytes(c.try_into().expect("eight bytes")) as f64,
            Dtype::F4 => f32::from_le_bytes(c.try_into().expect("four bytes")) as f64,
            Dtype::I4 => i32::from_le_bytes(c.try_into().expect("four bytes")) as f64,
        }
    }
}

/// What the header of a `.npy` file says of its array.
pub(crate) struct Layout {
    pub(crate) data_start: usize,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    fortran: bool,
    pub(crate) dtype: Dtype,
    pub(crate) shape_text: String,
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
pub(crate) const PIECE_BYTES: usize = 8 << 20;

impl Layout {
    /// The layout from the first bytes of a `.npy` file (at least its whole header), whose
    /// header dictionary `npyz` parses.
    pub(crate) fn parse(bytes: &[u8], path: &str) -> Result<Layout> {
        let data_start = data_start(bytes, path)?;
        let head = bytes
            .get(..data_start)
            .ok_or_else(|| corrupt(path, "the header is cut short"))?;
        let header = npyz::NpyHeader::from_reader(head).map_err(|e| {
            // The parser's message for a syntax error goes on to quote the header's line,
            // which may be long: its first line says where.
            let e = e.to_string();
            let reason: String = e
                .lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(160)
                .collect();
            corrupt(path, format!("bad header ({})", reason.trim_end()))
        })?;
        let shape = header.shape();
        let shape_text = match shape {
            [n] => format!("({n},)"),
            _ => format!(
                "({})",
                shape
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let dims: Vec<usize> = shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| corrupt(path, format!("shape {shape_text} is too large")))?;
        let (rows, cols) = match dims[..] {
            [n] => (n, 1),
            [n, p] => (n, p),
            _ => {
                return Err(corrupt(
                    path,
                    format!("shape {shape_text}: only 1-D and 2-D arrays are supported"),
                ))
            }
        };
        let descr = header.dtype();
        let dtype = match &descr {
            npyz::DType::Plain(t) if t.endianness() == npyz::Endianness::Little => {
                match (t.type_char(), t.size_field()) {
                    (npyz::TypeChar::Float, 8) => Some(Dtype::F8),
                    (npyz::TypeChar::Int, 8) => Some(Dtype::I8),
                    (npyz::TypeChar::Float, 4) => Some(Dtype::F4),
                    (npyz::TypeChar::Int, 4) => Some(Dtype::I4),
                    _ => None,
                }
            }
            _ => None,
        }
        .ok_or_else(|| {
            corrupt(
                path,
                format!(
                    "dtype {} is not supported (use little-endian float64, float32, int64 or int32)",
                    descr.descr()
                ),
            )
        })?;
        Ok(Layout {
            data_start,
            rows,
            cols,
            fortran: header.order() == npyz::Order::Fortran,
            dtype,
            shape_text,
        })
    }

    /// Refuses a payload of other than `rows cols width` bytes, before anything is
    /// allocated, so a header that claims more than the file holds is refused, however
    /// large.
    pub(crate) fn check_payload(&self, found: usize, path: &str) -> Result<()> {
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

    /// Headers that are not what NumPy writes: each refused with its reason, in memory and
    /// from a file, and never by a panic or a crash.
    #[test]
    fn refuses_bad_headers_with_the_reason() {
        let payload = [0u8; 32];
        let deep = format!(
            "{{'descr': '<f8', 'fortran_order': False, 'shape': {}2{}, }}\n",
            "[".repeat(30_000),
            "]".repeat(30_000)
        );
        let cases: [(Vec<u8>, &str); 10] = [
            (
                hand_made("{'descr': '<f8', 'shape': (2, 2), }\n", &payload, 1),
                "fortran_order",
            ),
            (
                hand_made("{'fortran_order': False, 'shape': (2, 2), }\n", &payload, 1),
                "descr",
            ),
            (
                hand_made(
                    "{'descr': '<f8', 'fortran_order': 0, 'shape': (2, 2), }\n",
                    &payload,
                    1,
                ),
                "fortran_order",
            ),
            (
                hand_made(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, -2), }\n",
                    &payload,
                    1,
                ),
                "negative",
            ),
            (
                hand_made(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 1), }\n",
                    &payload,
                    1,
                ),
                "only 1-D and 2-D",
            ),
            (
                hand_made(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), \n",
                    &payload,
                    1,
                ),
                "bad header",
            ),
            (
                hand_made(
                    "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 2), }\n",
                    &payload,
                    1,
                ),
                "dtype [('a', '<f8'), ] is not supported",
            ),
            (
                hand_made(
                    "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }\n",
                    &payload,
                    1,
                ),
                "is not supported",
            ),
            (hand_made(&deep, &payload, 3), "bad header"),
            (
                hand_made(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n",
                    &payload,
                    4,
                ),
                "unsupported format version 4",
            ),
        ];
        let dir = tmp_dir("headers");
        let p = dir.join("bad.npy");
        for (bytes, reason) in cases {
            let e = parse_npy(&bytes, "bad.npy").unwrap_err().to_string();
            assert!(e.contains(reason) && e.len() < 300, "{reason}: {e}");
            std::fs::write(&p, &bytes).unwrap();
            let e = read_npy(&p).unwrap_err().to_string();
            assert!(e.contains(reason), "{reason}: {e}");
        }
        // A header longer than the file.
        let mut cut = hand_made(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n",
            &[],
            2,
        );
        cut[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = parse_npy(&cut, "cut.npy").unwrap_err().to_string();
        assert!(e.contains("header is cut short"), "{e}");
        std::fs::write(&p, &cut).unwrap();
        let e = read_npy(&p).unwrap_err().to_string();
        assert!(e.contains("header is cut short"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
