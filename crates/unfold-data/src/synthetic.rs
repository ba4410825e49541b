//! Seeded synthetic manifolds. Every generator returns a [`Dataset`] whose `latent` holds
//! the true manifold coordinates; `noise_sd` adds isotropic Gaussian noise to the points
//! (not to the latent coordinates). The same seed gives the same points everywhere.

use crate::Dataset;
use nalgebra::DMatrix;
use rand::Rng as _;
use rand_distr::{Distribution, Normal};
use std::f64::consts::PI;
use unfold_core::{seeded_rng, Error, Result, Rng};

mod tree;
pub use tree::{tree, TreeSpec};

fn check(n: usize, noise_sd: f64) -> Result<()> {
    if n == 0 {
        return Err(Error::invalid(
            "n",
            "the number of points must be at least 1",
        ));
    }
    if !(noise_sd.is_finite() && noise_sd >= 0.0) {
        return Err(Error::invalid(
            "noise",
            format!("must be a non-negative number, got {noise_sd}"),
        ));
    }
    Ok(())
}

/// Builds a data set from per-point (point, latent) pairs, then adds noise.
fn build<const P: usize, const D: usize>(
    name: &str,
    n: usize,
    noise_sd: f64,
    seed: u64,
    mut draw: impl FnMut(&mut Rng) -> ([f64; P], [f64; D]),
) -> Result<Dataset> {
    check(n, noise_sd)?;
    let mut rng = seeded_rng(seed);
    let mut y = DMatrix::zeros(n, P);
    let mut x = DMatrix::zeros(n, D);
    for i in 0..n {
        let (point, latent) = draw(&mut rng);
        for j in 0..P {
            y[(i, j)] = point[j];
        }
        for j in 0..D {
            x[(i, j)] = latent[j];
        }
    }
    if noise_sd > 0.0 {
        let normal = Normal::new(0.0, noise_sd).expect("a valid standard deviation");
        y.apply(|v| *v += normal.sample(&mut rng));
    }
    let mut data = Dataset::from_points(name, y);
    data.latent = Some(x);
    Ok(data)
}

/// The Swiss roll of the LL-LVM paper (spec `lllvm.md` §5.1, the authors' `getartificial`):
/// `t = (3 pi / 4)(1 + 2u)`, `height = 10 u'` with `u, u' ~ U(0, 1)`, and
/// `y = [0.35 t cos t, height, 0.35 t sin t]`; latent `[t, height]`.
pub fn swiss_roll(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    build("swiss-roll", n, noise_sd, seed, |rng| {
        let t = 0.75 * PI * (1.0 + 2.0 * rng.random::<f64>());
        let h = 10.0 * rng.random::<f64>();
        ([0.35 * t * t.cos(), h, 0.35 * t * t.sin()], [t, h])
    })
}

/// The S-curve: `t = 3 pi (u - 1/2)`, `y = [sin t, 2v, sign(t)(cos t - 1)]` with
/// `u, v ~ U(0, 1)`; latent `[t, 2v]`.
pub fn s_curve(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    build("s-curve", n, noise_sd, seed, |rng| {
        let t = 3.0 * PI * (rng.random::<f64>() - 0.5);
        let h = 2.0 * rng.random::<f64>();
        ([t.sin(), h, t.signum() * (t.cos() - 1.0)], [t, h])
    })
}

/// The closed helix of drtoolbox used by the SPL and MPME papers:
/// `y = [(2 + cos 8t) cos t, (2 + cos 8t) sin t, sin 8t]` with `t = 2 pi u`, `u ~ U(0, 1)`
/// (the papers print `p ~ U[0, 1]` without the `2 pi`, which does not close the loop;
/// spec `mpme.md` P9). Latent `[t]`.
pub fn helix(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    build("helix", n, noise_sd, seed, |rng| {
        let t = 2.0 * PI * rng.random::<f64>();
        let r = 2.0 + (8.0 * t).cos();
        ([r * t.cos(), r * t.sin(), (8.0 * t).sin()], [t])
    })
}

/// Twin peaks (drtoolbox): `y = [1 - 2p, 1 - 2q, sin(pi (1 - 2p)) tanh(3 (1 - 2q))]` with
/// `p, q ~ U(0, 1)`; latent `[p, q]`.
pub fn twin_peaks(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    build("twin-peaks", n, noise_sd, seed, |rng| {
        let (p, q) = (rng.random::<f64>(), rng.random::<f64>());
        let (a, b) = (1.0 - 2.0 * p, 1.0 - 2.0 * q);
        ([a, b, (PI * a).sin() * (3.0 * b).tanh()], [p, q])
    })
}

/// A noisy unit circle in 2-D: `y = [cos a, sin a] + noise`, `a ~ U(0, 2 pi)`; latent `[a]`.
pub fn noisy_circle(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    build("circle", n, noise_sd, seed, |rng| {
        let a = 2.0 * PI * rng.random::<f64>();
        ([a.cos(), a.sin()], [a])
    })
}

/// Two interleaved half circles in 2-D: moon 0 is `[cos a, sin a]`, moon 1 is
/// `[1 - cos a, 1/2 - sin a]`, `a ~ U(0, pi)`; labels are the moon, latent `[a]`.
pub fn two_moons(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    let mut labels = Vec::with_capacity(n);
    let mut data = build("two-moons", n, noise_sd, seed, |rng| {
        let a = PI * rng.random::<f64>();
        let moon = usize::from(rng.random::<bool>());
        labels.push(moon);
        if moon == 0 {
            ([a.cos(), a.sin()], [a])
        } else {
            ([1.0 - a.cos(), 0.5 - a.sin()], [a])
        }
    })?;
    data.labels = Some(labels);
    data.label_names = vec!["moon 0".into(), "moon 1".into()];
    Ok(data)
}

/// A noisy S-shaped curve in 2-D (a stand-in for the principal-curve set
/// DistortedSShape, whose file the papers do not give): `t = 3 pi (u - 1/2)`,
/// `y = [sin t, sign(t)(cos t - 1)] + noise`; latent `[t]`.
pub fn noisy_s_shape(n: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    build("s-shape", n, noise_sd, seed, |rng| {
        let t = 3.0 * PI * (rng.random::<f64>() - 0.5);
        ([t.sin(), t.signum() * (t.cos() - 1.0)], [t])
    })
}

/// Gaussian blobs: `centres` centres drawn uniformly in `[-10, 10]^p`, then `n_per` points
/// per centre with standard deviation `sd`; labels are the blob, in blocks.
pub fn blobs(n_per: usize, centres: usize, p: usize, sd: f64, seed: u64) -> Result<Dataset> {
    check(n_per * centres, sd)?;
    if p == 0 {
        return Err(Error::invalid(
            "p",
            "the number of features must be at least 1",
        ));
    }
    let mut rng = seeded_rng(seed);
    let c = DMatrix::from_fn(centres, p, |_, _| rng.random_range(-10.0..10.0));
    let normal = Normal::new(0.0, sd).expect("a valid standard deviation");
    let n = n_per * centres;
    let y = DMatrix::from_fn(n, p, |i, j| c[(i / n_per, j)] + normal.sample(&mut rng));
    let mut data = Dataset::from_points("blobs", y);
    data.labels = Some((0..n).map(|i| i / n_per).collect());
    data.label_names = (0..centres).map(|k| format!("blob {k}")).collect();
    Ok(data)
}

/// A branching trajectory with known time and branch, as single-cell trajectories are
/// simulated: in a latent plane, a trunk of length 1 ends at the origin (the branch point),
/// where `branches` arms of length 1 leave at angles spread over 240 degrees around the
/// trunk's direction (none doubling back along it). Each point lies on a segment chosen
/// uniformly (the trunk or an arm) at a uniform position; its time is the distance from the
/// trunk's start (0 to 1 on the trunk, 1 to 2 on the arms). The plane is mapped into `p`
/// dimensions by a random orthonormal `p x 2` matrix (distances kept), plus isotropic noise
/// of standard deviation `noise_sd` per dimension. Labels are the segment (`trunk`,
/// `branch 1`, ...); `latent` is the time (n x 1).
pub fn branching(n: usize, branches: usize, p: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    check(n, noise_sd)?;
    if !(2..=12).contains(&branches) {
        return Err(Error::invalid(
            "branches",
            format!("expected 2 to 12 arms after the branch point, got {branches}"),
        ));
    }
    if p < 2 {
        return Err(Error::invalid(
            "p",
            "the data need at least 2 dimensions to hold the branching plane",
        ));
    }
    let mut rng = seeded_rng(seed);
    let base: f64 = rng.random_range(0.0..2.0 * PI);
    let spread = 2.0 * PI / 3.0;
    let direction = |angle: f64| [angle.cos(), angle.sin()];
    let arms: Vec<[f64; 2]> = (0..branches)
        .map(|b| direction(base - spread + 2.0 * spread * b as f64 / (branches - 1) as f64))
        .collect();
    let trunk = direction(base);
    let normal = Normal::new(0.0, 1.0).expect("a valid standard deviation");
    let gauss = DMatrix::from_fn(p, 2, |_, _| normal.sample(&mut rng));
    let basis = gauss.qr().q();
    let noise = Normal::new(0.0, noise_sd.max(f64::MIN_POSITIVE)).expect("a valid sd");
    let mut y = DMatrix::zeros(n, p);
    let mut time = DMatrix::zeros(n, 1);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let segment = rng.random_range(0..=branches);
        let u: f64 = rng.random();
        let (point, t) = if segment == 0 {
            // From -trunk (time 0) to the origin (time 1).
            ([-(1.0 - u) * trunk[0], -(1.0 - u) * trunk[1]], u)
        } else {
            let a = arms[segment - 1];
            ([u * a[0], u * a[1]], 1.0 + u)
        };
        for j in 0..p {
            let e = if noise_sd > 0.0 {
                noise.sample(&mut rng)
            } else {
                0.0
            };
            y[(i, j)] = basis[(j, 0)] * point[0] + basis[(j, 1)] * point[1] + e;
        }
        time[(i, 0)] = t;
        labels.push(segment);
    }
    let mut data = Dataset::from_points("branching", y);
    data.labels = Some(labels);
    data.label_names = std::iter::once("trunk".to_string())
        .chain((1..=branches).map(|b| format!("branch {b}")))
        .collect();
    data.latent = Some(time);
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Generator = fn(usize, f64, u64) -> Result<Dataset>;

    #[test]
    fn swiss_roll_follows_the_paper_formula() {
        let d = swiss_roll(500, 0.0, 3).unwrap();
        let x = d.latent.as_ref().unwrap();
        for i in 0..d.n() {
            let (t, h) = (x[(i, 0)], x[(i, 1)]);
            assert!((0.75 * PI..=2.25 * PI).contains(&t));
            assert!((0.0..=10.0).contains(&h));
            assert_eq!(d.points[(i, 0)], 0.35 * t * t.cos());
            assert_eq!(d.points[(i, 1)], h);
            assert_eq!(d.points[(i, 2)], 0.35 * t * t.sin());
        }
        // The draws cover the ranges.
        let tmin = x.column(0).min();
        let tmax = x.column(0).max();
        assert!(tmin < 0.8 * PI && tmax > 2.2 * PI);
    }

    #[test]
    fn seeds_are_reproducible_and_distinct() {
        let gens: [Generator; 7] = [
            swiss_roll,
            s_curve,
            helix,
            twin_peaks,
            noisy_circle,
            two_moons,
            noisy_s_shape,
        ];
        for g in gens {
            let a = g(50, 0.1, 1).unwrap();
            assert_eq!(a, g(50, 0.1, 1).unwrap(), "{}", a.name);
            assert_ne!(a.points, g(50, 0.1, 2).unwrap().points, "{}", a.name);
            assert_eq!(a.latent.as_ref().unwrap().nrows(), 50);
        }
        assert!(swiss_roll(0, 0.0, 1).is_err());
        assert!(helix(10, -1.0, 1).is_err());
    }

    #[test]
    fn helix_closes_and_moons_are_labelled() {
        let h = helix(400, 0.0, 5).unwrap();
        for i in 0..h.n() {
            let t = h.latent.as_ref().unwrap()[(i, 0)];
            let r = (h.points[(i, 0)].powi(2) + h.points[(i, 1)].powi(2)).sqrt();
            assert!((r - (2.0 + (8.0 * t).cos())).abs() < 1e-12);
        }
        let m = two_moons(200, 0.0, 5).unwrap();
        let labels = m.labels.unwrap();
        for (i, &l) in labels.iter().enumerate() {
            let (a, b) = (m.points[(i, 0)], m.points[(i, 1)]);
            let r = if l == 0 {
                (a * a + b * b).sqrt()
            } else {
                ((1.0 - a).powi(2) + (0.5 - b).powi(2)).sqrt()
            };
            assert!((r - 1.0).abs() < 1e-12);
        }
        assert!(labels.contains(&0) && labels.contains(&1));
    }

    #[test]
    fn blobs_are_in_blocks_around_their_centres() {
        let b = blobs(30, 3, 4, 0.5, 9).unwrap();
        assert_eq!(b.n(), 90);
        let labels = b.labels.unwrap();
        assert_eq!(labels[29], 0);
        assert_eq!(labels[30], 1);
        for k in 0..3 {
            let rows: Vec<usize> = (0..90).filter(|&i| labels[i] == k).collect();
            let spread: f64 = rows
                .iter()
                .map(|&i| (b.points.row(i) - b.points.row(rows[0])).norm())
                .fold(0.0, f64::max);
            assert!(spread < 6.0, "blob {k} spread {spread}");
        }
    }

    #[test]
    fn branching_points_lie_on_their_segments_with_their_time() {
        let d = branching(600, 3, 10, 0.0, 7).unwrap();
        let (y, time, labels) = (
            &d.points,
            d.latent.as_ref().unwrap(),
            d.labels.as_ref().unwrap(),
        );
        assert_eq!(y.shape(), (600, 10));
        assert_eq!(d.label_names.len(), 4);
        // Without noise the distance from the branch point (the origin) is 1 - t on the
        // trunk and t - 1 on an arm, and the points span a plane (rank 2).
        for i in 0..600 {
            let r = y.row(i).norm();
            let t = time[(i, 0)];
            let expected = if labels[i] == 0 { 1.0 - t } else { t - 1.0 };
            assert!((r - expected).abs() < 1e-12, "{r} vs {expected}");
            assert!((labels[i] == 0) == (t <= 1.0));
        }
        let sv = y.clone().svd(false, false).singular_values;
        assert!(sv[2] < 1e-10 * sv[0]);
        // Every segment gets points; the arms leave in distinct directions, none back along
        // the trunk (angles at least 60 degrees from the trunk's reverse).
        for s in 0..4 {
            assert!(labels.iter().filter(|&&l| l == s).count() > 100);
        }
        let mean_dir = |s: usize| {
            let rows: Vec<usize> = (0..600).filter(|&i| labels[i] == s).collect();
            let m = rows
                .iter()
                .fold(nalgebra::RowDVector::zeros(10), |acc, &i| acc + y.row(i));
            let norm = m.norm();
            m / norm
        };
        let trunk = mean_dir(0);
        for a in 1..4 {
            assert!(mean_dir(a).dot(&trunk) < 0.5 + 1e-9);
        }
        assert!(branching(10, 1, 5, 0.0, 0).is_err());
        assert!(branching(10, 3, 1, 0.0, 0).is_err());
        assert_eq!(
            branching(50, 2, 4, 0.1, 3).unwrap().points,
            branching(50, 2, 4, 0.1, 3).unwrap().points
        );
    }
}
