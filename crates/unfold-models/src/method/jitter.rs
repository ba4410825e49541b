//! `duplicates = jitter`: the copies of a repeated row are moved apart instead of merged.
//!
//! Copy `i` of the distinct point `c` becomes `y_c + e_i`, `e_i ~ N(0, (s d_c)^2 / p I_p)`
//! with `s = JITTER_SCALE` and `d_c` the distance from `c` to its nearest other distinct
//! point: a copy lands about `s d_c` from its point (the root mean square of `||e_i||`),
//! much nearer than any other neighbour, so the neighbourhoods of the data are kept and
//! only the copies become each other's nearest neighbours. The offsets are drawn from the
//! fit's seed, so a jittered fit is reproducible.

use nalgebra::DMatrix;
use rand_distr::{Distribution, StandardNormal};
use unfold_core::Result;

/// The offset of a copy relative to its point's nearest-neighbour distance.
pub(crate) const JITTER_SCALE: f64 = 0.01;

/// The refusal of `duplicates = jitter` for sparse points: an offset in every coordinate
/// would make them dense.
pub(crate) fn sparse_refusal(method: &str) -> unfold_core::Error {
    unfold_core::Error::invalid(
        "duplicates",
        format!(
            "jitter moves every copy in all coordinates, which would make the sparse points \
             dense; {method} takes sparse points with duplicates = merge (the default)"
        ),
    )
}

/// The rows of `y` with every copy (rows `i` with `first[copy_of[i]] != i`, as
/// [`unfold_graph::distinct_rows`] numbers them) moved by its seeded offset.
pub(crate) fn jittered(
    y: &DMatrix<f64>,
    first: &[usize],
    copy_of: &[usize],
    seed: u64,
) -> Result<DMatrix<f64>> {
    let distinct = y.select_rows(first.iter());
    let p = y.ncols();
    // A single distinct point has no neighbour: its copies move by the data's own scale
    // (there is none, all rows being equal), so by 1 in units of the coordinates.
    let nearest: Vec<f64> = if first.len() > 1 {
        unfold_graph::knn(&distinct, 1)?
            .distances
            .iter()
            .map(|d| d[0])
            .collect()
    } else {
        vec![1.0]
    };
    let mut rng = unfold_core::seeded_rng(seed);
    let mut out = y.clone();
    for (i, &c) in copy_of.iter().enumerate() {
        if first[c] == i {
            continue;
        }
        let sd = JITTER_SCALE * nearest[c] / (p as f64).sqrt();
        for j in 0..p {
            let e: f64 = StandardNormal.sample(&mut rng);
            out[(i, j)] += sd * e;
        }
    }
    Ok(out)
}

/// The warning that says what was moved.
pub(crate) fn message(method: &str, first: &[usize], copy_of: &[usize], seed: u64) -> String {
    let (copies, rows) = super::merged::repeated_rows(first, copy_of);
    format!(
        "{copies} of the {} points {} another point exactly (0-based rows: {rows}); {method} \
         needs distinct points, so each copy was moved by a random offset of about {}% of \
         its point's distance to its nearest other point (seed {seed}). Pass duplicates = \
         merge to fit the distinct points instead, or error to refuse such data",
        copy_of.len(),
        if copies == 1 { "repeats" } else { "repeat" },
        JITTER_SCALE * 100.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies move by about 1% of their point's nearest distance, the other rows not at
    /// all, and the same seed moves them the same way.
    #[test]
    fn copies_move_by_a_small_seeded_offset_and_nothing_else_moves() {
        let mut y = DMatrix::from_fn(40, 3, |i, j| ((i * 7 + j * 3) % 11) as f64 + i as f64);
        y.set_row(30, &y.row(4).clone_owned());
        y.set_row(31, &y.row(4).clone_owned());
        let (first, copy_of) = unfold_graph::distinct_rows(&y).unwrap().unwrap();
        let moved = jittered(&y, &first, &copy_of, 7).unwrap();
        assert_eq!(moved, jittered(&y, &first, &copy_of, 7).unwrap());
        let d4 = (0..40)
            .filter(|&i| i != 4 && i != 30 && i != 31)
            .map(|i| (y.row(i) - y.row(4)).norm())
            .fold(f64::INFINITY, f64::min);
        for i in 0..40 {
            let shift = (moved.row(i) - y.row(i)).norm();
            if i == 30 || i == 31 {
                assert!(shift > 1e-4 * d4 && shift < 0.05 * d4, "{shift} vs {d4}");
            } else {
                assert_eq!(shift, 0.0, "row {i}");
            }
        }
        assert!(unfold_graph::distinct_rows(&moved).unwrap().is_none());
        assert!(message("isomap", &first, &copy_of, 7).contains("30 = 4, 31 = 4"));
    }
}
