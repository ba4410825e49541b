//! Dense matrix products on faer for nalgebra matrices: the one home of the GEMM wrappers.
//!
//! Two kinds of parallelism, both giving the same bits for any number of threads:
//! - [`mul`], [`tr_mul`]: one faer product, on the calling thread below
//!   [`PAR_MIN_DIM`](crate::view::PAR_MIN_DIM) rows ([`par_for`]);
//! - the tall-skinny products [`tall_tr_mul`], [`tall_mul`], [`tall_mul_acc`] and the Gram
//!   matrix [`tr_mul_self`]: fixed blocks of rows (never split by thread count), each a
//!   sequential faer product, partial sums added in block order.

use crate::view::{as_faer, as_faer_mut, par_for};
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, MatRef, Par};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use std::ops::Range;

/// `a b` for faer views of any stride or transposition, into a new matrix, with the
/// given parallelism.
pub fn mul_with(a: MatRef<'_, f64>, b: MatRef<'_, f64>, par: Par) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(a.nrows(), b.ncols());
    matmul(as_faer_mut(&mut out), Accum::Replace, a, b, 1.0, par);
    out
}

/// `a b` (parallel from [`PAR_MIN_DIM`](crate::view::PAR_MIN_DIM) rows of `a` on).
pub fn mul(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    mul_with(as_faer(a), as_faer(b), par_for(a.nrows()))
}

/// [`mul`] of a view `y` of any layout (n x p) by `z` (p x m), read where it lies: rows
/// stored contiguously (a C-order array) with at least [`WIDE_ROWS`] columns are
/// multiplied as `(z^T Y^T)^T` ([`centred_mul`]); otherwise the product is [`mul`]'s, to
/// the bit for a column-major view.
pub fn mul_of(y: MatRef<'_, f64>, z: &DMatrix<f64>) -> DMatrix<f64> {
    let par = par_for(y.nrows());
    if y.col_stride() == 1 && y.row_stride() != 1 && y.ncols() >= WIDE_ROWS {
        mul_with(as_faer(z).transpose(), y.transpose(), par).transpose()
    } else {
        mul_with(y, as_faer(z), par)
    }
}

/// `a^T b` (parallel from [`PAR_MIN_DIM`](crate::view::PAR_MIN_DIM) rows of `a` on).
pub fn tr_mul(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    mul_with(as_faer(a).transpose(), as_faer(b), par_for(a.nrows()))
}

/// `a^T a`, exactly symmetric: fixed blocks of rows in parallel, each a lower-triangular
/// faer product (half the flops of a full one), summed in block order and mirrored.
pub fn tr_mul_self(a: &DMatrix<f64>) -> DMatrix<f64> {
    tr_mul_self_of(as_faer(a))
}

/// [`tr_mul_self`] of a view of any layout, read where it lies (the same bits as
/// [`tr_mul_self`] for a column-major view).
pub fn tr_mul_self_of(a: MatRef<'_, f64>) -> DMatrix<f64> {
    gram_of_blocks(a.nrows(), |rows| {
        lower_gram(a.subrows(rows.start, rows.len()))
    })
}

/// `(a - 1 m^T)^T (a - 1 m^T)` for the row vector `m` (the scatter matrix of the rows of
/// `a` about `m`), exactly symmetric, without forming the centred matrix: each block of
/// rows is centred in its own buffer before its product ([`tr_mul_self`]'s blocks). `a`
/// may have any layout; a row-major view (a C-order array) is read in place.
pub fn centred_tr_mul_self(a: MatRef<'_, f64>, m: &[f64]) -> DMatrix<f64> {
    assert_eq!(m.len(), a.ncols(), "one centre per column");
    let p = a.ncols();
    gram_of_blocks(a.nrows(), |rows| {
        if a.col_stride() == 1 {
            // Rows stored contiguously: each block centred row by row into a row-major
            // buffer, read by the product as it lies.
            let mut block = vec![0.0; rows.len() * p];
            for (i, out) in rows.clone().zip(block.chunks_exact_mut(p)) {
                let row = a.row(i).try_as_row_major().expect("unit column stride");
                for ((o, &v), &c) in out.iter_mut().zip(row.as_slice()).zip(m) {
                    *o = v - c;
                }
            }
            lower_gram(MatRef::from_row_major_slice(&block, rows.len(), p))
        } else {
            let block = DMatrix::from_fn(rows.len(), p, |i, j| a[(rows.start + i, j)] - m[j]);
            lower_gram(as_faer(&block))
        }
    })
}

/// `Yc z` for `Yc = Y - 1 mean^T` without forming `Yc`: `Y z - 1 (mean^T z)`. `y` may have
/// any layout. Rows stored contiguously (a C-order array) with at least
/// [`WIDE_ROWS`] columns are multiplied as `(z^T Y^T)^T`, where faer reads them as the
/// columns of `Y^T` (measured at n x p = 10,000 x 500 and 50,000 x 1000 with 50 and 30
/// columns in `z`: 0.70x and 0.56x the time of the direct product; at 100,000 x 50 it was
/// 1.2x, so narrow rows keep the direct one).
pub fn centred_mul(y: MatRef<'_, f64>, mean: &DVector<f64>, z: &DMatrix<f64>) -> DMatrix<f64> {
    let mut out = mul_of(y, z);
    let shift = z.tr_mul(mean);
    for (mut col, &s) in out.column_iter_mut().zip(shift.iter()) {
        col.add_scalar_mut(-s);
    }
    out
}

/// Columns from which [`centred_mul`] multiplies contiguous rows in transposed form.
pub(crate) const WIDE_ROWS: usize = 200;

/// The lower Gram matrices of the fixed row blocks of `0..n` ([`gram_blocks`]) summed in
/// block order and mirrored: the blocks run [`GRAM_WAVE`] at a time, so that at most that
/// many p x p partial sums are held at once (at p = 2000 each is 32 MB).
fn gram_of_blocks<F>(n: usize, lower: F) -> DMatrix<f64>
where
    F: Fn(&Range<usize>) -> DMatrix<f64> + Sync,
{
    let blocks = gram_blocks(n);
    let mut sum: Option<DMatrix<f64>> = None;
    for wave in blocks.chunks(GRAM_WAVE) {
        let parts: Vec<DMatrix<f64>> = wave.par_iter().map(&lower).collect();
        for part in parts {
            match &mut sum {
                None => sum = Some(part),
                Some(s) => *s += part,
            }
        }
    }
    sum_lower_and_mirror(vec![sum.expect("at least one block")])
}

/// Blocks of [`gram_of_blocks`] computed at once.
const GRAM_WAVE: usize = 4;

/// Fixed blocks of rows `0..n` for [`tr_mul_self`] (so that block sums do not depend on
/// the thread count): at least [`GRAM_ROWS`] rows each, at most 16 blocks.
fn gram_blocks(n: usize) -> Vec<Range<usize>> {
    let rows = n.div_ceil(n.div_ceil(GRAM_ROWS).clamp(1, 16)).max(1);
    (0..n.div_ceil(rows).max(1))
        .map(|b| (b * rows).min(n)..((b + 1) * rows).min(n))
        .collect()
}

/// Rows per block of [`tr_mul_self`] (at least).
const GRAM_ROWS: usize = 1024;

/// The lower triangle of `a^T a` (the rest zero), on the calling thread. Summing these
/// over blocks of rows with [`sum_lower_and_mirror`] gives [`tr_mul_self`] of the stacked
/// blocks.
pub fn lower_gram(a: MatRef<'_, f64>) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(a.ncols(), a.ncols());
    triangular::matmul(
        as_faer_mut(&mut out),
        BlockStructure::TriangularLower,
        Accum::Replace,
        a.transpose(),
        BlockStructure::Rectangular,
        a,
        BlockStructure::Rectangular,
        1.0,
        Par::Seq,
    );
    out
}

/// The sum of lower triangles in order, mirrored to a symmetric matrix.
///
/// # Panics
/// If `parts` is empty.
pub fn sum_lower_and_mirror(parts: Vec<DMatrix<f64>>) -> DMatrix<f64> {
    let mut parts = parts.into_iter();
    let mut sum = parts.next().expect("at least one block");
    for part in parts {
        sum += part;
    }
    for j in 0..sum.ncols() {
        for i in 0..j {
            sum[(i, j)] = sum[(j, i)];
        }
    }
    sum
}

/// Rows per task of the tall-skinny products. Work is split into fixed row chunks (never
/// by thread count) and partial sums are added in chunk order, so the products run in
/// parallel yet give the same bits for any number of threads. Below one chunk the product
/// runs on the calling thread: handing a product of a few hundred microseconds to the
/// thread pool costs more than it saves.
const ROW_CHUNK: usize = 8192;

/// The row ranges `(start, len)` of the fixed chunks of `n` rows.
fn row_chunks(n: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(ROW_CHUNK).max(1))
        .map(|c| (c * ROW_CHUNK, ROW_CHUNK.min(n - c * ROW_CHUNK)))
        .collect()
}

/// `f` on each fixed row chunk of `n` rows, in parallel when there is more than one.
fn per_chunk<T: Send>(n: usize, f: impl Fn((usize, usize)) -> T + Sync + Send) -> Vec<T> {
    let chunks = row_chunks(n);
    if chunks.len() == 1 {
        chunks.into_iter().map(f).collect()
    } else {
        chunks.into_par_iter().map(f).collect()
    }
}

/// `A^T B` for tall `A` and `B` (n x k and n x b).
pub fn tall_tr_mul(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> DMatrix<f64> {
    let parts: Vec<DMatrix<f64>> = per_chunk(a.nrows(), |(r0, len)| {
        mul_with(a.subrows(r0, len).transpose(), b.subrows(r0, len), Par::Seq)
    });
    let mut parts = parts.into_iter();
    let first = parts.next().expect("at least one chunk");
    parts.fold(first, |acc, p| acc + p)
}

/// `A B` for tall `A` (n x k) and small `B` (k x b).
pub fn tall_mul(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> DMatrix<f64> {
    let mut c = DMatrix::zeros(a.nrows(), b.ncols());
    tall_mul_acc(&mut c, a, b, 1.0);
    c
}

/// `C += alpha A B` for tall `A` (n x k) and small `B` (k x b), each fixed chunk of rows
/// computed sequentially by one task.
pub fn tall_mul_acc(c: &mut DMatrix<f64>, a: MatRef<'_, f64>, b: MatRef<'_, f64>, alpha: f64) {
    let parts: Vec<DMatrix<f64>> = per_chunk(a.nrows(), |(r0, len)| {
        let mut p = DMatrix::zeros(len, b.ncols());
        matmul(
            as_faer_mut(&mut p),
            Accum::Replace,
            a.subrows(r0, len),
            b,
            alpha,
            Par::Seq,
        );
        p
    });
    for ((r0, len), p) in row_chunks(a.nrows()).into_iter().zip(parts) {
        let mut rows = c.rows_mut(r0, len);
        rows += p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(r: usize, c: usize, seed: f64) -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |i, j| ((i * 31 + j * 17) as f64 * seed).sin())
    }

    #[test]
    fn products_match_nalgebra() {
        let (a, b) = (m(700, 5, 0.37), m(700, 3, 0.11));
        let close = |x: &DMatrix<f64>, y: &DMatrix<f64>| assert!((x - y).amax() < 1e-11);
        close(&tr_mul(&a, &b), &(a.transpose() * &b));
        close(&mul(&a, &b.rows(0, 5).into_owned()), &(&a * b.rows(0, 5)));
        close(
            &tall_tr_mul(as_faer(&a), as_faer(&b)),
            &(a.transpose() * &b),
        );
        let small = m(5, 2, 0.5);
        close(&tall_mul(as_faer(&a), as_faer(&small)), &(&a * &small));
        let mut c = m(700, 2, 0.2);
        let want = &c - &a * &small * 2.0;
        tall_mul_acc(&mut c, as_faer(&a), as_faer(&small), -2.0);
        close(&c, &want);
        let g = tr_mul_self(&m(2500, 4, 0.3));
        assert_eq!(g, g.transpose());
        close(&g, &(m(2500, 4, 0.3).transpose() * m(2500, 4, 0.3)));
    }

    /// The view products read a row-major view where it lies and give the matrix's
    /// products (to the bit for a column-major view).
    #[test]
    fn view_products_take_either_layout() {
        for p in [6, WIDE_ROWS + 10] {
            let (a, z) = (m(2300, p, 0.21), m(p, 3, 0.13));
            let rows: Vec<f64> = a.transpose().as_slice().to_vec();
            let view = MatRef::from_row_major_slice(&rows, 2300, p);
            assert_eq!(mul_of(as_faer(&a), &z), mul(&a, &z));
            assert_eq!(tr_mul_self_of(as_faer(&a)), tr_mul_self(&a));
            let close = |x: DMatrix<f64>, y: DMatrix<f64>| {
                assert!((&x - &y).amax() <= 1e-12 * y.amax(), "p = {p}");
            };
            close(mul_of(view, &z), mul(&a, &z));
            let g = tr_mul_self_of(view);
            assert_eq!(g, g.transpose());
            close(g, tr_mul_self(&a));
        }
    }
}
