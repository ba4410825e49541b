//! k-means clustering: Lloyd's algorithm with k-means++ seeding and seeded restarts, or
//! with the evenly spaced start of the R package DDRTree.

use nalgebra::DMatrix;
use rand::{Rng, RngCore};
use rayon::prelude::*;
use unfold_core::{check_finite, seeded_rng, Error, Result};

/// Options of [`kmeans`].
#[derive(Clone, Debug, PartialEq)]
pub struct KMeansOptions {
    /// Number of independent k-means++ initialisations; the fit with the lowest inertia is
    /// kept. At least 1. Default 10.
    pub restarts: usize,
    /// Maximum number of Lloyd iterations per restart. At least 1. Default 300.
    pub max_iter: usize,
    /// A restart stops when the assignments no longer change or when the sum of squared
    /// centre moves of one iteration is at most `tol` times the mean per-feature variance of
    /// the data (scikit-learn's scaling). Finite and `>= 0`. Default 1e-4.
    pub tol: f64,
    /// Seed of all random choices. Default 0.
    pub seed: u64,
    /// How the centres start. Default [`KMeansInit::PlusPlus`].
    pub init: KMeansInit,
    /// What happens to a cluster an assignment leaves empty. Default
    /// [`EmptyClusters::Reseed`].
    pub empty: EmptyClusters,
}

/// The start of Lloyd's iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KMeansInit {
    /// k-means++ seeding (Arthur & Vassilvitskii 2007), a new draw per restart.
    PlusPlus,
    /// The rows `floor(1 + j (n-1)/(k-1)) - 1`, `j = 0..k` (0-based): the R package
    /// DDRTree's `seq(1, N, length.out = K)` subset of the points. Deterministic, so one run
    /// is made whatever [`KMeansOptions::restarts`] says.
    EvenlySpaced,
}

/// The treatment of a cluster that an assignment leaves empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyClusters {
    /// The cluster takes the point farthest from its centre among clusters with more than
    /// one point, so that all `k` clusters are always used.
    Reseed,
    /// The cluster keeps its previous centre (the R package DDRTree's rule); it may stay
    /// empty.
    KeepCentre,
}

impl Default for KMeansOptions {
    fn default() -> Self {
        KMeansOptions {
            restarts: 10,
            max_iter: 300,
            tol: 1e-4,
            seed: 0,
            init: KMeansInit::PlusPlus,
            empty: EmptyClusters::Reseed,
        }
    }
}

impl KMeansOptions {
    fn check(&self) -> Result<()> {
        if self.restarts == 0 {
            return Err(Error::invalid("restarts", "must be at least 1"));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        if !(self.tol.is_finite() && self.tol >= 0.0) {
            return Err(Error::invalid(
                "tol",
                format!("must be finite and >= 0, got {}", self.tol),
            ));
        }
        Ok(())
    }
}

/// The best of the k-means restarts.
#[derive(Clone, Debug, PartialEq)]
pub struct KMeansFit {
    /// Cluster of each point, in `0..k`; with [`EmptyClusters::Reseed`] every cluster has at
    /// least one point.
    pub labels: Vec<usize>,
    /// Cluster centres, one per row (k x p); each point's label is its nearest centre.
    pub centres: DMatrix<f64>,
    /// Sum of squared distances of the points to their centres.
    pub inertia: f64,
    /// Lloyd iterations of the kept restart.
    pub iterations: usize,
}

/// k-means clustering of the rows of `x` (n x p) into `k` clusters, minimising the inertia
/// `sum_i ||x_i - c_{label_i}||^2`.
///
/// Each restart seeds the centres with k-means++ (Arthur & Vassilvitskii 2007: the first
/// centre uniformly, each next one with probability proportional to the squared distance to
/// the nearest centre chosen so far) or takes evenly spaced points ([`KMeansInit`]), then
/// runs Lloyd's algorithm (assign every point to its nearest centre, ties to the smaller
/// centre index; move every centre to the mean of its points) until convergence (see
/// [`KMeansOptions::tol`]) or `max_iter` iterations. A cluster left empty by an assignment
/// is re-seeded or keeps its centre ([`EmptyClusters`]).
///
/// Restarts draw their seeds in order from `seeded_rng(opts.seed)` and run in parallel; the
/// fit with the lowest inertia is kept (the earliest restart on a tie), so the result
/// depends only on the seed, never on the thread count.
///
/// Errors: empty or non-finite `x`, `k == 0`, `k > n`, or invalid options.
pub fn kmeans(x: &DMatrix<f64>, k: usize, opts: &KMeansOptions) -> Result<KMeansFit> {
    run(x, k, opts, None)
}

/// The labels of the assignment step: for points `x` (n x p) and centres `c` (k x p), the
/// index of each point's nearest centre, the smaller index on ties.
pub type NearestCentres<'a> = &'a (dyn Fn(&DMatrix<f64>, &DMatrix<f64>) -> Vec<usize> + Sync);

/// [`kmeans`] with the assignment step's labels computed by `nearest` (a vectorised kernel
/// of the caller's, say); it must return what the plain loop would, up to rounding of the
/// distances. The inertia and the re-seeding of empty clusters use the plain distances.
pub fn kmeans_with(
    x: &DMatrix<f64>,
    k: usize,
    opts: &KMeansOptions,
    nearest: NearestCentres<'_>,
) -> Result<KMeansFit> {
    run(x, k, opts, Some(nearest))
}

fn run(
    x: &DMatrix<f64>,
    k: usize,
    opts: &KMeansOptions,
    nearest: Option<NearestCentres<'_>>,
) -> Result<KMeansFit> {
    check_finite(x, "points")?;
    opts.check()?;
    let n = x.nrows();
    if k == 0 {
        return Err(Error::invalid(
            "k",
            "the number of clusters must be at least 1",
        ));
    }
    if k > n {
        return Err(Error::invalid(
            "k",
            format!("cannot make {k} non-empty clusters from {n} points; use k <= {n}"),
        ));
    }
    let points = Points::new(x, nearest.map(|f| (x, f)));
    let tol = opts.tol * points.mean_feature_variance();
    let mut master = seeded_rng(opts.seed);
    let restarts = match opts.init {
        KMeansInit::PlusPlus => opts.restarts,
        KMeansInit::EvenlySpaced => 1,
    };
    let seeds: Vec<u64> = (0..restarts).map(|_| master.next_u64()).collect();
    let fits: Vec<KMeansFit> = seeds
        .par_iter()
        .map(|&seed| lloyd(&points, k, opts, tol, seed))
        .collect();
    // The earliest restart wins ties, whatever order the threads finished in.
    fits.into_iter()
        .reduce(|best, fit| {
            if fit.inertia < best.inertia {
                fit
            } else {
                best
            }
        })
        .ok_or_else(|| Error::invalid("restarts", "must be at least 1"))
}

/// The data as contiguous rows (point-major), for cache-friendly distance loops, and the
/// caller's labelling kernel with the data as it takes them.
struct Points<'a> {
    rows: Vec<f64>,
    n: usize,
    p: usize,
    nearest: Option<(&'a DMatrix<f64>, NearestCentres<'a>)>,
}

impl<'a> Points<'a> {
    fn new(x: &DMatrix<f64>, nearest: Option<(&'a DMatrix<f64>, NearestCentres<'a>)>) -> Self {
        let (n, p) = x.shape();
        Points {
            rows: x.transpose().as_slice().to_vec(),
            n,
            p,
            nearest,
        }
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.rows[i * self.p..(i + 1) * self.p]
    }

    fn mean_feature_variance(&self) -> f64 {
        let mut total = 0.0;
        for f in 0..self.p {
            let mean = (0..self.n).map(|i| self.row(i)[f]).sum::<f64>() / self.n as f64;
            total += (0..self.n)
                .map(|i| (self.row(i)[f] - mean).powi(2))
                .sum::<f64>()
                / self.n as f64;
        }
        total / self.p as f64
    }
}

fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// One restart: the start, then Lloyd iterations.
fn lloyd(x: &Points, k: usize, opts: &KMeansOptions, tol: f64, seed: u64) -> KMeansFit {
    let mut centres = match opts.init {
        KMeansInit::PlusPlus => kmeans_plus_plus(x, k, &mut seeded_rng(seed)),
        KMeansInit::EvenlySpaced => (0..k)
            .flat_map(|j| x.row(evenly_spaced_row(j, k, x.n)).to_vec())
            .collect(),
    };
    let reseed = opts.empty == EmptyClusters::Reseed;
    let (mut labels, mut dist) = assign(x, &mut centres, k, reseed);
    let mut iterations = 0;
    while iterations < opts.max_iter {
        iterations += 1;
        let moved = update_centres(x, &labels, &mut centres, k);
        let (new_labels, new_dist) = assign(x, &mut centres, k, reseed);
        let unchanged = new_labels == labels;
        labels = new_labels;
        dist = new_dist;
        if unchanged || moved <= tol {
            break;
        }
    }
    KMeansFit {
        labels,
        centres: DMatrix::from_row_slice(k, x.p, &centres),
        inertia: dist.iter().sum(),
        iterations,
    }
}

/// Row `floor(1 + j (n-1)/(k-1)) - 1` (0-based) for centre `j` of `k` over `n` rows, as
/// numpy's `linspace` computes it: `1 + j step` with `step = (n - 1) / (k - 1)`, the last
/// one exactly `n`.
fn evenly_spaced_row(j: usize, k: usize, n: usize) -> usize {
    if k == 1 {
        return 0;
    }
    if j == k - 1 {
        return n - 1;
    }
    let step = (n as f64 - 1.0) / (k as f64 - 1.0);
    let x = j as f64 * step + 1.0;
    (x.floor() as usize).clamp(1, n) - 1
}

/// k-means++ seeding; centres as contiguous rows (k x p).
fn kmeans_plus_plus(x: &Points, k: usize, rng: &mut impl Rng) -> Vec<f64> {
    let mut chosen = vec![rng.random_range(0..x.n)];
    let mut nearest: Vec<f64> = (0..x.n)
        .map(|i| sq_dist(x.row(i), x.row(chosen[0])))
        .collect();
    while chosen.len() < k {
        let total: f64 = nearest.iter().sum();
        let next = if total > 0.0 {
            let target = rng.random::<f64>() * total;
            let mut acc = 0.0;
            let mut pick = None;
            for (i, &w) in nearest.iter().enumerate() {
                if w > 0.0 {
                    pick = Some(i);
                    acc += w;
                    if acc > target {
                        break;
                    }
                }
            }
            pick.unwrap_or_default()
        } else {
            // Every point coincides with a chosen centre: take the first unchosen one.
            (0..x.n).find(|i| !chosen.contains(i)).unwrap_or_default()
        };
        chosen.push(next);
        for (i, d) in nearest.iter_mut().enumerate() {
            *d = d.min(sq_dist(x.row(i), x.row(next)));
        }
    }
    chosen.iter().flat_map(|&i| x.row(i).to_vec()).collect()
}

/// Nearest centre of every point (ties to the smaller index; by the caller's kernel if it
/// gave one) and the squared distance to it; then, with `reseed`, every empty cluster
/// takes the point farthest from its centre among clusters with more than one point (ties
/// to the smaller point index), and that point becomes the cluster's centre.
fn assign(x: &Points, centres: &mut [f64], k: usize, reseed: bool) -> (Vec<usize>, Vec<f64>) {
    let p = x.p;
    let (mut labels, mut dist): (Vec<usize>, Vec<f64>) = match x.nearest {
        Some((data, nearest)) => {
            let labels = nearest(data, &DMatrix::from_row_slice(k, p, centres));
            let dist = labels
                .par_iter()
                .enumerate()
                .map(|(i, &c)| sq_dist(x.row(i), &centres[c * p..(c + 1) * p]))
                .collect();
            (labels, dist)
        }
        None => (0..x.n)
            .into_par_iter()
            .map(|i| {
                let mut best = (0, f64::INFINITY);
                for c in 0..k {
                    let d = sq_dist(x.row(i), &centres[c * p..(c + 1) * p]);
                    if d < best.1 {
                        best = (c, d);
                    }
                }
                best
            })
            .unzip(),
    };
    if !reseed {
        return (labels, dist);
    }
    let mut counts = vec![0usize; k];
    for &l in &labels {
        counts[l] += 1;
    }
    for c in 0..k {
        if counts[c] > 0 {
            continue;
        }
        // n >= k guarantees a cluster with at least two points while one is empty.
        let mut far = None;
        for i in 0..x.n {
            if counts[labels[i]] > 1 && far.is_none_or(|f: usize| dist[i] > dist[f]) {
                far = Some(i);
            }
        }
        let Some(i) = far else { break };
        counts[labels[i]] -= 1;
        counts[c] = 1;
        labels[i] = c;
        dist[i] = 0.0;
        centres[c * p..(c + 1) * p].copy_from_slice(x.row(i));
    }
    (labels, dist)
}

/// Moves every centre to the mean of its points (an empty cluster keeps its centre) and
/// returns the sum over clusters of their squared moves.
fn update_centres(x: &Points, labels: &[usize], centres: &mut [f64], k: usize) -> f64 {
    let p = x.p;
    let mut sums = vec![0.0; k * p];
    let mut counts = vec![0usize; k];
    for (i, &l) in labels.iter().enumerate() {
        counts[l] += 1;
        for (s, v) in sums[l * p..(l + 1) * p].iter_mut().zip(x.row(i)) {
            *s += v;
        }
    }
    let mut moved = 0.0;
    for c in 0..k {
        if counts[c] == 0 {
            continue;
        }
        let mut own = 0.0;
        for f in 0..p {
            let mean = sums[c * p + f] / counts[c] as f64;
            own += (mean - centres[c * p + f]).powi(2);
            centres[c * p + f] = mean;
        }
        moved += own;
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clustering_accuracy;

    /// Three tight, well-separated blobs of 40 points in 3-D, labels 0, 1, 2.
    fn blobs(seed: u64) -> (DMatrix<f64>, Vec<usize>) {
        let mut rng = seeded_rng(seed);
        let centres = [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 5.0]];
        let n = 120;
        let truth: Vec<usize> = (0..n).map(|i| i % 3).collect();
        let x = DMatrix::from_fn(n, 3, |i, j| {
            centres[truth[i]][j] + rng.random_range(-1.0..1.0)
        });
        (x, truth)
    }

    #[test]
    fn finds_well_separated_blobs() {
        let (x, truth) = blobs(3);
        let fit = kmeans(&x, 3, &KMeansOptions::default()).unwrap();
        assert_eq!(clustering_accuracy(&fit.labels, &truth).unwrap(), 1.0);
        // Centres are the blob means and the inertia is the within-blob scatter.
        let mut inertia = 0.0;
        for c in 0..3 {
            let members: Vec<usize> = (0..120).filter(|&i| fit.labels[i] == c).collect();
            let mean = members
                .iter()
                .fold(nalgebra::RowDVector::zeros(3), |acc, &i| acc + x.row(i))
                / members.len() as f64;
            assert!((fit.centres.row(c) - &mean).amax() < 1e-12);
            inertia += members
                .iter()
                .map(|&i| (x.row(i) - &mean).norm_squared())
                .sum::<f64>();
        }
        assert!((fit.inertia - inertia).abs() < 1e-9 * inertia);
    }

    #[test]
    fn deterministic_for_a_seed_and_thread_count() {
        let (x, _) = blobs(4);
        let opts = KMeansOptions {
            seed: 42,
            restarts: 4,
            ..KMeansOptions::default()
        };
        let a = kmeans(&x, 5, &opts).unwrap();
        let b = kmeans(&x, 5, &opts).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let c = pool.install(|| kmeans(&x, 5, &opts)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
    }

    #[test]
    fn more_restarts_never_worse_and_every_cluster_used() {
        let (x, _) = blobs(5);
        let one = KMeansOptions {
            restarts: 1,
            ..KMeansOptions::default()
        };
        let many = KMeansOptions::default();
        let k = 7;
        let fit1 = kmeans(&x, k, &one).unwrap();
        let fit10 = kmeans(&x, k, &many).unwrap();
        assert!(fit10.inertia <= fit1.inertia);
        for fit in [&fit1, &fit10] {
            for c in 0..k {
                assert!(fit.labels.contains(&c));
            }
        }
    }

    #[test]
    fn empty_clusters_are_reseeded() {
        // Five distinct points, two of them duplicated: k = n forces singleton clusters.
        let x = DMatrix::from_column_slice(7, 1, &[0., 0., 1., 1., 5., 9., 20.]);
        let fit = kmeans(&x, 7, &KMeansOptions::default()).unwrap();
        let mut labels = fit.labels.clone();
        labels.sort_unstable();
        assert_eq!(labels, (0..7).collect::<Vec<_>>());
        assert_eq!(fit.inertia, 0.0);
    }

    #[test]
    fn evenly_spaced_start_rows() {
        let rows: Vec<usize> = (0..7).map(|j| evenly_spaced_row(j, 7, 37)).collect();
        assert_eq!(rows, [0, 6, 12, 18, 24, 30, 36]);
        // linspace(1, 100, 30): 1, 4.41.., 7.82.., 11.24.. -> 0-based 0, 3, 6, 10.
        let rows: Vec<usize> = (0..4).map(|j| evenly_spaced_row(j, 30, 100)).collect();
        assert_eq!(rows, [0, 3, 6, 10]);
        assert_eq!(evenly_spaced_row(29, 30, 100), 99);
    }

    #[test]
    fn evenly_spaced_start_with_kept_empty_centres_and_a_caller_kernel() {
        // k = 3 starts from rows 0, 2, 4 = (0, 0, 9): ties go to the first centre at 0, so
        // the second one is left empty and keeps its place.
        let x = DMatrix::from_column_slice(5, 1, &[0.0, 0.0, 0.0, 8.0, 9.0]);
        let opts = KMeansOptions {
            init: KMeansInit::EvenlySpaced,
            empty: EmptyClusters::KeepCentre,
            ..KMeansOptions::default()
        };
        let fit = kmeans(&x, 3, &opts).unwrap();
        assert_eq!(fit.labels, [0, 0, 0, 2, 2]);
        assert_eq!(fit.centres.as_slice(), &[0.0, 0.0, 8.5]);
        // The same through a caller's labelling kernel.
        let nearest = |x: &DMatrix<f64>, c: &DMatrix<f64>| -> Vec<usize> {
            x.row_iter()
                .map(|r| {
                    (0..c.nrows())
                        .min_by(|&a, &b| {
                            (r - c.row(a))
                                .norm_squared()
                                .total_cmp(&(r - c.row(b)).norm_squared())
                        })
                        .unwrap()
                })
                .collect()
        };
        assert_eq!(kmeans_with(&x, 3, &opts, &nearest).unwrap(), fit);
        // With re-seeding every cluster is used.
        let reseeded = kmeans(
            &x,
            3,
            &KMeansOptions {
                empty: EmptyClusters::Reseed,
                ..opts
            },
        )
        .unwrap();
        for c in 0..3 {
            assert!(reseeded.labels.contains(&c));
        }
    }

    #[test]
    fn rejects_bad_input() {
        let (x, _) = blobs(6);
        let opts = KMeansOptions::default();
        assert!(matches!(
            kmeans(&x, 0, &opts),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            kmeans(&x, 121, &opts),
            Err(Error::InvalidParameter { .. })
        ));
        let bad = KMeansOptions {
            tol: f64::NAN,
            ..opts.clone()
        };
        assert!(kmeans(&x, 2, &bad).is_err());
        let bad = KMeansOptions {
            restarts: 0,
            ..opts.clone()
        };
        assert!(kmeans(&x, 2, &bad).is_err());
        let mut nan = x.clone();
        nan[(5, 2)] = f64::NAN;
        assert!(matches!(
            kmeans(&nan, 2, &opts),
            Err(Error::NonFinite { .. })
        ));
    }
}
