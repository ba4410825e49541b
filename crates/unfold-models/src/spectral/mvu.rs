//! Maximum variance unfolding (MVU; Weinberger & Saul 2006, "Unsupervised learning of
//! image manifolds by semidefinite programming"; spec `meu_alle_drill.md` §1.3, §6).
//!
//! Given the symmetrised kNN graph `G` of the rows of `Y` and the squared distances
//! `d_ij = ||y_i - y_j||^2` on its edges, MVU solves the semidefinite program
//!
//! ```text
//! maximise tr(K)  s.t.  K PSD,  sum_ij K_ij = 0,  K_ii - 2 K_ij + K_jj = d_ij  for (i, j) in G
//! ```
//!
//! and embeds with the top-q eigenpairs of `K`, `X = V Lambda^{1/2}` (CMDS scaling).
//!
//! **Exact solver** (submodule `exact`). `K = V X V^T` with `V` an orthonormal basis of
//! the face of the PSD cone that holds every feasible `K` (submodule `face`: the complement of `1`
//! and of the affine dependencies within graph cliques), so that the program in `X` has a
//! strictly feasible point. The dual is strictly feasible whenever `G` is connected and
//! the data's own centred Gram matrix is feasible, so the optimum exists. It is found by
//! `unfold_sdp`'s infeasible primal-dual path-following method (HKM direction, Mehrotra's
//! predictor-corrector); for rank-one constraints the Schur complement is an m x m Hadamard
//! product for m edges, so one iteration costs `O(n^3 + m^3)`.
//!
//! **Laplacian-basis approximation** (submodule `laplacian_basis`; Weinberger, Sha, Zhu & Saul,
//! NIPS 2006, "Graph Laplacian regularization for large-scale semidefinite programming"):
//! `K = Q Z Q^T` with `Q` the `b` bottom non-constant eigenvectors of the 0/1 graph
//! Laplacian, maximising `tr(Z) - nu sum_e (K_ii - 2 K_ij + K_jj - d_ij)^2`. Distances hold
//! only approximately; see [`Mvu::max_violation`].
//!
//! Not solved with the `clarabel` crate: its PSD cone needs a BLAS/LAPACK backend
//! (`blas-src`/`lapack-src`), none of which builds without a system library, Fortran or a
//! download (see `docs/methods/mvu.md`).

mod exact;
mod face;
mod laplacian_basis;

use crate::method::{Checked, Declared, Rule};
use crate::traits::{check_fit_points, Embedding};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Footprint, MemoryLimit, Observer, Result, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, Weighting};
use unfold_linalg::{fix_signs, sym_eigen};

/// Default largest number of points for the exact SDP (see [`MvuParams::max_points`] and
/// the timings in `docs/methods/mvu.md`).
pub const DEFAULT_MAX_POINTS: usize = 600;

crate::params! {
    /// Settings of [`Mvu`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct MvuParams {
        /// Latent dimension q.
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// The neighbourhood graph whose edge lengths are preserved.
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        /// Largest n the exact SDP accepts (its cost grows like `n^3 + (edges)^3`). Ignored by
        /// the Laplacian-basis approximation.
        pub max_points: usize = DEFAULT_MAX_POINTS,
        /// Relative tolerance on primal infeasibility, dual infeasibility and duality gap
        /// (exact solver) or on the duality gap of the barrier method (basis variant).
        pub tol: f64 = 1e-6,
        /// Most interior-point (exact) or Newton (basis) iterations.
        pub max_iter: usize = 200,
        /// `Some(b)`: the Laplacian-basis approximation with `b` eigenvectors (Weinberger et
        /// al. 2006); `None`: the exact SDP.
        pub mvu_basis: Option<usize> = None => Rule::auto(
            "none: the exact SDP",
            "mvu: solve in the basis of this many bottom Laplacian eigenvectors \
             (Weinberger et al. 2006) instead of exactly",
        )
        .min(1),
        /// The penalty `nu` on squared distance violations of the basis variant, in units where
        /// the mean squared edge length is 1.
        pub penalty: f64 = 10.0,
        /// The memory the fit may use; `None`: [`MemoryLimit::from_env_or_machine`]. A fit whose
        /// [`MvuParams::footprint`] exceeds it is refused before anything large is allocated.
        pub memory_limit: Option<MemoryLimit> = None,
    }
}

/// What to use when MVU's dense matrices do not fit.
const ALTERNATIVE: &str = "le (Laplacian eigenmaps, sparse in the kNN graph) or isomap";

impl MvuParams {
    /// Exact MVU on the union kNN graph with `k` neighbours.
    pub fn new(dim: usize, k: usize) -> Self {
        MvuParams {
            dim,
            graph: GraphSpec::knn(k),
            ..MvuParams::default()
        }
    }

    /// The peak memory in bytes of a fit on `n` points whose graph has `m` edges.
    ///
    /// Exact SDP (`unfold_sdp::solve` on the face, `r <= n - 1` its dimension):
    ///
    /// ```text
    /// bytes = 8 (3 m^2 + n m + 12 n^2)
    /// ```
    ///
    /// The HKM Schur complement ([`unfold_sdp::Constraints::schur`]) forms the two m x m
    /// edge Gram matrices `U^T X U` and `U^T Z^{-1} U` and their Hadamard product (3 m^2),
    /// the first from an n x m matrix of edge differences (n m) of the lifted `P X P^T` and
    /// `P Z^{-1} P^T` (2 n^2), while the solver holds `C`, `I`, `X`, `Z`, the best iterate's
    /// `X` and `Z`, both Cholesky factors, `Z^{-1}` and the dual residual (10 r^2 <= 10 n^2).
    /// After it, the Schur complement and its factor are 2 m^2; the face basis, the final
    /// Gram matrix and its eigendecomposition are a few n^2.
    ///
    /// Laplacian-basis approximation with b eigenvectors (`s = b (b + 1) / 2`):
    ///
    /// ```text
    /// bytes = 8 (6 n^2 + m s)
    /// ```
    ///
    /// the Gram matrix `K = Q Z Q^T` and its full eigendecomposition (6 n^2) and the edge
    /// constraint matrix (m x s).
    pub fn footprint(&self, n: usize, m: usize) -> u64 {
        let (n, m) = (n as u128, m as u128);
        let words = match self.mvu_basis {
            None => 3 * m * m + n * m + 12 * n * n,
            Some(b) => {
                let s = (b * (b + 1) / 2) as u128;
                6 * n * n + m * s
            }
        };
        u64::try_from(8 * words).unwrap_or(u64::MAX)
    }

    /// Refuses a fit on `n` points with `m` edges whose [`MvuParams::footprint`] exceeds
    /// the memory limit (the largest n that fits keeps the edges per point).
    fn check_memory(&self, n: usize, m: usize) -> Result<()> {
        let holds = match self.mvu_basis {
            None => format!(
                "the interior-point method's m x m Schur complement for m = {m} edges, with n x n iterates"
            ),
            Some(_) => "the n x n Gram matrix and its eigendecomposition".to_string(),
        };
        MemoryLimit::resolve(self.memory_limit.as_ref())?.check(&Footprint {
            method: match self.mvu_basis {
                None => "MVU (exact SDP)",
                Some(_) => "MVU (Laplacian basis)",
            },
            n,
            bytes: &|k| self.footprint(k, (m as u128 * k as u128 / n.max(1) as u128) as usize),
            holds,
            alternative: ALTERNATIVE,
        })
    }

    /// Checks the settings that do not depend on the data.
    pub fn validate(&self) -> Result<()> {
        if !(self.tol.is_finite() && self.tol > 0.0 && self.tol < 1.0) {
            return Err(Error::invalid(
                "tol",
                format!("the tolerance must lie in (0, 1), got {}", self.tol),
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("max_iter", "must be at least 1"));
        }
        if !(self.penalty.is_finite() && self.penalty > 0.0) {
            return Err(Error::invalid(
                "penalty",
                format!("nu must be finite and positive, got {}", self.penalty),
            ));
        }
        if let Some(b) = self.mvu_basis {
            if b < self.dim {
                return Err(Error::invalid(
                    "basis",
                    format!(
                        "the Laplacian basis needs at least dim = {} eigenvectors, got {b}",
                        self.dim
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Fits MVU to the rows of `y`.
    ///
    /// # Errors
    /// Bad data or settings; [`Error::InvalidParameter`] when n exceeds `max_points` for the
    /// exact SDP; [`Error::OverMemoryLimit`] when [`MvuParams::footprint`] exceeds the memory
    /// limit (checked after building the graph, before anything n x n); [`Error::NotConverged`] or [`Error::Numerical`] when the solver stops
    /// short of its tolerance.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Mvu> {
        self.clone().check()?.fit(y, &Silent)
    }
}

impl Checked<MvuParams> {
    /// [`MvuParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<Mvu> {
        check_fit_points(y, self.dim, "MVU")?;
        self.validate()?;
        let n = y.nrows();
        if self.mvu_basis.is_none() && n > self.max_points {
            return Err(Error::invalid(
                "max_points",
                format!(
                    "MVU's exact SDP is limited to {} points (its cost grows like n^3 plus the cube of the edge count) but the data has {n}; subsample the data, raise max_points if you can wait, or use the Laplacian-basis approximation (MvuParams::mvu_basis, e.g. 15 eigenvectors)",
                    self.max_points
                ),
            ));
        }
        if let Some(b) = self.mvu_basis {
            if b + 1 >= n {
                return Err(Error::invalid(
                    "basis",
                    format!(
                        "the Laplacian has {} non-constant eigenvectors but basis = {b}; use fewer",
                        n - 1
                    ),
                ));
            }
        }
        let (_, graph) = self.graph.build(y, Weighting::Distance, "MVU", observer)?;
        let (edges, d): (Vec<(usize, usize)>, Vec<f64>) = graph
            .edges()
            .into_iter()
            .map(|(i, j, w)| ((i, j), w * w))
            .unzip();
        self.check_memory(n, edges.len())?;
        // Work in units of the mean squared edge length.
        let scale = d.iter().sum::<f64>() / d.len() as f64;
        let b: Vec<f64> = d.iter().map(|v| v / scale).collect();
        let (solution, solver) = match self.mvu_basis {
            None => (
                exact::solve_exact(
                    face::face_basis(y, &graph)?,
                    &edges,
                    &b,
                    (self.tol, self.max_iter),
                    observer,
                )?,
                MvuSolver::Exact,
            ),
            Some(m) => (
                laplacian_basis::solve_basis(&graph, &edges, &b, m, self, observer)?,
                MvuSolver::LaplacianBasis {
                    basis: m,
                    penalty: self.penalty,
                },
            ),
        };
        let gram = solution.k * scale;
        let max_violation = edges
            .iter()
            .zip(&d)
            .map(|(&(i, j), &dij)| (gram[(i, i)] + gram[(j, j)] - 2.0 * gram[(i, j)] - dij).abs())
            .fold(0.0, f64::max);
        let (eigenvalues, coords) = embed(&gram, self.dim)?;
        Ok(Mvu {
            trace: gram.trace(),
            gram,
            eigenvalues,
            max_violation,
            iterations: solution.iterations,
            relative_gap: solution.relative_gap,
            solver,
            k: self.graph.k,
            graph,
            coords,
        })
    }
}

/// Which program produced a fitted [`Mvu`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum MvuSolver {
    /// The exact SDP (interior-point method).
    Exact,
    /// The Laplacian-basis approximation `K = Q Z Q^T` with `basis` eigenvectors and
    /// penalty `nu = penalty` (Weinberger, Sha, Zhu & Saul 2006): distances are preserved
    /// only approximately.
    LaplacianBasis { basis: usize, penalty: f64 },
}

/// A fitted MVU embedding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Mvu {
    /// The learned centred Gram matrix `K` (n x n), in the data's squared units.
    pub gram: DMatrix<f64>,
    /// All eigenvalues of `K`, descending.
    pub eigenvalues: DVector<f64>,
    /// `tr(K)`, the unfolded variance times n.
    pub trace: f64,
    /// `max_e |K_ii - 2 K_ij + K_jj - d_ij|` over the graph's edges, in squared data units.
    pub max_violation: f64,
    /// Interior-point iterations (exact) or Newton steps (basis variant).
    pub iterations: usize,
    /// The solver's relative duality gap at the returned point: `<X, Z> / (1 + |primal| +
    /// |dual objective|)` (exact) or the barrier bound `b / t / (1 + |f|)` (basis variant).
    pub relative_gap: f64,
    /// The program that was solved.
    pub solver: MvuSolver,
    /// Neighbours per point.
    pub k: usize,
    graph: NeighbourGraph,
    coords: DMatrix<f64>,
}

impl Embedding for Mvu {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    fn graph(&self) -> Option<&NeighbourGraph> {
        Some(&self.graph)
    }
}

/// All eigenvalues of `k` (descending) and the CMDS coordinates `V_q Lambda_q^{1/2}`.
fn embed(k: &DMatrix<f64>, q: usize) -> Result<(DVector<f64>, DMatrix<f64>)> {
    let eig = sym_eigen(k)?;
    let n = k.nrows();
    let values = DVector::from_fn(n, |i, _| eig.values[n - 1 - i]);
    let top = values[0].abs().max(f64::MIN_POSITIVE);
    if let Some(j) = values.iter().take(q).position(|&v| v <= 1e-10 * top) {
        return Err(Error::DimensionTooLarge {
            dim: q,
            limit: j + 1,
            reason: format!("the MVU Gram matrix has only {j} clearly positive eigenvalues"),
        });
    }
    let mut coords = DMatrix::from_fn(n, q, |i, c| eig.vectors[(i, n - 1 - c)]);
    fix_signs(&mut coords);
    for (mut col, &l) in coords.column_iter_mut().zip(values.iter()) {
        col *= l.sqrt();
    }
    Ok((values, coords))
}

/// What an SDP solver returns: `K` (n x n, in units of the mean squared edge length), the
/// iteration count and the relative duality gap reached.
struct SdpSolution {
    k: DMatrix<f64>,
    iterations: usize,
    relative_gap: f64,
}

/// MVU in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::Convergence;
    use unfold_core::Observer;

    impl Registered for Mvu {
        type Params = MvuParams;

        fn info() -> MethodInfo {
            MethodInfo::new(
                "mvu",
                Family::Spectral,
                "maximum variance unfolding (exact SDP, or in a Laplacian \
                 basis)",
            )
            .distinct_points()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit(&data.y.matrix(), observer)
        }
    }

    impl Model for Mvu {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the embedding", &self.coords, None, None)?;
            let n = self.coords.nrows();
            square("the Gram matrix", &self.gram, n)?;
            vector("the eigenvalues", &self.eigenvalues, None)?;
            finite(
                "the fit's summary",
                &[self.trace, self.max_violation, self.relative_gap],
            )?;
            if let MvuSolver::LaplacianBasis { penalty, .. } = self.solver {
                positive("the penalty", penalty)?;
            }
            graph("the graph", &self.graph, n)?;
            neighbours(self.k, n)
        }

        /// The interior-point iterations (exact) or Newton steps (basis variant); a fit
        /// that does not reach the tolerance is an error, so a fitted MVU converged.
        fn convergence(&self) -> Convergence {
            Convergence {
                iterations: self.iterations,
                converged: true,
                stopped_by: "tolerance".to_string(),
                trace: Vec::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unfold_data::synthetic::swiss_roll;

    /// Points along a 3/4 circle with growing gaps, so that with k = 1 the union kNN graph
    /// is the path 0 - 1 - ... - n-1.
    fn arc(n: usize) -> (DMatrix<f64>, Vec<f64>) {
        let t: Vec<f64> = (0..n)
            .map(|i| 0.05 * (i * (i + 20)) as f64 / n as f64)
            .collect();
        let y = DMatrix::from_fn(n, 2, |i, j| [t[i].cos(), t[i].sin()][j]);
        // Arc-length positions of the straightened chain: cumulative chord lengths.
        let mut s = vec![0.0];
        for i in 1..n {
            let chord = (y.row(i) - y.row(i - 1)).norm();
            s.push(s[i - 1] + chord);
        }
        (y, s)
    }

    fn centred_gram(y: &DMatrix<f64>) -> DMatrix<f64> {
        let n = y.nrows();
        let mean = y.row_mean();
        let yc = DMatrix::from_fn(n, y.ncols(), |i, j| y[(i, j)] - mean[j]);
        &yc * yc.transpose()
    }

    #[test]
    fn straightens_a_path_exactly() {
        // On a path graph the maximum-variance configuration is the straight chain, so
        // K = H s s^T H with s the cumulative edge lengths, of rank one.
        let n = 30;
        let (y, s) = arc(n);
        let mvu = MvuParams::new(1, 1).fit(&y).unwrap();
        assert_eq!(mvu.graph().unwrap().n_edges(), n - 1);
        let sm = DMatrix::from_column_slice(n, 1, &s);
        let expected = centred_gram(&sm);
        let err = (&mvu.gram - &expected).norm() / expected.norm();
        assert!(err < 1e-6, "relative error of K {err}");
        assert!(mvu.eigenvalues[1] < 1e-6 * mvu.eigenvalues[0]);
        let mean = s.iter().sum::<f64>() / n as f64;
        let x = mvu.coords().column(0);
        let sign = x[0].signum() * (s[0] - mean).signum();
        let worst = (0..n)
            .map(|i| (sign * x[i] - (s[i] - mean)).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-5 * s[n - 1], "coordinate error {worst}");
        assert_eq!(mvu.solver, MvuSolver::Exact);
    }

    #[test]
    fn swiss_roll_solution_is_feasible_centred_psd_and_beats_the_data_gram() {
        let y = swiss_roll(60, 0.0, 3).unwrap().points;
        let mvu = MvuParams::new(2, 5).fit(&y).unwrap();
        let n = y.nrows();
        let dmax = mvu
            .graph()
            .unwrap()
            .edges()
            .iter()
            .map(|e| e.2 * e.2)
            .fold(0.0, f64::max);
        assert!(
            mvu.max_violation < 1e-6 * dmax,
            "violation {}",
            mvu.max_violation
        );
        let row_sums = &mvu.gram * DVector::from_element(n, 1.0);
        assert!(row_sums.amax() < 1e-9 * mvu.trace);
        let low = mvu.eigenvalues[n - 1];
        assert!(
            low > -1e-8 * mvu.eigenvalues[0],
            "smallest eigenvalue {low}"
        );
        assert!((mvu.eigenvalues.sum() - mvu.trace).abs() < 1e-9 * mvu.trace);
        // The data's centred Gram matrix is feasible, so it cannot beat the optimum; the roll
        // unfolds, so MVU spreads it well beyond.
        let data_trace = centred_gram(&y).trace();
        assert!(
            mvu.trace > 1.2 * data_trace,
            "{} vs {data_trace}",
            mvu.trace
        );
        // Unfolded: two eigenvalues carry almost all the variance.
        let top2 = mvu.eigenvalues[0] + mvu.eigenvalues[1];
        assert!(top2 > 0.95 * mvu.trace, "{top2} of {}", mvu.trace);
    }

    #[test]
    fn too_many_points_is_a_clear_error() {
        let y = swiss_roll(40, 0.0, 1).unwrap().points;
        let params = MvuParams {
            max_points: 30,
            ..MvuParams::new(2, 5)
        };
        match params.fit(&y) {
            Err(Error::InvalidParameter { name, message }) => {
                assert_eq!(name, "max_points");
                assert!(message.contains("limited to 30 points"), "{message}");
                assert!(message.contains("basis"), "{message}");
            }
            other => panic!("expected InvalidParameter, got {other:?}"),
        }
        // The basis variant has no such limit.
        assert!(params.mvu_basis(Some(8)).fit(&y).is_ok());
    }

    /// Above the memory limit both programs are refused, naming the limit and the
    /// sparse alternatives.
    #[test]
    fn refuses_n_above_the_memory_limit() {
        let y = swiss_roll(200, 0.0, 1).unwrap().points;
        let limit = MemoryLimit::given(1 << 20, "the test's limit");
        let exact = MvuParams::new(2, 5).memory_limit(Some(limit.clone()));
        let e = exact.fit(&y).unwrap_err();
        let Error::OverMemoryLimit(r) = &e else {
            panic!("{e:?}")
        };
        let (needed, max_n) = (r.needed, r.max_n);
        let m = exact
            .graph
            .build(&y, Weighting::Distance, "t", &unfold_core::Silent)
            .unwrap()
            .1
            .n_edges();
        assert_eq!(needed.0, 8 * (3 * m * m + 200 * m + 12 * 200 * 200) as u64);
        assert!(max_n < 200);
        let text = e.to_string();
        for part in [
            "MVU (exact SDP) on 200 points",
            &format!("m = {m} edges"),
            "limit of 1.0 MiB (the test's limit)",
            "le (Laplacian eigenmaps",
            "isomap",
        ] {
            assert!(text.contains(part), "{part:?} missing: {text}");
        }
        let text = exact.mvu_basis(Some(10)).fit(&y).unwrap_err().to_string();
        assert!(
            text.contains("MVU (Laplacian basis) on 200 points") && text.contains("le ("),
            "{text}"
        );
    }

    #[test]
    fn iteration_limit_is_reported() {
        let y = swiss_roll(30, 0.0, 2).unwrap().points;
        let params = MvuParams {
            max_iter: 3,
            ..MvuParams::new(2, 5)
        };
        assert!(matches!(
            params.fit(&y),
            Err(Error::NotConverged { iterations: 3, .. })
        ));
    }

    /// Timings for `docs/methods/mvu.md`:
    /// `cargo test --release -p unfold-models mvu::tests::timings -- --ignored --nocapture`
    /// (`MVU_NS=50,100` to pick sizes, `MVU_K` for k, `MVU_BASIS=0` to skip the basis runs).
    #[test]
    #[ignore]
    fn timings() {
        let env = |name: &str, default: &str| std::env::var(name).unwrap_or(default.to_string());
        let ns: Vec<usize> = env("MVU_NS", "50,100,150,200,300,400")
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        let k: usize = env("MVU_K", "6").parse().unwrap();
        let basis = env("MVU_BASIS", "1") != "0";
        for n in ns {
            let data = swiss_roll(n, 0.0, 0).unwrap();
            let (y, latent) = (&data.points, data.latent.as_ref().unwrap());
            let trust = |x: &DMatrix<f64>| unfold_eval::trustworthiness(latent, x, 10).unwrap();
            let params = MvuParams {
                max_points: 1000,
                ..MvuParams::new(2, k)
            };
            let start = std::time::Instant::now();
            let mvu = params.fit(y).unwrap();
            println!(
                "exact n = {n}, k = {k}: {} edges, {} iterations, {:.2} s, gap {:.1e}, max violation {:.1e} (max d {:.1e}), top-2 share {:.4}, trust {:.4}",
                mvu.graph().unwrap().n_edges(),
                mvu.iterations,
                start.elapsed().as_secs_f64(),
                mvu.relative_gap,
                mvu.max_violation,
                mvu.graph().unwrap().edges().iter().map(|e| e.2 * e.2).fold(0.0, f64::max),
                (mvu.eigenvalues[0] + mvu.eigenvalues[1]) / mvu.trace,
                trust(mvu.coords())
            );
            if !basis {
                continue;
            }
            for &(m, nu) in &[
                (10, 1.0),
                (10, 10.0),
                (10, 100.0),
                (20, 1.0),
                (20, 10.0),
                (20, 100.0),
            ] {
                let start = std::time::Instant::now();
                let fit = MvuParams {
                    penalty: nu,
                    ..params.clone()
                }
                .mvu_basis(Some(m))
                .fit(y)
                .unwrap();
                println!(
                    "  basis {m}, nu {nu}: {} Newton steps, {:.2} s, max violation {:.1e}, trace / exact {:.3}, trust {:.4}",
                    fit.iterations,
                    start.elapsed().as_secs_f64(),
                    fit.max_violation,
                    fit.trace / mvu.trace,
                    trust(fit.coords())
                );
            }
        }
    }
}
