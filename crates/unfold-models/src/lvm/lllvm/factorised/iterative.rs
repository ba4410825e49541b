//! The mean solves by conjugate gradients on the Schur complements `Lam_x` ([`LamX`]) and
//! `Lam_C` ([`LamC`], where `K_C`'s factor is dear: see that type and
//! [`super::MeanSolve`]), without factorising `K_x` or `K_C`.
//!
//! For q(x) (`specs/lllvm_scale.md` §5F): `K_x` has `n (dx + dy)` rows, and its factor's
//! fill grows with `(dx + dy)^2`. Eliminating its lower block gives the precision of the
//! exact family,
//!
//! ```text
//! Lam_x = alpha I + 2 L (x) I_dx + (gamma/2) D_x + (gamma/2) Abar_g^T (L_g^{-1} (x) I_dy) Abar_g,
//! ```
//!
//! whose product needs one block solve with the factor of `L_g` that the 2-hop step keeps
//! (dy right-hand sides) and sparse products that read the per-point blocks directly
//! (`systems` for `D_x` and `Abar`):
//!
//! ```text
//! (D_x m)_u    = dy [ T_u sum_w s^u_w - sum_{v in N(u)} T_v s^v_u ],  s^v_w = sum_w' P^v[w, w'] (m_v - m_w')
//! (Abar m)_p   = sum_{w in N(p)} (M_p + M_w) (m_p - m_w)
//! (Abar^T z)_u = sum_{w in N(u)} (M_u + M_w)^T (z_u - z_w),   z_root = 0.
//! ```
//!
//! The preconditioner is `P (x) I_dx` for a weighted Laplacian `P` of the graph whose
//! diagonal matches the mean eigenvalue of each `(Lam_x)_vv` ([`laplacian`]): with a
//! Laplacian of the graph the solves took 12 to 14 iterations on the roll and a sheet at
//! 10^4 points and on the roll at 10^5, against 40 to 230 with the block diagonal alone
//! (`docs/architecture.md`). Being scalar, its factor is the size of `L_g`'s, not dx^2
//! times it, and each solve treats the dx (here) or dx dy (q(C)'s) values of a point as
//! the columns of one block stored by rows. Its pattern is fixed per graph, so it is
//! analysed once ([`Setup`]) and each EM iteration fills it and takes its Cholesky factor.
//! The solve starts from the current means: q(x)'s update maximises the bound, which is
//! `-E(m)` plus a constant in the energy `E` of `Lam_x m = b`, so every step raises the
//! bound and the energy error is what the solve leaves of it
//! ([`unfold_linalg::conjugate_gradients`]).

use super::systems::Entries;
use super::two_hop::grounded_root;
use super::FactorisedProblem;
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{interrupt, Result};
use unfold_linalg::simd::Level;
use unfold_linalg::{
    conjugate_gradients, CgOptions, CgOutcome, FillOrdering, QuasiDefiniteSymbolic,
};

/// The bound the q(x) mean solve may leave unclaimed, in nats: far below the digits any
/// report prints.
pub(crate) const ENERGY_TOLERANCE: f64 = 1e-6;

/// The later energy decreases the solve's error estimate sums.
const DELAY: usize = 10;

/// What the mean solves by conjugate gradients keep per graph: where each point sits in its
/// neighbours' lists, and the analysis of their preconditioners' common pattern (the kNN
/// graph's, n x n), so that each EM iteration only fills and factorises them.
#[derive(Debug)]
pub(crate) struct Setup {
    /// `mirror[u][a]`: the position of `u` in the neighbour list of its `a`-th neighbour.
    mirror: Vec<Vec<usize>>,
    preconditioner: QuasiDefiniteSymbolic,
}

const PRECONDITIONER: &str = "LL-LVM preconditioner of q(x)'s mean";

impl Setup {
    /// The setup on the graph `adj`.
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] on a stop requested during the assembly, and the
    /// analysis' errors.
    pub fn new(adj: &[Vec<usize>]) -> Result<Setup> {
        let mirror = adj
            .iter()
            .enumerate()
            .map(|(u, nb)| {
                nb.iter()
                    .map(|&v| {
                        adj[v]
                            .iter()
                            .position(|&w| w == u)
                            .expect("the graph is symmetric")
                    })
                    .collect()
            })
            .collect();
        // Any positive blocks give the pattern: the assembly emits every entry.
        let stand_in = vec![DMatrix::identity(1, 1); adj.len()];
        let mut pattern = Entries::Triplets(Vec::new());
        laplacian(&mut pattern, adj, &stand_in, 0.5)?;
        let size = adj.len();
        let preconditioner = QuasiDefiniteSymbolic::analyse(
            &pattern.into_matrix(size)?,
            size,
            FillOrdering::Amd,
            PRECONDITIONER,
        )?;
        Ok(Setup {
            mirror,
            preconditioner,
        })
    }

    /// The values the preconditioner's factor holds.
    pub fn factor_len(&self) -> usize {
        self.preconditioner.factor_len()
    }
}

/// The preconditioner of q(x)'s mean, `P (x) I_dx`: the weighted Laplacian `P = alpha I +
/// sum_{v ~ w} w_vw (e_v - e_w)(e_v - e_w)^T` whose diagonal approximates the mean
/// eigenvalue of each diagonal block `lam` of `Lam_x` ([`edge_weights`]), into `out`. It
/// keeps the graph's smooth modes, which a block diagonal preconditioner leaves to many
/// iterations; its translations have the eigenvalue alpha, as `Lam_x`'s do.
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested during the assembly.
fn laplacian(
    out: &mut Entries,
    adj: &[Vec<usize>],
    lam: &[DMatrix<f64>],
    alpha: f64,
) -> Result<()> {
    out.identity(0, 0, adj.len(), alpha);
    edge_weights(out, adj, lam, |_| alpha, -1.0)
}

/// `sum_{v ~ w} w_vw (e_v + sign e_w)(e_v + sign e_w)^T` into `out` (n x n), with `w_vw =
/// (e_v / d_v + e_w / d_w) / 2` and `e_v = tr(lam_v) / dx - floor(v)`, the mean eigenvalue
/// of each diagonal block's excess `lam_v - floor(v) I` over the part that the caller
/// places itself (positive semi-definite, so `e_v >= 0`).
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested during the assembly.
fn edge_weights(
    out: &mut Entries,
    adj: &[Vec<usize>],
    lam: &[DMatrix<f64>],
    floor: impl Fn(usize) -> f64,
    sign: f64,
) -> Result<()> {
    let excess: Vec<f64> = (0..adj.len())
        .map(|v| {
            let mean_eigenvalue = lam[v].trace() / lam[v].nrows() as f64;
            (mean_eigenvalue - floor(v)) / (2.0 * adj[v].len() as f64)
        })
        .collect();
    for (v, nb) in adj.iter().enumerate() {
        if v % super::CHECK_EVERY == 0 {
            interrupt::check()?;
        }
        let mut diag = 0.0;
        for &w in nb {
            let weight = excess[v] + excess[w];
            out.identity(v, w, 1, sign * weight);
            diag += weight;
        }
        out.identity(v, v, 1, diag);
    }
    Ok(())
}

/// `Z = L_g^{-1} E` for `E_p = sum_{w in N(p)} sum_r (m(p, r) - m(w, r)) (a(p, r) + a(w, r))`
/// (dy values each) over the points but the root (the last), as the columns of a
/// dy x (n - 1) matrix, that is by rows of Z, in which it is built and solved. With `m` the
/// latent means and `a` the maps' columns, `E = Abar_g m` (`Lam_x`'s product); with `a` the
/// rows of `X`, `E = Qbar_g^T X` (`Lam_C`'s).
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested before or after the solve.
fn grounded_solve<'a>(
    problem: &FactorisedProblem,
    m: impl Fn(usize, usize) -> f64 + Sync,
    a: impl Fn(usize, usize) -> &'a [f64] + Sync,
) -> Result<DMatrix<f64>> {
    let (adj, n, dx, dy) = (&problem.data.adj, problem.n(), problem.dx, problem.dy());
    let mut e = DMatrix::zeros(dy, n - 1);
    e.as_mut_slice()
        .par_chunks_mut(dy)
        .enumerate()
        .for_each(|(p, col)| {
            for &w in &adj[p] {
                for r in 0..dx {
                    let d = m(p, r) - m(w, r);
                    for ((ea, ap), aw) in col.iter_mut().zip(a(p, r)).zip(a(w, r)) {
                        *ea += d * (ap + aw);
                    }
                }
            }
        });
    interrupt::check()?;
    problem.two.lg.solve_rows_in_place(e.as_mut_slice(), dy);
    interrupt::check()?;
    Ok(e)
}

/// `Lam_x` at the maps' means and column covariances `t`.
pub(crate) struct LamX<'a> {
    pub problem: &'a FactorisedProblem,
    pub setup: &'a Setup,
    /// The maps' means as columns: column `v dx + r` is column r of `M_v` (dy x n dx).
    pub maps: DMatrix<f64>,
    pub t: &'a [DMatrix<f64>],
    pub alpha: f64,
    pub gamma: f64,
}

impl LamX<'_> {
    /// Column r of `M_v`.
    fn map(&self, v: usize, r: usize) -> &[f64] {
        super::column(&self.maps, v * self.problem.dx + r)
    }

    /// `out = Lam_x m` for `m` point-major (`m[v dx + r]`).
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] when a stop is requested: checked between its
    /// three stages (the sums over the 2-hop pattern, the block solve with `L_g`, the
    /// product with `Abar^T`), each about 0.2-0.3 s at 10^5 points with dy = 50, where the
    /// whole product takes 0.7 s.
    pub fn apply(&self, m: &[f64], out: &mut [f64]) -> Result<()> {
        let problem = self.problem;
        let (adj, two) = (&problem.data.adj, &problem.two);
        let (n, dx, dy) = (problem.n(), problem.dx, problem.dy());
        let mv = |v: usize| &m[v * dx..(v + 1) * dx];
        // s[v][a dx + r] = (T_v s^v_w)_r for the a-th neighbour w of v.
        let s: Vec<Vec<f64>> = (0..n)
            .into_par_iter()
            .map(|v| {
                let (nb, p, t) = (&adj[v], &two.p[v], &self.t[v]);
                let mut sigma = vec![0.0; dx];
                let mut out = vec![0.0; nb.len() * dx];
                for a in 0..nb.len() {
                    sigma.fill(0.0);
                    for (b, &w) in nb.iter().enumerate() {
                        let pab = p[(a, b)];
                        for (r, sr) in sigma.iter_mut().enumerate() {
                            *sr += pab * (mv(v)[r] - mv(w)[r]);
                        }
                    }
                    for r in 0..dx {
                        out[a * dx + r] = (0..dx).map(|q| t[(r, q)] * sigma[q]).sum();
                    }
                }
                out
            })
            .collect();
        // Z = L_g^{-1} Abar_g m.
        let zt = grounded_solve(problem, |v, r| m[v * dx + r], |v, r| self.map(v, r))?;
        let (zeros, root) = (vec![0.0; dy], grounded_root(n));
        let zcol = |p: usize| {
            if p == root {
                &zeros[..]
            } else {
                &zt.as_slice()[p * dy..(p + 1) * dy]
            }
        };
        let (c, g2) = (0.5 * self.gamma * dy as f64, 0.5 * self.gamma);
        out.par_chunks_mut(dx).enumerate().for_each(|(u, o)| {
            let nb = &adj[u];
            let deg = nb.len() as f64;
            let zu = zcol(u);
            // (Abar^T z)_u = M_u^T sum_w (z_u - z_w) + sum_w M_w^T (z_u - z_w).
            let mut dz_sum = vec![0.0; dy];
            let mut abar = vec![0.0; dx];
            for &w in nb {
                let zw = zcol(w);
                for (r, ar) in abar.iter_mut().enumerate() {
                    let mw = self.map(w, r);
                    *ar += mw
                        .iter()
                        .zip(zu.iter().zip(zw))
                        .map(|(m, (a, b))| m * (a - b))
                        .sum::<f64>();
                }
                for ((d, a), b) in dz_sum.iter_mut().zip(zu).zip(zw) {
                    *d += a - b;
                }
            }
            for (r, or) in o.iter_mut().enumerate() {
                let mut acc = (self.alpha + 2.0 * deg) * mv(u)[r];
                for &w in nb {
                    acc -= 2.0 * mv(w)[r];
                }
                acc += c * (0..nb.len()).map(|a| s[u][a * dx + r]).sum::<f64>();
                for (a, &v) in nb.iter().enumerate() {
                    acc -= c * s[v][self.setup.mirror[u][a] * dx + r];
                }
                let mu = self.map(u, r);
                let own: f64 = mu.iter().zip(&dz_sum).map(|(m, d)| m * d).sum();
                *or = acc + g2 * (abar[r] + own);
            }
        });
        Ok(())
    }

    /// Solves `Lam_x m = b` from the start in `m`, preconditioned by [`laplacian`].
    ///
    /// The translations `1 (x) e_r` are eigenvectors of `Lam_x` with the eigenvalue alpha
    /// (`L`, `D_x` and `Abar` annihilate them), far below the rest of the spectrum; a
    /// translation error costs the bound almost nothing, so the energy criterion would
    /// leave it. The solution's mean over the points is therefore solved exactly,
    /// `mean_r = sum_v b_vr / (n alpha)`, and conjugate gradients run on the complement,
    /// with the preconditioner projected onto it.
    pub fn solve(&self, lam: &[DMatrix<f64>], b: &[f64], m: &mut [f64]) -> Result<CgOutcome> {
        let dx = self.problem.dx;
        let n = b.len() / dx;
        let centre = |v: &mut [f64]| {
            for r in 0..dx {
                let mean = v.iter().skip(r).step_by(dx).sum::<f64>() / n as f64;
                v.iter_mut().skip(r).step_by(dx).for_each(|x| *x -= mean);
            }
        };
        let mean: Vec<f64> = (0..dx)
            .map(|r| b.iter().skip(r).step_by(dx).sum::<f64>() / (n as f64 * self.alpha))
            .collect();
        let mut b = b.to_vec();
        centre(&mut b);
        let preconditioner = {
            let analysis = &self.setup.preconditioner;
            let mut values = Entries::lower(analysis);
            laplacian(&mut values, &self.problem.data.adj, lam, self.alpha)?;
            analysis.cholesky_lower(&values.into_lower(), PRECONDITIONER)?
        };
        centre(m);
        let outcome = conjugate_gradients(
            |v, out| {
                self.apply(v, out)?;
                centre(out);
                Ok(())
            },
            |r, out| {
                out.copy_from_slice(r);
                preconditioner.solve_rows_in_place(out, dx);
                centre(out);
            },
            &b,
            m,
            CgOptions {
                energy_tolerance: ENERGY_TOLERANCE,
                delay: DELAY,
                max_iterations: 2 * b.len(),
            },
            "LL-LVM mean of q(x) by conjugate gradients",
        )?;
        for (i, x) in m.iter_mut().enumerate() {
            *x += mean[i % dx];
        }
        Ok(outcome)
    }
}

/// `Lam_C` at the latent means `m` and covariances `s`: the precision of the rows of the
/// maps in the exact family, `K_C`'s Schur complement (`systems`),
///
/// ```text
/// Lam_C = eps J J^T + 2 L (x) I_dx + (gamma/2) D_C + (gamma/2) Qbar_g L_g^{-1} Qbar_g^T,
/// ```
///
/// applied to the `dy` columns of the maps at once. A vector holds `X = M^T` (n dx x dy)
/// as the maps' columns (`x[(v dx + r) dy + a] = (M_v)_{a r}`, the layout of
/// `map_columns`), so each unknown row is contiguous. With `c^v_a` the row sums of `P^v`
/// and `X_v` the dx x dy block of point v,
///
/// ```text
/// (D_C X)_u        = S_u [d_u X_u + sum_a c^u_a X_{N(u)_a}] + sum_{v in N(u)} S_v sigma^v_u,
/// sigma^v_w        = c^v_w X_v + sum_{w'} P^v[w, w'] X_{w'},
/// (Qbar_g^T X)_p   = sum_{w in N(p)} (m_p - m_w)^T (X_p + X_w),
/// (Qbar_g z)_v     = sum_{w in N(v)} (m_v - m_w) (z_v - z_w),   z_root = 0.
/// ```
pub(crate) struct LamC<'a> {
    pub problem: &'a FactorisedProblem,
    pub setup: &'a Setup,
    pub m: &'a DMatrix<f64>,
    pub s: &'a [DMatrix<f64>],
    pub epsilon: f64,
    pub gamma: f64,
}

const PRECONDITIONER_C: &str = "LL-LVM preconditioner of q(C)'s means";

/// What every point's rows of `Lam_C X` read: `X`, `Z = L_g^{-1} Qbar_g^T X` as the
/// columns of a dy x (n - 1) matrix, and `J^T X` (dx x dy).
struct Rows<'a> {
    x: &'a [f64],
    zt: &'a DMatrix<f64>,
    jx: &'a [f64],
}

impl LamC<'_> {
    /// `out = Lam_C x` in the layout of the type's docs.
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] when a stop is requested: checked between its
    /// stages, as [`LamX::apply`].
    pub fn apply(&self, x: &[f64], out: &mut [f64]) -> Result<()> {
        let problem = self.problem;
        let (dx, dy) = (problem.dx, problem.dy());
        let row = |v: usize, r: usize| &x[(v * dx + r) * dy..(v * dx + r + 1) * dy];
        let m = |v: usize, r: usize| self.m[(v, r)];
        // Z = L_g^{-1} Qbar_g^T X.
        let zt = grounded_solve(problem, m, row)?;
        // J^T X: the sum of every point's rows, dx x dy (in the points' order on every
        // number of threads, for the same bits).
        let mut jx = vec![0.0; dx * dy];
        for xv in x.chunks_exact(dx * dy) {
            jx.iter_mut().zip(xv).for_each(|(a, b)| *a += b);
        }
        let level = Level::widest();
        let at = Rows {
            x,
            zt: &zt,
            jx: &jx,
        };
        out.par_chunks_mut(dx * dy).enumerate().for_each(|(u, o)| {
            level.run_out(
                o,
                #[inline(always)]
                |o| self.point(u, &at, o),
            )
        });
        Ok(())
    }

    /// Row block u of `Lam_C X` (dx x dy) into `o`, from the terms of [`LamC::apply`].
    #[inline(always)]
    fn point(&self, u: usize, at: &Rows, o: &mut [f64]) {
        let problem = self.problem;
        let (adj, two) = (&problem.data.adj, &problem.two);
        let (n, dx, dy) = (problem.n(), problem.dx, problem.dy());
        let row = |v: usize, r: usize| &at.x[(v * dx + r) * dy..(v * dx + r + 1) * dy];
        let m = |v: usize, r: usize| self.m[(v, r)];
        let root = grounded_root(n);
        let zcol = |p: usize| (p != root).then(|| &at.zt.as_slice()[p * dy..(p + 1) * dy]);
        let nb = &adj[u];
        // sigma: the rows that S_u and each S_v (v in N(u)) multiply in D_C X.
        let mut sigma = vec![0.0; dx * dy];
        let mut d_c = vec![0.0; dx * dy];
        let add_times = |d_c: &mut [f64], sv: &DMatrix<f64>, sigma: &[f64]| {
            for (r, o) in d_c.chunks_exact_mut(dy).enumerate() {
                for (q, sq) in sigma.chunks_exact(dy).enumerate() {
                    let c = sv[(r, q)];
                    for (o, s) in o.iter_mut().zip(sq) {
                        *o += c * s;
                    }
                }
            }
        };
        let deg = nb.len() as f64;
        let p = &two.p[u];
        for (r, sr) in sigma.chunks_exact_mut(dy).enumerate() {
            for (s, xu) in sr.iter_mut().zip(row(u, r)) {
                *s = deg * xu;
            }
            for (a, &w) in nb.iter().enumerate() {
                let c: f64 = p.row(a).sum();
                for (s, xw) in sr.iter_mut().zip(row(w, r)) {
                    *s += c * xw;
                }
            }
        }
        add_times(&mut d_c, &self.s[u], &sigma);
        for (i, &v) in nb.iter().enumerate() {
            let (pv, nv) = (&two.p[v], &adj[v]);
            let a = self.setup.mirror[u][i];
            let c: f64 = pv.row(a).sum();
            for (r, sr) in sigma.chunks_exact_mut(dy).enumerate() {
                for (s, xv) in sr.iter_mut().zip(row(v, r)) {
                    *s = c * xv;
                }
                for (b, &w) in nv.iter().enumerate() {
                    let pab = pv[(a, b)];
                    for (s, xw) in sr.iter_mut().zip(row(w, r)) {
                        *s += pab * xw;
                    }
                }
            }
            add_times(&mut d_c, &self.s[v], &sigma);
        }
        let g2 = 0.5 * self.gamma;
        for (r, or) in o.chunks_exact_mut(dy).enumerate() {
            let (d_c, jx) = (&d_c[r * dy..(r + 1) * dy], &at.jx[r * dy..(r + 1) * dy]);
            for (((o, xu), d), j) in or.iter_mut().zip(row(u, r)).zip(d_c).zip(jx) {
                *o = 2.0 * deg * xu + self.epsilon * j + g2 * d;
            }
            for &w in nb {
                for (o, xw) in or.iter_mut().zip(row(w, r)) {
                    *o -= 2.0 * xw;
                }
                // (Qbar_g z)_u, with z_root = 0.
                let dm = g2 * (m(u, r) - m(w, r));
                match (zcol(u), zcol(w)) {
                    (Some(zu), Some(zw)) => {
                        for ((o, a), b) in or.iter_mut().zip(zu).zip(zw) {
                            *o += dm * (a - b);
                        }
                    }
                    (Some(z), None) => or.iter_mut().zip(z).for_each(|(o, a)| *o += dm * a),
                    (None, Some(z)) => or.iter_mut().zip(z).for_each(|(o, b)| *o -= dm * b),
                    (None, None) => {}
                }
            }
        }
    }

    /// Solves `Lam_C X = b` (the layout of the type's docs) from the start in `x`,
    /// preconditioned by `P (x) I_dx` with `P = eps I + 2 L` plus the signless weighted
    /// Laplacian of the rest of `Lam_C`'s diagonal blocks `lam` ([`edge_weights`]; the data
    /// terms couple neighbours through `C_v + C_w`), applied to the dx dy values of every
    /// point at once (the layout's rows).
    pub fn solve(&self, lam: &[DMatrix<f64>], b: &[f64], x: &mut [f64]) -> Result<CgOutcome> {
        let problem = self.problem;
        let (adj, dx, dy) = (&problem.data.adj, problem.dx, problem.dy());
        let preconditioner = {
            let analysis = &self.setup.preconditioner;
            let mut values = Entries::lower(analysis);
            super::systems::prior_blocks(&mut values, adj, 1, self.epsilon);
            let eps = self.epsilon;
            edge_weights(
                &mut values,
                adj,
                lam,
                |v| eps + 2.0 * adj[v].len() as f64,
                1.0,
            )?;
            analysis.cholesky_lower(&values.into_lower(), PRECONDITIONER_C)?
        };
        conjugate_gradients(
            |v, out| self.apply(v, out),
            |r, out| {
                out.copy_from_slice(r);
                preconditioner.solve_rows_in_place(out, dx * dy);
            },
            b,
            x,
            CgOptions {
                energy_tolerance: ENERGY_TOLERANCE,
                delay: DELAY,
                max_iterations: 2 * b.len(),
            },
            "LL-LVM means of q(C) by conjugate gradients",
        )
    }
}
