//! Laplacian eigenmaps (Belkin & Niyogi 2003; spec `meu_alle_drill.md` §3).
//!
//! On a connected kNN graph with weights `W` (0/1 or heat kernel), degree matrix `D` and
//! Laplacian `L = D - W`, the embedding is given by the generalised eigenproblem
//! `L f = mu D f`: the eigenvectors of the q smallest non-zero `mu` (the constant vector
//! with `mu = 0` is dropped), normalised so that `F^T D F = I`.

use crate::method::{Checked, Declared, Field, Interval, ParamSpec, Rule, Settings};
use crate::traits::{check_fit_rows, Embedding};
use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};
use unfold_core::{Error, Observer, Result, Silent};
use unfold_graph::{GraphSpec, NeighbourGraph, PointRows, Weighting};
use unfold_linalg::{fix_signs, smallest_generalized_eigenpairs, SymMatrix};

/// Edge weights of Laplacian eigenmaps.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum LeWeights {
    /// 1 on every edge ("simple-minded" weights).
    Binary,
    /// The heat kernel of `unfold_graph::Weighting::Heat`; `sigma = None` uses the mean
    /// distance from a point to its k nearest neighbours.
    Heat { sigma: Option<f64> },
}

/// The words of the parameter `weights`: [`LeWeights`] without the heat kernel's width.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Binary,
    Heat,
}

crate::choice!(Kernel { Binary = "binary", Heat = "heat" });

impl LeWeights {
    /// The kernel's word and the heat kernel's width (`None` for binary weights).
    fn parts(&self) -> (Kernel, Option<f64>) {
        match *self {
            LeWeights::Binary => (Kernel::Binary, None),
            LeWeights::Heat { sigma } => (Kernel::Heat, sigma),
        }
    }
}

/// Laplacian eigenmaps' parameters `weights` (binary or heat) and `sigma` (the heat
/// kernel's width, ignored with binary weights), held together by [`LeWeights`].
impl Field for LeWeights {
    fn field_specs(_: &'static str, _: &Rule, default: &Self) -> Vec<ParamSpec> {
        let weights =
            Rule::help("le: edge weights, binary or the heat kernel exp(-d^2 / (2 sigma^2))");
        let sigma = Rule::auto("the mean edge length", "le: width of the heat kernel")
            .range(Interval::POSITIVE);
        let (kernel, width) = default.parts();
        [
            Kernel::field_specs("weights", &weights, &kernel),
            Option::<f64>::field_specs("sigma", &sigma, &width),
        ]
        .concat()
    }

    fn read_into(&mut self, _: &'static str, settings: &Settings) -> Result<()> {
        let (mut kernel, mut sigma) = self.parts();
        kernel.read_into("weights", settings)?;
        sigma.read_into("sigma", settings)?;
        *self = match kernel {
            Kernel::Binary => LeWeights::Binary,
            Kernel::Heat => LeWeights::Heat { sigma },
        };
        Ok(())
    }

    fn write(&self, _: &'static str, settings: &mut Settings) {
        let (kernel, sigma) = self.parts();
        kernel.write("weights", settings);
        sigma.write("sigma", settings);
    }
}

crate::params! {
    /// Settings of [`LaplacianEigenmaps`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct LaplacianEigenmapsParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
        /// The edge weights (`weights`, and `sigma` for the heat kernel).
        pub weights: LeWeights = LeWeights::Binary => Rule::group(),
    }
}

impl LaplacianEigenmapsParams {
    /// Binary weights on a union kNN graph.
    pub fn new(dim: usize, k: usize) -> Self {
        LaplacianEigenmapsParams {
            dim,
            graph: GraphSpec::knn(k),
            ..LaplacianEigenmapsParams::default()
        }
    }

    /// Fits Laplacian eigenmaps to the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<LaplacianEigenmaps> {
        self.clone().check()?.fit(y, &Silent)
    }

    /// Laplacian eigenmaps on a given connected graph (an epsilon-ball graph, a graph
    /// learned by DRILL or MPME) instead of the kNN graph: with binary weights the graph
    /// keeps its own edge weights; with heat weights they are put on its edges (`sigma`
    /// by default the mean edge length).
    ///
    /// # Errors
    /// Invalid `y` or dimension, a graph on a different number of points, a disconnected
    /// graph.
    pub fn fit_graph(
        &self,
        y: &DMatrix<f64>,
        graph: &NeighbourGraph,
    ) -> Result<LaplacianEigenmaps> {
        self.clone().check()?.fit_graph(y, graph)
    }

    /// The generalised eigenproblem on a given connected graph: the q eigenvectors after
    /// the constant one, and their eigenvalues `mu`.
    pub fn embed(graph: &NeighbourGraph, dim: usize) -> Result<(DMatrix<f64>, DVector<f64>)> {
        graph.ensure_connected()?;
        let laplacian = graph.laplacian_sparse();
        let eig = smallest_generalized_eigenpairs(
            SymMatrix::Sparse(&laplacian),
            &graph.degrees(),
            dim + 1,
        )?;
        let mut coords = eig.vectors.columns(1, dim).into_owned();
        fix_signs(&mut coords);
        Ok((coords, eig.values.rows(1, dim).into_owned()))
    }
}

impl Checked<LaplacianEigenmapsParams> {
    /// [`LaplacianEigenmapsParams::fit`] with the parameters checked, on dense or sparse
    /// points (which need only their neighbours and the lengths of the graph's edges).
    pub fn fit<'p>(
        &self,
        y: impl Into<PointRows<'p>>,
        observer: &dyn Observer,
    ) -> Result<LaplacianEigenmaps> {
        let y = y.into();
        check_fit_rows(y, self.dim, "Laplacian eigenmaps")?;
        let (nn, binary) =
            self.graph
                .build(y, Weighting::Binary, "Laplacian eigenmaps", observer)?;
        let graph = match self.weights {
            LeWeights::Binary => binary,
            LeWeights::Heat { sigma } => {
                let sigma = match sigma {
                    Some(s) => s,
                    None => {
                        let all: Vec<f64> = nn.distances.iter().flatten().copied().collect();
                        all.iter().sum::<f64>() / all.len() as f64
                    }
                };
                binary.reweighted(y, Weighting::Heat { sigma })?
            }
        };
        self.on_graph(graph)
    }

    /// [`LaplacianEigenmapsParams::fit_graph`] with the parameters checked, on dense or
    /// sparse points.
    pub fn fit_graph<'p>(
        &self,
        y: impl Into<PointRows<'p>>,
        graph: &NeighbourGraph,
    ) -> Result<LaplacianEigenmaps> {
        let y = y.into();
        check_fit_rows(y, self.dim, "Laplacian eigenmaps")?;
        if graph.n() != y.n() {
            return Err(Error::DimensionMismatch(format!(
                "the graph has {} vertices but the data {} points",
                graph.n(),
                y.n()
            )));
        }
        match self.weights {
            LeWeights::Binary => self.on_graph(graph.clone()),
            LeWeights::Heat { sigma } => {
                let sigma = match sigma {
                    Some(s) => s,
                    None => mean_edge_length(y, graph)?,
                };
                self.on_graph(graph.reweighted(y, Weighting::Heat { sigma })?)
            }
        }
    }

    fn on_graph(&self, graph: NeighbourGraph) -> Result<LaplacianEigenmaps> {
        LaplacianEigenmapsParams::embed(&graph, self.dim).map(|(coords, eigenvalues)| {
            LaplacianEigenmaps {
                coords,
                eigenvalues,
                graph,
            }
        })
    }
}

/// The mean Euclidean length of the edges of `g` on the points `y`.
fn mean_edge_length(y: PointRows<'_>, g: &NeighbourGraph) -> Result<f64> {
    let edges = g.edges();
    if edges.is_empty() {
        return Err(Error::invalid(
            "graph",
            "it has no edges; give a connected graph",
        ));
    }
    let lengths = y.distances(edges.iter().map(|&(i, j, _)| (i, j)))?;
    Ok(lengths.iter().sum::<f64>() / edges.len() as f64)
}

/// A fitted Laplacian eigenmap.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LaplacianEigenmaps {
    /// The generalised eigenvalues `mu` of the embedding axes, ascending.
    pub eigenvalues: DVector<f64>,
    graph: NeighbourGraph,
    coords: DMatrix<f64>,
}

impl LaplacianEigenmaps {
    /// Laplacian eigenmaps as a Gaussian random field (spec §3): the exact log-likelihood
    /// of the centred training data `y` under the precision `s Lhat + gamma I`, with the
    /// normalised Laplacian `Lhat = D^{-1/2} L D^{-1/2}` of the fitted graph (whose
    /// eigenproblem this embedding solves) fixed and the scale `s` fitted by maximum
    /// likelihood ([`crate::field::fixed_shape_evidence`]), comparable with MEU's and
    /// ALLE's likelihoods. `y` must be the data the model was fitted on; sparse points are
    /// centred implicitly ([`crate::field::centred_traces`]).
    pub fn field_evidence<'p>(
        &self,
        y: impl Into<PointRows<'p>>,
        gamma: f64,
    ) -> Result<unfold_core::Evidence> {
        let y = y.into();
        if y.n() != self.graph.n() {
            return Err(Error::DimensionMismatch(format!(
                "the model was fitted on {} points but {} were given",
                self.graph.n(),
                y.n()
            )));
        }
        let scale: Vec<f64> = self
            .graph
            .degrees()
            .iter()
            .map(|d| d.sqrt().recip())
            .collect();
        let shape = self.graph.laplacian_sparse().scale_symmetric(&scale);
        Ok(crate::field::fixed_shape_evidence_on(
            &shape,
            gamma,
            y,
            "Laplacian eigenmaps as a field",
        )?
        .1)
    }
}

impl Embedding for LaplacianEigenmaps {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    fn graph(&self) -> Option<&NeighbourGraph> {
        Some(&self.graph)
    }
}

/// Laplacian eigenmaps in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{Family, FitData, MethodInfo, Model, Points, Registered};
    use unfold_core::EvidenceKind;
    use unfold_core::Observer;

    impl Registered for LaplacianEigenmaps {
        type Params = LaplacianEigenmapsParams;

        fn info() -> MethodInfo {
            MethodInfo::new(
                "le",
                Family::Spectral,
                "Laplacian eigenmaps (evidence: the field s L + gamma I with \
                 s fitted)",
            )
            .evidence(EvidenceKind::LogLikelihood)
            .takes_graph()
            .sparse_points()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            data.y.with_rows(|y| match data.graph {
                None => p.fit(y, observer),
                Some(g) => p.fit_graph(y, g),
            })
        }
    }

    impl Model for LaplacianEigenmaps {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            matrix("the embedding", &self.coords, None, None)?;
            let (n, q) = self.coords.shape();
            vector("the eigenvalues", &self.eigenvalues, Some(q))?;
            graph("the graph", &self.graph, n)
        }

        /// The exact likelihood of the field with the eigenmap's Laplacian and a fitted
        /// scale, with MEU's base precision.
        fn evidence_on(&self, y: Points<'_>) -> Result<unfold_core::Evidence> {
            y.with_rows(|y| self.field_evidence(y, crate::field::DEFAULT_GAMMA))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn ring_embeds_as_a_circle() {
        // Points on a circle with k = 2: the graph is the cycle C_n, all degrees 2, so
        // mu_1 = mu_2 = 1 - cos(2 pi / n) and the eigenvectors are cos/sin of the angle.
        let n = 40;
        let y = DMatrix::from_fn(n, 3, |i, j| {
            let a = 2.0 * PI * i as f64 / n as f64;
            [a.cos(), a.sin(), 0.0][j]
        });
        let le = LaplacianEigenmapsParams::new(2, 2).fit(&y).unwrap();
        let expected = 1.0 - (2.0 * PI / n as f64).cos();
        for j in 0..2 {
            assert!(
                (le.eigenvalues[j] - expected).abs() < 1e-9,
                "{}",
                le.eigenvalues[j]
            );
        }
        let x = le.coords();
        let r0 = x.row(0).norm();
        for i in 0..n {
            assert!((x.row(i).norm() - r0).abs() < 1e-8);
        }
        // D-orthonormal: F^T D F = I with D = 2 I.
        let ftdf = x.tr_mul(x) * 2.0;
        assert!((ftdf - DMatrix::identity(2, 2)).norm() < 1e-8);
        // The same cycle given as an epsilon ball (radius just above the chord) embeds the
        // same way; a graph on other points is refused.
        let chord = 2.0 * (PI / n as f64).sin();
        let ball = NeighbourGraph::epsilon_ball(&y, 1.01 * chord, Weighting::Binary).unwrap();
        let params = LaplacianEigenmapsParams::new(2, 2);
        let given = params.fit_graph(&y, &ball).unwrap();
        assert!((&given.eigenvalues - &le.eigenvalues).amax() < 1e-12);
        let small =
            NeighbourGraph::epsilon_ball(&y.rows(0, 10).into_owned(), chord, Weighting::Binary)
                .unwrap();
        assert!(matches!(
            params.fit_graph(&y, &small),
            Err(Error::DimensionMismatch(_))
        ));
    }

    /// `weights` and `sigma` are read into one [`LeWeights`] and written back (a width
    /// without heat weights is ignored); a bad width is refused with its declared range.
    #[test]
    fn weights_and_sigma_are_one_field() {
        use crate::method::Value;
        let heat = Settings::new().with("weights", "heat").with("sigma", 0.5);
        let p = LaplacianEigenmapsParams::read(&heat).unwrap();
        assert_eq!(p.weights, LeWeights::Heat { sigma: Some(0.5) });
        assert_eq!(p.settings().get("sigma"), Some(&Value::Real(0.5)));
        let binary = LaplacianEigenmapsParams::read(&Settings::new().with("sigma", 0.5)).unwrap();
        assert_eq!(binary.weights, LeWeights::Binary);
        assert!(binary.settings().get("sigma").is_none());
        let err = LaplacianEigenmapsParams::new(2, 5)
            .weights(LeWeights::Heat { sigma: Some(-1.0) })
            .check()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value for `sigma`: expected a number in (0, inf), got -1"
        );
    }

    #[test]
    fn disconnected_graph_is_reported() {
        let y = DMatrix::from_fn(20, 2, |i, j| {
            if i < 10 {
                (i + j) as f64
            } else {
                1000.0 + (i * j) as f64
            }
        });
        let off = GraphSpec::knn(3).connect(unfold_graph::Connect::Off);
        match LaplacianEigenmapsParams::new(1, 3).graph(off).fit(&y) {
            Err(Error::DisconnectedGraph { components, .. }) => assert_eq!(components, 2),
            other => panic!("expected a disconnected graph, got {other:?}"),
        }
        // By default the halves are joined through their closest pair and embedded apart
        // along the one axis.
        let joined = LaplacianEigenmapsParams::new(1, 3).fit(&y).unwrap();
        let x = joined.coords();
        let (a, b) = (x.rows(0, 10), x.rows(10, 10));
        assert!(a.max() < b.min() || b.max() < a.min(), "{x}");
    }
}
