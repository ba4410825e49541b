//! Block thick-restart Lanczos with full reorthogonalisation for a few extreme eigenpairs
//! of a symmetric operator.
//!
//! The basis `V = [V_1, ..., V_j]` (orthonormal blocks of `b` columns) is grown one block
//! at a time: `W = A V_j` is orthogonalised against all of `V` (classical Gram-Schmidt,
//! repeated, "twice is enough") and normalised into the next block. The projected matrix
//! `H = V^T A V` is accumulated from the same inner products, so Ritz pairs
//! `(theta_i, V y_i)` and their residuals `||A V y_i - theta_i V y_i||` are computed
//! explicitly from the stored `A V`, never from a recurrence. When the basis reaches its
//! maximum size it is restarted with the best Ritz vectors, which keeps the block Krylov
//! decomposition `A V = V H + F B^T` intact (Wu & Simon 2000, thick-restart Lanczos;
//! Stewart 2001, Krylov-Schur; Golub & Van Loan, *Matrix Computations*, 4th ed., sec. 10.3
//! on block Lanczos). Converged leading pairs are locked (deflated from the projected
//! problem); a locked value that dwarfs all others (the `1 / s` of a null vector under
//! shift-invert) also purges the rest of the basis, since the Krylov decomposition only
//! holds to `eps` times the largest eigenvalue it has seen. Blocks of `b >= 2` vectors find repeated and tightly clustered eigenvalues
//! that a single-vector Krylov space cannot separate.

use crate::check::check_q;
use crate::dense_eigen::{fix_signs, small_sym_eigen, SymEigen};
use crate::gemm::{tall_mul, tall_mul_acc, tall_tr_mul};
use crate::operator::SymOperator;
use faer::MatRef;
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_distr::StandardNormal;
use unfold_core::{interrupt, seeded_rng, Error, Result};

/// Settings of the partial eigensolver. The defaults suit the spectral methods of unfold.
#[derive(Clone, Debug, PartialEq)]
pub struct PartialEigenOptions {
    /// Relative residual tolerance: a Ritz pair `(theta, x)` has converged when
    /// `||A x - theta x|| <= tol * scale` where `scale` is the largest Ritz value in
    /// magnitude (an estimate of `||A||`). Eigenvalue errors are then about
    /// `tol^2 ||A||^2 / gap`. Default `1e-10`.
    pub tol: f64,
    /// Maximum number of block operator applications before giving up with
    /// [`Error::NotConverged`]. Default `5000`.
    pub max_iter: usize,
    /// Seed of the random starting block; the same seed gives the same result.
    /// Default `0`.
    pub seed: u64,
    /// Vectors per block; `None` picks `max(q, 2)` (and `largest_eigenpairs` of a dense
    /// matrix `max(q, 8)`, where wide blocks need fewer passes over memory). A block Krylov space holds at most `b`
    /// directions of any eigenspace, so `b >= q` finds every wanted copy of a repeated
    /// eigenvalue (e.g. one null vector per component of a disconnected graph).
    pub block_size: Option<usize>,
    /// Maximum number of basis vectors before a restart; `None` picks
    /// `max(q + 4b, 2q + 2b, 30)`. Raised to at least `q + b` and capped at `n`.
    pub max_basis: Option<usize>,
}

impl Default for PartialEigenOptions {
    fn default() -> Self {
        PartialEigenOptions {
            tol: 1e-10,
            max_iter: 5000,
            seed: 0,
            block_size: None,
            max_basis: None,
        }
    }
}

impl PartialEigenOptions {
    fn check(&self) -> Result<()> {
        if !(self.tol.is_finite() && self.tol > 0.0 && self.tol < 1.0) {
            return Err(Error::invalid(
                "tol",
                format!("must be in (0, 1), got {}", self.tol),
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        if self.block_size == Some(0) {
            return Err(Error::invalid("block_size", "must be at least 1"));
        }
        if self.max_basis == Some(0) {
            return Err(Error::invalid("max_basis", "must be at least 1"));
        }
        Ok(())
    }
}

/// Which end of the spectrum to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The largest (algebraic) eigenvalues, returned in descending order.
    Largest,
    /// The smallest (algebraic) eigenvalues, returned in ascending order.
    Smallest,
}

/// How convergence of a Ritz pair is judged, and which pairs are returned.
#[derive(Clone, Copy)]
pub(crate) enum Convergence<'a> {
    /// `||r_i|| <= tol * max_j |theta_j|` for the operator itself (relative to its norm).
    Spectrum,
    /// The operator is `(A + s I)^{-1}` and the wanted pairs are the smallest of `A`,
    /// extracted by Rayleigh-Ritz of `A` itself on the basis and converged when
    /// `||A x - rho x|| <= tol * norm` (`norm >= ||A||`); values come in ascending order.
    /// Ritz pairs of the inverse cannot serve: its projected matrix has norm `1 / s`, so
    /// rounding perturbs the small wanted values by about `eps / s`, relative error
    /// `eps lambda_i / s`. `A` is applied (to a small subspace, see [`run`]) only once
    /// every pair's residual `r` for the inverse is below `GATE * tol * theta`: since
    /// `(A + s I) x - x / theta = -(A + s I) r / theta`, the residual for `A` is at most
    /// `||A + s I|| r / theta`, and in practice (`r` lies mostly along the wanted
    /// directions) two to four orders of magnitude smaller.
    Original { a: &'a dyn SymOperator, norm: f64 },
}

/// The `q` extreme eigenpairs of a symmetric operator by block thick-restart Lanczos.
///
/// Values come in descending order for [`Which::Largest`] and ascending order for
/// [`Which::Smallest`]; vectors are orthonormal columns, each signed so that its entry of
/// largest magnitude is positive.
///
/// # Errors
/// [`Error::InvalidParameter`] for `q = 0`, `q > n` or invalid options;
/// [`Error::NotConverged`] if `max_iter` block applications do not reach `tol`;
/// [`Error::Numerical`] if the operator returns non-finite values.
pub fn partial_sym_eigen<O: SymOperator + ?Sized>(
    op: &O,
    q: usize,
    which: Which,
    opts: &PartialEigenOptions,
) -> Result<SymEigen> {
    run(op, q, which, opts, Convergence::Spectrum, None)
}

/// Eigenvectors of the operator known in advance, such as the constant null vector of a
/// connected graph Laplacian: orthonormal columns and their eigenvalues of the operator.
/// They start locked, so the Krylov basis is kept orthogonal to them from the first block
/// and no operator application is spent finding them (nor a purge of the basis once the
/// huge `1 / s` of a null vector under shift-invert has converged).
pub(crate) struct Known {
    pub(crate) vectors: DMatrix<f64>,
    pub(crate) values: Vec<f64>,
}

/// The solver behind [`partial_sym_eigen`], with a choice of convergence test and
/// optionally fewer than `q` eigenpairs known in advance (returned among the `q`).
///
/// Columns `0..nlock` of the basis are locked: converged Ritz vectors (in wanted order)
/// kept for orthogonalisation but left out of the Rayleigh-Ritz problem, so that a
/// dominant eigenvalue (such as `1 / s` of a null vector under shift-invert) no longer
/// sets the rounding level of the projected matrix for the others.
pub(crate) fn run<O: SymOperator + ?Sized>(
    op: &O,
    q: usize,
    which: Which,
    opts: &PartialEigenOptions,
    convergence: Convergence<'_>,
    known: Option<Known>,
) -> Result<SymEigen> {
    opts.check()?;
    let n = op.dim();
    check_q(q, n)?;
    let b = opts.block_size.unwrap_or(q.max(2)).min(n);
    let m = opts
        .max_basis
        .unwrap_or((q + 4 * b).max(2 * q + 2 * b).max(30))
        .max(q + b)
        .min(n);
    let keep = q + (m.saturating_sub(q + b)) / 2;
    let mut rng = seeded_rng(opts.seed);

    let mut v = Basis::new(n, m);
    let mut av = Basis::new(n, m);
    let mut h = DMatrix::<f64>::zeros(m, m);
    let mut locked_values: Vec<f64> = Vec::new();
    if let Some(known) = known {
        assert!(
            known.vectors.ncols() < q,
            "fewer known eigenpairs than wanted ones"
        );
        let mut images = known.vectors.clone();
        for (mut column, &theta) in images.column_iter_mut().zip(&known.values) {
            column *= theta;
        }
        v.set_from(0, &known.vectors);
        av.set_from(0, &images);
        locked_values = known.values;
    }
    let mut k = locked_values.len();
    let mut f = orthonormalise(DMatrix::zeros(n, 0), v.cols(k), b, &mut rng)?;
    let mut applies = 0usize;
    loop {
        // One block product is the unit of work between checks of Ctrl-C.
        interrupt::check()?;
        // Grow the basis by the pending block F and compute its image.
        let nb = f.ncols();
        let block = std::mem::replace(&mut f, DMatrix::zeros(n, 0));
        let mut w = DMatrix::<f64>::zeros(n, nb);
        op.apply(&block, &mut w);
        applies += 1;
        if w.iter().any(|x| !x.is_finite()) {
            return Err(Error::numerical(
                "partial symmetric eigensolver",
                "the operator produced a non-finite value; check the matrix for NaN/Inf",
            ));
        }
        v.set_from(k, &block);
        av.set_from(k, &w);
        k += nb;
        // New columns of H = V^T A V, then the first Gram-Schmidt pass with the same product.
        let c = tall_tr_mul(v.cols(k), mat(&w));
        for j in 0..nb {
            for i in 0..k {
                h[(i, k - nb + j)] = c[(i, j)];
                h[(k - nb + j, i)] = c[(i, j)];
            }
            for i in 0..j {
                let s = 0.5 * (c[(k - nb + i, j)] + c[(k - nb + j, i)]);
                h[(k - nb + i, k - nb + j)] = s;
                h[(k - nb + j, k - nb + i)] = s;
            }
        }
        if k < n {
            tall_mul_acc(&mut w, v.cols(k), mat(&c), -1.0);
            f = orthonormalise(w, v.cols(k), b.min(n - k), &mut rng)?;
        }

        // Rayleigh-Ritz on the unlocked part of the basis.
        let nlock = locked_values.len();
        let ku = k - nlock;
        let (theta, y) = small_sym_eigen(&h.view((nlock, nlock), (ku, ku)).into_owned())?;
        let order: Vec<usize> = match which {
            Which::Largest => (0..ku).rev().collect(),
            Which::Smallest => (0..ku).collect(),
        };
        let qu = q - nlock;
        if ku < qu {
            continue;
        }
        let (x, thq, res) = ritz_pairs(
            v.range(nlock, k),
            av.range(nlock, k),
            &theta,
            &y,
            &order[..qu],
        );
        let norm_est = locked_values
            .iter()
            .chain([&theta[0], &theta[ku - 1]])
            .fold(0.0f64, |a, t| a.max(t.abs()));
        // Per-pair bound for locking (and, for `Spectrum`, for convergence).
        let lock_bound = |th: f64| match convergence {
            Convergence::Spectrum => opts.tol * norm_est,
            Convergence::Original { .. } => opts.tol * th.abs(),
        };
        let check = match convergence {
            Convergence::Spectrum => {
                let (n_conv, worst) = count_below(&res, opts.tol * norm_est, norm_est);
                let mut values = locked_values.clone();
                values.extend(&thq);
                Check {
                    n_conv: nlock + n_conv,
                    worst,
                    values,
                    vectors: locked_then(v.cols(nlock), &[&x]),
                }
            }
            Convergence::Original { a, norm } => {
                let gate = res
                    .iter()
                    .zip(&thq)
                    .all(|(r, th)| *r <= GATE * opts.tol * th.abs());
                if gate || k == n {
                    // The locked vectors and the best unlocked Ritz vectors (one block more
                    // than wanted) span a small subspace that holds the wanted pairs to the
                    // accuracy of the Krylov basis; applying `A` to it alone, not to the
                    // whole basis, is what keeps this check cheap.
                    let more = columns_at(&y, &order[qu..(qu + b).min(ku)]);
                    let extra = tall_mul(v.range(nlock, k), mat(&more));
                    let subspace = locked_then(v.cols(nlock), &[&x, &extra]);
                    original_ritz(a, norm, &subspace, q, opts.tol)?
                } else {
                    let worst = res
                        .iter()
                        .zip(&thq)
                        .fold(0.0f64, |m, (r, th)| m.max(r / th.abs()));
                    Check {
                        n_conv: 0,
                        worst,
                        values: Vec::new(),
                        vectors: DMatrix::zeros(n, 0),
                    }
                }
            }
        };
        if check.n_conv == q || k == n {
            // Locked pairs come first; restore the promised order should a pair found
            // later belong before one locked earlier.
            let ascending =
                matches!(convergence, Convergence::Original { .. }) || which == Which::Smallest;
            let mut idx: Vec<usize> = (0..q).collect();
            idx.sort_by(|&i, &j| {
                let o = check.values[i].total_cmp(&check.values[j]);
                if ascending {
                    o
                } else {
                    o.reverse()
                }
            });
            let mut vectors = DMatrix::from_fn(n, q, |r, c| check.vectors[(r, idx[c])]);
            fix_signs(&mut vectors);
            return Ok(SymEigen {
                values: DVector::from_iterator(q, idx.iter().map(|&i| check.values[i])),
                vectors,
            });
        }
        if applies >= opts.max_iter {
            return Err(Error::NotConverged {
                context: format!("block Lanczos for {q} eigenpairs of a {n} x {n} matrix"),
                iterations: applies,
                advice: format!(
                    "{} of {q} eigenpairs reached the relative residual {:e} (worst {:.2e}); \
                     raise max_iter, loosen tol, or enlarge block_size/max_basis if \
                     eigenvalues are clustered",
                    check.n_conv, opts.tol, check.worst
                ),
            });
        }
        // Lock the leading wanted pairs that have converged (never all q: that returned).
        let new_locks = res
            .iter()
            .zip(&thq)
            .take_while(|(r, th)| **r <= lock_bound(**th))
            .count();
        // A newly locked value that dwarfs the rest of the spectrum seen (the `1 / s` of a
        // null vector under shift-invert) has left rounding of size `eps |theta_locked|` in
        // the Krylov decomposition, which restarts would carry along as a residual floor.
        // Then the unlocked part is purged: Lanczos restarts from the best unlocked Ritz
        // vectors, orthogonal to the locked ones.
        let rest = order[new_locks..]
            .iter()
            .fold(0.0f64, |a, &i| a.max(theta[i].abs()));
        let purge = order[..new_locks]
            .iter()
            .any(|&i| theta[i].abs() > PURGE_RATIO * rest);
        let restart = k + f.ncols() > m;
        if purge {
            let nf = b.min(ku - new_locks);
            let yk = DMatrix::from_fn(ku, new_locks + nf, |i, j| y[(i, order[j])]);
            let vk = tall_mul(v.range(nlock, k), mat(&yk));
            let avk = tall_mul(av.range(nlock, k), mat(&yk));
            v.set_from(nlock, &vk.columns(0, new_locks).into_owned());
            av.set_from(nlock, &avk.columns(0, new_locks).into_owned());
            locked_values.extend(order[..new_locks].iter().map(|&i| theta[i]));
            k = locked_values.len();
            h.fill(0.0);
            f = orthonormalise(
                vk.columns(new_locks, nf).into_owned(),
                v.cols(k),
                nf,
                &mut rng,
            )?;
        } else if new_locks > 0 || restart {
            // Rotate the unlocked basis onto its Ritz vectors in wanted order, truncated to
            // `keep` columns in all on restart. Keeping whole Ritz vectors (and the pending
            // block F) preserves the Krylov decomposition A V = V H + F B^T.
            let kept = if restart { keep - nlock } else { ku };
            let yk = DMatrix::from_fn(ku, kept, |i, j| y[(i, order[j])]);
            let vk = tall_mul(v.range(nlock, k), mat(&yk));
            let avk = tall_mul(av.range(nlock, k), mat(&yk));
            v.set_from(nlock, &vk);
            av.set_from(nlock, &avk);
            h.fill(0.0);
            for j in 0..kept {
                h[(nlock + j, nlock + j)] = theta[order[j]];
            }
            locked_values.extend(order[..new_locks].iter().map(|&i| theta[i]));
            k = nlock + kept;
        }
    }
}

/// How far above the tolerance (relative to `theta`) the residuals of the inverse may
/// still be when the Rayleigh-Ritz check with `A` starts (see [`Convergence::Original`]).
/// Laplacian eigenmaps at n = 5000 pass the check at `7e-10`, with `tol = 1e-10`.
const GATE: f64 = 1e4;

/// A locked eigenvalue more than this many times larger (in magnitude) than every other
/// Ritz value triggers a purge of the unlocked basis (relation errors `eps * ratio`).
const PURGE_RATIO: f64 = 100.0;

/// How many residuals are at most `bound`, and the largest residual relative to `scale`.
fn count_below(res: &[f64], bound: f64, scale: f64) -> (usize, f64) {
    let n_conv = res.iter().filter(|&&r| r <= bound).count();
    let worst = res.iter().fold(0.0f64, |m, r| m.max(*r));
    (n_conv, worst / scale.max(f64::MIN_POSITIVE))
}

/// Ritz pairs of the operator at positions `idx` of the projected eigendecomposition
/// `(theta, y)`: vectors `X = V Y`, values, and residual norms `||(A V) y - theta V y||`.
fn ritz_pairs(
    v: MatRef<'_, f64>,
    av: MatRef<'_, f64>,
    theta: &DVector<f64>,
    y: &DMatrix<f64>,
    idx: &[usize],
) -> (DMatrix<f64>, Vec<f64>, Vec<f64>) {
    let yq = columns_at(y, idx);
    let values: Vec<f64> = idx.iter().map(|&i| theta[i]).collect();
    let x = tall_mul(v, mat(&yq));
    let mut r = tall_mul(av, mat(&yq));
    let mut res = Vec::with_capacity(idx.len());
    for (j, &th) in values.iter().enumerate() {
        let mut rj = r.column_mut(j);
        rj.axpy(-th, &x.column(j), 1.0);
        res.push(rj.norm());
    }
    (x, values, res)
}

/// The columns of `y` at positions `idx`, in that order.
fn columns_at(y: &DMatrix<f64>, idx: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(y.nrows(), idx.len(), |i, j| y[(i, idx[j])])
}

/// The (locked) columns `locked` followed by the columns of each of `parts`.
fn locked_then(locked: MatRef<'_, f64>, parts: &[&DMatrix<f64>]) -> DMatrix<f64> {
    let n = locked.nrows();
    let width = locked.ncols() + parts.iter().map(|p| p.ncols()).sum::<usize>();
    let mut data = Vec::with_capacity(n * width);
    for c in 0..locked.ncols() {
        data.extend(locked.col(c).iter());
    }
    for p in parts {
        data.extend_from_slice(p.as_slice());
    }
    DMatrix::from_vec(n, width, data)
}

/// The Krylov basis (or its image): columns of `n` rows stored contiguously, only ever
/// replaced from some column on, so memory is written once and never zero-filled first.
struct Basis {
    n: usize,
    data: Vec<f64>,
}

impl Basis {
    fn new(n: usize, max_cols: usize) -> Self {
        Basis {
            n,
            data: Vec::with_capacity(n * max_cols),
        }
    }

    /// Replaces the columns from `at` on by those of `m` (`at` at most the current count).
    fn set_from(&mut self, at: usize, m: &DMatrix<f64>) {
        self.data.truncate(self.n * at);
        self.data.extend_from_slice(m.as_slice());
    }

    /// Columns `from..to`.
    fn range(&self, from: usize, to: usize) -> MatRef<'_, f64> {
        MatRef::from_column_major_slice(&self.data[self.n * from..self.n * to], self.n, to - from)
    }

    /// The first `k` columns.
    fn cols(&self, k: usize) -> MatRef<'_, f64> {
        self.range(0, k)
    }
}

/// A convergence test: how many pairs passed, the worst relative residual, and the pairs.
struct Check {
    n_conv: usize,
    worst: f64,
    values: Vec<f64>,
    vectors: DMatrix<f64>,
}

/// Rayleigh-Ritz of the original matrix `A` on an orthonormal subspace `V` of the Krylov
/// basis (used with shift-invert): the `q` smallest Ritz pairs of `V^T A V`, tested by
/// `||A x - rho x|| <= tol * norm`. The projected matrix has norm about `||A||`, so its
/// eigenvectors carry no `eps / s` error, unlike those of the inverse.
fn original_ritz(
    a: &dyn SymOperator,
    norm: f64,
    v: &DMatrix<f64>,
    q: usize,
    tol: f64,
) -> Result<Check> {
    let mut av = DMatrix::zeros(v.nrows(), v.ncols());
    a.apply(v, &mut av);
    let g = tall_tr_mul(mat(v), mat(&av));
    let g = (&g + g.transpose()) * 0.5;
    let (rho, z) = small_sym_eigen(&g)?;
    let idx: Vec<usize> = (0..q).collect();
    let (vectors, values, res) = ritz_pairs(mat(v), mat(&av), &rho, &z, &idx);
    let (n_conv, worst) = count_below(&res, tol * norm, norm);
    Ok(Check {
        n_conv,
        worst,
        values,
        vectors,
    })
}

/// The first `k` columns of `m` as a faer view.
fn cols(m: &DMatrix<f64>, k: usize) -> MatRef<'_, f64> {
    col_range(m, 0, k)
}

/// Columns `from..to` of `m` as a faer view.
fn col_range(m: &DMatrix<f64>, from: usize, to: usize) -> MatRef<'_, f64> {
    let n = m.nrows();
    MatRef::from_column_major_slice(&m.as_slice()[n * from..n * to], n, to - from)
}

fn mat(m: &DMatrix<f64>) -> MatRef<'_, f64> {
    cols(m, m.ncols())
}

/// `t` orthonormal columns, orthogonal to the orthonormal columns of `v`, spanning as much
/// of `w` as possible. The columns of `w` must already have been projected once against
/// `v` (the caller's product `V^T W` serves both for `H` and as that first pass); they get
/// the second pass here as one block product ("twice is enough"), then are orthonormalised
/// among themselves against the columns already accepted. Whenever a projection removes
/// more than `1 - 1/sqrt(2)` of a column's norm, the rounding it leaves along `v` and the
/// accepted columns is no longer negligible, so the column is projected against both
/// again (Daniel, Gragg, Kaufman & Stewart 1976). Columns that vanish under projection (an
/// invariant subspace was reached) and missing columns are replaced by seeded random
/// vectors.
fn orthonormalise(
    mut w: DMatrix<f64>,
    v: MatRef<'_, f64>,
    t: usize,
    rng: &mut impl Rng,
) -> Result<DMatrix<f64>> {
    let n = v.nrows();
    let before: Vec<f64> = w.column_iter().map(|c| c.norm()).collect();
    if w.ncols() > 0 {
        let c = tall_tr_mul(v, mat(&w));
        tall_mul_acc(&mut w, v, mat(&c), -1.0);
    }
    let mut q = DMatrix::<f64>::zeros(n, t);
    for j in 0..t {
        let done = DMatrix::from_column_slice(n, j, &q.as_slice()[..n * j]);
        let against_all = |x: &mut DMatrix<f64>| {
            let c = tall_tr_mul(v, mat(x));
            tall_mul_acc(x, v, mat(&c), -1.0);
            let c = done.tr_mul(x);
            *x -= &done * c;
        };
        let mut accepted = false;
        for attempt in 0..8 {
            // The first projection: against the accepted columns for a column of `w` (which
            // has had both passes against `v`), against everything for a random one.
            let given = before.get(j).filter(|_| attempt == 0);
            let (mut x, start) = match given {
                Some(&norm) => (
                    DMatrix::from_column_slice(n, 1, &w.as_slice()[n * j..n * (j + 1)]),
                    norm,
                ),
                _ => {
                    let x = random_column(n, rng);
                    let norm = x.norm();
                    (x, norm)
                }
            };
            // Measured from before the block pass, so that a block pass that removed most
            // of the column also calls for another.
            let mut norm = start;
            if given.is_some() {
                let c = done.tr_mul(&x);
                x -= &done * c;
            } else {
                against_all(&mut x);
            }
            let mut after = x.norm();
            for _repeat in 0..3 {
                if after >= norm * std::f64::consts::FRAC_1_SQRT_2 {
                    break;
                }
                against_all(&mut x);
                norm = after;
                after = x.norm();
            }
            if after > 1e-10 * start && after > 1e-300 {
                let column = &mut q.as_mut_slice()[n * j..n * (j + 1)];
                for (out, value) in column.iter_mut().zip(x.as_slice()) {
                    *out = value / after;
                }
                accepted = true;
                break;
            }
        }
        if !accepted {
            return Err(Error::numerical(
                "partial symmetric eigensolver",
                "could not extend the orthonormal basis (the operator may be degenerate); \
                 use the full eigendecomposition instead",
            ));
        }
    }
    Ok(q)
}

fn random_column(n: usize, rng: &mut impl Rng) -> DMatrix<f64> {
    DMatrix::from_fn(n, 1, |_, _| rng.sample::<f64, _>(StandardNormal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense_eigen::sym_eigen;
    use crate::test_util::*;

    /// Checks `got` against the full decomposition at positions `idx`: values to 1e-8,
    /// residuals, orthonormality and the angle between the invariant subspaces.
    fn check_against_full(a: &DMatrix<f64>, got: &SymEigen, idx: &[usize]) {
        let full = sym_eigen(a).unwrap();
        let scale = full.values.amax();
        for (j, &i) in idx.iter().enumerate() {
            assert!(
                (got.values[j] - full.values[i]).abs() < 1e-8 * scale,
                "value {j}: {} vs {}",
                got.values[j],
                full.values[i]
            );
        }
        assert!(max_residual(a, &got.values, &got.vectors) < 1e-8 * scale);
        assert!(orthonormality_error(&got.vectors) < 1e-10);
        let u = DMatrix::from_fn(a.nrows(), idx.len(), |r, c| full.vectors[(r, idx[c])]);
        assert!(subspace_gap(&u, &got.vectors) < 1e-6);
    }

    #[test]
    fn largest_of_random_spd_matches_full() {
        let n = 200;
        let a = random_spd(n, 3);
        let got = partial_sym_eigen(&a, 5, Which::Largest, &Default::default()).unwrap();
        assert!(got.values.as_slice().windows(2).all(|w| w[0] >= w[1]));
        check_against_full(&a, &got, &[199, 198, 197, 196, 195]);
    }

    #[test]
    fn both_ends_of_an_indefinite_matrix_match_full() {
        let n = 150;
        let a = random_sym(n, 4);
        let top = partial_sym_eigen(&a, 4, Which::Largest, &Default::default()).unwrap();
        check_against_full(&a, &top, &[149, 148, 147, 146]);
        let bottom = partial_sym_eigen(&a, 3, Which::Smallest, &Default::default()).unwrap();
        assert!(bottom.values.as_slice().windows(2).all(|w| w[0] <= w[1]));
        check_against_full(&a, &bottom, &[0, 1, 2]);
    }

    #[test]
    fn one_pair_and_almost_all_pairs() {
        let a = random_spd(60, 5);
        let one = partial_sym_eigen(&a, 1, Which::Largest, &Default::default()).unwrap();
        check_against_full(&a, &one, &[59]);
        let most = partial_sym_eigen(&a, 58, Which::Smallest, &Default::default()).unwrap();
        check_against_full(&a, &most, &(0..58).collect::<Vec<_>>());
        let all = partial_sym_eigen(&a, 60, Which::Largest, &Default::default()).unwrap();
        check_against_full(&a, &all, &(0..60).rev().collect::<Vec<_>>());
    }

    /// `Q diag(lambda) Q^T` with a random orthogonal `Q`.
    fn with_spectrum(lambda: &[f64], seed: u64) -> DMatrix<f64> {
        let n = lambda.len();
        let q = random_matrix(n, n, seed).qr().q();
        &q * DMatrix::from_diagonal(&DVector::from_column_slice(lambda)) * q.transpose()
    }

    #[test]
    fn clustered_and_repeated_top_eigenvalues() {
        let n = 300;
        let mut lambda: Vec<f64> = (0..n).map(|i| 0.9 * i as f64 / n as f64).collect();
        lambda[n - 1] = 1.0;
        lambda[n - 2] = 1.0; // a double eigenvalue
        lambda[n - 3] = 1.0 - 1e-9; // and a third within 1e-9
        lambda[n - 4] = 0.99;
        let a = with_spectrum(&lambda, 6);
        let opts = PartialEigenOptions {
            block_size: Some(4),
            ..Default::default()
        };
        let got = partial_sym_eigen(&a, 4, Which::Largest, &opts).unwrap();
        let expect = [1.0, 1.0, 1.0 - 1e-9, 0.99];
        for (g, e) in got.values.iter().zip(expect) {
            assert!((g - e).abs() < 1e-10, "{}", got.values);
        }
        // Individual vectors inside the cluster are arbitrary; the 4-dimensional invariant
        // subspace is not.
        check_against_full(&a, &got, &[n - 1, n - 2, n - 3, n - 4]);
    }

    #[test]
    fn same_seed_same_result_other_seed_same_answer() {
        let a = random_sym(120, 8);
        let run = |seed| {
            let opts = PartialEigenOptions {
                seed,
                ..Default::default()
            };
            partial_sym_eigen(&a, 3, Which::Largest, &opts).unwrap()
        };
        let (r1, r2, r3) = (run(1), run(1), run(2));
        assert_eq!(r1, r2);
        assert!((&r1.values - &r3.values).amax() < 1e-10);
        // Signs are normalised, so the vectors agree too.
        assert!((&r1.vectors - &r3.vectors).amax() < 1e-6);
    }

    #[test]
    fn invalid_requests_and_non_convergence_are_errors() {
        let a = random_spd(50, 9);
        let d = PartialEigenOptions::default();
        assert!(matches!(
            partial_sym_eigen(&a, 0, Which::Largest, &d),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            partial_sym_eigen(&a, 51, Which::Largest, &d),
            Err(Error::InvalidParameter { .. })
        ));
        for bad in [
            PartialEigenOptions {
                tol: 0.0,
                ..d.clone()
            },
            PartialEigenOptions {
                tol: f64::NAN,
                ..d.clone()
            },
            PartialEigenOptions {
                max_iter: 0,
                ..d.clone()
            },
            PartialEigenOptions {
                block_size: Some(0),
                ..d.clone()
            },
        ] {
            assert!(matches!(
                partial_sym_eigen(&a, 2, Which::Largest, &bad),
                Err(Error::InvalidParameter { .. })
            ));
        }
        let big = random_sym(400, 10);
        let starved = PartialEigenOptions { max_iter: 2, ..d };
        match partial_sym_eigen(&big, 3, Which::Smallest, &starved) {
            Err(Error::NotConverged {
                iterations, advice, ..
            }) => {
                assert_eq!(iterations, 2);
                assert!(advice.contains("max_iter"));
            }
            other => panic!("unexpected {other:?}"),
        }
        let mut nan = random_spd(50, 11);
        nan[(3, 3)] = f64::NAN;
        assert!(matches!(
            partial_sym_eigen(&nan, 2, Which::Largest, &PartialEigenOptions::default()),
            Err(Error::Numerical { .. })
        ));
    }
}
