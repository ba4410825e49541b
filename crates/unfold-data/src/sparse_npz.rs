//! Sparse matrices saved by `scipy.sparse.save_npz`: a `.npz` archive whose members are
//! `data`, `format`, `indices`, `indptr` and `shape`.
//!
//! Each member is streamed from the archive (read from the file, inflated and checked
//! against its CRC-32 as it goes) straight into the array it fills, a piece at a time: the
//! file's bytes, a member's bytes and the arrays never live together. Indices are kept as
//! `i32` when the number of entries and of columns allow (as scipy keeps them), else as
//! `i64`, and `float32` values stay `f32`, so the matrix takes the memory scipy's does,
//! except that integer values are kept as `f64` (1.5 times scipy's 8 bytes per entry for
//! int32 values with int32 indices). An array grows only as its bytes arrive, never from a
//! size the archive or a header claims.

use crate::npy::{data_start, Dtype, Layout, PIECE_BYTES};
use crate::npz::{array_name, corrupt, member_error, open_archive, open_member, size_error};
use nalgebra::DMatrix;
use std::io::{Read, Seek};
use unfold_core::{Error, Result};
use unfold_linalg::{PrincipalComponents, SparsePoints, SparseRows};
use zip::ZipArchive;

/// The stored values of a [`SparseCsr`]: `float32` arrays stay single precision.
#[derive(Clone, Debug, PartialEq)]
pub enum SparseValues {
    /// Double precision (from `float64`, `int64` or `int32` arrays).
    F64(Vec<f64>),
    /// Single precision (from `float32` arrays).
    F32(Vec<f32>),
}

impl SparseValues {
    /// The number of stored values.
    pub fn len(&self) -> usize {
        match self {
            SparseValues::F64(v) => v.len(),
            SparseValues::F32(v) => v.len(),
        }
    }

    /// Whether no value is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first value at or below `limit`, if any.
    pub fn first_at_most(&self, limit: f64) -> Option<f64> {
        match self {
            SparseValues::F64(v) => v.iter().copied().find(|&x| x <= limit),
            SparseValues::F32(v) => v.iter().map(|&x| f64::from(x)).find(|&x| x <= limit),
        }
    }

    /// Every value `v` replaced by `f(v)`, kept in its own precision.
    pub fn map_in_place(&mut self, f: impl Fn(f64) -> f64) {
        match self {
            SparseValues::F64(v) => v.iter_mut().for_each(|x| *x = f(*x)),
            SparseValues::F32(v) => v.iter_mut().for_each(|x| *x = f(f64::from(*x)) as f32),
        }
    }
}

/// The row pointers and column indices of a [`SparseCsr`], in one integer width.
#[derive(Clone, Debug, PartialEq)]
pub enum CsrIndex {
    /// Up to `i32::MAX` entries and columns.
    I32 { indptr: Vec<i32>, indices: Vec<i32> },
    /// More entries or columns than that.
    I64 { indptr: Vec<i64>, indices: Vec<i64> },
}

/// A sparse matrix in compressed sparse row form, as `scipy.sparse.save_npz` writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseCsr {
    pub nrows: usize,
    pub ncols: usize,
    pub index: CsrIndex,
    pub data: SparseValues,
}

/// `$body` with `$rows` bound to the checked [`SparseRows`] view of `$csr`, whatever its
/// index and value types.
macro_rules! with_rows {
    ($csr:expr, |$rows:ident| $body:expr) => {{
        let csr = $csr;
        let (n, p) = (csr.nrows, csr.ncols);
        match (&csr.index, &csr.data) {
            (CsrIndex::I32 { indptr, indices }, SparseValues::F64(v)) => {
                let $rows = SparseRows::new(n, p, indptr, indices, v)?;
                $body
            }
            (CsrIndex::I32 { indptr, indices }, SparseValues::F32(v)) => {
                let $rows = SparseRows::new(n, p, indptr, indices, v)?;
                $body
            }
            (CsrIndex::I64 { indptr, indices }, SparseValues::F64(v)) => {
                let $rows = SparseRows::new(n, p, indptr, indices, v)?;
                $body
            }
            (CsrIndex::I64 { indptr, indices }, SparseValues::F32(v)) => {
                let $rows = SparseRows::new(n, p, indptr, indices, v)?;
                $body
            }
        }
    }};
}

impl SparseCsr {
    /// Checks the arrays as [`SparseRows::new`] does (the row pointers, the column indices
    /// and finite values).
    ///
    /// # Errors
    /// What [`SparseRows::new`] refuses.
    pub fn check(&self) -> Result<()> {
        with_rows!(self, |_rows| Ok(()))
    }

    /// The rows as canonical sparse points (columns ascending, a column given twice in a
    /// row summed, values in double precision), for the neighbour methods that take them.
    ///
    /// # Errors
    /// Malformed arrays ([`SparseCsr::check`]); more columns than 32-bit indices hold.
    pub fn to_points(&self) -> Result<SparsePoints<'static>> {
        with_rows!(self, |rows| {
            let n = self.nrows;
            let mut indptr = Vec::with_capacity(n + 1);
            let (mut indices, mut values) = (Vec::new(), Vec::new());
            indptr.push(0);
            let mut entries: Vec<(usize, f64)> = Vec::new();
            for i in 0..n {
                entries.clear();
                entries.extend(rows.entries(i));
                entries.sort_unstable_by_key(|&(c, _)| c);
                for &(c, v) in &entries {
                    match indices.last() {
                        Some(&last) if values.len() > indptr[i] && last as usize == c => {
                            *values.last_mut().expect("an entry of this row") += v;
                        }
                        _ => {
                            let c = i32::try_from(c).map_err(|_| {
                                unfold_core::Error::invalid(
                                    "sparse matrix",
                                    format!(
                                        "{} columns; sparse points have at most {} (reduce them \
                                         with --preprocess pca:Q)",
                                        self.ncols,
                                        i32::MAX
                                    ),
                                )
                            })?;
                            indices.push(c);
                            values.push(v);
                        }
                    }
                }
                indptr.push(values.len());
            }
            SparsePoints::new(n, self.ncols, indptr, indices.into(), values.into())
        })
    }

    /// The dense matrix (for tests and small inputs).
    ///
    /// # Errors
    /// Malformed arrays ([`SparseCsr::check`]).
    pub fn to_dense(&self) -> Result<DMatrix<f64>> {
        with_rows!(self, |rows| Ok(rows.to_dense()))
    }

    /// The exact principal components of the rows, the matrix centred implicitly
    /// ([`unfold_linalg::principal_components_sparse`]).
    ///
    /// # Errors
    /// Malformed arrays, and the PCA's own errors.
    pub fn principal_components(&self, q: usize, seed: u64) -> Result<PrincipalComponents> {
        with_rows!(self, |rows| unfold_linalg::principal_components_sparse(
            &rows, q, seed
        ))
    }
}

/// The members `scipy.sparse.save_npz` writes.
const SPARSE_MEMBERS: [&str; 5] = ["data", "format", "indices", "indptr", "shape"];

/// The sparse matrix of the bytes of a `.npz` archive written by `scipy.sparse.save_npz`,
/// or `None` for any other archive ([`read_sparse_npz`] on them).
///
/// # Errors
/// As [`read_sparse_npz`].
pub fn parse_sparse_npz(bytes: &[u8], source: &str) -> Result<Option<SparseCsr>> {
    read_sparse_npz(std::io::Cursor::new(bytes), source)
}

/// The sparse matrix of a `.npz` archive written by `scipy.sparse.save_npz` (members
/// `data`, `format`, `indices`, `indptr`, `shape`), streamed from `reader`, or `None` for
/// any other archive. `source` names the input in messages.
///
/// # Errors
/// A corrupt archive, a format other than CSR (named, with the conversion), arrays that do
/// not make a matrix, and element types other than little-endian integers and floats of 4
/// or 8 bytes.
pub fn read_sparse_npz<R: Read + Seek>(reader: R, source: &str) -> Result<Option<SparseCsr>> {
    let mut archive = open_archive(reader, source)?;
    let mut names: Vec<String> = archive
        .file_names()
        .map(|n| array_name(n).to_string())
        .collect();
    names.sort();
    if names != SPARSE_MEMBERS {
        return Ok(None);
    }
    check_format(&mut archive, source)?;
    let shape: Vec<i64> = Npy::open(&mut archive, "shape", source)?.elements()?;
    let [nrows, ncols] = shape[..] else {
        return Err(corrupt(
            source,
            format!("shape has {} entries, not 2", shape.len()),
        ));
    };
    let (nrows, ncols) = (nrows as usize, ncols as usize);
    let indptr: Vec<i64> = Npy::open(&mut archive, "indptr", source)?.elements()?;
    // The narrow index type when every pointer and column fits in it, as scipy chooses.
    let entries = indptr.last().copied().unwrap_or(0);
    let narrow = entries <= i64::from(i32::MAX) && ncols <= i32::MAX as usize;
    let indices = Npy::open(&mut archive, "indices", source)?;
    let index = if narrow {
        CsrIndex::I32 {
            indptr: indptr.into_iter().map(|v| v as i32).collect(),
            indices: indices.elements()?,
        }
    } else {
        CsrIndex::I64 {
            indptr,
            indices: indices.elements()?,
        }
    };
    let values = Npy::open(&mut archive, "data", source)?;
    let data = match values.layout.dtype {
        Dtype::F4 => SparseValues::F32(values.elements()?),
        _ => SparseValues::F64(values.elements()?),
    };
    let csr = SparseCsr {
        nrows,
        ncols,
        index,
        data,
    };
    csr.check()?;
    Ok(Some(csr))
}

/// Refuses an archive whose `format` member is not `csr`, naming the format and the
/// conversion. `format` is a 0-d string array after the `.npy` header's newline: bytes
/// (`|S3`, as scipy writes it) or UTF-32 (`<U3`).
fn check_format<R: Read + Seek>(archive: &mut ZipArchive<R>, source: &str) -> Result<()> {
    let index = member_index(archive, "format", source)?;
    let (mut member, name) = open_member(archive, index, source)?;
    let mut format = Vec::new();
    (&mut member)
        .take(4096)
        .read_to_end(&mut format)
        .map_err(|e| member_error(source, &name, &e))?;
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
    if has("csr") {
        return Ok(());
    }
    let named = ["csc", "coo", "bsr", "dia"].into_iter().find(|w| has(w));
    Err(Error::invalid(
        "input",
        format!(
            "{source} holds a sparse matrix in {} format; save it as CSR: \
             scipy.sparse.save_npz(path, X.tocsr())",
            named.unwrap_or("another")
        ),
    ))
}

fn member_index<R: Read + Seek>(
    archive: &ZipArchive<R>,
    name: &str,
    source: &str,
) -> Result<usize> {
    archive
        .index_for_name(&format!("{name}.npy"))
        .ok_or_else(|| corrupt(source, format!("no member {name}.npy")))
}

/// An element type a member is read into, from the value of one stored element.
trait Element: Sized {
    /// The element of value `x`, or `None` for an index that is not a whole number in the
    /// type's range.
    fn from_value(x: f64) -> Option<Self>;
}

/// A whole number below `9e15`, exact in the `f64` a stored element is read through.
fn whole(x: f64) -> bool {
    x.fract() == 0.0 && (0.0..9.0e15).contains(&x)
}

impl Element for i64 {
    fn from_value(x: f64) -> Option<i64> {
        whole(x).then_some(x as i64)
    }
}

impl Element for i32 {
    fn from_value(x: f64) -> Option<i32> {
        (whole(x) && x <= f64::from(i32::MAX)).then_some(x as i32)
    }
}

impl Element for f64 {
    fn from_value(x: f64) -> Option<f64> {
        Some(x)
    }
}

impl Element for f32 {
    /// Exact for the `float32` members, the only ones read as `f32`.
    fn from_value(x: f64) -> Option<f32> {
        Some(x as f32)
    }
}

/// A 1-D `.npy` member opened and its header read: its elements follow in the stream.
struct Npy<'z, R: Read + Seek> {
    member: zip::read::ZipFile<'z, R>,
    /// The member's file name in the archive, and the array's name.
    member_name: String,
    name: String,
    source: String,
    layout: Layout,
    /// Where the elements start, their number, and the member's size as the archive
    /// claims it.
    start: usize,
    count: usize,
    claimed: u64,
}

impl<'z, R: Read + Seek> Npy<'z, R> {
    /// Opens the member `name` and reads its header. The header's element count must match
    /// the member's size as the archive claims it.
    fn open(archive: &'z mut ZipArchive<R>, name: &str, source: &str) -> Result<Self> {
        let index = member_index(archive, name, source)?;
        let (mut member, member_name) = open_member(archive, index, source)?;
        let claimed = member.size();
        let array = format!("{source}:{name}");
        let read_err = |e: std::io::Error| member_error(source, &member_name, &e);
        // The header: the magic bytes, version and length, then the dictionary.
        let mut head = vec![0u8; 12];
        let got = read_up_to(&mut member, &mut head).map_err(read_err)?;
        head.truncate(got);
        let start = data_start(&head, &array)?;
        if start > head.len() {
            let mut rest = vec![0u8; (start - head.len()).min(1 << 20)];
            let got = read_up_to(&mut member, &mut rest).map_err(read_err)?;
            head.extend_from_slice(&rest[..got]);
        }
        let layout = Layout::parse(&head, &array)?;
        let payload = claimed.saturating_sub(start as u64);
        layout.check_payload(usize::try_from(payload).unwrap_or(usize::MAX), &array)?;
        let count = layout
            .rows
            .checked_mul(layout.cols)
            .expect("checked with the payload");
        Ok(Npy {
            member,
            member_name,
            name: name.to_string(),
            source: source.to_string(),
            layout,
            start,
            count,
            claimed,
        })
    }

    /// The elements, streamed into `E` a piece at a time; the member must end where they
    /// do (which also has its CRC-32 checked).
    fn elements<E: Element>(mut self) -> Result<Vec<E>> {
        let (source, member_name) = (self.source.as_str(), self.member_name.as_str());
        let read_err = |e: std::io::Error| member_error(source, member_name, &e);
        let (dtype, width) = (self.layout.dtype, self.layout.dtype.width());
        let per = (PIECE_BYTES / width).max(1);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let mut done = 0;
        while done < self.count {
            let take = per.min(self.count - done);
            buf.resize(take * width, 0);
            let got = read_up_to(&mut self.member, &mut buf).map_err(read_err)?;
            if got < buf.len() {
                return Err(size_error(
                    source,
                    member_name,
                    (self.start + done * width + got) as u64,
                    self.claimed,
                ));
            }
            let before = out.len();
            out.reserve(take);
            out.extend(
                buf.chunks_exact(width)
                    .map_while(|c| E::from_value(dtype.value(c))),
            );
            if out.len() - before < take {
                let x = dtype.value(&buf[(out.len() - before) * width..][..width]);
                return Err(corrupt(
                    source,
                    format!("{} holds {x}, not an index", self.name),
                ));
            }
            done += take;
        }
        // The member ends here: one more byte is an error, and reaching the end checks the
        // CRC-32.
        let mut extra = [0u8; 1];
        if read_up_to(&mut self.member, &mut extra).map_err(read_err)? != 0 {
            return Err(size_error(
                source,
                member_name,
                self.claimed.saturating_add(1),
                self.claimed,
            ));
        }
        Ok(out)
    }
}

/// Reads until `buf` is full or the reader ends; the number of bytes read.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npz::tests::{archive, npy};

    /// The bytes of a 1-D `.npy` array of `dtype` (`<i4`, `<f4`, ...) holding `values`.
    fn typed(dtype: &str, values: &[f64]) -> Vec<u8> {
        let dict = format!(
            "{{'descr': '{dtype}', 'fortran_order': False, 'shape': ({},), }}",
            values.len()
        );
        let mut header = dict.into_bytes();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(b' ');
        }
        header.push(b'\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend(header);
        for &v in values {
            match dtype {
                "<i4" => b.extend((v as i32).to_le_bytes()),
                "<i8" => b.extend((v as i64).to_le_bytes()),
                "<f4" => b.extend((v as f32).to_le_bytes()),
                _ => b.extend(v.to_le_bytes()),
            }
        }
        b
    }

    /// As scipy writes it (`|S3`), and as NumPy writes a str (`<U3`).
    fn format(w: &str) -> Vec<u8> {
        let mut b = b"\x93NUMPY\x01\x00\x06\x00{...}\n".to_vec();
        if w == "csc" {
            b.extend(w.chars().flat_map(|c| (c as u32).to_le_bytes()));
        } else {
            b.extend(w.bytes());
        }
        b
    }

    fn members(f: &str, index: &str, value: &str) -> Vec<(&'static str, Vec<u8>)> {
        vec![
            ("data.npy", typed(value, &[1.0, 2.5, 3.0])),
            ("indices.npy", typed(index, &[0.0, 2.0, 1.0])),
            ("indptr.npy", typed(index, &[0.0, 2.0, 2.0, 3.0])),
            ("format.npy", format(f)),
            ("shape.npy", typed("<i8", &[3.0, 4.0])),
        ]
    }

    /// `scipy.sparse.save_npz`'s members, with every index and value type scipy writes: a
    /// CSR matrix is read with its arrays (narrow indices, float32 values kept single);
    /// another format is refused naming it; other archives are not sparse.
    #[test]
    fn reads_a_sparse_csr_archive_and_refuses_other_formats() {
        for index in ["<i4", "<i8", "<f8"] {
            for value in ["<f8", "<f4", "<i8", "<i4"] {
                // 2.5 is stored as 2 in an integer array.
                let mut expected = DMatrix::zeros(3, 4);
                expected[(0, 0)] = 1.0;
                expected[(0, 2)] = if value.starts_with("<i") { 2.0 } else { 2.5 };
                expected[(2, 1)] = 3.0;
                for deflate in [false, true] {
                    let z = archive(&members("csr", index, value), deflate, deflate);
                    let csr = parse_sparse_npz(&z, "m.npz").unwrap().unwrap();
                    assert_eq!((csr.nrows, csr.ncols), (3, 4));
                    assert_eq!(
                        csr.index,
                        CsrIndex::I32 {
                            indptr: vec![0, 2, 2, 3],
                            indices: vec![0, 2, 1]
                        }
                    );
                    assert_eq!(matches!(csr.data, SparseValues::F32(_)), value == "<f4");
                    assert_eq!(csr.to_dense().unwrap(), expected);
                }
            }
        }
        let csc = parse_sparse_npz(
            &archive(&members("csc", "<i4", "<f8"), false, false),
            "m.npz",
        );
        assert!(csc.unwrap_err().to_string().contains("in csc format"));
        let plain = archive(
            &[("x.npy", npy(&DMatrix::from_element(1, 1, 1.0)))],
            false,
            false,
        );
        assert_eq!(parse_sparse_npz(&plain, "x.npz").unwrap(), None);
    }

    /// Unsorted columns and a column given twice in a row become canonical sparse points
    /// with the matrix's values (duplicates summed, as scipy sums them).
    #[test]
    fn sparse_points_are_canonical() {
        let csr = SparseCsr {
            nrows: 3,
            ncols: 4,
            index: CsrIndex::I64 {
                indptr: vec![0, 4, 4, 6],
                indices: vec![3, 0, 3, 1, 2, 0],
            },
            data: SparseValues::F32(vec![1.0, 2.0, 0.5, -1.0, 4.0, 3.0]),
        };
        let points = csr.to_points().unwrap();
        assert_eq!(points.to_dense(), csr.to_dense().unwrap());
        assert_eq!(points.row(0), (&[0, 1, 3][..], &[2.0, -1.0, 1.5][..]));
        assert_eq!(points.row(1).0.len(), 0);
        assert_eq!(points.row(2), (&[0, 2][..], &[3.0, 4.0][..]));
    }

    /// Damaged members are refused with the reason: a fractional or negative index, a
    /// member shorter or longer than its header, a flipped byte (CRC-32), a column out of
    /// range, and a value type that is not read.
    #[test]
    fn damaged_sparse_archives_are_refused_with_the_reason() {
        let refuse = |m: Vec<(&'static str, Vec<u8>)>, deflate: bool, what: &str| {
            let e = parse_sparse_npz(&archive(&m, deflate, false), "m.npz")
                .unwrap_err()
                .to_string();
            assert!(e.contains(what), "{what}: {e}");
        };
        let mut m = members("csr", "<f8", "<f8");
        m[1].1 = typed("<f8", &[0.0, 2.5, 1.0]);
        refuse(m, false, "indices holds 2.5, not an index");
        let mut m = members("csr", "<i8", "<f8");
        m[1].1 = typed("<i8", &[0.0, -2.0, 1.0]);
        refuse(m, true, "indices holds -2, not an index");
        let mut m = members("csr", "<i4", "<f8");
        let short = m[0].1.len() - 8;
        m[0].1.truncate(short);
        refuse(m, false, "expected 24 data bytes");
        let mut m = members("csr", "<i4", "<f8");
        m[0].1.push(0);
        refuse(m, true, "expected 24 data bytes");
        let mut m = members("csr", "<i4", "<f8");
        m[1].1 = typed("<i4", &[0.0, 7.0, 1.0]);
        refuse(m, false, "column");
        let mut m = members("csr", "<i4", "<f8");
        m[0].1 = typed("<u2", &[1.0, 2.0, 3.0]);
        refuse(m, false, "dtype");
        // A flipped bit in a stored value: still a finite number, but not the one the
        // CRC-32 was taken of.
        let mut z = archive(&members("csr", "<i4", "<f8"), false, false);
        let at = z
            .windows(8)
            .position(|w| w == 2.5f64.to_le_bytes())
            .unwrap();
        z[at] ^= 0x01;
        let e = parse_sparse_npz(&z, "m.npz").unwrap_err().to_string();
        assert!(e.contains("member data.npy: CRC-32 mismatch"), "{e}");
    }
}
