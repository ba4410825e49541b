//! The products with `R` that one alternating step needs: `R^T R`, `R^T X` and `1^T R` in
//! one pass over `R` (sparse updates of dense lanes at low dimension, dense products over
//! each block's window of centres from [`DENSE_PRODUCT_COLS`] columns on), `R G`, and sums
//! of `r_ik d_ik`.

use super::rows::Block;
use super::softmax::Geometry;
use super::Assignment;
use crate::gemm::mul_with;
use crate::simd::{self, LANES};
use crate::view::as_faer;
use faer::{MatRef, Par};
use nalgebra::DMatrix;
use rayon::prelude::*;

/// [`Assignment::products`] sums groups of consecutive blocks into this many accumulators.
const ACCUMULATORS: usize = 4;
/// Rows of `R` that update the accumulators of [`products_blocks`] together.
const GROUP: usize = 4;

/// `R^T R`, `R^T X` and `1^T R`, in the original numbering of the centres
/// ([`Assignment::products`]).
pub struct Products {
    /// `R^T R` (K x K, exactly symmetric).
    pub gram: DMatrix<f64>,
    /// `R^T X` (K x p).
    pub tr_mul: DMatrix<f64>,
    /// The column sums `1^T R` (K).
    pub col_sums: Vec<f64>,
}

/// Eight doubles aligned to a cache line: one AVX-512 register (two AVX2 ones).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(64))]
pub(super) struct Lane([f64; LANES]);

impl Lane {
    /// `self += a x`, one vector operation (loads before the store, so that it vectorises).
    #[inline(always)]
    fn add_scaled(&mut self, a: f64, x: &Lane) {
        let (xv, mut yv) = (x.0, self.0);
        for l in 0..LANES {
            yv[l] += a * xv[l];
        }
        self.0 = yv;
    }

    #[inline(always)]
    fn add(&mut self, x: &Lane) {
        let (xv, mut yv) = (x.0, self.0);
        for l in 0..LANES {
            yv[l] += xv[l];
        }
        self.0 = yv;
    }
}

/// The rows of an N x p matrix, each padded with zeros to whole [`Lane`]s, for `R^T X`.
pub(super) struct LaneRows {
    pub(super) lanes: Vec<Lane>,
    /// Lanes per row.
    pub(super) width: usize,
    /// Columns `p`.
    cols: usize,
}

impl LaneRows {
    /// Copies `x` (a view of any layout) by blocks of rows in parallel: within a block,
    /// column by column when the columns are contiguous, else row by row, so that both
    /// the reads and the writes stay in cache.
    pub(super) fn new(x: MatRef<'_, f64>) -> LaneRows {
        const ROWS: usize = 64;
        let (n, cols) = (x.nrows(), x.ncols());
        let width = cols.div_ceil(LANES);
        let mut lanes = vec![Lane::default(); n * width];
        let by_rows = x.col_stride() == 1 && x.row_stride() != 1;
        if width > 0 {
            lanes
                .par_chunks_mut(ROWS * width)
                .enumerate()
                .for_each(|(b, block)| {
                    let xb = x.subrows(b * ROWS, block.len() / width);
                    if by_rows {
                        for (i, row) in block.chunks_exact_mut(width).enumerate() {
                            for (j, &v) in xb.row(i).iter().enumerate() {
                                row[j / LANES].0[j % LANES] = v;
                            }
                        }
                    } else {
                        for j in 0..cols {
                            for (row, &v) in block.chunks_exact_mut(width).zip(xb.col(j).iter()) {
                                row[j / LANES].0[j % LANES] = v;
                            }
                        }
                    }
                });
        }
        LaneRows { lanes, width, cols }
    }

    fn rows(&self) -> usize {
        self.lanes.len().checked_div(self.width).unwrap_or(0)
    }
}

/// From this many columns of `X` on, [`Assignment::products`] takes `R^T X` block by block
/// as dense products on `X` itself ([`Layout::Columns`]): at high dimension a dense
/// product over a block's window of centres runs many times faster per multiply-add than
/// the sparse updates, and no row-major copy of `X` is needed.
pub const DENSE_PRODUCT_COLS: usize = 96;

/// The data `X` as [`Assignment::products`] reads it: a row-major copy for the sparse
/// updates at low dimension, or `X` itself from [`DENSE_PRODUCT_COLS`] columns on. Made
/// once per data matrix and read by every iteration's products.
pub struct DataRows<'a>(pub(super) Layout<'a>);

/// The two layouts of [`DataRows`].
pub(super) enum Layout<'a> {
    /// Each row padded to whole lanes, for the sparse updates.
    Lanes(LaneRows),
    /// The matrix itself (a view of any layout), for dense products over blocks of rows.
    Columns(MatRef<'a, f64>),
}

impl<'a> DataRows<'a> {
    /// The layout of `x` (N x p) for [`Assignment::products`]: a row-major copy below
    /// [`DENSE_PRODUCT_COLS`] columns, else a reference to `x`.
    pub fn new(x: &'a DMatrix<f64>) -> DataRows<'a> {
        DataRows::of(as_faer(x))
    }

    /// [`DataRows::new`] of a view of any layout: from [`DENSE_PRODUCT_COLS`] columns on,
    /// the view itself (a row-major view of a C-order array is read where it lies, not
    /// copied). The products are [`DataRows::new`]'s to the bit for a column-major view,
    /// and below [`DENSE_PRODUCT_COLS`] columns for any layout.
    pub fn of(x: MatRef<'a, f64>) -> DataRows<'a> {
        DataRows(if x.ncols() >= DENSE_PRODUCT_COLS {
            Layout::Columns(x)
        } else {
            Layout::Lanes(LaneRows::new(x))
        })
    }
}

/// Sums equally long lane accumulators in order into the first.
fn sum_lanes_in_order(parts: Vec<Vec<Lane>>) -> Vec<Lane> {
    let mut parts = parts.into_iter();
    let mut total = parts.next().expect("at least one block");
    for part in parts {
        for (t, v) in total.iter_mut().zip(&part) {
            t.add(v);
        }
    }
    total
}

/// Sums equally long accumulators in order into the first.
fn sum_in_order(parts: Vec<Vec<f64>>) -> Vec<f64> {
    let mut parts = parts.into_iter();
    let mut total = parts.next().expect("at least one block");
    for part in parts {
        for (t, v) in total.iter_mut().zip(&part) {
            *t += v;
        }
    }
    total
}

impl Assignment {
    /// `R^T R` (K x K, exactly symmetric), `R^T X` (K x p) for the rows of `X` (N x p) and
    /// the column sums `1^T R`, in one pass over `R` ([`products_blocks`]).
    ///
    /// # Panics
    /// If `x` does not have one row per point.
    pub fn products(&self, x: &DataRows<'_>) -> Products {
        match &x.0 {
            Layout::Lanes(lanes) => self.sparse_products(lanes),
            Layout::Columns(x) => {
                let empty = LaneRows {
                    lanes: Vec::new(),
                    width: 0,
                    cols: 0,
                };
                let Products { gram, col_sums, .. } = self.sparse_products_of(&empty);
                Products {
                    gram,
                    tr_mul: self.dense_tr_mul(*x),
                    col_sums,
                }
            }
        }
    }

    /// [`Assignment::products`] by the sparse updates of [`products_blocks`].
    fn sparse_products(&self, x: &LaneRows) -> Products {
        assert_eq!(x.rows(), self.n, "one row of X per point");
        self.sparse_products_of(x)
    }

    /// [`Assignment::sparse_products`] without the check of the rows (none are read when
    /// `X` has no columns).
    fn sparse_products_of(&self, x: &LaneRows) -> Products {
        let (k, xw, rows) = (self.k, x.width, self.block_rows);
        let group = self.blocks.len().div_ceil(ACCUMULATORS);
        let parts: Vec<(Vec<Lane>, Vec<Lane>, Vec<f64>)> = self
            .blocks
            .par_chunks(group)
            .enumerate()
            .map(|(g, blocks)| {
                let x = &x.lanes[g * group * rows * xw..];
                simd::vectorize(
                    #[inline(always)]
                    || products_blocks(blocks, x, xw, rows, k),
                )
            })
            .collect();
        let (mut grams, mut rtxs, mut sums) = (Vec::new(), Vec::new(), Vec::new());
        for (gram, rtx, sum) in parts {
            grams.push(gram);
            rtxs.push(rtx);
            sums.push(sum);
        }
        let (upper, rtx, sums) = (
            sum_lanes_in_order(grams),
            sum_lanes_in_order(rtxs),
            sum_in_order(sums),
        );
        let kw = k.div_ceil(LANES);
        let position = &self.position;
        Products {
            gram: DMatrix::from_fn(k, k, |a, b| {
                let (pa, pb) = (position[a], position[b]);
                let (lo, hi) = (pa.min(pb), pa.max(pb));
                upper[lo * kw + hi / LANES].0[hi % LANES]
            }),
            tr_mul: DMatrix::from_fn(k, x.cols, |c, j| {
                rtx[position[c] * xw + j / LANES].0[j % LANES]
            }),
            col_sums: position.iter().map(|&p| sums[p]).collect(),
        }
    }

    /// `R^T X` (K x p) for `X` (N x p) block by block: each block's rows of `R` over its
    /// window of positions (the least to the largest it uses) as a dense matrix, times the
    /// block's rows of `X` in one sequential faer product; the blocks run in parallel and
    /// their results are added in block order (the same bits for any number of threads).
    fn dense_tr_mul(&self, x: MatRef<'_, f64>) -> DMatrix<f64> {
        assert_eq!(x.nrows(), self.n, "one row of X per point");
        let p = x.ncols();
        let parts: Vec<Option<(usize, DMatrix<f64>)>> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let start = bi * self.block_rows;
                let (lo, hi) = b
                    .pos
                    .iter()
                    .fold((u32::MAX, 0), |(lo, hi), &q| (lo.min(q), hi.max(q)));
                if b.pos.is_empty() {
                    return None;
                }
                let (lo, width) = (lo as usize, (hi - lo) as usize + 1);
                let mut r = DMatrix::zeros(b.rows(), width);
                for i in 0..b.rows() {
                    let (pos, val) = b.row(i);
                    let point = b.point[i] as usize;
                    for (&q, &v) in pos.iter().zip(val) {
                        r[(point, q as usize - lo)] = v;
                    }
                }
                let xb = x.subrows(start, b.rows());
                Some((lo, mul_with(as_faer(&r).transpose(), xb, Par::Seq)))
            })
            .collect();
        let mut by_position = DMatrix::zeros(self.k, p);
        for (lo, part) in parts.into_iter().flatten() {
            let mut rows = by_position.rows_mut(lo, part.nrows());
            rows += part;
        }
        DMatrix::from_fn(self.k, p, |c, j| by_position[(self.position[c], j)])
    }

    /// `R G` (N x p) for `G` (K x p).
    ///
    /// # Panics
    /// If `g` does not have one row per centre.
    pub fn mul(&self, g: &DMatrix<f64>) -> DMatrix<f64> {
        let p = g.ncols();
        assert_eq!(g.nrows(), self.k, "one row of G per centre");
        let gp: Vec<f64> = self
            .order
            .iter()
            .flat_map(|&c| (0..p).map(move |j| g[(c, j)]))
            .collect();
        // out^T (p x N): point i's row is the contiguous column i.
        let mut out_t = DMatrix::zeros(p, self.n);
        if p > 0 {
            out_t
                .as_mut_slice()
                .par_chunks_mut(self.block_rows * p)
                .zip(&self.blocks)
                .for_each(|(out, b)| match p {
                    1 => narrow_mul_block::<1>(b, &gp, out),
                    2 => narrow_mul_block::<2>(b, &gp, out),
                    3 => narrow_mul_block::<3>(b, &gp, out),
                    _ => {
                        for (i, &point) in b.point.iter().enumerate() {
                            let point = point as usize;
                            let (pos, val) = b.row(i);
                            for (j, o) in out[point * p..(point + 1) * p].iter_mut().enumerate() {
                                *o = pos
                                    .iter()
                                    .zip(val)
                                    .fold(0.0, |s, (&q, &v)| s + v * gp[q as usize * p + j]);
                            }
                        }
                    }
                });
        }
        out_t.transpose()
    }

    /// `sum_ik r_ik ||z_i - c_k||^2` for the points `z` (N x d) and centres `c` (K x d),
    /// each distance computed for the stored entries only, with the bits the assignments
    /// were computed from ([`Geometry::sq_dist`]; no K x N matrix).
    ///
    /// # Panics
    /// If `z` does not have one row per point or `c` one row per centre in the dimension
    /// of `z`.
    pub fn dot_to(&self, z: &DMatrix<f64>, c: &DMatrix<f64>) -> f64 {
        assert_eq!(z.nrows(), self.n, "one row of Z per point");
        assert_eq!(c.nrows(), self.k, "one row of C per centre");
        let g = Geometry::new(z, c, &self.order);
        self.weighted_sum(|i, p| g.sq_dist(i, p))
    }

    /// `sum_ik r_ik dist[(k, i)]` for `dist` K x N.
    #[cfg(test)]
    pub(super) fn dot(&self, dist: &DMatrix<f64>) -> f64 {
        self.weighted_sum(|i, p| dist[(self.order[p], i)])
    }

    /// `sum r_ip d(i, p)` over the stored entries (point `i`, centre at position `p`),
    /// blocks summed in order.
    fn weighted_sum(&self, d: impl Fn(usize, usize) -> f64 + Sync) -> f64 {
        let rows = self.block_rows;
        let parts: Vec<f64> = self
            .blocks
            .par_iter()
            .enumerate()
            .map(|(bi, b)| {
                let mut sum = 0.0;
                for (i, &point) in b.point.iter().enumerate() {
                    let point = bi * rows + point as usize;
                    let (pos, val) = b.row(i);
                    for (&q, &v) in pos.iter().zip(val) {
                        sum += v * d(point, q as usize);
                    }
                }
                sum
            })
            .collect();
        parts.iter().sum()
    }
}

/// The blocks' `R^T R` (the upper triangle in positions, rows of `ceil(K/8)` lanes;
/// entries left of the diagonal are not used), `R^T X` (by positions, `xw` lanes per
/// centre; `x` holds the blocks' rows of `X` one after the other, `block_rows` per
/// block) and column sums (by positions).
///
/// The stored rows of a block (ordered by their first position) are taken [`GROUP`] at
/// a time: their values are spread into dense lanes over the union of their runs of
/// lanes, and for every position `p` of the union the `GROUP` rows update the
/// accumulators at once, `acc[p] += sum_r r_rp row_r` (`row_r` is the lanes of `R`'s row
/// from `p`'s lane on, for `R^T R`, and the row of `X`, for `R^T X`): one load and
/// store of an accumulator lane per `GROUP` multiply-adds (the updates are bound by
/// those loads and stores), and zeros where a row is not in the union add nothing.
#[inline(always)]
pub(super) fn products_blocks(
    blocks: &[Block],
    x: &[Lane],
    xw: usize,
    block_rows: usize,
    k: usize,
) -> (Vec<Lane>, Vec<Lane>, Vec<f64>) {
    let kw = k.div_ceil(LANES);
    let mut gram = vec![Lane::default(); k * kw];
    let mut rtx = vec![Lane::default(); k * xw];
    let mut sums = vec![0.0; k];
    // The group's rows as dense lanes (row r at r * kw), zero outside their non-zeros.
    let mut dense = vec![Lane::default(); GROUP * kw];
    // The group's rows of X, interleaved: lane j of row r at j * GROUP + r (zero for
    // missing rows of a last, smaller group).
    let mut xs = vec![Lane::default(); xw * GROUP];
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut used = vec![false; kw];
    for (bi, b) in blocks.iter().enumerate() {
        let xb = &x[bi * block_rows * xw..];
        // Empty rows are stored last.
        let filled = (0..b.rows())
            .take_while(|&i| b.ptr[i] < b.ptr[i + 1])
            .count();
        for first in (0..filled).step_by(GROUP) {
            let members = first..(first + GROUP).min(filled);
            // The rows of X are read in the order of the stored rows (scattered): the
            // next group's are requested now, while this group is computed.
            for i in (first + GROUP..first + 2 * GROUP).take_while(|&i| i < filled) {
                let point = b.point[i] as usize;
                xb[point * xw..(point + 1) * xw]
                    .iter()
                    .for_each(simd::prefetch);
            }
            xs.fill(Lane::default());
            for (r, i) in members.clone().enumerate() {
                let (pos, val) = b.row(i);
                let dr = &mut dense[r * kw..(r + 1) * kw];
                for (&p, &v) in pos.iter().zip(val) {
                    let p = p as usize;
                    dr[p / LANES].0[p % LANES] = v;
                    used[p / LANES] = true;
                }
                let point = b.point[i] as usize;
                for (j, lane) in xb[point * xw..(point + 1) * xw].iter().enumerate() {
                    xs[j * GROUP + r] = *lane;
                }
            }
            // The union's runs of lanes (the lanes of its members' runs).
            runs.clear();
            for i in members {
                for &p in b.row(i).0 {
                    let c = p as usize / LANES;
                    if used[c] {
                        used[c] = false;
                        runs.push((c, c + 1));
                    }
                }
            }
            runs.sort_unstable();
            runs.dedup_by(|next, run| {
                let merge = next.0 <= run.1;
                if merge {
                    run.1 = run.1.max(next.1);
                }
                merge
            });
            for (ri, &(s, e)) in runs.iter().enumerate() {
                for c in s..e {
                    for l in 0..LANES {
                        let mut v = [0.0; GROUP];
                        for (r, vr) in v.iter_mut().enumerate() {
                            *vr = dense[r * kw + c].0[l];
                        }
                        if v.iter().all(|&vr| vr == 0.0) {
                            continue;
                        }
                        let p = c * LANES + l;
                        let row = &mut gram[p * kw..(p + 1) * kw];
                        for (rs, re) in
                            std::iter::once((c, e)).chain(runs[ri + 1..].iter().copied())
                        {
                            for cc in rs..re {
                                let mut a = row[cc];
                                for (r, &vr) in v.iter().enumerate() {
                                    a.add_scaled(vr, &dense[r * kw + cc]);
                                }
                                row[cc] = a;
                            }
                        }
                        let acc = &mut rtx[p * xw..(p + 1) * xw];
                        for (a, x) in acc.iter_mut().zip(xs.chunks_exact(GROUP)) {
                            let mut t = *a;
                            for (&vr, xl) in v.iter().zip(x) {
                                t.add_scaled(vr, xl);
                            }
                            *a = t;
                        }
                        sums[p] = v.iter().fold(sums[p], |t, &vr| t + vr);
                    }
                }
            }
            for r in 0..GROUP {
                for &(s, e) in &runs {
                    dense[r * kw + s..r * kw + e].fill(Lane::default());
                }
            }
        }
    }
    (gram, rtx, sums)
}

/// The block's rows of `R G` for `G` with `P` columns (`g` by positions, row-major K x P)
/// into `out` (the block's points one after the other): each row's non-zeros summed in two
/// interleaved partial sums (even and odd), so that the additions do not all wait on each
/// other.
fn narrow_mul_block<const P: usize>(b: &Block, g: &[f64], out: &mut [f64]) {
    let g_of = |q: u32| -> [f64; P] { g[q as usize * P..(q as usize + 1) * P].try_into().unwrap() };
    for (i, &point) in b.point.iter().enumerate() {
        let (pos, val) = b.row(i);
        let (mut even, mut odd) = ([0.0; P], [0.0; P]);
        let (pairs, last) = (pos.len() / 2, pos.len() % 2 == 1);
        for t in 0..pairs {
            let (g0, g1) = (g_of(pos[2 * t]), g_of(pos[2 * t + 1]));
            let (v0, v1) = (val[2 * t], val[2 * t + 1]);
            for j in 0..P {
                even[j] += v0 * g0[j];
                odd[j] += v1 * g1[j];
            }
        }
        if last {
            let gl = g_of(pos[pos.len() - 1]);
            for j in 0..P {
                even[j] += val[pos.len() - 1] * gl[j];
            }
        }
        let point = point as usize;
        for (j, o) in out[point * P..(point + 1) * P].iter_mut().enumerate() {
            *o = even[j] + odd[j];
        }
    }
}
