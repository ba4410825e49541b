//! Symmetric matrices stored as their lower triangle in column panels, with a block product
//! that reads each stored entry once.
//!
//! Panel `J` holds columns `J T .. (J + 1) T` of the matrix from row `J T` down (column-major,
//! leading dimension `n - J T`): its top `T x T` tile is the whole diagonal tile, the rest is
//! the strict lower triangle. That is `n^2 / 2 + n T / 2` numbers instead of `n^2`. The
//! product `Y = A X` reads each entry `a_ij` below the diagonal tiles once and uses it for
//! both `y_i += a_ij x_j` and `y_j += a_ij x_i` (the scheme of the packed symmetric
//! matrix-vector product `y = A x`, applied to a block of vectors), so it streams half the
//! memory of a dense product, which is what bounds a product with a narrow block.
//!
//! The loops are written so that the compiler vectorises them (one row of a block of
//! [`PackedSym::LANES`] columns is one 512-bit register) and run through the SIMD layer
//! ([`crate::simd`]) on the widest instruction set the processor has; every path gives the
//! same bits.

use crate::operator::SymOperator;
use crate::simd::{self, lane_sum, Level};
use crate::view::as_faer;
use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, Par};
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::Result;

/// Width `T` of the panels (and side of the diagonal tiles). The slices of `X` and `Y`
/// that a panel's columns touch (`T` rows of [`LANES`] numbers, 16 KiB each) stay in the
/// L1 cache while the panel streams past.
const TILE: usize = 256;

/// The panels are split into this many groups of about equal size, each accumulating its
/// part of a product into its own buffer; the buffers are summed in a fixed order, so the
/// result does not depend on the number of threads.
const GROUPS: usize = 16;

/// Up to this many coordinates, pairwise squared distances are summed directly (exactly
/// symmetric, no cancellation); above it they come from a matrix product per panel.
const DIRECT_MAX_FEATURES: usize = 16;

/// A symmetric `n x n` matrix stored as its lower triangle in panels of 256 columns,
/// with its row sums. Built from the lower triangle of a dense matrix
/// ([`PackedSym::from_lower`]) or directly as a distance kernel `f(||y_i - y_j||^2)`
/// ([`PackedSym::pairwise_kernel`]), which evaluates `f` once per pair. Implements
/// [`SymOperator`] for the partial eigensolver.
#[derive(Clone, Debug)]
pub struct PackedSym {
    n: usize,
    /// Panels one after the other, each column-major.
    data: Vec<f64>,
    /// Start of each panel in `data`.
    offsets: Vec<usize>,
    /// `row_sums[i] = sum_j a_ij`.
    row_sums: Vec<f64>,
}

/// Number of panels of an `n x n` matrix.
fn panel_count(n: usize) -> usize {
    n.div_ceil(TILE)
}

/// First column (and first stored row) of panel `p`, and its number of columns.
fn panel_cols(n: usize, p: usize) -> (usize, usize) {
    let c0 = p * TILE;
    (c0, TILE.min(n - c0))
}

/// Offsets of the panels in the packed storage, and the total length.
fn panel_offsets(n: usize) -> (Vec<usize>, usize) {
    let mut offsets = Vec::with_capacity(panel_count(n));
    let mut len = 0;
    for p in 0..panel_count(n) {
        offsets.push(len);
        let (c0, w) = panel_cols(n, p);
        len += (n - c0) * w;
    }
    (offsets, len)
}

impl PackedSym {
    /// Columns of a block `X` that a product handles per pass over the matrix (one
    /// 512-bit register of `f64`); a chunk of at most half as many runs on half-width
    /// vectors, with half the arithmetic.
    pub const LANES: usize = LANES;

    /// The cheapest block width of at least `q` columns for products with this matrix:
    /// `LANES / 2` (4) up to 4 columns, a multiple of `LANES` (8) above. Extra columns up
    /// to that width cost no extra pass over the matrix, and a block Krylov method with
    /// wider blocks needs fewer products.
    pub fn block_width(q: usize) -> usize {
        if q <= LANES / 2 {
            LANES / 2
        } else {
            q.div_ceil(LANES) * LANES
        }
    }

    /// Packs the lower triangle of a square matrix (the strict upper triangle is not
    /// read, except inside the diagonal tiles, which are symmetrised from the lower part).
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] if a stop is requested (checked before each panel).
    ///
    /// # Panics
    /// If `a` is not square (a programming error, not bad data).
    pub fn from_lower(a: &DMatrix<f64>) -> Result<Self> {
        assert_eq!(a.nrows(), a.ncols(), "PackedSym::from_lower: not square");
        Self::build(a.nrows(), &Lower(a))
    }

    /// The kernel matrix `a_ij = f(||y_i - y_j||^2)` over the rows of `y` (n x p), with
    /// `f` evaluated once per pair and exact zeros as the squared distances on the
    /// diagonal. Up to 16 coordinates the squared distances are summed directly; above,
    /// they come from `||y_i||^2 + ||y_j||^2 - 2 y_i . y_j`, clamped at zero. The loops
    /// run on the widest vector instructions the processor has ([`crate::simd`]), so a
    /// branch-free `f` such as `|d2| exp(-gamma * d2)` with [`crate::exp`] vectorises.
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] if a stop is requested: the flag is checked before each panel
    /// of columns (milliseconds of work; the whole kernel of 20,000 points takes about a
    /// second).
    pub fn pairwise_kernel<F: Fn(f64) -> f64 + Sync>(y: &DMatrix<f64>, f: F) -> Result<Self> {
        if y.ncols() <= DIRECT_MAX_FEATURES {
            Self::build(y.nrows(), &Direct { y, f })
        } else {
            let norms = (0..y.nrows()).map(|i| y.row(i).norm_squared()).collect();
            Self::build(y.nrows(), &Product { y, norms, f })
        }
    }

    /// Allocates the panels, fills each in parallel, and sums the rows.
    fn build<S: PanelFill>(n: usize, src: &S) -> Result<Self> {
        let (offsets, len) = panel_offsets(n);
        let mut data = vec![0.0; len];
        simd::advise_huge_pages(&mut data);
        let mut panels = Vec::with_capacity(offsets.len());
        let mut rest = data.as_mut_slice();
        for p in 0..offsets.len() {
            let (c0, w) = panel_cols(n, p);
            let (head, tail) = rest.split_at_mut((n - c0) * w);
            panels.push((p, head));
            rest = tail;
        }
        // Each panel also returns its contribution to the row sums of rows c0.., the
        // mirrored strict lower part counting towards the panel's own columns.
        let level = Level::widest();
        let partial: Vec<Vec<f64>> = panels
            .into_par_iter()
            .map(|(p, panel)| {
                unfold_core::interrupt::check()?;
                let (c0, w) = panel_cols(n, p);
                Ok(fill_and_sum(level, src, c0, w, panel))
            })
            .collect::<Result<_>>()?;
        let mut row_sums = vec![0.0; n];
        for (p, sums) in partial.iter().enumerate() {
            let c0 = p * TILE;
            for (s, v) in row_sums[c0..].iter_mut().zip(sums) {
                *s += v;
            }
        }
        Ok(PackedSym {
            n,
            data,
            offsets,
            row_sums,
        })
    }

    /// The dimension `n`.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The row sums `sum_j a_ij` (equal to the column sums), computed when the matrix was
    /// built.
    pub fn row_sums(&self) -> &[f64] {
        &self.row_sums
    }

    /// Entry `(i, j)`.
    ///
    /// # Panics
    /// If `i` or `j` is out of range.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(
            i < self.n && j < self.n,
            "PackedSym::get: index out of range"
        );
        let (i, j) = if i / TILE >= j / TILE { (i, j) } else { (j, i) };
        let p = j / TILE;
        let (c0, _) = panel_cols(self.n, p);
        self.data[self.offsets[p] + (j - c0) * (self.n - c0) + (i - c0)]
    }

    /// The full dense matrix.
    pub fn to_dense(&self) -> DMatrix<f64> {
        DMatrix::from_fn(self.n, self.n, |i, j| self.get(i, j))
    }
}

/// Row sums of a panel of `rows` rows and `w` columns (rows `c0..` of the matrix), with the
/// strict lower part (below the diagonal tile) also summed into the rows of its mirror.
#[inline(always)]
fn panel_row_sums(panel: &[f64], rows: usize, w: usize) -> Vec<f64> {
    let mut sums = vec![0.0; rows];
    for (jj, col) in panel.chunks_exact(rows).enumerate() {
        for (s, v) in sums.iter_mut().zip(col) {
            *s += v;
        }
        let below = &col[w..];
        sums[jj] += lane_sum(below.len(), |i| below[i]);
    }
    sums
}

/// How the entries of a panel are computed.
trait PanelFill: Sync {
    /// Fills the panel of `w` columns starting at column `c0` (rows `c0..n`,
    /// column-major), which holds zeros on entry.
    fn fill(&self, c0: usize, w: usize, panel: &mut [f64]);
}

/// Copies of the lower triangle of a dense matrix.
struct Lower<'a>(&'a DMatrix<f64>);

impl PanelFill for Lower<'_> {
    #[inline(always)]
    fn fill(&self, c0: usize, _: usize, panel: &mut [f64]) {
        let a = self.0;
        let n = a.nrows();
        for (jj, col) in panel.chunks_exact_mut(n - c0).enumerate() {
            let j = c0 + jj;
            // Entries above the diagonal in the diagonal tile mirror the lower ones.
            for (ii, v) in col[..jj].iter_mut().enumerate() {
                *v = a[(j, c0 + ii)];
            }
            col[jj..].copy_from_slice(&a.as_slice()[j * n + j..(j + 1) * n]);
        }
    }
}

/// `f` of squared distances summed coordinate by coordinate.
struct Direct<'a, F> {
    y: &'a DMatrix<f64>,
    f: F,
}

impl<F: Fn(f64) -> f64 + Sync> PanelFill for Direct<'_, F> {
    #[inline(always)]
    fn fill(&self, c0: usize, _: usize, panel: &mut [f64]) {
        direct_panel(self.y, c0, panel);
        panel.iter_mut().for_each(|v| *v = (self.f)(*v));
    }
}

/// `f` of squared distances from a matrix product.
struct Product<'a, F> {
    y: &'a DMatrix<f64>,
    norms: Vec<f64>,
    f: F,
}

impl<F: Fn(f64) -> f64 + Sync> PanelFill for Product<'_, F> {
    #[inline(always)]
    fn fill(&self, c0: usize, w: usize, panel: &mut [f64]) {
        product_panel(self.y, &self.norms, c0, w, panel);
        panel.iter_mut().for_each(|v| *v = (self.f)(*v));
    }
}

/// Fills a panel and returns its row sums, on the instruction set `level` (the loops
/// vectorise to its width; every level gives the same bits, see [`simd`]).
fn fill_and_sum<S: PanelFill>(
    level: Level,
    src: &S,
    c0: usize,
    w: usize,
    panel: &mut [f64],
) -> Vec<f64> {
    level.run_out(
        panel,
        #[inline(always)]
        |panel| {
            src.fill(c0, w, panel);
            panel_row_sums(panel, panel.len() / w, w)
        },
    )
}

/// Squared distances `sum_k (y_ik - y_jk)^2` of the panel starting at column `c0`.
#[inline(always)]
fn direct_panel(y: &DMatrix<f64>, c0: usize, panel: &mut [f64]) {
    let n = y.nrows();
    let rows = n - c0;
    for (jj, col) in panel.chunks_exact_mut(rows).enumerate() {
        let j = c0 + jj;
        for yk in y.as_slice().chunks_exact(n) {
            let yjk = yk[j];
            for (v, &yik) in col.iter_mut().zip(&yk[c0..]) {
                let d = yik - yjk;
                *v += d * d;
            }
        }
    }
}

/// Squared distances of the panel starting at column `c0` (width `w`) from one product
/// `-2 Y_rows Y_cols^T` plus the squared norms, clamped at zero; the diagonal tile is
/// averaged with its transpose and given an exact zero diagonal.
fn product_panel(y: &DMatrix<f64>, norms: &[f64], c0: usize, w: usize, panel: &mut [f64]) {
    let n = y.nrows();
    let rows = n - c0;
    let yv = as_faer(y);
    matmul(
        MatMut::from_column_major_slice_mut(panel, rows, w),
        Accum::Replace,
        yv.subrows(c0, rows),
        yv.subrows(c0, w).transpose(),
        -2.0,
        Par::Seq,
    );
    for (jj, col) in panel.chunks_exact_mut(rows).enumerate() {
        let nj = norms[c0 + jj];
        for (v, &ni) in col.iter_mut().zip(&norms[c0..]) {
            *v = (*v + ni + nj).max(0.0);
        }
    }
    for jj in 0..w {
        panel[jj * rows + jj] = 0.0;
        for ii in jj + 1..w {
            let v = 0.5 * (panel[jj * rows + ii] + panel[ii * rows + jj]);
            panel[jj * rows + ii] = v;
            panel[ii * rows + jj] = v;
        }
    }
}

impl SymOperator for PackedSym {
    fn dim(&self) -> usize {
        self.n
    }

    /// `Y = A X` in one pass over the stored entries per chunk of up to
    /// [`PackedSym::LANES`] columns of `X` (a chunk of at most 4 columns runs on half-width
    /// vectors): groups of panels in parallel, each into its own buffer, the buffers then
    /// summed in group order, so the result does not depend on the number of threads.
    fn apply(&self, x: &DMatrix<f64>, y: &mut DMatrix<f64>) {
        y.fill(0.0);
        let mut l0 = 0;
        while l0 < x.ncols() {
            let lanes = LANES.min(x.ncols() - l0);
            if lanes <= LANES / 2 {
                self.apply_chunk::<{ LANES / 2 }>(x, l0, lanes, y);
            } else {
                self.apply_chunk::<LANES>(x, l0, lanes, y);
            }
            l0 += lanes;
        }
    }
}

impl PackedSym {
    /// Adds `A X_c` to columns `l0..l0 + lanes` of `y`, for the chunk `X_c` of those
    /// columns of `x`, stored as rows of `L >= lanes` numbers (one vector register each).
    fn apply_chunk<const L: usize>(
        &self,
        x: &DMatrix<f64>,
        l0: usize,
        lanes: usize,
        y: &mut DMatrix<f64>,
    ) {
        let n = self.n;
        let xr: Vec<[f64; L]> = (0..n)
            .map(|i| std::array::from_fn(|l| if l < lanes { x[(i, l0 + l)] } else { 0.0 }))
            .collect();
        let level = Level::widest();
        let partial: Vec<(usize, Vec<[f64; L]>)> = balanced_groups(&self.offsets, self.data.len())
            .into_par_iter()
            .map(|range| {
                let r0 = range.start * TILE;
                let mut buf = vec![[0.0; L]; n - r0];
                for p in range {
                    let (c0, w) = panel_cols(n, p);
                    let start = self.offsets[p];
                    let panel = &self.data[start..start + (n - c0) * w];
                    panel_product(level, panel, w, &xr[c0..], &mut buf[c0 - r0..]);
                }
                (r0, buf)
            })
            .collect();
        for (r0, buf) in &partial {
            for (l, mut col) in y.columns_mut(l0, lanes).column_iter_mut().enumerate() {
                for (v, row) in col.as_mut_slice()[*r0..].iter_mut().zip(buf) {
                    *v += row[l];
                }
            }
        }
    }
}

/// Columns of the block `X` handled per pass over the matrix: one 512-bit register of
/// `f64`, or two of 256 bits.
const LANES: usize = 8;

/// Panel columns handled together by the product kernel: their entries in one row are
/// read together, and their transposed products stay in registers.
const COLS: usize = 8;

/// `Y += P X` for one panel `P` of `w` columns and all its `rows = x.len()` rows (its
/// diagonal tile is stored whole, the rest is the strict lower triangle and also
/// contributes `Y_J += P_rest^T X_rest`), for a chunk of `L` columns of `X`. `x` and `y`
/// start at the panel's first row. On the instruction set `level` (every level gives the same bits, see [`simd`]).
fn panel_product<const L: usize>(
    level: Level,
    panel: &[f64],
    w: usize,
    x: &[[f64; L]],
    y: &mut [[f64; L]],
) {
    level.run_out(
        y,
        #[inline(always)]
        |y| panel_columns(panel, w, x, y),
    )
}

/// [`panel_product`]'s loops: blocks of [`COLS`] columns, then single columns.
#[inline(always)]
fn panel_columns<const L: usize>(panel: &[f64], w: usize, x: &[[f64; L]], y: &mut [[f64; L]]) {
    let rows = x.len();
    let mut j = 0;
    while j + COLS <= w {
        columns::<COLS, L>(&panel[j * rows..(j + COLS) * rows], j, w, x, y);
        j += COLS;
    }
    while j < w {
        columns::<1, L>(&panel[j * rows..(j + 1) * rows], j, w, x, y);
        j += 1;
    }
}

/// The contribution of `R` consecutive panel columns `j..j + R` (column-major in `cols`):
/// `y_i += sum_r a_{i, j+r} x_{j+r}` for every row, and for the rows below the diagonal
/// tile (`i >= w`) also `y_{j+r} += sum_i a_{i, j+r} x_i`, accumulated in registers.
#[inline(always)]
fn columns<const R: usize, const L: usize>(
    cols: &[f64],
    j: usize,
    w: usize,
    x: &[[f64; L]],
    y: &mut [[f64; L]],
) {
    let rows = x.len();
    let col: [&[f64]; R] = std::array::from_fn(|r| &cols[r * rows..(r + 1) * rows]);
    let xj: [[f64; L]; R] = std::array::from_fn(|r| x[j + r]);
    let mut sums = [[0.0; L]; R];
    // Each row is accumulated in a local copy: it stays in a register.
    for (i, yi) in y[..w].iter_mut().enumerate() {
        let mut acc = *yi;
        for r in 0..R {
            let a = col[r][i];
            for l in 0..L {
                acc[l] += a * xj[r][l];
            }
        }
        *yi = acc;
    }
    for (i, (yi, xi)) in y[w..rows].iter_mut().zip(&x[w..]).enumerate() {
        let mut acc = *yi;
        for r in 0..R {
            let a = col[r][w + i];
            for l in 0..L {
                acc[l] += a * xj[r][l];
                sums[r][l] += a * xi[l];
            }
        }
        *yi = acc;
    }
    for (r, s) in sums.iter().enumerate() {
        for l in 0..L {
            y[j + r][l] += s[l];
        }
    }
}

/// Contiguous ranges of panels with about `len / GROUPS` stored entries each.
fn balanced_groups(offsets: &[usize], len: usize) -> Vec<std::ops::Range<usize>> {
    let np = offsets.len();
    let mut groups = Vec::with_capacity(GROUPS);
    let mut start = 0;
    for g in 1..=GROUPS {
        let target = len * g / GROUPS;
        let mut end = start;
        while end < np && offsets[end] < target {
            end += 1;
        }
        if g == GROUPS {
            end = np;
        }
        if end > start {
            groups.push(start..end);
            start = end;
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distance::pairwise_kernel;
    use crate::test_util::{random_matrix, random_sym};

    /// Sizes around the tile side, and enough panels for several groups.
    const SIZES: [usize; 7] = [1, 5, 255, 256, 257, 700, 1500];

    fn assert_close(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64) {
        let err = (a - b).amax();
        assert!(err <= tol * b.amax().max(1.0), "error {err:e}");
    }

    #[test]
    fn storage_row_sums_and_product_match_dense() {
        for (s, &n) in SIZES.iter().enumerate() {
            let a = random_sym(n, s as u64);
            let packed = PackedSym::from_lower(&a).unwrap();
            assert_eq!(packed.dim(), n);
            assert_eq!(packed.to_dense(), a);
            let sums = a.column_sum();
            for (got, want) in packed.row_sums().iter().zip(sums.iter()) {
                assert!((got - want).abs() <= 1e-12 * n as f64, "{got} vs {want}");
            }
            // Block widths below, at and above one register, and across two passes.
            for b in [1, 3, 8, 11] {
                let x = random_matrix(n, b, 100 + b as u64);
                let mut y = DMatrix::from_element(n, b, f64::NAN);
                packed.apply(&x, &mut y);
                assert_close(&y, &(&a * &x), 1e-13 * n as f64);
            }
        }
    }

    #[test]
    fn block_widths_fill_the_vectors() {
        let widths: Vec<usize> = (1..=17).map(PackedSym::block_width).collect();
        let mut want = vec![4; 4];
        want.extend([8; 4]);
        want.extend([16; 8]);
        want.push(24);
        assert_eq!(widths, want);
    }

    #[test]
    fn only_the_lower_triangle_is_read() {
        let n = 300;
        let a = random_sym(n, 7);
        let mut garbage = a.clone();
        for j in 0..n {
            for i in 0..j {
                garbage[(i, j)] = f64::NAN;
            }
        }
        assert_eq!(PackedSym::from_lower(&garbage).unwrap().to_dense(), a);
    }

    #[test]
    fn kernels_match_the_dense_ones() {
        let gamma = 0.3;
        for (n, p) in [(1, 2), (6, 3), (257, 3), (600, 2), (300, 20)] {
            let y = random_matrix(n, p, n as u64 + 1);
            let rbf = |d2: f64| crate::exp(-gamma * d2);
            let dense = pairwise_kernel(&y, rbf);
            let packed = PackedSym::pairwise_kernel(&y, rbf).unwrap();
            if p <= DIRECT_MAX_FEATURES {
                // The same sums in the same order.
                assert_eq!(packed.to_dense(), dense);
            } else {
                assert_close(&packed.to_dense(), &dense, 1e-12);
                assert_eq!(packed.to_dense(), packed.to_dense().transpose());
                assert!((0..n).all(|i| packed.get(i, i) == 1.0));
            }
            let sums = dense.column_sum();
            for (got, want) in packed.row_sums().iter().zip(sums.iter()) {
                assert!((got - want).abs() <= 1e-12 * n as f64);
            }
        }
    }

    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        // One panel of 300 rows and 256 columns, filled and multiplied on every instruction
        // set the processor has, against the baseline.
        let (rows, w) = (300, TILE);
        let y = random_matrix(rows, 3, 5);
        let src = Direct {
            y: &y,
            f: |d2: f64| crate::exp(-0.7 * d2),
        };
        let x: Vec<[f64; LANES]> = (0..rows)
            .map(|i| std::array::from_fn(|l| ((i * LANES + l) as f64 * 0.37).sin()))
            .collect();
        let run = |level: Level| {
            let mut panel = vec![0.0; rows * w];
            let sums = fill_and_sum(level, &src, 0, w, &mut panel);
            let mut out = vec![[0.0; LANES]; rows];
            panel_product(level, &panel, w, &x, &mut out);
            (panel, sums, out)
        };
        let want = run(Level::baseline());
        let levels = Level::available();
        assert!(levels.len() > 1 || cfg!(not(target_arch = "x86_64")));
        for level in levels {
            assert!(run(level) == want, "{level:?}");
        }
    }

    #[test]
    fn product_does_not_depend_on_the_thread_count() {
        let a = random_sym(1500, 3);
        let packed = PackedSym::from_lower(&a).unwrap();
        let x = random_matrix(1500, 8, 4);
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut y = DMatrix::zeros(1500, 8);
            pool.install(|| packed.apply(&x, &mut y));
            y
        };
        assert_eq!(run(1), run(3));
    }
}
