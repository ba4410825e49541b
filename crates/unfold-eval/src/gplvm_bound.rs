//! The sparse variational lower bound of Titsias (2009) on the GP-LVM likelihood: the score
//! of [`gplvm_score`](crate::gplvm_score) at large n, in O(n m^2) time and O(n m) memory
//! through m inducing points chosen among the latent points.

use crate::gplvm_score::{
    centred_columns, check_options, check_pair, check_variance, factor_with_jitter, maximise,
    mean_variance, median_distance, rbf, GplvmHyperparameters, GplvmScoreOptions, GplvmSolver,
};
use nalgebra::{DMatrix, DVector, RowDVector};
use rayon::prelude::*;
use std::ops::Range;
use unfold_core::{Error, Result};
use unfold_linalg::gemm::{lower_gram, mul, mul_with, sum_lower_and_mirror, tr_mul};
use unfold_linalg::view::{as_faer, par_for};
use unfold_linalg::{pairwise_sq_dists, sq_dists_to, Cholesky};

/// Inducing points of the bound when [`GplvmScoreOptions::inducing`] is `None`:
/// `min(n, 200)`. Measured on a Swiss roll (n = 2000, latent its 2-D coordinates, fitted
/// bound against the exact score -1964.528): 100 points fall 26 nats short, 200 points
/// 0.008 nats, 500 points under 0.001, at 2.1 s, 4.5 s and 25.7 s on 2 shared cores (the
/// exact score 149 s); see `docs/eval.md`.
pub const GPLVM_DEFAULT_INDUCING: usize = 200;

/// Latent points per block of the pass over the points. Fixed (never split by the thread
/// count) and summed in block order, so the bound has the same bits on any number of threads.
const BLOCK_ROWS: usize = 1024;

/// Blocks computed in parallel before their sums are added (bounds the memory of the
/// partial sums to this many sets of m x m matrices).
const BLOCKS_PER_WAVE: usize = 8;

/// Points of the evenly spaced subsample whose median pairwise distance sets the length-scale
/// box and start (all points up to this many, as the exact score does).
const MEDIAN_SAMPLE: usize = 2000;

/// Jitter always on the diagonal of `K_mm`, relative to its diagonal `alpha + bias`: a
/// multiple of the hyperparameters, so the bound stays smooth in them (a jitter added only
/// where the factorisation fails jumps with them and stalls the line search), and far above
/// the round-off of the factorisation (about `m eps`), so that `K_mm` factors.
const INDUCING_JITTER: f64 = 1e-12;

/// Relative-decrease stop of the bound's optimiser, in machine epsilons (2.2e-10 relative).
/// The exact score stops at 1e5 (2.2e-11), but the bound carries round-off of about 1e-11
/// relative (from `L^{-1}` of a nearly singular `K_mm`), at which its line searches failed
/// instead of converging; 1e7 stopped early along the flat bias direction (0.09 nats short
/// on the sheet at n = 4000).
const BOUND_FACTR: f64 = 1e6;

/// Context of the inducing kernel matrix `K_mm` in errors.
const INDUCING_CONTEXT: &str = "GP-LVM bound inducing kernel matrix K_mm";

/// The maximised sparse lower bound of [`gplvm_bound`] and where it was reached.
#[derive(Clone, Debug, PartialEq)]
pub struct GplvmBound {
    /// `max F` over the hyperparameters: a lower bound on `log p(Y | X)` at the same
    /// hyperparameters, hence on the exact score `max log p(Y | X)` (higher = better
    /// embedding; compare only bounds with the same number of inducing points).
    pub lower_bound: f64,
    /// The trace term `p tr(K_nn - Q_nn) / (2 noise) >= 0` at the optimum, included in
    /// `lower_bound`: how much of the bound's gap to the likelihood comes from the inducing
    /// points not summarising the kernel (0 when they are all the points).
    pub trace_term: f64,
    /// Inducing points used: the requested number, or fewer if fewer latent points are
    /// distinct.
    pub inducing: usize,
    /// The maximising kernel hyperparameters.
    pub hyperparameters: GplvmHyperparameters,
    /// Diagonal jitter on `K_mm` at the optimum: always `1e-12 (alpha + bias)`, plus
    /// `1e-10, ..., 1e-4` times its mean diagonal only if it still failed to factor (noisy
    /// inducing variables: the result is still a lower bound).
    pub jitter: f64,
    /// L-BFGS-B iterations of the winning start.
    pub iterations: usize,
    /// Bound evaluations over all starts (each one O(n m^2) pass over the points).
    pub evaluations: usize,
    /// Whether the winning start met the projected-gradient or relative-decrease test.
    pub converged: bool,
}

/// Validated problem: latent points, inducing points and centred data.
pub(crate) struct SparseProblem {
    /// Latent points minus their mean (the kernel is translation invariant; centring keeps
    /// the product form of the distances accurate).
    x: DMatrix<f64>,
    /// The latent mean, subtracted from new points too.
    centre: RowDVector<f64>,
    /// Per-feature centred data.
    y: DMatrix<f64>,
    /// Inducing points: rows of `x` (m x q).
    z: DMatrix<f64>,
    /// Squared distances between the inducing points (exactly symmetric).
    d2_mm: DMatrix<f64>,
    /// `||Y||_F^2`.
    yy: f64,
    /// Column sums `Y^T 1` (zero up to round-off; kept so the gradient is exact).
    ysum: DVector<f64>,
}

/// The sums over the points of one evaluation, in whitened form: with `K_mm + jitter I =
/// L L^T`, `K_mn = k(Z, X)` (RBF + bias) and `A = L^{-1} K_mn` (m x n).
struct PointSums {
    /// `C = A A^T` (m x m); `tr C = tr Q_nn`.
    c: DMatrix<f64>,
    /// `A Y` (m x p).
    ay: DMatrix<f64>,
    /// `A 1` (m).
    a1: DVector<f64>,
    /// `A^T`, in the blocks of rows of [`SparseProblem::blocks`] (kept for the gradient).
    at: Vec<DMatrix<f64>>,
}

/// The m x m quantities of one evaluation.
pub(crate) struct Factors {
    sums: PointSums,
    /// `K_rbf(Z, Z)`.
    kr_mm: DMatrix<f64>,
    /// `L^{-1}`.
    linv: DMatrix<f64>,
    /// Jitter in `K_mm + jitter I = L L^T`.
    jitter: f64,
    /// Cholesky factor of `B = I + C / noise`.
    chol_b: Cholesky,
    /// `v = B^{-1} A Y` (m x p).
    v: DMatrix<f64>,
}

/// The bound, its gradient in `(ln alpha, ln ell, ln bias, ln noise)`, the trace term and
/// the jitter.
pub(crate) struct SparseEvaluation {
    pub(crate) bound: f64,
    pub(crate) grad: [f64; 4],
    pub(crate) trace_term: f64,
    pub(crate) jitter: f64,
}

/// The number of inducing points that `opts` asks for on `n` latent points.
pub(crate) fn inducing_count(opts: &GplvmScoreOptions, n: usize) -> Result<usize> {
    match opts.inducing {
        None => Ok(n.min(GPLVM_DEFAULT_INDUCING)),
        Some(0) => Err(Error::invalid(
            "GplvmScoreOptions.inducing",
            "the sparse bound needs at least 1 inducing point; give 1..=n, or None for \
             min(n, 200)",
        )),
        Some(m) if m > n => Err(Error::invalid(
            "GplvmScoreOptions.inducing",
            format!(
                "{m} inducing points asked for but there are only {n} latent points, among \
                 which they are chosen; give at most {n}, or None for min(n, 200)"
            ),
        )),
        Some(m) => Ok(m),
    }
}

/// Up to `m` rows of `x` by farthest-point sampling: first the point nearest the mean, then
/// repeatedly the point farthest from those chosen (ties to the lower row), stopping early
/// if every remaining point coincides with a chosen one. Deterministic, the same for any row
/// order up to ties, and nested: the first `m1` of `m2 > m1` points are the `m1` points.
pub(crate) fn farthest_points(x: &DMatrix<f64>, m: usize) -> Vec<usize> {
    let n = x.nrows();
    let mean = x.row_mean();
    // Squared distances from every row to `c`, accumulated column by column (storage order).
    let to = |c: &RowDVector<f64>, out: &mut Vec<f64>| {
        out.iter_mut().for_each(|v| *v = 0.0);
        for (col, cd) in x.column_iter().zip(c.iter()) {
            for (o, xi) in out.iter_mut().zip(col.iter()) {
                *o += (xi - cd) * (xi - cd);
            }
        }
    };
    // The first index of the extreme value (`pick(a, b)`: whether `a` beats `b`).
    let first_best = |d: &[f64], pick: fn(f64, f64) -> bool| {
        let mut best = 0;
        for (i, &v) in d.iter().enumerate() {
            if pick(v, d[best]) {
                best = i;
            }
        }
        best
    };
    let mut d = vec![0.0; n];
    to(&mean, &mut d);
    let mut chosen = vec![first_best(&d, |a, b| a < b)];
    let mut nearest = vec![f64::INFINITY; n];
    while chosen.len() < m.min(n) {
        to(&x.row(chosen[chosen.len() - 1]).into_owned(), &mut d);
        for (near, &di) in nearest.iter_mut().zip(&d) {
            *near = near.min(di);
        }
        let next = first_best(&nearest, |a, b| a > b);
        if nearest[next] <= 0.0 {
            break;
        }
        chosen.push(next);
    }
    chosen
}

impl SparseProblem {
    /// Checks the pair, centres both and picks up to `m` inducing points (`1 <= m <= n`).
    pub(crate) fn new(x: &DMatrix<f64>, y: &DMatrix<f64>, m: usize) -> Result<SparseProblem> {
        check_pair(x, y)?;
        let centre = x.row_mean();
        let xc = DMatrix::from_fn(x.nrows(), x.ncols(), |i, j| x[(i, j)] - centre[j]);
        let inducing = farthest_points(&xc, m);
        let z = xc.select_rows(&inducing);
        let y = centred_columns(y);
        Ok(SparseProblem {
            d2_mm: pairwise_sq_dists(&z),
            yy: y.norm_squared(),
            ysum: y.row_sum().transpose(),
            x: xc,
            centre,
            y,
            z,
        })
    }

    /// The number of inducing points.
    pub(crate) fn inducing(&self) -> usize {
        self.z.nrows()
    }

    /// Median pairwise distance of an evenly spaced subsample of at most 2000 latent points
    /// (all of them up to 2000, as the exact score).
    fn median_distance(&self) -> f64 {
        let n = self.x.nrows();
        let s = n.min(MEDIAN_SAMPLE);
        let rows: Vec<usize> = (0..s).map(|i| i * n / s).collect();
        median_distance(&pairwise_sq_dists(&self.x.select_rows(&rows)))
    }

    /// The fixed blocks of rows of the passes over the points.
    fn blocks(&self) -> Vec<Range<usize>> {
        let n = self.x.nrows();
        (0..n.div_ceil(BLOCK_ROWS))
            .map(|b| b * BLOCK_ROWS..((b + 1) * BLOCK_ROWS).min(n))
            .collect()
    }

    /// The RBF part of `k(Z, X_b)` for the block `rows` of latent points (b x m, rows the
    /// points) and the squared distances.
    fn block_kernel(
        &self,
        rows: &Range<usize>,
        h: &GplvmHyperparameters,
    ) -> (DMatrix<f64>, DMatrix<f64>) {
        let xb = self.x.rows(rows.start, rows.len()).into_owned();
        let d2 = sq_dists_to(&xb, &self.z);
        (rbf(&d2, h), d2)
    }

    /// The pass over the points of [`factor`](Self::factor): the sums of [`PointSums`] in
    /// fixed blocks of rows, the blocks of a wave in parallel (each on one thread), added
    /// in block order. O(n m^2): `A^T = K_nm L^{-T}` and its Gram matrix.
    fn point_sums(&self, h: &GplvmHyperparameters, linv: &DMatrix<f64>) -> PointSums {
        let (m, p) = (self.z.nrows(), self.y.ncols());
        let seq = par_for(0);
        let block = |rows: &Range<usize>| {
            let kf = self.block_kernel(rows, h).0.add_scalar(h.bias);
            let at = mul_with(as_faer(&kf), as_faer(linv).transpose(), seq);
            let yb = self.y.rows(rows.start, rows.len()).into_owned();
            let sums = PointSums {
                c: lower_gram(as_faer(&at)),
                ay: mul_with(as_faer(&at).transpose(), as_faer(&yb), seq),
                a1: at.row_sum().transpose(),
                at: Vec::new(),
            };
            (sums, at)
        };
        let mut total = PointSums {
            c: DMatrix::zeros(m, m),
            ay: DMatrix::zeros(m, p),
            a1: DVector::zeros(m),
            at: Vec::new(),
        };
        for wave in self.blocks().chunks(BLOCKS_PER_WAVE) {
            let parts: Vec<(PointSums, DMatrix<f64>)> = wave.par_iter().map(block).collect();
            for (part, at) in parts {
                total.c += part.c;
                total.ay += part.ay;
                total.a1 += part.a1;
                total.at.push(at);
            }
        }
        total.c = sum_lower_and_mirror(vec![total.c]);
        total
    }

    /// The second pass over the points, for the length-scale gradient:
    /// `<H, K_rbf(Z, X) .* D2(Z, X)>` with `H^T = A^T N + Y U^T` (`N`: m x m, `U`: m x p),
    /// O(n m^2), summed in block order.
    fn length_scale_sum(
        &self,
        h: &GplvmHyperparameters,
        at: &[DMatrix<f64>],
        n_mat: &DMatrix<f64>,
        u: &DMatrix<f64>,
    ) -> f64 {
        let seq = par_for(0);
        let blocks = self.blocks();
        let parts: Vec<f64> = blocks
            .par_iter()
            .zip(at)
            .map(|(rows, at)| {
                let (kr, d2) = self.block_kernel(rows, h);
                let yb = self.y.rows(rows.start, rows.len()).into_owned();
                let mut ht = mul_with(as_faer(at), as_faer(n_mat), seq);
                ht += mul_with(as_faer(&yb), as_faer(u).transpose(), seq);
                ht.iter()
                    .zip(kr.iter().zip(d2.iter()))
                    .map(|(h_ij, (k_ij, d_ij))| h_ij * k_ij * d_ij)
                    .sum()
            })
            .collect();
        parts.iter().sum()
    }

    /// The m x m factors at `h` (Titsias 2009, eq. 9, in the whitened form
    /// `Q_nn + s^2 I = s^2 I + A^T A`, `B = I + A A^T / s^2`, with `A = L^{-1} K_mn` formed
    /// block by block: the products `K_mn K_nm` are never formed unwhitened, whose rounding
    /// `L^{-1} . L^{-T}` would amplify by `cond(K_mm)`).
    pub(crate) fn factor(&self, h: &GplvmHyperparameters) -> Result<Factors> {
        let m = self.z.nrows();
        let kr_mm = rbf(&self.d2_mm, h);
        let base = INDUCING_JITTER * (h.alpha + h.bias);
        let mut kmm = kr_mm.add_scalar(h.bias);
        add_to_diagonal(&mut kmm, base);
        let (chol, extra) = factor_with_jitter(kmm, INDUCING_CONTEXT)?;
        let jitter = base + extra;
        let linv = chol
            .l()
            .solve_lower_triangular(&DMatrix::identity(m, m))
            .ok_or_else(|| Error::numerical(INDUCING_CONTEXT, "its Cholesky factor is singular"))?;
        let sums = self.point_sums(h, &linv);
        let mut b = &sums.c / h.noise;
        add_to_diagonal(&mut b, 1.0);
        let chol_b = Cholesky::new(&b, "GP-LVM bound matrix I + A A^T / noise")?;
        let v = chol_b.solve(&sums.ay);
        Ok(Factors {
            sums,
            kr_mm,
            linv,
            jitter,
            chol_b,
            v,
        })
    }

    /// The collapsed bound summed over the `p` features (Titsias 2009, eq. 9; `s^2` = noise,
    /// `beta = 1 / s^2`, `w = A Y`, `v = B^{-1} w`),
    ///
    /// `F = -(n p / 2) ln 2 pi - (p / 2) (n ln s^2 + ln|B|) - (beta ||Y||^2 - beta^2 tr(w^T v))
    /// / 2 - (p beta / 2) (n (alpha + bias) - tr C)`,
    ///
    /// and its gradient (derivation in `docs/eval.md`): `dF/dA = 2 M2 A + beta^2 v Y^T` and,
    /// through `A = L^{-1} K_mn`, `dF/dK_mm = L^{-T} M1 L^{-1}`, with
    /// `M2 = (p beta / 2) (I - B^{-1}) - (beta^3 / 2) v v^T`, `M1 = s^2 M2 - (p beta / 2) C`;
    /// each is contracted with the whitened derivative of `K_mn` (`L^{-1} dK_mn`) or `K_mm`
    /// (`L^{-1} dK_mm L^{-T}`), plus `-p beta / 2` times that of `tr K_nn = n (alpha + bias)`.
    pub(crate) fn evaluate(&self, h: &GplvmHyperparameters) -> Result<SparseEvaluation> {
        let f = self.factor(h)?;
        let sums = &f.sums;
        let (n, p) = (self.x.nrows() as f64, self.y.ncols() as f64);
        let beta = 1.0 / h.noise;
        let b2 = beta * beta;
        let psi0 = n * (h.alpha + h.bias);
        let tr_c = sums.c.trace();
        let wv = sums.ay.dot(&f.v);
        let trace_term = 0.5 * p * beta * (psi0 - tr_c);
        let log_2pi = (2.0 * std::f64::consts::PI).ln();
        let bound = -0.5
            * (n * p * log_2pi + p * (n * h.noise.ln() + f.chol_b.log_det()) + beta * self.yy
                - b2 * wv)
            - trace_term;

        let bi = f.chol_b.inverse()?;
        let mut m2 = &bi * (-0.5 * p * beta);
        add_to_diagonal(&mut m2, 0.5 * p * beta);
        m2.gemm(-0.5 * beta.powi(3), &f.v, &f.v.transpose(), 1.0);
        let m1 = &m2 * h.noise - &sums.c * (0.5 * p * beta);
        // L^{-1} X L^{-T} for the symmetric m x m matrix X.
        let whiten = |x: &DMatrix<f64>| {
            let lx = mul(&f.linv, x);
            mul_with(
                as_faer(&lx),
                as_faer(&f.linv).transpose(),
                par_for(lx.nrows()),
            )
        };
        let l1 = f.linv.column_sum(); // L^{-1} 1
        let m1_l1 = l1.dot(&(&m1 * &l1));
        // dF/dA contracted with A, and applied to 1.
        let g_a = 2.0 * m2.dot(&sums.c) + b2 * f.v.dot(&sums.ay);
        let g_1 = 2.0 * (&m2 * &sums.a1) + b2 * (&f.v * &self.ysum);
        let l1_g_1 = l1.dot(&g_1);
        // K_mm = alpha K_1 + bias 1 1^T + c (alpha + bias) I = L L^T, the jitter a multiple c
        // of mean(diag K_mm) (INDUCING_JITTER plus any step of factor_with_jitter's ladder),
        // so L^{-1} dK_mm/dln alpha L^{-T} = I - bias l1 l1^T - c bias L^{-1} L^{-T} and
        // L^{-1} dK_mm/dln bias L^{-T} = bias l1 l1^T + c bias L^{-1} L^{-T}.
        let c = f.jitter / (h.alpha + h.bias);
        let jitter_bias = c * h.bias * mul(&m1, &f.linv).dot(&f.linv); // <M1, L^{-1} L^{-T}>
        let kmm_bias = h.bias * m1_l1 + jitter_bias;
        let g_alpha = m1.trace() - kmm_bias + g_a - h.bias * l1_g_1 - 0.5 * p * beta * n * h.alpha;
        let g_bias = kmm_bias + h.bias * (l1_g_1 - 0.5 * p * beta * n);
        // dF/dA contracted with L^{-1} (K_rbf .* D2)_mn: with H = L^{-T} dF/dA,
        // H^T = A^T (2 M2 L^{-1}) + Y (beta^2 L^{-T} v)^T.
        let n_mat = mul(&m2, &f.linv) * 2.0;
        let u = tr_mul(&f.linv, &f.v) * b2;
        let mn = self.length_scale_sum(h, &sums.at, &n_mat, &u);
        let e_mm = f.kr_mm.component_mul(&self.d2_mm);
        let g_ell = (m1.dot(&whiten(&e_mm)) + mn) / (h.lengthscale * h.lengthscale);
        let d_beta = 0.5 * n * p * h.noise - 0.5 * p * bi.dot(&sums.c) - 0.5 * self.yy + beta * wv
            - 0.5 * b2 * f.v.dot(&(&sums.c * &f.v))
            - 0.5 * p * (psi0 - tr_c);
        Ok(SparseEvaluation {
            bound,
            grad: [g_alpha, g_ell, g_bias, -beta * d_beta],
            trace_term,
            jitter: f.jitter,
        })
    }

    /// The predictive mean (t x p, centred scale) and variance of a new observation at each
    /// row of `x_new` (t x q) under the variational posterior (Titsias 2009, eq. 8):
    /// `mean = K_*m S K_mn Y / s^2`, `var = k_** - K_*m K_mm^{-1} K_m* + K_*m S K_m* + s^2`.
    pub(crate) fn predict(
        &self,
        f: &Factors,
        h: &GplvmHyperparameters,
        x_new: &DMatrix<f64>,
    ) -> (DMatrix<f64>, Vec<f64>) {
        let xc = DMatrix::from_fn(x_new.nrows(), x_new.ncols(), |i, j| {
            x_new[(i, j)] - self.centre[j]
        });
        let k_star = rbf(&sq_dists_to(&xc, &self.z), h).add_scalar(h.bias); // t x m
        let a = mul_with(
            as_faer(&f.linv),
            as_faer(&k_star).transpose(),
            par_for(self.z.nrows()),
        ); // L^{-1} K_m*
        let mean = tr_mul(&a, &f.v) / h.noise;
        let ba = f.chol_b.solve(&a);
        let prior = h.alpha + h.bias + h.noise;
        let var = (0..a.ncols())
            .map(|i| prior - a.column(i).norm_squared() + a.column(i).dot(&ba.column(i)))
            .collect();
        (mean, var)
    }
}

/// `a += c I`.
fn add_to_diagonal(a: &mut DMatrix<f64>, c: f64) {
    for i in 0..a.nrows().min(a.ncols()) {
        a[(i, i)] += c;
    }
}

/// The sparse lower bound `F <= log p(Y | X)` of [`gplvm_bound`] at the given
/// hyperparameters (no optimisation), with `inducing` inducing points chosen among the
/// latent points by farthest-point sampling. Errors as [`gplvm_bound`], plus non-positive or
/// non-finite hyperparameters.
pub fn gplvm_lower_bound(
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
    hyperparameters: &GplvmHyperparameters,
    inducing: usize,
) -> Result<f64> {
    hyperparameters.check("hyperparameters")?;
    let opts = GplvmScoreOptions {
        inducing: Some(inducing),
        ..Default::default()
    };
    let m = inducing_count(&opts, x.nrows())?;
    Ok(SparseProblem::new(x, y, m)?
        .evaluate(hyperparameters)?
        .bound)
}

/// The GP-LVM score at large n: the model of [`gplvm_score`](crate::gplvm_score) (all p
/// centred features independent, one RBF + bias + white kernel), scored by the collapsed
/// variational lower bound of Titsias (2009, eq. 9) with `m` inducing inputs `Z`,
///
/// `F = sum_d [log N(y_d | 0, Q_nn + s^2 I) - tr(K_nn - Q_nn) / (2 s^2)] <= log p(Y | X)`,
/// `Q_nn = K_nm K_mm^{-1} K_mn`, `s^2` the noise variance, `K` without the noise,
///
/// maximised over the same four hyperparameters with the same optimiser, starts and box as
/// the exact score. `F` equals the exact log-likelihood when the inducing points are all the
/// points, and grows as points are added to a set of inducing points.
///
/// Inducing points: `opts.inducing` (default `min(n, 200)`) latent points chosen by
/// farthest-point sampling (deterministic, spread over the latent space, nested as m grows),
/// fixed during the optimisation. Cost: O(n m^2 + m^3) time per evaluation, one pass over the
/// points in blocks, never an n x n matrix. The length-scale box and start use the median
/// pairwise distance of an evenly spaced subsample of 2000 latent points (all of them up to
/// 2000, so the box is the exact score's).
///
/// # Errors
/// As [`gplvm_score`](crate::gplvm_score) (bad or mismatched input, `n < 2`, constant data,
/// invalid options), plus `opts.inducing` of 0 or more than `n`, and `opts.solver = Exact`.
pub fn gplvm_bound(
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
    opts: &GplvmScoreOptions,
) -> Result<GplvmBound> {
    if opts.solver == GplvmSolver::Exact {
        return Err(Error::invalid(
            "GplvmScoreOptions.solver",
            "gplvm_bound computes the sparse lower bound; for the exact likelihood call \
             gplvm_score or gplvm_evidence",
        ));
    }
    Ok(fit_bound(x, y, opts)?.0)
}

/// [`gplvm_bound`] (without its check of `opts.solver`) and the problem it was fitted on.
pub(crate) fn fit_bound(
    x: &DMatrix<f64>,
    y: &DMatrix<f64>,
    opts: &GplvmScoreOptions,
) -> Result<(GplvmBound, SparseProblem)> {
    check_options(opts)?;
    check_pair(x, y)?;
    let m = inducing_count(opts, x.nrows())?;
    let problem = SparseProblem::new(x, y, m)?;
    let v = mean_variance(&problem.y);
    check_variance(v)?;
    let objective = |h: &GplvmHyperparameters| problem.evaluate(h).map(|e| (e.bound, e.grad));
    let np = problem.y.len() as f64;
    let best = maximise(
        objective,
        v,
        problem.median_distance(),
        np,
        BOUND_FACTR,
        opts,
    )?;
    let e = problem.evaluate(&best.hyperparameters)?;
    let bound = GplvmBound {
        lower_bound: e.bound,
        trace_term: e.trace_term,
        inducing: problem.inducing(),
        hyperparameters: best.hyperparameters,
        jitter: e.jitter,
        iterations: best.iterations,
        evaluations: best.evaluations,
        converged: best.converged,
    };
    Ok((bound, problem))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{gplvm_evidence, gplvm_log_likelihood, gplvm_score, GplvmEvidence};
    use rand::Rng;
    use unfold_core::seeded_rng;

    fn random(n: usize, m: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = seeded_rng(seed);
        DMatrix::from_fn(n, m, |_, _| rng.random_range(-1.0..1.0))
    }

    /// A noisy 2-D sheet `(u, v, sin(u v))` in 3-D at `n` random latent points, and those
    /// points.
    fn sheet(n: usize, seed: u64) -> (DMatrix<f64>, DMatrix<f64>) {
        let mut rng = seeded_rng(seed);
        let x = DMatrix::from_fn(n, 2, |_, _| rng.random_range(-1.5..1.5));
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let (u, v): (f64, f64) = (x[(i, 0)], x[(i, 1)]);
            [u, v, (u * v).sin()][j] + 0.05 * rng.random_range(-1.0..1.0)
        });
        (x, y)
    }

    const POINTS: [GplvmHyperparameters; 3] = [
        GplvmHyperparameters::new(1.0, 0.7, 0.1, 0.05),
        GplvmHyperparameters::new(0.2, 2.5, 1.5, 0.3),
        GplvmHyperparameters::new(3.0, 0.2, 0.01, 0.002),
    ];

    /// Hyperparameters of the sheet: near its fitted ones (long length scale, small noise,
    /// so K_mm is numerically singular and jittered), a longer and a shorter length scale.
    const SHEET: [GplvmHyperparameters; 3] = [
        GplvmHyperparameters::new(2.3, 1.4, 1e-3, 8.7e-4),
        GplvmHyperparameters::new(2.3, 5.0, 1.0, 1e-4),
        GplvmHyperparameters::new(2.3, 0.5, 1.0, 1e-3),
    ];

    /// (a) With every latent point inducing, `Q_nn = K_nn`: the trace term vanishes and the
    /// bound is the exact log-likelihood (here `K_mm` factors without jitter).
    #[test]
    fn equals_the_exact_likelihood_when_every_point_is_inducing() {
        let (x, y) = (random(30, 2, 1), random(30, 4, 2).add_scalar(3.0));
        let (xs, ys) = sheet(150, 9);
        let cases = [(&x, &y, &POINTS[..]), (&xs, &ys, &SHEET[2..])];
        for (x, y, points) in cases {
            let problem = SparseProblem::new(x, y, x.nrows()).unwrap();
            assert_eq!(problem.inducing(), x.nrows());
            for h in points {
                let exact = gplvm_log_likelihood(x, y, h).unwrap();
                let e = problem.evaluate(h).unwrap();
                assert_eq!(e.jitter, INDUCING_JITTER * (h.alpha + h.bias));
                let rel = (e.bound - exact).abs() / exact.abs();
                assert!(
                    rel < 1e-8,
                    "{h:?}: bound {} vs exact {exact} ({rel:e})",
                    e.bound
                );
                assert!(
                    e.trace_term.abs() < 1e-8 * exact.abs(),
                    "{h:?}: trace term {}",
                    e.trace_term
                );
                let public = gplvm_lower_bound(x, y, h, x.nrows()).unwrap();
                assert_eq!(public, e.bound);
            }
        }
    }

    /// (b) With fewer inducing points than points the bound is below the likelihood (by
    /// at least its trace term's share, here always a visible gap), also where `K_mm` is
    /// numerically singular and jittered.
    #[test]
    fn is_below_the_exact_likelihood() {
        let (x, y) = sheet(300, 5);
        for h in SHEET.iter().chain(&POINTS) {
            let exact = gplvm_log_likelihood(&x, &y, h).unwrap();
            for m in [1, 10, 50, 150, 299] {
                let e = SparseProblem::new(&x, &y, m).unwrap().evaluate(h).unwrap();
                assert!(
                    e.trace_term >= 0.0,
                    "{h:?}, m = {m}: trace {}",
                    e.trace_term
                );
                assert!(
                    e.bound < exact,
                    "{h:?}, m = {m}: bound {} above the likelihood {exact}",
                    e.bound
                );
            }
        }
    }

    /// (c) Adding inducing points (farthest-point prefixes are nested) never lowers the bound
    /// (the fixed relative jitter makes them noisy inducing variables with the same noise,
    /// for which the bound is still monotone), and at `m = n` it reaches the likelihood up to
    /// the jitter's share.
    #[test]
    fn grows_as_inducing_points_are_added() {
        let (x, y) = sheet(200, 6);
        for h in SHEET.iter().chain(&POINTS) {
            let exact = gplvm_log_likelihood(&x, &y, h).unwrap();
            let base = INDUCING_JITTER * (h.alpha + h.bias);
            let mut last = f64::NEG_INFINITY;
            for m in [1, 2, 4, 8, 16, 32, 64, 128, 200] {
                let e = SparseProblem::new(&x, &y, m).unwrap().evaluate(h).unwrap();
                assert_eq!(
                    e.jitter, base,
                    "{h:?}, m = {m}: a fallback jitter was needed"
                );
                assert!(
                    e.bound >= last - 1e-10 * exact.abs(),
                    "{h:?}: m = {m} gives {} < {last}",
                    e.bound
                );
                last = e.bound;
            }
            // The jitter's share: 3e-8 relative at noise 1e-4 and length scale 5.
            assert!(
                (exact - last).abs() < 1e-7 * exact.abs(),
                "{h:?}: {last} vs {exact}"
            );
        }
    }

    /// (d) The gradient in log coordinates against fourth-order central differences (step
    /// 1e-3): to 1e-6 on well-conditioned problems; to 1e-4 on the sheet, whose `K_mm` is
    /// numerically singular (jittered at `m = n`), where the bound itself carries round-off of
    /// about 1e-10 that the differences amplify. The jitter's dependence on alpha and bias is
    /// part of the gradient.
    #[test]
    fn gradient_matches_central_differences() {
        let (x, y) = (random(25, 2, 3), random(25, 3, 4));
        let (xs, ys) = sheet(120, 4);
        let cases = [
            (&x, &y, &POINTS[..], 25, 1e-6),
            (&x, &y, &POINTS[..], 8, 1e-6),
            (&xs, &ys, &[SHEET[0], SHEET[2]][..], 40, 1e-4),
            (&xs, &ys, &SHEET[..], 120, 1e-4),
        ];
        for (x, y, points, m, tol) in cases {
            let problem = SparseProblem::new(x, y, m).unwrap();
            for h in points {
                let z = h.logs();
                let e = problem.evaluate(h).unwrap();
                let norm = e.grad.iter().map(|g| g * g).sum::<f64>().sqrt();
                for i in 0..4 {
                    let step = 1e-3;
                    let at = |s: f64| {
                        let mut zs = z;
                        zs[i] += s;
                        let shifted = GplvmHyperparameters::from_logs(&zs);
                        let e2 = problem.evaluate(&shifted).unwrap();
                        let (c, c2) = (
                            e.jitter / (h.alpha + h.bias),
                            e2.jitter / (shifted.alpha + shifted.bias),
                        );
                        assert!((c - c2).abs() <= 1e-12 * c, "the jitter step changed");
                        e2.bound
                    };
                    let fd = (8.0 * (at(step) - at(-step)) - (at(2.0 * step) - at(-2.0 * step)))
                        / (12.0 * step);
                    let err = (fd - e.grad[i]).abs() / e.grad[i].abs().max(1e-3 * norm);
                    assert!(
                        err < tol,
                        "m = {m}, {h:?}, component {i}: {} vs {fd} (rel {err:e})",
                        e.grad[i]
                    );
                }
            }
        }
    }

    /// (e) At n = 800 the bound fitted with 200 inducing points is close to the exact
    /// fitted score (measured: 2.0e-6 nats below 4835.74, 4e-10 relative; asserted below
    /// 1e-7 relative), not above it, and the hyperparameters agree to 1e-3.
    #[test]
    fn fitted_bound_is_close_to_the_exact_score() {
        let (x, y) = sheet(800, 11);
        let opts = GplvmScoreOptions::default();
        let exact = gplvm_score(&x, &y, &opts).unwrap();
        let bound = gplvm_bound(
            &x,
            &y,
            &GplvmScoreOptions {
                inducing: Some(200),
                ..opts.clone()
            },
        )
        .unwrap();
        assert!(bound.converged && bound.inducing == 200);
        let gap = exact.log_likelihood - bound.lower_bound;
        assert!(
            gap > -1e-6 * exact.log_likelihood.abs(),
            "bound above the likelihood by {gap}"
        );
        assert!(gap < 1e-7 * exact.log_likelihood.abs(), "gap {gap}");
        let (he, hb) = (exact.hyperparameters, bound.hyperparameters);
        assert!((he.noise / hb.noise - 1.0).abs() < 1e-3, "{he:?} vs {hb:?}");
        assert!(
            (he.lengthscale / hb.lengthscale - 1.0).abs() < 1e-3,
            "{he:?} vs {hb:?}"
        );
    }

    /// (f) Bad input is refused with an error naming the problem.
    #[test]
    fn rejects_bad_input() {
        let (x, y) = sheet(20, 12);
        let with = |inducing: Option<usize>| GplvmScoreOptions {
            inducing,
            solver: GplvmSolver::Bound,
            ..Default::default()
        };
        for bad in [Some(0), Some(21)] {
            match gplvm_bound(&x, &y, &with(bad)) {
                Err(Error::InvalidParameter { name, message }) => {
                    assert_eq!(name, "GplvmScoreOptions.inducing");
                    assert!(message.contains("inducing"), "{message}");
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        assert!(matches!(
            gplvm_lower_bound(&x, &y, &SHEET[0], 0),
            Err(Error::InvalidParameter { .. })
        ));
        let mut nan = y.clone();
        nan[(3, 1)] = f64::NAN;
        assert!(matches!(
            gplvm_bound(&x, &nan, &with(None)),
            Err(Error::NonFinite { .. })
        ));
        let mut nan_x = x.clone();
        nan_x[(0, 0)] = f64::INFINITY;
        assert!(matches!(
            gplvm_lower_bound(&nan_x, &y, &SHEET[0], 5),
            Err(Error::NonFinite { .. })
        ));
        assert!(matches!(
            gplvm_bound(&x.rows(0, 19).into_owned(), &y, &with(None)),
            Err(Error::DimensionMismatch(_))
        ));
        assert!(matches!(
            gplvm_bound(&x, &DMatrix::from_element(20, 3, 1.0), &with(None)),
            Err(Error::InvalidParameter { .. })
        ));
        let one = |m: &DMatrix<f64>| m.rows(0, 1).into_owned();
        assert!(matches!(
            gplvm_bound(&one(&x), &one(&y), &with(None)),
            Err(Error::TooFewPoints { .. })
        ));
        let negative = GplvmHyperparameters::new(1.0, -1.0, 1.0, 1.0);
        assert!(matches!(
            gplvm_lower_bound(&x, &y, &negative, 5),
            Err(Error::InvalidParameter { .. })
        ));
        let exact_only = GplvmScoreOptions {
            solver: GplvmSolver::Exact,
            ..Default::default()
        };
        assert!(matches!(
            gplvm_bound(&x, &y, &exact_only),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            gplvm_score(&x, &y, &with(None)),
            Err(Error::InvalidParameter { .. })
        ));
    }

    /// Farthest-point sampling: nested prefixes, the first point nearest the mean, each next
    /// one the farthest from those chosen, and coincident points never chosen twice.
    #[test]
    fn farthest_points_are_nested_and_spread() {
        let x = DMatrix::from_row_slice(6, 1, &[0.0, 10.0, 1.0, 1.0, 4.0, 4.0]);
        // Mean 10/3: nearest is 4.0 (row 4); then 10 (row 1), then 0 (row 0), then 1 (row 2).
        assert_eq!(farthest_points(&x, 4), vec![4, 1, 0, 2]);
        assert_eq!(farthest_points(&x, 2), vec![4, 1]);
        // Only 4 distinct points: asking for all 6 stops at 4.
        assert_eq!(farthest_points(&x, 6), vec![4, 1, 0, 2]);
        let (xs, _) = sheet(300, 13);
        let all = farthest_points(&xs, 100);
        assert_eq!(farthest_points(&xs, 37), all[..37].to_vec());
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 100);
    }

    /// The automatic choice: exact up to the documented number of points, the bound above,
    /// labelled by its kind.
    #[test]
    fn evidence_is_exact_or_a_labelled_bound() {
        use crate::gplvm_score::uses_bound;
        use crate::GPLVM_EXACT_MAX_POINTS;
        use unfold_core::EvidenceKind;
        let auto = GplvmScoreOptions::default();
        assert!(!uses_bound(&auto, GPLVM_EXACT_MAX_POINTS));
        assert!(uses_bound(&auto, GPLVM_EXACT_MAX_POINTS + 1));
        let (x, y) = sheet(60, 14);
        let exact = gplvm_evidence(&x, &y, &auto).unwrap();
        assert!(!exact.is_bound() && exact.kind() == EvidenceKind::LogLikelihood);
        assert_eq!(
            exact.value(),
            gplvm_score(&x, &y, &auto).unwrap().log_likelihood
        );
        let forced = GplvmScoreOptions {
            solver: GplvmSolver::Bound,
            inducing: Some(20),
            ..Default::default()
        };
        let bound = gplvm_evidence(&x, &y, &forced).unwrap();
        assert!(bound.is_bound() && bound.kind() == EvidenceKind::Elbo);
        assert_eq!(bound.evidence().kind.as_str(), "elbo");
        match &bound {
            GplvmEvidence::Bound(b) => assert_eq!(b.inducing, 20),
            GplvmEvidence::Exact(_) => unreachable!(),
        }
        assert!(bound.value() < exact.value());
    }
}
