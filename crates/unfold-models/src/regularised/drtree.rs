//! Dimensionality reduction via learning a tree, DRTree (Li Wang; spec
//! `spl_drtree_ddrtree.md` §5.4, eq. 29).
//!
//! On centred data `Y` (N x D), DRTree minimises over an orthonormal `W` (D x d), latent
//! points `Z` (N x d) and a spanning tree `S` over the points (Laplacian `L`)
//!
//! ```text
//! f = ||Y - Z W^T||_F^2 + lambda Tr(Z^T L Z)
//! ```
//!
//! (`lambda Tr(Z^T L Z) = (lambda/2) sum_{i,j} s_ij ||z_i - z_j||^2` over ordered pairs, the
//! convention of Proposition 5; spec P10). It alternates two exact minimisations:
//!
//! 1. `S` = minimum spanning tree of the `z_i` under squared distances (28);
//! 2. with `P = I + lambda L`: `Z = P^{-1} Y W` and `W` = top-d eigenvectors of
//!    `Y^T P^{-1} Y` (the minimiser over `Z` is `P^{-1} Y W`, after which
//!    `f = Tr(Y^T Y) - Tr(W^T Y^T P^{-1} Y W)`). `P` is a tree Laplacian plus the identity,
//!    factorised by a sparse Cholesky.
//!
//! With `lambda = 0` the second step is PCA, which is the paper's remark that PCA is a
//! special case of (29). `f` cannot increase; the fit checks it after every iteration and
//! stops when its relative change falls below `tol`. The tree is over all N points: the
//! Euclidean minimum spanning tree of the `z_i` (the same tree as under squared distances),
//! found by Borůvka on a kd-tree without the N x N distance matrix, so memory and time per
//! iteration grow about as N log N.

use crate::method::{Checked, Declared, Interval, Rule};
use crate::regularised::ddrtree::{top_eigenvectors, tree_energy};
use crate::regularised::{alternating_convergence, LAMBDA_HELP};
use crate::traits::check_fit_input;
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Convergence, Error, Evidence, EvidenceKind, Observer, Result, Silent, Stop};
use unfold_graph::{euclidean_mst, NeighbourGraph};
use unfold_linalg::gemm::tr_mul;
use unfold_linalg::{symmetrised, CsrMatrix, SparseCholesky};

crate::params! {
    /// Settings of [`DrTree`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct DrTreeParams {
        /// Latent dimension `d`.
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// Tree regularisation `lambda >= 0` (`0` gives PCA).
        pub lambda: f64 = 1.0 => Rule::within(Interval::NON_NEGATIVE, LAMBDA_HELP),
        /// Maximum number of iterations.
        pub max_iter: usize = 100,
        /// Relative-change tolerance of the stopping rule.
        pub tol: f64 = 1e-8,
    }
}

impl DrTreeParams {
    /// Latent dimension `dim`, regularisation `lambda`, at most 100 iterations, `tol = 1e-8`.
    pub fn new(dim: usize, lambda: f64) -> Self {
        DrTreeParams {
            dim,
            lambda,
            ..DrTreeParams::default()
        }
    }

    /// Fits DRTree to the rows of `y`.
    ///
    /// # Errors
    /// Non-finite data, fewer than two points, `dim` not below `min(N, D)`, `lambda < 0`,
    /// `tol < 0`, `max_iter = 0`, or an objective that increases beyond round-off.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<DrTree> {
        self.clone().check()?.fit(y)
    }
}

impl Checked<DrTreeParams> {
    /// [`DrTreeParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<DrTree> {
        self.fit_observed(y, &Silent)
    }

    /// [`Checked::fit`] reporting the objective of every iteration to `observer`, which may
    /// stop the fit ([`Error::Interrupted`]).
    pub fn fit_observed(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<DrTree> {
        check_fit_input(y, self.dim, "DRTree")?;
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return Err(Error::invalid(
                "tol",
                format!("must be finite and >= 0, got {}", self.tol),
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        let (n, p) = y.shape();
        let mean = DVector::from_fn(p, |j, _| y.column(j).mean());
        let yc = DMatrix::from_fn(n, p, |i, j| y[(i, j)] - mean[j]);
        let mut w = top_eigenvectors(&symmetrised(tr_mul(&yc, &yc)), self.dim)?;
        let mut z = &yc * &w;
        let mut history: Vec<f64> = Vec::new();
        let mut terms: Vec<(String, f64)> = Vec::new();
        let mut edges = Vec::new();
        let mut stop = Stop::MaxIter;
        for _ in 0..self.max_iter {
            edges = point_tree(&z)?;
            unfold_core::interrupt::check()?;
            let pinv_y = self.smoothed(&yc, &edges)?;
            unfold_core::interrupt::check()?;
            w = top_eigenvectors(&symmetrised(tr_mul(&yc, &pinv_y)), self.dim)?;
            z = &pinv_y * &w;
            terms = vec![
                (
                    "reconstruction".into(),
                    (&yc - &z * w.transpose()).norm_squared(),
                ),
                ("tree".into(), self.lambda * tree_energy(&z, &edges)),
            ];
            let f = terms[0].1 + terms[1].1;
            observer.step(
                1,
                history.len() + 1,
                &Evidence::new(EvidenceKind::Objective, f),
            )?;
            if let Some(&prev) = history.last() {
                if f > prev + 1e-9 * prev.abs().max(1.0) {
                    return Err(Error::numerical(
                        "DRTree",
                        format!(
                            "the objective increased from {prev} to {f}, which exact block \
                             minimisation cannot do; rescale the data or lower lambda"
                        ),
                    ));
                }
                history.push(f);
                if (prev - f).abs() <= self.tol * prev.abs() {
                    stop = Stop::RelTol;
                    break;
                }
            } else {
                history.push(f);
            }
            if observer.ended() {
                stop = Stop::Caller;
                break;
            }
        }
        Ok(DrTree {
            mean,
            w,
            edges,
            convergence: alternating_convergence(history, stop),
            evidence: Evidence::from_terms(EvidenceKind::Objective, terms),
            coords: z,
        })
    }

    /// `(I + lambda L)^{-1} Y` for the tree `edges` over the rows of `y`.
    fn smoothed(&self, y: &DMatrix<f64>, edges: &[(usize, usize, f64)]) -> Result<DMatrix<f64>> {
        let n = y.nrows();
        let mut triplets: Vec<(usize, usize, f64)> = (0..n).map(|i| (i, i, 1.0)).collect();
        for &(a, b, _) in edges {
            triplets[a].2 += self.lambda;
            triplets[b].2 += self.lambda;
        }
        triplets.extend(
            edges
                .iter()
                .flat_map(|&(a, b, _)| [(a, b, -self.lambda), (b, a, -self.lambda)]),
        );
        let chol = SparseCholesky::new(
            &CsrMatrix::from_triplets(n, n, &triplets),
            "DRTree: I + lambda L",
        )?;
        let mut x = y.clone();
        chol.solve_block_in_place(&mut x);
        Ok(x)
    }
}

/// The tree step (28) over the rows of `z`: their Euclidean minimum spanning tree, which
/// is also the tree of least total squared length (the order of the edge weights is the
/// same), with each edge's squared length.
fn point_tree(z: &DMatrix<f64>) -> Result<Vec<(usize, usize, f64)>> {
    Ok(euclidean_mst(z)?
        .into_iter()
        .map(|(a, b, _)| (a, b, (z.row(a) - z.row(b)).norm_squared()))
        .collect())
}

/// A fitted DRTree.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DrTree {
    /// The column means removed before fitting.
    pub mean: DVector<f64>,
    /// Orthonormal projection `W` (D x d).
    pub w: DMatrix<f64>,
    /// The tree over the points, `(i, j, ||z_i - z_j||^2)` with `i < j`, from the last tree
    /// step (squared lengths of that moment).
    pub edges: Vec<(usize, usize, f64)>,
    /// How the alternating minimisation ended, with the objective after every iteration;
    /// `converged` when the relative-change rule stopped it before `max_iter`.
    pub convergence: Convergence,
    evidence: Evidence,
    coords: DMatrix<f64>,
}

impl crate::regularised::PosteriorRegularised for DrTree {
    /// The spanning tree over the points, unit weights.
    fn learned_graph(&self) -> Result<NeighbourGraph> {
        crate::regularised::unit_tree(self.coords.nrows(), &self.edges)
    }
}

// The latent points `Z` (N x d) and the last objective with its terms (`reconstruction`,
// `tree`), kind `objective`.
crate::embedding!(DrTree);

/// DRTree in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::Convergence;

    const ABOUT: &str = "dimensionality reduction with a spanning tree over the embedded points (lambda = 0 is PCA)";

    impl Registered for DrTree {
        type Params = DrTreeParams;

        fn info() -> MethodInfo {
            MethodInfo::new("drtree", Family::Regularised, ABOUT).evidence(EvidenceKind::Objective)
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit_observed(&data.y.matrix(), observer)
        }
    }

    impl Model for DrTree {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the latent points", &self.coords, None, None)?;
            let (n, d) = self.coords.shape();
            matrix("the projection W", &self.w, None, Some(d))?;
            vector("the mean", &self.mean, Some(self.w.nrows()))?;
            tree_edges(&self.edges, n)
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regularised::ddrtree::spanning_tree;
    use crate::spectral::pca::PcaParams;
    use crate::traits::Embedding;
    use rand_distr::{Distribution, StandardNormal};

    fn data(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
        let mut rng = unfold_core::seeded_rng(seed);
        DMatrix::from_fn(n, p, |i, j| {
            let t = i as f64 / n as f64 * 6.0;
            let e: f64 = StandardNormal.sample(&mut rng);
            [t.cos() * 3.0, t.sin() * 2.0, t][j % 3] + 0.2 * e + j as f64
        })
    }

    #[test]
    fn lambda_zero_is_pca() {
        let y = data(50, 5, 1);
        let tree = DrTreeParams::new(2, 0.0).fit(&y).unwrap();
        let pca = PcaParams::new(2).fit(&y).unwrap();
        let fit = unfold_eval::procrustes(tree.coords(), pca.coords()).unwrap();
        assert!(fit.error < 1e-20, "Procrustes error {}", fit.error);
        assert!((fit.scale - 1.0).abs() < 1e-10);
        // Same subspace: the projector W W^T equals V V^T.
        let diff = &tree.w * tree.w.transpose() - &pca.components * pca.components.transpose();
        assert!(diff.norm() < 1e-10);
    }

    #[test]
    fn objective_decreases_and_fit_is_stationary_for_its_tree() {
        let y = data(60, 4, 2);
        let params = DrTreeParams {
            tol: 0.0,
            max_iter: 12,
            ..DrTreeParams::new(2, 0.5)
        };
        let fit = params.fit(&y).unwrap();
        // tol = 0 stops only at an exact fixed point (the tree stopped changing).
        assert!(fit.convergence.trace.len() >= 2);
        for pair in fit.convergence.trace.windows(2) {
            assert!(pair[1] <= pair[0] * (1.0 + 1e-12), "{pair:?}");
        }
        // Z = (I + lambda L)^{-1} Y W for the returned tree: (I + lambda L) Z = Yc W.
        let yc = DMatrix::from_fn(60, 4, |i, j| y[(i, j)] - fit.mean[j]);
        let mut lz = fit.coords().clone();
        for &(a, b, _) in &fit.edges {
            let d = (fit.coords().row(a) - fit.coords().row(b)) * 0.5;
            let mut ra = lz.row_mut(a);
            ra += &d;
            let mut rb = lz.row_mut(b);
            rb -= &d;
        }
        assert!((lz - yc * &fit.w).norm() < 1e-9 * fit.coords().norm());
        // The tree pulls neighbours together: the tree term is smaller than PCA's.
        let pca = DrTreeParams::new(2, 0.0).fit(&y).unwrap();
        let energy = |t: &DrTree| tree_energy(t.coords(), &spanning_tree(t.coords()).unwrap());
        assert!(energy(&fit) < energy(&pca));
    }

    #[test]
    fn the_point_tree_is_the_minimum_tree_under_squared_distances() {
        // Against Prim on the dense squared distances: the same total (the trees may differ
        // only between equal-weight edges), the same edges on generic points, and the
        // squared length on each edge.
        for (n, d, seed) in [(200, 2, 4), (150, 3, 5), (2, 2, 6)] {
            let z = data(n, d, seed);
            let ours = point_tree(&z).unwrap();
            let prim = spanning_tree(&z).unwrap();
            assert_eq!(ours.len(), n - 1);
            let total = |t: &[(usize, usize, f64)]| t.iter().map(|e| e.2).sum::<f64>();
            assert!((total(&ours) - total(&prim)).abs() <= 1e-12 * total(&prim));
            let pairs =
                |t: &[(usize, usize, f64)]| t.iter().map(|e| (e.0, e.1)).collect::<Vec<_>>();
            assert_eq!(pairs(&ours), pairs(&prim));
            for &(a, b, w) in &ours {
                assert_eq!(w, (z.row(a) - z.row(b)).norm_squared());
            }
        }
    }

    #[test]
    fn rejects_bad_input() {
        let y = data(20, 3, 3);
        for lambda in [-1.0, f64::NAN] {
            assert!(matches!(
                DrTreeParams::new(2, lambda).fit(&y),
                Err(Error::InvalidParameter { ref name, .. }) if name == "lambda"
            ));
        }
        let params = DrTreeParams {
            max_iter: 0,
            ..DrTreeParams::new(2, 1.0)
        };
        assert!(matches!(
            params.fit(&y),
            Err(Error::InvalidParameter { .. })
        ));
    }

    /// The fit reports its real iterations and one objective value per iteration.
    #[test]
    fn convergence_reports_every_iteration() {
        let fit = DrTreeParams::new(2, 0.5).fit(&data(60, 4, 2)).unwrap();
        let c = &fit.convergence;
        assert!(c.iterations > 0, "{c:?}");
        assert_eq!(c.trace.len(), c.iterations);
        assert_eq!(*c.trace.last().unwrap(), fit.evidence().value);
    }
}
