//! Seeded train/test splits of the points.

use rand::seq::SliceRandom;
use unfold_core::seeded_rng;

/// `held_out` of the `n` rows drawn at random with `seed` and the rest, as
/// `(train, test)` row indices, each in increasing order. The same `seed` gives the same
/// split whatever else runs.
///
/// # Panics
/// If `held_out > n` (a programming error).
pub fn holdout_split(n: usize, held_out: usize, seed: u64) -> (Vec<usize>, Vec<usize>) {
    assert!(held_out <= n, "holdout_split: {held_out} of {n} rows");
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut seeded_rng(seed));
    let (mut test, mut train) = (order[..held_out].to_vec(), order[held_out..].to_vec());
    test.sort_unstable();
    train.sort_unstable();
    (train, test)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_disjoint_complete_and_seeded() {
        let (train, test) = holdout_split(50, 7, 3);
        assert_eq!((train.len(), test.len()), (43, 7));
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
        assert!(test.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(holdout_split(50, 7, 3), (train, test.clone()));
        assert_ne!(holdout_split(50, 7, 4).1, test);
    }
}
