//! The driver: checks, screening into blocks, per-block solves, assembly of the fit.

use crate::block::{log_det, Block, Limits};
use crate::screen::components;
use crate::validate::check;
use crate::{Error, GlassoFit, GlassoOptions, Penalty};
use nalgebra::{Cholesky, DMatrix};

/// Smallest Cholesky pivot (relative to the largest diagonal entry) accepted when an
/// unpenalised block must have a positive definite S.
const PIVOT_TOL: f64 = 1e-12;

/// Fits the graphical lasso (Friedman, Hastie & Tibshirani 2008):
///
/// ```text
/// maximise over Theta ≻ 0:   log det Theta - tr(S Theta) - sum_{i,j} rho_ij |Theta_ij|
/// ```
///
/// by block coordinate descent over the columns of `W = Theta^{-1}`, each column an inner
/// coordinate-descent lasso warm-started from the previous sweep, until the duality gap
/// `tr(S Theta) - p + sum rho_ij |Theta_ij|` is at most `opts.tol`. Entries with an infinite
/// penalty are exactly zero in Theta. S may be singular when the penalties make the problem
/// bounded (e.g. every off-diagonal rho > 0 and `S_ii > 0`).
///
/// ```
/// use nalgebra::DMatrix;
/// use unfold_glasso::{graphical_lasso, GlassoOptions, Penalty};
/// let s = DMatrix::from_row_slice(3, 3, &[1.0, 0.5, 0.2, 0.5, 1.0, 0.4, 0.2, 0.4, 1.0]);
/// let fit = graphical_lasso(&s, &Penalty::Scalar(0.1), &GlassoOptions::default()).unwrap();
/// assert!(fit.converged && fit.duality_gap.abs() <= 1e-4);
/// // Stationarity on the diagonal: W_ii = S_ii when the diagonal is not penalised.
/// assert!((fit.covariance[(0, 0)] - 1.0).abs() < 1e-15);
/// ```
pub fn graphical_lasso(
    s: &DMatrix<f64>,
    penalty: &Penalty,
    opts: &GlassoOptions,
) -> Result<GlassoFit, Error> {
    graphical_lasso_observed(s, penalty, opts, &mut |_, _| true)
}

/// [`graphical_lasso`] telling `progress(sweep, gap)` the duality gap after every sweep of
/// every block; `false` ends the solve with [`Error::Stopped`] (the caller's interrupt).
pub fn graphical_lasso_observed(
    s: &DMatrix<f64>,
    penalty: &Penalty,
    opts: &GlassoOptions,
    progress: &mut dyn FnMut(usize, f64) -> bool,
) -> Result<GlassoFit, Error> {
    let c = check(s, penalty, opts)?;
    let p = c.p;
    let diag = |i: usize| c.s[i + i * p] + c.pen[i + i * p];
    if let Some(i) = (0..p).find(|&i| diag(i) <= 0.0) {
        return Err(Error::NoSolution {
            reason: format!(
                "variable {i} has S_ii + rho_ii = 0, so Theta_ii is unbounded (a constant variable)"
            ),
        });
    }
    let (label, count) = components(&c.s, &c.pen, p, opts.screen);
    let mut members = vec![Vec::new(); count];
    for (i, &l) in label.iter().enumerate() {
        members[l].push(i);
    }
    let mut precision = DMatrix::zeros(p, p);
    let mut covariance = DMatrix::zeros(p, p);
    let (mut gap, mut objective, mut sweeps, mut converged) = (0.0, 0.0, 0, true);
    let mut block_gaps = Vec::new();
    for idx in &members {
        let m = idx.len();
        if m == 1 {
            // Closed form: Theta_ii = 1 / (S_ii + rho_ii).
            let i = idx[0];
            let w = diag(i);
            covariance[(i, i)] = w;
            precision[(i, i)] = 1.0 / w;
            objective += -w.ln() - 1.0;
            continue;
        }
        let block = extract(&c.s, &c.pen, p, idx);
        check_unpenalised(&block)?;
        let (w0, beta0, initial_gap) = start(&block, idx, opts);
        let scale = (0..m).map(|k| w0[k + k * m]).sum::<f64>() / m as f64;
        let limits = Limits {
            tol: opts.tol * m as f64 / p as f64,
            max_iter: opts.max_iter,
            inner_tol: opts.inner_tol,
            scale,
            inner_max_iter: opts.inner_max_iter,
        };
        // Block coordinate descent keeps W positive definite from a dual feasible start
        // (|W_ij - S_ij| <= rho_ij). A warm W from another penalty may be infeasible, so a
        // collapse from a warm start is retried from the cold W before it counts as "no
        // solution".
        let warm_beta = opts.warm_start.as_ref().map(|_| beta0.clone());
        let fit = match (
            block.solve(w0, beta0, initial_gap, &limits, progress),
            warm_beta,
        ) {
            (Err(Error::NoSolution { .. }), Some(beta)) => {
                block.solve(cold_w(&block), beta, initial_gap, &limits, progress)?
            }
            (result, _) => result?,
        };
        gap += fit.gap;
        sweeps = sweeps.max(fit.sweeps);
        block_gaps.push(fit.gaps);
        converged &= fit.converged;
        // primal = log det Theta - (surrogate gap + m).
        objective += fit.logdet_theta - (block.surrogate_gap(&fit.theta) + m as f64);
        for (b, &jb) in idx.iter().enumerate() {
            for (a, &ja) in idx.iter().enumerate() {
                precision[(ja, jb)] = fit.theta[a + b * m];
                covariance[(ja, jb)] = fit.w[a + b * m];
            }
        }
    }
    Ok(GlassoFit {
        precision,
        covariance,
        objective,
        duality_gap: gap,
        iterations: sweeps,
        gap_trace: gap_trace(&block_gaps, sweeps),
        converged,
        components: count,
    })
}

/// The sub-problem on the variables `idx`.
fn extract(s: &[f64], pen: &[f64], p: usize, idx: &[usize]) -> Block {
    let m = idx.len();
    let mut bs = Vec::with_capacity(m * m);
    let mut bp = Vec::with_capacity(m * m);
    for &jb in idx {
        for &ja in idx {
            bs.push(s[ja + jb * p]);
            bp.push(pen[ja + jb * p]);
        }
    }
    Block {
        m,
        s: bs,
        pen: bp,
        index: idx.to_vec(),
    }
}

/// A block with no penalty at all (every rho zero, no mask) is the unpenalised maximum
/// likelihood problem: it has a solution iff S (+ diagonal penalty) is positive definite.
fn check_unpenalised(b: &Block) -> Result<(), Error> {
    let m = b.m;
    let free = (0..m).all(|i| (0..m).all(|j| i == j || b.pen[j + i * m] == 0.0));
    if !free {
        return Ok(());
    }
    let a = DMatrix::from_fn(m, m, |r, c| {
        b.s[r + c * m] + if r == c { b.pen[r + r * m] } else { 0.0 }
    });
    let largest = (0..m).map(|i| a[(i, i)]).fold(0.0, f64::max);
    let ok = Cholesky::new(a).is_some_and(|ch| {
        let l = ch.l_dirty();
        (0..m).all(|i| l[(i, i)] * l[(i, i)] > PIVOT_TOL * largest)
    });
    if ok {
        Ok(())
    } else {
        Err(Error::NoSolution {
            reason: format!(
                "the penalty is zero on variables {:?}... ({m} variables) and S restricted to them is singular",
                &b.index[..m.min(5)]
            ),
        })
    }
}

/// The cold (dual feasible) start `W = S + diag(rho)`.
fn cold_w(b: &Block) -> Vec<f64> {
    let m = b.m;
    let mut w = b.s.clone();
    for k in 0..m {
        w[k + k * m] += b.pen[k + k * m];
    }
    w
}

/// Starting W (diagonal `S_ii + rho_ii`), lasso coefficients (warm start or zero) and the
/// surrogate gap of the warm-start precision (`+inf` for a cold start).
fn start(b: &Block, idx: &[usize], opts: &GlassoOptions) -> (Vec<f64>, Vec<f64>, f64) {
    let m = b.m;
    let mut beta = vec![0.0; m * m];
    let mut w = b.s.clone();
    let mut initial_gap = f64::INFINITY;
    if let Some((w_ws, t_ws)) = &opts.warm_start {
        let theta0: Vec<f64> = idx
            .iter()
            .flat_map(|&jc| idx.iter().map(move |&ja| t_ws[(ja, jc)]))
            .collect();
        initial_gap = b.surrogate_gap(&theta0);
        for (bc, &jc) in idx.iter().enumerate() {
            let tii = t_ws[(jc, jc)];
            for (a, &ja) in idx.iter().enumerate() {
                w[a + bc * m] = w_ws[(ja, jc)];
                if a != bc && b.pen[a + bc * m].is_finite() {
                    beta[a + bc * m] = -t_ws[(ja, jc)] / tii;
                }
            }
        }
    }
    for k in 0..m {
        w[k + k * m] = b.s[k + k * m] + b.pen[k + k * m];
    }
    // A warm W with its diagonal reset may be indefinite: start from the cold W then.
    if opts.warm_start.is_some() && log_det(&w, m).is_none() {
        w = cold_w(b);
    }
    (w, beta, initial_gap)
}

/// The summed duality gap after each of `sweeps` sweeps, a component that stopped earlier
/// counting with its last gap.
fn gap_trace(block_gaps: &[Vec<f64>], sweeps: usize) -> Vec<f64> {
    (0..sweeps)
        .map(|s| {
            block_gaps
                .iter()
                .filter_map(|g| g.get(s).or(g.last()))
                .sum()
        })
        .collect()
}
