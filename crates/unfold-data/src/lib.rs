//! Data sets for unfold: the [`Dataset`] type, CSV and `.npy` input/output, standardisation,
//! seeded synthetic manifolds ([`synthetic`]) and small bundled real data sets
//! ([`bundled`]). Points are the ROWS of an n x p matrix.

pub mod bundled;
mod csv;
mod dataset;
mod npy;
mod scale;
mod split;
pub mod synthetic;

pub use csv::{parse_csv, read_csv, to_csv_string, write_csv, CsvOptions};
pub use dataset::Dataset;
pub use npy::{read_npy, write_npy};
pub use scale::{centre, standardise, Standardised};
pub use split::holdout_split;

use std::path::Path;
use unfold_core::{Error, Result};

/// The points of a data file, by its content: a NumPy `.npy` array (its magic bytes; 1-D
/// or 2-D, float64/float32/int64/int32, C or Fortran order) or CSV with the checks of
/// [`read_csv`]. `.npy` values are checked finite, as CSV cells are; `opts.label_column`
/// applies to CSV only.
pub fn read_points(path: &Path, opts: &CsvOptions) -> Result<Dataset> {
    let mut head = [0u8; 6];
    let is_npy = {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let got = file.read(&mut head).map_err(|e| Error::io(path, e))?;
        got == 6 && &head == b"\x93NUMPY"
    };
    if !is_npy {
        if path.extension().is_some_and(|e| e == "npy") {
            return Err(Error::Parse {
                source_name: path.display().to_string(),
                line: 1,
                message: "not a readable .npy file: missing the \\x93NUMPY magic bytes".into(),
            });
        }
        return read_csv(path, opts);
    }
    if opts.label_column.is_some() {
        return Err(Error::invalid(
            "label-column",
            "a .npy array has no named columns; give labels in a CSV file",
        ));
    }
    let points = read_npy(path)?;
    unfold_core::check_finite(&points, &format!("the data in {}", path.display()))?;
    let name = path
        .file_stem()
        .map_or_else(|| "data".to_string(), |s| s.to_string_lossy().into_owned());
    Ok(Dataset::from_points(&name, points))
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

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("unfold-read-points-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
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
        let npy = scratch("a.npy");
        write_npy(&npy, &m).unwrap();
        let opts = CsvOptions::default();
        assert_eq!(read_points(&npy, &opts).unwrap().points, m);
        // The content decides, not the name.
        let renamed = scratch("a.dat");
        std::fs::copy(&npy, &renamed).unwrap();
        assert_eq!(read_points(&renamed, &opts).unwrap().points, m);
        let csv = scratch("a.csv");
        std::fs::write(&csv, "x,y\n1,2.5\n-3,4\n0.125,6\n").unwrap();
        assert_eq!(read_points(&csv, &opts).unwrap().points, m);
    }

    #[test]
    fn bad_npy_files_are_refused_with_the_reason() {
        let opts = CsvOptions::default();
        let m = DMatrix::from_row_slice(2, 2, &[1.0, f64::NAN, 3.0, 4.0]);
        let nan = scratch("nan.npy");
        write_npy(&nan, &m).unwrap();
        assert!(read_points(&nan, &opts)
            .unwrap_err()
            .to_string()
            .contains("NaN"));
        let good = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 3.0, 4.0]);
        let path = scratch("t.npy");
        write_npy(&path, &good).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let truncated = scratch("truncated.npy");
        std::fs::write(&truncated, &bytes[..bytes.len() - 5]).unwrap();
        let err = read_points(&truncated, &opts).unwrap_err().to_string();
        assert!(err.contains("data bytes"), "{err}");
        // A header claiming 10^12 x 10^12 values is refused before any allocation.
        let huge = scratch("huge.npy");
        let claim =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }";
        std::fs::write(&huge, npy_bytes(claim, &bytes[bytes.len() - 32..])).unwrap();
        let err = read_points(&huge, &opts).unwrap_err().to_string();
        assert!(err.contains("data bytes"), "{err}");
        let f16 = scratch("f16.npy");
        let half = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }";
        std::fs::write(&f16, npy_bytes(half, &bytes[bytes.len() - 8..])).unwrap();
        let err = read_points(&f16, &opts).unwrap_err().to_string();
        assert!(err.contains("dtype"), "{err}");
        let fake = scratch("fake.npy");
        std::fs::write(&fake, "1,2\n3,4\n").unwrap();
        assert!(read_points(&fake, &opts)
            .unwrap_err()
            .to_string()
            .contains("magic"));
        let labelled = CsvOptions {
            label_column: Some("y".into()),
        };
        assert!(read_points(&path, &labelled).is_err());
    }
}
