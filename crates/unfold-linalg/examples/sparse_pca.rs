//! Times the sparse PCA on a seeded random CSR matrix and reports the peak resident
//! memory against the matrix's own bytes.
//!
//! `cargo run --release -p unfold-linalg --example sparse_pca -- N P DENSITY Q`
//! (default 100000 20000 0.05 50).

use rand::Rng;
use std::time::Instant;
use unfold_linalg::{principal_components_sparse, SparseRows};

/// The peak resident memory of this process (VmHWM), in bytes.
fn peak_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or(default.to_string());
    let n: usize = arg(0, "100000").parse().expect("N");
    let p: usize = arg(1, "20000").parse().expect("P");
    let density: f64 = arg(2, "0.05").parse().expect("DENSITY");
    let q: usize = arg(3, "50").parse().expect("Q");
    // Counts-like data: a few programmes of genes switched on in groups of cells, and
    // sparse noise; each row has about density * p entries.
    let mut rng = unfold_core::seeded_rng(1);
    let per_row = (density * p as f64).round() as usize;
    let (mut indptr, mut indices, mut data) = (
        Vec::with_capacity(n + 1),
        Vec::with_capacity(n * per_row),
        Vec::with_capacity(n * per_row),
    );
    indptr.push(0i32);
    for i in 0..n {
        let programme = i % 20;
        let mut row: Vec<i32> = (0..per_row)
            .map(|r| {
                if r % 3 == 0 {
                    ((programme * 500 + rng.random_range(0..500)) % p) as i32
                } else {
                    rng.random_range(0..p) as i32
                }
            })
            .collect();
        row.sort_unstable();
        row.dedup();
        for j in row {
            indices.push(j);
            data.push(1.0 + rng.random_range(0.0f64..4.0).floor());
        }
        indptr.push(indices.len() as i32);
    }
    let matrix_bytes = (indptr.len() * 4 + indices.len() * 4 + data.len() * 8) as u64;
    let before = peak_bytes();
    let y = SparseRows::new(n, p, &indptr, &indices, &data).expect("a valid matrix");
    let start = Instant::now();
    let pcs = principal_components_sparse(&y, q, 0).expect("the PCA");
    let seconds = start.elapsed().as_secs_f64();
    let output_bytes = ((n + p) * q * 8) as u64;
    println!(
        "n {n} p {p} nnz {} q {q}: {seconds:.2} s; matrix {:.2} GB, output {:.3} GB, \
         peak resident {:.2} GB (before the PCA {:.2} GB); first variances {:.4} {:.4}",
        y.nnz(),
        matrix_bytes as f64 / 1e9,
        output_bytes as f64 / 1e9,
        peak_bytes() as f64 / 1e9,
        before as f64 / 1e9,
        pcs.variances[0],
        pcs.variances[1]
    );
}
