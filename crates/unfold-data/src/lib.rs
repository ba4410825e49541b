//! Data sets for unfold: the [`Dataset`] type, CSV, `.npy` and `.npz` input (optionally
//! gzip-compressed) and output, standardisation,
//! seeded synthetic manifolds ([`synthetic`]) and small bundled real data sets
//! ([`bundled`]). Points are the ROWS of an n x p matrix.

pub mod bundled;
mod csv;
mod dataset;
mod decimal;
mod npy;
mod npz;
mod preprocess;
mod scale;
mod sparse_npz;
mod split;
pub mod synthetic;

pub use csv::{parse_csv, read_csv, to_csv_string, write_csv, CsvOptions};
pub use dataset::Dataset;
pub use npy::{parse_npy, read_npy, write_npy};
pub use npz::parse_npz;
pub use preprocess::{Preprocessing, Step};
pub use scale::{centre, standardise, Standardised};
pub use sparse_npz::{parse_sparse_npz, read_sparse_npz, CsrIndex, SparseCsr, SparseValues};
pub use split::holdout_split;

use std::path::Path;
use unfold_core::{Error, Result};

/// The points of a data file, by its content: a NumPy `.npy` array (1-D or 2-D,
/// float64/float32/int64/int32, C or Fortran order), an array of a NumPy `.npz` archive
/// (`file.npz:NAME`, or `file.npz` when it holds one array), or CSV with the checks of
/// [`read_csv`]; any of them may be gzip-compressed. The content decides, not the name;
/// a name that promises a format the content does not have (`.npy`, `.npz`, `.gz`) is an
/// error saying so. Array values are checked finite, as CSV cells are;
/// `opts.label_column` applies to CSV only.
pub fn read_points(spec: &Path, opts: &CsvOptions) -> Result<Dataset> {
    let (path, array) = split_array_name(spec);
    if array.is_none() && opts.label_column.is_none() && is_plain_npy(path) {
        // Read piece by piece into the matrix, never whole ([`read_npy`]).
        let name = path
            .file_stem()
            .map_or_else(|| "data".to_string(), |s| s.to_string_lossy().into_owned());
        let points = npy::read_npy(path)?;
        return array_points(points, &name, &path.display().to_string());
    }
    let raw = read_file(path).map_err(|e| Error::io(path, e))?;
    parse_points(raw, path, array, opts)
}

/// The sparse matrix of `path` when it is an archive written by `scipy.sparse.save_npz`
/// ([`parse_sparse_npz`]); `None` for any other file.
pub fn read_sparse(path: &Path) -> Result<Option<SparseCsr>> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let zip = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == npz::MAGIC;
    if !zip {
        return Ok(None);
    }
    // Streamed from the file: its bytes are never held whole (sparse_npz.rs).
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    read_sparse_npz(std::io::BufReader::new(file), &path.display().to_string())
}

/// Whether `path` holds an uncompressed `.npy` array (by its first bytes) and is not named
/// as gzip (which [`parse_points`] refuses with its own message).
fn is_plain_npy(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 6];
    let gz = path
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("gz"));
    !gz && std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == npy::MAGIC
}

/// The data set `name` of an array read from `source`, its values checked finite.
fn array_points(points: nalgebra::DMatrix<f64>, name: &str, source: &str) -> Result<Dataset> {
    unfold_core::check_finite(&points, &format!("the data in {source}"))?;
    Ok(Dataset::from_points(name, points))
}

/// The bytes of a file, read in parallel pieces of at least [`READ_PIECE`] bytes: the copy
/// out of the page cache and the first touch of each page of the buffer are shared by the
/// cores rather than done by one, and the buffer is backed by huge pages
/// ([`unfold_linalg::simd::advise_huge_pages`]). A file that changes length meanwhile is
/// read again whole.
#[cfg(unix)]
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path)?;
    let len = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    if len < 2 * READ_PIECE || len == usize::MAX {
        return std::fs::read(path);
    }
    let mut bytes = vec![0u8; len];
    unfold_linalg::simd::advise_huge_pages(&mut bytes);
    let piece = len
        .div_ceil(rayon::current_num_threads().max(2))
        .max(READ_PIECE);
    let read = bytes
        .par_chunks_mut(piece)
        .enumerate()
        .try_for_each(|(k, chunk)| file.read_exact_at(chunk, (k * piece) as u64));
    if read.is_err() || file.metadata()?.len() != len as u64 {
        return std::fs::read(path);
    }
    Ok(bytes)
}

#[cfg(not(unix))]
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    std::fs::read(path)
}

/// Bytes below which a file is read in one piece.
const READ_PIECE: usize = 4 << 20;

/// [`read_points`] on the bytes of a file: `path` is the file's name (its extension is
/// checked against the content; it is not opened), `array` the `.npz` array asked for.
pub fn parse_points(
    raw: Vec<u8>,
    path: &Path,
    array: Option<&str>,
    opts: &CsvOptions,
) -> Result<Dataset> {
    let source = path.display().to_string();
    let has_ext = |p: &Path, e: &str| p.extension().is_some_and(|x| x.eq_ignore_ascii_case(e));
    let refuse = |message: String| Error::Parse {
        source_name: source.clone(),
        line: 1,
        message,
    };
    // `x.csv.gz` names the data set `x` and promises CSV inside.
    let inner = if has_ext(path, "gz") {
        Path::new(path.file_stem().unwrap_or_default())
    } else {
        path
    };
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        gunzip(&raw, &source)?
    } else if has_ext(path, "gz") {
        return Err(refuse(
            "not a gzip file: missing the 1f 8b magic bytes (rename it without .gz if it is not compressed)".into(),
        ));
    } else {
        raw
    };
    let name = inner
        .file_stem()
        .map_or_else(|| "data".to_string(), |s| s.to_string_lossy().into_owned());
    let promised = |ext: &str, what: &str| {
        if has_ext(inner, ext) {
            Err(refuse(format!(
                "not a readable .{ext} file: missing the {what} magic bytes"
            )))
        } else {
            Ok(())
        }
    };
    let points = if bytes.starts_with(npy::MAGIC) || bytes.starts_with(npz::MAGIC) {
        if opts.label_column.is_some() {
            return Err(Error::invalid(
                "label-column",
                "a NumPy array has no named columns; give labels in a CSV file",
            ));
        }
        if bytes.starts_with(npy::MAGIC) {
            if let Some(array) = array {
                return Err(Error::invalid(
                    "input",
                    format!("{source} is a .npy file with one array; drop the :{array} suffix"),
                ));
            }
            npy::parse_npy(&bytes, &source)?
        } else {
            npz::parse_npz(&bytes, &source, array)?
        }
    } else {
        promised("npy", "\\x93NUMPY")?;
        promised("npz", "zip (PK)")?;
        if let Some(array) = array {
            return Err(Error::invalid(
                "input",
                format!("{source} is not a .npz archive, so it has no array {array:?}"),
            ));
        }
        let mut data = csv::parse_csv_bytes(&bytes, &source, opts)?;
        data.name = name;
        return Ok(data);
    };
    array_points(points, &name, &source)
}

/// `file.npz:NAME` as the file and the array's name; a path that exists as given is never
/// split (file names may hold colons).
fn split_array_name(spec: &Path) -> (&Path, Option<&str>) {
    if spec.exists() {
        return (spec, None);
    }
    match spec.to_str().and_then(|s| s.rsplit_once(':')) {
        Some((file, array)) if !array.is_empty() && Path::new(file).is_file() => {
            (Path::new(file), Some(array))
        }
        _ => (spec, None),
    }
}

/// The decompressed bytes of a gzip file (all its members, as `gzip -d` reads them).
fn gunzip(raw: &[u8], source: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(raw)
        .read_to_end(&mut out)
        .map_err(|e| Error::Parse {
            source_name: source.to_string(),
            line: 1,
            message: format!("a corrupt or truncated gzip file ({e})"),
        })?;
    Ok(out)
}

/// The data sets `by_name` knows, for messages and `--help` texts.
pub const NAMES: [&str; 12] = [
    "swiss-roll",
    "s-curve",
    "helix",
    "twin-peaks",
    "circle",
    "two-moons",
    "s-shape",
    "blobs",
    "iris",
    "ushcn",
    "ushcn-400",
    "krumsiek11",
];

/// A synthetic (n points, noiseless except where the set is noisy by nature) or bundled
/// data set by name; `n` is ignored for bundled sets.
pub fn by_name(name: &str, n: usize, seed: u64) -> Result<Dataset> {
    use synthetic::*;
    match name {
        "swiss-roll" => swiss_roll(n, 0.0, seed),
        "s-curve" => s_curve(n, 0.0, seed),
        "helix" => helix(n, 0.0, seed),
        "twin-peaks" => twin_peaks(n, 0.0, seed),
        "circle" => noisy_circle(n, 0.1, seed),
        "two-moons" => two_moons(n, 0.05, seed),
        "s-shape" => noisy_s_shape(n, 0.1, seed),
        "blobs" => blobs(n.div_ceil(3), 3, 2, 1.0, seed),
        "iris" => Ok(bundled::iris()),
        "ushcn" => Ok(bundled::ushcn()),
        "ushcn-400" => Ok(bundled::ushcn_400(seed)),
        "krumsiek11" => Ok(bundled::krumsiek11()),
        other => Err(Error::invalid(
            "data set",
            format!("unknown name {other:?}; valid names: {}", NAMES.join(", ")),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name_knows_every_listed_name_and_lists_them_otherwise() {
        for name in NAMES {
            let d = by_name(name, 30, 4).unwrap();
            assert!(d.n() >= 30, "{name}");
        }
        assert_eq!(by_name("swiss-roll", 30, 4).unwrap().p(), 3);
        let e = by_name("swissroll", 30, 4).unwrap_err().to_string();
        assert!(e.contains("swissroll") && e.contains("ushcn-400"), "{e}");
    }
}

#[cfg(test)]
mod read_points_tests {
    use super::*;
    use nalgebra::DMatrix;

    /// The test's own directory (tests run in parallel); [`clean`] removes it.
    fn scratch_dir(test: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("unfold-read-points-{}-{test}", std::process::id()))
    }

    fn scratch(test: &str, name: &str) -> std::path::PathBuf {
        let dir = scratch_dir(test);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn clean(test: &str) {
        std::fs::remove_dir_all(scratch_dir(test)).unwrap();
    }

    /// A version 1.0 `.npy` file with this header text and payload.
    fn npy_bytes(header: &str, payload: &[u8]) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16 + 1).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn npy_and_csv_are_told_apart_by_content() {
        let m = DMatrix::from_row_slice(3, 2, &[1.0, 2.5, -3.0, 4.0, 0.125, 6.0]);
        let npy = scratch("npy_and_csv", "a.npy");
        write_npy(&npy, &m).unwrap();
        let opts = CsvOptions::default();
        assert_eq!(read_points(&npy, &opts).unwrap().points, m);
        // The content decides, not the name.
        let renamed = scratch("npy_and_csv", "a.dat");
        std::fs::copy(&npy, &renamed).unwrap();
        assert_eq!(read_points(&renamed, &opts).unwrap().points, m);
        let csv = scratch("npy_and_csv", "a.csv");
        std::fs::write(&csv, "x,y\n1,2.5\n-3,4\n0.125,6\n").unwrap();
        assert_eq!(read_points(&csv, &opts).unwrap().points, m);
        clean("npy_and_csv");
    }

    #[test]
    fn bad_npy_files_are_refused_with_the_reason() {
        let opts = CsvOptions::default();
        let m = DMatrix::from_row_slice(2, 2, &[1.0, f64::NAN, 3.0, 4.0]);
        let nan = scratch("bad_npy", "nan.npy");
        write_npy(&nan, &m).unwrap();
        assert!(read_points(&nan, &opts)
            .unwrap_err()
            .to_string()
            .contains("NaN"));
        let good = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]);
        let path = scratch("bad_npy", "t.npy");
        write_npy(&path, &good).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let truncated = scratch("bad_npy", "truncated.npy");
        std::fs::write(&truncated, &bytes[..bytes.len() - 5]).unwrap();
        let err = read_points(&truncated, &opts).unwrap_err().to_string();
        assert!(err.contains("data bytes"), "{err}");
        // A header claiming 10^12 x 10^12 values is refused before any allocation.
        let huge = scratch("bad_npy", "huge.npy");
        let claim =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }";
        std::fs::write(&huge, npy_bytes(claim, &bytes[bytes.len() - 32..])).unwrap();
        let err = read_points(&huge, &opts).unwrap_err().to_string();
        assert!(err.contains("data bytes"), "{err}");
        let f16 = scratch("bad_npy", "f16.npy");
        let half = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }";
        std::fs::write(&f16, npy_bytes(half, &bytes[bytes.len() - 8..])).unwrap();
        let err = read_points(&f16, &opts).unwrap_err().to_string();
        assert!(err.contains("dtype"), "{err}");
        let fake = scratch("bad_npy", "fake.npy");
        std::fs::write(&fake, "1,2\n3,4\n").unwrap();
        assert!(read_points(&fake, &opts)
            .unwrap_err()
            .to_string()
            .contains("magic"));
        let labelled = CsvOptions {
            label_column: Some("y".into()),
        };
        assert!(read_points(&path, &labelled).is_err());
        clean("bad_npy");
    }
}

#[cfg(test)]
mod compressed_input_tests {
    use super::*;
    use nalgebra::DMatrix;
    use std::io::Write;

    /// The test's own directory (tests run in parallel); [`clean`] removes it.
    fn scratch_dir(test: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("unfold-compressed-{}-{test}", std::process::id()))
    }

    fn scratch(test: &str, name: &str) -> std::path::PathBuf {
        let dir = scratch_dir(test);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn clean(test: &str) {
        std::fs::remove_dir_all(scratch_dir(test)).unwrap();
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_csv_npy_and_npz_arrays_by_name() {
        let opts = CsvOptions::default();
        let m = DMatrix::from_row_slice(3, 2, &[1.0, 2.5, -3.0, 4.0, 0.125, 6.0]);
        let csv = scratch("gzip", "cells.csv.gz");
        std::fs::write(&csv, gzip(b"x,y\n1,2.5\n-3,4\n0.125,6\n")).unwrap();
        let d = read_points(&csv, &opts).unwrap();
        assert_eq!((d.points.clone(), d.name.as_str()), (m.clone(), "cells"));
        let npy = scratch("gzip", "a.npy.gz");
        std::fs::write(&npy, gzip(&npy::npy_bytes(&m))).unwrap();
        assert_eq!(read_points(&npy, &opts).unwrap().points, m);
        let other = DMatrix::from_element(2, 2, 7.0);
        let members = [
            ("X.npy", npz::tests::npy(&m)),
            ("obs.npy", npz::tests::npy(&other)),
        ];
        let npz = scratch("gzip", "a.npz");
        std::fs::write(&npz, npz::tests::archive(&members, true, true)).unwrap();
        let named = |suffix: &str| std::path::PathBuf::from(format!("{}{suffix}", npz.display()));
        assert_eq!(read_points(&named(":X"), &opts).unwrap().points, m);
        assert_eq!(read_points(&named(":obs"), &opts).unwrap().points, other);
        let e = read_points(&npz, &opts).unwrap_err().to_string();
        assert!(e.contains("2 arrays (X, obs)"), "{e}");
        let e = read_points(&named(":Z"), &opts).unwrap_err().to_string();
        assert!(e.contains("no array \"Z\""), "{e}");
        let gz = scratch("gzip", "b.npz.gz");
        std::fs::write(&gz, gzip(&npz::tests::archive(&members, false, false))).unwrap();
        let gz_named = std::path::PathBuf::from(format!("{}:obs", gz.display()));
        assert_eq!(read_points(&gz_named, &opts).unwrap().points, other);
        clean("gzip");
    }

    #[test]
    fn wrong_or_broken_containers_are_named() {
        let opts = CsvOptions::default();
        let fake = scratch("broken", "fake.csv.gz");
        std::fs::write(&fake, "1,2\n3,4\n").unwrap();
        let e = read_points(&fake, &opts).unwrap_err().to_string();
        assert!(e.contains("not a gzip file"), "{e}");
        let truncated = scratch("broken", "t.csv.gz");
        let full = gzip(b"1,2\n3,4\n5,6\n");
        std::fs::write(&truncated, &full[..full.len() - 6]).unwrap();
        let e = read_points(&truncated, &opts).unwrap_err().to_string();
        assert!(e.contains("corrupt or truncated gzip"), "{e}");
        let fake_npz = scratch("broken", "fake.npz");
        std::fs::write(&fake_npz, "1,2\n3,4\n").unwrap();
        let e = read_points(&fake_npz, &opts).unwrap_err().to_string();
        assert!(e.contains(".npz") && e.contains("magic"), "{e}");
        let npy = scratch("broken", "one.npy");
        write_npy(&npy, &DMatrix::from_element(2, 2, 1.0)).unwrap();
        let e = read_points(
            &std::path::PathBuf::from(format!("{}:X", npy.display())),
            &opts,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("drop the :X suffix"), "{e}");
        let binary = scratch("broken", "binary.dat");
        std::fs::write(&binary, [0xffu8, 0xfe, 0x00, 0x41]).unwrap();
        let e = read_points(&binary, &opts).unwrap_err().to_string();
        assert!(e.contains("invalid UTF-8 at byte 0"), "{e}");
        clean("broken");
    }
}
