//! What the per-point family needs of `L^+`, once per graph (`specs/lllvm_scale.md` §3.1,
//! §3.5): the matrices
//!
//! ```text
//! P^v[w, w'] = (e_v - e_w)^T L^+ (e_v - e_w'),   w, w' in N(v)
//! ```
//!
//! whose diagonals are the effective resistances `R_vw` of the edges, and `log det L_g`.
//!
//! `P^v` only meets zero-sum vectors, so the grounded inverse `Z` (the inverse of the
//! Laplacian `L_g` without the root's row and column, padded with zeros at the root) serves
//! for `L^+`: `P^v[w, w'] = Z_vv - Z_vw' - Z_wv + Z_ww'`. These read `Z` on every pair at
//! graph distance at most 2, the pattern of `(I + G)^2`. A selected inversion gives `Z` on
//! the pattern of `L_g`'s Cholesky factor, which need not hold every such pair, so the
//! symbolic analysis runs on `L_g` padded with explicit zeros on the 2-hop pattern: the
//! factor is numerically `L_g`'s, and its selected inverse holds every entry needed.

use nalgebra::DMatrix;
use unfold_core::{Error, Result};
use unfold_linalg::{CsrMatrix, SparseCholesky, SparseSymbolic};

/// The graph's part of the per-point family: `P^v` for every point, the factor of `L_g`
/// and `log det L_g`.
#[derive(Debug)]
pub(crate) struct TwoHop {
    /// `p[v]` is `P^v` (d_v x d_v), its rows in the order of the neighbour list of `v`.
    pub p: Vec<DMatrix<f64>>,
    /// The Cholesky factor of `L_g` (rows and columns of the points but the root).
    pub lg: SparseCholesky,
    /// `log det L_g`; `sum_{k >= 2} log lambda_k = log n + log det L_g` (matrix-tree theorem).
    pub log_det_lg: f64,
}

/// The symbolic analysis of the padded `L_g` (module docs), before the factorisation and
/// selected inversion of [`TwoHopAnalysis::compute`].
#[derive(Debug)]
pub(crate) struct TwoHopAnalysis {
    padded: CsrMatrix,
    symbolic: SparseSymbolic,
}

const CONTEXT: &str = "LL-LVM grounded graph Laplacian";

impl TwoHopAnalysis {
    /// The values [`TwoHopAnalysis::compute`] holds at its peak: the padded factor, its
    /// selected inverse and the largest supernode's work blocks
    /// ([`SparseSymbolic::predicted_bytes`]), and `L_g`'s factor, whose pattern the padded
    /// one contains.
    pub fn values(&self) -> u64 {
        self.symbolic.predicted_bytes() / 8 + self.symbolic.factor_len() as u64
    }

    /// `P^v` for every point of the connected graph `adj` (the one analysed), by a selected
    /// inversion of the grounded Laplacian on its 2-hop-padded pattern (module docs).
    pub fn compute(self, adj: &[Vec<usize>]) -> Result<TwoHop> {
        let root = grounded_root(adj.len());
        let factor = self.symbolic.factorise(&self.padded, CONTEXT)?;
        drop(self.padded);
        let z = factor.selected_inverse()?;
        let zget = |i: usize, j: usize| -> f64 {
            if i == root || j == root {
                0.0
            } else {
                z.get(i, j)
                    .expect("the padded pattern holds every pair at distance 2")
            }
        };
        let p = adj
            .iter()
            .enumerate()
            .map(|(v, nb)| {
                unfold_core::interrupt::check()?;
                let zvv = zget(v, v);
                let zv: Vec<f64> = nb.iter().map(|&w| zget(v, w)).collect();
                Ok(DMatrix::from_fn(nb.len(), nb.len(), |a, b| {
                    zvv - zv[b] - zv[a] + zget(nb[a], nb[b])
                }))
            })
            .collect::<Result<_>>()?;
        Ok(TwoHop {
            p,
            log_det_lg: factor.log_det(),
            lg: SparseCholesky::new(&grounded_laplacian(adj, root, false), CONTEXT)?,
        })
    }
}

impl TwoHop {
    /// The symbolic analysis of the padded `L_g` of the graph `adj`: refuses a graph whose
    /// factor would overflow before any numerical work.
    pub fn analyse(adj: &[Vec<usize>]) -> Result<TwoHopAnalysis> {
        let n = adj.len();
        if n < 2 {
            return Err(Error::invalid(
                "data",
                format!("LL-LVM needs at least 2 points, got {n}"),
            ));
        }
        let padded = grounded_laplacian(adj, grounded_root(n), true);
        let symbolic = SparseSymbolic::analyse(&padded, CONTEXT)?;
        Ok(TwoHopAnalysis { padded, symbolic })
    }

    /// `P^v` for every point of the connected graph `adj`: [`TwoHop::analyse`], then
    /// [`TwoHopAnalysis::compute`].
    #[cfg(test)]
    pub fn new(adj: &[Vec<usize>]) -> Result<TwoHop> {
        Self::analyse(adj)?.compute(adj)
    }

    /// The effective resistance of the edge from `v` to its `a`-th neighbour.
    pub fn resistance(&self, v: usize, a: usize) -> f64 {
        self.p[v][(a, a)]
    }

    /// `sum_d e_d^T L_g^{-1} e_d` over the rows `e_d` of `et` (dy x n, each summing to zero):
    /// `Tr(e^T L^+ e)` by one block solve with `L_g`'s factor, on the columns of the points
    /// but the root (the last), which are the rows of the grounded right-hand sides.
    pub fn pinv_quadratic(&self, et: &DMatrix<f64>) -> f64 {
        debug_assert!(et
            .row_iter()
            .all(|r| r.sum().abs() <= 1e-8 * (1.0 + r.amax()) * r.len() as f64));
        let dy = et.nrows();
        let rhs = &et.as_slice()[..grounded_root(et.ncols()) * dy];
        let mut z = rhs.to_vec();
        self.lg.solve_rows_in_place(&mut z, dy);
        unfold_linalg::dot(&z, rhs)
    }
}

/// The grounded point of n points: the last one.
pub(super) fn grounded_root(n: usize) -> usize {
    n - 1
}

/// The Laplacian of `adj` without the row and column of `root` (indices above `root` move
/// down by one; `root` is the last point, so none do), with explicit zeros on every other
/// pair at graph distance 2 when `padded`.
pub(in crate::lvm::lllvm) fn grounded_laplacian(
    adj: &[Vec<usize>],
    root: usize,
    padded: bool,
) -> CsrMatrix {
    let m = adj.len() - 1;
    let mut t = Vec::new();
    for (v, nb) in adj.iter().enumerate() {
        if v != root {
            t.push((v, v, nb.len() as f64));
        }
        for &w in nb {
            if v != root && w != root {
                t.push((v, w, -1.0));
            }
        }
        if padded {
            for &w in nb {
                for &u in nb {
                    if w != u && w != root && u != root {
                        t.push((w, u, 0.0));
                    }
                }
            }
        }
    }
    CsrMatrix::from_triplets(m, m, &t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lvm::lllvm::{laplacian, laplacian_pinv};

    /// A connected graph with cycles and a pendant point.
    fn graph() -> Vec<Vec<usize>> {
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 0),
            (2, 4),
            (4, 5),
            (5, 6),
            (6, 4),
            (6, 7),
            (1, 5),
            (7, 8),
        ];
        let mut adj = vec![Vec::new(); 9];
        for (i, j) in edges {
            adj[i].push(j);
            adj[j].push(i);
        }
        for nb in &mut adj {
            nb.sort_unstable();
        }
        adj
    }

    #[test]
    fn two_hop_blocks_equal_those_of_the_dense_pseudo_inverse() {
        let adj = graph();
        let n = adj.len();
        let two = TwoHop::new(&adj).unwrap();
        let lap = laplacian(&adj);
        let pinv = laplacian_pinv(&lap).unwrap();
        let mut worst: f64 = 0.0;
        for (v, nb) in adj.iter().enumerate() {
            for (a, &w) in nb.iter().enumerate() {
                for (b, &u) in nb.iter().enumerate() {
                    let want = pinv[(v, v)] - pinv[(v, u)] - pinv[(w, v)] + pinv[(w, u)];
                    worst = worst.max((two.p[v][(a, b)] - want).abs());
                }
            }
            // sum_{w, w'} P^v = d_v (spec §2).
            let sum: f64 = two.p[v].sum();
            assert!(
                (sum - nb.len() as f64).abs() < 1e-12,
                "sum of P^{v} is {sum}"
            );
        }
        assert!(worst < 1e-12, "P^v differs from the dense one by {worst}");
        // The matrix-tree theorem: log n + log det L_g is the sum of the log eigenvalues.
        let eig = lap.symmetric_eigenvalues();
        let mut sorted: Vec<f64> = eig.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let want: f64 = sorted[1..].iter().map(|x| x.ln()).sum();
        assert!(((n as f64).ln() + two.log_det_lg - want).abs() < 1e-10);
        // Tr(e^T L^+ e) for zero-sum columns.
        let mut e = DMatrix::from_fn(n, 2, |i, j| ((i * 7 + j * 3) % 5) as f64 - 1.0);
        for mut c in e.column_iter_mut() {
            let mean = c.mean();
            c.add_scalar_mut(-mean);
        }
        let want = (e.transpose() * &pinv * &e).trace();
        let got = two.pinv_quadratic(&e.transpose());
        assert!((got - want).abs() < 1e-10 * want.abs().max(1.0));
    }

    #[test]
    fn the_two_hop_steps_count_covers_what_it_holds() {
        // The memory check counts the padded factor, its selected inverse, the largest
        // supernode's work blocks and `L_g`'s factor: at least the values those hold.
        let ring: Vec<Vec<usize>> = (0..60)
            .map(|i| {
                let mut nb: Vec<usize> = [1, 2, 7]
                    .iter()
                    .flat_map(|&d| [(i + d) % 60, (i + 60 - d) % 60])
                    .collect();
                nb.sort_unstable();
                nb
            })
            .collect();
        for adj in [graph(), ring] {
            let analysis = TwoHop::analyse(&adj).unwrap();
            let (counted, padded) = (analysis.values(), analysis.symbolic.factor_len() as u64);
            let two = analysis.compute(&adj).unwrap();
            // L_g's factor is counted at the padded one's size, which contains its pattern.
            assert!(two.lg.factor_nnz() as u64 <= padded);
            let held = 2 * padded + two.lg.factor_nnz() as u64;
            assert!(counted >= held, "{counted} values counted, {held} held");
            assert!(counted < 2 * held, "{counted} values counted, {held} held");
        }
    }
}
