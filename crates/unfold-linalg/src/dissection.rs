//! A nested-dissection fill-reducing ordering with thin separators, guided by coordinates
//! of the vertices (geometric bisection; George 1973 for nested dissection, Gilbert,
//! Miller & Teng 1998 for geometric partitioning).
//!
//! A part of the graph is cut at the median of a key: its vertices' coordinates projected
//! on each of the part's principal directions and on each axis, and the hop distance from
//! a pseudo-peripheral vertex (which follows a rolled sheet that a plane would cross
//! several times, and splits a disconnected part without a separator). The cut whose
//! smaller side has the fewest vertices with a neighbour across is kept. The vertex
//! separator is a minimum vertex cover of the edges crossing that cut (König's theorem:
//! the vertices not reached, on one side, and reached, on the other, by alternating paths
//! from the unmatched vertices of a maximum matching), so that removing it disconnects the
//! two halves with as few vertices as the cut allows. The two halves are ordered first
//! (recursively), the separator last; parts of at most [`LEAF`] vertices are ordered by
//! faer's approximate minimum degree on their own subgraph. Dense vertices (degree above
//! `10 sqrt(n)`, AMD's rule: a grounded field's ground node) are numbered after
//! everything else, where their row fills nothing.
//!
//! Points with more than 3 coordinates are first projected on their 3 leading principal
//! directions (data in more dimensions than its manifold). On a planar mesh this gives
//! separators of `O(sqrt(n))` vertices and a factor of `O(n log n)` values (George 1973);
//! a 10-NN graph's separators are a few points thick, which multiplies the constant.

use crate::dense_eigen::small_sym_eigen;
use crate::gemm::{tall_mul, tr_mul_self};
use crate::view::as_faer;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::amd;
use faer::sparse::SymbolicSparseColMatRef;
use nalgebra::{DMatrix, Matrix3, Vector3};
use unfold_core::{Error, Result};

/// Parts of at most this many vertices are ordered by minimum degree.
const LEAF: usize = 256;

/// The number of leading principal directions the points are projected on.
const DIMS: usize = 3;

const NONE: u32 = u32::MAX;

/// The nested-dissection ordering of the symmetric pattern `(indptr, indices)` (CSR, both
/// triangles; the diagonal is ignored) whose vertex `i` sits at row `i` of `points`:
/// `order[k]` is the vertex eliminated `k`-th.
///
/// # Errors
/// [`Error::DimensionMismatch`] if `points` does not have one row per vertex or has no
/// column, [`Error::NonFinite`] for a non-finite coordinate, [`Error::Numerical`] if the
/// principal directions or the minimum degree ordering fail, [`Error::Interrupted`] on a
/// stop requested while it runs.
pub(crate) fn nested_dissection(
    indptr: &[usize],
    indices: &[usize],
    points: &DMatrix<f64>,
    context: &str,
) -> Result<Vec<u32>> {
    let n = indptr.len() - 1;
    if points.nrows() != n || points.ncols() == 0 {
        return Err(Error::DimensionMismatch(format!(
            "{context}: the ordering's points are {} x {}, but the matrix has {n} rows (one \
             point per row, at least one coordinate)",
            points.nrows(),
            points.ncols()
        )));
    }
    if let Some(k) = points.iter().position(|v| !v.is_finite()) {
        return Err(Error::NonFinite {
            what: format!("{context}: the ordering's points"),
            row: k % n,
            col: k / n,
        });
    }
    let dense = (10.0 * (n as f64).sqrt()).max(16.0) as usize;
    let degree = |v: usize| {
        indices[indptr[v]..indptr[v + 1]]
            .iter()
            .filter(|&&w| w != v)
            .count()
    };
    let (sparse, dense): (Vec<u32>, Vec<u32>) =
        (0..n as u32).partition(|&v| degree(v as usize) <= dense);
    let mut d = Dissection {
        indptr,
        indices,
        coords: coordinates(points, context)?,
        side: vec![0; n],
        local: vec![NONE; n],
        order: vec![NONE; n],
        context,
    };
    d.order[sparse.len()..].copy_from_slice(&dense);
    d.dissect(sparse, 0)?;
    Ok(d.order)
}

/// The points' coordinates on their `DIMS` leading principal directions (the points
/// themselves, padded with zeros, when they have at most `DIMS` columns).
fn coordinates(points: &DMatrix<f64>, context: &str) -> Result<Vec<[f64; DIMS]>> {
    let (n, p) = points.shape();
    let mut coords = vec![[0.0; DIMS]; n];
    if p <= DIMS {
        for (i, c) in coords.iter_mut().enumerate() {
            for (j, x) in c.iter_mut().take(p).enumerate() {
                *x = points[(i, j)];
            }
        }
        return Ok(coords);
    }
    // Covariance = Y^T Y / n - mean mean^T; its leading eigenvectors (ascending values).
    let mean = points.row_mean().transpose();
    let covariance = tr_mul_self(points) / n as f64 - &mean * mean.transpose();
    let (_, vectors) = small_sym_eigen(&covariance)
        .map_err(|e| Error::numerical(context, format!("principal directions: {e}")))?;
    let top = vectors.columns(p - DIMS, DIMS).into_owned();
    let projected = tall_mul(as_faer(points), as_faer(&top));
    let shift = mean.transpose() * &top;
    for (i, c) in coords.iter_mut().enumerate() {
        for (j, x) in c.iter_mut().enumerate() {
            *x = projected[(i, j)] - shift[j];
        }
    }
    Ok(coords)
}

struct Dissection<'a> {
    indptr: &'a [usize],
    indices: &'a [usize],
    coords: Vec<[f64; DIMS]>,
    /// 0 outside the part being split, 1 and 2 its halves, 3 its separator.
    side: Vec<u8>,
    /// Work space: a vertex's index within a leaf or a side of the cut, or its hop
    /// distance; `NONE` between uses.
    local: Vec<u32>,
    order: Vec<u32>,
    context: &'a str,
}

impl Dissection<'_> {
    fn neighbours(&self, v: u32) -> &[usize] {
        let v = v as usize;
        &self.indices[self.indptr[v]..self.indptr[v + 1]]
    }

    /// Orders `part` into `order[lo..lo + part.len()]`, checking the interruption flag
    /// before each part (the whole ordering of 10^5 points takes about a second).
    fn dissect(&mut self, part: Vec<u32>, lo: usize) -> Result<()> {
        unfold_core::interrupt::check()?;
        let m = part.len();
        if m <= LEAF {
            return self.leaf(&part, lo);
        }
        let Some((a, b, separator)) = self.split(&part)? else {
            return self.leaf(&part, lo);
        };
        self.order[lo + m - separator.len()..lo + m].copy_from_slice(&separator);
        drop(part);
        let la = a.len();
        self.dissect(a, lo)?;
        self.dissect(b, lo + la)
    }

    /// The part cut in two halves and a separator, or `None` when no key splits it into two
    /// smaller parts.
    #[allow(clippy::type_complexity)]
    fn split(&mut self, part: &[u32]) -> Result<Option<(Vec<u32>, Vec<u32>, Vec<u32>)>> {
        let m = part.len();
        let mut mean = Vector3::zeros();
        for &v in part {
            mean += Vector3::from(self.coords[v as usize]);
        }
        mean /= m as f64;
        let mut covariance = Matrix3::zeros();
        for &v in part {
            let x = Vector3::from(self.coords[v as usize]) - mean;
            covariance += x * x.transpose();
        }
        let (values, vectors) = small_sym_eigen(&DMatrix::from_column_slice(
            DIMS,
            DIMS,
            covariance.as_slice(),
        ))
        .map_err(|e| Error::numerical(self.context, format!("a part's directions: {e}")))?;
        let largest = values[DIMS - 1];
        // The candidate cuts, at the median of: the projections on the part's principal
        // directions with a spread (widest first) and on the coordinate axes, and the
        // hop distance from a pseudo-peripheral vertex (which follows a curved manifold
        // where a plane would cross it several times, and splits a disconnected part
        // without a separator). The cut with the smallest boundary wins (ties: the
        // earlier).
        let mut directions: Vec<Vector3<f64>> = (0..DIMS)
            .rev()
            .filter(|&j| values[j] > 1e-12 * largest && largest > 0.0)
            .map(|j| Vector3::from_iterator(vectors.column(j).iter().copied()))
            .collect();
        if !directions.is_empty() {
            directions.extend((0..DIMS).map(|j| Vector3::ith(j, 1.0)));
        }
        let project = |d: &Self, direction: &Vector3<f64>| -> Vec<f64> {
            part.iter()
                .map(|&v| (Vector3::from(d.coords[v as usize]) - mean).dot(direction))
                .collect()
        };
        // The search for a peripheral vertex starts at one end of the widest direction.
        let start = match directions.first() {
            Some(widest) => {
                let keys = project(self, widest);
                (0..m)
                    .min_by(|&a, &b| keys[a].total_cmp(&keys[b]))
                    .unwrap_or(0)
            }
            None => 0,
        };
        let (_, peripheral) = self.hops(part, part[start]);
        let (hops, _) = self.hops(part, peripheral);
        let mut best: Option<(usize, Vec<f64>)> = None;
        let candidates = directions
            .iter()
            .map(|d| project(self, d))
            .collect::<Vec<_>>();
        for keys in candidates.into_iter().chain([hops]) {
            if !self.cut(part, &keys) {
                continue;
            }
            let boundary = self.boundary(part);
            if best.as_ref().is_none_or(|(b, _)| boundary < *b) {
                best = Some((boundary, keys));
            }
        }
        let Some((_, keys)) = best else {
            return Ok(None);
        };
        self.cut(part, &keys);
        let separator = self.separator(part);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for &v in part {
            match self.side[v as usize] {
                1 => a.push(v),
                2 => b.push(v),
                _ => {}
            }
            self.side[v as usize] = 0;
        }
        if a.len() == m || b.len() == m || separator.len() == m {
            return Ok(None);
        }
        Ok(Some((a, b, separator)))
    }

    /// The hop distance within `part` from `from` of each vertex of `part` (infinite for
    /// the vertices it does not reach), and the last vertex reached.
    fn hops(&mut self, part: &[u32], from: u32) -> (Vec<f64>, u32) {
        for &v in part {
            self.side[v as usize] = 1;
        }
        let mut queue = vec![from];
        self.local[from as usize] = 0;
        let mut head = 0;
        while let Some(&v) = queue.get(head) {
            head += 1;
            let next = self.local[v as usize] + 1;
            let (a, b) = (self.indptr[v as usize], self.indptr[v as usize + 1]);
            for &w in &self.indices[a..b] {
                if self.side[w] == 1 && self.local[w] == NONE {
                    self.local[w] = next;
                    queue.push(w as u32);
                }
            }
        }
        let keys = part
            .iter()
            .map(|&v| match self.local[v as usize] {
                NONE => f64::INFINITY,
                h => h as f64,
            })
            .collect();
        for &v in part {
            self.side[v as usize] = 0;
            self.local[v as usize] = NONE;
        }
        (keys, *queue.last().unwrap_or(&from))
    }

    /// Marks the vertices of `part` whose `keys` are below the median as side 1, the
    /// others as side 2, keeping equal keys on one side (whichever balances better).
    /// `false` (nothing marked) when every key is the median.
    fn cut(&mut self, part: &[u32], keys: &[f64]) -> bool {
        let m = part.len();
        let mut sorted = keys.to_vec();
        let (_, &mut median, _) = sorted.select_nth_unstable_by(m / 2, f64::total_cmp);
        let below = keys.iter().filter(|&&k| k < median).count();
        let up_to = keys.iter().filter(|&&k| k <= median).count();
        let inclusive = if below == 0 {
            true
        } else if up_to == m {
            false
        } else {
            up_to.abs_diff(m / 2) < below.abs_diff(m / 2)
        };
        if inclusive && up_to == m {
            return false;
        }
        for (&v, &k) in part.iter().zip(keys) {
            let first = if inclusive { k <= median } else { k < median };
            self.side[v as usize] = if first { 1 } else { 2 };
        }
        true
    }

    /// The smaller of the two sides' boundaries (vertices with a neighbour across the cut).
    fn boundary(&self, part: &[u32]) -> usize {
        let mut count = [0usize; 2];
        for &v in part {
            let s = self.side[v as usize];
            if self
                .neighbours(v)
                .iter()
                .any(|&w| matches!(self.side[w], 1 | 2) && self.side[w] != s)
            {
                count[s as usize - 1] += 1;
            }
        }
        count[0].min(count[1])
    }

    /// A minimum vertex cover of the edges crossing the cut (König): a maximum matching
    /// by augmenting paths, then the side-1 vertices not reached by alternating paths from
    /// unmatched side-1 vertices, and the side-2 vertices reached. Marks them side 3.
    fn separator(&mut self, part: &[u32]) -> Vec<u32> {
        let crosses = |d: &Self, v: u32, to: u8| d.neighbours(v).iter().any(|&w| d.side[w] == to);
        let left: Vec<u32> = part
            .iter()
            .copied()
            .filter(|&v| self.side[v as usize] == 1 && crosses(self, v, 2))
            .collect();
        let right: Vec<u32> = part
            .iter()
            .copied()
            .filter(|&v| self.side[v as usize] == 2 && crosses(self, v, 1))
            .collect();
        for (k, &v) in left.iter().enumerate().chain(right.iter().enumerate()) {
            self.local[v as usize] = k as u32;
        }
        let mut ptr = Vec::with_capacity(left.len() + 1);
        let mut adj = Vec::new();
        ptr.push(0);
        for &v in &left {
            adj.extend(
                self.neighbours(v)
                    .iter()
                    .filter(|&&w| self.side[w] == 2)
                    .map(|&w| self.local[w]),
            );
            ptr.push(adj.len());
        }
        let edges = |u: u32| &adj[ptr[u as usize]..ptr[u as usize + 1]];
        let (nl, nr) = (left.len(), right.len());
        let (mut ml, mut mr) = (vec![NONE; nl], vec![NONE; nr]);
        for u in 0..nl as u32 {
            if let Some(&w) = edges(u).iter().find(|&&w| mr[w as usize] == NONE) {
                ml[u as usize] = w;
                mr[w as usize] = u;
            }
        }
        // Augmenting paths by depth-first search, one search per unmatched vertex.
        let mut seen = vec![0u32; nr];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for (stamp, u0) in (0..nl as u32).enumerate() {
            if ml[u0 as usize] != NONE {
                continue;
            }
            let stamp = stamp as u32 + 1;
            stack.clear();
            stack.push((u0, 0));
            while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                let Some(&w) = edges(u).get(*next) else {
                    stack.pop();
                    continue;
                };
                *next += 1;
                if seen[w as usize] == stamp {
                    continue;
                }
                seen[w as usize] = stamp;
                if mr[w as usize] == NONE {
                    // Flip the path: each left vertex on the stack takes the right vertex
                    // the one above it held (the top one takes w).
                    let mut r = w;
                    for &(l, _) in stack.iter().rev() {
                        let previous = ml[l as usize];
                        ml[l as usize] = r;
                        mr[r as usize] = l;
                        r = previous;
                    }
                    break;
                }
                stack.push((mr[w as usize], 0));
            }
        }
        // Alternating reachability from the unmatched left vertices.
        let mut reached_l: Vec<bool> = ml.iter().map(|&w| w == NONE).collect();
        let mut reached_r = vec![false; nr];
        let mut queue: Vec<u32> = (0..nl as u32).filter(|&u| reached_l[u as usize]).collect();
        while let Some(u) = queue.pop() {
            for &w in edges(u) {
                if !reached_r[w as usize] {
                    reached_r[w as usize] = true;
                    let l = mr[w as usize];
                    if l != NONE && !reached_l[l as usize] {
                        reached_l[l as usize] = true;
                        queue.push(l);
                    }
                }
            }
        }
        let separator: Vec<u32> = left
            .iter()
            .zip(&reached_l)
            .filter(|(_, &r)| !r)
            .chain(right.iter().zip(&reached_r).filter(|(_, &r)| r))
            .map(|(&v, _)| v)
            .collect();
        for &v in left.iter().chain(&right) {
            self.local[v as usize] = NONE;
        }
        for &v in &separator {
            self.side[v as usize] = 3;
        }
        separator
    }

    /// Orders a leaf by faer's approximate minimum degree on its own subgraph.
    fn leaf(&mut self, part: &[u32], lo: usize) -> Result<()> {
        let m = part.len();
        for (k, &v) in part.iter().enumerate() {
            self.local[v as usize] = k as u32;
        }
        let mut col_ptr = Vec::with_capacity(m + 1);
        let mut row_idx: Vec<u32> = Vec::new();
        col_ptr.push(0u32);
        for &v in part {
            let start = row_idx.len();
            row_idx.extend(
                self.neighbours(v)
                    .iter()
                    .filter(|&&w| w != v as usize && self.local[w] != NONE)
                    .map(|&w| self.local[w]),
            );
            row_idx[start..].sort_unstable();
            col_ptr.push(row_idx.len() as u32);
        }
        for &v in part {
            self.local[v as usize] = NONE;
        }
        let (mut perm, mut perm_inv) = (vec![0u32; m], vec![0u32; m]);
        let pattern = SymbolicSparseColMatRef::new_checked(m, m, &col_ptr, None, &row_idx);
        let mut mem = MemBuffer::new(amd::order_scratch::<u32>(m, row_idx.len()));
        amd::order(
            &mut perm,
            &mut perm_inv,
            pattern,
            amd::Control::default(),
            MemStack::new(&mut mem),
        )
        .map_err(|e| Error::numerical(self.context, format!("minimum degree ordering: {e:?}")))?;
        for (k, &j) in perm.iter().enumerate() {
            self.order[lo + k] = part[j as usize];
        }
        Ok(())
    }
}
