//! An exact kd-tree (Friedman, Bentley & Finkel 1977) for low-dimensional points.
//!
//! Nodes split at the median of the coordinate with the largest spread. A search keeps,
//! for every coordinate, a lower bound on `|x_c - q_c|` over the cell being visited, and
//! skips a cell only when the bound on its squared distance is *strictly* larger than the
//! current k-th distance (or the radius). Both the bound and the point distances are
//! summed in coordinate order from rounded, monotone operations, so the bound never
//! exceeds the computed distance of a point in the cell: pruning is exact in floating
//! point, and equal distances are resolved by index exactly as brute force does.

use crate::rows::{sq_dist, Rows};

/// Cells with at most this many points are leaves.
const LEAF_SIZE: usize = 12;

enum Node {
    /// Points `start..end` of the tree order.
    Leaf { start: usize, end: usize },
    /// Points in `left` have coordinate `dim` at most `value`, points in `right` at least.
    Split {
        dim: usize,
        value: f64,
        left: usize,
        right: usize,
    },
}

/// A kd-tree over the rows of a point set.
pub(crate) struct KdTree {
    /// The points, row-major, in tree order.
    points: Rows,
    /// `order[t]` is the original index of the point at tree position `t`.
    order: Vec<usize>,
    nodes: Vec<Node>,
}

/// The k best `(squared distance, index)` pairs so far, sorted lexicographically.
pub(crate) struct Best {
    k: usize,
    items: Vec<(f64, usize)>,
}

impl Best {
    pub(crate) fn new(k: usize) -> Self {
        Best {
            k,
            items: Vec::with_capacity(k + 1),
        }
    }

    /// The squared distance a point must not exceed to enter (infinite until full).
    fn worst(&self) -> f64 {
        if self.items.len() < self.k {
            f64::INFINITY
        } else {
            self.items[self.k - 1].0
        }
    }

    /// Offers a candidate; keeps the k lexicographically smallest `(d2, j)`.
    pub(crate) fn offer(&mut self, d2: f64, j: usize) {
        if self.items.len() == self.k {
            let (wd, wj) = self.items[self.k - 1];
            if d2 > wd || (d2 == wd && j > wj) {
                return;
            }
        }
        let pos = self
            .items
            .partition_point(|&(d, i)| d < d2 || (d == d2 && i < j));
        self.items.insert(pos, (d2, j));
        self.items.truncate(self.k);
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
        let mut order: Vec<usize> = (0..n).collect();
        let mut nodes = Vec::with_capacity(2 * n / LEAF_SIZE + 1);
        build_node(points, &mut order, 0, n, &mut nodes);
        let p = points.dim();
        let mut data = Vec::with_capacity(n * p);
        for &i in &order {
            data.extend_from_slice(points.row(i));
        }
        KdTree {
            points: Rows::from_row_major(p, data),
            order,
            nodes,
        }
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

    /// The `k` nearest points to `q` as `(squared distance, original index)`, nearest first,
    /// ties by smaller index; the point with original index `exclude` is skipped.
    pub(crate) fn nearest(&self, q: &[f64], k: usize, exclude: Option<usize>) -> Vec<(f64, usize)> {
        let mut best = Best::new(k);
        let mut off = vec![0.0; q.len()];
        self.visit_knn(0, q, exclude, &mut best, &mut off);
        best.into_sorted()
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
        let mut off = vec![0.0; q.len()];
        self.visit_ball(0, q, radius, exclude, &mut found, &mut off);
        found
    }

    fn visit_knn(
        &self,
        node: usize,
        q: &[f64],
        exclude: Option<usize>,
        best: &mut Best,
        off: &mut [f64],
    ) {
        match self.nodes[node] {
            Node::Leaf { start, end } => {
                for t in start..end {
                    let j = self.order[t];
                    if Some(j) != exclude {
                        best.offer(sq_dist(self.points.row(t), q), j);
                    }
                }
            }
            Node::Split {
                dim,
                value,
                left,
                right,
            } => {
                let (near, far, gap) = split_sides(q[dim], value, left, right);
                self.visit_knn(near, q, exclude, best, off);
                let old = off[dim];
                off[dim] = old.max(gap);
                if sq_norm(off) <= best.worst() {
                    self.visit_knn(far, q, exclude, best, off);
                }
                off[dim] = old;
            }
        }
    }

    fn visit_ball(
        &self,
        node: usize,
        q: &[f64],
        radius: f64,
        exclude: Option<usize>,
        found: &mut Vec<(f64, usize)>,
        off: &mut [f64],
    ) {
        match self.nodes[node] {
            Node::Leaf { start, end } => {
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
            Node::Split {
                dim,
                value,
                left,
                right,
            } => {
                let (near, far, gap) = split_sides(q[dim], value, left, right);
                self.visit_ball(near, q, radius, exclude, found, off);
                let old = off[dim];
                off[dim] = old.max(gap);
                if sq_norm(off).sqrt() <= radius {
                    self.visit_ball(far, q, radius, exclude, found, off);
                }
                off[dim] = old;
            }
        }
    }
}

/// The child containing `x`'s side of the split, the other child, and the distance from
/// `x` to the split plane (a lower bound on `|y_dim - x|` for every `y` in the far child).
fn split_sides(x: f64, value: f64, left: usize, right: usize) -> (usize, usize, f64) {
    if x <= value {
        (left, right, value - x)
    } else {
        (right, left, x - value)
    }
}

/// `sum_c off_c^2` in coordinate order: the same rounding sequence as [`sq_dist`].
fn sq_norm(off: &[f64]) -> f64 {
    let mut s = 0.0;
    for &o in off {
        s += o * o;
    }
    s
}

/// Builds the subtree over `order[start..end]` and returns its node index.
fn build_node(
    points: &Rows,
    order: &mut [usize],
    start: usize,
    end: usize,
    nodes: &mut Vec<Node>,
) -> usize {
    let id = nodes.len();
    if end - start <= LEAF_SIZE {
        nodes.push(Node::Leaf { start, end });
        return id;
    }
    let dim = widest_coordinate(points, &order[start..end]);
    let mid = start + (end - start) / 2;
    order[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
        points.row(a)[dim].total_cmp(&points.row(b)[dim])
    });
    let value = points.row(order[mid])[dim];
    // Reserve the slot, then fill it once the children's indices are known.
    nodes.push(Node::Leaf { start, end });
    let left = build_node(points, order, start, mid, nodes);
    let right = build_node(points, order, mid, end, nodes);
    nodes[id] = Node::Split {
        dim,
        value,
        left,
        right,
    };
    id
}

/// The coordinate with the largest range over the given points.
fn widest_coordinate(points: &Rows, idx: &[usize]) -> usize {
    let p = points.dim();
    let first = points.row(idx[0]);
    let mut lo = first.to_vec();
    let mut hi = first.to_vec();
    for &i in &idx[1..] {
        for (c, &v) in points.row(i).iter().enumerate() {
            lo[c] = lo[c].min(v);
            hi[c] = hi[c].max(v);
        }
    }
    (0..p)
        .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])).then(b.cmp(&a)))
        .unwrap_or(0)
}
