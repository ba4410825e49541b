//! Neighbourhood graphs for unfold.
//!
//! Points are the **rows** of an n x p matrix. The pipeline is: exact k-nearest neighbours
//! ([`knn`], kd-tree or blocked brute force, identical results), an undirected weighted
//! [`NeighbourGraph`] ([`Symmetrisation::Union`] by default, or [`Symmetrisation::Mutual`];
//! [`Weighting`] 0/1, heat kernel or edge length), then what the models need from it:
//! connected components, the Laplacian `L = diag(W 1) - W` (dense or CSR), minimum
//! spanning trees (of graphs, and [`euclidean_mst`] of a point set), shortest-path
//! distances, acyclic orderings, a depth-first order of a tree's nodes ([`tree_order`]), and
//! the ordering of points along a tree over centres ([`trajectory`]: pseudotime, branch
//! points, states).
//!
//! Conventions (DESIGN.md): one weight per unordered pair, stored in both directions; no
//! self loops; all weights finite and positive. See `docs/graph.md`.

mod brute;
mod components;
mod emst;
mod graph;
mod graph_spec;
mod kdtree;
mod knn;
mod laplacian;
mod mst;
mod order;
mod paths;
mod rows;
mod sparse;
pub mod trajectory;
mod tree_order;
mod union_find;
mod weights;

pub use components::{Components, JoiningEdges};
pub use emst::{distinct_rows, euclidean_mst, joining_edges};
pub use graph::NeighbourGraph;
pub use graph_spec::{Connect, GraphSpec};
pub use knn::{
    duplicate_pairs, knn, knn_later, knn_query, knn_query_with, knn_with, Knn, KnnAlgorithm,
    KD_TREE_MAX_DIM, MIN_TREE_QUERIES,
};
pub use laplacian::Laplacian;
pub use mst::{minimum_spanning_forest, minimum_spanning_tree, minimum_spanning_tree_dense};
pub use order::acyclic_parents;
pub use paths::{shortest_paths, shortest_paths_from};
pub use sparse::{
    distinct_rows_sparse, joining_edges_sparse, knn_query_sparse, knn_sparse, PointRows,
};
pub use tree_order::tree_order;
pub use weights::{Symmetrisation, Weighting};
