//! The data readers (`unfold fit --input`: CSV, `.npy`, `.npz`, each optionally gzip) on
//! random bytes and on valid files with random mutations: every input gives points (finite,
//! of the shape the data set says) or a typed error, never a panic. The normal tests run a
//! few thousand cases; `cargo test --release -- --ignored fuzz` runs many more
//! (`UNFOLD_FUZZ_CASES`, `UNFOLD_FUZZ_SEED`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use unfold_core::fuzz::{long_run_seeds, run_cases};
use unfold_data::{parse_points, CsvOptions};

const NPZ: &[u8] = include_bytes!("npz/savez.npz");
const NPZ_DEFLATED: &[u8] = include_bytes!("npz/savez_compressed.npz");

/// Pieces that have broken number and header parsers.
const TOKENS: &[&[u8]] = &[
    b"-1",
    b"0",
    b"1e400",
    b"NaN",
    b"inf",
    b"\"",
    b",",
    b",,",
    b"\n",
    b"\r\n",
    b" ",
    b"a,b",
    b"\xef\xbb\xbf",
    b"\0",
    b"'shape': (",
    b"1000000000000, ",
    b"<f8",
    b"|b1",
    b"True",
    b"\x93NUMPY",
    b"PK\x03\x04",
    b"PK\x05\x06",
    b"\x1f\x8b",
    b"\xff\xff\xff\xff",
];

fn csv(rng: &mut StdRng) -> Vec<u8> {
    let (n, p) = (rng.random_range(1..12), rng.random_range(1..5));
    let mut text = String::new();
    if rng.random_bool(0.5) {
        let names: Vec<String> = (0..p).map(|j| format!("c{j}")).collect();
        text.push_str(&names.join(","));
        text.push('\n');
    }
    for _ in 0..n {
        let row: Vec<String> = (0..p)
            .map(|_| format!("{}", rng.random::<f64>() * 10.0 - 5.0))
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    text.into_bytes()
}

fn npy(rng: &mut StdRng) -> Vec<u8> {
    let (n, p) = (rng.random_range(1..6), rng.random_range(1..4));
    let header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n}, {p}), }}\n");
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for _ in 0..n * p {
        out.extend_from_slice(&rng.random::<f64>().to_le_bytes());
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `bytes` with one to six random changes: a byte replaced, a token inserted, a range
/// deleted, the end cut off.
fn mutate(rng: &mut StdRng, mut bytes: Vec<u8>) -> Vec<u8> {
    for _ in 0..rng.random_range(1..7) {
        let at = rng.random_range(0..=bytes.len());
        match rng.random_range(0..4) {
            0 if at < bytes.len() => bytes[at] = rng.random(),
            1 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                bytes.splice(at..at, t.iter().copied());
            }
            2 => {
                let end = (at + rng.random_range(0..16)).min(bytes.len());
                bytes.drain(at..end);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// One case: a file's bytes and the name it is read under.
fn case(rng: &mut StdRng) -> (Vec<u8>, &'static str, Option<&'static str>) {
    let (bytes, name, array) = match rng.random_range(0..7) {
        0 => (csv(rng), "x.csv", None),
        1 => (npy(rng), "x.npy", None),
        2 => (NPZ.to_vec(), "x.npz", Some("X")),
        3 => (NPZ_DEFLATED.to_vec(), "x.npz", Some("obs")),
        4 => (gzip(&csv(rng)), "x.csv.gz", None),
        5 => (gzip(&npy(rng)), "x.npy.gz", None),
        _ => {
            let len = rng.random_range(0..300);
            ((0..len).map(|_| rng.random()).collect(), "x.dat", None)
        }
    };
    let bytes = if rng.random_bool(0.9) {
        mutate(rng, bytes)
    } else {
        bytes
    };
    (bytes, name, array)
}

/// Reads the inputs of `seeds`; panics (naming the seed) if a reader panicked or returned
/// points that are not finite or not of the data set's shape. Returns the counts of inputs
/// read and refused.
fn run(seeds: Range<u64>) -> (u64, u64) {
    let (mut read, mut refused) = (0, 0);
    run_cases(
        "a data reader",
        seeds,
        |seed| case(&mut StdRng::seed_from_u64(seed)),
        |(_, name, _)| format!("read as {name}"),
        |(bytes, name, array)| {
            let valid = parse_points(
                bytes.clone(),
                Path::new(name),
                *array,
                &CsvOptions::default(),
            )
            .map(|d| {
                d.points.iter().all(|v| v.is_finite())
                    && d.feature_names.len() == d.points.ncols()
                    && d.points.nrows() > 0
            });
            match valid {
                Ok(true) => read += 1,
                Ok(false) => return Err("its points are not valid".to_string()),
                Err(_) => refused += 1,
            }
            Ok(())
        },
    );
    (read, refused)
}

#[test]
fn random_and_mutated_data_files_give_points_or_an_error() {
    let cases = 20000;
    let (read, refused) = run(0..cases);
    eprintln!("fuzz data readers: {cases} cases ({read} read, {refused} refused)");
    assert!(read > 0 && refused > 0);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -- --ignored fuzz"]
fn fuzz_data_readers_long() {
    let seeds = long_run_seeds(500_000);
    let (read, refused) = run(seeds.clone());
    eprintln!("fuzz data readers: seeds {seeds:?} ({read} read, {refused} refused)");
}
