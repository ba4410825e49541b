//! LL-LVM's per-point (factorised) variational family on sparse matrices
//! (`specs/lllvm_scale.md`): one Gaussian per point,
//!
//! ```text
//! q(x) = prod_v N(x_v | m_v, S_v),     q(C) = prod_v MN(C_v | M_v, I_dy, T_v),
//! ```
//!
//! a special case of the exact family's `q(x) q(C)`, so the bound of `lllvm.md` §3.5
//! evaluated at it (§3.2 of the scale spec, term by term) is a lower bound on
//! `log p(y | G)`. It sits below the exact family's by a fraction of a nat per point that
//! shrinks as k grows (the spec's table C).
//!
//! Every update is a closed-form block optimum (§3.3): the covariances are the inverse
//! diagonal blocks of the exact precisions at the current other factor, and the means come
//! from one joint solve each, as sparse quasi-definite systems (`systems`) on the grounded
//! Laplacian, factorised or solved by conjugate gradients on their Schur complements
//! (`iterative`; [`MeanSolve`]). `L^+` is read only on the 2-hop pattern, once per graph,
//! by a padded selected inversion (`two_hop`). No n x n matrix is formed.
//!
//! **The reported bound.** EM climbs the per-point bound, and its trace is that bound. The
//! bound a fit reports is tighter: at the fitted q, one factor is freed from the family. With
//! q(x) fixed, the bound as a function of q(C) is a Gaussian's log-normaliser minus a KL
//! divergence, maximised by the full `MN(M, I_dy, Lam_C^{-1})`. The per-point q(C) right
//! after its update has that optimum's means and the inverse diagonal blocks of its
//! precision, so freeing it raises the bound by exactly
//! `(dy/2) [sum_v log|(Lam_C)_vv| - log|Lam_C|]` (the mean-field loss), with `log|Lam_C|`
//! read from the pivots of `K_C`'s factor. Freeing q(x) instead gains
//! `(1/2) [sum_v log|(Lam_x)_vv| - log|Lam_x|]` from `K_x`'s. The result is the exact
//! family's §3.5 bound at a state of that family, so it is still a lower bound on
//! `log p(y | G)`. Most of the per-point bound's lean towards larger k is that loss. The
//! report takes the higher of the two and names the freed factor in its last term
//! (`gain_freeing_q_x` or `gain_freeing_q_c`).
//!
//! Layout: the latent means are `m` (n x dx), the maps' means `mt` (n dx x dy) with the
//! rows `v dx .. (v + 1) dx` equal to `M_v^T` (the solution of `K_C`).
//!
//! **The points' order.** The problem keeps the points in a locality order of the graph
//! (reverse Cuthill–McKee, [`locality_order`]), so that the neighbours' rows and columns
//! that every per-point loop and every sparse product read sit close in memory; in the
//! caller's order (as the generators and most files give them) they sit anywhere. The
//! starts draw in the caller's order and the fitted model is given back in it, so the order
//! changes only rounding (test `the_points_order_changes_only_rounding`).

mod iterative;
mod systems;
mod two_hop;

use super::moments::{column, locality_order, positions};
use super::params::{AlphaRule, LlLvmInit, LlLvmParams, MeanSolve};
use super::{Covariance, LlLvm, LlLvmHyper, Prepared};
use crate::method::Checked;
use nalgebra::DMatrix;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use systems::Entries;
pub(super) use two_hop::grounded_laplacian;
use two_hop::TwoHop;
use unfold_core::{interrupt, Error, Evidence, Result, Rng};
use unfold_linalg::SparseSymbolic;
use unfold_linalg::{dot, symmetrised, Cholesky, CsrMatrix, FillOrdering, QuasiDefiniteSymbolic};
use unfold_vem::LatentVariableModel;

/// Points between two checks of the interruption flag in the E-step's serial loops over
/// the points (each point costs microseconds).
pub(super) const CHECK_EVERY: usize = 1024;

/// The per-point posterior: means and covariances of every `x_v` and `C_v`, with the
/// points in the problem's order ([`FactorisedProblem::order`]).
#[derive(Clone, Debug)]
pub struct FactorisedPosterior {
    /// Means of q(x), n x dx.
    pub m: DMatrix<f64>,
    /// Covariances `S_v` of q(x_v), dx x dx each.
    pub s: Vec<DMatrix<f64>>,
    /// Means of q(C): rows `v dx .. (v + 1) dx` are `M_v^T` (n dx x dy).
    pub mt: DMatrix<f64>,
    /// Column covariances `T_v` of q(C_v), dx x dx each.
    pub t: Vec<DMatrix<f64>>,
    stats: Stats,
}

impl FactorisedPosterior {
    /// The member of the per-point family with the full family's marginals: the means of
    /// `full` and the diagonal blocks of its covariances, each point's `dx x dx` (the
    /// full family's coordinate-major index `r n + i`), with the points in `order`
    /// ([`FactorisedProblem::order`]). EM started here asks where the per-point family
    /// goes from the full family's fit (`bench/lllvm/family_start.py`).
    ///
    /// # Panics
    /// If `order` is not as long as `full` has points, or `full`'s covariances are not
    /// `n dx x n dx` (a posterior that no E-step has filled yet).
    pub fn marginals_of(full: &super::LlLvmPosterior, order: &[usize]) -> Self {
        let (n, dx) = full.mu_x.shape();
        let dy = full.mu_c.nrows();
        assert_eq!(
            order.len(),
            n,
            "marginals_of: the order must list every point"
        );
        for cov in [&full.sigma_x, &full.sigma_c] {
            assert_eq!(
                cov.shape(),
                (n * dx, n * dx),
                "marginals_of: a covariance of q(x) or q(C) is not n dx x n dx"
            );
        }
        let block = |cov: &DMatrix<f64>, i: usize| {
            DMatrix::from_fn(dx, dx, |r, c| cov[(r * n + i, c * n + i)])
        };
        FactorisedPosterior {
            m: full.mu_x.select_rows(order),
            s: order.iter().map(|&i| block(&full.sigma_x, i)).collect(),
            mt: DMatrix::from_fn(n * dx, dy, |row, a| {
                full.mu_c[(a, (row % dx) * n + order[row / dx])]
            }),
            t: order.iter().map(|&i| block(&full.sigma_c, i)).collect(),
            stats: Stats::default(),
        }
    }
}

/// The expectations of the current posterior that the M-step and the bound read.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    /// `Equad = E_q[etilde^T (L^+ (x) I) etilde] = Q0 + T1 + T2 + T3` (§3.1).
    equad: f64,
    /// `sum_v Tr(M_v^T H_v(m))`.
    tr_c_h: f64,
}

/// The q(x) mean solve: `K_x` factorised on its analysed pattern, or conjugate gradients on
/// `Lam_x` with their preconditioner's pattern analysed ([`iterative`]).
#[derive(Debug)]
enum MeanX {
    Direct(QuasiDefiniteSymbolic),
    Iterative(iterative::Setup),
}

/// LL-LVM with the per-point family: data, graph, settings and what depends only on the
/// graph (`P^v`, the factor of `L_g`, the analyses of `K_C` and of `K_x` or, for conjugate
/// gradients, of their preconditioner).
#[derive(Debug)]
pub struct FactorisedProblem {
    /// The data with the points in [`FactorisedProblem::order`].
    data: Prepared,
    /// `order[a]` is the caller's point at position a (a locality order).
    order: Vec<usize>,
    /// The data's rows as columns (dy x n), read point by point.
    yt: DMatrix<f64>,
    deg: Vec<f64>,
    dx: usize,
    epsilon: f64,
    alpha: AlphaRule,
    gamma0: f64,
    init: LlLvmInit,
    two: TwoHop,
    /// How the q(x) means are solved for.
    mean_x: MeanX,
    /// The analysis of `K_C` (its pattern is fixed per graph); `None` where its factor would
    /// overflow 32-bit indices and conjugate gradients solve q(C)'s means.
    kc: Option<QuasiDefiniteSymbolic>,
    /// Whether `K_C` is analysed and its factor fits the memory limit (else q(C) is never
    /// freed in the reported bound).
    kc_fits: bool,
    /// Whether q(C)'s means are solved by conjugate gradients on `Lam_C` ([`MapsCost`]),
    /// else by factorising `K_C`.
    maps_by_cg: bool,
    /// The analysis of `alpha I + 2 L`, and `log det(alpha I + 2 L)` at the fixed alpha.
    prior_x: SparseSymbolic,
    fixed_log_det_prior_x: Option<f64>,
}

impl FactorisedProblem {
    /// Sets up the problem for the rows of `y` on `graph`, which must be connected, with the
    /// points in a locality order (the module docs' "The points' order").
    pub fn new(
        y: &DMatrix<f64>,
        graph: &unfold_graph::NeighbourGraph,
        params: &Checked<LlLvmParams>,
    ) -> Result<Self> {
        Self::with_order(y, graph, params, locality_order)
    }

    /// [`FactorisedProblem::new`] with the points in the order that `order` gives for the
    /// graph's adjacency lists.
    pub(super) fn with_order(
        y: &DMatrix<f64>,
        graph: &unfold_graph::NeighbourGraph,
        params: &Checked<LlLvmParams>,
        order: impl FnOnce(&[Vec<usize>]) -> Vec<usize>,
    ) -> Result<Self> {
        let data = Prepared::new(y, graph, params)?;
        let (dx, dy) = (params.dim, data.dy());
        let mut least = Sizes::lower_bound(&data.adj, dx);
        if params.mean_solve != MeanSolve::Direct {
            // Conjugate gradients may solve for q(C)'s means without K_C's factor.
            least.factors = 0;
        }
        check_memory(params, &data, least)?;
        let order = order(&data.adj);
        let data = data.reordered(&order);
        // Every sparse factor is analysed before any is computed (the padded `L_g`'s, then
        // the mean systems', whose patterns are fixed per graph and analysed from stand-in
        // values), so that a graph whose factors would not fit (a kNN graph made random by
        // noise) is refused before that work: on 50,000 image patches the refusal came
        // after 136 s and 7.4 GiB when `L_g` was factorised and inverted first.
        let two_hop = TwoHop::analyse(&data.adj)?;
        // The 2-hop step holds the padded factor and its selected inverse at once, before any
        // mean system's factor.
        check_memory(
            params,
            &data,
            Sizes {
                factors: 0,
                pattern: 0,
                shared: two_hop.values(),
            },
        )?;
        let deg: Vec<f64> = data.adj.iter().map(|a| a.len() as f64).collect();
        let (mean_x, kc) = {
            let stand_in = systems::stand_in_p(&data.adj);
            let mean_x = match params.mean_solve {
                MeanSolve::Direct => MeanX::Direct(analyse_k_x(&data.adj, &stand_in, dx, dy)?),
                MeanSolve::Auto | MeanSolve::Cg => {
                    MeanX::Iterative(iterative::Setup::new(&data.adj)?)
                }
            };
            (mean_x, analyse_k_c(&data.adj, &stand_in, dx)?)
        };
        let by_cg_possible = matches!(mean_x, MeanX::Iterative(_));
        if kc.is_none() && !by_cg_possible {
            return Err(Error::numerical(
                "LL-LVM K_C",
                "the factor of q(C)'s mean system would hold more than 2^32 entries (32-bit \
                 indices); mean_solve = auto or cg solves for q(C)'s means by conjugate \
                 gradients without it",
            ));
        }
        let (kx, preconditioner) = match &mean_x {
            MeanX::Direct(kx) => (Some(kx), 0),
            MeanX::Iterative(setup) => (None, setup.factor_len() as u64),
        };
        // The mean systems' factors and the preconditioner's: a lower bound of the check
        // below. Where K_C's factor would not fit, conjugate gradients solve q(C)'s means.
        let maps = data.n() * dx * dy;
        let sizes = |kc_factor, others| Sizes::analysed(kx, kc.as_ref(), kc_factor, maps, others);
        let mut kc_fits = kc.is_some() && fits(params, &data, sizes(true, preconditioner))?;
        if !kc_fits && !by_cg_possible {
            check_memory(params, &data, sizes(true, preconditioner))?;
        }
        check_memory(params, &data, sizes(kc_fits, preconditioner))?;
        let two = two_hop.compute(&data.adj)?;
        // With the factor of L_g, which the 2-hop step keeps.
        let others = preconditioner + two.lg.factor_nnz() as u64;
        kc_fits = kc_fits && fits(params, &data, sizes(true, others))?;
        check_memory(params, &data, sizes(kc_fits, others))?;
        let maps_by_cg = match params.mean_solve {
            MeanSolve::Direct => false,
            MeanSolve::Cg => true,
            MeanSolve::Auto => match &kc {
                Some(kc) if kc_fits => {
                    MapsCost::new(&data.adj, dx, dy, kc, &two, preconditioner).by_cg()
                }
                _ => true,
            },
        };
        let prior_x =
            SparseSymbolic::analyse(&prior_x_matrix(&data.adj, 1.0), "LL-LVM prior of x")?;
        let mut problem = FactorisedProblem {
            yt: data.y.transpose(),
            data,
            order,
            deg,
            dx,
            epsilon: params.epsilon,
            alpha: params.alpha,
            gamma0: params.gamma0,
            init: params.init,
            two,
            mean_x,
            kc,
            kc_fits,
            maps_by_cg,
            prior_x,
            fixed_log_det_prior_x: None,
        };
        if let AlphaRule::Fixed(a) = params.alpha {
            problem.fixed_log_det_prior_x = Some(problem.log_det_prior_x(a)?);
        }
        Ok(problem)
    }

    fn n(&self) -> usize {
        self.data.n()
    }

    /// `order[a]` is the caller's point at position a of the problem (and of its
    /// posteriors).
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    fn dy(&self) -> usize {
        self.data.dy()
    }

    /// `M_v + M_w` for the neighbours `w` of `v`, from the maps' columns ([`map_columns`]),
    /// which are contiguous there (the rows of `mt` would be `dy` strided reads each).
    fn map_sums(&self, maps: &DMatrix<f64>, v: usize) -> MapSums {
        let (dx, dy) = (self.dx, self.dy());
        let nb = &self.data.adj[v];
        let mut sums = vec![0.0; nb.len() * dx * dy];
        for (a, &w) in nb.iter().enumerate() {
            for r in 0..dx {
                let out = &mut sums[(a * dx + r) * dy..(a * dx + r + 1) * dy];
                let (mv, mw) = (column(maps, v * dx + r), column(maps, w * dx + r));
                for ((o, x), y) in out.iter_mut().zip(mv).zip(mw) {
                    *o = x + y;
                }
            }
        }
        MapSums { sums, dx, dy }
    }

    /// `A_v = sum_{w, w'} P^v[w, w'] (M_v + M_w)^T (M_v + M_w')` (§3.1), from the maps'
    /// columns ([`map_columns`]).
    fn a_block(&self, maps: &DMatrix<f64>, v: usize) -> DMatrix<f64> {
        let (dx, dy) = (self.dx, self.dy());
        let u = self.map_sums(maps, v);
        let p = &self.two.p[v];
        let d = self.data.adj[v].len();
        let mut a = DMatrix::zeros(dx, dx);
        // wb[r dy + k] = (sum_i P^v[i, b] (M_v + M_i))[k, r]
        let mut wb = vec![0.0; dx * dy];
        for b in 0..d {
            wb.fill(0.0);
            for i in 0..d {
                let pib = p[(i, b)];
                for r in 0..dx {
                    for (o, x) in wb[r * dy..(r + 1) * dy].iter_mut().zip(u.column(i, r)) {
                        *o += pib * x;
                    }
                }
            }
            for r in 0..dx {
                for c in 0..dx {
                    a[(r, c)] += dot(&wb[r * dy..(r + 1) * dy], u.column(b, c));
                }
            }
        }
        a
    }

    /// `X_v = sum_{w, w'} P^v[w, w'] (m_v - m_w)(m_v - m_w')^T` (§3.1).
    fn x_block(&self, m: &DMatrix<f64>, v: usize) -> DMatrix<f64> {
        let nb = &self.data.adj[v];
        let delta = DMatrix::from_fn(self.dx, nb.len(), |r, a| m[(v, r)] - m[(nb[a], r)]);
        &delta * &self.two.p[v] * delta.transpose()
    }

    /// `sum_{w in N(v)} R_vw B_w` for per-point blocks `b`.
    fn resistance_sum(&self, b: &[DMatrix<f64>], v: usize) -> DMatrix<f64> {
        let mut sum = DMatrix::zeros(self.dx, self.dx);
        for (a, &w) in self.data.adj[v].iter().enumerate() {
            let r = self.two.resistance(v, a);
            sum.zip_apply(&b[w], |s, x| *s += x * r);
        }
        sum
    }

    /// The q(x) update (§3.3): `S_v = [(Lam_x)_vv]^{-1}` and the joint mean solve of `K_x`.
    fn update_x(&self, q: &mut FactorisedPosterior, h: &LlLvmHyper) -> Result<()> {
        self.update_x_by(q, h, &self.mean_x).map(|_| ())
    }

    /// [`FactorisedProblem::update_x`] with the means solved by `mean_x`; returns
    /// `log |det K_x|` where `K_x` is factorised.
    fn update_x_by(
        &self,
        q: &mut FactorisedPosterior,
        h: &LlLvmHyper,
        mean_x: &MeanX,
    ) -> Result<Option<f64>> {
        let (n, dx, dy) = (self.n(), self.dx, self.dy() as f64);
        let g2 = 0.5 * h.gamma;
        let maps = map_columns(&q.mt, dx);
        // The diagonal blocks (Lam_x)_vv; S_v are their inverses.
        let lam: Vec<DMatrix<f64>> = (0..n)
            .into_par_iter()
            .map(|v| {
                interrupt::check()?;
                let mut lam = self.a_block(&maps, v);
                lam += (self.resistance_sum(&q.t, v) + &q.t[v] * self.deg[v]) * dy;
                lam *= g2;
                for r in 0..dx {
                    lam[(r, r)] += h.alpha + 2.0 * self.deg[v];
                }
                Ok(lam)
            })
            .collect::<Result<_>>()?;
        q.s = lam
            .par_iter()
            .map(|l| spd_inverse(l, "LL-LVM precision of q(x_v)"))
            .collect::<Result<_>>()?;
        // <b>_v = gamma sum_w (M_v + M_w)^T (y_v - y_w)
        let mut b = vec![0.0; n * dx];
        b.par_chunks_mut(dx).enumerate().for_each(|(v, bv)| {
            let u = self.map_sums(&maps, v);
            let yv = self.y_row(v);
            for (a, &w) in self.data.adj[v].iter().enumerate() {
                let yw = self.y_row(w);
                for (r, br) in bv.iter_mut().enumerate() {
                    let sum: f64 = u
                        .column(a, r)
                        .iter()
                        .zip(yv.iter().zip(yw))
                        .map(|(m, (p, q))| m * (p - q))
                        .sum();
                    *br += h.gamma * sum;
                }
            }
        });
        let mut log_abs_det_k = None;
        let m = match mean_x {
            MeanX::Direct(kx) => {
                let mut k = Entries::lower(kx);
                systems::k_x(
                    &mut k,
                    &self.data.adj,
                    &self.two.p,
                    &q.mt,
                    &q.t,
                    h.alpha,
                    h.gamma,
                )?;
                let factor = kx.factorise_lower(&k.into_lower(), "LL-LVM mean system of q(x)")?;
                log_abs_det_k = Some(factor.log_abs_det());
                let mut rhs = DMatrix::zeros(kx.dim(), 1);
                rhs.rows_mut(0, n * dx).copy_from_slice(&b);
                let rhs = factor.solve_abandonable(rhs)?;
                rhs.as_slice()[..n * dx].to_vec()
            }
            MeanX::Iterative(setup) => {
                let solver = iterative::LamX {
                    problem: self,
                    setup,
                    maps,
                    t: &q.t,
                    alpha: h.alpha,
                    gamma: h.gamma,
                };
                let mut m: Vec<f64> = (0..n * dx).map(|i| q.m[(i / dx, i % dx)]).collect();
                solver.solve(&lam, &b, &mut m)?;
                m
            }
        };
        q.m = DMatrix::from_fn(n, dx, |v, r| m[v * dx + r]);
        Ok(log_abs_det_k)
    }

    /// The q(C) update (§3.3): `T_v = [(Lam_C)_vv]^{-1}` and the joint mean solve with `dy`
    /// right-hand sides `gamma H^T`, by conjugate gradients on `Lam_C` where [`MapsCost`]
    /// chose them, else by factorising `K_C`. Returns `H^T` at the (unchanged) latent means.
    fn update_c(&self, q: &mut FactorisedPosterior, h: &LlLvmHyper) -> Result<DMatrix<f64>> {
        let setup = match &self.mean_x {
            MeanX::Iterative(setup) if self.maps_by_cg => Some(setup),
            _ => None,
        };
        self.update_c_by(q, h, setup).map(|(ht, _)| ht)
    }

    /// [`FactorisedProblem::update_c`] by conjugate gradients with `setup`, or by factorising
    /// `K_C` (`None`); returns `H^T` and, where `K_C` is factorised, `log |det K_C|`.
    fn update_c_by(
        &self,
        q: &mut FactorisedPosterior,
        h: &LlLvmHyper,
        setup: Option<&iterative::Setup>,
    ) -> Result<(DMatrix<f64>, Option<f64>)> {
        let (n, dx, dy) = (self.n(), self.dx, self.dy());
        let g2 = 0.5 * h.gamma;
        let lam: Vec<DMatrix<f64>> = (0..n)
            .into_par_iter()
            .map(|v| {
                interrupt::check()?;
                let mut lam = self.x_block(&q.m, v);
                lam += self.resistance_sum(&q.s, v) + &q.s[v] * self.deg[v];
                lam *= g2;
                for r in 0..dx {
                    lam[(r, r)] += self.epsilon + 2.0 * self.deg[v];
                }
                Ok(lam)
            })
            .collect::<Result<_>>()?;
        q.t = lam
            .par_iter()
            .map(|l| spd_inverse(l, "LL-LVM column precision of q(C_v)"))
            .collect::<Result<_>>()?;
        let ht = self.h_transposed(&q.m);
        let Some(setup) = setup else {
            let kc = self
                .kc
                .as_ref()
                .expect("K_C is analysed where it is factorised");
            let mut k = Entries::lower(kc);
            systems::k_c(
                &mut k,
                &self.data.adj,
                &self.two.p,
                &q.m,
                &q.s,
                self.epsilon,
                h.gamma,
            )?;
            let factor = kc.factorise_lower(&k.into_lower(), "LL-LVM mean system of q(C)")?;
            let log_abs_det_k = factor.log_abs_det();
            let mut rhs = DMatrix::zeros(kc.dim(), dy);
            rhs.rows_mut(0, n * dx).copy_from(&(&ht * h.gamma));
            let rhs = factor.solve_abandonable(rhs)?;
            q.mt = rhs.rows(0, n * dx).into_owned();
            return Ok((ht, Some(log_abs_det_k)));
        };
        let solver = iterative::LamC {
            problem: self,
            setup,
            m: &q.m,
            s: &q.s,
            epsilon: self.epsilon,
            gamma: h.gamma,
        };
        let b = map_columns(&(&ht * h.gamma), dx);
        let mut x = map_columns(&q.mt, dx);
        solver.solve(&lam, b.as_slice(), x.as_mut_slice())?;
        q.mt = x.transpose();
        Ok((ht, None))
    }

    /// `H^T` (n dx x dy): block v is `H_v^T = sum_w (m_w - m_v)(y_w - y_v)^T`.
    fn h_transposed(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        let (n, dx, dy) = (self.n(), self.dx, self.dy());
        // blocks[v][a dx + r] = (H_v^T)_{r a}.
        let blocks: Vec<Vec<f64>> = (0..n)
            .into_par_iter()
            .map(|v| {
                let mut b = vec![0.0; dx * dy];
                let mut dm = vec![0.0; dx];
                let yv = self.y_row(v);
                for &w in &self.data.adj[v] {
                    for (r, d) in dm.iter_mut().enumerate() {
                        *d = m[(w, r)] - m[(v, r)];
                    }
                    for ((ba, yw), yv) in b.chunks_exact_mut(dx).zip(self.y_row(w)).zip(yv) {
                        let dya = yw - yv;
                        for (o, d) in ba.iter_mut().zip(&dm) {
                            *o += d * dya;
                        }
                    }
                }
                b
            })
            .collect();
        DMatrix::from_fn(n * dx, dy, |i, a| blocks[i / dx][a * dx + i % dx])
    }

    /// Row v of the data, contiguous (a column of `yt`).
    fn y_row(&self, v: usize) -> &[f64] {
        let dy = self.dy();
        &self.yt.as_slice()[v * dy..(v + 1) * dy]
    }

    /// `Equad` and `sum_v Tr(M_v^T H_v)` of the current posterior (§3.1).
    #[cfg(test)]
    fn refresh_stats(&self, q: &mut FactorisedPosterior) {
        let ht = self.h_transposed(&q.m);
        self.refresh_stats_at(q, &ht)
            .expect("no interruption is requested in these tests");
    }

    /// `Equad` and `sum_v Tr(M_v^T H_v)` (§3.1), with `H^T` at the current latent means
    /// already formed (the q(C) update's).
    ///
    /// # Errors
    /// [`Error::Interrupted`] if a stop is requested (checked in its loops over the points).
    fn refresh_stats_at(&self, q: &mut FactorisedPosterior, ht: &DMatrix<f64>) -> Result<()> {
        let (n, dx, dy) = (self.n(), self.dx, self.dy());
        let maps = map_columns(&q.mt, dx);
        // ebar_v = sum_w (M_v + M_w)(m_v - m_w), the columns of a dy x n matrix, beside
        // each point's terms: T1, T2, T3's own and T3's edges (v, w > v).
        let mut ebar_t = DMatrix::zeros(dy, n);
        let local: Vec<[f64; 4]> = ebar_t
            .as_mut_slice()
            .par_chunks_mut(dy)
            .enumerate()
            .map(|(v, ebar_v)| {
                interrupt::check()?;
                let t1 = (&q.t[v] * self.x_block(&q.m, v)).trace();
                let t2 = (&q.s[v] * self.a_block(&maps, v)).trace();
                let t3 = self.deg[v] * trace_of_product(&q.t[v], &q.s[v]);
                let u = self.map_sums(&maps, v);
                let mut t3_edges = 0.0;
                for (a, &w) in self.data.adj[v].iter().enumerate() {
                    for r in 0..dx {
                        let dm = q.m[(v, r)] - q.m[(w, r)];
                        for (e, x) in ebar_v.iter_mut().zip(u.column(a, r)) {
                            *e += x * dm;
                        }
                    }
                    if v < w {
                        let r = self.two.resistance(v, a);
                        t3_edges += r
                            * (trace_of_product(&q.t[v], &q.s[w])
                                + trace_of_product(&q.t[w], &q.s[v]));
                    }
                }
                Ok([t1, t2, t3, t3_edges])
            })
            .collect::<Result<_>>()?;
        let [t1, t2, t3, t3_edges] = local.iter().fold([0.0; 4], |s, l| {
            [s[0] + l[0], s[1] + l[1], s[2] + l[2], s[3] + l[3]]
        });
        interrupt::check()?;
        let q0 = self.two.pinv_quadratic(&ebar_t);
        let dyf = dy as f64;
        q.stats.equad = q0 + dyf * t1 + t2 + dyf * (t3 + t3_edges);
        q.stats.tr_c_h = q.mt.dot(ht);
        Ok(())
    }

    /// `log det(alpha I + 2 L)`, the prior of x's normaliser (§3.2).
    fn log_det_prior_x(&self, alpha: f64) -> Result<f64> {
        let a = prior_x_matrix(&self.data.adj, alpha);
        Ok(self.prior_x.factorise(&a, "LL-LVM prior of x")?.log_det())
    }

    /// The root of `dx Tr((alpha I + 2 L)^{-1}) = sum_v (tr S_v + |m_v|^2)` (§3.6): the
    /// maximiser of the bound over alpha; the trace by selected inversion, bisection on
    /// log alpha.
    fn optimal_alpha(&self, tr_s: f64) -> Result<f64> {
        if !(tr_s > 0.0 && tr_s.is_finite()) {
            return Err(Error::numerical(
                "LL-LVM alpha update",
                format!("the second moment of q(x) is {tr_s}; the posterior has collapsed"),
            ));
        }
        let dx = self.dx as f64;
        let f = |a: f64| -> Result<f64> {
            let factor = self
                .prior_x
                .factorise(&prior_x_matrix(&self.data.adj, a), "LL-LVM prior of x")?;
            Ok(dx * factor.selected_inverse()?.diagonal().iter().sum::<f64>() - tr_s)
        };
        // The trace is at least dx / alpha (the constant vector) and at most n dx / alpha.
        let n = self.n() as f64;
        let (mut lo, mut hi) = ((dx / tr_s).ln(), (n * dx / tr_s).ln());
        while f(lo.exp())? < 0.0 {
            lo -= 1.0;
        }
        while f(hi.exp())? > 0.0 {
            hi += 1.0;
        }
        while hi - lo > 1e-12 {
            let mid = 0.5 * (lo + hi);
            if f(mid.exp())? > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok((0.5 * (lo + hi)).exp())
    }

    /// The bound a fit reports (the module docs' "The reported bound"): at the fitted `q`, the
    /// higher of the two bounds with one factor freed from the family (each only where its
    /// system's factor fits the memory limit), else the per-point bound itself. Its last
    /// term says which factor was freed.
    pub(super) fn reported_bound(
        &self,
        q: &FactorisedPosterior,
        h: &LlLvmHyper,
        params: &Checked<LlLvmParams>,
    ) -> Result<Evidence> {
        let freed_c = if self.kc_fits {
            Some(self.freed_c(q, h)?)
        } else {
            None
        };
        let freed_x = self.freed_x(q, h, params)?;
        Ok(match (freed_c, freed_x) {
            (Some(c), Some(x)) if x.value > c.value => x,
            (Some(c), _) => c,
            (None, Some(x)) => x,
            (None, None) => self.elbo(q, h)?,
        })
    }

    /// The bound at `q` with q(C) freed from the family: after a q(C) update, the full
    /// Gaussian `q(C) = MN(M, I_dy, Lam_C^{-1})` has the same means (the joint solve) and
    /// raises the bound by `KL(per-point || full) = (dy/2) [sum_v log|(Lam_C)_vv| -
    /// log|Lam_C|]`, with `(Lam_C)_vv = T_v^{-1}` and `log|Lam_C|` from `K_C`'s pivots: its
    /// lower blocks `-(2/gamma) L_g` and `-I_dx` contribute `(n - 1) log(2/gamma) +
    /// log|L_g|` to `log|det K_C|`.
    fn freed_c(&self, q: &FactorisedPosterior, h: &LlLvmHyper) -> Result<Evidence> {
        let mut q = q.clone();
        let (ht, log_abs_det_k) = self.update_c_by(&mut q, h, None)?;
        let log_abs_det_k = log_abs_det_k.expect("K_C is factorised");
        self.refresh_stats_at(&mut q, &ht)?;
        let n = self.n() as f64;
        let log_det_lam = log_abs_det_k - (n - 1.0) * (2.0 / h.gamma).ln() - self.two.log_det_lg;
        let log_det_blocks = -sum_log_det(&q.t, "LL-LVM covariance of q(C_v)")?;
        let gain = 0.5 * self.dy() as f64 * (log_det_blocks - log_det_lam);
        Ok(with_term(self.elbo(&q, h)?, FREED_C, gain))
    }

    /// The bound at `q` with q(x) freed from the family, as [`FactorisedProblem::freed_c`]:
    /// the gain is `(1/2) [sum_v log|(Lam_x)_vv| - log|Lam_x|]`, with `log|Lam_x|` from
    /// `K_x`'s pivots (its lower block `-(2/gamma) L_g (x) I_dy`). `K_x` is factorised once
    /// for it where conjugate gradients solve the means; `None` where its factor would hold
    /// more than [`FREE_X_FACTOR_RATIO`] times `K_C`'s values or not fit the memory limit.
    fn freed_x(
        &self,
        q: &FactorisedPosterior,
        h: &LlLvmHyper,
        params: &Checked<LlLvmParams>,
    ) -> Result<Option<Evidence>> {
        let (adj, dx, dy) = (&self.data.adj, self.dx, self.dy());
        let analysed;
        let mean_x = match &self.mean_x {
            MeanX::Direct(_) => &self.mean_x,
            MeanX::Iterative(_) => {
                // K_x's pattern: the 2-hop dx x dx blocks, Abar_g's dy x dx blocks and
                // L_g (x) I_dy, both triangles.
                let incident: usize = adj.iter().map(|a| a.len() + 1).sum();
                let entries = Sizes::lower_bound(adj, dx).pattern
                    + (2 * incident * dx * dy + incident * dy) as u64;
                let before = Sizes {
                    factors: entries,
                    pattern: entries,
                    shared: 0,
                };
                // Per point, K_x's blocks have dx + dy rows where K_C's have dx + 1: their
                // factors' sizes go as the squares, which decide before any analysis.
                // Without K_C's analysis (its factor would overflow 32-bit indices), K_x's,
                // with blocks at least as large, would too.
                let blocks = ((dx + dy) as f64 / (dx + 1) as f64).powi(2);
                let Some(kc) = &self.kc else {
                    return Ok(None);
                };
                if blocks > FREE_X_FACTOR_RATIO as f64 || !fits(params, &self.data, before)? {
                    return Ok(None);
                }
                let most = (FREE_X_FACTOR_RATIO * kc.factor_len()) as u64;
                let kx = analyse_k_x(adj, &self.two.p, dx, dy)?;
                if kx.factor_len() as u64 > most
                    || !fits(
                        params,
                        &self.data,
                        Sizes::analysed(
                            Some(&kx),
                            Some(kc),
                            false,
                            0,
                            self.two.lg.factor_nnz() as u64,
                        ),
                    )?
                {
                    return Ok(None);
                }
                analysed = MeanX::Direct(kx);
                &analysed
            }
        };
        let mut q = q.clone();
        let log_abs_det_k = self
            .update_x_by(&mut q, h, mean_x)?
            .expect("K_x is factorised");
        let ht = self.h_transposed(&q.m);
        self.refresh_stats_at(&mut q, &ht)?;
        let n = self.n() as f64;
        let dyf = dy as f64;
        let log_det_lam =
            log_abs_det_k - (n - 1.0) * dyf * (2.0 / h.gamma).ln() - dyf * self.two.log_det_lg;
        let log_det_blocks = -sum_log_det(&q.s, "LL-LVM covariance of q(x_v)")?;
        let gain = 0.5 * (log_det_blocks - log_det_lam);
        Ok(Some(with_term(self.elbo(&q, h)?, FREED_X, gain)))
    }

    /// The fitted model of the best run, reporting `evidence`
    /// ([`FactorisedProblem::reported_bound`]).
    pub(super) fn into_fitted(
        self,
        run: unfold_vem::Run<FactorisedPosterior, LlLvmHyper>,
        evidence: Evidence,
        restart_bounds: Vec<f64>,
        k: usize,
    ) -> LlLvm {
        let (n, dx) = (self.n(), self.dx);
        let q = &run.posterior;
        // Back in the caller's order: the caller's point i is at `position[i]`.
        let position = positions(&self.order);
        let blocks = |b: &[DMatrix<f64>]| -> Vec<DMatrix<f64>> {
            position.iter().map(|&a| b[a].clone()).collect()
        };
        // The maps' means in the coordinate-major layout: column `r n + i` is column r of C_i.
        let mu_c = DMatrix::from_fn(self.dy(), n * dx, |a, c| {
            q.mt[(position[c % n] * dx + c / n, a)]
        });
        LlLvm {
            coords: q.m.select_rows(&position),
            graph: self.data.source_graph,
            evidence,
            y: self.data.y.select_rows(&position),
            mean: self.data.mean,
            scale: self.data.scale,
            mu_c,
            sigma_x: Covariance::per_point(&blocks(&q.s)),
            sigma_c: Covariance::per_point(&blocks(&q.t)),
            hyper: run.hyper,
            epsilon: self.epsilon,
            k,
            convergence: super::convergence_of(&run),
            restart_bounds,
        }
    }
}

/// The sizes that the per-point family's memory is counted from: the values of the two
/// factors and of their lower triangles, the entries of the systems' patterns (both
/// triangles), and values held once however many restarts run (the 2-hop step's).
struct Sizes {
    factors: u64,
    pattern: u64,
    shared: u64,
}

impl Sizes {
    /// Before any analysis: the factors at least hold the patterns' lower triangles, whose
    /// point-to-point blocks sit on every pair at graph distance at most 2.
    fn lower_bound(adj: &[Vec<usize>], dx: usize) -> Sizes {
        let mut stamp = vec![usize::MAX; adj.len()];
        let mut pairs = 0u64;
        for (v, nb) in adj.iter().enumerate() {
            for w in std::iter::once(v).chain(nb.iter().copied()) {
                for u in std::iter::once(w).chain(adj[w].iter().copied()) {
                    if stamp[u] != v {
                        stamp[u] = v;
                        pairs += 1;
                    }
                }
            }
        }
        let pattern = 2 * pairs * (dx * dx) as u64;
        Sizes {
            factors: pattern,
            pattern,
            shared: 0,
        }
    }

    /// Once the systems are analysed (`kx` is `None` where q(x)'s means are solved by
    /// conjugate gradients, which keep a few vectors of n dx values; `kc` where its factor
    /// would overflow 32-bit indices), with `K_C`'s factor and values where `kc_factor`
    /// (else the vectors of conjugate gradients on `Lam_C`, [`MAPS_CG_VECTORS`] of n dx dy
    /// values, for n points) and `others` values of the other sparse factors.
    ///
    /// # Panics
    /// If `kc_factor` without `kc` (a programming error).
    fn analysed(
        kx: Option<&QuasiDefiniteSymbolic>,
        kc: Option<&QuasiDefiniteSymbolic>,
        kc_factor: bool,
        maps: usize,
        others: u64,
    ) -> Sizes {
        let (kx_factor, kx_lower) = kx.map_or((0, 0), |kx| (kx.factor_len(), kx.lower_len()));
        let kc_lower = kc.map_or(0, QuasiDefiniteSymbolic::lower_len);
        let kc_values = if kc_factor {
            let kc = kc.expect("K_C's factor is counted where K_C is analysed");
            (kc.factor_len() + kc_lower) as u64
        } else {
            MAPS_CG_VECTORS * maps as u64
        };
        Sizes {
            factors: (kx_factor + kx_lower) as u64 + kc_values + others,
            pattern: 2 * (kx_lower + kc_lower) as u64,
            shared: 0,
        }
    }
}

/// Refuses a fit whose peak memory exceeds the limit: before the systems are analysed
/// (from [`Sizes::lower_bound`]), once the padded `L_g` is (its factor and selected
/// inverse, held once), and again once the systems are (before any factorisation). The
/// peak holds, per restart running at once, the two factors' values and their lower
/// triangles; and once the patterns: their triplets at setup (24 bytes per entry of both
/// triangles), the CSR matrices made of them and the analyses' copies of their indices (16
/// and 8 bytes per entry), `P^v` (`sum_v d_v^2` values) and the per-point means and
/// covariances. The refusal scales it in proportion to the points
/// ([`unfold_core::Scaling::Proportional`]).
fn check_memory(params: &Checked<LlLvmParams>, data: &Prepared, sizes: Sizes) -> Result<()> {
    let (n, dx, dy) = (data.n() as u64, params.dim as u64, data.dy() as u64);
    let running = (params.restarts.max(1) as u64).min(rayon::current_num_threads().max(1) as u64);
    let two_hop: u64 = data.adj.iter().map(|a| (a.len() * a.len()) as u64).sum();
    // The covariances and means, and the maps' means again as columns during an update.
    let posterior = n * (2 * dx * dx + dx + 2 * dx * dy);
    // The data's rows as columns, shared.
    let data_columns = n * dy;
    let bytes = 8 * running * (sizes.factors + posterior)
        + 8 * sizes.shared
        + (24 + 16 + 8) * sizes.pattern
        + 8 * (two_hop + data_columns);
    unfold_core::MemoryLimit::resolve(params.memory_limit.as_ref())?.check_proportional(
        "LL-LVM (per-point family)",
        n as usize,
        bytes,
        if sizes.shared > 0 {
            format!(
                "the padded grounded Laplacian's factor and selected inverse, {} values",
                sizes.shared
            )
        } else {
            format!(
                "sparse factors of {} values and patterns of {} entries for dx = {dx}, \
                 dy = {dy}",
                sizes.factors, sizes.pattern
            )
        },
        "a subsample of the points, or a smaller k",
    )
}

/// Whether a fit of `sizes` passes [`check_memory`].
fn fits(params: &Checked<LlLvmParams>, data: &Prepared, sizes: Sizes) -> Result<bool> {
    match check_memory(params, data, sizes) {
        Err(Error::OverMemoryLimit(_)) => Ok(false),
        other => other.map(|()| true),
    }
}

/// The analysis of `K_x` on the graph `adj` (its pattern is fixed per graph), with `p` the
/// `P^v` or blocks of their shape.
fn analyse_k_x(
    adj: &[Vec<usize>],
    p: &[DMatrix<f64>],
    dx: usize,
    dy: usize,
) -> Result<QuasiDefiniteSymbolic> {
    let n = adj.len();
    let mut pattern = Entries::Triplets(Vec::new());
    let (zeros, ones) = (
        DMatrix::zeros(n * dx, dy),
        vec![DMatrix::identity(dx, dx); n],
    );
    systems::k_x(&mut pattern, adj, p, &zeros, &ones, 1.0, 1.0)?;
    let pattern = pattern.into_matrix(systems::k_x_size(n, dx, dy))?;
    QuasiDefiniteSymbolic::analyse(&pattern, n * dx, FillOrdering::Amd, "LL-LVM K_x")
}

/// The analysis of `K_C` on the graph `adj`, as [`analyse_k_x`]; `None` where its factor
/// would overflow 32-bit indices.
fn analyse_k_c(
    adj: &[Vec<usize>],
    p: &[DMatrix<f64>],
    dx: usize,
) -> Result<Option<QuasiDefiniteSymbolic>> {
    let n = adj.len();
    let mut pattern = Entries::Triplets(Vec::new());
    let (zeros, ones) = (DMatrix::zeros(n, dx), vec![DMatrix::identity(dx, dx); n]);
    systems::k_c(&mut pattern, adj, p, &zeros, &ones, 1.0, 1.0)?;
    let pattern = pattern.into_matrix(systems::k_c_size(n, dx))?;
    QuasiDefiniteSymbolic::try_analyse(&pattern, n * dx, FillOrdering::Amd, "LL-LVM K_C")
}

/// `alpha I + 2 L` of the 0/1 graph `adj`.
fn prior_x_matrix(adj: &[Vec<usize>], alpha: f64) -> CsrMatrix {
    let mut t = Vec::new();
    for (v, nb) in adj.iter().enumerate() {
        t.push((v, v, alpha + 2.0 * nb.len() as f64));
        for &w in nb {
            t.push((v, w, -2.0));
        }
    }
    CsrMatrix::from_triplets(adj.len(), adj.len(), &t)
}

/// `M_v + M_w` for the neighbours of one point v ([`FactorisedProblem::map_sums`]).
struct MapSums {
    /// `sums[(a dx + r) dy + k]` is entry `(k, r)` for the `a`-th neighbour.
    sums: Vec<f64>,
    dx: usize,
    dy: usize,
}

impl MapSums {
    /// Column r of `M_v + M_w` for the `a`-th neighbour w.
    fn column(&self, a: usize, r: usize) -> &[f64] {
        let at = (a * self.dx + r) * self.dy;
        &self.sums[at..at + self.dy]
    }
}

/// The maps' means as columns, `maps = mt^T` (dy x n dx): column `v dx + r` is column r
/// of `M_v`, contiguous.
fn map_columns(mt: &DMatrix<f64>, dx: usize) -> DMatrix<f64> {
    debug_assert_eq!(mt.nrows() % dx, 0);
    mt.transpose()
}

/// `tr(A B)` of two square blocks, without forming `A B`.
fn trace_of_product(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    let n = a.nrows();
    (0..n)
        .map(|i| (0..n).map(|k| a[(i, k)] * b[(k, i)]).sum::<f64>())
        .sum()
}

/// The inverse of a small symmetric positive definite block (symmetrised first).
fn spd_inverse(a: &DMatrix<f64>, context: &str) -> Result<DMatrix<f64>> {
    Cholesky::new(&symmetrised(a.clone()), context)?.inverse()
}

/// Where conjugate gradients solve q(x)'s means, q(x) is freed in the reported bound only
/// if `K_x`'s factor holds at most this many times `K_C`'s values: its one factorisation then
/// costs a few EM iterations. `K_x` grows with `(dx + dy)^2` and `K_C` with `(dx + 1)^2`, so
/// this admits dy up to 6 at dx = 2 (which is checked before `K_x` is analysed, as its
/// analysis alone took 16 s and 1.9 GB at n = 10^4 with dy = 50); at larger dy freeing q(C),
/// whose gain grows with dy, gave the higher bound on every data set measured
/// (`bench/results/lllvm_families.md`).
const FREE_X_FACTOR_RATIO: usize = 8;

/// The vectors of n dx dy values that conjugate gradients on `Lam_C` hold at once: the
/// solution, right-hand side, residual, preconditioned residual, direction and product,
/// and the copies that the update makes between the maps' two layouts.
const MAPS_CG_VECTORS: u64 = 10;

/// The products a q(C) solve by conjugate gradients is costed at: 12 to 23 were measured
/// on the roll, sheets lifted to dy = 10 and 50, and image patches at 10^4 points.
const MAPS_CG_PRODUCTS: f64 = 20.0;

/// How many times the floating-point operations of conjugate gradients (at
/// [`MAPS_CG_PRODUCTS`]) `K_C`'s factor and solve must cost before q(C)'s means are solved
/// by conjugate gradients. The factor's operations run as dense blocks and the products'
/// from memory: at 10^4 points a factor of 2.5 and 2.0 times the operations still took
/// 0.8 and 0.7 times as long on the roll and the dy = 10 sheet, and one of 7.6 times 1.4
/// times as long on the 5 x 5 image patches (`docs/architecture.md`). Checked again with
/// the scalar preconditioners on five data sets (`bench/results/lllvm_families.md`, "What
/// `mean_solve = auto` chooses"): the factor is kept on the dy = 50 sheet only, and `auto`
/// was no slower than conjugate gradients for both on any of them (one run, within the
/// run-to-run spread).
const MAPS_CG_RATIO: f64 = 4.0;

/// The estimated floating-point operations of q(C)'s two mean solves, to choose between
/// them once per graph: `K_C`'s factor (its analysis' count) with its `dy` solves, against
/// [`MAPS_CG_PRODUCTS`] products with `Lam_C`, each a solve with `L_g`'s factor on `dy`
/// columns, one with the preconditioner's (`n x n`) on `dx dy` columns, and the 2-hop sums
/// of `D_C`.
struct MapsCost {
    direct: f64,
    cg: f64,
}

impl MapsCost {
    fn new(
        adj: &[Vec<usize>],
        dx: usize,
        dy: usize,
        kc: &QuasiDefiniteSymbolic,
        two: &TwoHop,
        preconditioner: u64,
    ) -> MapsCost {
        let dy = dy as f64;
        let two_hop: usize = adj
            .iter()
            .map(|nb| nb.iter().map(|&w| adj[w].len()).sum::<usize>())
            .sum();
        let solves = (two.lg.factor_nnz() as u64 + dx as u64 * preconditioner) as f64;
        MapsCost {
            direct: kc.factor_flops() + 4.0 * kc.factor_len() as f64 * dy,
            cg: MAPS_CG_PRODUCTS * dy * (4.0 * solves + 2.0 * (dx * two_hop) as f64),
        }
    }

    fn by_cg(&self) -> bool {
        self.direct > MAPS_CG_RATIO * self.cg
    }
}

/// The term of the reported bound that freeing q(C) adds.
const FREED_C: &str = "gain_freeing_q_c";

/// The term of the reported bound that freeing q(x) adds.
const FREED_X: &str = "gain_freeing_q_x";

/// `evidence` with one more term.
fn with_term(evidence: Evidence, name: &str, value: f64) -> Evidence {
    let mut terms = evidence.terms;
    terms.push((name.into(), value));
    Evidence::from_terms(evidence.kind, terms)
}

/// `sum_v log det b_v` of small symmetric positive definite blocks.
fn sum_log_det(blocks: &[DMatrix<f64>], context: &str) -> Result<f64> {
    blocks.iter().map(|b| log_det(b, context)).sum()
}

/// `log det` of a small symmetric positive definite block.
fn log_det(a: &DMatrix<f64>, context: &str) -> Result<f64> {
    Ok(Cholesky::new(&symmetrised(a.clone()), context)?.log_det())
}

impl LatentVariableModel for FactorisedProblem {
    type Posterior = FactorisedPosterior;
    type Hyper = LlLvmHyper;

    /// The authors' start within the family (§3.7): `M_v` standard normal, `T_v = I`; or
    /// the spectral start, x from Laplacian eigenmaps with `S_v` the prior's
    /// `(alpha + 2 d_v)^{-1} I`, then q(C) from it. Both draw in the caller's order of the
    /// points.
    fn init(&self, rng: &mut Rng) -> Result<(FactorisedPosterior, LlLvmHyper)> {
        let (n, dx, dy) = (self.n(), self.dx, self.dy());
        let h = LlLvmHyper::initial(self.alpha, self.gamma0);
        match self.init {
            LlLvmInit::Random => {
                let drawn = DMatrix::from_fn(n * dx, dy, |_, _| StandardNormal.sample(rng));
                let rows: Vec<usize> = self
                    .order
                    .iter()
                    .flat_map(|&i| i * dx..(i + 1) * dx)
                    .collect();
                let mt = drawn.select_rows(&rows);
                let q = FactorisedPosterior {
                    m: DMatrix::zeros(n, dx),
                    s: vec![DMatrix::zeros(dx, dx); n],
                    mt,
                    t: vec![DMatrix::identity(dx, dx); n],
                    stats: Stats::default(),
                };
                Ok((q, h))
            }
            LlLvmInit::Spectral => {
                let m = super::spectral_latent_start(&self.data, &self.order, dx, rng)?;
                let s = self
                    .deg
                    .iter()
                    .map(|d| DMatrix::identity(dx, dx) / (h.alpha + 2.0 * d))
                    .collect();
                let mut q = FactorisedPosterior {
                    m,
                    s,
                    mt: DMatrix::zeros(n * dx, dy),
                    t: vec![DMatrix::identity(dx, dx); n],
                    stats: Stats::default(),
                };
                self.update_c(&mut q, &h)?;
                Ok((q, h))
            }
        }
    }

    /// q(x) from q(C), then q(C) from q(x), then the expectations the M-step reads.
    fn e_step(&self, q: &mut FactorisedPosterior, h: &LlLvmHyper) -> Result<()> {
        self.update_x(q, h)?;
        let ht = self.update_c(q, h)?;
        self.refresh_stats_at(q, &ht)
    }

    /// gamma in closed form (§3.6); alpha fixed or by its root find.
    fn m_step(&self, q: &FactorisedPosterior, h: &mut LlLvmHyper) -> Result<()> {
        h.gamma = self.data.optimal_gamma(q.stats.tr_c_h, q.stats.equad)?;
        if self.alpha == AlphaRule::Optimise {
            let tr_s = q.s.iter().map(|s| s.trace()).sum::<f64>() + q.m.norm_squared();
            h.alpha = self.optimal_alpha(tr_s)?;
        }
        Ok(())
    }

    /// The bound of §3.2 (the exact family's §3.5 at block-diagonal covariances). Its loops
    /// over the points check for Ctrl-C, as the E-step's do.
    fn elbo(&self, q: &FactorisedPosterior, h: &LlLvmHyper) -> Result<Evidence> {
        let (n, dx, dy) = (self.n() as f64, self.dx as f64, self.dy() as f64);
        let (eps, gamma, alpha) = (self.epsilon, h.gamma, h.alpha);
        let adj = &self.data.adj;
        let sl = n.ln() + self.two.log_det_lg;
        let ell = self
            .data
            .expected_log_likelihood(eps, gamma, sl, q.stats.tr_c_h, q.stats.equad);
        let (mut log_det_s, mut log_det_t, mut tr_s, mut tr_t) = (0.0, 0.0, 0.0, 0.0);
        for v in 0..adj.len() {
            if v % CHECK_EVERY == 0 {
                interrupt::check()?;
            }
            log_det_s += log_det(&q.s[v], "LL-LVM covariance of q(x_v)")?;
            log_det_t += log_det(&q.t[v], "LL-LVM covariance of q(C_v)")?;
            tr_s += (alpha + 2.0 * self.deg[v]) * q.s[v].trace();
            tr_t += (eps + 2.0 * self.deg[v]) * q.t[v].trace();
        }
        let (mut dm2, mut dc2) = (0.0, 0.0);
        let dxu = self.dx;
        for (v, nb) in adj.iter().enumerate() {
            if v % CHECK_EVERY == 0 {
                interrupt::check()?;
            }
            for &w in nb.iter().filter(|&&w| w > v) {
                dm2 += (q.m.row(v) - q.m.row(w)).norm_squared();
                dc2 += (q.mt.rows(v * dxu, dxu) - q.mt.rows(w * dxu, dxu)).norm_squared();
            }
        }
        let log_det_prior_x = match self.fixed_log_det_prior_x {
            Some(l) if self.alpha == AlphaRule::Fixed(alpha) => l,
            _ => self.log_det_prior_x(alpha)?,
        };
        let neg_kl_x = 0.5 * log_det_s + 0.5 * dx * log_det_prior_x
            - 0.5 * tr_s
            - 0.5 * (alpha * q.m.norm_squared() + 2.0 * dm2)
            + 0.5 * n * dx;
        let mut sum_m = DMatrix::zeros(dxu, self.dy());
        for v in 0..adj.len() {
            sum_m += q.mt.rows(v * dxu, dxu);
        }
        let neg_kl_c = 0.5 * dy * (dx * ((eps * n).ln() + (n - 1.0) * 2f64.ln() + sl) + log_det_t)
            - 0.5 * dy * tr_t
            - 0.5 * (eps * sum_m.norm_squared() + 2.0 * dc2)
            + 0.5 * n * dx * dy;
        Ok(super::bound(ell, neg_kl_x, neg_kl_c))
    }
}

#[cfg(test)]
mod tests;
