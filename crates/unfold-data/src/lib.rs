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

use unfold_core::{Error, Result};

/// The data sets `by_name` knows, for messages and `--help` texts.
pub const NAMES: [&str; 11] = [
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
