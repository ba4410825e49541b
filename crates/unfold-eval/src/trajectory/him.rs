//! The Hamming–Ipsen–Mikhailov distance between two trees (Jurman et al. 2015), computed
//! as dyneval computes its `him` metric: on the contracted trees weighted by edge length.

use super::branches::Branches;
use super::Tree;
use nalgebra::{DMatrix, SymmetricEigen};
use std::collections::{HashMap, HashSet};
use std::f64::consts::PI;
use unfold_core::{Error, Result};

/// Settings of [`him`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HimOptions {
    /// The half-width of the Lorentzian placed at each vibrational frequency in the
    /// Ipsen–Mikhailov term; dyneval passes 0.1 (`netdist(..., "HIM", ga = 0.1)`).
    pub gamma: f64,
    /// The most partial node correspondences the Hamming term's branch-and-bound search
    /// visits before it settles for the best found ([`Him::exact_matching`] is then
    /// false).
    pub max_matching_steps: usize,
}

impl Default for HimOptions {
    /// dyneval's `gamma = 0.1`; up to a million partial correspondences (a fraction of a
    /// second).
    fn default() -> Self {
        HimOptions {
            gamma: 0.1,
            max_matching_steps: 1_000_000,
        }
    }
}

/// The Hamming–Ipsen–Mikhailov distance between two trees and its two terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Him {
    /// `sqrt((hamming^2 + ipsen_mikhailov^2) / 2)`: 0 for trees that are the same up to
    /// relabelling, degree-2 nodes and a common scale of the lengths.
    pub distance: f64,
    /// The Hamming term under the best node correspondence found, in `[0, 2 / (n (n - 1))]`.
    pub hamming: f64,
    /// The Ipsen–Mikhailov term: the L2 distance between the two spectral densities.
    pub ipsen_mikhailov: f64,
    /// `n`, the node count both contracted trees are padded to.
    pub nodes: usize,
    /// Whether the node correspondence of the Hamming term is proven best (the search
    /// finished within [`HimOptions::max_matching_steps`]).
    pub exact_matching: bool,
}

impl Him {
    /// dyneval's `him` score, `1 - distance` (1 for the same tree).
    pub fn similarity(&self) -> f64 {
        1.0 - self.distance
    }
}

/// The Hamming–Ipsen–Mikhailov (HIM) distance between two trees given by their edges
/// `(a, b, length)` (see [`TrajectoryLayout::edges`](super::TrajectoryLayout)), as dyneval
/// computes its `him` metric (which is `1 - HIM`) with its defaults:
///
/// 1. each tree is contracted to its branch points and leaves (a branch's length is the
///    sum of its edges'); a tree of one branch becomes a path of two halves;
/// 2. its weighted adjacency matrix (entry `ij` = the length of the branch between `i`
///    and `j`) is divided by its sum (twice the total length), and the smaller is padded
///    with isolated nodes to the larger's `n`;
/// 3. Hamming: `H = sum_ij |A_ij - B_ij| / (n (n - 1))`; Ipsen–Mikhailov: with `ω_k` the
///    square roots of the Laplacian's eigenvalues (rounded to 5 decimals) but the
///    smallest, `ρ(ω) = K sum_k γ / ((ω - ω_k)^2 + γ^2)` normalised on `[0, ∞)`,
///    `IM = sqrt(∫_0^∞ (ρ_A - ρ_B)^2 dω)` (in closed form here; dyneval integrates
///    numerically);
/// 4. `HIM = sqrt((H^2 + IM^2) / 2)` (netdist's `rho = 1`).
///
/// One departure: dyneval aligns the two matrices by the sorted node names, so its Hamming
/// term depends on how the nodes happen to be labelled; here it is the smallest over the
/// correspondences of the nodes (a branch-and-bound search, exact unless it exceeds
/// [`HimOptions::max_matching_steps`]), so that relabelled trees are the same tree. The
/// Ipsen–Mikhailov term does not depend on labels.
///
/// Errors: an invalid tree (see [`TrajectoryLayout`](super::TrajectoryLayout)), a tree
/// whose lengths are all 0, `gamma` not finite and `> 0`, or `max_matching_steps == 0`.
pub fn him(
    pred: &[(usize, usize, f64)],
    reference: &[(usize, usize, f64)],
    opts: &HimOptions,
) -> Result<Him> {
    if !(opts.gamma.is_finite() && opts.gamma > 0.0) || opts.max_matching_steps == 0 {
        return Err(Error::invalid(
            "HimOptions",
            format!(
                "gamma must be finite and > 0 (got {}) and max_matching_steps >= 1 (got {})",
                opts.gamma, opts.max_matching_steps
            ),
        ));
    }
    let a = Network::of(pred, "predicted trajectory")?;
    let b = Network::of(reference, "reference trajectory")?;
    let n = a.nodes.max(b.nodes);
    let (hamming, exact_matching) = hamming(&a, &b, n, opts.max_matching_steps);
    let ipsen_mikhailov = ipsen_mikhailov(&frequencies(&a, n), &frequencies(&b, n), opts.gamma);
    Ok(Him {
        distance: (0.5 * (hamming * hamming + ipsen_mikhailov * ipsen_mikhailov)).sqrt(),
        hamming,
        ipsen_mikhailov,
        nodes: n,
        exact_matching,
    })
}

/// A contracted tree with its edge weights `length / (2 total length)` (so that the
/// symmetric adjacency matrix sums to 1).
pub(super) struct Network {
    pub(super) nodes: usize,
    pub(super) edges: Vec<(usize, usize, f64)>,
}

impl Network {
    pub(super) fn of(edges: &[(usize, usize, f64)], what: &str) -> Result<Network> {
        let tree = Tree::new(edges, what)?;
        let (mut nodes, mut net) = Branches::of(&tree).network();
        if net.len() == 1 {
            // dyneval's change_single_edge_into_double: a-b becomes a-m-b, halves.
            let (a, b, len) = net[0];
            net = vec![(a, nodes, 0.5 * len), (nodes, b, 0.5 * len)];
            nodes += 1;
        }
        let total: f64 = net.iter().map(|e| e.2).sum();
        if total <= 0.0 {
            return Err(Error::invalid(
                what,
                "every edge has length 0; HIM weighs the edges by their lengths and needs a positive total",
            ));
        }
        let edges = net
            .into_iter()
            .map(|(a, b, len)| (a, b, len / (2.0 * total)))
            .collect();
        Ok(Network { nodes, edges })
    }

    /// The `n x n` weighted adjacency matrix (nodes past `self.nodes` isolated).
    fn adjacency(&self, n: usize) -> DMatrix<f64> {
        let mut w = DMatrix::zeros(n, n);
        for &(a, b, x) in &self.edges {
            w[(a, b)] += x;
            w[(b, a)] += x;
        }
        w
    }
}

/// The smallest Hamming term over the node correspondences the search proves or finds,
/// and whether it is proven.
///
/// `sum_ij |A_ij - B_π(i)π(j)| = 2 sum_{pairs} |a - b|`, and since each matrix sums to 1,
/// minimising it is maximising the overlap `sum_{e in A} min(w_A(e), w_B(π(e)))`. The
/// nodes of the tree with fewer nodes are placed one at a time in breadth-first order (so
/// each after the first has its parent placed), each on an unused node of the other tree,
/// first on the neighbours of its parent's image by decreasing gain; a branch is cut when
/// its overlap plus the most the remaining edges can add (their weights paired in
/// decreasing order with the other tree's largest) does not beat the best.
fn hamming(a: &Network, b: &Network, n: usize, max_steps: usize) -> (f64, bool) {
    let (s, l) = if a.nodes <= b.nodes { (a, b) } else { (b, a) };
    let mut s_adj = vec![Vec::new(); s.nodes];
    for &(u, v, w) in &s.edges {
        s_adj[u].push((v, w));
        s_adj[v].push((u, w));
    }
    let mut l_adj = vec![Vec::new(); n];
    let mut l_weight = HashMap::new();
    for &(u, v, w) in &l.edges {
        l_adj[u].push((v, w));
        l_adj[v].push((u, w));
        *l_weight.entry((u.min(v), u.max(v))).or_insert(0.0) += w;
    }
    // Breadth-first order from a node of largest degree (the smallest such index).
    let start = (0..s.nodes)
        .max_by_key(|&v| (s_adj[v].len(), std::cmp::Reverse(v)))
        .unwrap_or(0);
    let mut order = vec![start];
    let mut parent = vec![(usize::MAX, 0.0)];
    let mut pos = vec![usize::MAX; s.nodes];
    pos[start] = 0;
    let mut head = 0;
    while head < order.len() {
        let v = order[head];
        for &(w, x) in &s_adj[v] {
            if pos[w] == usize::MAX {
                pos[w] = order.len();
                order.push(w);
                parent.push((head, x));
            }
        }
        head += 1;
    }
    // rest[k]: the edges to the parents of positions k.. gain at most their weights matched
    // in decreasing order with the largest weights of the other tree (each of its edges is
    // used at most once, and the sorted pairing maximises a sum of minima).
    let mut l_sorted: Vec<f64> = l.edges.iter().map(|e| e.2).collect();
    l_sorted.sort_by(|x, y| y.total_cmp(x));
    let mut rest = vec![0.0; order.len() + 1];
    for (k, r) in rest.iter_mut().enumerate().take(order.len()).skip(1) {
        let mut s_sorted: Vec<f64> = parent[k..].iter().map(|p| p.1).collect();
        s_sorted.sort_by(|x, y| y.total_cmp(x));
        *r = s_sorted.iter().zip(&l_sorted).map(|(a, b)| a.min(*b)).sum();
    }
    let mut search = Search {
        parent,
        rest,
        l_adj: &l_adj,
        n,
        used: vec![false; n],
        image: vec![0; order.len()],
        best: -1.0,
        best_image: Vec::new(),
        steps: 0,
        max_steps,
        cut_short: false,
    };
    search.place(0, 0.0);
    // The sum over pairs under the best correspondence, added up directly.
    let mut hit = HashSet::new();
    let mut sum = 0.0;
    for &(u, v, w) in &s.edges {
        let (x, y) = (search.best_image[pos[u]], search.best_image[pos[v]]);
        let key = (x.min(y), x.max(y));
        let wl = l_weight.get(&key).copied().unwrap_or(0.0);
        if wl > 0.0 {
            hit.insert(key);
        }
        sum += (w - wl).abs();
    }
    for &(u, v, w) in &l.edges {
        if !hit.contains(&(u.min(v), u.max(v))) {
            sum += w;
        }
    }
    (2.0 * sum / (n * (n - 1)) as f64, !search.cut_short)
}

struct Search<'a> {
    /// Per position in the order: the parent's position and the edge weight to it.
    parent: Vec<(usize, f64)>,
    /// `rest[k]`: at least the most the edges to the parents of positions `k..` can add.
    rest: Vec<f64>,
    l_adj: &'a [Vec<(usize, f64)>],
    n: usize,
    used: Vec<bool>,
    image: Vec<usize>,
    best: f64,
    best_image: Vec<usize>,
    steps: usize,
    max_steps: usize,
    cut_short: bool,
}

impl Search<'_> {
    fn place(&mut self, k: usize, overlap: f64) {
        if k == self.image.len() {
            if overlap > self.best {
                self.best = overlap;
                self.best_image = self.image.clone();
            }
            return;
        }
        if self.steps >= self.max_steps && !self.best_image.is_empty() {
            self.cut_short = true;
            return;
        }
        self.steps += 1;
        if overlap + self.rest[k] <= self.best {
            return;
        }
        // Candidates with their gains: the parent image's free neighbours first (largest
        // gain first), then every other free node (gain 0).
        let mut candidates: Vec<(usize, f64)> = Vec::with_capacity(self.n);
        if k > 0 {
            let (p, w) = self.parent[k];
            let at = self.image[p];
            for &(x, wl) in &self.l_adj[at] {
                if !self.used[x] {
                    candidates.push((x, w.min(wl)));
                }
            }
            candidates.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        }
        let near: Vec<usize> = candidates.iter().map(|c| c.0).collect();
        for x in 0..self.n {
            if !self.used[x] && !near.contains(&x) {
                candidates.push((x, 0.0));
            }
        }
        for (x, gain) in candidates {
            // Gains only decrease along the candidates: once one cannot beat the best,
            // none after it can.
            if overlap + gain + self.rest[k + 1] <= self.best {
                break;
            }
            self.used[x] = true;
            self.image[k] = x;
            self.place(k + 1, overlap + gain);
            self.used[x] = false;
            if self.cut_short {
                return;
            }
        }
    }
}

/// The vibrational frequencies `sqrt(|λ|)` of the Laplacian of the `n x n` weighted
/// adjacency, ascending, the eigenvalues rounded to 5 decimals (as netdist does), the
/// smallest left out.
pub(super) fn frequencies(net: &Network, n: usize) -> Vec<f64> {
    let w = net.adjacency(n);
    let degree = w.row_sum_tr();
    let laplacian = DMatrix::from_diagonal(&degree) - w;
    let mut lambda: Vec<f64> = SymmetricEigen::new(laplacian)
        .eigenvalues
        .iter()
        .map(|&x| (x * 1e5).round() / 1e5)
        .collect();
    lambda.sort_by(f64::total_cmp);
    lambda.iter().skip(1).map(|x| x.abs().sqrt()).collect()
}

/// `sqrt(∫_0^∞ (ρ_a - ρ_b)^2 dω)` for the normalised Lorentzian densities at the
/// frequencies `a` and `b`, in closed form.
fn ipsen_mikhailov(a: &[f64], b: &[f64], gamma: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    // K = 1 / ∫_0^∞ sum_k γ / ((ω - ω_k)^2 + γ^2) dω, each term π/2 + atan(ω_k / γ).
    let k = |w: &[f64]| {
        1.0 / w
            .iter()
            .map(|&x| 0.5 * PI + (x / gamma).atan())
            .sum::<f64>()
    };
    let (ka, kb) = (k(a), k(b));
    let cross = |x: &[f64], y: &[f64]| -> f64 {
        x.iter()
            .map(|&p| y.iter().map(|&q| lorentz_overlap(p, q, gamma)).sum::<f64>())
            .sum()
    };
    let squared = ka * ka * cross(a, a) + kb * kb * cross(b, b) - 2.0 * ka * kb * cross(a, b);
    squared.max(0.0).sqrt()
}

/// `∫_0^∞ γ^2 / (((ω - a)^2 + γ^2) ((ω - b)^2 + γ^2)) dω` for `a, b >= 0`: by partial
/// fractions, with `d = b - a`, `q = d^2 + 4γ^2` and `r = (a + b) / (a^2 + γ^2)`,
///
/// ```text
/// (γ / q) (π + atan(a/γ) + atan(b/γ)) + (γ^2 r / q) ln(1 + d r) / (d r),
/// ```
///
/// the last factor 1 at `d r = 0` (where `ln(1 + y) / y` is continued), and `1 + d r =
/// (b^2 + γ^2) / (a^2 + γ^2) > 0`.
pub(super) fn lorentz_overlap(a: f64, b: f64, gamma: f64) -> f64 {
    let g2 = gamma * gamma;
    let d = b - a;
    let q = d * d + 4.0 * g2;
    let r = (a + b) / (a * a + g2);
    let y = d * r;
    let h = if y == 0.0 { 1.0 } else { y.ln_1p() / y };
    gamma / q * (PI + (a / gamma).atan() + (b / gamma).atan()) + g2 * r * h / q
}
