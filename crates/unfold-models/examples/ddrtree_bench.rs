//! Runs DDRTree on a headerless numeric CSV for `bench/ddrtree/run.sh`.
//!
//! `cargo run --release -p unfold-models --example ddrtree_bench -- DATA.csv OUT_PREFIX
//! DIM NCENTERS LAMBDA SIGMA GAMMA MAX_ITER TOL COMPAT(paper|r)` writes `OUT_PREFIX_{Z,W,C,
//! edges,objective}.csv` and prints the fit time in seconds.

use nalgebra::DMatrix;
use std::fmt::Write as _;
use std::time::Instant;
use unfold_models::regularised::ddrtree::{Compat, DdrTreeParams};
use unfold_models::traits::Embedding;

fn read_csv(path: &str) -> DMatrix<f64> {
    let text = std::fs::read_to_string(path).expect("readable CSV");
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split(',')
                .map(|v| v.trim().parse().expect("a number"))
                .collect()
        })
        .collect();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

fn write_csv(path: &str, m: &DMatrix<f64>) {
    let mut out = String::new();
    for row in m.row_iter() {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.17e}")).collect();
        writeln!(out, "{}", cells.join(",")).unwrap();
    }
    std::fs::write(path, out).expect("writable output");
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    assert_eq!(
        a.len(),
        11,
        "usage: DATA OUT DIM NCENTERS LAMBDA SIGMA GAMMA MAX_ITER TOL COMPAT"
    );
    let y = read_csv(&a[1]);
    let ncenters: usize = a[4].parse().unwrap();
    let params = DdrTreeParams {
        lambda: Some(a[5].parse().unwrap()),
        sigma: Some(a[6].parse().unwrap()),
        gamma: a[7].parse().unwrap(),
        ncenters: (ncenters < y.nrows()).then_some(ncenters),
        max_iter: a[8].parse().unwrap(),
        tol: a[9].parse().unwrap(),
        compat: if a[10] == "r" {
            Compat::R
        } else {
            Compat::Paper
        },
        ..DdrTreeParams::new(a[3].parse().unwrap())
    };
    let start = Instant::now();
    let fit = params
        .fit(&y)
        .unwrap_or_else(|e| panic!("DDRTree failed: {e}"));
    let secs = start.elapsed().as_secs_f64();
    let out = &a[2];
    write_csv(&format!("{out}_Z.csv"), fit.coords());
    write_csv(&format!("{out}_W.csv"), &fit.w);
    write_csv(&format!("{out}_C.csv"), &fit.centres);
    let edges = DMatrix::from_fn(fit.edges.len(), 2, |i, j| {
        let (a, b, _) = fit.edges[i];
        [a, b][j] as f64
    });
    write_csv(&format!("{out}_edges.csv"), &edges);
    let h = &fit.convergence.trace;
    write_csv(
        &format!("{out}_objective.csv"),
        &DMatrix::from_column_slice(h.len(), 1, h),
    );
    println!("{secs}");
}
