//! The sparse exact engine of fields whose precision is `M + gamma I` with `M 1 = 0` (a
//! weighted graph Laplacian: MEU; a scaled Laplacian or LLE's `(I - W)^T (I - W)`: the
//! field likelihoods of Laplacian eigenmaps and LLE), including the pseudo-inverse of
//! `gamma = 0` (spec `meu_alle_drill.md` §2.2, §11 item 7).
//!
//! `K = (M + gamma I)^{-1}` carries the mode `11^T / (n gamma)` along the constant vector,
//! which is huge for the paper's `gamma = 1e-4` and whose round-off would swamp the
//! differences `k_ii - 2 k_ij + k_jj` the gradient reads. The dense path factorises
//! `M + gamma I + 11^T / n` instead; a rank-one term would densify a sparse factor, so the
//! sparse path **grounds** the field. Add a ground node `g` joined to every point with
//! weight `gamma`: the augmented matrix
//!
//! ```text
//! M_g = [ M + gamma I   -gamma 1 ]
//!       [ -gamma 1^T    n gamma  ]
//! ```
//!
//! has zero row sums, so all its cofactors are equal: removing the row and column of a
//! data point `r` instead of `g` leaves a matrix `G` with `det G = det(M + gamma I)`. `G`
//! is sparse apart from the ground node's row (which the fill-reducing ordering puts
//! last), it has no constant mode, and its inverse `X` satisfies
//! `X_ij = K_ij - K_ir - K_jr + K_rr` (with `X_r. = 0`), so `tr(dP X) = tr(dP K)` for every
//! derivative with `dP 1 = 0`: exactly the entries the gradient needs, with no digit lost.
//! With `gamma = 0` there is no ground node and `G` is `M` without row and column `r`
//! (an identity entry keeps the indexing): `K` is the pseudo-inverse, the entries are the
//! effective resistances, and the pseudo-determinant is `n det G` (the matrix-tree
//! theorem). In `G`'s indexing the ground node takes the place of the removed point `r`.

use super::precision::{Covariance, FieldFactor};
use nalgebra::DMatrix;
use std::sync::OnceLock;
use unfold_core::{Error, MemoryLimit, Result};
use unfold_graph::Laplacian;
use unfold_linalg::{CsrMatrix, FillOrdering, SparseSymbolic};

/// The fill-reducing ordering of the sparse engine of a field over points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SparseOrdering {
    /// From [`DISSECTION_MIN_N`] points on, both orderings are analysed and the one whose
    /// factorisation needs fewer operations is kept (nested dissection on large or noisy
    /// graphs, `bench/results/grf.md`); approximate minimum degree below, and for fields
    /// given without points.
    #[default]
    Auto,
    /// Approximate minimum degree at every size.
    Amd,
    /// Nested dissection at every size (approximate minimum degree without points).
    Dissection,
}

/// The number of points from which [`SparseOrdering::Auto`] also tries nested dissection
/// (`bench/results/grf.md`: at 10,000 points minimum degree's factorisation needed 13% to
/// 40% fewer operations on clean manifolds and dissection's 21% fewer on noisy data; at
/// 100,000 dissection's needed 5% to 15% fewer on clean manifolds, with factors within 2%
/// of each other, and 61% fewer on noisy data; at 1,000,000 its factor was 30% smaller on
/// the clean roll). The second analysis costs a small part of a fit.
pub const DISSECTION_MIN_N: usize = 10_000;

impl SparseOrdering {
    /// The orderings to analyse for a field over `n` points, given `points` (row `i`:
    /// point `i`); the engine keeps the one whose factorisation needs fewer operations.
    pub fn candidates(self, n: usize, points: Option<&DMatrix<f64>>) -> Vec<FillOrdering<'_>> {
        match (self, points) {
            (SparseOrdering::Amd, _) | (_, None) => vec![FillOrdering::Amd],
            (SparseOrdering::Auto, Some(_)) if n < DISSECTION_MIN_N => vec![FillOrdering::Amd],
            (SparseOrdering::Auto, Some(y)) => {
                vec![FillOrdering::Amd, FillOrdering::Dissection(y)]
            }
            (SparseOrdering::Dissection, Some(y)) => vec![FillOrdering::Dissection(y)],
        }
    }
}

/// Where each edge's entries sit in the selected inverse ([`GroundedLaplacian::edge_slots`]).
#[derive(Clone, Debug)]
pub struct EdgeSlots {
    analysis: SparseSymbolic,
    slots: Vec<[Option<usize>; 3]>,
}

impl EdgeSlots {
    /// `k_ii + k_jj - 2 k_ij` for every edge (the effective resistance when `gamma = 0`),
    /// or `None` when `covariance` is not the selected inverse of this engine.
    pub fn contrasts(&self, covariance: &Covariance) -> Option<Vec<f64>> {
        let (inverse, _) = covariance.selected()?;
        if !inverse.is_on(&self.analysis) {
            return None;
        }
        let x = |s: Option<usize>| s.map_or(0.0, |s| inverse.at(s));
        Some(
            self.slots
                .iter()
                .map(|&[ii, jj, ij]| x(ii) + x(jj) - 2.0 * x(ij))
                .collect(),
        )
    }
}

/// The sparse engine of a weighted-edge Laplacian field `L(w) + gamma I` over fixed edges
/// (MEU's multipliers, MPME's pair weights), built on first use: the grounded engine and
/// the slots of each edge's entries. A cache: equal to any other, never serialised.
#[derive(Clone, Debug, Default)]
pub struct EdgeEngine {
    cell: OnceLock<(GroundedLaplacian, EdgeSlots)>,
    ordering: SparseOrdering,
}

impl PartialEq for EdgeEngine {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl EdgeEngine {
    /// An engine (not yet built) that will use `ordering`.
    pub fn with_ordering(ordering: SparseOrdering) -> Self {
        EdgeEngine {
            cell: OnceLock::new(),
            ordering,
        }
    }

    /// The engine for `edges` over `n` points (built on the first call; later calls must
    /// pass the same field), ordered by approximate minimum degree.
    ///
    /// # Errors
    /// As [`GroundedLaplacian::new`].
    pub fn get(
        &self,
        n: usize,
        edges: &[(usize, usize)],
        gamma: f64,
    ) -> Result<&GroundedLaplacian> {
        self.get_over(n, edges, gamma, None)
    }

    /// [`EdgeEngine::get`] for a field over `points` (row `i`: point `i`), which the
    /// engine's [`SparseOrdering`] may use.
    ///
    /// # Errors
    /// As [`GroundedLaplacian::with_ordering`].
    pub fn get_over(
        &self,
        n: usize,
        edges: &[(usize, usize)],
        gamma: f64,
        points: Option<&DMatrix<f64>>,
    ) -> Result<&GroundedLaplacian> {
        if let Some((engine, _)) = self.cell.get() {
            return Ok(engine);
        }
        let pattern = Self::laplacian(n, edges, &vec![1.0; edges.len()]);
        let candidates = self.ordering.candidates(n, points);
        let engine = GroundedLaplacian::with_orderings(&pattern, gamma, None, &candidates)?;
        let slots = engine.edge_slots(edges)?;
        Ok(&self.cell.get_or_init(|| (engine, slots)).0)
    }

    /// The factor of `L(weights) + gamma I` (module docs).
    ///
    /// # Errors
    /// As [`GroundedLaplacian::factor`].
    pub fn factor(
        &self,
        n: usize,
        edges: &[(usize, usize)],
        weights: &[f64],
        gamma: f64,
        context: &str,
    ) -> Result<FieldFactor> {
        self.get(n, edges, gamma)?
            .factor(&Self::laplacian(n, edges, weights), context)
    }

    /// `k_ii + k_jj - 2 k_ij` for every edge, read from the slots when `covariance` is
    /// this engine's selected inverse (`None` otherwise).
    pub fn contrasts(&self, covariance: &Covariance) -> Option<Vec<f64>> {
        self.cell.get()?.1.contrasts(covariance)
    }

    fn laplacian(n: usize, edges: &[(usize, usize)], weights: &[f64]) -> CsrMatrix {
        Laplacian::new(n).sparse(edges.iter().zip(weights).map(|(&(i, j), &w)| (i, j, w)))
    }
}

/// Refuses a sparse factorisation whose factor and selected inverse (predicted by the
/// symbolic analysis) exceed `limit`.
fn check_memory(analysis: &SparseSymbolic, limit: MemoryLimit) -> Result<()> {
    let n = analysis.dim();
    limit.check_proportional(
        "the sparse random field",
        n,
        analysis.predicted_bytes(),
        format!(
            "its sparse Cholesky factor and selected inverse: {:.0} values per point after \
             the fill-reducing ordering, where a 2-D manifold's 10-NN graph needs about 40",
            analysis.factor_len() as f64 / n as f64
        ),
        "a smaller k, or reduce the data to fewer, less noisy features first: a graph \
         without low-dimensional structure fills the factor",
    )
}

/// The grounded matrix `G` of a fixed pattern of `M`, analysed once; each
/// [`GroundedLaplacian::factor`] only refills its numbers.
#[derive(Clone, Debug)]
pub struct GroundedLaplacian {
    n: usize,
    gamma: f64,
    /// The point whose row and column are removed (the ground node takes its index).
    ground: usize,
    /// `M`'s pattern, to check the matrices factorised.
    m_indptr: Vec<usize>,
    m_indices: Vec<usize>,
    /// The values of `G`'s lower triangle, in the analysis's order
    /// ([`SparseSymbolic::factorise_lower`]), are `constant[k] + m[from[k]]`
    /// (`from[k] = NONE`: constant only).
    from: Vec<usize>,
    constant: Vec<f64>,
    analysis: SparseSymbolic,
    /// Whether `analysis` is the nested dissection.
    dissected: bool,
}

const NONE: usize = usize::MAX;

impl GroundedLaplacian {
    /// The engine for `M + gamma I` over the pattern of `m` (square, symmetric, `M 1 = 0`;
    /// its values are not read). The first point is grounded. After the symbolic analysis,
    /// and before any numeric work, the factor and selected inverse it predicts are checked
    /// against the memory `limit` (by default the machine's, or `UNFOLD_MAX_MEMORY`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-square `m`, `n < 2`, or `gamma` negative or
    /// not finite; errors of the symbolic analysis; [`Error::OverMemoryLimit`] with the
    /// predicted size when the factor would not fit.
    pub fn new(m: &CsrMatrix, gamma: f64, limit: Option<&MemoryLimit>) -> Result<Self> {
        Self::with_ordering(m, gamma, limit, FillOrdering::Amd)
    }

    /// [`GroundedLaplacian::new`] under a fill-reducing `ordering`. For a nested dissection
    /// the points are `M`'s: the ground node, which takes the grounded point's index and
    /// (with `gamma > 0`) is joined to every point, is a dense row that the dissection
    /// numbers last, whatever the grounded point's coordinates.
    ///
    /// # Errors
    /// As [`GroundedLaplacian::new`], and as [`SparseSymbolic::analyse_with`] for the
    /// points.
    pub fn with_ordering(
        m: &CsrMatrix,
        gamma: f64,
        limit: Option<&MemoryLimit>,
        ordering: FillOrdering<'_>,
    ) -> Result<Self> {
        Self::with_orderings(m, gamma, limit, &[ordering])
    }

    /// [`GroundedLaplacian::with_ordering`] under whichever of `orderings` gives the factor
    /// whose factorisation needs the fewest operations
    /// ([`SparseSymbolic::factor_flops`]; the first of equals).
    ///
    /// # Errors
    /// As [`GroundedLaplacian::with_ordering`]; [`Error::InvalidParameter`] if `orderings`
    /// is empty.
    pub fn with_orderings(
        m: &CsrMatrix,
        gamma: f64,
        limit: Option<&MemoryLimit>,
        orderings: &[FillOrdering<'_>],
    ) -> Result<Self> {
        let n = m.nrows();
        if m.ncols() != n || n < 2 {
            return Err(Error::invalid(
                "the field's Laplacian",
                format!(
                    "needs a square matrix over at least 2 points, got {n} x {}",
                    m.ncols()
                ),
            ));
        }
        if !(gamma.is_finite() && gamma >= 0.0) {
            return Err(Error::invalid(
                "gamma",
                format!("must be finite and >= 0, got {gamma}"),
            ));
        }
        let ground = 0;
        let (indptr, indices, _) = m.parts();
        let mut g_indptr = Vec::with_capacity(n + 1);
        let mut g_indices = Vec::with_capacity(indices.len() + 2 * n);
        let (mut from, mut constant) = (Vec::new(), Vec::new());
        g_indptr.push(0);
        for i in 0..n {
            let mut row: Vec<(usize, usize, f64)> = Vec::new();
            if i == ground {
                if gamma > 0.0 {
                    row.extend((0..n).map(|j| {
                        let v = if j == i { n as f64 * gamma } else { -gamma };
                        (j, NONE, v)
                    }));
                } else {
                    row.push((i, NONE, 1.0));
                }
            } else {
                if gamma > 0.0 {
                    row.push((ground, NONE, -gamma));
                }
                let mut diagonal = false;
                for (p, &j) in indices
                    .iter()
                    .enumerate()
                    .take(indptr[i + 1])
                    .skip(indptr[i])
                {
                    if j == ground {
                        continue;
                    }
                    diagonal |= j == i;
                    row.push((j, p, if j == i { gamma } else { 0.0 }));
                }
                if !diagonal {
                    row.push((i, NONE, gamma));
                }
                row.sort_unstable_by_key(|e| e.0);
            }
            // The analysis's lower-triangle order: row i's diagonal, then its upper part.
            let lower = row
                .iter()
                .filter(|e| e.0 == i)
                .chain(row.iter().filter(|e| e.0 > i));
            for &(_, f, c) in lower {
                from.push(f);
                constant.push(c);
            }
            g_indices.extend(row.iter().map(|e| e.0));
            g_indptr.push(g_indices.len());
        }
        let values = vec![1.0; g_indices.len()];
        let pattern = CsrMatrix::from_sorted_rows(n, n, g_indptr, g_indices, values)?;
        let mut best: Option<(SparseSymbolic, bool)> = None;
        for &ordering in orderings {
            let analysis =
                SparseSymbolic::analyse_with(&pattern, ordering, "the grounded field's precision")?;
            if best
                .as_ref()
                .is_none_or(|(b, _)| analysis.factor_flops() < b.factor_flops())
            {
                let dissected = matches!(ordering, FillOrdering::Dissection(_));
                best = Some((analysis, dissected));
            }
        }
        let Some((analysis, dissected)) = best else {
            return Err(Error::invalid(
                "the field's ordering",
                "no fill-reducing ordering was given; pass at least one",
            ));
        };
        check_memory(&analysis, MemoryLimit::resolve(limit)?)?;
        Ok(GroundedLaplacian {
            n,
            gamma,
            ground,
            m_indptr: indptr.to_vec(),
            m_indices: indices.to_vec(),
            from,
            constant,
            analysis,
            dissected,
        })
    }

    /// The symbolic analysis of `G` (its factor's size, the memory it will need).
    pub fn analysis(&self) -> &SparseSymbolic {
        &self.analysis
    }

    /// Whether the analysis kept is the nested dissection (otherwise minimum degree).
    pub fn dissected(&self) -> bool {
        self.dissected
    }

    /// The slots of `X_ii`, `X_jj` and `X_ij` for each edge `(i, j)` in the selected
    /// inverse (`None` for the grounded point, whose entries are 0), so that an evaluation
    /// reads each edge's `X_ii + X_jj - 2 X_ij` without a search ([`EdgeSlots::contrasts`]).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an edge off `M`'s pattern.
    pub fn edge_slots(&self, edges: &[(usize, usize)]) -> Result<EdgeSlots> {
        let slot = |i: usize, j: usize| -> Result<Option<usize>> {
            if i == self.ground || j == self.ground {
                return Ok(None);
            }
            self.analysis.slot(i, j).map(Some).ok_or_else(|| {
                Error::invalid(
                    "the field's edges",
                    format!("({i}, {j}) is not on the pattern"),
                )
            })
        };
        let slots = edges
            .iter()
            .map(|&(i, j)| Ok([slot(i, i)?, slot(j, j)?, slot(i, j)?]))
            .collect::<Result<_>>()?;
        Ok(EdgeSlots {
            analysis: self.analysis.clone(),
            slots,
        })
    }

    /// The lower triangle of the grounded matrix `G` for `m` (the pattern given to
    /// [`GroundedLaplacian::new`]), in the analysis's order.
    fn grounded(&self, m: &CsrMatrix) -> Result<Vec<f64>> {
        let (indptr, indices, values) = m.parts();
        if indptr != self.m_indptr || indices != self.m_indices {
            return Err(Error::invalid(
                "the field's Laplacian",
                "its sparsity pattern differs from the one the engine was built for",
            ));
        }
        Ok(self
            .from
            .iter()
            .zip(&self.constant)
            .map(|(&f, &c)| if f == NONE { c } else { c + values[f] })
            .collect())
    }

    /// The factor of the field `M + gamma I`: `log |M + gamma I|` (the pseudo-determinant
    /// when `gamma = 0`) and, on demand, the grounded covariance (module docs).
    ///
    /// # Errors
    /// [`Error::NotPositiveDefinite`] when `M + gamma I` is not positive definite (with
    /// `gamma = 0`: when `M`'s graph is disconnected), a pattern that differs.
    pub fn factor(&self, m: &CsrMatrix, context: &str) -> Result<FieldFactor> {
        let factor = self.analysis.factorise_lower(&self.grounded(m)?, context)?;
        let log_det = if self.gamma > 0.0 {
            factor.log_det()
        } else {
            factor.log_det() + (self.n as f64).ln()
        };
        Ok(FieldFactor::grounded(factor, log_det, self.ground))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{GaussianRandomField, Solver};
    use crate::grf::meu::MeuField;
    use nalgebra::DMatrix;
    use unfold_graph::{knn, NeighbourGraph, Symmetrisation, Weighting};

    fn edges_of(g: &NeighbourGraph) -> Vec<(usize, usize)> {
        g.edges().iter().map(|&(i, j, _)| (i, j)).collect()
    }

    fn knn_edges(y: &DMatrix<f64>, k: usize) -> Vec<(usize, usize)> {
        let nn = knn(y, k).unwrap();
        edges_of(&NeighbourGraph::from_knn(&nn, Symmetrisation::Union, Weighting::Binary).unwrap())
    }

    fn fields(
        y: &DMatrix<f64>,
        edges: &[(usize, usize)],
        gamma: f64,
        ordering: SparseOrdering,
    ) -> [MeuField; 2] {
        [Solver::Sparse, Solver::Dense].map(|s| {
            MeuField::new(y, edges.to_vec(), gamma)
                .with_solver(s)
                .with_ordering(ordering)
        })
    }

    fn multipliers(m: usize, seed: u64) -> Vec<f64> {
        (0..m)
            .map(|e| 0.1 + 10.0 * (((e as u64 * 2654435761 + seed) % 1000) as f64 / 1000.0))
            .collect()
    }

    /// The likelihood to 1e-10 and the gradient to 1e-8 relative, sparse against dense, for
    /// gamma = 1e-4 and 0, under both fill-reducing orderings (the dissection forced at
    /// this small n, the ground node numbered last).
    fn assert_paths_agree(y: &DMatrix<f64>, edges: &[(usize, usize)]) {
        let lambda = multipliers(edges.len(), 3);
        let orderings = [SparseOrdering::Amd, SparseOrdering::Dissection];
        for (gamma, ordering) in [1e-4, 0.0]
            .into_iter()
            .flat_map(|g| orderings.map(|o| (g, o)))
        {
            let [sparse, dense] = fields(y, edges, gamma, ordering);
            if ordering == SparseOrdering::Dissection && gamma > 0.0 {
                let analysis = sparse.engine().unwrap().analysis();
                assert_eq!(
                    analysis.position(0),
                    y.nrows() - 1,
                    "the ground node is last"
                );
            }
            let (ls, ld) = (
                sparse.log_likelihood(&lambda).unwrap().value,
                dense.log_likelihood(&lambda).unwrap().value,
            );
            assert!(
                (ls - ld).abs() < 1e-10 * ld.abs(),
                "gamma {gamma}: {ls} vs {ld}"
            );
            let (mut gs, mut gd) = (vec![0.0; edges.len()], vec![0.0; edges.len()]);
            sparse.log_likelihood_gradient(&lambda, &mut gs).unwrap();
            dense.log_likelihood_gradient(&lambda, &mut gd).unwrap();
            let scale = gd.iter().fold(0.0f64, |m, g| m.max(g.abs()));
            let worst = gs
                .iter()
                .zip(&gd)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                worst < 1e-8 * scale,
                "gamma {gamma}: gradient off by {worst} of {scale}"
            );
        }
    }

    #[test]
    fn sparse_and_dense_paths_agree() {
        // A Swiss roll's kNN graph.
        let roll = unfold_data::synthetic::swiss_roll(500, 0.05, 1)
            .unwrap()
            .points;
        let (roll, _) = unfold_data::centre(&roll);
        assert_paths_agree(&roll, &knn_edges(&roll, 8));
        // Random points in 6 dimensions: a graph with no low-dimensional structure.
        let mut state = 11u64;
        let random = DMatrix::from_fn(400, 6, |_, _| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        });
        assert_paths_agree(&random, &knn_edges(&random, 5));
        // A given epsilon-ball graph.
        let ball = NeighbourGraph::epsilon_ball(&roll, 1.6, Weighting::Binary).unwrap();
        ball.ensure_connected().unwrap();
        assert_paths_agree(&roll, &edges_of(&ball));
    }

    /// On a cycle with equal multipliers `lambda` the eigenvalues of `L` are
    /// `2 lambda (1 - cos(2 pi m / n))`, so `log |L + gamma I|` and the expected squared
    /// distance along each edge, `p (2/n) sum_m (1 - cos) / (2 lambda (1 - cos) + gamma)`,
    /// are known in closed form. The sparse path meets them to 1e-12 at gamma = 1e-4 and at
    /// gamma = 0 (pseudo-determinant, effective resistance `(n - 1) / (n lambda)`): no
    /// digit is lost to the constant mode `1 / (n gamma)`.
    #[test]
    fn cycle_matches_closed_form_without_losing_digits() {
        let (n, lambda) = (2000usize, 0.7);
        let y = DMatrix::from_fn(n, 1, |i, _| (i as f64).sin());
        let edges: Vec<(usize, usize)> = (0..n)
            .map(|i| (i.min((i + 1) % n), i.max((i + 1) % n)))
            .collect();
        for gamma in [1e-4, 0.0] {
            let field = MeuField::new(&y, edges.clone(), gamma).with_solver(Solver::Sparse);
            let theta = vec![lambda; n];
            let (mut log_det, mut resistance) = (0.0, 0.0);
            for m in 0..n {
                let c = 1.0 - (std::f64::consts::TAU * m as f64 / n as f64).cos();
                let mu = 2.0 * lambda * c + gamma;
                if mu > 1e-12 {
                    log_det += mu.ln();
                    resistance += 2.0 * c / (n as f64 * mu);
                }
            }
            let got = field.factor(&theta).unwrap().log_det();
            assert!(
                (got - log_det).abs() < 1e-12 * log_det.abs(),
                "{got} vs {log_det}"
            );
            if gamma == 0.0 {
                let closed = (n as f64 - 1.0) / (n as f64 * lambda);
                assert!((resistance - closed).abs() < 1e-12 * closed);
            }
            for (e, d) in field
                .expected_sq_dists(&theta)
                .unwrap()
                .into_iter()
                .enumerate()
            {
                assert!(
                    (d - resistance).abs() < 1e-12 * resistance,
                    "gamma {gamma}, edge {e}: {d} vs {resistance}"
                );
            }
        }
    }

    #[test]
    fn sparse_gradient_matches_finite_differences() {
        let roll = unfold_data::synthetic::swiss_roll(40, 0.05, 2)
            .unwrap()
            .points;
        let (y, _) = unfold_data::centre(&roll);
        let edges = knn_edges(&y, 4);
        let theta = multipliers(edges.len(), 5);
        for gamma in [1e-2, 0.0] {
            let field = MeuField::new(&y, edges.clone(), gamma).with_solver(Solver::Sparse);
            let mut g = vec![0.0; theta.len()];
            field.log_likelihood_gradient(&theta, &mut g).unwrap();
            for e in (0..theta.len()).step_by(7) {
                let h = 1e-5 * theta[e];
                let at = |d: f64| {
                    let mut t = theta.clone();
                    t[e] += d;
                    field.log_likelihood(&t).unwrap().value
                };
                let fd = (at(h) - at(-h)) / (2.0 * h);
                assert!(
                    (fd - g[e]).abs() < 1e-6 * g[e].abs().max(1.0),
                    "edge {e}: {fd} vs {}",
                    g[e]
                );
            }
        }
    }

    /// Given several orderings, the engine keeps the cheaper factorisation; an empty
    /// list is refused.
    #[test]
    fn the_smaller_of_two_orderings_is_kept() {
        let roll = unfold_data::synthetic::swiss_roll(2000, 0.5, 1)
            .unwrap()
            .points;
        let field = MeuField::new(&roll, knn_edges(&roll, 10), 1e-4);
        let pattern = field.laplacian(&vec![1.0; field.edges().len()], 0.0);
        let amd =
            GroundedLaplacian::with_ordering(&pattern, 1e-4, None, FillOrdering::Amd).unwrap();
        let nd = FillOrdering::Dissection(&roll);
        let dissected = GroundedLaplacian::with_ordering(&pattern, 1e-4, None, nd).unwrap();
        let both =
            GroundedLaplacian::with_orderings(&pattern, 1e-4, None, &[FillOrdering::Amd, nd])
                .unwrap();
        let (a, d) = (
            amd.analysis().factor_flops(),
            dissected.analysis().factor_flops(),
        );
        assert_ne!(a, d);
        assert_eq!(both.analysis().factor_flops(), a.min(d));
        assert_eq!(both.dissected(), d < a);
        assert!(!amd.dissected() && dissected.dissected());
        assert!(GroundedLaplacian::with_orderings(&pattern, 1e-4, None, &[]).is_err());
        // Auto tries both from DISSECTION_MIN_N points on, and only with points.
        let auto = SparseOrdering::Auto;
        assert_eq!(auto.candidates(DISSECTION_MIN_N - 1, Some(&roll)).len(), 1);
        assert_eq!(auto.candidates(DISSECTION_MIN_N, Some(&roll)).len(), 2);
        assert_eq!(auto.candidates(DISSECTION_MIN_N, None).len(), 1);
    }

    /// A factor that would not fit is refused after the analysis, with its size per point.
    #[test]
    fn a_factor_over_the_memory_limit_is_refused() {
        let roll = unfold_data::synthetic::swiss_roll(300, 0.05, 1)
            .unwrap()
            .points;
        let field = MeuField::new(&roll, knn_edges(&roll, 10), 1e-4);
        let pattern = field.laplacian(&vec![1.0; field.edges().len()], 0.0);
        let small = MemoryLimit::given(10_000, "--max-memory");
        match GroundedLaplacian::new(&pattern, 1e-4, Some(&small)) {
            Err(Error::OverMemoryLimit(r)) => {
                let text = r.to_string();
                assert!(
                    text.contains("values per point") && text.contains("smaller k"),
                    "{text}"
                );
                assert!(r.needed.0 > 10_000 && r.max_n < 300);
                assert_eq!(r.scaling, unfold_core::Scaling::Proportional);
                assert!(
                    text.contains(&format!("{} points or more fit", r.max_n)),
                    "{text}"
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        let enough = MemoryLimit::given(1 << 30, "--max-memory");
        assert!(GroundedLaplacian::new(&pattern, 1e-4, Some(&enough)).is_ok());
    }

    #[test]
    fn a_disconnected_pseudo_inverse_and_bad_settings_are_refused() {
        // Two separate paths: with gamma = 0 the pseudo-inverse field is improper.
        let y = DMatrix::from_fn(10, 2, |i, j| (i * (j + 1)) as f64);
        let edges = vec![
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (5, 6),
            (6, 7),
            (7, 8),
            (8, 9),
        ];
        let field = MeuField::new(&y, edges.clone(), 0.0).with_solver(Solver::Sparse);
        assert!(matches!(
            field.log_likelihood(&[1.0; 8]),
            Err(Error::NotPositiveDefinite { .. })
        ));
        let proper = MeuField::new(&y, edges, 0.1).with_solver(Solver::Sparse);
        assert!(proper.log_likelihood(&[1.0; 8]).is_ok());
        let m = CsrMatrix::from_triplets(1, 1, &[(0, 0, 1.0)]);
        assert!(GroundedLaplacian::new(&m, 0.1, None).is_err());
        let m = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, 1.0)]);
        assert!(GroundedLaplacian::new(&m, f64::NAN, None).is_err());
        let engine = GroundedLaplacian::new(&m, 0.1, None).unwrap();
        let other = CsrMatrix::from_triplets(
            2,
            2,
            &[(0, 0, 1.0), (0, 1, -1.0), (1, 0, -1.0), (1, 1, 1.0)],
        );
        assert!(matches!(
            engine.factor(&other, "t"),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
