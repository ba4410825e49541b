//! Trajectories on trees with any number of branch points, as single-cell trajectories
//! are simulated: segments (the trunk and the branches) joined end to start, each along its
//! own latent axis, mapped into `p` dimensions with isotropic noise.

use super::check;
use crate::Dataset;
use nalgebra::DMatrix;
use rand::Rng as _;
use rand_distr::{Distribution, Normal};
use unfold_core::{seeded_rng, Error, Result};

/// The shape of a tree: segment 0 is the trunk (time starts at its start); segment `s > 0`
/// starts at the end of segment `parents[s] < s`. Each segment has a length and a share of
/// the cells (its density relative to the others).
#[derive(Clone, Debug, PartialEq)]
pub struct TreeSpec {
    /// The parent of each segment (`parents[0]`, the trunk's, is unused).
    pub parents: Vec<usize>,
    /// The length of each segment in the latent space.
    pub lengths: Vec<f64>,
    /// The relative number of cells on each segment.
    pub weights: Vec<f64>,
}

impl TreeSpec {
    /// Segments of length 1 and equal density under the given parents.
    pub fn uniform(parents: Vec<usize>) -> Self {
        let s = parents.len();
        TreeSpec {
            parents,
            lengths: vec![1.0; s],
            weights: vec![1.0; s],
        }
    }

    /// One segment: no branch point.
    pub fn linear() -> Self {
        TreeSpec::uniform(vec![0])
    }

    /// A trunk into one branch point with `arms` branches.
    pub fn multifurcation(arms: usize) -> Self {
        TreeSpec::uniform(
            std::iter::once(0)
                .chain(std::iter::repeat_n(0, arms))
                .collect(),
        )
    }

    /// A trunk into two branches, the first of which splits in two again: two branch
    /// points.
    pub fn two_level() -> Self {
        TreeSpec::uniform(vec![0, 0, 0, 1, 1])
    }

    /// A full binary tree of `levels` splits: `2^levels - 1` branch points.
    pub fn binary(levels: u32) -> Self {
        let segments = (1usize << (levels + 1)) - 1;
        TreeSpec::uniform((0..segments).map(|s| s.saturating_sub(1) / 2).collect())
    }

    /// The number of segments.
    pub fn segments(&self) -> usize {
        self.parents.len()
    }

    /// The number of branch points: segment ends with two or more children.
    pub fn branch_points(&self) -> usize {
        (0..self.segments())
            .filter(|&s| self.children(s) >= 2)
            .count()
    }

    fn children(&self, s: usize) -> usize {
        (1..self.segments())
            .filter(|&c| self.parents[c] == s)
            .count()
    }

    /// The milestone network: node 0 is the trunk's start, node `s + 1` the end of segment
    /// `s`; segment `s` is the edge `(start, s + 1, length)`.
    pub fn milestones(&self) -> Vec<(usize, usize, f64)> {
        (0..self.segments())
            .map(|s| {
                let start = if s == 0 { 0 } else { self.parents[s] + 1 };
                (start, s + 1, self.lengths[s])
            })
            .collect()
    }

    fn check(&self) -> Result<()> {
        let s = self.segments();
        if s == 0 || self.lengths.len() != s || self.weights.len() != s {
            return Err(Error::invalid(
                "tree",
                format!(
                    "give one parent, length and weight per segment (at least the trunk), got \
                     {} parents, {} lengths and {} weights",
                    s,
                    self.lengths.len(),
                    self.weights.len()
                ),
            ));
        }
        if let Some(c) = (1..s).find(|&c| self.parents[c] >= c) {
            return Err(Error::invalid(
                "tree",
                format!(
                    "segment {c} starts at segment {}, which is not an earlier one",
                    self.parents[c]
                ),
            ));
        }
        let positive = |v: &[f64]| v.iter().all(|x| x.is_finite() && *x > 0.0);
        if !positive(&self.lengths) || !positive(&self.weights) {
            return Err(Error::invalid(
                "tree",
                "segment lengths and weights must be positive and finite",
            ));
        }
        Ok(())
    }
}

/// Points on the tree `spec`: each point lies on a segment drawn by the weights, at a
/// uniform position along it. Segment `s` runs along latent axis `s` from its parent's end,
/// so that branches leave each branch point in orthogonal directions and a tree of S
/// segments spans S latent dimensions; the latent space is mapped into `p >= S` dimensions
/// by a random orthonormal `p x S` matrix (distances kept), plus isotropic noise of standard
/// deviation `noise_sd` per dimension. Labels are the segment (`trunk`, `segment 1`, ...);
/// `latent` is n x 2: the time (the distance along the tree from the trunk's start) and the
/// fraction of its segment a point lies at, so that each point's position on the milestone
/// network ([`TreeSpec::milestones`]) is its segment's edge at that fraction.
pub fn tree(n: usize, spec: &TreeSpec, p: usize, noise_sd: f64, seed: u64) -> Result<Dataset> {
    check(n, noise_sd)?;
    spec.check()?;
    let s = spec.segments();
    if p < s {
        return Err(Error::invalid(
            "p",
            format!("a tree of {s} segments spans {s} dimensions; give p >= {s}, got {p}"),
        ));
    }
    // The latent start of each segment and the time there.
    let mut start = DMatrix::zeros(s, s);
    let mut t0 = vec![0.0; s];
    for c in 1..s {
        let a = spec.parents[c];
        let mut row = start.row(a).into_owned();
        row[a] += spec.lengths[a];
        start.set_row(c, &row);
        t0[c] = t0[a] + spec.lengths[a];
    }
    let mut rng = seeded_rng(seed);
    let normal = Normal::new(0.0, 1.0).expect("a valid standard deviation");
    let gauss = DMatrix::from_fn(p, s, |_, _| normal.sample(&mut rng));
    let basis = gauss.qr().q();
    let total: f64 = spec.weights.iter().sum();
    let noise = Normal::new(0.0, noise_sd.max(f64::MIN_POSITIVE)).expect("a valid sd");
    let mut y = DMatrix::zeros(n, p);
    let mut latent = DMatrix::zeros(n, 2);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let mut pick = rng.random::<f64>() * total;
        let segment = (0..s)
            .find(|&k| {
                pick -= spec.weights[k];
                pick < 0.0
            })
            .unwrap_or(s - 1);
        let u: f64 = rng.random();
        let mut z = start.row(segment).transpose();
        z[segment] += u * spec.lengths[segment];
        let point = &basis * z;
        for j in 0..p {
            let e = if noise_sd > 0.0 {
                noise.sample(&mut rng)
            } else {
                0.0
            };
            y[(i, j)] = point[j] + e;
        }
        latent[(i, 0)] = t0[segment] + u * spec.lengths[segment];
        latent[(i, 1)] = u;
        labels.push(segment);
    }
    let mut data = Dataset::from_points("tree", y);
    data.labels = Some(labels);
    data.label_names = std::iter::once("trunk".to_string())
        .chain((1..s).map(|k| format!("segment {k}")))
        .collect();
    data.latent = Some(latent);
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The presets have the branch points they say; the points lie on their segments at
    /// the time and fraction recorded (noise-free: distances from the trunk's start along
    /// the tree are the recorded times), and bad specs are refused.
    #[test]
    fn points_lie_on_the_tree_at_their_time() {
        assert_eq!(TreeSpec::linear().branch_points(), 0);
        assert_eq!(TreeSpec::multifurcation(3).branch_points(), 1);
        assert_eq!(TreeSpec::two_level().branch_points(), 2);
        assert_eq!(TreeSpec::binary(2).branch_points(), 3);
        assert_eq!(TreeSpec::binary(2).segments(), 7);
        assert_eq!(
            TreeSpec::two_level().milestones(),
            [
                (0, 1, 1.0),
                (1, 2, 1.0),
                (1, 3, 1.0),
                (2, 4, 1.0),
                (2, 5, 1.0)
            ]
        );
        let spec = TreeSpec::binary(2);
        let data = tree(500, &spec, 10, 0.0, 3).unwrap();
        let (y, latent) = (&data.points, data.latent.as_ref().unwrap());
        let labels = data.labels.as_ref().unwrap();
        // The trunk's start: a point at time t on the trunk is at distance t from it.
        let i0 = (0..500).find(|&i| labels[i] == 0).unwrap();
        let origin = y.row(i0).into_owned();
        let dir = (0..500)
            .filter(|&i| labels[i] == 0 && (latent[(i, 0)] - latent[(i0, 0)]).abs() > 0.3)
            .map(|i| (y.row(i) - &origin) / (latent[(i, 0)] - latent[(i0, 0)]))
            .next()
            .unwrap();
        let start = &origin - dir * latent[(i0, 0)];
        for i in 0..500 {
            let seg = labels[i];
            let (t, u) = (latent[(i, 0)], latent[(i, 1)]);
            assert!((0.0..=1.0).contains(&u));
            let depth = {
                let (mut d, mut k) = (0, seg);
                while k > 0 {
                    k = spec.parents[k];
                    d += 1;
                }
                d
            };
            assert!((t - (depth as f64 + u)).abs() < 1e-12, "{t} {depth} {u}");
            // Orthogonal segments: the squared distance from the start is the sum of the
            // squared lengths walked, here depth full segments and u of the last.
            let d2 = (y.row(i) - &start).norm_squared();
            assert!(
                (d2 - (depth as f64 + u * u)).abs() < 1e-9,
                "{d2} {depth} {u}"
            );
        }
        let bad = TreeSpec::uniform(vec![0, 1]);
        assert!(tree(10, &bad, 5, 0.0, 0).is_err());
        assert!(tree(10, &TreeSpec::binary(2), 6, 0.0, 0).is_err());
        let mut zero = TreeSpec::linear();
        zero.lengths[0] = 0.0;
        assert!(tree(10, &zero, 5, 0.0, 0).is_err());
    }
}
