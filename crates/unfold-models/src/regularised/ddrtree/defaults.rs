//! The settings a DDRTree fit chooses from the data when they are not given: the latent
//! dimension, `lambda` and which side branches of the learned tree are branches
//! (`docs/methods/ddrtree.md`, "Defaults"; measured in `bench/results/trajectory_defaults.md`).
//! The papers and Monocle 2 fix `d = 2` and `lambda = 5 N`; a tree with several branch
//! points does not fit in a plane, and `5 N` pulls the centres of a deep tree together.

use super::auto_centres;
use nalgebra::{DMatrix, DVector};
use statrs::distribution::{ChiSquared, ContinuousCDF};
use unfold_core::Result;
use unfold_linalg::{rank::MIN_VALUES, signal_rank, sym_eigen};

/// A setting chosen from the data: its name, the value and why (reported by the fit's
/// notes as `name` and `name_reason`).
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    /// The parameter's name.
    pub name: &'static str,
    /// The value, as text.
    pub value: String,
    /// Why this value.
    pub reason: String,
}

impl Chosen {
    fn new(name: &'static str, value: impl ToString, reason: String) -> Self {
        Chosen {
            name,
            value: value.to_string(),
            reason,
        }
    }
}

/// The eigenvalues of the centred data's Gram matrix that can be nonzero, descending: the
/// squared singular values of the centred data. `gram` is `Y^T Y` of the data the fit
/// reads, and `mean` their column means when `gram` is not centred (the R package's
/// conventions).
pub(crate) fn spectrum(
    gram: &DMatrix<f64>,
    mean: Option<&DVector<f64>>,
    n: usize,
) -> Result<Vec<f64>> {
    let p = gram.nrows();
    let centred = match mean {
        Some(mu) => gram - (mu * mu.transpose()) * n as f64,
        None => gram.clone(),
    };
    let values = sym_eigen(&centred)?.values;
    // Ascending; the min(N, D) largest are the squared singular values, the rest zeros of a
    // wide matrix.
    Ok(values.iter().rev().take(n.min(p)).copied().collect())
}

/// The latent dimension when not given: the number of principal components of the centred
/// data that stand above the noise ([`signal_rank`], Gavish and Donoho's threshold, on
/// the [`spectrum`] of `n x p` data), at least 2 (the plane the papers use) and below
/// `min(N, D)`; 2 when the spectrum has too few values or no spread for the rule.
pub(crate) fn latent_dim(spectrum: &[f64], n: usize, p: usize) -> (usize, Chosen) {
    let m = spectrum.len();
    let most = m.saturating_sub(1).max(1);
    let (dim, reason) = match signal_rank(spectrum, n, p) {
        Some(r) => {
            let dim = r.clamp(2.min(most), most);
            let bound = match dim.cmp(&r) {
                std::cmp::Ordering::Equal => String::new(),
                std::cmp::Ordering::Greater => ", raised to 2 (a plane)".to_string(),
                std::cmp::Ordering::Less => format!(", lowered to min(N, D) - 1 = {dim}"),
            };
            (
                dim,
                format!(
                    "{r} principal components stand above the noise (Gavish-Donoho hard \
                     threshold on the singular values){bound}"
                ),
            )
        }
        None => (
            2.min(most),
            format!(
                "the spectrum rule needs at least {MIN_VALUES} singular values with some \
                 spread (min(N, D) = {m}); fell back to the papers' 2 (or min(N, D) - 1)"
            ),
        ),
    };
    (dim, Chosen::new("dim", dim, reason))
}

/// The noise's standard deviation per dimension, from the [`spectrum`] of `n x p` data
/// beyond the first `dim` components, or beyond the components above the noise
/// ([`signal_rank`]) when there are more of them (a latent dimension given below the
/// signal's leaves signal in the rest): the mean of those squared singular values is `n`
/// times the noise variance of one direction. `None` when no component is left (centring
/// removes one).
pub(crate) fn noise_sd(spectrum: &[f64], dim: usize, n: usize, p: usize) -> Option<f64> {
    let from = signal_rank(spectrum, n, p).map_or(dim, |r| r.max(dim));
    let rest = spectrum.get(from..n.saturating_sub(1).min(spectrum.len()))?;
    if rest.is_empty() {
        return None;
    }
    let mean = rest.iter().map(|v| v.max(0.0)).sum::<f64>() / rest.len() as f64;
    Some((mean / n as f64).sqrt())
}

/// The share of the noise's variance per dimension that is the default bandwidth `sigma`.
const BANDWIDTH_SHARE: f64 = 0.25;

/// The largest default bandwidth, as a share of the variance along the first principal
/// axis.
const BANDWIDTH_CAP: f64 = 0.05;

/// `sigma` when not given, for the paper's conventions: a quarter of the noise's variance
/// per dimension, `(sd / 2)^2`, but at most `lambda_1 / 20`, with `lambda_1` the variance
/// along the first principal axis (the first of the [`spectrum`] over `n`).
///
/// The soft assignments (32) weigh a point's nearby centres against each other over half
/// the noise's standard deviation: the centres sit at local means across the noisy tube
/// around the tree instead of scattering over its width (where a tree through them grows
/// spurs and zigzags), while side branches and tips keep their length (a bandwidth of the
/// noise's whole variance, `2 sd^2`, which would make `R` a Gaussian mixture's posterior,
/// shrinks them by about one `sd` and merges side branches). Centres closer than the
/// bandwidth's reach coalesce (as in deterministic annealing), so where the signal barely
/// stands above the noise (`lambda_1 < 5 sd^2`) the reach is held below `0.22
/// sqrt(lambda_1)`, a fifth of the spread along the main axis; beyond it the tree
/// collapses to a few groups of centres. The papers' fixed `1e-3` is not scale-free: on
/// data of unit spread it is a hard assignment. Measured in
/// `bench/results/trajectory_defaults.md` and `trajectory_peers.md`. `fallback` (the R
/// package's value) when the noise cannot be measured (`sd` `None` or zero).
pub(crate) fn bandwidth(
    sd: Option<f64>,
    spectrum: &[f64],
    n: usize,
    fallback: f64,
) -> (f64, Chosen) {
    let top = spectrum.first().map_or(0.0, |v| v.max(0.0) / n as f64);
    match sd {
        Some(sd) if sd > 0.0 && top > 0.0 => {
            let noise = BANDWIDTH_SHARE * sd * sd;
            let cap = BANDWIDTH_CAP * top;
            let sigma = noise.min(cap);
            let why = if noise <= cap {
                "soft assignments over half the noise's width"
            } else {
                "held at lambda_1 / 20, as the signal barely stands above the noise (lambda_1 < \
                 5 sd^2) and a wider reach would merge the centres"
            };
            let reason = format!(
                "min((sd / 2)^2, lambda_1 / 20) with sd = {sd:.3e}, the noise's standard \
                 deviation per dimension beyond the signal's components, and lambda_1 = \
                 {top:.3e}, the variance along the first principal axis: {why}"
            );
            (sigma, Chosen::new("sigma", sigma, reason))
        }
        _ => {
            let reason = format!(
                "no component is left beyond the latent dimension to measure the noise (or it \
                 is zero); fell back to the R package's {fallback}"
            );
            (fallback, Chosen::new("sigma", fallback, reason))
        }
    }
}

/// The number of centres when not given: Monocle 2's rule ([`auto_centres`]).
pub(crate) fn centres(n: usize) -> (usize, Chosen) {
    let reason = if n < 100 {
        "N below 100 points: every point a centre (Monocle 2's rule)"
    } else {
        "round(200 ln N / (ln N + ln 100)) (Monocle 2's rule)"
    };
    let k = auto_centres(n);
    (k, Chosen::new("ncenters", k, reason.to_string()))
}

/// Starts of the centres when not given, for the paper's conventions: the consensus of
/// five ([`super::Keep::Consensus`]). Measured in `bench/results/trajectory_starts.md`: on
/// 144 simulated data sets, each fitted in three row orders, against the R package's one
/// start, the mean Spearman's correlation with the true time was more than 0.01 higher on
/// 28 data sets and more than 0.01 lower on 8, the spread between row orders halved, and
/// on the bundled krumsiek11 the four fates keep their own states (the lowest objective of
/// the same starts splits one); each start costs one fit.
pub(crate) const STARTS: usize = 5;

/// [`STARTS`] with the reason.
pub(crate) fn starts() -> (usize, Chosen) {
    let reason = format!(
        "the consensus of {STARTS} starts: the fit whose tree agrees most with the others' \
         (one start depends on the order of the rows)"
    );
    (STARTS, Chosen::new("restarts", STARTS, reason))
}

/// `lambda` when not given, for the paper's conventions: `gamma N / K`, so that the tree
/// term's pull on a centre (`lambda` times its squared edge lengths) weighs as much as the
/// clustering term's pull of the `N / K` cells it stands for (`gamma` times their squared
/// distances). Scale-free, as every term of (31) scales with the squared data.
pub(crate) fn balanced_lambda(n: usize, k: usize, gamma: f64) -> (f64, Chosen) {
    let lambda = gamma * n as f64 / k as f64;
    let reason = format!(
        "gamma N / K = {gamma} x {n} / {k}: the tree's pull on a centre balances the \
         clustering pull of its N / K cells"
    );
    (lambda, Chosen::new("lambda", lambda, reason))
}

/// The most points a pseudotime is averaged over by default, the point itself included
/// (Palantir's neighbourhood size).
const PSEUDOTIME_NEIGHBOURS: usize = 30;

/// How many nearest points (in the latent projection `(Y - mean) W`) each point's
/// pseudotime is averaged over when not given: the points one centre stands for,
/// `round(N / K)`, at most [`PSEUDOTIME_NEIGHBOURS`]; 1 (the distance along the tree) where
/// every point is its own centre. A point's position on the tree moves along it with the
/// noise across it; the mean over its neighbourhood cancels much of that
/// (`unfold_graph::trajectory::Trajectory::smooth_over`), and a neighbourhood no larger
/// than a centre's share keeps the average local to the tree's resolution. Measured in
/// `bench/results/trajectory_knobs.md`: on 168 simulated data sets of two generator
/// families, against the distance along the tree, Spearman's correlation with the true
/// time was more than 0.01 higher on 13 and more than 0.01 lower on 1 (at high noise with
/// 200 genes, where the ordering has little signal). Neighbours in the latent projection,
/// not the input: a kd-tree finds them in the latent dimensions, and those of the input's
/// 50 principal components lost more often at high noise.
pub(crate) fn pseudotime_neighbours(n: usize, k: usize) -> (usize, Chosen) {
    let share = (n as f64 / k.max(1) as f64).round() as usize;
    let m = share.clamp(1, PSEUDOTIME_NEIGHBOURS);
    let reason = if m > 1 {
        format!(
            "min(round(N / K), {PSEUDOTIME_NEIGHBOURS}) with N / K = {n} / {k}: each point's \
             distance along the tree averaged over the {m} nearest points in the latent \
             projection, itself included (the points one centre stands for, at most \
             Palantir's neighbourhood), which cancels much of the noise that moves positions \
             along the tree"
        )
    } else {
        format!(
            "round(N / K) = 1 with N / K = {n} / {k}: every point is its own centre, so \
             pseudotime is the distance along the tree"
        )
    };
    (m, Chosen::new("pseudotime_neighbours", m, reason))
}

/// The fewest centres of a side branch: one or two centres are a single cluster's bulge.
const MIN_CENTRES: usize = 3;

/// The share of the cells that the noise keeps within the tube around the tree (the
/// three-sigma share of a normal).
const TUBE_SHARE: f64 = 0.9973;

/// The smallest side branch, in centres, that an ordering counts as a branch when not
/// given. Noise of standard deviation `sd` per dimension scatters the cells of a path in
/// `d` latent dimensions around it with squared distances `sd^2` times a chi-square of
/// `d - 1` degrees of freedom; a tube of radius `w = sd sqrt(q)`, `q` that chi-square's
/// [`TUBE_SHARE`] quantile, holds all but 0.27% of them (`w = 3 sd` in a plane). The tree
/// reaches into the tube with spurs, so a spur no longer than `w` is the noise's width, not
/// a fate, and a spur of one or two centres is a single cluster bulging from the tree. With
/// `l` the tree's mean edge length: `max(3, ceil(w / l))` centres, or 3 when the noise
/// cannot be estimated (`sd` `None`: no component left beyond `d`).
pub(crate) fn min_branch(
    centres: &DMatrix<f64>,
    edges: &[(usize, usize, f64)],
    sd: Option<f64>,
) -> (usize, Chosen) {
    let d = centres.ncols();
    let length: f64 = edges
        .iter()
        .map(|&(a, b, _)| (centres.row(a) - centres.row(b)).norm())
        .sum();
    let l = length / edges.len().max(1) as f64;
    let Some(sd) = sd else {
        let reason = format!(
            "no component is left beyond the latent dimension to measure the noise; side \
             branches of fewer than {MIN_CENTRES} centres are single clusters"
        );
        return (MIN_CENTRES, Chosen::new("min_branch", MIN_CENTRES, reason));
    };
    let across = ChiSquared::new((d.max(2) - 1) as f64).expect("at least one degree of freedom");
    let w = sd * across.inverse_cdf(TUBE_SHARE).sqrt();
    let width = if l > 0.0 { (w / l).ceil() as usize } else { 0 };
    let m = width.max(MIN_CENTRES);
    let reason = format!(
        "max({MIN_CENTRES}, ceil(w / l)) with w = {w:.3e} (the radius around the tree within \
         which the noise keeps 99.73% of the cells: its standard deviation {sd:.3e} beyond \
         the latent dimensions, times the square root of the chi-square quantile with d - 1 \
         degrees of freedom) and l = {l:.3e} (the mean edge length): side branches that \
         reach no further, or of fewer than {MIN_CENTRES} centres, are noise"
    );
    (m, Chosen::new("min_branch", m, reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, StandardNormal};

    /// On a plane of spread 3 plus white noise of sd 0.1 in 40 dimensions, the spectrum
    /// has two components above the noise and the noise's sd is read back within 5%; with
    /// an uncentred Gram matrix and the mean, the spectrum is the centred one; no component
    /// beyond the dimension gives no noise estimate; the smallest branch is 3 noise radii
    /// in edges of the tree (here a path of unit edges), at least 3 centres.
    #[test]
    fn the_spectrum_gives_the_dimension_and_the_noise() {
        let (n, p) = (3000, 40);
        let mut rng = unfold_core::seeded_rng(5);
        let mut g = || -> f64 { StandardNormal.sample(&mut rng) };
        let mut y = DMatrix::from_fn(n, p, |_, _| 0.1 * g());
        for i in 0..n {
            let (a, b) = (3.0 * g(), 3.0 * g());
            y[(i, 0)] += a + 5.0;
            y[(i, 1)] += b - 2.0;
        }
        let mean = DVector::from_fn(p, |j, _| y.column(j).mean());
        let centred = DMatrix::from_fn(n, p, |i, j| y[(i, j)] - mean[j]);
        let s = spectrum(&(centred.transpose() * &centred), None, n).unwrap();
        let s_uncentred = spectrum(&(y.transpose() * &y), Some(&mean), n).unwrap();
        for (a, b) in s.iter().zip(&s_uncentred) {
            assert!((a - b).abs() <= 1e-8 * s[0], "{a} {b}");
        }
        let (dim, why) = latent_dim(&s, n, p);
        assert_eq!(dim, 2, "{}", why.reason);
        let sd = noise_sd(&s, dim, n, p).unwrap();
        assert!((sd - 0.1).abs() < 0.005, "{sd}");
        assert_eq!(noise_sd(&s, p, n, p), None);
        // A dimension below the signal's: the second component is still signal, not noise.
        assert_eq!(noise_sd(&s, 1, n, p), Some(sd));
        // sigma: (sd / 2)^2 where the signal stands well above the noise (lambda_1 = 9 here
        // against sd^2 = 0.01), lambda_1 / 20 where it does not, 1e-3 with no noise measured.
        let (sigma, _) = bandwidth(Some(sd), &s, n, 1e-3);
        assert!((sigma - sd * sd / 4.0).abs() <= 1e-15, "{sigma}");
        let (held, _) = bandwidth(Some(3.0), &s, n, 1e-3);
        assert!((held - s[0] / n as f64 / 20.0).abs() <= 1e-12, "{held}");
        assert!((held - 9.0 / 20.0).abs() < 0.05, "{held}");
        assert_eq!(bandwidth(None, &s, n, 1e-3).0, 1e-3);
        assert_eq!(bandwidth(Some(0.0), &s, n, 1e-3).0, 1e-3);
        // A path of 10 unit edges in a plane: w = 3.0 sd (the normal's 99.73% two-sided
        // quantile), 0.3 rounds up to 1, so the floor of 3 centres.
        let path = DMatrix::from_fn(11, 2, |i, j| if j == 0 { i as f64 } else { 0.0 });
        let edges: Vec<_> = (0..10).map(|i| (i, i + 1, 1.0)).collect();
        assert_eq!(min_branch(&path, &edges, Some(0.1)).0, 3);
        // Wider noise: ceil(3.0 x 2.5 / 1) = 8 centres; in 5 dimensions (4 degrees of
        // freedom, quantile 16.25) ceil(2.5 x 4.031) = 11.
        assert_eq!(min_branch(&path, &edges, Some(2.5)).0, 8);
        let path5 = path.clone().resize_horizontally(5, 0.0);
        assert_eq!(min_branch(&path5, &edges, Some(2.5)).0, 11);
        assert_eq!(min_branch(&path, &edges, None).0, 3);
        let (lambda, _) = balanced_lambda(4000, 125, 10.0);
        assert_eq!(lambda, 320.0);
    }
}
