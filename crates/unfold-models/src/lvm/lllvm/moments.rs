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

use nalgebra::DMatrix;
use rayon::prelude::*;
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
/// evaluation of [`Graph::form`] reuses.
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub adj: Vec<Vec<usize>>,
    pub deg: Vec<f64>,
    /// `M = L^+`.
    pub pinv: DMatrix<f64>,
    /// `M G`.
    pub pinv_g: DMatrix<f64>,
    /// `G M = (M G)^T`.
    pub g_pinv: DMatrix<f64>,
    /// `G M G`.
    pub g_pinv_g: DMatrix<f64>,
}

impl Graph {
    pub fn new(adj: Vec<Vec<usize>>, pinv: DMatrix<f64>) -> Graph {
        let deg = adj.iter().map(|a| a.len() as f64).collect();
        let pinv_g = right_g(&adj, &pinv);
        let g_pinv = pinv_g.transpose();
        let g_pinv_g = left_g(&adj, &pinv_g);
        Graph {
            adj,
            deg,
            pinv,
            pinv_g,
            g_pinv,
            g_pinv_g,
        }
    }

    pub fn n(&self) -> usize {
        self.adj.len()
    }

    /// `scale X` for the second moment `K = means^T means + kappa sigma` ((n dx) x (n dx),
    /// coordinate-major: index `r n + a`; `means` is d x (n dx)). K is never formed whole:
    /// each coordinate pair (r, s) forms its n x n block `K^{rs}`, then `X^{rs}`. The result
    /// is exactly symmetric (the diagonal blocks are symmetrised) and in the same layout.
    pub fn form(
        &self,
        means: &DMatrix<f64>,
        sigma: &DMatrix<f64>,
        kappa: f64,
        scale: f64,
        form: Form,
    ) -> DMatrix<f64> {
        let n = self.n();
        let big = sigma.nrows();
        let dx = big / n;
        assert_eq!(big, n * dx, "moment has the wrong size");
        assert_eq!(means.ncols(), big, "means have the wrong size");
        let mut x = DMatrix::zeros(big, big);
        for r in 0..dx {
            for s in r..dx {
                let krs = moment_block(means, sigma, kappa, n, r, s);
                let mut b = self.form_block(&krs, form);
                if r == s {
                    symmetrise(&mut b);
                }
                b *= scale;
                x.view_mut((r * n, s * n), (n, n)).copy_from(&b);
                if r != s {
                    x.view_mut((s * n, r * n), (n, n)).tr_copy_from(&b);
                }
            }
        }
        x
    }

    /// One coordinate block `X^{rs}` from `K^{rs}` (module docs), in two parallel passes over
    /// columns. Column b of every product with G on the left (`G K`, `G K G`, `G left`)
    /// needs only column b of its factor, so the first pass forms column b of `K G`,
    /// `(M o K) G`, `right` and `left`, then all of `X` but `right G`; the second adds
    /// `right G`. No other n x n intermediate is formed.
    fn form_block(&self, k: &DMatrix<f64>, form: Form) -> DMatrix<f64> {
        let (tau, sigma) = form.signs();
        let n = self.n();
        let adj = &self.adj;
        let d = &self.deg;
        // `(G z)_a` for a column z.
        let gather = |z: &[f64], a: usize| -> f64 { adj[a].iter().map(|&j| z[j]).sum() };
        let mut right = DMatrix::zeros(n, n);
        let mut x = DMatrix::zeros(n, n);
        right
            .as_mut_slice()
            .par_chunks_mut(n)
            .zip(x.as_mut_slice().par_chunks_mut(n))
            .enumerate()
            .for_each(|(b, (rc, xc))| {
                let (kb, mb) = (column(k, b), column(&self.pinv, b));
                let (mgb, gmb, gmgb) = (
                    column(&self.pinv_g, b),
                    column(&self.g_pinv, b),
                    column(&self.g_pinv_g, b),
                );
                // Column b of K G and of (M o K) G.
                let mut kg = vec![0.0; n];
                let mut mkg = vec![0.0; n];
                for &q in &adj[b] {
                    let (kq, mq) = (column(k, q), column(&self.pinv, q));
                    for a in 0..n {
                        kg[a] += kq[a];
                        mkg[a] += mq[a] * kq[a];
                    }
                }
                let gk: Vec<f64> = (0..n).map(|a| gather(kb, a)).collect();
                // Terms multiplied by G on the right (`rc`) and on the left (`left`).
                let left: Vec<f64> = (0..n)
                    .map(|a| {
                        let (mab, kab) = (mb[a], kb[a]);
                        let mk_ab = mab * kab;
                        rc[a] =
                            tau * d[a] * mk_ab + tau * sigma * mab * gk[a] + sigma * gmb[a] * kab;
                        tau * d[b] * mk_ab
                            + tau * sigma * mab * kg[a]
                            + sigma * kab * mgb[a]
                            + mkg[a]
                    })
                    .collect();
                for (a, xab) in xc.iter_mut().enumerate() {
                    let (mab, kab) = (mb[a], kb[a]);
                    let (kg_ab, gk_ab) = (kg[a], gk[a]);
                    *xab = gather(&left, a)
                        + mab
                            * (d[a] * d[b] * kab
                                + sigma * d[a] * kg_ab
                                + sigma * d[b] * gk_ab
                                + gather(&kg, a))
                        + tau * sigma * d[a] * kab * mgb[a]
                        + tau * gk_ab * mgb[a]
                        + tau * sigma * d[b] * kab * gmb[a]
                        + tau * kg_ab * gmb[a]
                        + kab * gmgb[a];
                }
            });
        // right G: the sum of right's columns at b's neighbours.
        x.as_mut_slice()
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(b, xc)| {
                for &q in &adj[b] {
                    for (o, v) in xc.iter_mut().zip(column(&right, q)) {
                        *o += v;
                    }
                }
            });
        x
    }
}

/// Column b of a matrix as a slice.
fn column(z: &DMatrix<f64>, b: usize) -> &[f64] {
    let n = z.nrows();
    &z.as_slice()[b * n..(b + 1) * n]
}

/// The coordinate block `K^{rs} = means_r^T means_s + kappa sigma^{rs}` (n x n) of a second
/// moment in the coordinate-major layout (spec pitfall 6: `<x x^T> = mu mu^T + Sigma_x`;
/// pitfall 3: `<C^T C> = mu_C^T mu_C + dy Sigma_C`).
fn moment_block(
    means: &DMatrix<f64>,
    sigma: &DMatrix<f64>,
    kappa: f64,
    n: usize,
    r: usize,
    s: usize,
) -> DMatrix<f64> {
    let mut k = DMatrix::zeros(n, n);
    k.as_mut_slice()
        .par_chunks_mut(n)
        .enumerate()
        .for_each(|(b, col)| {
            let (u0, v) = (r * n, s * n + b);
            for (a, out) in col.iter_mut().enumerate() {
                let dot: f64 = means
                    .column(u0 + a)
                    .iter()
                    .zip(means.column(v).iter())
                    .map(|(p, q)| p * q)
                    .sum();
                *out = dot + kappa * sigma[(u0 + a, v)];
            }
        });
    k
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
