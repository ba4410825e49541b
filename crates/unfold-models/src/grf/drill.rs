//! DRILL: dimensionality reduction through regularisation of the inverse covariance in the
//! log likelihood (Lawrence 2012 §3; spec `meu_alle_drill.md` §7).
//!
//! The field's precision `Lambda` has the sparsity of the neighbourhood graph (or is free
//! everywhere) plus a free diagonal; it is fitted by the graphical lasso on the second
//! moments of the centred data over points, `S = Y_c Y_c^T / p`:
//!
//! ```text
//! maximise  log|Lambda| - tr(S Lambda) - rho sum_{i != j} |lambda_ij|,  lambda_ij = 0 off the graph.
//! ```
//!
//! Conventions (spec §11 item 14, each changes what `rho` means): Y is centred per
//! feature; S is divided by p; the penalty runs over ordered pairs (Friedman's glasso, so
//! the paper's `rho_paper sum_{i<j} |lambda_ij|` added to `-log p(Y)` is `rho = rho_paper /
//! p` here); the diagonal is penalised with the same `rho` (as the author's code, which
//! keeps `W = S + rho I` positive definite when `S` is singular, as it is whenever p < n)
//! unless `penalize_diagonal` is false (the paper's formula). The exact log-likelihood at
//! the fitted `Lambda` is `-(np/2) log 2pi + (p/2) log|Lambda| - (p/2) tr(S Lambda)`.
//! `Lambda` is not a Laplacian, so the embedding comes from the top eigenvectors of the
//! centred implied covariance `H Lambda^{-1} H` (spec §7), never the Laplacian shortcut.

use crate::grf::{
    covariance_embedding, FieldScaling, FixedField, GaussianRandomField, Precision, SCALING_HELP,
};
use crate::method::{Checked, Declared, Interval, Rule};
use crate::traits::{check_fit_input, Embedding};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Convergence, Error, Evidence, Footprint, MemoryLimit, Observer, Result, Silent};
use unfold_glasso::{graphical_lasso_observed, Error as GlassoError, GlassoOptions, Penalty};
use unfold_graph::{GraphSpec, NeighbourGraph, Weighting};

crate::params! {
    /// Settings of [`Drill`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct DrillParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        /// The kNN graph that is the support of `Lambda` (unless `all_pairs`).
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        /// The L1 penalty (glasso convention, see the module documentation), each `>= 0`:
        /// one is fitted; several are compared by the GP-LVM likelihood score and the best
        /// is kept ([`DrillParams::fit_best`]); `None`: a tenth of the mean diagonal of `S`
        /// ([`mean_second_moment`]).
        pub rho: Option<Vec<f64>> = None => Rule::auto(
            "0.1 x the mean diagonal of S",
            "drill: L1 penalty on the precision (glasso convention on S = Y Y^T / p); \
             several, comma-separated, are compared by the GP-LVM likelihood score and the \
             best is kept",
        )
        .range(Interval::NON_NEGATIVE),
        /// Every pair of points as neighbours (the L1 penalty alone picks the structure)
        /// instead of the kNN graph.
        pub all_pairs: bool = false => Rule::help(
            "drill: all pairs of points as neighbours (the L1 penalty alone picks the \
             structure)",
        ),
        pub scaling: FieldScaling = FieldScaling::UnitVariance => Rule::help(SCALING_HELP),
        pub penalize_diagonal: bool = true,
        /// Duality-gap tolerance and sweep limit of the graphical lasso.
        pub tol: f64 = 1e-6,
        pub max_iter: usize = 1000,
        /// The memory the fit may use; `None`: [`MemoryLimit::from_env_or_machine`]. A fit
        /// whose [`DrillParams::footprint`] exceeds it is refused before anything large is
        /// allocated.
        pub memory_limit: Option<MemoryLimit> = None,
    }
}

/// The n x n matrices at the peak of a fit comparing `penalties` penalties (see
/// [`DrillParams::footprint`]).
fn dense_matrices(penalties: usize) -> u64 {
    if penalties > 1 {
        18
    } else {
        13
    }
}

/// What to use when DRILL's dense n x n matrices do not fit.
const ALTERNATIVE: &str =
    "meu (a random field whose precision stays sparse on the kNN graph) or a subsample of the points";

impl DrillParams {
    /// DRILL on the union kNN graph with penalty `rho`.
    pub fn new(dim: usize, k: usize, rho: f64) -> Self {
        DrillParams {
            dim,
            graph: GraphSpec::knn(k),
            rho: Some(vec![rho]),
            ..DrillParams::default()
        }
    }

    /// The peak memory in bytes of a fit on `n` points comparing `penalties` penalties
    /// (1 for [`DrillParams::fit`]):
    ///
    /// ```text
    /// bytes = 8 n^2 (13 + 5 [penalties > 1])
    /// ```
    ///
    /// counting the n x n matrices of 8-byte numbers alive at the peak, inside the
    /// graphical lasso's solve of a block of all n points: DRILL's `S` and its penalty mask;
    /// the solver's symmetrised `S` and dense penalties; the precision and covariance it
    /// returns; the block's copies of `S` and of the penalties; its `W`, lasso coefficients
    /// and `Theta`; the two copies a log-determinant of the duality gap makes; and the
    /// index of free coordinates (all pairs) or the mask (a graph): 13. A grid of
    /// penalties ([`DrillParams::fit_best`]) also holds the warm start `(W, Theta)`, its
    /// lasso coefficients and the best fit's precision and covariance: 5 more. The score
    /// that ranks the grid is the caller's and is not counted.
    pub fn footprint(&self, n: usize, penalties: usize) -> u64 {
        let matrices = dense_matrices(penalties) as u128;
        u64::try_from(8 * matrices * (n as u128).pow(2)).unwrap_or(u64::MAX)
    }

    /// Fits DRILL to the rows of `y`: at the penalty `rho`, or at the best of several by
    /// the GP-LVM likelihood score (`unfold_eval::gplvm_evidence`, as the paper chooses
    /// rho).
    ///
    /// # Errors
    /// Bad data or settings; [`Error::OverMemoryLimit`] when
    /// [`DrillParams::footprint`] exceeds the memory limit (checked first).
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Drill> {
        self.clone().check()?.fit(y, &Silent)
    }

    /// Fits DRILL for each penalty in `rhos` (warm-started from the previous one, largest
    /// first) and keeps the fit with the highest `score` (for example the GP-LVM
    /// likelihood of `unfold_eval::gplvm_score`, as the paper chooses rho). Returns the best
    /// fit and `(rho, score)` for every penalty, in the order given.
    pub fn fit_best<F>(
        &self,
        y: &DMatrix<f64>,
        rhos: &[f64],
        score: F,
    ) -> Result<(Drill, Vec<(f64, f64)>)>
    where
        F: Fn(&Drill) -> Result<f64>,
    {
        if rhos.is_empty() {
            return Err(Error::invalid("rhos", "give at least one penalty to try"));
        }
        let params = self.clone().rho(Some(rhos.to_vec())).check()?;
        params.fit_best(y, rhos, score, &Silent)
    }
}

impl Checked<DrillParams> {
    /// [`DrillParams::fit`] with the parameters checked.
    pub fn fit(&self, y: &DMatrix<f64>, observer: &dyn Observer) -> Result<Drill> {
        match self.rho.as_deref() {
            Some(&[rho]) => self.fit_one(y, rho, observer),
            Some(rhos) => {
                let score = |d: &Drill| {
                    let options = unfold_eval::GplvmScoreOptions::default();
                    Ok(unfold_eval::gplvm_evidence(d.coords(), y, &options)?.value())
                };
                Ok(self.fit_best(y, rhos, score, observer)?.0)
            }
            None => self.fit_one(y, 0.1 * mean_second_moment(y), observer),
        }
    }

    /// The fit at the one penalty `rho`.
    fn fit_one(&self, y: &DMatrix<f64>, rho: f64, observer: &dyn Observer) -> Result<Drill> {
        self.check_memory(y, 1)?;
        let graph = self.structure(y, observer)?;
        self.fit_warm(y, rho, None, graph.as_ref(), observer)
    }

    /// The kNN graph whose pairs the penalty leaves free (`None` with `all_pairs`).
    fn structure(
        &self,
        y: &DMatrix<f64>,
        observer: &dyn Observer,
    ) -> Result<Option<NeighbourGraph>> {
        if self.all_pairs {
            return Ok(None);
        }
        Ok(Some(
            self.graph.build(y, Weighting::Binary, "DRILL", observer)?.1,
        ))
    }

    /// [`DrillParams::fit_best`] on penalties in range.
    fn fit_best<F>(
        &self,
        y: &DMatrix<f64>,
        rhos: &[f64],
        score: F,
        observer: &dyn Observer,
    ) -> Result<(Drill, Vec<(f64, f64)>)>
    where
        F: Fn(&Drill) -> Result<f64>,
    {
        self.check_memory(y, rhos.len())?;
        let graph = self.structure(y, observer)?;
        let mut idx: Vec<usize> = (0..rhos.len()).collect();
        idx.sort_by(|&a, &b| rhos[b].total_cmp(&rhos[a]));
        let mut scores = vec![f64::NAN; rhos.len()];
        let mut best: Option<(f64, Drill)> = None;
        let mut warm: Option<(DMatrix<f64>, DMatrix<f64>)> = None;
        for i in idx {
            let fit = self.fit_warm(y, rhos[i], warm.take(), graph.as_ref(), observer)?;
            let s = score(&fit)?;
            scores[i] = s;
            warm = Some((fit.covariance.clone(), fit.precision.clone()));
            if best.as_ref().is_none_or(|(b, _)| s > *b) {
                best = Some((s, fit));
            }
        }
        let (_, mut fit) = best.expect("at least one penalty");
        fit.rho_scores = rhos.iter().copied().zip(scores).collect();
        let scores = fit.rho_scores.clone();
        Ok((fit, scores))
    }

    /// Checks the data, then refuses a fit whose [`DrillParams::footprint`] exceeds the
    /// memory limit.
    fn check_memory(&self, y: &DMatrix<f64>, penalties: usize) -> Result<()> {
        check_fit_input(y, self.dim, "DRILL")?;
        MemoryLimit::resolve(self.memory_limit.as_ref())?.check(&Footprint {
            method: "DRILL",
            n: y.nrows(),
            bytes: &|m| self.footprint(m, penalties),
            holds: format!(
                "{} dense n x n matrices of 8-byte numbers in the graphical lasso",
                dense_matrices(penalties)
            ),
            alternative: ALTERNATIVE,
        })
    }

    /// The fit at the penalty `rho` from the warm start `warm`; `observer` may stop the
    /// graphical lasso after any sweep ([`Error::Interrupted`]).
    fn fit_warm(
        &self,
        y: &DMatrix<f64>,
        rho: f64,
        warm: Option<(DMatrix<f64>, DMatrix<f64>)>,
        graph: Option<&NeighbourGraph>,
        observer: &dyn Observer,
    ) -> Result<Drill> {
        check_fit_input(y, self.dim, "DRILL")?;
        let (n, p) = (y.nrows(), y.ncols());
        let (yc, _) = unfold_data::centre(y);
        let s = &yc * yc.transpose() / p as f64;
        let penalty = match &graph {
            None => Penalty::Scalar(rho),
            Some(g) => {
                let mut m = DMatrix::from_element(n, n, f64::INFINITY);
                for i in 0..n {
                    m[(i, i)] = rho;
                    for &j in g.neighbours(i).0 {
                        m[(i, j)] = rho;
                    }
                }
                Penalty::Matrix(m)
            }
        };
        let opts = GlassoOptions {
            penalize_diagonal: self.penalize_diagonal,
            tol: self.tol,
            max_iter: self.max_iter,
            warm_start: warm,
            ..GlassoOptions::default()
        };
        let fit = graphical_lasso_observed(&s, &penalty, &opts, &mut |_, _| !observer.stopped())
            .map_err(|e| match e {
                GlassoError::Stopped => Error::Interrupted,
                e => Error::numerical(
                    "DRILL's graphical lasso",
                    format!("{e}; with p < n the second-moment matrix is singular: use rho > 0 with the diagonal penalised"),
                ),
            })?;
        if !fit.converged {
            return Err(Error::NotConverged {
                context: "DRILL's graphical lasso".into(),
                iterations: fit.iterations,
                advice: format!(
                    "duality gap {:.3e} > tol {:.1e}: raise max_iter or rho",
                    fit.duality_gap, self.tol
                ),
            });
        }
        let prec = Precision::Dense(fit.precision.clone());
        let evidence = FixedField::new(prec, &yc)?.evidence(&[])?;
        let emb = covariance_embedding(fit.covariance.clone(), self.dim, self.scaling)?;
        Ok(Drill {
            rho,
            eigenvalues: emb.eigenvalues,
            evidence,
            penalised_objective: fit.objective,
            convergence: Convergence::iterative(fit.gap_trace, fit.converged, "tolerance"),
            precision: fit.precision,
            covariance: fit.covariance,
            rho_scores: Vec::new(),
            graph: graph.cloned(),
            coords: emb.coords,
        })
    }
}

/// A fitted DRILL.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Drill {
    pub rho: f64,
    /// The fitted precision `Lambda` (n x n).
    pub precision: DMatrix<f64>,
    /// The implied covariance `K = Lambda^{-1}` (the glasso's `W`).
    pub covariance: DMatrix<f64>,
    /// Eigenvalues of `H K H` for the embedding axes, descending.
    pub eigenvalues: DVector<f64>,
    /// Exact log-likelihood of the centred data at `Lambda`.
    pub evidence: Evidence,
    /// The glasso objective `log|Lambda| - tr(S Lambda) - rho sum |lambda_ij|`.
    pub penalised_objective: f64,
    /// How the graphical lasso ended: its sweeps, and the duality gap after each sweep
    /// (the penalised objective is not evaluated per sweep; it costs a log-determinant).
    pub convergence: Convergence,
    /// `(rho, GP-LVM score)` of every penalty compared when the fit chose among several
    /// ([`DrillParams::fit_best`]); empty for a fit at one penalty.
    pub rho_scores: Vec<(f64, f64)>,
    graph: Option<NeighbourGraph>,
    coords: DMatrix<f64>,
}

impl Drill {
    /// Edges with a non-zero precision entry, `(i, j)` with `i < j`: the learned structure.
    pub fn learned_edges(&self) -> Vec<(usize, usize)> {
        let n = self.precision.nrows();
        (0..n)
            .flat_map(|j| (0..j).map(move |i| (i, j)))
            .filter(|&(i, j)| self.precision[(i, j)] != 0.0)
            .collect()
    }
}

impl Embedding for Drill {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    fn graph(&self) -> Option<&NeighbourGraph> {
        self.graph.as_ref()
    }

    fn evidence(&self) -> Evidence {
        self.evidence.clone()
    }
}

/// The mean diagonal of `S = Y_c Y_c^T / p`: the mean squared norm of a centred point over
/// p (DRILL's default penalty is a tenth of it).
pub fn mean_second_moment(y: &DMatrix<f64>) -> f64 {
    let (n, p) = (y.nrows() as f64, y.ncols() as f64);
    let total: f64 = y
        .column_iter()
        .map(|c| {
            let m = c.mean();
            c.iter().map(|v| (v - m).powi(2)).sum::<f64>()
        })
        .sum();
    total / (n * p)
}

/// DRILL in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Registered, Table};
    use unfold_core::Observer;
    use unfold_core::{Convergence, EvidenceKind};

    const ABOUT: &str =
        "dimensionality reduction by L1-penalised likelihood (the graphical lasso on points)";

    impl Registered for Drill {
        type Params = DrillParams;

        fn info() -> MethodInfo {
            MethodInfo::new("drill", Family::RandomField, ABOUT)
                .evidence(EvidenceKind::LogLikelihood)
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            p.fit(&data.y.matrix(), observer)
        }
    }

    impl Model for Drill {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the embedding", &self.coords, None, None)?;
            let (n, q) = self.coords.shape();
            square("the precision", &self.precision, n)?;
            square("the covariance", &self.covariance, n)?;
            vector("the eigenvalues", &self.eigenvalues, Some(q))?;
            non_negative("rho", self.rho)?;
            finite("the penalised objective", &[self.penalised_objective])?;
            let scores: Vec<f64> = self.rho_scores.iter().flat_map(|&(r, s)| [r, s]).collect();
            finite("the penalty scores", &scores)?;
            match &self.graph {
                Some(g) => graph("the graph", g, n),
                None => Ok(()),
            }
        }

        fn convergence(&self) -> Convergence {
            self.convergence.clone()
        }

        /// The learned structure: the non-zero off-diagonal precision entries, weighted by
        /// `-Lambda_ij`.
        fn learned_edges(&self) -> Option<Vec<(usize, usize, f64)>> {
            let edges = Drill::learned_edges(self).into_iter();
            Some(
                edges
                    .map(|(i, j)| (i, j, -self.precision[(i, j)]))
                    .collect(),
            )
        }

        /// The penalties compared and their GP-LVM scores, when there were several.
        fn tables(&self) -> Vec<Table> {
            if self.rho_scores.is_empty() {
                return Vec::new();
            }
            let rows = DMatrix::from_fn(self.rho_scores.len(), 2, |r, c| {
                let (rho, score) = self.rho_scores[r];
                [rho, score][c]
            });
            let header = vec!["rho".to_string(), "gplvm_score".to_string()];
            vec![Table {
                name: "rho_scores",
                header,
                rows,
            }]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grf::{field_log_likelihood, Precision};

    fn wavy(n: usize, p: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, p, |i, j| {
            let t = i as f64 / n as f64 * 3.0;
            (t * (j + 1) as f64 * 0.7).sin() + 0.1 * (((i * 31 + j * 17) % 13) as f64 - 6.0) / 6.0
        })
    }

    #[test]
    fn stationarity_on_the_graph_and_zeros_off_it() {
        let y = wavy(30, 40);
        let d = DrillParams::new(2, 4, 0.0)
            .penalize_diagonal(false)
            .fit(&y)
            .unwrap();
        let (yc, _) = unfold_data::centre(&y);
        let s = &yc * yc.transpose() / 40.0;
        let g = d.graph().unwrap();
        for i in 0..30 {
            // Without penalty: K_ij = S_ij on the diagonal and the edges (spec §7).
            assert!((d.covariance[(i, i)] - s[(i, i)]).abs() < 1e-6);
            for j in 0..30 {
                if i != j && !g.has_edge(i, j) {
                    assert_eq!(d.precision[(i, j)], 0.0);
                } else {
                    let k = d.precision.clone().try_inverse().unwrap();
                    assert!((k[(i, j)] - s[(i, j)]).abs() < 1e-4, "({i},{j})");
                }
            }
        }
    }

    #[test]
    fn log_likelihood_is_the_gaussian_density() {
        let y = wavy(25, 6);
        let d = DrillParams::new(2, 5, 0.05).fit(&y).unwrap();
        let (yc, _) = unfold_data::centre(&y);
        let want = field_log_likelihood(&Precision::Dense(d.precision.clone()), &yc, "t")
            .unwrap()
            .value;
        assert!((d.evidence.value - want).abs() < 1e-9 * want.abs());
    }

    #[test]
    fn grid_keeps_the_best_score() {
        let y = wavy(25, 6);
        let params = DrillParams::new(2, 10, 0.0).all_pairs(true);
        let (best, scores) = params
            .fit_best(&y, &[0.02, 0.2, 0.05], |d| Ok(-(d.rho - 0.05).abs()))
            .unwrap();
        assert_eq!(best.rho, 0.05);
        assert_eq!(scores.len(), 3);
        // The fitted model keeps the comparison, in the order the penalties were given.
        assert_eq!(best.rho_scores, scores);
        assert_eq!(best.rho_scores[1], (0.2, -0.15000000000000002));
        let table = &crate::registry::Model::tables(&best)[0];
        assert_eq!((table.name, table.rows.shape()), ("rho_scores", (3, 2)));
        let sparse = params.clone().fit_best(&y, &[0.2], |_| Ok(0.0)).unwrap().0;
        let dense = params.fit_best(&y, &[0.02], |_| Ok(0.0)).unwrap().0;
        assert!(sparse.learned_edges().len() < dense.learned_edges().len());
    }

    #[test]
    fn bad_input_gets_clear_errors() {
        let y = wavy(20, 4);
        assert!(matches!(
            DrillParams::new(2, 3, -0.1).fit(&y),
            Err(Error::InvalidParameter { .. })
        ));
    }

    /// Above the memory limit the fit is refused, naming n, the need, the limit and its
    /// source, the largest n that fits and the sparse alternative.
    #[test]
    fn refuses_n_above_the_memory_limit() {
        let y = wavy(200, 6);
        let limit = MemoryLimit::given(1 << 20, "the test's limit");
        let params = DrillParams::new(2, 5, 0.05).memory_limit(Some(limit));
        // 13 n x n matrices: 8 * 13 * 100^2 <= 1 MiB < 8 * 13 * 101^2.
        assert_eq!(params.footprint(200, 1), 8 * 13 * 200 * 200);
        let text = params.fit(&y).unwrap_err().to_string();
        for part in [
            "DRILL on 200 points",
            "4.0 MiB",
            "13 dense n x n matrices",
            "limit of 1.0 MiB (the test's limit)",
            "at most 100 points",
            "meu",
        ] {
            assert!(text.contains(part), "{part:?} missing: {text}");
        }
        // A grid also holds the warm start and the best fit: 18 matrices, 85 points.
        let e = params.fit_best(&y, &[0.1, 0.05], |_| Ok(0.0)).unwrap_err();
        assert!(
            matches!(&e, Error::OverMemoryLimit(r) if r.max_n == 85),
            "{e}"
        );
        // Under the limit nothing changes.
        let small = wavy(25, 6);
        let limited = DrillParams::new(2, 5, 0.05)
            .memory_limit(Some(MemoryLimit::given(1 << 20, "the test's limit")))
            .fit(&small)
            .unwrap();
        let free = DrillParams::new(2, 5, 0.05).fit(&small).unwrap();
        assert_eq!(limited.precision, free.precision);
    }

    /// The fit reports its real iterations and one objective value per iteration.
    #[test]
    fn convergence_reports_every_iteration() {
        let d = DrillParams::new(2, 5, 0.05).fit(&wavy(25, 6)).unwrap();
        let c = &d.convergence;
        assert!(c.iterations > 0 && c.converged, "{c:?}");
        assert_eq!(c.trace.len(), c.iterations);
    }
}
