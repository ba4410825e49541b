//! The softmax rows of the assignments from points and centres, and the nearest centres:
//! the squared distances of a point to every centre in vector lanes ([`Geometry`]), the
//! entries above the cut-off found eight at a time, and `exp` and the normalisation in
//! vector lanes.

use super::rows::Block;
use super::NEGLIGIBLE_EXPONENT;
use crate::simd::{exp, lane_sum, LANES};
use nalgebra::DMatrix;
use std::ops::Range;

/// The smallest entry of `d` (exact, in vector lanes).
#[inline(always)]
pub(super) fn min_of(d: &[f64]) -> f64 {
    let mut lanes = [f64::INFINITY; LANES];
    let mut chunks = d.chunks_exact(LANES);
    for chunk in &mut chunks {
        for l in 0..LANES {
            // (`f64::min` without its NaN handling: distances are never NaN.)
            lanes[l] = if chunk[l] < lanes[l] {
                chunk[l]
            } else {
                lanes[l]
            };
        }
    }
    let tail = chunks.remainder().iter().copied();
    lanes.into_iter().chain(tail).fold(f64::INFINITY, f64::min)
}

/// Points and centres laid out for the distance kernel.
pub(super) struct Geometry {
    /// Centres by position, coordinate by coordinate (d x K, row-major).
    cpt: Vec<f64>,
    /// Squared norms of the centres by position.
    cn: Vec<f64>,
    /// The points as columns (d x N): point `i` is contiguous.
    zt: DMatrix<f64>,
    /// Squared norms of the points.
    zn: Vec<f64>,
}

impl Geometry {
    pub(super) fn new(z: &DMatrix<f64>, c: &DMatrix<f64>, order: &[usize]) -> Geometry {
        let (dim, k) = (z.ncols(), order.len());
        assert_eq!(c.ncols(), dim, "points and centres in one space");
        let cpt: Vec<f64> = (0..dim)
            .flat_map(|j| order.iter().map(move |&ci| c[(ci, j)]))
            .collect();
        let cn = (0..k)
            .map(|p| (0..dim).fold(0.0, |s, j| s + cpt[j * k + p] * cpt[j * k + p]))
            .collect();
        let zt = z.transpose();
        let zn = zt
            .column_iter()
            .map(|col| col.iter().fold(0.0, |s, v| s + v * v))
            .collect();
        Geometry { cpt, cn, zt, zn }
    }

    /// `||z_i||^2 + ||c_p||^2 - 2 z_i . c_p`, clamped at 0: one entry of
    /// [`Geometry::sq_dists`], with the same operations in the same order (so the same
    /// bits).
    pub(super) fn sq_dist(&self, i: usize, p: usize) -> f64 {
        let k = self.cn.len();
        let dot = self
            .zt
            .column(i)
            .iter()
            .enumerate()
            .fold(0.0, |s, (j, &zij)| s + self.cpt[j * k + p] * zij);
        (-2.0 * dot + self.cn[p] + self.zn[i]).max(0.0)
    }

    /// `d[p] = ||z_i||^2 + ||c_p||^2 - 2 z_i . c_p`, clamped at 0; returns the smallest.
    #[inline(always)]
    pub(super) fn sq_dists(&self, i: usize, d: &mut [f64]) -> f64 {
        let k = self.cn.len();
        if let &[z0, z1] = self.zt.column(i).as_slice() {
            // d = 2 (the usual latent dimension): the same operations in one pass.
            let zni = self.zn[i];
            let (c0, c1) = self.cpt.split_at(k);
            for (((dp, &a), &b), &cnp) in d.iter_mut().zip(c0).zip(c1).zip(&self.cn) {
                *dp = (-2.0 * ((0.0 + a * z0) + b * z1) + cnp + zni).max(0.0);
            }
            return min_of(d);
        }
        d.fill(0.0);
        for (j, &zij) in self.zt.column(i).iter().enumerate() {
            for (dp, &cp) in d.iter_mut().zip(&self.cpt[j * k..(j + 1) * k]) {
                *dp += cp * zij;
            }
        }
        let zni = self.zn[i];
        for (dp, &cnp) in d.iter_mut().zip(&self.cn) {
            *dp = (-2.0 * *dp + cnp + zni).max(0.0);
        }
        min_of(d)
    }
}

/// The nearest centre of each point in `rows`.
#[inline(always)]
pub(super) fn nearest_block(g: &Geometry, rows: Range<usize>) -> Vec<usize> {
    let mut d = vec![0.0; g.cn.len()];
    let mut labels = Vec::with_capacity(rows.len());
    for i in rows {
        let least = g.sq_dists(i, &mut d);
        // The first position holding the minimum: its chunk of eight first (a vector
        // comparison per chunk), then the position from there.
        let full = d.len() / LANES * LANES;
        let start = d[..full]
            .chunks_exact(LANES)
            .position(|ch| ch.iter().fold(false, |hit, &v| hit | (v == least)))
            .map_or(full, |c| c * LANES);
        let label = d[start..].iter().position(|&v| v == least);
        labels.push(label.map_or(0, |l| start + l));
    }
    labels
}

/// The softmax rows of the points `rows` (see [`super::Assignment::from_points`]).
#[inline(always)]
pub(super) fn points_block(
    g: &Geometry,
    sigma: f64,
    rows: Range<usize>,
    block: &mut Block,
) -> (f64, f64) {
    let k = g.cn.len();
    let mut d = vec![0.0; k];
    let mut rows_out = SoftmaxRows::new(k);
    for i in rows {
        let least = g.sq_dists(i, &mut d);
        rows_out.push(&d, least, sigma, block);
    }
    (rows_out.neg_entropy, rows_out.soft_min)
}

/// Appends softmax rows to a block, summing their parts of the objective.
pub(super) struct SoftmaxRows {
    /// Every centre's exponent, then (compacted) those kept.
    exponents: Vec<f64>,
    /// The positions of the kept exponents.
    kept: Vec<u32>,
    pub(super) neg_entropy: f64,
    pub(super) soft_min: f64,
}

impl SoftmaxRows {
    pub(super) fn new(k: usize) -> Self {
        // Room for a last chunk written in full.
        SoftmaxRows {
            exponents: vec![0.0; k + LANES],
            kept: vec![0; k + LANES],
            neg_entropy: 0.0,
            soft_min: 0.0,
        }
    }

    /// Appends the exponents above the cut-off of the distances `chunk` (positions from
    /// `8 c`) after the first `count` and returns the new count. Chunks without a distance
    /// below `shift + cutoff` (a necessary condition) are skipped; otherwise the chunk's
    /// exponents are computed in one vector division and appended without branches (every
    /// lane is written at `count`, which moves past those above the cut-off).
    #[inline(always)]
    fn candidates(
        &mut self,
        chunk: &[f64; LANES],
        c: usize,
        shift: f64,
        cutoff: f64,
        sigma: f64,
        count: usize,
    ) -> usize {
        if !chunk
            .iter()
            .fold(false, |hit, &dp| hit | (dp - shift < cutoff))
        {
            return count;
        }
        let x: [f64; LANES] = std::array::from_fn(|l| -(chunk[l] - shift) / sigma);
        let exponents = &mut self.exponents[count..count + LANES];
        let kept = &mut self.kept[count..count + LANES];
        let mut appended = 0;
        for (l, &xl) in x.iter().enumerate() {
            // `appended <= l < LANES`: the mask only spares the bounds checks.
            exponents[appended & (LANES - 1)] = xl;
            kept[appended & (LANES - 1)] = (c * LANES + l) as u32;
            appended += usize::from(xl > NEGLIGIBLE_EXPONENT);
        }
        count + appended
    }

    /// The softmax of one point from its squared distances `d` to the centres (in position
    /// order), shifted by the smallest distance `shift` so the largest exponent is exactly 0 (spec
    /// P9); only entries above [`NEGLIGIBLE_EXPONENT`] are exponentiated and kept. The
    /// candidates are found eight at a time by a vector comparison (they lie on a few runs
    /// of positions), and `exp` and the normalisation run in vector lanes.
    #[inline(always)]
    pub(super) fn push(&mut self, d: &[f64], shift: f64, sigma: f64, block: &mut Block) {
        // A necessary condition for `-(d - shift) / sigma > NEGLIGIBLE_EXPONENT`, with a
        // margin for the rounding of the division.
        let cutoff = -NEGLIGIBLE_EXPONENT * sigma * (1.0 + 1e-9);
        let mut count = 0;
        let mut chunks = d.chunks_exact(LANES);
        for (c, chunk) in (&mut chunks).enumerate() {
            let chunk = chunk.try_into().expect("whole chunks");
            count = self.candidates(chunk, c, shift, cutoff, sigma, count);
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            // Padded with infinite distances, which are never candidates.
            let mut last = [f64::INFINITY; LANES];
            last[..tail.len()].copy_from_slice(tail);
            count = self.candidates(&last, d.len() / LANES, shift, cutoff, sigma, count);
        }
        let (exponents, kept) = (&self.exponents[..count], &self.kept[..count]);
        let start = block.val.len();
        block.pos.extend_from_slice(kept);
        // Whole chunks of eight (lanes past `count` hold earlier values, whose results are
        // cut off), so that every copy has a fixed length.
        for chunk in self.exponents[..count.div_ceil(LANES) * LANES].chunks_exact(LANES) {
            let mut e = [0.0; LANES];
            for (e, &x) in e.iter_mut().zip(chunk) {
                *e = exp(x);
            }
            block.val.extend_from_slice(&e);
        }
        block.val.truncate(start + count);
        let row = &mut block.val[start..];
        let total = lane_sum(row.len(), |j| row[j]);
        let log_total = total.ln();
        for v in row.iter_mut() {
            *v /= total;
        }
        // log r_ij = -(d_ij - shift)/sigma - log total, exact when r_ij is tiny.
        let neg_entropy = lane_sum(row.len(), |j| sigma * row[j] * (exponents[j] - log_total));
        if row.contains(&0.0) {
            // Entries that underflowed in the normalisation are dropped (adding their zero
            // terms above changed nothing).
            let mut kept = start;
            for j in start..block.val.len() {
                if block.val[j] > 0.0 {
                    block.val[kept] = block.val[j];
                    block.pos[kept] = block.pos[j];
                    kept += 1;
                }
            }
            block.val.truncate(kept);
            block.pos.truncate(kept);
        }
        block.ptr.push(block.val.len());
        self.neg_entropy += neg_entropy;
        self.soft_min += shift - sigma * log_total;
    }
}
