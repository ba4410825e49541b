//! Timing of the dense inverse from a Cholesky factor above the order from which it runs by
//! blocks (4096), checking the interruption flag between them: [`Cholesky::inverse`]
//! against faer's one-call `llt::inverse` on the same factor, best of three, with the
//! largest entry of their difference.
//!
//! `cargo run --release -p unfold-linalg --example inverse_timing -- [n ...]` (default
//! 5000 8000 12000).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use nalgebra::DMatrix;
use std::time::Instant;
use unfold_linalg::Cholesky;

fn best_of_three(mut f: impl FnMut() -> DMatrix<f64>) -> (f64, DMatrix<f64>) {
    let mut best = f64::INFINITY;
    let mut out = DMatrix::zeros(0, 0);
    for _ in 0..3 {
        let start = Instant::now();
        out = f();
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, out)
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("n"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![5000, 8000, 12000]
    } else {
        sizes
    };
    println!("| n | blocked s | faer one call s | blocked / faer | max abs difference |");
    println!("|---|---|---|---|---|");
    for n in sizes {
        // A well-conditioned SPD matrix: a scaled identity plus a smooth kernel.
        let a = DMatrix::from_fn(n, n, |i, j| {
            let d = (i as f64 - j as f64) / 50.0;
            (-d * d).exp() + if i == j { 1.0 } else { 0.0 }
        });
        let c = Cholesky::new(&a, "A").expect("SPD");
        let l = c.l();
        let (blocked_s, blocked) = best_of_three(|| c.inverse().expect("not interrupted"));
        let (faer_s, faer) = best_of_three(|| {
            let par = faer::Par::rayon(0);
            let mut inv = DMatrix::<f64>::zeros(n, n);
            let mut mem = MemBuffer::new(llt::inverse::inverse_scratch::<f64>(n, par));
            let l = faer::MatRef::from_column_major_slice(l.as_slice(), n, n);
            let out = faer::MatMut::from_column_major_slice_mut(inv.as_mut_slice(), n, n);
            llt::inverse::inverse(out, l, par, MemStack::new(&mut mem));
            inv
        });
        let diff = (0..n)
            .flat_map(|j| (j..n).map(move |i| (i, j)))
            .map(|(i, j)| (blocked[(i, j)] - faer[(i, j)]).abs())
            .fold(0.0, f64::max);
        println!(
            "| {n} | {blocked_s:.2} | {faer_s:.2} | {:.2} | {diff:.1e} |",
            blocked_s / faer_s
        );
    }
}
