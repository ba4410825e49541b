//! The two mean solves of the per-point family as sparse symmetric quasi-definite systems
//! (`specs/lllvm_scale.md` §3.4), which never form `L^+`:
//!
//! ```text
//! K_x = [ P_x      Abar_g^T             ]     P_x = alpha I + 2 L (x) I_dx + (gamma/2) D_x
//!       [ Abar_g   -(2/gamma) L_g (x) I ]
//!
//! K_C = [ P_C           Qbar_g          sqrt(eps) J ]     P_C = 2 L (x) I_dx + (gamma/2) D_C
//!       [ Qbar_g^T      -(2/gamma) L_g  0           ]
//!       [ sqrt(eps) J^T 0               -I_dx       ]
//! ```
//!
//! Eliminating the lower blocks gives back the precisions `Lam_x` and `Lam_C` of the exact
//! family. With `c_w = sum_w' P^v[w, w']`, the 2-hop parts are
//!
//! ```text
//! D_x = dy sum_v [ d_v e_v e_v^T - sum_w c_w (e_v e_w^T + e_w e_v^T) + sum_ww' P^v[w,w'] e_w e_w'^T ] (x) T_v
//! D_C =    sum_v [ d_v e_v e_v^T + sum_w c_w (e_v e_w^T + e_w e_v^T) + sum_ww' P^v[w,w'] e_w e_w'^T ] (x) S_v
//! ```
//!
//! (the signs of `e_v - e_w` and `e_v + e_w`). `Abar` has the blocks
//! `Abar_vv = sum_w (M_v + M_w)`, `Abar_vw = -(M_v + M_w)`; `Qbar` the blocks
//! `Qbar_vv = sum_w (m_v - m_w)`, `Qbar_vw = m_w - m_v`; the subscript `g` drops the root's
//! rows of `Abar` and column of `Qbar` (they sum to zero over the points, which makes the
//! grounding exact).
//!
//! Unknowns, in order: for `K_x` the means `m_v` (point-major, `v dx + r`) and then `z`
//! (`n dx + p dy + a` for the points `p` but the root); for `K_C` the rows of `M^T`
//! (`v dx + r`), then one unknown per point but the root, then `dx` for the `J` block. Every
//! assembly emits the same entries (explicit zeros included), so the pattern is fixed per
//! graph: the assembly is collected into triplets once, for the pattern that the symbolic
//! analysis reads, and on every iteration adds its values straight into the lower
//! triangle's slots of that analysis ([`Entries`]).

use super::two_hop::grounded_root;
use super::CHECK_EVERY;
use nalgebra::DMatrix;
use unfold_core::Result;
use unfold_linalg::{CsrMatrix, QuasiDefiniteSymbolic};

/// Where an assembly's entries (both triangles) go.
pub(crate) enum Entries<'a> {
    /// Collected as `(row, col, value)` triplets: the pattern, once per graph.
    Triplets(Vec<(usize, usize, f64)>),
    /// Added into the lower triangle's values on the analysed pattern (the entries above
    /// the diagonal are their mirrors and are skipped).
    Lower {
        analysis: &'a QuasiDefiniteSymbolic,
        values: Vec<f64>,
    },
}

/// Triplets from which sorting them into a matrix runs through
/// [`unfold_core::interrupt::abandonable`]: 2^20 random triplets sorted in 0.05 s (one
/// run), too short to be worth a thread of their own.
const ABANDON_SORT_FROM: usize = 1 << 20;

impl<'a> Entries<'a> {
    /// An empty sink for the lower triangle of a matrix on `analysis`.
    pub fn lower(analysis: &'a QuasiDefiniteSymbolic) -> Entries<'a> {
        Entries::Lower {
            analysis,
            values: vec![0.0; analysis.lower_len()],
        }
    }

    /// The collected matrix (triplets) of size `size`. Sorting the triplets of `K_C`'s
    /// pattern, whose two-hop blocks repeat entries, takes seconds at 30,000 points, so
    /// from [`ABANDON_SORT_FROM`] triplets it runs through
    /// [`unfold_core::interrupt::abandonable`], which takes the triplets without a copy.
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] on a stop requested before the matrix is built.
    pub fn into_matrix(self, size: usize) -> unfold_core::Result<CsrMatrix> {
        match self {
            Entries::Triplets(t) if t.len() < ABANDON_SORT_FROM => {
                Ok(CsrMatrix::from_triplets(size, size, &t))
            }
            Entries::Triplets(t) => unfold_core::interrupt::abandonable(move || {
                CsrMatrix::from_triplets(size, size, &t)
            }),
            Entries::Lower { .. } => unreachable!("the lower triangle is not a CSR matrix"),
        }
    }

    /// The lower triangle's values.
    pub fn into_lower(self) -> Vec<f64> {
        match self {
            Entries::Lower { values, .. } => values,
            Entries::Triplets(_) => unreachable!("triplets are not on an analysed pattern"),
        }
    }

    fn push(&mut self, i: usize, j: usize, v: f64) {
        match self {
            Entries::Triplets(t) => t.push((i, j, v)),
            Entries::Lower { analysis, values } => {
                if i >= j {
                    let slot = analysis
                        .lower_slot(i, j)
                        .expect("every entry of the assembly is on the analysed pattern");
                    values[slot] += v;
                }
            }
        }
    }

    /// Adds `value(i, j)` at `(row0 + i, col0 + j)` for a dense `rows x cols` block. On an
    /// analysed pattern, the block's part on and below the diagonal is added column by
    /// column: its rows in one column are consecutive slots (the whole block is on the
    /// pattern), so one search per column finds them.
    fn dense(
        &mut self,
        row0: usize,
        col0: usize,
        rows: usize,
        cols: usize,
        value: impl Fn(usize, usize) -> f64,
    ) {
        match self {
            Entries::Triplets(t) => {
                for j in 0..cols {
                    for i in 0..rows {
                        t.push((row0 + i, col0 + j, value(i, j)));
                    }
                }
            }
            Entries::Lower { analysis, values } => {
                for j in 0..cols {
                    let c = col0 + j;
                    let first = c.saturating_sub(row0);
                    if first >= rows {
                        continue;
                    }
                    let slot = analysis
                        .lower_slot(row0 + first, c)
                        .expect("every entry of the assembly is on the analysed pattern");
                    for i in first..rows {
                        values[slot + i - first] += value(i, j);
                    }
                }
            }
        }
    }

    /// Adds `scale * block` at `(row0, col0)`.
    pub fn block(&mut self, row0: usize, col0: usize, block: &DMatrix<f64>, scale: f64) {
        let (r, c) = block.shape();
        self.dense(row0, col0, r, c, |i, j| scale * block[(i, j)]);
    }

    /// Adds `scale * block` at `(row0, col0)` and its transpose at `(col0, row0)`.
    fn pair(&mut self, row0: usize, col0: usize, block: &DMatrix<f64>, scale: f64) {
        let (r, c) = block.shape();
        self.dense(row0, col0, r, c, |i, j| scale * block[(i, j)]);
        self.dense(col0, row0, c, r, |i, j| scale * block[(j, i)]);
    }

    /// Adds `value I_size` at `(row0, col0)`.
    pub fn identity(&mut self, row0: usize, col0: usize, size: usize, value: f64) {
        for i in 0..size {
            self.push(row0 + i, col0 + i, value);
        }
    }
}

/// The point-to-point 2-hop part shared by `D_x` and `D_C`: for every point v, with
/// `p[v] = P^v`, `sign` is -1 for `D_x` (coefficients `e_v - e_w`) and +1 for `D_C`,
/// `block[v]` is `T_v` or `S_v`, all scaled by `scale`.
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested (checked every
/// [`CHECK_EVERY`] points: at 10^5 points this part of `K_C` takes about 2 s).
fn two_hop_blocks(
    out: &mut Entries,
    adj: &[Vec<usize>],
    p: &[DMatrix<f64>],
    blocks: &[DMatrix<f64>],
    dx: usize,
    sign: f64,
    scale: f64,
) -> Result<()> {
    for (v, nb) in adj.iter().enumerate() {
        if v % CHECK_EVERY == 0 {
            unfold_core::interrupt::check()?;
        }
        let p = &p[v];
        let b = &blocks[v];
        out.block(v * dx, v * dx, b, scale * nb.len() as f64);
        for (a, &w) in nb.iter().enumerate() {
            let c: f64 = p.row(a).sum();
            out.pair(v * dx, w * dx, b, sign * scale * c);
            for (bi, &u) in nb.iter().enumerate() {
                out.block(w * dx, u * dx, b, scale * p[(a, bi)]);
            }
        }
    }
    Ok(())
}

/// `2 L (x) I_dx + diag * I`, the prior part of `P_x` (`diag = alpha`) and `P_C` (0).
pub(crate) fn prior_blocks(out: &mut Entries, adj: &[Vec<usize>], dx: usize, diag: f64) {
    for (v, nb) in adj.iter().enumerate() {
        out.identity(v * dx, v * dx, dx, diag + 2.0 * nb.len() as f64);
        for &w in nb {
            out.identity(v * dx, w * dx, dx, -2.0);
        }
    }
}

/// `-(2 / gamma) L_g (x) I_size` at offset `at` (the root, the last point, dropped).
fn grounded_blocks(
    out: &mut Entries,
    adj: &[Vec<usize>],
    root: usize,
    at: usize,
    size: usize,
    gamma: f64,
) {
    let c = 2.0 / gamma;
    for (p, nb) in adj.iter().enumerate() {
        if p == root {
            continue;
        }
        out.identity(at + p * size, at + p * size, size, -c * nb.len() as f64);
        for &w in nb {
            if w != root {
                out.identity(at + p * size, at + w * size, size, c);
            }
        }
    }
}

/// Blocks of the shape of every `P^v` (d_v x d_v ones): what the systems' patterns are
/// analysed from before `P^v` is computed, so that a graph whose factors would not fit is
/// refused before the selected inversion runs.
pub(crate) fn stand_in_p(adj: &[Vec<usize>]) -> Vec<DMatrix<f64>> {
    adj.iter()
        .map(|nb| DMatrix::from_element(nb.len(), nb.len(), 1.0))
        .collect()
}

/// The size of `K_x` for n points.
pub(crate) fn k_x_size(n: usize, dx: usize, dy: usize) -> usize {
    n * dx + (n - 1) * dy
}

/// The size of `K_C` for n points.
pub(crate) fn k_c_size(n: usize, dx: usize) -> usize {
    n * dx + (n - 1) + dx
}

/// `K_x` into `out` for the maps' means `mt` (n dx x dy, block v is `M_v^T`) and
/// covariances `t`, with `p[v] = P^v` ([`super::two_hop::TwoHop::p`], or blocks of its
/// shape for the pattern alone: [`stand_in_p`]).
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested during the assembly.
pub(crate) fn k_x(
    out: &mut Entries,
    adj: &[Vec<usize>],
    p: &[DMatrix<f64>],
    mt: &DMatrix<f64>,
    t: &[DMatrix<f64>],
    alpha: f64,
    gamma: f64,
) -> Result<()> {
    let n = adj.len();
    let dy = mt.ncols();
    let dx = mt.nrows() / n;
    prior_blocks(out, adj, dx, alpha);
    two_hop_blocks(out, adj, p, t, dx, -1.0, 0.5 * gamma * dy as f64)?;
    let root = grounded_root(n);
    // Abar_g and its transpose: row block p (dy) of the root-less points, column block q (dx).
    let at = n * dx;
    for (p, nb) in adj.iter().enumerate() {
        if p == root {
            continue;
        }
        let mut diag = DMatrix::zeros(dy, dx);
        for &w in nb {
            let u = (mt.rows(p * dx, dx) + mt.rows(w * dx, dx)).transpose();
            out.pair(at + p * dy, w * dx, &u, -1.0);
            diag += u;
        }
        out.pair(at + p * dy, p * dx, &diag, 1.0);
    }
    grounded_blocks(out, adj, root, at, dy, gamma);
    Ok(())
}

/// `K_C` into `out` for the latent means `m` (n x dx) and covariances `s`, with the
/// prior's `eps` and `p` as for [`k_x`].
///
/// # Errors
/// [`unfold_core::Error::Interrupted`] when a stop is requested during the assembly.
pub(crate) fn k_c(
    out: &mut Entries,
    adj: &[Vec<usize>],
    p: &[DMatrix<f64>],
    m: &DMatrix<f64>,
    s: &[DMatrix<f64>],
    epsilon: f64,
    gamma: f64,
) -> Result<()> {
    let (n, dx) = m.shape();
    prior_blocks(out, adj, dx, 0.0);
    two_hop_blocks(out, adj, p, s, dx, 1.0, 0.5 * gamma)?;
    let root = grounded_root(n);
    // Qbar_g and its transpose: column q of the root-less points.
    let at = n * dx;
    for (q, nb) in adj.iter().enumerate() {
        if q == root {
            continue;
        }
        let mut diag = DMatrix::zeros(dx, 1);
        for &w in nb {
            let d = DMatrix::from_fn(dx, 1, |r, _| m[(q, r)] - m[(w, r)]);
            out.pair(w * dx, at + q, &d, 1.0);
            diag += d;
        }
        out.pair(q * dx, at + q, &diag, 1.0);
    }
    grounded_blocks(out, adj, root, at, 1, gamma);
    let j0 = at + n - 1;
    let root_eps = epsilon.sqrt();
    for v in 0..n {
        for r in 0..dx {
            out.push(v * dx + r, j0 + r, root_eps);
            out.push(j0 + r, v * dx + r, root_eps);
        }
    }
    out.identity(j0, j0, dx, -1.0);
    Ok(())
}
