//! Isomap (Tenenbaum, de Silva & Langford 2000; spec `meu_alle_drill.md` §6).
//!
//! Geodesic distances `G` are shortest-path lengths on the kNN graph with Euclidean edge
//! lengths; the embedding is classical MDS of `G`: the top-q eigenpairs of
//! `B = -1/2 H (G o G) H`, `X = V Lambda^{1/2}`. A new point gets geodesic distances
//! `g_j = min_a (||y* - y_a|| + G_{a j})` through its k nearest training points `a`, and is
//! placed by the Nyström (Gower) formula. Only neighbours and their distances enter, so
//! sparse points are fitted as they are and kept sparse for new points.

use crate::method::{Checked, Declared, Rule, TrainingPoints};
use crate::traits::{check_dense_memory, check_fit_rows, Embedding, OutOfSample, Projection};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use unfold_core::{Observer, Result, Silent};
use unfold_graph::{
    shortest_paths, shortest_paths_from, GraphSpec, NeighbourGraph, PointRows, Weighting,
};
use unfold_linalg::CentredKernel;

crate::params! {
    /// Settings of [`Isomap`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct IsomapParams {
        pub dim: usize = 2 => Rule::at_least(1, "latent dimension"),
        pub graph: GraphSpec = GraphSpec::knn(10) => Rule::group(),
    }
}

impl IsomapParams {
    /// Isomap in `dim` dimensions on the union kNN graph with `k` neighbours.
    pub fn new(dim: usize, k: usize) -> Self {
        IsomapParams {
            dim,
            graph: GraphSpec::knn(k),
        }
    }

    /// Fits Isomap to the rows of `y`.
    pub fn fit(&self, y: &DMatrix<f64>) -> Result<Isomap> {
        self.clone().check()?.fit(y, &Silent)
    }
}

impl Checked<IsomapParams> {
    /// [`IsomapParams::fit`] with the parameters checked, on dense or sparse points.
    pub fn fit<'p>(&self, y: impl Into<PointRows<'p>>, observer: &dyn Observer) -> Result<Isomap> {
        let y = y.into();
        check_fit_rows(y, self.dim, "Isomap")?;
        // The geodesic distances (n x n) and the centred kernel's copy of them.
        check_dense_memory(
            "Isomap",
            y.n(),
            2.0,
            "le or lle (sparse kNN graphs, memory linear in n)",
        )?;
        let (_, graph) = self
            .graph
            .build(y, Weighting::Distance, "Isomap", observer)?;
        let mut g = shortest_paths(&graph)?;
        g.apply(|v| *v = -0.5 * *v * *v);
        let kernel = CentredKernel::new(g, self.dim, "geodesic distance matrix")?;
        Ok(Isomap {
            coords: kernel.coords(),
            kernel,
            k: self.graph.k,
            train: TrainingPoints::of(y),
            graph,
        })
    }
}

/// A fitted Isomap.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Isomap {
    pub kernel: CentredKernel,
    pub k: usize,
    train: TrainingPoints,
    graph: NeighbourGraph,
    coords: DMatrix<f64>,
}

/// [`Isomap`] as files before format version 5 hold it, with dense training points.
#[derive(Deserialize)]
struct IsomapV4 {
    kernel: CentredKernel,
    k: usize,
    train: DMatrix<f64>,
    graph: NeighbourGraph,
    coords: DMatrix<f64>,
}

impl Isomap {
    /// Geodesic distances from new points (rows) to every training point, through each new
    /// point's k nearest training points.
    pub fn geodesics_to(&self, y_new: &DMatrix<f64>) -> Result<DMatrix<f64>> {
        let nn = self.train.knn_query(y_new, self.k)?;
        let mut sources: Vec<usize> = nn.indices.iter().flatten().copied().collect();
        sources.sort_unstable();
        sources.dedup();
        let from = shortest_paths_from(&self.graph, &sources)?;
        let n = self.train.shape().0;
        let mut g = DMatrix::from_element(y_new.nrows(), n, f64::INFINITY);
        for m in 0..y_new.nrows() {
            for (&a, &d) in nn.indices[m].iter().zip(&nn.distances[m]) {
                let s = sources
                    .binary_search(&a)
                    .expect("every neighbour is a source");
                for j in 0..n {
                    let via = d + from[(s, j)];
                    if via < g[(m, j)] {
                        g[(m, j)] = via;
                    }
                }
            }
        }
        Ok(g)
    }
}

impl Embedding for Isomap {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    fn graph(&self) -> Option<&NeighbourGraph> {
        Some(&self.graph)
    }
}

impl OutOfSample for Isomap {
    fn project(&self, y_new: &DMatrix<f64>) -> Result<Projection> {
        let mut k_new = self.geodesics_to(y_new)?;
        k_new.apply(|v| *v = -0.5 * *v * *v);
        Ok(Projection::point(self.kernel.project(&k_new)))
    }
}

/// Isomap in the method registry ([`crate::registry`]).
mod registration {
    use super::*;
    use crate::method::{decode_whole, Family, FitData, MethodInfo, Model, Registered};
    use unfold_core::Observer;

    impl Registered for Isomap {
        type Params = IsomapParams;

        fn info() -> MethodInfo {
            MethodInfo::new(
                "isomap",
                Family::Spectral,
                "classical MDS of geodesic distances on the kNN graph",
            )
            .projects()
            .distinct_points()
            .sparse_points()
        }

        fn fit(p: &Checked<Self::Params>, data: &FitData, observer: &dyn Observer) -> Result<Self> {
            data.y.with_rows(|y| p.fit(y, observer))
        }

        /// Files before format version 5 hold the training points dense.
        fn from_payload(payload: &[u8], version: u32) -> Result<Self> {
            if version >= 5 {
                return decode_whole(payload, "model");
            }
            let old: IsomapV4 = decode_whole(payload, "model")?;
            Ok(Isomap {
                kernel: old.kernel,
                k: old.k,
                train: TrainingPoints::Dense(old.train),
                graph: old.graph,
                coords: old.coords,
            })
        }
    }

    impl Model for Isomap {
        fn validate(&self) -> Result<()> {
            use crate::method::validate::*;
            kernel(&self.kernel)?;
            let (n, q) = self.kernel.vectors.shape();
            self.train.validate("the training points", n)?;
            matrix("the embedding", &self.coords, Some(n), Some(q))?;
            graph("the graph", &self.graph, n)?;
            neighbours(self.k, n)
        }

        fn out_of_sample(&self) -> Option<&dyn crate::traits::OutOfSample> {
            Some(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrolls_an_arc() {
        // Points along a 3/4 circle arc: geodesic distances are arc lengths, so the 1-D
        // Isomap coordinate is an affine function of the arc parameter.
        let n = 60;
        let t: Vec<f64> = (0..n).map(|i| 4.5 * i as f64 / (n - 1) as f64).collect();
        let y = DMatrix::from_fn(n, 3, |i, j| [t[i].cos(), t[i].sin(), 0.1 * t[i]][j]);
        let iso = IsomapParams::new(1, 4).fit(&y).unwrap();
        let x: Vec<f64> = iso.coords().column(0).iter().copied().collect();
        let (mx, mt) = (
            x.iter().sum::<f64>() / n as f64,
            t.iter().sum::<f64>() / n as f64,
        );
        let cov: f64 = x.iter().zip(&t).map(|(a, b)| (a - mx) * (b - mt)).sum();
        let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
        let vt: f64 = t.iter().map(|b| (b - mt).powi(2)).sum();
        let rho = cov / (vx * vt).sqrt();
        assert!(rho.abs() > 0.9999, "correlation {rho}");
        // Projection of training points returns their coordinates.
        let proj = iso.project(&y).unwrap();
        assert!((proj.mean - iso.coords()).norm() < 1e-8 * iso.coords().norm());
    }
}
