//! The edge-list reader (`unfold select --graphs`) on random bytes and on valid edge lists
//! with random mutations: every input gives a graph on the data's points or a typed error,
//! never a panic. The normal tests run a few thousand cases; `cargo test --release --
//! --ignored fuzz` runs many more (`UNFOLD_FUZZ_CASES`, `UNFOLD_FUZZ_SEED`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::ops::Range;
use unfold_core::fuzz::{long_run_seeds, run_cases};
use unfold_select::parse_edge_list;

/// Pieces that have broken number and CSV parsers.
const TOKENS: &[&str] = &[
    "-1",
    "0",
    "1",
    "2.5",
    "1e400",
    "-0",
    "NaN",
    "inf",
    "-inf",
    "18446744073709551616",
    "99999999999999999999999",
    "1e-320",
    "\"",
    "\"\"",
    ",",
    ",,",
    "\n",
    "\r\n",
    "\r",
    " ",
    "i,j",
    "weight",
    "\u{feff}",
    "é",
    "\0",
    "0x10",
    "+3",
    "3.",
    ".5",
];

/// A valid edge list on `n` points: a path, some chords, an optional header and weights.
fn valid(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let weights = rng.random_bool(0.5);
    let mut text = String::new();
    if rng.random_bool(0.5) {
        text.push_str(if weights { "i,j,weight\n" } else { "i,j\n" });
    }
    let mut edges: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
    for _ in 0..rng.random_range(0..n.max(1)) {
        let (i, j) = (rng.random_range(0..n), rng.random_range(0..n));
        if i + 1 < j {
            edges.push((i, j));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for (i, j) in edges {
        if weights {
            text.push_str(&format!("{i},{j},{}\n", rng.random::<f64>()));
        } else {
            text.push_str(&format!("{i},{j}\n"));
        }
    }
    text.into_bytes()
}

/// `bytes` with one to six random changes: a byte replaced, a token inserted, a range
/// deleted, a line repeated, the end cut off.
fn mutate(rng: &mut StdRng, mut bytes: Vec<u8>) -> Vec<u8> {
    for _ in 0..rng.random_range(1..7) {
        let at = rng.random_range(0..=bytes.len());
        match rng.random_range(0..5) {
            0 if at < bytes.len() => bytes[at] = rng.random(),
            1 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                bytes.splice(at..at, t.bytes());
            }
            2 => {
                let end = (at + rng.random_range(0..8)).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                let line: Vec<u8> = bytes[at..]
                    .split(|&b| b == b'\n')
                    .next()
                    .unwrap_or_default()
                    .to_vec();
                bytes.extend_from_slice(b"\n");
                bytes.extend_from_slice(&line);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// Random bytes, mostly the characters of CSV numbers.
fn random_bytes(rng: &mut StdRng) -> Vec<u8> {
    const CSV: &[u8] = b"0123456789,,,\n\n-.eE\" \r";
    (0..rng.random_range(0..200))
        .map(|_| {
            if rng.random_bool(0.8) {
                CSV[rng.random_range(0..CSV.len())]
            } else {
                rng.random()
            }
        })
        .collect()
}

/// Reads the inputs of `seeds`; panics (naming the seed and the input) if the reader
/// panicked or returned a graph that does not fit the points. Returns the counts of inputs
/// read and refused.
fn run(seeds: Range<u64>) -> (u64, u64) {
    let (mut read, mut refused) = (0, 0);
    run_cases(
        "the edge-list reader",
        seeds,
        |seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            let n = rng.random_range(0..40);
            let bytes = if rng.random_bool(0.3) {
                random_bytes(&mut rng)
            } else {
                let v = valid(&mut rng, n.max(2));
                mutate(&mut rng, v)
            };
            (n, bytes)
        },
        |(n, bytes)| format!("n = {n}\n{:?}", String::from_utf8_lossy(bytes)),
        |&(n, ref bytes)| {
            match parse_edge_list(bytes, "fuzz.csv", n) {
                Ok(g) => {
                    let fits = g.n() == n
                        && g.edges()
                            .iter()
                            .all(|&(i, j, w)| i < j && j < n && w == 1.0);
                    if !fits {
                        return Err("its graph does not fit the points".to_string());
                    }
                    read += 1;
                }
                Err(_) => refused += 1,
            }
            Ok(())
        },
    );
    (read, refused)
}

#[test]
fn random_and_mutated_edge_lists_give_a_graph_or_an_error() {
    let cases = 20000;
    let (read, refused) = run(0..cases);
    eprintln!("fuzz edge lists: {cases} cases ({read} read, {refused} refused)");
    assert!(read > 0 && refused > 0);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -- --ignored fuzz"]
fn fuzz_edge_list_long() {
    let seeds = long_run_seeds(1_000_000);
    let (read, refused) = run(seeds.clone());
    eprintln!("fuzz edge lists: seeds {seeds:?} ({read} read, {refused} refused)");
}

/// Inputs that must be refused, each with what the error says.
#[test]
fn bad_edge_lists_are_refused_with_the_row() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"i,j\n0,1\n1,5\n",
            "edge 2: (1, 5) is not a pair of distinct point indices 0..5",
        ),
        (b"0,1\n2,2\n", "(2, 2) is not a pair"),
        (b"0,1\n-1,2\n", "(-1, 2)"),
        (b"0,1.5\n", "(0, 1.5)"),
        (b"0,1\n1,0\n", "listed more than once"),
        (b"0\n1\n", "needs two columns"),
        (b"", "no rows"),
        (b"0,1\n\xff,2\n", "line 2: not UTF-8"),
        (b"0,1\n1,NaN\n", "fuzz.csv"),
        (b"0,1\n1,1e400\n", "fuzz.csv"),
    ];
    for (bytes, says) in cases {
        let e = parse_edge_list(bytes, "fuzz.csv", 5)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(says),
            "{:?}: {e}",
            String::from_utf8_lossy(bytes)
        );
    }
    let g = parse_edge_list(b"i,j,weight\n0,1,0.25\n3,1,7\n", "g.csv", 5).unwrap();
    assert_eq!(g.edges(), vec![(0, 1, 1.0), (1, 3, 1.0)]);
}
