//! Zero-copy views between `nalgebra` dense matrices and `faer` matrices.
//!
//! Both libraries store dense matrices column-major with a leading dimension equal to the
//! number of rows, so a view is a reinterpretation of the same slice.

use faer::{MatMut, MatRef};
use nalgebra::DMatrix;

/// A faer view of a nalgebra matrix.
pub fn as_faer(m: &DMatrix<f64>) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(m.as_slice(), m.nrows(), m.ncols())
}

/// A mutable faer view of a nalgebra matrix.
pub fn as_faer_mut(m: &mut DMatrix<f64>) -> MatMut<'_, f64> {
    let (r, c) = (m.nrows(), m.ncols());
    MatMut::from_column_major_slice_mut(m.as_mut_slice(), r, c)
}

/// Copies a faer matrix (of any stride) into a new nalgebra matrix.
pub fn to_nalgebra(m: MatRef<'_, f64>) -> DMatrix<f64> {
    DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
}

/// The number of parts faer's parallel kernels split their work into, whatever the size of
/// rayon's pool: faer splits a kernel by its `Par`'s thread count (its parallel
/// tridiagonalisation adds per-part partial sums), so `Par::rayon(0)` (the pool's size)
/// would change the last bits of an eigendecomposition with the number of threads. With a
/// fixed count the parts are the same on 1 thread or 64 (a smaller pool runs them in
/// turn), so every result is the same to the bit; the cost is that one faer kernel uses
/// at most this many threads.
pub const FAER_PARTS: usize = 8;

/// The parallelism faer kernels use: [`FAER_PARTS`] parts on rayon's current pool.
pub fn par() -> faer::Par {
    faer::Par::rayon(FAER_PARTS)
}

/// Dimension below which the dense factorisations, solves and input checks run on the
/// calling thread: waking the pool costs more than it saves there (a Cholesky factor of
/// n = 200 takes 0.10 ms sequentially and 0.22 ms on two threads; they break even near
/// n = 600).
pub const PAR_MIN_DIM: usize = 512;

/// [`par`] for a dense kernel of dimension `n`, sequential below [`PAR_MIN_DIM`].
pub fn par_for(n: usize) -> faer::Par {
    if n < PAR_MIN_DIM {
        faer::Par::Seq
    } else {
        par()
    }
}
