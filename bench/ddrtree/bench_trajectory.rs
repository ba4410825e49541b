//! DDRTree and the ordering on its tree, for the data-set matrix of
//! `bench/ddrtree/matrix.sh`: one `.npy` data set per run, the R package's conventions
//! and defaults (`Compat::R`, lambda = 5 N, sigma = 1e-3, gamma = 10, 20 iterations,
//! tol 1e-3) with K centres, as `ddrtree-python` is run on the same file.
//!
//! `cargo run --release --example bench_trajectory -- DATA.npy K EDGES_OUT.csv [r|paper]`
//! prints one JSON line: the fit's seconds (the fit only, as the peer is timed), the
//! ordering's seconds, the iterations, the states and branch points of the ordering and
//! the process's peak resident memory (MiB; data included); writes the tree's edges. The
//! optional last argument picks the conventions: `r` (the default, as the peer runs) or
//! `paper` (unfold's default, `Compat::Paper`), for `bench/ddrtree/scale.sh`.

use std::time::Instant;
use unfold::graph::trajectory::Root;
use unfold::models::regularised::ddrtree::{Compat, DdrTreeParams};

#[path = "../peak_memory.rs"]
mod peak_memory;
use peak_memory::peak_mib;

fn main() -> unfold::core::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let (data, k, edges_out, compat) = match &a[..] {
        [data, k, edges_out] => (data, k, edges_out, Compat::R),
        [data, k, edges_out, c] if c == "r" || c == "paper" => {
            let compat = if c == "r" { Compat::R } else { Compat::Paper };
            (data, k, edges_out, compat)
        }
        _ => {
            eprintln!("usage: bench_trajectory DATA.npy K EDGES_OUT.csv [r|paper]");
            std::process::exit(2);
        }
    };
    let y = unfold::data::read_npy(std::path::Path::new(data))?;
    let k: usize = k.parse().expect("K is a whole number");
    let params = DdrTreeParams {
        ncenters: Some(k),
        compat,
        ..DdrTreeParams::new(2)
    };
    let start = Instant::now();
    let fit = params.fit(&y)?;
    let fit_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let order = fit.order(Root::Auto)?;
    let order_s = start.elapsed().as_secs_f64();
    let edges: String = fit
        .edges
        .iter()
        .map(|&(i, j, _)| format!("{},{}\n", i.min(j), i.max(j)))
        .collect();
    std::fs::write(edges_out, edges).expect("a writable edge file");
    println!(
        "{{\"fit_s\": {fit_s}, \"order_s\": {order_s}, \"iterations\": {}, \"states\": {}, \"branch_points\": {}, \"peak_mib\": {:.0}}}",
        fit.convergence.iterations,
        order.states,
        order.branch_points.len(),
        peak_mib()
    );
    Ok(())
}
