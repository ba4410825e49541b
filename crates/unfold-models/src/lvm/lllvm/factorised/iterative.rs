//! The q(x) mean solve by conjugate gradients, without factorising `K_x`
//! (`specs/lllvm_scale.md` §5F): `K_x` has `n (dx + dy)` rows, and its factor's fill grows
//! with `(dx + dy)^2`. Eliminating its lower block gives the precision of the exact family,
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
//! The preconditioner is a block Laplacian of the graph whose diagonal blocks match
//! `(Lam_x)_vv` ([`block_laplacian`]): with it the solves took 12 to 14 iterations on
//! the roll and a sheet at 10^4 points and on the roll at 10^5, against 40 to 230 with the
//! block diagonal alone (`docs/architecture.md`). Its pattern is fixed per graph, so it is
//! analysed once ([`Setup`]) and each EM iteration fills and factorises it (`L D L^T` with
//! positive pivots, as for the mean systems). The solve starts from the current means: q(x)'s update maximises
//! the bound, which is `-E(m)` plus a constant in the energy `E` of `Lam_x m = b`, so every
//! step raises the bound and the energy error is what the solve leaves of it
//! ([`unfold_linalg::conjugate_gradients`]).

use super::systems::Entries;
use super::two_hop::grounded_root;
use super::FactorisedProblem;
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{interrupt, Result};
use unfold_linalg::{
    conjugate_gradients, CgOptions, CgOutcome, FillOrdering, QuasiDefiniteSymbolic,
};

/// The bound the q(x) mean solve may leave unclaimed, in nats: far below the digits any
/// report prints.
pub(crate) const ENERGY_TOLERANCE: f64 = 1e-6;

/// The later energy decreases the solve's error estimate sums.
const DELAY: usize = 10;

/// What the q(x) mean solve keeps per graph: where each point sits in its neighbours'
/// lists, and the analysis of the preconditioner's pattern (the kNN pattern in dx x dx
/// blocks), so that each EM iteration only fills and factorises it.
#[derive(Debug)]
pub(crate) struct Setup {
    /// `mirror[u][a]`: the position of `u` in the neighbour list of its `a`-th neighbour.
    mirror: Vec<Vec<usize>>,
    preconditioner: QuasiDefiniteSymbolic,
}

const PRECONDITIONER: &str = "LL-LVM preconditioner of q(x)'s mean";

impl Setup {
    /// The setup on the graph `adj` for latent dimension `dx`.
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] on a stop requested during the assembly, and the
    /// analysis' errors.
    pub fn new(adj: &[Vec<usize>], dx: usize) -> Result<Setup> {
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
        // Any positive definite blocks give the pattern: the assembly emits every entry.
        let stand_in = vec![DMatrix::identity(dx, dx); adj.len()];
        let mut pattern = Entries::Triplets(Vec::new());
        block_laplacian(&mut pattern, adj, &stand_in, 0.5, dx)?;
        let size = adj.len() * dx;
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

/// The preconditioner: the block Laplacian `alpha I + sum_{v ~ w} (e_v - e_w)(e_v - e_w)^T
/// (x) W_vw` whose diagonal blocks approximate those of `Lam_x`, with
/// `W_vw = [(Lam_vv - alpha I) / d_v + (Lam_ww - alpha I) / d_w] / 2` from the diagonal
/// blocks `lam` of `Lam_x` (each term positive semi-definite), into `out`. It keeps the
/// graph's smooth modes, which a block diagonal preconditioner leaves to many iterations;
/// its translations have the eigenvalue alpha, as `Lam_x`'s do.
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested during the assembly.
fn block_laplacian(
    out: &mut Entries,
    adj: &[Vec<usize>],
    lam: &[DMatrix<f64>],
    alpha: f64,
    dx: usize,
) -> Result<()> {
    let excess: Vec<DMatrix<f64>> = lam
        .iter()
        .zip(adj)
        .map(|(lv, nb)| {
            let mut e = lv.clone();
            for r in 0..dx {
                e[(r, r)] -= alpha;
            }
            e / (2.0 * nb.len() as f64)
        })
        .collect();
    for (v, nb) in adj.iter().enumerate() {
        if v % super::CHECK_EVERY == 0 {
            interrupt::check()?;
        }
        let mut diag = DMatrix::identity(dx, dx) * alpha;
        for &w in nb {
            let weight = &excess[v] + &excess[w];
            out.block(v * dx, w * dx, &weight, -1.0);
            diag += weight;
        }
        out.block(v * dx, v * dx, &diag, 1.0);
    }
    Ok(())
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
        // Z = L_g^{-1} Abar_g m, (n - 1) x dy; the root is the last point. Built transposed
        // (column p is (Abar m)_p), then solved on its transpose.
        let mut e = DMatrix::zeros(dy, n - 1);
        e.as_mut_slice()
            .par_chunks_mut(dy)
            .enumerate()
            .for_each(|(p, col)| {
                for &w in &adj[p] {
                    for r in 0..dx {
                        let d = mv(p)[r] - mv(w)[r];
                        for ((ea, mp), mw) in col.iter_mut().zip(self.map(p, r)).zip(self.map(w, r))
                        {
                            *ea += (mp + mw) * d;
                        }
                    }
                }
            });
        interrupt::check()?;
        let mut z = e.transpose();
        two.lg.solve_block_in_place(&mut z);
        let zt = z.transpose();
        interrupt::check()?;
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

    /// Solves `Lam_x m = b` from the start in `m`, preconditioned by [`block_laplacian`].
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
            block_laplacian(&mut values, &self.problem.data.adj, lam, self.alpha, dx)?;
            analysis.factorise_lower(&values.into_lower(), PRECONDITIONER)?
        };
        centre(m);
        let outcome = conjugate_gradients(
            |v, out| {
                self.apply(v, out)?;
                centre(out);
                Ok(())
            },
            |r, out| {
                let mut x = DMatrix::from_column_slice(r.len(), 1, r);
                preconditioner.solve_in_place(&mut x);
                out.copy_from_slice(x.as_slice());
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
