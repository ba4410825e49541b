//! Rank correlation between two orderings of the same points.

use unfold_core::{Error, Result};

/// The ranks of `v` (0-based, ties given the mean of the ranks they span).
pub(crate) fn ranks(v: &[f64]) -> Vec<f64> {
    // Sorting (value, index) pairs in place reads memory in order, several times faster
    // than sorting indices by the values they point at once v no longer fits in cache.
    let mut order: Vec<(f64, usize)> = v.iter().copied().zip(0..).collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out = vec![0.0; v.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && order[end].0 == order[start].0 {
            end += 1;
        }
        let mean = (start + end - 1) as f64 / 2.0;
        for &(_, i) in &order[start..end] {
            out[i] = mean;
        }
        start = end;
    }
    out
}

/// Spearman's rank correlation: the Pearson correlation of the ranks (ties at their mean
/// rank), in [-1, 1].
///
/// Errors: vectors of different lengths, fewer than 2 values, a NaN, or a constant vector
/// (its ranks have no variance).
pub fn spearman(a: &[f64], b: &[f64]) -> Result<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return Err(Error::DimensionMismatch(format!(
            "Spearman's correlation needs two vectors of one length >= 2 (got {} and {})",
            a.len(),
            b.len()
        )));
    }
    if a.iter().chain(b).any(|v| v.is_nan()) {
        return Err(Error::invalid("spearman", "the values hold a NaN"));
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let mean = (a.len() - 1) as f64 / 2.0;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        sab += (x - mean) * (y - mean);
        saa += (x - mean) * (x - mean);
        sbb += (y - mean) * (y - mean);
    }
    if saa == 0.0 || sbb == 0.0 {
        return Err(Error::invalid(
            "spearman",
            "one of the vectors is constant, so its ranks have no variance",
        ));
    }
    Ok(sab / (saa * sbb).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotone_maps_give_one_and_the_textbook_value_with_ties() {
        let a = [0.3, 1.0, -2.0, 5.0, 4.0];
        let cubed: Vec<f64> = a.iter().map(|v| v * v * v + 1.0).collect();
        assert!((spearman(&a, &cubed).unwrap() - 1.0).abs() < 1e-15);
        let reversed: Vec<f64> = a.iter().map(|v| -v).collect();
        assert!((spearman(&a, &reversed).unwrap() + 1.0).abs() < 1e-15);
        // Ranks with ties: [0, 1.5, 1.5, 3] against [0, 1, 2, 3] (scipy.stats.spearmanr
        // gives 0.9486832980505138).
        let r = spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((r - 0.9486832980505138).abs() < 1e-15, "{r}");
        assert!(spearman(&[1.0, 1.0], &[1.0, 2.0]).is_err());
        assert!(spearman(&[1.0, f64::NAN], &[1.0, 2.0]).is_err());
        assert!(spearman(&[1.0], &[1.0]).is_err());
    }
}
