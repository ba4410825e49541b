//! An exact kd-tree (Friedman, Bentley & Finkel 1977) for low-dimensional points.
//!
//! Nodes split at the median of the coordinate with the largest spread and store the
//! bounding box of their points. A search descends into the child whose box is nearer
//! first and skips a box only when its squared distance to the query is *strictly* larger
//! than the current k-th distance (or the radius). The box distance and the point
//! distances are both summed in coordinate order from rounded, monotone operations, so
//! the box distance never exceeds the computed distance of a point inside: pruning is
//! exact in floating point, and equal distances are resolved by index exactly as brute
//! force does.

use crate::rows::{sq_dist, Rows};

/// What a search looks for.
#[derive(Clone, Copy)]
pub(crate) enum Search {
    /// The k nearest points.
    Nearest(usize),
    /// All points within this Euclidean distance.
    Within(f64),
}

/// The node label of a subtree whose points carry different labels
/// ([`KdTree::node_labels`]).
pub(crate) const MIXED: usize = usize::MAX;

/// Cells with at most this many points are leaves.
const LEAF_SIZE: usize = 8;

#[derive(Clone, Copy)]
enum Node {
    /// Points `start..end` of the tree order.
    Leaf { start: usize, end: usize },
    /// Two children (node indices).
    Split { left: usize, right: usize },
}

/// A kd-tree over the rows of a point set.
pub(crate) struct KdTree {
    /// The points, row-major, in tree order.
    points: Rows,
    /// `order[t]` is the original index of the point at tree position `t`.
    order: Vec<usize>,
    nodes: Vec<Node>,
    /// Per node, the lower corner then the upper corner of its points' bounding box
    /// (`2p` numbers per node).
    boxes: Vec<f64>,
}

/// The k best `(squared distance, index)` pairs so far, sorted lexicographically.
pub(crate) struct Best {
    k: usize,
    items: Vec<(f64, usize)>,
    /// The k-th item once full; `(inf, usize::MAX)` before, so everything enters.
    worst: (f64, usize),
}

impl Best {
    pub(crate) fn new(k: usize) -> Self {
        Best {
            k,
            items: Vec::with_capacity(k),
            worst: (f64::INFINITY, usize::MAX),
        }
    }

    /// The squared distance a point must not exceed to enter (infinite until full).
    fn worst(&self) -> f64 {
        self.worst.0
    }

    /// Offers a candidate; keeps the k lexicographically smallest `(d2, j)`.
    #[inline]
    pub(crate) fn offer(&mut self, d2: f64, j: usize) {
        let (wd, wj) = self.worst;
        if d2 < wd || (d2 == wd && j < wj) {
            self.insert(d2, j);
        }
    }

    fn insert(&mut self, d2: f64, j: usize) {
        if self.items.len() == self.k {
            self.items.pop();
        }
        let mut pos = self.items.len();
        self.items.push((d2, j));
        while pos > 0 {
            let (pd, pj) = self.items[pos - 1];
            if pd < d2 || (pd == d2 && pj < j) {
                break;
            }
            self.items[pos] = (pd, pj);
            pos -= 1;
        }
        self.items[pos] = (d2, j);
        if self.items.len() == self.k {
            self.worst = self.items[self.k - 1];
        }
    }

    /// The pairs found, nearest first.
    pub(crate) fn into_sorted(self) -> Vec<(f64, usize)> {
        self.items
    }
}

impl KdTree {
    /// Builds the tree over `points` (at least one point).
    pub(crate) fn build(points: &Rows) -> Self {
        let n = points.len();
        let p = points.dim();
        let mut order: Vec<usize> = (0..n).collect();
        let mut tree = KdTree {
            points: Rows::from_row_major(p, Vec::new()),
            order: Vec::new(),
            nodes: Vec::with_capacity(4 * n / LEAF_SIZE + 1),
            boxes: Vec::with_capacity(2 * p * (4 * n / LEAF_SIZE + 1)),
        };
        tree.build_node(points, &mut order, 0, n);
        let mut data = Vec::with_capacity(n * p);
        for &i in &order {
            data.extend_from_slice(points.row(i));
        }
        tree.points = Rows::from_row_major(p, data);
        tree.order = order;
        tree
    }

    /// Builds the subtree over `order[start..end]` and returns its node index.
    fn build_node(
        &mut self,
        points: &Rows,
        order: &mut [usize],
        start: usize,
        end: usize,
    ) -> usize {
        let p = points.dim();
        let id = self.nodes.len();
        self.nodes.push(Node::Leaf { start, end });
        // Bounding box of the points.
        let first = points.row(order[start]);
        let (mut lo, mut hi) = (first.to_vec(), first.to_vec());
        for &i in &order[start + 1..end] {
            for (c, &v) in points.row(i).iter().enumerate() {
                lo[c] = lo[c].min(v);
                hi[c] = hi[c].max(v);
            }
        }
        let dim = (0..p)
            .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])).then(b.cmp(&a)))
            .unwrap_or(0);
        let spread = hi[dim] - lo[dim];
        self.boxes.extend_from_slice(&lo);
        self.boxes.extend_from_slice(&hi);
        if end - start <= LEAF_SIZE || spread == 0.0 {
            return id;
        }
        let mid = start + (end - start) / 2;
        order[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
            points.row(a)[dim].total_cmp(&points.row(b)[dim])
        });
        let left = self.build_node(points, order, start, mid);
        let right = self.build_node(points, order, mid, end);
        self.nodes[id] = Node::Split { left, right };
        id
    }

    /// Number of points in the tree.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// Original index of the point at tree position `t`.
    pub(crate) fn original(&self, t: usize) -> usize {
        self.order[t]
    }

    /// The point at tree position `t`.
    pub(crate) fn point(&self, t: usize) -> &[f64] {
        self.points.row(t)
    }

    /// Squared distance from `q` to the bounding box of `node`, summed in coordinate order
    /// like [`sq_dist`] (a lower bound on the computed distance of every point inside).
    #[inline]
    fn box_sq_dist(&self, node: usize, q: &[f64]) -> f64 {
        let p = q.len();
        let b = &self.boxes[2 * p * node..2 * p * (node + 1)];
        let (lo, hi) = b.split_at(p);
        let mut s = 0.0;
        for c in 0..p {
            let g = if q[c] < lo[c] {
                lo[c] - q[c]
            } else if q[c] > hi[c] {
                q[c] - hi[c]
            } else {
                0.0
            };
            s += g * g;
        }
        s
    }

    /// The children of a split node, nearer box first, with their box distances.
    #[inline]
    fn ordered_children(&self, left: usize, right: usize, q: &[f64]) -> [(usize, f64); 2] {
        let (bl, br) = (self.box_sq_dist(left, q), self.box_sq_dist(right, q));
        if bl <= br {
            [(left, bl), (right, br)]
        } else {
            [(right, br), (left, bl)]
        }
    }

    /// The `k` nearest points to `q` as `(squared distance, original index)`, nearest first,
    /// ties by smaller index; the point with original index `exclude` is skipped.
    pub(crate) fn nearest(&self, q: &[f64], k: usize, exclude: Option<usize>) -> Vec<(f64, usize)> {
        let mut best = Best::new(k);
        self.visit_knn(0, q, exclude, &mut best, &mut 0);
        best.into_sorted()
    }

    /// How many points a search examines (its cost).
    pub(crate) fn search_cost(&self, q: &[f64], search: Search, exclude: Option<usize>) -> usize {
        let mut examined = 0;
        match search {
            Search::Nearest(k) => self.visit_knn(0, q, exclude, &mut Best::new(k), &mut examined),
            Search::Within(r) => self.visit_ball(0, q, r, exclude, &mut Vec::new(), &mut examined),
        }
        examined
    }

    fn visit_knn(
        &self,
        node: usize,
        q: &[f64],
        exclude: Option<usize>,
        best: &mut Best,
        examined: &mut usize,
    ) {
        let keep = |t: usize| Some(self.order[t]) != exclude;
        self.visit_nearest(node, q, &|_| false, &keep, best, examined);
    }

    /// The nearest-points search below `node`: subtrees for which `skip(node)` holds are
    /// not entered, points at tree positions `t` with `keep(t)` false are passed over, and
    /// a subtree is pruned when its box is farther than the current worst.
    fn visit_nearest(
        &self,
        node: usize,
        q: &[f64],
        skip: &impl Fn(usize) -> bool,
        keep: &impl Fn(usize) -> bool,
        best: &mut Best,
        examined: &mut usize,
    ) {
        if skip(node) {
            return;
        }
        match self.nodes[node] {
            Node::Leaf { start, end } => {
                *examined += end - start;
                for t in (start..end).filter(|&t| keep(t)) {
                    best.offer(sq_dist(self.points.row(t), q), self.order[t]);
                }
            }
            Node::Split { left, right } => {
                for (child, bound) in self.ordered_children(left, right, q) {
                    if bound <= best.worst() {
                        self.visit_nearest(child, q, skip, keep, best, examined);
                    }
                }
            }
        }
    }

    /// Per node, the label that all its points share, or [`MIXED`]; `label[t]` is the
    /// label of the point at tree position `t`. Children are numbered after their parent,
    /// so one backward pass suffices.
    pub(crate) fn node_labels(&self, label: &[usize]) -> Vec<usize> {
        let mut out = vec![MIXED; self.nodes.len()];
        for node in (0..self.nodes.len()).rev() {
            out[node] = match self.nodes[node] {
                Node::Leaf { start, end } => {
                    let first = label[start];
                    if label[start..end].iter().all(|&l| l == first) {
                        first
                    } else {
                        MIXED
                    }
                }
                Node::Split { left, right } if out[left] == out[right] => out[left],
                Node::Split { .. } => MIXED,
            };
        }
        out
    }

    /// Per node, the largest `value[t]` over its points (`t` a tree position); a backward
    /// pass, as for [`KdTree::node_labels`].
    pub(crate) fn node_max(&self, value: &[usize]) -> Vec<usize> {
        let mut out = vec![0; self.nodes.len()];
        for node in (0..self.nodes.len()).rev() {
            out[node] = match self.nodes[node] {
                Node::Leaf { start, end } => value[start..end].iter().copied().max().unwrap_or(0),
                Node::Split { left, right } => out[left].max(out[right]),
            };
        }
        out
    }

    /// The `k` nearest points to the point at tree position `t` among those of higher
    /// `rank` (by tree position), as `(squared distance, original index)`, nearest first,
    /// ties by smaller index; fewer when fewer rank higher. `node_max` is
    /// [`KdTree::node_max`] of `rank`: subtrees with no higher rank are skipped, the others
    /// pruned by box distance as the k-nearest search is.
    pub(crate) fn nearest_later(
        &self,
        t: usize,
        k: usize,
        rank: &[usize],
        node_max: &[usize],
    ) -> Vec<(f64, usize)> {
        let own = rank[t];
        let mut best = Best::new(k);
        self.visit_nearest(
            0,
            self.point(t),
            &|node| node_max[node] <= own,
            &|u| rank[u] > own,
            &mut best,
            &mut 0,
        );
        best.into_sorted()
    }

    /// The nearest point to the point at tree position `t` among those with a label other
    /// than `label[t]`, as `(squared distance, original index)`, ties by smaller index;
    /// `None` if every point has that label. `node_label` is [`KdTree::node_labels`] of
    /// `label`: subtrees wholly of the query's label are skipped, the others are pruned
    /// by box distance exactly as the k-nearest search is.
    pub(crate) fn nearest_other(
        &self,
        t: usize,
        label: &[usize],
        node_label: &[usize],
    ) -> Option<(f64, usize)> {
        let own = label[t];
        let mut best = Best::new(1);
        self.visit_nearest(
            0,
            self.point(t),
            &|node| node_label[node] == own,
            &|u| label[u] != own,
            &mut best,
            &mut 0,
        );
        best.into_sorted().first().copied()
    }

    /// All points within Euclidean distance `radius` of `q` (`sqrt(d2) <= radius`) as
    /// `(squared distance, original index)`, unsorted; `exclude` is skipped.
    pub(crate) fn within(
        &self,
        q: &[f64],
        radius: f64,
        exclude: Option<usize>,
    ) -> Vec<(f64, usize)> {
        let mut found = Vec::new();
        self.visit_ball(0, q, radius, exclude, &mut found, &mut 0);
        found
    }

    fn visit_ball(
        &self,
        node: usize,
        q: &[f64],
        radius: f64,
        exclude: Option<usize>,
        found: &mut Vec<(f64, usize)>,
        examined: &mut usize,
    ) {
        match self.nodes[node] {
            Node::Leaf { start, end } => {
                *examined += end - start;
                for t in start..end {
                    let j = self.order[t];
                    if Some(j) != exclude {
                        let d2 = sq_dist(self.points.row(t), q);
                        if d2.sqrt() <= radius {
                            found.push((d2, j));
                        }
                    }
                }
            }
            Node::Split { left, right } => {
                for (child, bound) in self.ordered_children(left, right, q) {
                    if bound.sqrt() <= radius {
                        self.visit_ball(child, q, radius, exclude, found, examined);
                    }
                }
            }
        }
    }
}
