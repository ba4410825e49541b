mod common;

use common::{random_edges, uniform};
use nalgebra::DMatrix;
use unfold_core::Error;
use unfold_graph::{
    acyclic_parents, knn, minimum_spanning_forest, minimum_spanning_tree,
    minimum_spanning_tree_dense, shortest_paths, shortest_paths_from, NeighbourGraph,
};

fn total(edges: &[(usize, usize, f64)]) -> f64 {
    edges.iter().map(|e| e.2).sum()
}

/// The least total weight over all spanning trees, by enumerating (n-1)-edge subsets.
fn brute_force_mst_weight(n: usize, edges: &[(usize, usize, f64)]) -> f64 {
    let m = edges.len();
    let mut best = f64::INFINITY;
    for mask in 0u32..(1 << m) {
        if mask.count_ones() as usize != n - 1 {
            continue;
        }
        let chosen: Vec<_> = (0..m)
            .filter(|&e| mask >> e & 1 == 1)
            .map(|e| edges[e])
            .collect();
        let g = NeighbourGraph::from_edges(n, &chosen).unwrap();
        if g.components().count == 1 {
            best = best.min(total(&chosen));
        }
    }
    best
}

#[test]
fn kruskal_matches_exhaustive_search_and_prim() {
    let mut checked = 0;
    for seed in 0..40 {
        let n = 6;
        let edges = random_edges(n, 0.6, seed);
        let g = NeighbourGraph::from_edges(n, &edges).unwrap();
        if g.components().count > 1 {
            assert!(matches!(
                minimum_spanning_tree(&g),
                Err(Error::DisconnectedGraph { .. })
            ));
            let f = minimum_spanning_forest(&g);
            assert_eq!(f.n_edges(), n - g.components().count);
            assert_eq!(f.components(), g.components());
            continue;
        }
        checked += 1;
        let t = minimum_spanning_tree(&g).unwrap();
        assert_eq!(t.n_edges(), n - 1);
        assert_eq!(t.components().count, 1);
        assert!(t.edges().iter().all(|&(i, j, w)| g.weight(i, j) == Some(w)));
        let best = brute_force_mst_weight(n, &edges);
        assert!((total(&t.edges()) - best).abs() < 1e-12, "seed {seed}");
        // Prim on the dense matrix, absent edges far heavier than any tree.
        let mut d = DMatrix::from_element(n, n, 1e3);
        for &(i, j, w) in &edges {
            d[(i, j)] = w;
            d[(j, i)] = w;
        }
        d.fill_diagonal(0.0);
        let prim = minimum_spanning_tree_dense(&d).unwrap();
        assert_eq!(prim.len(), n - 1);
        assert!((total(&prim) - best).abs() < 1e-12);
    }
    assert!(checked >= 10);
}

#[test]
fn kruskal_and_prim_agree_on_complete_euclidean_graphs() {
    let y = uniform(60, 3, 8);
    let mut d = DMatrix::zeros(60, 60);
    let mut edges = Vec::new();
    for i in 0..60 {
        for j in i + 1..60 {
            let w = (y.row(i) - y.row(j)).norm();
            d[(i, j)] = w;
            d[(j, i)] = w;
            edges.push((i, j, w));
        }
    }
    let g = NeighbourGraph::from_edges(60, &edges).unwrap();
    let t = minimum_spanning_tree(&g).unwrap();
    let prim = minimum_spanning_tree_dense(&d).unwrap();
    // Distinct weights: the tree is unique, so the edge sets agree exactly.
    assert_eq!(t.edges(), prim);
    assert_eq!(
        minimum_spanning_tree_dense(&DMatrix::zeros(1, 1)).unwrap(),
        vec![]
    );
}

#[test]
fn dense_mst_rejects_bad_matrices() {
    let mut d = DMatrix::from_element(3, 3, 1.0);
    d.fill_diagonal(0.0);
    assert!(minimum_spanning_tree_dense(&d).is_ok());
    d[(0, 2)] = 2.0;
    assert!(matches!(
        minimum_spanning_tree_dense(&d),
        Err(Error::InvalidParameter { .. })
    ));
    d[(2, 0)] = 2.0;
    d[(1, 2)] = -1.0;
    d[(2, 1)] = -1.0;
    assert!(matches!(
        minimum_spanning_tree_dense(&d),
        Err(Error::InvalidParameter { .. })
    ));
    d[(1, 2)] = f64::NAN;
    assert!(matches!(
        minimum_spanning_tree_dense(&d),
        Err(Error::NonFinite { .. })
    ));
    assert!(minimum_spanning_tree_dense(&DMatrix::zeros(2, 3)).is_err());
    assert!(matches!(
        minimum_spanning_tree_dense(&DMatrix::zeros(0, 0)),
        Err(Error::Empty(_))
    ));
}

fn floyd_warshall(n: usize, edges: &[(usize, usize, f64)]) -> DMatrix<f64> {
    let mut d = DMatrix::from_element(n, n, f64::INFINITY);
    d.fill_diagonal(0.0);
    for &(i, j, w) in edges {
        d[(i, j)] = w;
        d[(j, i)] = w;
    }
    for m in 0..n {
        for i in 0..n {
            for j in 0..n {
                let via = d[(i, m)] + d[(m, j)];
                if via < d[(i, j)] {
                    d[(i, j)] = via;
                }
            }
        }
    }
    d
}

#[test]
fn dijkstra_matches_floyd_warshall() {
    for seed in 0..20 {
        let n = 25;
        let prob = if seed % 2 == 0 { 0.08 } else { 0.3 };
        let edges = random_edges(n, prob, 100 + seed);
        let g = NeighbourGraph::from_edges(n, &edges).unwrap();
        let fw = floyd_warshall(n, &edges);
        let sources: Vec<usize> = (0..n).rev().collect();
        let from = shortest_paths_from(&g, &sources).unwrap();
        for (r, &s) in sources.iter().enumerate() {
            for j in 0..n {
                let (a, b) = (from[(r, j)], fw[(s, j)]);
                assert!(
                    a == b || (a - b).abs() < 1e-12 * b,
                    "seed {seed}: {s}->{j} {a} vs {b}"
                );
            }
        }
        match shortest_paths(&g) {
            Ok(all) => {
                assert_eq!(g.components().count, 1);
                assert_eq!(all, all.transpose());
                assert!((&all - &fw).abs().max() < 1e-12 * fw.max());
            }
            Err(Error::DisconnectedGraph { components, .. }) => {
                assert!(components > 1 && fw.iter().any(|v| v.is_infinite()));
            }
            Err(e) => panic!("{e}"),
        }
    }
    let g = NeighbourGraph::from_edges(3, &[(0, 1, 1.0)]).unwrap();
    assert!(matches!(
        shortest_paths_from(&g, &[3]),
        Err(Error::InvalidParameter { .. })
    ));
    assert_eq!(shortest_paths_from(&g, &[]).unwrap().shape(), (0, 3));
}

#[test]
fn acyclic_parents_point_later_in_the_order() {
    let y = uniform(40, 2, 17);
    let r = knn(&y, 5).unwrap();
    // An ordering by the first coordinate.
    let mut order: Vec<usize> = (0..40).collect();
    order.sort_by(|&a, &b| y[(a, 0)].total_cmp(&y[(b, 0)]));
    let parents = acyclic_parents(&r, &order).unwrap();
    let mut rank = vec![0; 40];
    for (pos, &i) in order.iter().enumerate() {
        rank[i] = pos;
    }
    for i in 0..40 {
        let expected: Vec<usize> = r.indices[i]
            .iter()
            .copied()
            .filter(|&j| rank[j] > rank[i])
            .collect();
        assert_eq!(parents[i], expected);
    }
    assert!(parents[order[39]].is_empty());
    assert!(parents.iter().map(Vec::len).sum::<usize>() > 40);
    // No cycles: repeatedly removing points without remaining parents empties the graph.
    let mut remaining = parents.clone();
    let mut alive = [true; 40];
    for _ in 0..40 {
        let leaf = (0..40)
            .find(|&i| alive[i] && remaining[i].is_empty())
            .expect("a cycle");
        alive[leaf] = false;
        remaining.iter_mut().for_each(|p| p.retain(|&j| j != leaf));
    }
    // Hand example: 1-D points 0, 1, 3, 7 with k = 2, ordered 2, 0, 3, 1.
    let line = DMatrix::from_column_slice(4, 1, &[0.0, 1.0, 3.0, 7.0]);
    let r = knn(&line, 2).unwrap();
    assert_eq!(
        r.indices,
        vec![vec![1, 2], vec![0, 2], vec![1, 0], vec![2, 1]]
    );
    let p = acyclic_parents(&r, &[2, 0, 3, 1]).unwrap();
    assert_eq!(p, vec![vec![1], vec![], vec![1, 0], vec![1]]);
    // Not a permutation.
    assert!(acyclic_parents(&r, &[0, 1, 2]).is_err());
    assert!(acyclic_parents(&r, &[0, 1, 1, 3]).is_err());
    assert!(acyclic_parents(&r, &[0, 1, 2, 4]).is_err());
}
