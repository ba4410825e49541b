//! Sparse Cholesky factorisation `P A P^T = L L^T` of a symmetric positive definite
//! [`CsrMatrix`] on faer, with an approximate minimum degree (AMD) fill-reducing ordering
//! `P` (Amestoy, Davis & Duff 1996).
//!
//! The numeric factorisation is faer's supernodal one (dense kernels on groups of columns
//! with the same pattern), whose factor is then copied into compressed columns without the
//! zeros that relaxed supernodes pad in. Solves run column by column on that copy: for the
//! few right-hand sides of shift-invert Lanczos this is several times faster than faer's
//! supernodal solve, while the supernodal factorisation is faster than the simplicial one
//! (Laplacian eigenmaps at n = 5000: 8 ms against 12 ms).

use crate::check::check_sparse_symmetric;
use crate::sparse::{diagonal_split, CsrMatrix};
use crate::view::{as_faer_mut, par};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltError;
use faer::perm::PermRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, supernodal::SymbolicSupernodalCholesky, CholeskySymbolicParams,
    SymbolicCholesky, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_lower_triangular_transpose_in_place,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMat, SparseColMatRef, SymbolicSparseColMat, SymbolicSparseColMatRef};
use faer::{Conj, Par, Side};
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::sync::Arc;
use unfold_core::{Error, MemoryLimit, Result};

/// Factors with fewer stored entries than this are computed on the calling thread
/// (Laplacian eigenmaps at n = 5000, about 2e5 entries, was ~1 ms faster so).
pub(crate) const PARALLEL_FACTOR_ENTRIES: usize = 1 << 20;

/// The sparse Cholesky factor of a symmetric positive definite sparse matrix.
#[derive(Debug)]
pub struct SparseCholesky {
    /// `perm[i]` is the original row at position `i` of the elimination order.
    perm: Vec<usize>,
    /// `L` in compressed columns, the diagonal entry first in each column.
    l: SparseColMat<u32, f64>,
}

impl SparseCholesky {
    /// Factorises `a`, which must be square, finite, symmetric and positive definite.
    ///
    /// # Errors
    /// [`Error::Empty`], [`Error::DimensionMismatch`], [`Error::NonFinite`],
    /// [`Error::InvalidParameter`] (not symmetric), [`Error::NotPositiveDefinite`] whose
    /// `pivot` is the original (0-based) row at which elimination met a non-positive pivot,
    /// or [`Error::Numerical`] if faer runs out of memory or index range.
    pub fn new(a: &CsrMatrix, context: &str) -> Result<SparseCholesky> {
        check_sparse_symmetric(a, context)?;
        Self::of_shifted(a, 0.0, context)
    }

    /// The factor of `A + shift I` for a matrix `A` already known to be square, finite and
    /// symmetric (the shift-invert operator), without forming `A + shift I`.
    pub(crate) fn of_shifted(a: &CsrMatrix, shift: f64, context: &str) -> Result<SparseCholesky> {
        let n = a.nrows();
        let (col_ptr, row_idx, lower_vals) = lower_triangle(a, shift, context)?;
        let symbolic = Arc::new(symbolic_cholesky(n, &col_ptr, &row_idx, None, context)?);
        check_factor_memory(n, symbolic.len_val(), context)?;
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let lower = SparseColMatRef::new(sym, &lower_vals);
        let values = numeric_factor(&symbolic, lower, context)?;
        Ok(Self::from_numeric(&symbolic, values))
    }

    /// The factor whose values faer's `L L^T` factorisation on `symbolic` computed, in
    /// compressed columns without the zeros that relaxed supernodes pad in.
    pub(crate) fn from_numeric(
        symbolic: &SymbolicCholesky<u32>,
        mut values: Vec<f64>,
    ) -> SparseCholesky {
        let n = symbolic.nrows();
        let perm: Vec<usize> = match symbolic.perm() {
            Some(p) => p.arrays().0.iter().map(|&i| i as usize).collect(),
            None => (0..n).collect(),
        };
        let (col_ptr, row_idx) = match symbolic.raw() {
            // Already in compressed columns with the diagonal first (tiny or diagonal
            // matrices, for which faer declines supernodes).
            SymbolicCholeskyRaw::Simplicial(s) => (s.col_ptr().to_vec(), s.row_idx().to_vec()),
            SymbolicCholeskyRaw::Supernodal(s) => supernodes_to_columns(s, &mut values),
        };
        let pattern = SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx);
        SparseCholesky {
            perm,
            l: SparseColMat::new(pattern, values),
        }
    }

    /// The dimension `n` of the factorised matrix.
    pub fn dim(&self) -> usize {
        self.perm.len()
    }

    /// Number of stored entries of `L` (a measure of fill-in).
    pub fn factor_nnz(&self) -> usize {
        self.l.val().len()
    }

    /// `log det A = 2 sum_i log L_ii` (the permutation does not change the determinant).
    pub fn log_det(&self) -> f64 {
        let l = self.l.as_ref();
        let diagonal = (0..self.dim()).map(|j| l.val_of_col(j)[0]);
        2.0 * diagonal.map(f64::ln).sum::<f64>()
    }

    /// Solves `A X = B` in place for a block `x` (n x m): `L L^T (P X) = P B`.
    ///
    /// # Panics
    /// If `x` does not have `n` rows (a programming error).
    pub fn solve_block_in_place(&self, x: &mut DMatrix<f64>) {
        let n = self.dim();
        assert_eq!(x.nrows(), n, "SparseCholesky::solve: row count differs");
        let mut y = DMatrix::from_fn(n, x.ncols(), |i, j| x[(self.perm[i], j)]);
        let l = self.l.as_ref();
        let p = par();
        solve_lower_triangular_in_place(l, Conj::No, as_faer_mut(&mut y), p);
        solve_lower_triangular_transpose_in_place(l, Conj::No, as_faer_mut(&mut y), p);
        for (i, &row) in self.perm.iter().enumerate() {
            for j in 0..x.ncols() {
                x[(row, j)] = y[(i, j)];
            }
        }
    }

    /// Solves `A X = B` in place for a block of `m` columns stored by rows: `x[i m .. (i + 1)
    /// m]` is row i of `X` (n x m), as are the columns of an m x n column-major matrix. Each
    /// row of the right-hand sides is then contiguous, so every entry of `L` updates all
    /// `m` columns in one vectorised step ([`crate::simd`]) on one pass over the factor,
    /// where [`SparseCholesky::solve_block_in_place`] passes over it once per four columns
    /// with scattered reads. Groups of columns run on separate threads; each column's
    /// operations are the same on any number of threads.
    ///
    /// # Panics
    /// If `x` does not have `n m` entries (a programming error).
    pub fn solve_rows_in_place(&self, x: &mut [f64], m: usize) {
        let n = self.dim();
        assert_eq!(x.len(), n * m, "SparseCholesky::solve_rows: size differs");
        if m == 0 {
            return;
        }
        let threads = rayon::current_num_threads().clamp(1, m);
        let width = m.div_ceil(threads);
        let groups: Vec<(usize, Vec<f64>)> = (0..m)
            .step_by(width)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|c0| {
                let c = width.min(m - c0);
                // Row i of the group in elimination order.
                let mut y = vec![0.0; n * c];
                for (yi, &row) in y.chunks_exact_mut(c).zip(&self.perm) {
                    yi.copy_from_slice(&x[row * m + c0..row * m + c0 + c]);
                }
                crate::simd::Level::widest().run_out(
                    &mut y[..],
                    #[inline(always)]
                    |y| self.substitute_rows(y, c),
                );
                (c0, y)
            })
            .collect();
        for (c0, y) in groups {
            let c = y.len() / n;
            for (yi, &row) in y.chunks_exact(c).zip(&self.perm) {
                x[row * m + c0..row * m + c0 + c].copy_from_slice(yi);
            }
        }
    }

    /// `L L^T Y = B` in place for `y` stored by rows of `c` values, in elimination order.
    #[inline(always)]
    fn substitute_rows(&self, y: &mut [f64], c: usize) {
        let l = self.l.as_ref();
        let n = self.dim();
        for j in 0..n {
            let (rows, vals) = (l.row_idx_of_col_raw(j), l.val_of_col(j));
            let (head, tail) = y.split_at_mut((j + 1) * c);
            let yj = &mut head[j * c..];
            let d = vals[0].recip();
            yj.iter_mut().for_each(|v| *v *= d);
            for (&i, &lij) in rows[1..].iter().zip(&vals[1..]) {
                let at = (i as usize - j - 1) * c;
                for (yi, v) in tail[at..at + c].iter_mut().zip(yj.iter()) {
                    *yi -= lij * v;
                }
            }
        }
        for j in (0..n).rev() {
            let (rows, vals) = (l.row_idx_of_col_raw(j), l.val_of_col(j));
            let (head, tail) = y.split_at_mut((j + 1) * c);
            let yj = &mut head[j * c..];
            for (&i, &lij) in rows[1..].iter().zip(&vals[1..]) {
                let at = (i as usize - j - 1) * c;
                for (v, yi) in yj.iter_mut().zip(&tail[at..at + c]) {
                    *v -= lij * yi;
                }
            }
            let d = vals[0].recip();
            yj.iter_mut().for_each(|v| *v *= d);
        }
    }

    /// Solves `A x = b` in place for one vector.
    ///
    /// # Panics
    /// If `x` does not have `n` entries (a programming error).
    pub fn solve_in_place(&self, x: &mut [f64]) {
        let mut m = DMatrix::from_column_slice(x.len(), 1, x);
        self.solve_block_in_place(&mut m);
        x.copy_from_slice(m.as_slice());
    }
}

/// The lower triangle of `a + shift I` in compressed columns `(col_ptr, row_idx, values)`,
/// the diagonal first in each column (stored or not, it gets the shift): the upper triangle
/// in CSR order is the lower triangle in CSC order, since `A = A^T`.
pub(crate) fn lower_triangle(
    a: &CsrMatrix,
    shift: f64,
    context: &str,
) -> Result<(Vec<u32>, Vec<u32>, Vec<f64>)> {
    let n = a.nrows();
    let (indptr, indices, vals) = a.parts();
    if u32::try_from(a.nnz() + n).is_err() {
        return Err(Error::invalid(
            context,
            format!(
                "the matrix has {} stored entries, more than the 2^32 that the sparse \
                 Cholesky factorisation indexes; use a sparser graph (smaller k)",
                a.nnz()
            ),
        ));
    }
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::with_capacity(a.nnz() / 2 + n);
    let mut lower_vals = Vec::with_capacity(a.nnz() / 2 + n);
    col_ptr.push(0u32);
    for i in 0..n {
        let (cols, row_vals) = (
            &indices[indptr[i]..indptr[i + 1]],
            &vals[indptr[i]..indptr[i + 1]],
        );
        let (_, diagonal, above) = diagonal_split(cols, row_vals, i);
        row_idx.push(i as u32);
        lower_vals.push(diagonal + shift);
        row_idx.extend(cols[above..].iter().map(|&j| j as u32));
        lower_vals.extend(&row_vals[above..]);
        col_ptr.push(row_idx.len() as u32);
    }
    Ok((col_ptr, row_idx, lower_vals))
}

/// The symbolic supernodal Cholesky analysis of a lower-triangular pattern, under the
/// elimination order `forward` (`forward[k]` is the row eliminated k-th) or, without one,
/// AMD's.
///
/// Like the numeric factorisation, the analysis (the ordering and the elimination tree) is
/// one call of faer's that cannot check the interruption flag; a pattern of at least
/// [`PARALLEL_FACTOR_ENTRIES`] entries runs through
/// [`unfold_core::interrupt::abandonable`] with a copy of the pattern.
///
/// # Errors
/// [`Error::Numerical`] if the factor would overflow 32-bit indices or faer fails, and
/// [`Error::Interrupted`] on a stop requested before a large analysis is done.
pub(crate) fn symbolic_cholesky(
    n: usize,
    col_ptr: &[u32],
    row_idx: &[u32],
    forward: Option<&[u32]>,
    context: &str,
) -> Result<SymbolicCholesky<u32>> {
    try_symbolic_cholesky(n, col_ptr, row_idx, forward, context)?
        .ok_or_else(|| index_overflow(context))
}

/// The error of a factor that would hold more than 2^32 entries.
pub(crate) fn index_overflow(context: &str) -> Error {
    Error::numerical(
        context,
        "the sparse factor would hold more than 2^32 entries (32-bit indices); the matrix's \
         graph is too dense for a sparse factor: use fewer neighbours (a smaller k), fewer \
         points, or reduce noise that makes the neighbourhood graph random (e.g. PCA first)",
    )
}

/// [`symbolic_cholesky`], with `None` where the factor would hold more than 2^32 entries
/// (32-bit indices): for a caller that has a way around the factor.
///
/// # Errors
/// As [`symbolic_cholesky`], but for the factor's size.
pub(crate) fn try_symbolic_cholesky(
    n: usize,
    col_ptr: &[u32],
    row_idx: &[u32],
    forward: Option<&[u32]>,
    context: &str,
) -> Result<Option<SymbolicCholesky<u32>>> {
    let result = if row_idx.len() < PARALLEL_FACTOR_ENTRIES {
        analyse(n, col_ptr, row_idx, forward)
    } else {
        let (col_ptr, row_idx) = (col_ptr.to_vec(), row_idx.to_vec());
        let forward = forward.map(<[u32]>::to_vec);
        unfold_core::interrupt::abandonable(move || {
            analyse(n, &col_ptr, &row_idx, forward.as_deref())
        })?
    };
    match result {
        Ok(symbolic) => Ok(Some(symbolic)),
        Err(faer::sparse::FaerError::IndexOverflow) => Ok(None),
        Err(e) => Err(Error::numerical(
            context,
            format!("sparse Cholesky analysis failed: {e:?}"),
        )),
    }
}

/// faer's symbolic analysis on the calling thread.
fn analyse(
    n: usize,
    col_ptr: &[u32],
    row_idx: &[u32],
    forward: Option<&[u32]>,
) -> std::result::Result<SymbolicCholesky<u32>, faer::sparse::FaerError> {
    let sym = SymbolicSparseColMatRef::new_checked(n, n, col_ptr, None, row_idx);
    let inverse: Option<Vec<u32>> = forward.map(|forward| {
        let mut inverse = vec![0u32; n];
        for (k, &i) in forward.iter().enumerate() {
            inverse[i as usize] = k as u32;
        }
        inverse
    });
    let ordering = match (forward, &inverse) {
        (Some(forward), Some(inverse)) => {
            SymmetricOrdering::Custom(PermRef::new_checked(forward, inverse, n))
        }
        _ => SymmetricOrdering::Amd,
    };
    factorize_symbolic_cholesky(
        sym,
        Side::Lower,
        ordering,
        CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
            ..Default::default()
        },
    )
}

/// Refuses a factor whose predicted fill (`len_val` values, from the symbolic analysis)
/// would not fit the memory limit ([`MemoryLimit`]): its values twice (faer's supernodal
/// layout and the compressed columns they are copied into) and a row index each, 20 bytes
/// a value. A neighbourhood graph whose long edges join distant parts of the data (ALLE's
/// later neighbours near the end of its order, a kNN graph of noise) can fill in
/// quadratically, and the fit is refused here instead of being killed for memory.
fn check_factor_memory(n: usize, len_val: usize, context: &str) -> Result<()> {
    let bytes = 20 * len_val as u64;
    let limit = MemoryLimit::from_env_or_machine()?;
    if bytes <= limit.bytes {
        return Ok(());
    }
    limit.check_proportional(
        context,
        n,
        bytes,
        format!(
            "its sparse Cholesky factor: {:.0} values per point after the fill-reducing \
             ordering, where a 2-D manifold's 10-NN graph needs about 40",
            len_val as f64 / n as f64
        ),
        "a smaller k, fewer points, or fewer, less noisy features (PCA first)",
    )
}

/// The values of the numeric Cholesky factor of `lower` (the lower triangle in compressed
/// columns) on `symbolic`, in faer's layout.
pub(crate) fn numeric_factor(
    symbolic: &Arc<SymbolicCholesky<u32>>,
    lower: SparseColMatRef<'_, u32, f64>,
    context: &str,
) -> Result<Vec<f64>> {
    match numeric_values(symbolic, lower, Numeric::Llt)? {
        (_, Some(index)) => Err(pivot_error(symbolic, index, context)),
        (values, None) => Ok(values),
    }
}

/// Which of faer's numeric factorisations to run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Numeric {
    /// `L L^T`, for positive definite matrices.
    Llt,
    /// `L D L^T` without pivoting, for quasi-definite ones.
    Ldlt,
}

/// The values of faer's numeric factor of `lower` on `symbolic`, with the position (in
/// elimination order, as faer reports it) of a pivot where it failed.
///
/// faer's factorisation is one call that cannot check the interruption flag. A factor of at
/// least [`PARALLEL_FACTOR_ENTRIES`] values (tens of milliseconds and up; a second for MEU
/// at 10^5 points) therefore runs through [`unfold_core::interrupt::abandonable`], on a
/// thread of its own with a copy of the lower triangle (`O(nnz A)`, against the factor's
/// flops), so that Ctrl-C is heard at once while faer works.
///
/// # Errors
/// [`Error::Interrupted`] on a stop requested before a large factor is done.
pub(crate) fn numeric_values(
    symbolic: &Arc<SymbolicCholesky<u32>>,
    lower: SparseColMatRef<'_, u32, f64>,
    kind: Numeric,
) -> Result<(Vec<f64>, Option<usize>)> {
    if symbolic.len_val() < PARALLEL_FACTOR_ENTRIES {
        // Small factors are faster on one thread: their supernodes are too small for the
        // parallel dense kernels to pay for waking the pool.
        return Ok(factorise(symbolic, lower, kind, Par::Seq));
    }
    let symbolic = Arc::clone(symbolic);
    let n = lower.ncols();
    let col_ptr = lower.symbolic().col_ptr().to_vec();
    let row_idx = lower.symbolic().row_idx().to_vec();
    let values = lower.val().to_vec();
    unfold_core::interrupt::abandonable(move || {
        let pattern = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        factorise(
            &symbolic,
            SparseColMatRef::new(pattern, &values),
            kind,
            par(),
        )
    })
}

/// faer's numeric factorisation on the calling thread (and the pool, under `p`).
fn factorise(
    symbolic: &SymbolicCholesky<u32>,
    lower: SparseColMatRef<'_, u32, f64>,
    kind: Numeric,
    p: Par,
) -> (Vec<f64>, Option<usize>) {
    let mut values = vec![0.0; symbolic.len_val()];
    // The two factorisations take the same arguments; only their methods differ.
    macro_rules! numeric {
        ($scratch:ident, $factor:ident) => {{
            let mut mem = MemBuffer::new(symbolic.$scratch::<f64>(p, Default::default()));
            let stack = MemStack::new(&mut mem);
            let (side, regularise, params) = (Side::Lower, Default::default(), Default::default());
            symbolic.$factor(&mut values, lower, side, regularise, p, stack, params)
        }};
    }
    let failed = match kind {
        Numeric::Llt => match numeric!(factorize_numeric_llt_scratch, factorize_numeric_llt) {
            Err(LltError::NonPositivePivot { index }) => Some(index),
            _ => None,
        },
        // A failed `L D L^T` has no position; its pivots are checked by the caller.
        Numeric::Ldlt => numeric!(factorize_numeric_ldlt_scratch, factorize_numeric_ldlt)
            .is_err()
            .then_some(0),
    };
    (values, failed)
}

/// The error for faer's non-positive pivot at `index`, naming the original row.
pub(crate) fn pivot_error(symbolic: &SymbolicCholesky<u32>, index: usize, context: &str) -> Error {
    let n = symbolic.nrows();
    // The position in elimination order: 1-based from faer's simplicial kernel, 0-based
    // from the supernodal one.
    let position = match symbolic.raw() {
        SymbolicCholeskyRaw::Simplicial(_) => index.saturating_sub(1),
        SymbolicCholeskyRaw::Supernodal(_) => index,
    };
    let position = position.min(n - 1);
    let row = match symbolic.perm() {
        Some(p) => p.arrays().0[position] as usize,
        None => position,
    };
    Error::NotPositiveDefinite {
        context: context.to_string(),
        pivot: row,
        advice: format!(
            "elimination (in fill-reducing order) met a non-positive pivot at row {row}, \
             so the matrix is singular or indefinite; check the parameters that build \
             it, or add a small ridge to the diagonal"
        ),
    }
}

/// `L` in compressed columns from faer's supernodal factor, whose values are compacted in
/// place: the columns of each supernode are the lower part of its dense diagonal block
/// followed by the rows below it. Entries that are exactly zero are the padding of relaxed
/// supernodes and are dropped. Values are read in storage order and never written ahead
/// of the read position, so one buffer serves.
fn supernodes_to_columns(
    symbolic: &SymbolicSupernodalCholesky<u32>,
    values: &mut Vec<f64>,
) -> (Vec<u32>, Vec<u32>) {
    let mut col_ptr = Vec::with_capacity(symbolic.nrows() + 1);
    let mut row_idx = Vec::with_capacity(values.len());
    col_ptr.push(0);
    let mut write = 0;
    for s in 0..symbolic.n_supernodes() {
        let node = symbolic.supernode(s);
        let (start, pattern) = (node.start(), node.pattern());
        let width = symbolic.supernode_end()[s] as usize - start;
        let height = width + pattern.len();
        let base = symbolic.col_ptr_for_val()[s] as usize;
        for c in 0..width {
            let column = base + c * height;
            for r in c..height {
                let v = values[column + r];
                if r == c || v != 0.0 {
                    values[write] = v;
                    write += 1;
                    row_idx.push(if r < width {
                        (start + r) as u32
                    } else {
                        pattern[r - width]
                    });
                }
            }
            col_ptr.push(write as u32);
        }
    }
    values.truncate(write);
    (col_ptr, row_idx)
}

/// The floating-point operations of the supernodal factorisation on `symbolic`, counting a
/// multiply-add as two: per supernode of `w` columns and `r` rows below its diagonal block,
/// `w^3 / 3` for the diagonal block's factor, `r w^2` for the triangular solve of the rows
/// below and `r^2 w` for their update of later columns (`n^3 / 3` for a dense matrix); a
/// simplicial factor's columns are supernodes of one column. A load-independent measure of
/// an ordering's cost.
pub(crate) fn factor_flops(symbolic: &SymbolicCholesky<u32>) -> f64 {
    let node = |w: f64, r: f64| w * w * w / 3.0 + r * w * w + r * r * w;
    match symbolic.raw() {
        SymbolicCholeskyRaw::Supernodal(s) => (0..s.n_supernodes())
            .map(|k| {
                let (begin, end) = (s.supernode_begin()[k], s.supernode_end()[k]);
                node((end - begin) as f64, s.supernode(k).pattern().len() as f64)
            })
            .sum(),
        SymbolicCholeskyRaw::Simplicial(s) => {
            let ptr = s.col_ptr();
            (0..s.ncols())
                .map(|j| node(1.0, (ptr[j + 1] - ptr[j]) as f64 - 1.0))
                .sum()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cholesky::Cholesky;
    use crate::test_util::{grid_laplacian, random_graph_laplacian};

    fn shifted(a: &CsrMatrix, s: f64) -> CsrMatrix {
        let mut t = Vec::new();
        for i in 0..a.nrows() {
            let (cols, vals) = a.row(i);
            t.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
            t.push((i, i, s));
        }
        CsrMatrix::from_triplets(a.nrows(), a.ncols(), &t)
    }

    #[test]
    fn matches_dense_cholesky_on_small_and_large_grids() {
        // A diagonal matrix, which faer factorises without supernodes, and two with fill.
        let diagonal: Vec<(usize, usize, f64)> = (0..9).map(|i| (i, i, 1.0 + i as f64)).collect();
        for a in [
            CsrMatrix::from_triplets(9, 9, &diagonal),
            shifted(&grid_laplacian(6, 7), 0.3),
            shifted(&random_graph_laplacian(500, 4, 1), 0.3),
        ] {
            let n = a.nrows();
            let sc = SparseCholesky::new(&a, "grid").unwrap();
            let d = a.to_dense();
            let dc = Cholesky::new(&d, "grid").unwrap();
            assert!((sc.log_det() - dc.log_det()).abs() < 1e-9 * dc.log_det().abs());
            let b = DMatrix::from_fn(n, 2, |i, j| ((3 * i + j) as f64).sin());
            let mut x = b.clone();
            sc.solve_block_in_place(&mut x);
            assert!((&x - dc.solve(&b)).amax() < 1e-10);
            let mut xv: Vec<f64> = b.column(0).iter().copied().collect();
            sc.solve_in_place(&mut xv);
            assert!(xv
                .iter()
                .zip(x.column(0).iter())
                .all(|(p, q)| (p - q).abs() < 1e-12));
            // The stored factor is the dense Cholesky factor of P A P^T, entry for entry,
            // with exactly its non-zeros: the padding of relaxed supernodes is dropped.
            let permuted = DMatrix::from_fn(n, n, |i, j| d[(sc.perm[i], sc.perm[j])]);
            let dense_l = nalgebra::Cholesky::new(permuted).unwrap().l();
            let mut ours = DMatrix::<f64>::zeros(n, n);
            let l = sc.l.as_ref();
            for j in 0..n {
                let rows = l.row_idx_of_col_raw(j);
                assert_eq!(rows[0] as usize, j, "diagonal first in column {j}");
                for (&i, &v) in rows.iter().zip(l.val_of_col(j)) {
                    ours[(i as usize, j)] = v;
                }
            }
            assert!((&ours - &dense_l).amax() < 1e-12);
            assert_eq!(
                sc.factor_nnz(),
                dense_l.iter().filter(|v| **v != 0.0).count()
            );
            assert!(sc.factor_nnz() >= a.nnz() / 2);
            // Factorising `A + s I` without forming it gives the factor of the formed one.
            let direct = SparseCholesky::of_shifted(&a, 0.7, "shifted").unwrap();
            let formed = SparseCholesky::new(&a.add_to_diagonal(0.7), "formed").unwrap();
            assert_eq!(direct.l.val(), formed.l.val());
        }
    }

    /// The solve of a block stored by rows equals the column solve for one to many columns
    /// (to rounding: the two order no sums differently, only the reciprocal's use), on a
    /// supernodal factor, and gives the same bits on one and on three threads.
    #[test]
    fn a_block_by_rows_solves_as_by_columns() {
        let a = shifted(&random_graph_laplacian(700, 5, 3), 0.2);
        let sc = SparseCholesky::new(&a, "rows").unwrap();
        let n = a.nrows();
        for m in [1, 4, 13] {
            let b = DMatrix::from_fn(n, m, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
            let mut by_columns = b.clone();
            sc.solve_block_in_place(&mut by_columns);
            let rows = |threads: usize| {
                let mut x = b.transpose().as_slice().to_vec();
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| sc.solve_rows_in_place(&mut x, m));
                x
            };
            let (one, three) = (rows(1), rows(3));
            assert_eq!(one, three, "m = {m}");
            let by_rows = DMatrix::from_row_slice(n, m, &one);
            let scale = by_columns.amax();
            assert!(
                (&by_rows - &by_columns).amax() < 1e-12 * scale,
                "m = {m}: {}",
                (&by_rows - &by_columns).amax()
            );
        }
    }

    #[test]
    fn errors_name_the_failing_row() {
        let t: Vec<(usize, usize, f64)> = (0..6)
            .map(|i| (i, i, if i == 4 { -1.0 } else { 1.0 + i as f64 }))
            .collect();
        let a = CsrMatrix::from_triplets(6, 6, &t);
        match SparseCholesky::new(&a, "diag") {
            Err(Error::NotPositiveDefinite { pivot, context, .. }) => {
                assert_eq!(pivot, 4);
                assert_eq!(context, "diag");
            }
            other => panic!("unexpected {other:?}"),
        }
        // The same in a supernodal factorisation: only row 17 makes A indefinite.
        let big = shifted(&random_graph_laplacian(500, 4, 1), 0.3);
        let mut t = Vec::new();
        for i in 0..big.nrows() {
            let (cols, vals) = big.row(i);
            t.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
        }
        t.push((17, 17, -1000.0));
        let big = CsrMatrix::from_triplets(500, 500, &t);
        match SparseCholesky::new(&big, "big") {
            Err(Error::NotPositiveDefinite { pivot, .. }) => assert_eq!(pivot, 17),
            other => panic!("unexpected {other:?}"),
        }
        // A Laplacian shifted down is indefinite: some pivot must fail.
        assert!(matches!(
            SparseCholesky::new(&shifted(&grid_laplacian(5, 5), -0.1), "L"),
            Err(Error::NotPositiveDefinite { .. })
        ));
        let asym = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, 1.0), (0, 1, 0.5)]);
        assert!(matches!(
            SparseCholesky::new(&asym, "x"),
            Err(Error::InvalidParameter { .. })
        ));
        let nan = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, f64::NAN)]);
        assert!(matches!(
            SparseCholesky::new(&nan, "x"),
            Err(Error::NonFinite { .. })
        ));
    }

    #[test]
    fn a_factor_past_32_bit_indices_is_told_apart_from_a_failure() {
        // A star of n points with its hub eliminated first fills in every pair of the
        // others: n (n + 1) / 2 entries, past 2^32 from n = 92,682, from a pattern of 2n.
        // (`symbolic_cholesky` is `try_symbolic_cholesky`'s `None` made an error.)
        let n = 93_000u32;
        let col_ptr: Vec<u32> = std::iter::once(0).chain(n..=2 * n - 1).collect();
        let row_idx: Vec<u32> = (0..n).chain(1..n).collect();
        let hub_first: Vec<u32> = (0..n).collect();
        match symbolic_cholesky(n as usize, &col_ptr, &row_idx, Some(&hub_first), "star") {
            Err(Error::Numerical { context, message }) => {
                assert_eq!(context, "star");
                assert!(message.contains("2^32"), "{message}");
            }
            other => panic!("unexpected {other:?}"),
        }
        // Hub last, there is no fill (but a padding entry of the relaxed supernodes).
        let hub_last: Vec<u32> = (1..n).chain(std::iter::once(0)).collect();
        let symbolic =
            try_symbolic_cholesky(n as usize, &col_ptr, &row_idx, Some(&hub_last), "star")
                .unwrap()
                .unwrap();
        assert!(
            symbolic.len_val() <= 2 * n as usize,
            "{}",
            symbolic.len_val()
        );
    }
}
