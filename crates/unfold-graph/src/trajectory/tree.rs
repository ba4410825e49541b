//! The tree over the centres: its edge lengths, distances along it between positions on
//! its edges, branch points, and the projection of a cell onto it.

use super::Position;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::collections::HashSet;
use unfold_core::{Error, Result};

/// The tree over the centres with its edge lengths (Euclidean, from the centres).
pub(super) struct Tree {
    /// `adjacent[c]`: `(neighbour, length)`, by ascending neighbour.
    pub(super) adjacent: Vec<Vec<(usize, f64)>>,
    /// Whether each centre is a branch point (degree above 2, or as left by
    /// [`Tree::mark_branch_points`]).
    pub(super) branch: Vec<bool>,
    /// The edges `(min, max)` of the links inside a junction: the paths of fewer than
    /// `min_branch` edges between two branch points, which [`Tree::mark_branch_points`]
    /// reads as one multifurcation (a link continues the state it is entered from).
    pub(super) links: HashSet<(usize, usize)>,
}

impl Tree {
    pub(super) fn new(centres: &DMatrix<f64>, edges: &[(usize, usize)]) -> Result<Tree> {
        let k = centres.nrows();
        if k < 2 {
            return Err(Error::invalid(
                "ncenters",
                "ordering cells needs a tree of at least 2 centres",
            ));
        }
        if edges.len() != k - 1 {
            return Err(Error::invalid(
                "tree",
                format!(
                    "a tree over {k} centres has {} edges, not {}",
                    k - 1,
                    edges.len()
                ),
            ));
        }
        let mut adjacent = vec![Vec::new(); k];
        for &(a, b) in edges {
            if a >= k || b >= k || a == b {
                return Err(Error::invalid(
                    "tree",
                    format!("edge ({a}, {b}) is not a pair of distinct centres 0..{k}"),
                ));
            }
            let length = (centres.row(a) - centres.row(b)).norm();
            adjacent[a].push((b, length));
            adjacent[b].push((a, length));
        }
        for list in &mut adjacent {
            list.sort_by_key(|&(c, _)| c);
        }
        let branch = adjacent.iter().map(|a| a.len() > 2).collect();
        let tree = Tree {
            adjacent,
            branch,
            links: HashSet::new(),
        };
        if tree.distances_from(0).iter().any(|d| d.is_infinite()) {
            return Err(Error::invalid(
                "tree",
                "the edges do not connect every centre, so they are not a spanning tree",
            ));
        }
        Ok(tree)
    }

    pub(super) fn degree(&self, c: usize) -> usize {
        self.adjacent[c].len()
    }

    /// Peels every leaf `min_branch - 1` times (all of a round's leaves at once) and marks
    /// as branch points the centres with at least three neighbours left. Two branch points
    /// joined by a path of fewer than `min_branch` edges form one junction: the path is a
    /// link ([`Tree::links`]), as a side branch that short is a spur.
    pub(super) fn mark_branch_points(&mut self, min_branch: usize) {
        let k = self.adjacent.len();
        let mut degree: Vec<usize> = (0..k).map(|c| self.degree(c)).collect();
        let mut gone = vec![false; k];
        for _ in 1..min_branch {
            let leaves: Vec<usize> = (0..k).filter(|&c| !gone[c] && degree[c] <= 1).collect();
            if leaves.is_empty() {
                break;
            }
            for &c in &leaves {
                gone[c] = true;
            }
            for &c in &leaves {
                for &(nb, _) in &self.adjacent[c] {
                    if !gone[nb] {
                        degree[nb] -= 1;
                    }
                }
            }
        }
        self.branch = (0..k).map(|c| !gone[c] && degree[c] > 2).collect();
        self.links.clear();
        let key = |a: usize, b: usize| (a.min(b), a.max(b));
        for b in (0..k).filter(|&c| self.branch[c]) {
            for &(first, _) in &self.adjacent[b] {
                // Walk away from `b` through the centres left with two neighbours.
                let (mut prev, mut at, mut path) = (b, first, vec![key(b, first)]);
                while !gone[at] && !self.branch[at] && degree[at] == 2 && path.len() < min_branch {
                    let next = self.adjacent[at]
                        .iter()
                        .map(|&(c, _)| c)
                        .find(|&c| c != prev && !gone[c])
                        .expect("a centre with two neighbours left has one ahead");
                    path.push(key(at, next));
                    (prev, at) = (at, next);
                }
                if !gone[at] && self.branch[at] && path.len() < min_branch {
                    self.links.extend(path);
                }
            }
        }
    }

    /// Whether the edge from centre `at` to `next` continues the state that reached `at`:
    /// `at` is not a branch point, or the edge is a junction's link.
    pub(super) fn continues(&self, at: usize, next: usize) -> bool {
        !self.branch[at] || self.links.contains(&(at.min(next), at.max(next)))
    }

    /// The branch points, one per junction (its lowest centre), ascending.
    pub(super) fn junctions(&self) -> Vec<usize> {
        let k = self.adjacent.len();
        let mut seen = vec![false; k];
        let mut out = Vec::new();
        for b in (0..k).filter(|&c| self.branch[c]) {
            if seen[b] {
                continue;
            }
            out.push(b);
            let mut stack = vec![b];
            seen[b] = true;
            while let Some(u) = stack.pop() {
                for &(v, _) in &self.adjacent[u] {
                    if !seen[v] && self.links.contains(&(u.min(v), u.max(v))) {
                        seen[v] = true;
                        stack.push(v);
                    }
                }
            }
        }
        out
    }

    fn length(&self, a: usize, b: usize) -> f64 {
        self.adjacent[a]
            .iter()
            .find(|&&(c, _)| c == b)
            .map(|&(_, l)| l)
            .expect("positions lie on edges of the tree")
    }

    /// Tree distances from centre `s` to every centre (infinite where unreachable).
    pub(super) fn distances_from(&self, s: usize) -> Vec<f64> {
        path_lengths(&self.adjacent, s)
    }

    /// Distance along the tree from position `p` to every position in `all`.
    pub(super) fn distances_along(&self, p: Position, all: &[Position]) -> Vec<f64> {
        let length = self.length(p.from, p.to);
        let (da, db) = (self.distances_from(p.from), self.distances_from(p.to));
        let to_ends = [(p.t.abs() * length, &da), ((1.0 - p.t) * length, &db)];
        all.par_iter()
            .map(|q| {
                let lq = self.length(q.from, q.to);
                if (q.from, q.to) == (p.from, p.to) {
                    return (q.t - p.t).abs() * lq;
                }
                if (q.from, q.to) == (p.to, p.from) {
                    return (1.0 - q.t - p.t).abs() * lq;
                }
                let q_ends = [(q.from, q.t.abs() * lq), (q.to, (1.0 - q.t) * lq)];
                let mut best = f64::INFINITY;
                for &(dp, d) in &to_ends {
                    for &(v, dq) in &q_ends {
                        best = best.min(dp + d[v] + dq);
                    }
                }
                best
            })
            .collect()
    }
}

/// Lengths of the paths from node `s` to every node of a forest given by its adjacency
/// lists `(neighbour, edge length)` (infinite where unreachable).
pub(super) fn path_lengths(adjacent: &[Vec<(usize, f64)>], s: usize) -> Vec<f64> {
    let mut d = vec![f64::INFINITY; adjacent.len()];
    d[s] = 0.0;
    let mut stack = vec![s];
    while let Some(u) = stack.pop() {
        for &(v, l) in &adjacent[u] {
            if d[v].is_infinite() {
                d[v] = d[u] + l;
                stack.push(v);
            }
        }
    }
    d
}

/// The index whose `key(v[i])` is least, the smallest index among ties.
pub(super) fn argmin_by(v: &[usize], key: impl Fn(usize) -> f64) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if key(x) < key(v[best]) {
            best = i;
        }
    }
    best
}

/// The position of point `i` on the edges at its nearest centre `c`: clamped to each edge,
/// but past `c` where `c` is a leaf; the nearest of these, ties to the smaller neighbour.
pub(super) fn project(
    tree: &Tree,
    centres: &DMatrix<f64>,
    z: &DMatrix<f64>,
    i: usize,
    c: usize,
) -> Position {
    let leaf = tree.degree(c) == 1;
    let mut best = (
        f64::INFINITY,
        Position {
            from: c,
            to: c,
            t: 0.0,
        },
    );
    for &(nb, _) in &tree.adjacent[c] {
        let dir = centres.row(nb) - centres.row(c);
        let rel = z.row(i) - centres.row(c);
        let len2 = dir.norm_squared();
        let mut t = if len2 > 0.0 {
            rel.dot(&dir) / len2
        } else {
            0.0
        };
        t = if leaf { t.min(1.0) } else { t.clamp(0.0, 1.0) };
        let gap = (rel - dir * t).norm_squared();
        if gap < best.0 {
            best = (gap, Position { from: c, to: nb, t });
        }
    }
    best.1
}

/// The index of the largest value, the smallest index among ties.
pub(super) fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}
