//! Dense Cholesky factorisation `A = L L^T` of symmetric positive definite matrices on faer,
//! with log-determinants, solves and inverses.

use crate::check::{check_dense_symmetric, check_square};
use crate::view::{as_faer, as_faer_mut, par_for};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::triangular_inverse::invert_lower_triangular;
use faer::linalg::triangular_solve::solve_lower_triangular_in_place;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::Accum;
use nalgebra::{DMatrix, DVector};
use unfold_core::{Error, Result};

/// The Cholesky factor `L` (lower triangular, positive diagonal) of a symmetric positive
/// definite matrix `A = L L^T`.
#[derive(Clone, Debug)]
pub struct Cholesky {
    /// Lower triangular factor; the strict upper triangle is zero.
    l: DMatrix<f64>,
}

/// Matrices up to this order are factorised by one call of faer's Cholesky (about a
/// quarter of a second at 4096 on two cores); larger ones by [`factor_blocked`], which
/// checks the process's interruption flag between steps.
const BLOCKED_FROM: usize = 4096;

/// The width of [`factor_blocked`]'s panels and of the strips of its trailing updates.
const PANEL: usize = 512;

/// faer's in-place Cholesky of the lower triangle of `a`; `Err(index)` of the first
/// non-positive pivot.
fn factor_in_place(a: faer::MatMut<'_, f64>, par: faer::Par) -> std::result::Result<(), usize> {
    let n = a.nrows();
    let mut mem = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<f64>(
        n,
        par,
        Default::default(),
    ));
    match llt::factor::cholesky_in_place(
        a,
        Default::default(),
        par,
        MemStack::new(&mut mem),
        Default::default(),
    ) {
        Err(llt::factor::LltError::NonPositivePivot { index }) => Err(index),
        Ok(_) => Ok(()),
    }
}

/// The same factor as [`factor_in_place`], right-looking by panels of [`PANEL`] columns:
/// factorise the diagonal block, solve the panel below it (`L21 = A21 L11^-T`), and
/// subtract `L21 L21^T` from the trailing matrix in strips of [`PANEL`] columns, each a
/// fraction of a second of work between checks of the interruption flag
/// ([`unfold_core::interrupt`]). The outer result is the interruption; the inner one the
/// pivot, as for [`factor_in_place`].
fn factor_blocked(l: &mut DMatrix<f64>) -> Result<std::result::Result<(), usize>> {
    let n = l.nrows();
    let par = par_for(n);
    for k in (0..n).step_by(PANEL) {
        unfold_core::interrupt::check()?;
        let b = PANEL.min(n - k);
        let rest = as_faer_mut(l).submatrix_mut(k, k, n - k, n - k);
        let (mut a11, _, mut a21, mut a22) = rest.split_at_mut(b, b);
        if let Err(index) = factor_in_place(a11.rb_mut(), par) {
            return Ok(Err(k + index));
        }
        if a21.nrows() == 0 {
            break;
        }
        solve_lower_triangular_in_place(a11.rb(), a21.rb_mut().transpose_mut(), par);
        let m = a22.nrows();
        for j in (0..m).step_by(PANEL) {
            unfold_core::interrupt::check()?;
            let w = PANEL.min(m - j);
            matmul(
                a22.rb_mut().submatrix_mut(j, j, m - j, w),
                Accum::Add,
                a21.rb().submatrix(j, 0, m - j, b),
                a21.rb().submatrix(j, 0, w, b).transpose(),
                -1.0,
                par,
            );
        }
    }
    Ok(Ok(()))
}

/// `M = L^{-1}` for lower triangular `l` into `m` (its strict upper triangle zeroed), one
/// panel of [`PANEL`] columns at a time, each by forward substitution in row panels:
/// `M[r, J] = L[r, r]^{-1} (E[r, J] - L[r, j0..r] M[j0..r, J])` for the columns `J`
/// starting at `j0` (the rows above `j0` are zero). It costs about `n^3 / 6` multiply-adds,
/// as a triangular inverse does, and checks the interruption flag before every row panel
/// (a fraction of a second of work).
fn invert_lower_blocked(
    mut m: faer::MatMut<'_, f64>,
    l: faer::MatRef<'_, f64>,
    par: faer::Par,
) -> Result<()> {
    let n = l.nrows();
    for j0 in (0..n).step_by(PANEL) {
        let b = PANEL.min(n - j0);
        let mut strip = m.rb_mut().submatrix_mut(0, j0, n, b);
        strip.fill(0.0);
        for i in 0..b {
            strip[(j0 + i, i)] = 1.0;
        }
        let mut below = strip.submatrix_mut(j0, 0, n - j0, b);
        for r0 in (0..n - j0).step_by(PANEL) {
            unfold_core::interrupt::check()?;
            let h = PANEL.min(n - j0 - r0);
            let (done, mut rest) = below.rb_mut().split_at_row_mut(r0);
            let mut panel = rest.rb_mut().subrows_mut(0, h);
            if r0 > 0 {
                matmul(
                    panel.rb_mut(),
                    Accum::Add,
                    l.submatrix(j0 + r0, j0, h, r0),
                    done.rb(),
                    -1.0,
                    par,
                );
            }
            solve_lower_triangular_in_place(l.submatrix(j0 + r0, j0 + r0, h, h), panel, par);
        }
    }
    Ok(())
}

/// The lower triangle of `M^T M` for lower triangular `m` into `out`, by blocks of
/// [`PANEL`] x [`PANEL`]: block `(I, J)` with `I` at or below `J` is `M[i0.., I]^T
/// M[i0.., J]` (the rows above `i0` of `M[:, I]` are zero). It costs about `n^3 / 6`
/// multiply-adds, as the triangular product does, and checks the interruption flag before
/// every block.
fn gram_lower_blocked(
    mut out: faer::MatMut<'_, f64>,
    m: faer::MatRef<'_, f64>,
    par: faer::Par,
) -> Result<()> {
    let n = m.nrows();
    for j0 in (0..n).step_by(PANEL) {
        let b = PANEL.min(n - j0);
        for i0 in (j0..n).step_by(PANEL) {
            unfold_core::interrupt::check()?;
            let h = PANEL.min(n - i0);
            matmul(
                out.rb_mut().submatrix_mut(i0, j0, h, b),
                Accum::Replace,
                m.submatrix(i0, i0, n - i0, h).transpose(),
                m.submatrix(i0, j0, n - i0, b),
                1.0,
                par,
            );
        }
    }
    Ok(())
}

impl Cholesky {
    /// Factorises `a`, which must be square, finite, symmetric and positive definite.
    ///
    /// `context` names the matrix in error messages (e.g. `"MEU precision"`).
    ///
    /// # Errors
    /// [`Error::NonFinite`], [`Error::Empty`], [`Error::DimensionMismatch`] (not square),
    /// [`Error::InvalidParameter`] (not symmetric), or [`Error::NotPositiveDefinite`] with
    /// the 0-based index of the first non-positive pivot: the leading `(pivot + 1)`-block
    /// of `a` is not positive definite.
    pub fn new(a: &DMatrix<f64>, context: &str) -> Result<Cholesky> {
        check_dense_symmetric(a, context)?;
        Cholesky::factor_owned(a.clone(), context)
    }

    /// Factorises `a` in its own storage, reading only its lower triangle: for matrices
    /// that are symmetric by construction, it saves [`Cholesky::new`]'s copy and symmetry
    /// check.
    ///
    /// # Errors
    /// As [`Cholesky::new`], except that an asymmetric `a` is not detected.
    pub fn new_owned(a: DMatrix<f64>, context: &str) -> Result<Cholesky> {
        check_square(a.nrows(), a.ncols(), context)?;
        unfold_core::check_finite(&a, context)?;
        Cholesky::factor_owned(a, context)
    }

    /// Factorises an owned, already validated symmetric matrix in place (only its lower
    /// triangle is read).
    pub(crate) fn factor_owned(mut l: DMatrix<f64>, context: &str) -> Result<Cholesky> {
        let n = l.nrows();
        let result = if n <= BLOCKED_FROM {
            factor_in_place(as_faer_mut(&mut l), par_for(n))
        } else {
            factor_blocked(&mut l)?
        };
        if let Err(index) = result {
            return Err(Error::NotPositiveDefinite {
                context: context.to_string(),
                pivot: index,
                advice: format!(
                    "the leading {} x {} block has a non-positive pivot, so the matrix is \
                     singular or indefinite; check the parameters that build it, or add a \
                     small ridge (e.g. 1e-8 times its largest diagonal entry) to the diagonal",
                    index + 1,
                    index + 1
                ),
            });
        }
        for j in 1..n {
            for i in 0..j {
                l[(i, j)] = 0.0;
            }
        }
        Ok(Cholesky { l })
    }

    /// The dimension `n` of the factorised matrix.
    pub fn dim(&self) -> usize {
        self.l.nrows()
    }

    /// `log det A = 2 sum_i log L_ii`.
    pub fn log_det(&self) -> f64 {
        2.0 * self.l.diagonal().iter().map(|d| d.ln()).sum::<f64>()
    }

    /// Solves `A X = B` in place (`b` is n x m).
    ///
    /// # Panics
    /// If `b` does not have `n` rows (a programming error).
    pub fn solve_in_place(&self, b: &mut DMatrix<f64>) {
        assert_eq!(b.nrows(), self.dim(), "Cholesky::solve: row count differs");
        llt::solve::solve_in_place(
            as_faer(&self.l),
            as_faer_mut(b),
            par_for(self.dim()),
            MemStack::new(&mut MemBuffer::new(faer::dyn_stack::StackReq::EMPTY)),
        );
    }

    /// `X = A^{-1} B` (`b` is n x m).
    ///
    /// # Panics
    /// If `b` does not have `n` rows (a programming error).
    pub fn solve(&self, b: &DMatrix<f64>) -> DMatrix<f64> {
        let mut x = b.clone();
        self.solve_in_place(&mut x);
        x
    }

    /// `x = A^{-1} b`.
    ///
    /// # Panics
    /// If `b` does not have `n` entries (a programming error).
    pub fn solve_vec(&self, b: &DVector<f64>) -> DVector<f64> {
        let mut x = DMatrix::from_column_slice(b.len(), 1, b.as_slice());
        self.solve_in_place(&mut x);
        DVector::from_column_slice(x.as_slice())
    }

    /// The symmetric inverse `A^{-1} = L^{-T} L^{-1}`.
    ///
    /// # Errors
    /// [`Error::Interrupted`] when the process's interruption flag is set during the
    /// inversion of a matrix above [`BLOCKED_FROM`] (which checks it between blocks).
    pub fn inverse(&self) -> Result<DMatrix<f64>> {
        let n = self.dim();
        if n > BLOCKED_FROM {
            return self.clone().into_inverse();
        }
        let p = par_for(n);
        let mut inv = DMatrix::<f64>::zeros(n, n);
        let mut mem = MemBuffer::new(llt::inverse::inverse_scratch::<f64>(n, p));
        llt::inverse::inverse(
            as_faer_mut(&mut inv),
            as_faer(&self.l),
            p,
            MemStack::new(&mut mem),
        );
        mirror_lower(&mut inv);
        Ok(inv)
    }

    /// [`Cholesky::inverse`] written over the factor's own storage: one n x n scratch for
    /// `L^{-1}` and no new matrix. The same numbers as [`Cholesky::inverse`].
    ///
    /// # Errors
    /// As [`Cholesky::inverse`].
    pub fn into_inverse(self) -> Result<DMatrix<f64>> {
        let n = self.dim();
        self.into_inverse_with(&mut DMatrix::zeros(n, n))
    }

    /// [`Cholesky::into_inverse`] with its n x n scratch given (its values are overwritten),
    /// for callers that keep one between inversions: a fresh n x n buffer costs a page
    /// fault per 4 KiB. The same numbers as [`Cholesky::inverse`].
    ///
    /// Above [`BLOCKED_FROM`] both triangular steps run by blocks ([`invert_lower_blocked`],
    /// [`gram_lower_blocked`]) with a check of the interruption flag between blocks.
    ///
    /// # Errors
    /// As [`Cholesky::inverse`].
    ///
    /// # Panics
    /// If `l_inv` is not n x n (a programming error).
    pub fn into_inverse_with(self, l_inv: &mut DMatrix<f64>) -> Result<DMatrix<f64>> {
        let n = self.dim();
        assert_eq!(
            l_inv.shape(),
            (n, n),
            "Cholesky::into_inverse_with: scratch size"
        );
        let p = par_for(n);
        let mut out = self.l;
        if n > BLOCKED_FROM {
            invert_lower_blocked(as_faer_mut(l_inv), as_faer(&out), p)?;
            gram_lower_blocked(as_faer_mut(&mut out), as_faer(l_inv), p)?;
        } else {
            invert_lower_triangular(as_faer_mut(l_inv), as_faer(&out), p);
            triangular::matmul(
                as_faer_mut(&mut out),
                BlockStructure::TriangularLower,
                Accum::Replace,
                as_faer(l_inv).transpose(),
                BlockStructure::TriangularUpper,
                as_faer(l_inv),
                BlockStructure::TriangularLower,
                1.0,
                p,
            );
        }
        mirror_lower(&mut out);
        Ok(out)
    }

    /// A copy of the lower triangular factor `L`.
    pub fn l(&self) -> DMatrix<f64> {
        self.l.clone()
    }
}

/// Copies the lower triangle of a square matrix over its upper one, in tiles.
fn mirror_lower(m: &mut DMatrix<f64>) {
    const TILE: usize = 64;
    let n = m.nrows();
    for j0 in (0..n).step_by(TILE) {
        for i0 in (0..=j0).step_by(TILE) {
            for j in j0..(j0 + TILE).min(n) {
                for i in i0..(i0 + TILE).min(j) {
                    m[(i, j)] = m[(j, i)];
                }
            }
        }
    }
}

/// `log det A` of a symmetric positive definite matrix (see [`Cholesky::new`] for errors).
pub fn log_det_spd(a: &DMatrix<f64>, context: &str) -> Result<f64> {
    Ok(Cholesky::new(a, context)?.log_det())
}

/// `A^{-1}` of a symmetric positive definite matrix (see [`Cholesky::new`] for errors).
pub fn spd_inverse(a: &DMatrix<f64>, context: &str) -> Result<DMatrix<f64>> {
    Cholesky::new(a, context)?.inverse()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::random_spd;

    #[test]
    fn blocked_factor_is_the_factor_and_finds_a_late_pivot() {
        // Three panels and a partial fourth, against faer's one-call factor.
        let n = 3 * PANEL + 100;
        let a = random_spd(n, 7);
        let mut one = a.clone();
        factor_in_place(as_faer_mut(&mut one), faer::Par::Seq).unwrap();
        let mut blocked = a.clone();
        factor_blocked(&mut blocked).unwrap().unwrap();
        let lower =
            |m: &DMatrix<f64>| DMatrix::from_fn(n, n, |i, j| if i >= j { m[(i, j)] } else { 0.0 });
        let (one, blocked) = (lower(&one), lower(&blocked));
        assert!((&blocked - &one).amax() < 1e-12 * one.amax());
        assert!((&blocked * blocked.transpose() - &a).amax() < 1e-12 * a.amax());
        // A matrix whose leading block of order 2 * PANEL + 51 is indefinite (a negative
        // diagonal entry): the pivot is found in the third panel, at its global index.
        let bad = 2 * PANEL + 50;
        let mut b = a.clone();
        b[(bad, bad)] = -1.0;
        assert_eq!(factor_blocked(&mut b).unwrap(), Err(bad));
    }

    #[test]
    fn blocked_inverse_steps_are_the_one_call_steps() {
        // Three panels and a partial fourth: the triangular inverse and the lower triangle
        // of L^-T L^-1 against faer's one-call kernels, the scratch's old values ignored.
        let n = 3 * PANEL + 100;
        let c = Cholesky::new(&random_spd(n, 5), "t").unwrap();
        let mut one = DMatrix::zeros(n, n);
        invert_lower_triangular(as_faer_mut(&mut one), as_faer(&c.l), faer::Par::Seq);
        let mut blocked = DMatrix::from_element(n, n, 3.0);
        invert_lower_blocked(as_faer_mut(&mut blocked), as_faer(&c.l), faer::Par::Seq).unwrap();
        let lower =
            |m: &DMatrix<f64>| DMatrix::from_fn(n, n, |i, j| if i >= j { m[(i, j)] } else { 0.0 });
        assert!((0..n).all(|j| (0..j).all(|i| blocked[(i, j)] == 0.0)));
        assert!((&blocked - lower(&one)).amax() < 1e-12 * one.amax());
        let mut gram = DMatrix::from_element(n, n, 3.0);
        gram_lower_blocked(as_faer_mut(&mut gram), as_faer(&blocked), faer::Par::Seq).unwrap();
        let full = blocked.transpose() * &blocked;
        assert!((lower(&gram) - lower(&full)).amax() < 1e-12 * full.amax());
        mirror_lower(&mut gram);
        let a = c.l() * c.l().transpose();
        assert!((&a * &gram - DMatrix::identity(n, n)).amax() < 1e-9);
    }

    #[test]
    fn factor_solve_inverse_and_log_det_match_definitions() {
        let n = 40;
        let a = random_spd(n, 1);
        let c = Cholesky::new(&a, "test").unwrap();
        let l = c.l();
        assert!((&l * l.transpose() - &a).amax() < 1e-12 * a.amax());
        assert!(
            (0..n).all(|i| l[(i, i)] > 0.0) && (0..n).all(|i| (i + 1..n).all(|j| l[(i, j)] == 0.0))
        );
        // log det from the product of eigenvalues (nalgebra's independent decomposition).
        let eig = a.clone().symmetric_eigen();
        let ld: f64 = eig.eigenvalues.iter().map(|v| v.ln()).sum();
        assert!((c.log_det() - ld).abs() < 1e-10 * ld.abs().max(1.0));
        assert!((log_det_spd(&a, "t").unwrap() - ld).abs() < 1e-10 * ld.abs().max(1.0));
        let b = DMatrix::from_fn(n, 3, |i, j| ((i * 7 + j * 3) as f64).sin());
        let x = c.solve(&b);
        assert!((&a * &x - &b).amax() < 1e-10);
        let bv = b.column(1).into_owned();
        let xv = c.solve_vec(&bv);
        assert!((&a * &xv - &bv).amax() < 1e-10);
        let inv = spd_inverse(&a, "t").unwrap();
        assert_eq!(inv, inv.transpose());
        assert!((&a * &inv - DMatrix::identity(n, n)).amax() < 1e-10);
        // The owned constructor reads the lower triangle only; the in-place inverse gives
        // the same bits, also above the parallel threshold and for sizes not a multiple of
        // the mirroring tile.
        for m in [n, 700] {
            let a = random_spd(m, 3);
            let mut lower_only = a.clone();
            for j in 1..m {
                for i in 0..j {
                    lower_only[(i, j)] = 7.0;
                }
            }
            let owned = Cholesky::new_owned(lower_only, "t").unwrap();
            let c = Cholesky::new(&a, "t").unwrap();
            assert_eq!(owned.l(), c.l());
            assert_eq!(owned.into_inverse().unwrap(), c.inverse().unwrap());
        }
        assert!(Cholesky::new_owned(DMatrix::zeros(2, 3), "x").is_err());
        let mut bad = random_spd(4, 1);
        bad[(2, 1)] = f64::INFINITY;
        assert!(Cholesky::new_owned(bad, "x").is_err());
    }

    #[test]
    fn non_spd_reports_the_failing_pivot() {
        let a = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 2.0, -1.0, 4.0]));
        match Cholesky::new(&a, "prec") {
            Err(Error::NotPositiveDefinite {
                context,
                pivot,
                advice,
            }) => {
                assert_eq!(context, "prec");
                assert_eq!(pivot, 2);
                assert!(advice.contains("ridge"));
            }
            other => panic!("unexpected {other:?}"),
        }
        // Singular (rank one) 3 x 3: the second pivot is zero.
        let v = DMatrix::from_column_slice(3, 1, &[1.0, 2.0, 3.0]);
        let s = &v * v.transpose();
        assert!(matches!(
            Cholesky::new(&s, "s"),
            Err(Error::NotPositiveDefinite { pivot: 1, .. })
        ));
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut a = random_spd(5, 2);
        a[(3, 1)] = f64::NAN;
        assert!(matches!(
            Cholesky::new(&a, "x"),
            Err(Error::NonFinite { .. })
        ));
        let mut b = random_spd(5, 2);
        b[(3, 1)] += 1.0;
        assert!(matches!(
            Cholesky::new(&b, "x"),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            Cholesky::new(&DMatrix::zeros(2, 3), "x"),
            Err(Error::DimensionMismatch(_))
        ));
        assert!(matches!(
            Cholesky::new(&DMatrix::zeros(0, 0), "x"),
            Err(Error::Empty(_))
        ));
    }
}
