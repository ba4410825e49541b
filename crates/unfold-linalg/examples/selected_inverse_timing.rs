//! Seconds for the sparse analysis, the numeric factorisation and the selected inversion of
//! a shifted Laplacian of an 8-neighbour grid (a 2-D sheet's graph), and the factor's size.
//!
//! `cargo run --release -p unfold-linalg --example selected_inverse_timing -- [side ...]`

use std::time::Instant;
use unfold_linalg::{CsrMatrix, SparseSymbolic};

fn sheet(side: usize, shift: f64) -> CsrMatrix {
    let n = side * side;
    let mut t = Vec::with_capacity(9 * n);
    let mut add = |a: usize, b: usize, w: f64| {
        t.extend([(a, a, w), (b, b, w), (a, b, -w), (b, a, -w)]);
    };
    for r in 0..side {
        for c in 0..side {
            let i = r * side + c;
            if c + 1 < side {
                add(i, i + 1, 1.0);
            }
            if r + 1 < side {
                add(i, i + side, 1.0);
                if c + 1 < side {
                    add(i, i + side + 1, 0.5);
                }
                if c > 0 {
                    add(i, i + side - 1, 0.5);
                }
            }
        }
    }
    t.extend((0..n).map(|i| (i, i, shift)));
    CsrMatrix::from_triplets(n, n, &t)
}

fn main() -> unfold_core::Result<()> {
    let sides: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("a grid side"))
        .collect();
    let sides = if sides.is_empty() {
        vec![100, 316]
    } else {
        sides
    };
    println!("| n | factor values | analyse s | factorise s | selected inverse s |");
    println!("|---|---|---|---|---|");
    for side in sides {
        let a = sheet(side, 1e-4);
        let t = Instant::now();
        let symbolic = SparseSymbolic::analyse(&a, "sheet")?;
        let analyse = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let factor = symbolic.factorise(&a, "sheet")?;
        let factorise = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let z = factor.selected_inverse().unwrap();
        let inverse = t.elapsed().as_secs_f64();
        assert!(z.get(0, 0).is_some_and(|v| v > 0.0));
        println!(
            "| {} | {} | {analyse:.3} | {factorise:.3} | {inverse:.3} |",
            a.nrows(),
            symbolic.factor_len()
        );
    }
    Ok(())
}
