//! The expected quadratic forms of LL-LVM's E-steps (`specs/lllvm.md` §3.2–3.3) without the
//! (n dy)^2 covariance and without edge-pair loops.
//!
//! Both `<A>` (the x-update) and `<Gamma>` (the C-update) are `(gamma / 2) X` with
//!
//! ```text
//! X_ab = sum_{(i,j)} sum_{(p,q)} M_ip o(i,j)_a o(p,q)_b T(i,j,p,q)
//! o(i,j)_a = delta_ai + tau delta_aj,   T = K_ip + sigma K_iq + sigma K_jp + K_jq
//! ```
//!
//! summed over ordered edge pairs, with `M = L^+` and `K` the dx x dx blocks of a second
//! moment: for `<A>`, `K = <C^T C>`, `tau = -1`, `sigma = +1`; for `<Gamma>`,
//! `K = <x x^T>`, `tau = +1`, `sigma = -1`. Expanding the four outer terms gives, for each
//! coordinate pair (r, s) with `K = K^{rs}` (n x n), `d` the degrees and `G` the 0/1
//! adjacency:
//!
//! ```text
//! X = M o [d d^T o K + sigma D(KG) + sigma (GK)D + GKG]
//!   + tau  [D (M o K) G + sigma D K o (MG) + sigma (M o (GK)) G + (GK) o (MG)]
//!   + tau  [G (M o K) D + sigma G (M o (KG)) + sigma K o (GM) D + (KG) o (GM)]
//!   + G (M o K) G + sigma G (K o (MG)) + sigma ((GM) o K) G + K o (GMG)
//! ```
//!
//! (`o` is the entrywise product, `D = diag(d)`). Every product with `G` is sparse, so one
//! coordinate pair costs `O(n^2 k)` instead of the authors' `O(n^3)` dense products or the
//! `O((nk)^2)` edge-pair sum. `row_by_edge_sums` (tests only) evaluates the defining sum
//! directly; it is the reference of this module's and of the projection's tests.
//!
//! The sums are memory-bound: one coordinate block reads each n x n operand about k times.
//! [`Graph`] evaluates them in a bandwidth-reducing order of the points, in panels that stay
//! in cache and with [`LANES`] columns per vector (its docs); the result is the same to the
//! bit as the plain column-by-column evaluation in the points' own order.

use nalgebra::DMatrix;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Mutex;
use unfold_linalg::simd::Level;
use unfold_linalg::symmetrise;

/// Which expected quadratic form: the sign pattern `(tau, sigma)` above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `<A>` of the x-update: outer differences, inner sums of `<C^T C>`.
    A,
    /// `<Qhat L^+ Qhat^T>` of the C-update: outer sums, inner differences of `<x x^T>`.
    Gamma,
}

impl Form {
    pub(super) fn signs(self) -> (f64, f64) {
        match self {
            Form::A => (-1.0, 1.0),
            Form::Gamma => (1.0, -1.0),
        }
    }
}

/// A connected 0/1 graph with the pseudo-inverse of its Laplacian and the products that every
/// evaluation of [`Graph::form_into`] reuses.
///
/// The form is evaluated in a **locality order** of the points (reverse Cuthill–McKee,
/// [`locality_order`]): neighbours get nearby positions, so the columns that a column's
/// sparse products read (those of its neighbours) stay in cache, instead of being random
/// columns of n x n matrices much larger than the cache. Every sum runs over the same terms
/// in the same sequence as in the points' own order, so the form is the same to the bit
/// (test `locality_order_changes_no_bit`); only the memory traffic changes. The sums over
/// neighbour columns run in panels that stay in cache and the gathers within columns
/// [`LANES`] columns per vector ([`Graph::form_block`]).
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    /// Neighbours of each point, in the points' own order.
    pub adj: Vec<Vec<usize>>,
    pub deg: Vec<f64>,
    /// `order[a]` is the point at position a of the locality order.
    order: Vec<usize>,
    /// The position of each point in the locality order (the inverse of `order`).
    pos: Vec<usize>,
    /// The neighbours in the locality order.
    nb: Neighbours,
    deg_o: Vec<f64>,
    /// `M = L^+`, rows and columns in the locality order.
    pinv: DMatrix<f64>,
    /// `M G`.
    pinv_g: DMatrix<f64>,
    /// `G M = (M G)^T`.
    g_pinv: DMatrix<f64>,
    /// `G M G`.
    g_pinv_g: DMatrix<f64>,
    /// Buffers kept between evaluations: the forms' three n x n ones, and the q(C)
    /// precision and the inverses' scratch of the E-step (a fresh buffer costs a page fault
    /// per 4 KiB).
    pub pool: Pool,
}

/// Matrices kept for reuse, shared by the restarts that run at once: [`Pool::take`] hands
/// out a kept one of the wanted shape (its values are stale) or a new one, [`Pool::give`]
/// keeps one. A clone starts empty.
#[derive(Debug, Default)]
pub(crate) struct Pool(Mutex<Vec<DMatrix<f64>>>);

impl Clone for Pool {
    fn clone(&self) -> Pool {
        Pool::default()
    }
}

impl Pool {
    pub fn take(&self, rows: usize, cols: usize) -> DMatrix<f64> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match kept.iter().position(|m| m.shape() == (rows, cols)) {
            Some(i) => kept.swap_remove(i),
            None => DMatrix::zeros(rows, cols),
        }
    }

    pub fn give(&self, m: DMatrix<f64>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(m);
    }
}

impl Graph {
    pub fn new(adj: Vec<Vec<usize>>, pinv: DMatrix<f64>) -> Graph {
        let order = locality_order(&adj);
        Graph::with_order(adj, pinv, order)
    }

    /// The graph with a given order of evaluation (a permutation of the points).
    pub fn with_order(adj: Vec<Vec<usize>>, pinv: DMatrix<f64>, order: Vec<usize>) -> Graph {
        let pos = positions(&order);
        let deg = adj.iter().map(|a| a.len() as f64).collect();
        let adj_o: Vec<Vec<usize>> = order
            .iter()
            .map(|&i| adj[i].iter().map(|&j| pos[j]).collect())
            .collect();
        let deg_o = adj_o.iter().map(|a| a.len() as f64).collect();
        let pinv = permuted(&pinv, &order);
        let pinv_g = right_g(&adj_o, &pinv);
        let g_pinv = pinv_g.transpose();
        let g_pinv_g = left_g(&adj_o, &pinv_g);
        let nb = Neighbours::new(&adj_o);
        Graph {
            adj,
            deg,
            order,
            pos,
            nb,
            deg_o,
            pinv,
            pinv_g,
            g_pinv,
            g_pinv_g,
            pool: Pool::default(),
        }
    }

    pub fn n(&self) -> usize {
        self.adj.len()
    }

    /// `L^+` in the points' own order.
    pub fn pinv(&self) -> DMatrix<f64> {
        permuted(&self.pinv, &self.pos)
    }

    /// [`Graph::form_into`] a new matrix.
    #[cfg(test)]
    pub fn form(
        &self,
        means: &DMatrix<f64>,
        sigma: &DMatrix<f64>,
        kappa: f64,
        scale: f64,
        form: Form,
    ) -> DMatrix<f64> {
        let big = sigma.nrows();
        let mut x = DMatrix::zeros(big, big);
        self.form_into(means, sigma, kappa, scale, form, &mut x)
            .expect("no interruption is requested in these tests");
        x
    }

    /// Writes `scale X` for the second moment `K = means^T means + kappa sigma`
    /// ((n dx) x (n dx), coordinate-major: index `r n + a`; `means` is d x (n dx)) over
    /// `out`, which must be (n dx) x (n dx) (its old values are not read). K is never
    /// formed whole: each coordinate pair (r, s) forms its n x n block `K^{rs}` in the
    /// locality order, then `X^{rs}`, which goes to its place in `out` and, transposed, to
    /// that of `X^{sr}`. The result is exactly symmetric (the diagonal blocks are
    /// symmetrised). The process's interruption flag is checked between the passes of each
    /// block (a block is about a second of work at 3000 points at its first use).
    ///
    /// # Errors
    /// [`unfold_core::Error::Interrupted`] when the flag is set.
    pub fn form_into(
        &self,
        means: &DMatrix<f64>,
        sigma: &DMatrix<f64>,
        kappa: f64,
        scale: f64,
        form: Form,
        out: &mut DMatrix<f64>,
    ) -> unfold_core::Result<()> {
        let n = self.n();
        let big = sigma.nrows();
        let dx = big / n;
        assert_eq!(big, n * dx, "moment has the wrong size");
        assert_eq!(means.ncols(), big, "means have the wrong size");
        assert_eq!(out.shape(), (big, big), "output has the wrong size");
        // Three n x n buffers serve every block: `K^{rs}` (then `X^{rs}` transposed),
        // `K G` (then `X^{rs}`) and `(M o K) G` (then `right`).
        let mut k = self.pool.take(n, n);
        let mut x = self.pool.take(n, n);
        let mut right = self.pool.take(n, n);
        let mut blocks = || -> unfold_core::Result<()> {
            for r in 0..dx {
                for s in r..dx {
                    unfold_core::interrupt::check()?;
                    self.moment_block(means, sigma, kappa, (r, s), &mut k);
                    unfold_core::interrupt::check()?;
                    self.form_block(&k, form, &mut x, &mut right)?;
                    if r == s {
                        symmetrise(&mut x);
                    }
                    self.place(&x, scale, (r * n, s * n), out);
                    if r != s {
                        k.tr_copy_from(&x);
                        self.place(&k, scale, (s * n, r * n), out);
                    }
                }
            }
            Ok(())
        };
        let formed = blocks();
        for m in [k, x, right] {
            self.pool.give(m);
        }
        formed
    }

    /// `out[row0 + i, col0 + j] = scale z[pos_i, pos_j]`: an n x n block in the locality
    /// order, scaled and put back in the points' order, one column of `out` at a time.
    fn place(&self, z: &DMatrix<f64>, scale: f64, at: (usize, usize), out: &mut DMatrix<f64>) {
        let (row0, col0) = at;
        let n = self.n();
        let big = out.nrows();
        out.as_mut_slice()[col0 * big..(col0 + n) * big]
            .par_chunks_mut(big)
            .zip(self.pos.par_iter())
            .for_each(|(col, &pj)| {
                let dst = &mut col[row0..row0 + n];
                for (&i, &v) in self.order.iter().zip(column(z, pj)) {
                    dst[i] = v * scale;
                }
            });
    }

    /// The coordinate block `K^{rs} = means_r^T means_s + kappa sigma^{rs}` (n x n) of a
    /// second moment, rows and columns in the locality order, over `k` (spec pitfall 6:
    /// `<x x^T> = mu mu^T + Sigma_x`; pitfall 3: `<C^T C> = mu_C^T mu_C + dy Sigma_C`).
    fn moment_block(
        &self,
        means: &DMatrix<f64>,
        sigma: &DMatrix<f64>,
        kappa: f64,
        (r, s): (usize, usize),
        k: &mut DMatrix<f64>,
    ) {
        let n = self.n();
        let d = means.nrows();
        // The means of coordinates r and s, point by point in the locality order.
        let ordered = |r: usize| -> Vec<f64> {
            let mut m = Vec::with_capacity(n * d);
            for &i in &self.order {
                m.extend(means.column(r * n + i).iter());
            }
            m
        };
        let (mr, ms) = (ordered(r), ordered(s));
        let rows: Vec<usize> = self.order.iter().map(|&i| r * n + i).collect();
        k.as_mut_slice()
            .par_chunks_mut(n)
            .zip(self.order.par_iter())
            .enumerate()
            .for_each(|(b, (col, &j))| {
                let sv = column(sigma, s * n + j);
                let mv = &ms[b * d..(b + 1) * d];
                for (a, (out, &u)) in col.iter_mut().zip(&rows).enumerate() {
                    let mu = &mr[a * d..(a + 1) * d];
                    let dot: f64 = mu.iter().zip(mv).map(|(p, q)| p * q).sum();
                    *out = dot + kappa * sv[u];
                }
            });
    }

    /// One coordinate block `X^{rs}` from `K^{rs}` (module docs), all in the locality
    /// order, in three parallel passes over columns, returned in `kgx`:
    ///
    /// 1. `K G` into `kgx` and `(M o K) G` into `mkr`, summing columns at each column's
    ///    neighbours ([`Graph::sum_neighbour_columns`]);
    /// 2. [`LANES`] columns at a time, `left`, the products with G on the left (`G K`,
    ///    `G K G`, `G left`, which gather within the columns), `right` (over `mkr`'s
    ///    columns) and all of X but `right G` (over `kgx`'s columns) ([`form_columns`]);
    /// 3. `right G` added to `kgx`.
    fn form_block(
        &self,
        k: &DMatrix<f64>,
        form: Form,
        kgx: &mut DMatrix<f64>,
        mkr: &mut DMatrix<f64>,
    ) -> unfold_core::Result<()> {
        let n = self.n();
        let level = Level::widest();
        self.sum_neighbour_columns(
            kgx,
            Some(mkr),
            #[inline(always)]
            |q, rows, (s, t)| {
                let (kq, mq) = (&column(k, q)[rows.clone()], &column(&self.pinv, q)[rows]);
                for (((s, t), &kv), &mv) in s.iter_mut().zip(t.iter_mut()).zip(kq).zip(mq) {
                    *s += kv;
                    *t += mv * kv;
                }
            },
        );
        unfold_core::interrupt::check()?;
        kgx.as_mut_slice()
            .par_chunks_mut(n * LANES)
            .zip(mkr.as_mut_slice().par_chunks_mut(n * LANES))
            .enumerate()
            .for_each_init(
                || Lanes::new(n),
                |lanes, (c, (kgx, mkr))| {
                    let group = Group {
                        graph: self,
                        k,
                        form,
                        b0: c * LANES,
                    };
                    let mut out = GroupOut { kgx, mkr, lanes };
                    level.run_out(
                        &mut out,
                        #[inline(always)]
                        |out| form_columns(&group, out),
                    );
                },
            );
        unfold_core::interrupt::check()?;
        let right = &*mkr;
        self.sum_neighbour_columns(
            kgx,
            None,
            #[inline(always)]
            |q, rows, (s, _)| {
                for (o, v) in s.iter_mut().zip(&column(right, q)[rows]) {
                    *o += v;
                }
            },
        );
        Ok(())
    }

    /// For each column b of `out` (and of `out2`), calls `add(q, rows, (column b of out,
    /// column b of out2))` on a range of rows for each neighbour q of b in turn, in the
    /// sequence of `adj`; with `out2`, both columns are zeroed first (pass 1 of
    /// [`Graph::form_block`]), without it `out` keeps its values (pass 3).
    ///
    /// The columns are visited in chunks, and each chunk in panels of rows: the neighbours
    /// of a chunk's columns are nearby columns in the locality order, so the panels they
    /// read stay in the core's cache while the chunk is summed.
    fn sum_neighbour_columns<F>(
        &self,
        out: &mut DMatrix<f64>,
        out2: Option<&mut DMatrix<f64>>,
        add: F,
    ) where
        F: Fn(usize, Range<usize>, (&mut [f64], &mut [f64])) + Sync,
    {
        let n = self.n();
        let len = n * CHUNK;
        match out2 {
            Some(out2) => out
                .as_mut_slice()
                .par_chunks_mut(len)
                .zip(out2.as_mut_slice().par_chunks_mut(len))
                .enumerate()
                .for_each(|(c, (cols, cols2))| self.sum_chunk(c * CHUNK, cols, Some(cols2), &add)),
            None => out
                .as_mut_slice()
                .par_chunks_mut(len)
                .enumerate()
                .for_each(|(c, cols)| self.sum_chunk(c * CHUNK, cols, None, &add)),
        }
    }

    /// One chunk of [`Graph::sum_neighbour_columns`], columns `b0..` of `cols` (and
    /// `cols2`).
    fn sum_chunk<F>(&self, b0: usize, cols: &mut [f64], mut cols2: Option<&mut [f64]>, add: &F)
    where
        F: Fn(usize, Range<usize>, (&mut [f64], &mut [f64])) + Sync,
    {
        let n = self.n();
        let level = Level::widest();
        for a0 in (0..n).step_by(PANEL) {
            let rows = a0..(a0 + PANEL).min(n);
            for (bl, col) in cols.chunks_mut(n).enumerate() {
                let s = &mut col[rows.clone()];
                let t: &mut [f64] = match cols2.as_deref_mut() {
                    Some(c2) => &mut c2[bl * n..(bl + 1) * n][rows.clone()],
                    None => &mut [],
                };
                let zero = !t.is_empty();
                let nb = self.nb.of(b0 + bl);
                level.run_out(
                    &mut (s, t),
                    #[inline(always)]
                    |(s, t)| {
                        if zero {
                            s.fill(0.0);
                            t.fill(0.0);
                        }
                        for &q in nb {
                            add(q as usize, rows.clone(), (&mut **s, &mut **t));
                        }
                    },
                );
            }
        }
    }
}

/// Columns per parallel task and rows per panel of [`Graph::sum_neighbour_columns`]: the
/// panels of a chunk's neighbour columns (a band a few hundred columns wide on a kNN graph
/// of a 2-D manifold in the locality order) then take well under 1 MB.
const CHUNK: usize = 64;
const PANEL: usize = 128;

/// The neighbours of each position of the locality order in compressed rows, each list in
/// the sequence of `adj`.
#[derive(Clone, Debug)]
struct Neighbours {
    ptr: Vec<usize>,
    idx: Vec<u32>,
}

impl Neighbours {
    fn new(adj: &[Vec<usize>]) -> Neighbours {
        let mut ptr = Vec::with_capacity(adj.len() + 1);
        ptr.push(0);
        let mut idx = Vec::new();
        for nb in adj {
            idx.extend(nb.iter().map(|&j| j as u32));
            ptr.push(idx.len());
        }
        Neighbours { ptr, idx }
    }

    #[inline(always)]
    fn of(&self, a: usize) -> &[u32] {
        &self.idx[self.ptr[a]..self.ptr[a + 1]]
    }
}

/// Columns of a block handled together by [`form_columns`], one per vector lane.
const LANES: usize = 8;

/// A lane for each of [`LANES`] columns at each position: `[a][l]`.
type Lanes8 = Vec<[f64; LANES]>;

/// What [`form_columns`] reads: columns `b0..b0 + LANES` of the block's factors.
struct Group<'a> {
    graph: &'a Graph,
    k: &'a DMatrix<f64>,
    form: Form,
    b0: usize,
}

/// Per-thread buffers of [`form_columns`], columns interleaved lane by lane: the inputs
/// `K`, `K G`, `(M o K) G`, `M`, `M G`, `G M`, `G M G`, and `left`, `G K`, `G left`,
/// `G K G`.
struct Lanes {
    k: Lanes8,
    kg: Lanes8,
    mkg: Lanes8,
    m: Lanes8,
    mg: Lanes8,
    gm: Lanes8,
    gmg: Lanes8,
    left: Lanes8,
    gk: Lanes8,
    gl: Lanes8,
    gkg: Lanes8,
}

impl Lanes {
    fn new(n: usize) -> Lanes {
        let z = || vec![[0.0; LANES]; n];
        Lanes {
            k: z(),
            kg: z(),
            mkg: z(),
            m: z(),
            mg: z(),
            gm: z(),
            gmg: z(),
            left: z(),
            gk: z(),
            gl: z(),
            gkg: z(),
        }
    }
}

/// What [`form_columns`] reads and writes: columns `b0..` of `K G` (overwritten with X but
/// `right G`) and of `(M o K) G` (overwritten with `right`), n x (at most [`LANES`]).
struct GroupOut<'a> {
    kgx: &'a mut [f64],
    mkr: &'a mut [f64],
    lanes: &'a mut Lanes,
}

/// Copies the columns `cols` (n each, at most [`LANES`]) into lanes; missing lanes repeat
/// the first column.
#[inline(always)]
fn interleave(cols: &[f64], n: usize, out: &mut [[f64; LANES]]) {
    let w = cols.len() / n;
    for l in 0..LANES {
        let c = if l < w { l } else { 0 };
        for (o, &v) in out.iter_mut().zip(&cols[c * n..(c + 1) * n]) {
            o[l] = v;
        }
    }
}

/// Columns `b0..b0 + LANES` of `right` and of `X - right G` (module docs), one column per
/// vector lane: the entrywise terms are vector operations across the lanes, and the
/// products with G on the left (`G K`, `G K G`, `G left`) add rows of lanes (one vector
/// each) at each position's neighbours. Every entry's sums have the terms and the sequence
/// of the module docs' expansion, as column by column.
#[inline(always)]
fn form_columns(c: &Group, out: &mut GroupOut) {
    let (tau, sigma) = c.form.signs();
    let g = c.graph;
    let n = g.n();
    let b0 = c.b0;
    let GroupOut { kgx, mkr, lanes } = out;
    let w = kgx.len() / n;
    let cols = b0 * n..(b0 + w) * n;
    let Lanes {
        k,
        kg,
        mkg,
        m,
        mg,
        gm,
        gmg,
        left,
        gk,
        gl,
        gkg,
    } = lanes;
    interleave(&c.k.as_slice()[cols.clone()], n, k);
    interleave(kgx, n, kg);
    interleave(mkr, n, mkg);
    interleave(&g.pinv.as_slice()[cols.clone()], n, m);
    interleave(&g.pinv_g.as_slice()[cols.clone()], n, mg);
    interleave(&g.g_pinv.as_slice()[cols.clone()], n, gm);
    interleave(&g.g_pinv_g.as_slice()[cols.clone()], n, gmg);
    let d = &g.deg_o[..n];
    let mut db = [0.0; LANES];
    for (l, v) in db.iter_mut().enumerate() {
        *v = d[b0 + if l < w { l } else { 0 }];
    }
    let (k, kg, mkg, m, mg) = (&k[..n], &kg[..n], &mkg[..n], &m[..n], &mg[..n]);
    let (gm, gmg, left) = (&gm[..n], &gmg[..n], &mut left[..n]);
    let (gk, gl, gkg) = (&mut gk[..n], &mut gl[..n], &mut gkg[..n]);
    // The terms multiplied by G on the left.
    for a in 0..n {
        for l in 0..LANES {
            let (mab, kab) = (m[a][l], k[a][l]);
            let mk_ab = mab * kab;
            left[a][l] = tau * db[l] * mk_ab
                + tau * sigma * mab * kg[a][l]
                + sigma * kab * mg[a][l]
                + mkg[a][l];
        }
    }
    // G K, G left and G K G: sums over the neighbours from the same start as `Iterator::sum`.
    let start: f64 = std::iter::empty::<f64>().sum();
    let left = &*left;
    for a in 0..n {
        let (mut s_k, mut s_l, mut s_kg) = ([start; LANES], [start; LANES], [start; LANES]);
        for &j in g.nb.of(a) {
            let j = j as usize;
            let (zk, zl, zkg) = (&k[j], &left[j], &kg[j]);
            for l in 0..LANES {
                s_k[l] += zk[l];
                s_l[l] += zl[l];
                s_kg[l] += zkg[l];
            }
        }
        gk[a] = s_k;
        gl[a] = s_l;
        gkg[a] = s_kg;
    }
    for a in 0..n {
        let da = d[a];
        let (mut rc, mut xc) = ([0.0; LANES], [0.0; LANES]);
        for l in 0..LANES {
            let (mab, kab) = (m[a][l], k[a][l]);
            let mk_ab = mab * kab;
            let (kg_ab, gk_ab) = (kg[a][l], gk[a][l]);
            let (mgb, gmb) = (mg[a][l], gm[a][l]);
            // The terms multiplied by G on the right.
            rc[l] = tau * da * mk_ab + tau * sigma * mab * gk_ab + sigma * gmb * kab;
            xc[l] = gl[a][l]
                + mab * (da * db[l] * kab + sigma * da * kg_ab + sigma * db[l] * gk_ab + gkg[a][l])
                + tau * sigma * da * kab * mgb
                + tau * gk_ab * mgb
                + tau * sigma * db[l] * kab * gmb
                + tau * kg_ab * gmb
                + kab * gmg[a][l];
        }
        for l in 0..w {
            mkr[l * n + a] = rc[l];
            kgx[l * n + a] = xc[l];
        }
    }
}

/// `z[p_a, p_b]` for every (a, b): the square matrix z with rows and columns permuted.
fn permuted(z: &DMatrix<f64>, p: &[usize]) -> DMatrix<f64> {
    let n = p.len();
    let mut out = DMatrix::zeros(n, n);
    out.as_mut_slice()
        .par_chunks_mut(n)
        .zip(p.par_iter())
        .for_each(|(col, &c)| {
            let zc = column(z, c);
            for (o, &r) in col.iter_mut().zip(p) {
                *o = zc[r];
            }
        });
    out
}

/// A reverse Cuthill–McKee order of the points: breadth-first from a vertex of least
/// degree in each connected part, each vertex's unvisited neighbours by increasing degree,
/// then reversed. On a kNN graph of a low-dimensional manifold it keeps every point's
/// neighbours within a narrow band of positions.
pub(crate) fn locality_order(adj: &[Vec<usize>]) -> Vec<usize> {
    let n = adj.len();
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut by_degree: Vec<usize> = (0..n).collect();
    by_degree.sort_by_key(|&i| (adj[i].len(), i));
    for &start in &by_degree {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut head = order.len();
        order.push(start);
        while head < order.len() {
            let v = order[head];
            head += 1;
            let mut next: Vec<usize> = adj[v].iter().copied().filter(|&j| !seen[j]).collect();
            next.sort_by_key(|&j| (adj[j].len(), j));
            next.dedup();
            for j in next {
                seen[j] = true;
                order.push(j);
            }
        }
    }
    order.reverse();
    order
}

/// The inverse of an order of the points: `positions(order)[order[a]] = a`.
pub(crate) fn positions(order: &[usize]) -> Vec<usize> {
    let mut position = vec![0; order.len()];
    for (a, &i) in order.iter().enumerate() {
        position[i] = a;
    }
    position
}

/// Column b of a matrix as a slice.
#[inline(always)]
pub(crate) fn column(z: &DMatrix<f64>, b: usize) -> &[f64] {
    let n = z.nrows();
    &z.as_slice()[b * n..(b + 1) * n]
}

/// `Z G` for the 0/1 adjacency lists `adj`: column b is the sum of Z's columns at b's
/// neighbours.
pub(crate) fn right_g(adj: &[Vec<usize>], z: &DMatrix<f64>) -> DMatrix<f64> {
    let n = z.nrows();
    let mut out = DMatrix::zeros(n, adj.len());
    out.as_mut_slice()
        .par_chunks_mut(n)
        .zip(adj.par_iter())
        .for_each(|(col, nb)| {
            for &q in nb {
                for (o, v) in col.iter_mut().zip(z.column(q).iter()) {
                    *o += v;
                }
            }
        });
    out
}

/// `G Z` for the 0/1 adjacency lists `adj`: entry (a, b) sums Z's column b over a's
/// neighbours.
pub(crate) fn left_g(adj: &[Vec<usize>], z: &DMatrix<f64>) -> DMatrix<f64> {
    let n = adj.len();
    let mut out = DMatrix::zeros(n, z.ncols());
    out.as_mut_slice()
        .par_chunks_mut(n)
        .enumerate()
        .for_each(|(b, col)| {
            let zc = z.column(b);
            for (a, o) in col.iter_mut().enumerate() {
                *o = adj[a].iter().map(|&j| zc[j]).sum();
            }
        });
    out
}

/// Row block `a` (dx x (n dx), coordinate-major columns) of `X` by the defining sum over
/// ordered edge pairs (the tests' reference). `m(i, p)` gives `M_ip` for the first
/// endpoints `i` of edges at `a`; `k(u, v, r, s)` gives entry (r, s) of the block `K_uv`.
/// Cost `O(k_a * n_edges * dx^2)`.
#[cfg(test)]
pub(crate) fn row_by_edge_sums(
    adj: &[Vec<usize>],
    a: usize,
    dx: usize,
    form: Form,
    m: impl Fn(usize, usize) -> f64,
    k: impl Fn(usize, usize, usize, usize) -> f64,
) -> DMatrix<f64> {
    let (tau, sigma) = form.signs();
    let n = adj.len();
    let mut row = DMatrix::zeros(dx, n * dx);
    // Ordered edges (i, j) with o(i,j)_a != 0: (a, j) with weight 1 and (j, a) with tau.
    let outer: Vec<(usize, usize, f64)> = adj[a]
        .iter()
        .flat_map(|&j| [(a, j, 1.0), (j, a, tau)])
        .collect();
    for &(i, j, oa) in &outer {
        for (p, nbp) in adj.iter().enumerate() {
            let mip = m(i, p);
            if mip == 0.0 {
                continue;
            }
            for &q in nbp {
                for (b, ob) in [(p, 1.0), (q, tau)] {
                    let c = oa * ob * mip;
                    for r in 0..dx {
                        for s in 0..dx {
                            let t = k(i, p, r, s)
                                + sigma * k(i, q, r, s)
                                + sigma * k(j, p, r, s)
                                + k(j, q, r, s);
                            row[(r, s * n + b)] += c * t;
                        }
                    }
                }
            }
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A small connected graph with degrees 1 to 4 and a cycle.
    fn graph() -> Vec<Vec<usize>> {
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 0),
            (2, 4),
            (4, 5),
            (1, 4),
            (5, 6),
        ];
        let mut adj = vec![Vec::new(); 7];
        for (i, j) in edges {
            adj[i].push(j);
            adj[j].push(i);
        }
        adj
    }

    fn random(n: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        DMatrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0))
    }

    #[test]
    fn sparse_form_equals_the_edge_pair_sum() {
        let adj = graph();
        let n = adj.len();
        let dx = 2;
        // Any symmetric M and any symmetric K with non-symmetric off-diagonal coordinate
        // blocks exercise every term.
        let m = random(n, 1);
        let m = &m + m.transpose();
        let k = random(n * dx, 2);
        let k = &k + k.transpose();
        let g = Graph::new(adj.clone(), m.clone());
        for form in [Form::A, Form::Gamma] {
            let x = g.form(&DMatrix::zeros(0, n * dx), &k, 1.0, 1.0, form);
            for a in 0..n {
                let row = row_by_edge_sums(
                    &adj,
                    a,
                    dx,
                    form,
                    |i, p| m[(i, p)],
                    |u, v, r, s| k[(r * n + u, s * n + v)],
                );
                for r in 0..dx {
                    for col in 0..n * dx {
                        let want = row[(r, col)];
                        let got = x[(r * n + a, col)];
                        assert!(
                            (want - got).abs() < 1e-12 * (1.0 + want.abs()),
                            "{form:?} row {a} coord {r} col {col}: {got} vs {want}"
                        );
                    }
                }
            }
            assert!((&x - x.transpose()).amax() < 1e-12);
        }
    }

    /// The locality order, the panels and the lanes change no bit of the form: against the
    /// points' own order (which the column-by-column code of the first release evaluated
    /// the same way) on a Swiss roll's kNN graph, for both forms, with a number of points
    /// that leaves a partial group of lanes and a partial chunk of columns.
    #[test]
    fn locality_order_changes_no_bit() {
        let n = 301;
        let y = unfold_data::synthetic::swiss_roll(n, 0.0, 3)
            .unwrap()
            .points;
        let (_, g) = unfold_graph::GraphSpec::knn(7)
            .build(
                &y,
                unfold_graph::Weighting::Binary,
                "test",
                &unfold_core::Silent,
            )
            .unwrap();
        let adj: Vec<Vec<usize>> = (0..n).map(|i| g.neighbours(i).0.to_vec()).collect();
        let m = random(n, 5);
        let m = &m + m.transpose();
        let (dx, dy) = (2, 3);
        let k = random(n * dx, 6);
        let k = &k + k.transpose();
        let means = random(n * dx, 7).rows(0, dy).into_owned();
        let order = locality_order(&adj);
        assert_ne!(order, (0..n).collect::<Vec<_>>());
        let local = Graph::new(adj.clone(), m.clone());
        let own = Graph::with_order(adj, m.clone(), (0..n).collect());
        assert_eq!(local.pinv(), m);
        for form in [Form::A, Form::Gamma] {
            let a = local.form(&means, &k, 3.0, 0.7, form);
            let b = own.form(&means, &k, 3.0, 0.7, form);
            assert!(a
                .iter()
                .zip(b.iter())
                .all(|(u, v)| u.to_bits() == v.to_bits()));
        }
        // The order is a permutation, and it narrows the band of the adjacency.
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
        let mut pos = vec![0; n];
        for (a, &i) in order.iter().enumerate() {
            pos[i] = a;
        }
        let band = |p: &dyn Fn(usize) -> usize| {
            (0..n)
                .flat_map(|i| g.neighbours(i).0.iter().map(move |&j| (i, j)))
                .map(|(i, j)| p(i).abs_diff(p(j)))
                .max()
                .unwrap()
        };
        assert!(band(&|i| pos[i]) * 3 < band(&|i| i));
    }

    #[test]
    fn sparse_products_match_dense_ones() {
        let adj = graph();
        let n = adj.len();
        let mut gd = DMatrix::zeros(n, n);
        for (i, nb) in adj.iter().enumerate() {
            for &j in nb {
                gd[(i, j)] = 1.0;
            }
        }
        let z = random(n, 3);
        assert!((right_g(&adj, &z) - &z * &gd).amax() < 1e-14);
        assert!((left_g(&adj, &z) - &gd * &z).amax() < 1e-14);
    }
}
