//! The number of components of a data matrix that stand above its noise: Gavish and
//! Donoho's optimal hard threshold for singular values when the noise level is unknown
//! ("The optimal hard threshold for singular values is 4/sqrt(3)", IEEE Trans. Inf.
//! Theory 60(8), 2014, eq. (5) and its polynomial approximation of omega).

/// The fewest singular values [`signal_rank`] reads: with fewer, the median that stands
/// for the noise is as likely to be a signal value.
pub const MIN_VALUES: usize = 4;

/// The number of singular values of an `n x p` data matrix above Gavish and Donoho's
/// threshold `omega(beta) * median(sigma)` for white noise of unknown level, with
/// `beta = min(n, p) / max(n, p)` and `omega(beta) = 0.56 beta^3 - 0.95 beta^2 + 1.82 beta
/// + 1.43` (their approximation, within 0.02 of the exact value on `(0, 1]`).
///
/// `squared` are the eigenvalues of the Gram matrix `Y^T Y` (or `Y Y^T`) of the centred
/// data, the squared singular values, in any order; entries below 0 (round-off) count as
/// 0. Returns `None` when there are fewer than [`MIN_VALUES`] of them, or no spread (all
/// zero): the rule cannot separate signal from noise there.
pub fn signal_rank(squared: &[f64], n: usize, p: usize) -> Option<usize> {
    if squared.len() < MIN_VALUES || n == 0 || p == 0 {
        return None;
    }
    let mut sigma: Vec<f64> = squared.iter().map(|&v| v.max(0.0).sqrt()).collect();
    sigma.sort_by(f64::total_cmp);
    let m = sigma.len();
    let median = if m % 2 == 1 {
        sigma[m / 2]
    } else {
        0.5 * (sigma[m / 2 - 1] + sigma[m / 2])
    };
    if sigma[m - 1] <= 0.0 {
        return None;
    }
    let beta = n.min(p) as f64 / n.max(p) as f64;
    let omega = ((0.56 * beta - 0.95) * beta + 1.82) * beta + 1.43;
    let tau = omega * median;
    Some(sigma.iter().filter(|&&s| s > tau).count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym_eigen;
    use nalgebra::DMatrix;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    /// The Gram eigenvalues of a rank-`r` signal of strength `s` per value plus white
    /// noise in an `n x p` matrix.
    fn spectrum(n: usize, p: usize, r: usize, s: f64, seed: u64) -> Vec<f64> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let g = Normal::new(0.0, 1.0).unwrap();
        let u = DMatrix::from_fn(n, r, |_, _| g.sample(&mut rng));
        let v = DMatrix::from_fn(r, p, |_, _| g.sample(&mut rng));
        let signal = u * v * (s / ((n * p) as f64).sqrt());
        let noise = DMatrix::from_fn(n, p, |_, _| g.sample(&mut rng) / (n as f64).sqrt());
        let y = signal + noise;
        sym_eigen(&(y.transpose() * y))
            .unwrap()
            .values
            .as_slice()
            .to_vec()
    }

    /// Strong components are counted and the noise bulk is not, at either aspect ratio;
    /// pure noise has rank 0; components below the noise edge (`beta^(1/4)` for unit
    /// noise) are not found; too few values or no spread give no answer.
    #[test]
    fn counts_the_components_above_the_noise() {
        for (n, p) in [(2000, 50), (400, 200), (300, 300)] {
            for r in [0, 1, 3, 7] {
                let rank = signal_rank(&spectrum(n, p, r, 8.0, r as u64), n, p);
                assert_eq!(rank, Some(r), "n {n} p {p} r {r}");
            }
        }
        // Below the detection edge: beta = 0.5, edge 0.84; a value of 0.3 is noise.
        assert_eq!(
            signal_rank(&spectrum(400, 200, 2, 0.3, 9), 400, 200),
            Some(0)
        );
        assert_eq!(signal_rank(&[4.0, 1.0, 1.0], 10, 3), None);
        assert_eq!(signal_rank(&[0.0; 6], 10, 6), None);
        assert_eq!(
            signal_rank(&[-1e-18, 0.0, 0.0, 0.0, 0.0, 9.0], 10, 6),
            Some(1)
        );
    }
}
