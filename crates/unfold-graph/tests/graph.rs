mod common;

use common::{random_edges, sq, uniform};
use nalgebra::{DMatrix, SymmetricEigen};
use unfold_core::Error;
use unfold_graph::{knn, Knn, NeighbourGraph, Symmetrisation, Weighting};

/// 1-D points 0, 1, 3, 7 with k = 1: 0 <-> 1 mutual, 3 -> 1, 7 -> 3.
fn line_knn() -> Knn {
    let y = DMatrix::from_column_slice(4, 1, &[0.0, 1.0, 3.0, 7.0]);
    knn(&y, 1).unwrap()
}

#[test]
fn union_and_mutual_on_a_hand_made_example() {
    let r = line_knn();
    assert_eq!(r.indices, vec![vec![1], vec![0], vec![1], vec![2]]);
    let u = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Distance).unwrap();
    assert_eq!(u.edges(), vec![(0, 1, 1.0), (1, 2, 2.0), (2, 3, 4.0)]);
    assert_eq!(u.neighbours(1), (&[0usize, 2][..], &[1.0, 2.0][..]));
    let m = NeighbourGraph::from_knn(&r, Symmetrisation::Mutual, Weighting::Binary).unwrap();
    assert_eq!(m.edges(), vec![(0, 1, 1.0)]);
    assert_eq!(m.components().count, 3);
    assert_eq!(Symmetrisation::default(), Symmetrisation::Union);
    // Heat kernel exp(-d^2 / (2 sigma^2)).
    let h = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Heat { sigma: 2.0 })
        .unwrap();
    assert_eq!(h.weight(2, 3), Some((-16.0f64 / 8.0).exp()));
    assert_eq!(h.weight(3, 2), h.weight(2, 3));
    // A pair listed both ways with different distances keeps the smaller, whichever
    // direction lists it; a repeated neighbour is refused.
    for (d01, d10) in [(1.0, 0.5), (0.5, 1.0)] {
        let both = Knn {
            k: 1,
            indices: vec![vec![1], vec![0], vec![1]],
            distances: vec![vec![d01], vec![d10], vec![2.0]],
        };
        let g =
            NeighbourGraph::from_knn(&both, Symmetrisation::Mutual, Weighting::Distance).unwrap();
        assert_eq!(g.edges(), vec![(0, 1, 0.5)]);
    }
    let twice = Knn {
        k: 2,
        indices: vec![vec![1, 1], vec![0, 2], vec![1, 0]],
        distances: vec![vec![1.0, 1.0], vec![1.0, 2.0], vec![2.0, 3.0]],
    };
    assert!(matches!(
        NeighbourGraph::from_knn(&twice, Symmetrisation::Union, Weighting::Binary),
        Err(Error::InvalidParameter { .. })
    ));
}

#[test]
fn knn_graph_degrees_and_symmetry() {
    let y = uniform(300, 3, 4);
    let r = knn(&y, 6).unwrap();
    let u = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Binary).unwrap();
    let m = NeighbourGraph::from_knn(&r, Symmetrisation::Mutual, Weighting::Binary).unwrap();
    for i in 0..300 {
        assert!(u.degrees()[i] >= 6.0 && m.degrees()[i] <= 6.0);
        for &j in &r.indices[i] {
            assert!(u.has_edge(i, j) && u.has_edge(j, i));
            assert_eq!(m.has_edge(i, j), r.indices[j].contains(&i));
        }
    }
    // Union has exactly the pairs listed in either direction.
    let mut pairs: Vec<(usize, usize)> = (0..300)
        .flat_map(|i| r.indices[i].iter().map(move |&j| (i.min(j), i.max(j))))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(u.n_edges(), pairs.len());
    let a = u.adjacency_dense();
    assert_eq!(a, a.transpose());
}

#[test]
fn laplacian_rows_sum_to_zero_and_null_space_counts_components() {
    // Three blocks of a random weighted graph, no edges between blocks.
    let mut edges = Vec::new();
    for (b, off) in [0usize, 10, 25].iter().enumerate() {
        let size = [10, 15, 5][b];
        let mut block = random_edges(size, 0.5, b as u64);
        // A path guarantees each block is connected.
        block.extend((0..size - 1).map(|i| (i, i + 1, 0.7)));
        block.sort_by_key(|e| (e.0, e.1));
        block.dedup_by_key(|e| (e.0, e.1));
        edges.extend(block.into_iter().map(|(i, j, w)| (i + off, j + off, w)));
    }
    let g = NeighbourGraph::from_edges(30, &edges).unwrap();
    let c = g.components();
    assert_eq!((c.count, c.sizes.clone()), (3, vec![10, 15, 5]));
    let l = g.laplacian_dense();
    assert_eq!(l, l.transpose());
    for i in 0..30 {
        assert!(l.row(i).sum().abs() < 1e-12);
    }
    let ls = g.laplacian_sparse();
    assert_eq!(ls.to_dense(), l);
    assert_eq!(ls.nnz(), 2 * g.n_edges() + 30);
    // x^T L x = sum over unordered edges of w (x_i - x_j)^2.
    let x: Vec<f64> = (0..30).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut lx = vec![0.0; 30];
    ls.matvec(&x, &mut lx);
    let quad: f64 = x.iter().zip(&lx).map(|(a, b)| a * b).sum();
    let direct: f64 = g
        .edges()
        .iter()
        .map(|&(i, j, w)| w * (x[i] - x[j]).powi(2))
        .sum();
    assert!((quad - direct).abs() < 1e-12 * direct);
    let eig = SymmetricEigen::new(l).eigenvalues;
    assert_eq!(eig.iter().filter(|v| v.abs() < 1e-9).count(), 3);
    assert!(eig.iter().all(|&v| v > -1e-9));
    // Joining two blocks leaves two components and two zero eigenvalues.
    let g2 = g.with_edge(3, 27, 1.0).unwrap();
    let eig2 = SymmetricEigen::new(g2.laplacian_dense()).eigenvalues;
    assert_eq!(eig2.iter().filter(|v| v.abs() < 1e-9).count(), 2);
    assert_eq!(g2.components().count, 2);
}

#[test]
fn two_clusters_are_two_components() {
    let mut y = uniform(60, 2, 9);
    for i in 30..60 {
        y[(i, 0)] += 100.0;
    }
    let r = knn(&y, 5).unwrap();
    let g = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Binary).unwrap();
    let c = g.components();
    assert_eq!(c.count, 2);
    assert_eq!(c.sizes, vec![30, 30]);
    assert!((0..60).all(|i| c.labels[i] == usize::from(i >= 30)));
    match g.ensure_connected() {
        Err(Error::DisconnectedGraph {
            components: 2,
            largest: 30,
            n: 60,
            advice,
        }) => assert!(advice.contains("increase k")),
        other => panic!("unexpected {other:?}"),
    }
    let joined = g.with_edge(0, 59, 1.0).unwrap();
    assert!(joined.ensure_connected().is_ok());
    assert_eq!(joined.without_edge(59, 0).unwrap(), g);
}

/// Three clusters far apart are joined by two edges: each the closest pair of points
/// between two clusters, along the minimum spanning tree of the clusters; the kNN edges
/// stay, the new ones get the weighting's weight, and a connected graph is left alone.
#[test]
fn separate_clusters_are_joined_through_their_closest_pairs() {
    let mut y = uniform(90, 2, 4);
    for i in 30..90 {
        y[(i, 0)] += if i < 60 { 10.0 } else { 25.0 };
        y[(i, 1)] += if i < 60 { 0.0 } else { 3.0 };
    }
    let r = knn(&y, 5).unwrap();
    let w = Weighting::Heat { sigma: 4.0 };
    let g = NeighbourGraph::from_knn(&r, Symmetrisation::Union, w).unwrap();
    assert_eq!(g.components().count, 3);
    let (joined, added) = g.joined(&y, w).unwrap();
    assert!(joined.ensure_connected().is_ok());
    assert_eq!(added.len(), 2);
    assert_eq!(joined.n_edges(), g.n_edges() + 2);
    let dist = |i: usize, j: usize| {
        ((y[(i, 0)] - y[(j, 0)]).powi(2) + (y[(i, 1)] - y[(j, 1)]).powi(2)).sqrt()
    };
    // The closest pair between clusters a and b, by brute force.
    let cluster = |i: usize| i / 30;
    let closest = |a: usize, b: usize| {
        let mut best = (f64::INFINITY, 0, 0);
        for i in (0..90).filter(|&i| cluster(i) == a) {
            for j in (0..90).filter(|&j| cluster(j) == b) {
                if dist(i, j) < best.0 {
                    best = (dist(i, j), i.min(j), i.max(j));
                }
            }
        }
        best
    };
    // The clusters' minimum spanning tree: the two shortest of the three closest pairs.
    let mut pairs = [closest(0, 1), closest(0, 2), closest(1, 2)];
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut want: Vec<(usize, usize, f64)> = pairs[..2].iter().map(|p| (p.1, p.2, p.0)).collect();
    want.sort_by_key(|&(i, j, _)| (i, j));
    for ((i, j, d), (wi, wj, wd)) in added.iter().zip(&want) {
        assert_eq!((i, j), (wi, wj));
        assert!((d - wd).abs() < 1e-12);
        assert!((joined.weight(*i, *j).unwrap() - (-d * d / 32.0).exp()).abs() < 1e-15);
    }
    for (i, j, wt) in g.edges() {
        assert_eq!(joined.weight(i, j), Some(wt));
    }
    let (same, none) = joined.joined(&y, w).unwrap();
    assert!(none.is_empty());
    assert_eq!(same, joined);
    assert!(g.joined(&y.rows(0, 50).into_owned(), w).is_err());
}

#[test]
fn epsilon_ball_matches_all_pairs() {
    for p in [2, 25] {
        let y = uniform(150, p, 30 + p as u64);
        let eps = if p == 2 { 0.15 } else { 1.5 };
        let g = NeighbourGraph::epsilon_ball(&y, eps, Weighting::Distance).unwrap();
        let mut expected = Vec::new();
        for i in 0..150 {
            for j in i + 1..150 {
                let d = sq(&y, i, &y, j).sqrt();
                if d <= eps {
                    expected.push((i, j, d));
                }
            }
        }
        assert!(expected.len() > 100 && expected.len() < 150 * 149 / 4);
        assert_eq!(g.edges(), expected);
    }
    // Integer points: distance exactly eps is inside the ball.
    let y = DMatrix::from_column_slice(3, 1, &[0.0, 1.0, 3.0]);
    let g = NeighbourGraph::epsilon_ball(&y, 2.0, Weighting::Binary).unwrap();
    assert_eq!(g.edges(), vec![(0, 1, 1.0), (1, 2, 1.0)]);
}

#[test]
fn reweighting_uses_point_distances() {
    let y = uniform(80, 4, 2);
    let r = knn(&y, 4).unwrap();
    let g = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Binary).unwrap();
    let d = g.reweighted(&y, Weighting::Distance).unwrap();
    let sigma = 0.3;
    let h = g.reweighted(&y, Weighting::Heat { sigma }).unwrap();
    for (i, j, w) in d.edges() {
        assert_eq!(w, sq(&y, i, &y, j).sqrt());
        let expect = (-w * w / (2.0 * sigma * sigma)).exp();
        assert!((h.weight(i, j).unwrap() - expect).abs() < 1e-15);
    }
    let direct = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Distance).unwrap();
    assert_eq!(direct, d);
    let degrees = d.degrees();
    for (i, deg) in degrees.iter().enumerate() {
        assert!((deg - d.neighbours(i).1.iter().sum::<f64>()).abs() == 0.0);
    }
}

#[test]
fn adjacency_round_trip_and_serde() {
    // Weights k/8 print and parse exactly in JSON.
    let edges: Vec<_> = random_edges(12, 0.4, 3)
        .into_iter()
        .map(|(i, j, w)| (i, j, (w * 8.0).round() / 8.0))
        .collect();
    let g = NeighbourGraph::from_edges(12, &edges).unwrap();
    assert_eq!(g.edges(), edges);
    let a = g.adjacency_dense();
    assert_eq!(NeighbourGraph::from_adjacency(&a).unwrap(), g);
    let json = serde_json::to_string(&g).unwrap();
    let back: NeighbourGraph = serde_json::from_str(&json).unwrap();
    assert_eq!(back, g);
    // A stored graph that is not symmetric is rejected on load.
    let tampered = json.replacen(&format!("{}", edges[0].2), "0.123", 1);
    assert_ne!(tampered, json);
    assert!(serde_json::from_str::<NeighbourGraph>(&tampered).is_err());
    let truncated = json.replacen("\"n\":12", "\"n\":11", 1);
    assert_ne!(truncated, json);
    assert!(serde_json::from_str::<NeighbourGraph>(&truncated).is_err());
    // A point count whose successor overflows is an error, not an out-of-bounds index.
    let overflow = format!(
        r#"{{"n":{},"indptr":[],"indices":[],"weights":[]}}"#,
        usize::MAX
    );
    assert!(serde_json::from_str::<NeighbourGraph>(&overflow).is_err());
}

#[test]
fn bad_graph_input_is_an_error() {
    let inv = |r: Result<NeighbourGraph, Error>| matches!(r, Err(Error::InvalidParameter { .. }));
    assert!(inv(NeighbourGraph::from_edges(3, &[(0, 3, 1.0)])));
    assert!(inv(NeighbourGraph::from_edges(3, &[(1, 1, 1.0)])));
    assert!(inv(NeighbourGraph::from_edges(3, &[(0, 1, 0.0)])));
    assert!(inv(NeighbourGraph::from_edges(3, &[(0, 1, f64::NAN)])));
    assert!(inv(NeighbourGraph::from_edges(
        3,
        &[(0, 1, 1.0), (1, 0, 2.0)]
    )));
    assert!(matches!(
        NeighbourGraph::from_edges(0, &[]),
        Err(Error::Empty(_))
    ));
    let mut a = DMatrix::from_element(3, 3, 1.0);
    assert!(inv(NeighbourGraph::from_adjacency(&a)));
    a.fill_diagonal(0.0);
    assert!(NeighbourGraph::from_adjacency(&a).is_ok());
    a[(0, 1)] = 2.0;
    assert!(inv(NeighbourGraph::from_adjacency(&a)));
    assert!(matches!(
        NeighbourGraph::from_adjacency(&DMatrix::zeros(2, 3)),
        Err(Error::DimensionMismatch(_))
    ));
    let y = uniform(20, 2, 1);
    for eps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(inv(NeighbourGraph::epsilon_ball(
            &y,
            eps,
            Weighting::Binary
        )));
    }
    let r = knn(&y, 3).unwrap();
    for sigma in [0.0, -1.0, f64::NAN] {
        let w = Weighting::Heat { sigma };
        assert!(inv(NeighbourGraph::from_knn(&r, Symmetrisation::Union, w)));
        assert!(inv(NeighbourGraph::epsilon_ball(&y, 0.5, w)));
    }
    // Heat weights that underflow to zero.
    let tiny = Weighting::Heat { sigma: 1e-200 };
    assert!(matches!(
        NeighbourGraph::from_knn(&r, Symmetrisation::Union, tiny),
        Err(Error::Numerical { .. })
    ));
    // Zero-length edges cannot carry a distance weight.
    let dup = DMatrix::from_row_slice(3, 1, &[0.0, 0.0, 1.0]);
    let rd = knn(&dup, 1).unwrap();
    assert!(matches!(
        NeighbourGraph::from_knn(&rd, Symmetrisation::Union, Weighting::Distance),
        Err(Error::DuplicatePoints {
            first: 0,
            second: 1,
            ..
        })
    ));
    assert!(NeighbourGraph::from_knn(&rd, Symmetrisation::Union, Weighting::Binary).is_ok());
    // Inconsistent kNN results.
    let mut bad = r.clone();
    bad.indices[2][0] = 2;
    assert!(inv(NeighbourGraph::from_knn(
        &bad,
        Symmetrisation::Union,
        Weighting::Binary
    )));
    let mut bad = r.clone();
    bad.indices[2][0] = 99;
    assert!(inv(NeighbourGraph::from_knn(
        &bad,
        Symmetrisation::Mutual,
        Weighting::Binary
    )));
    let mut bad = r.clone();
    bad.distances[5].pop();
    assert!(matches!(
        NeighbourGraph::from_knn(&bad, Symmetrisation::Union, Weighting::Binary),
        Err(Error::DimensionMismatch(_))
    ));
    let mut bad = r.clone();
    bad.distances[5][1] = -1.0;
    assert!(inv(NeighbourGraph::from_knn(
        &bad,
        Symmetrisation::Union,
        Weighting::Binary
    )));
    // Editing and reweighting.
    let g = NeighbourGraph::from_knn(&r, Symmetrisation::Union, Weighting::Binary).unwrap();
    assert!(inv(g.with_edge(0, 20, 1.0)));
    assert!(inv(g.with_edge(0, 0, 1.0)));
    assert!(inv(g.with_edge(0, 1, -1.0)));
    let absent = (1..20).find(|&j| !g.has_edge(0, j)).unwrap();
    assert!(inv(g.without_edge(0, absent)));
    assert!(!g.has_edge(0, 99) && g.weight(99, 0).is_none());
    assert_eq!(g.neighbours(20), (&[][..], &[][..]));
    assert!(matches!(
        g.reweighted(&uniform(19, 2, 1), Weighting::Distance),
        Err(Error::DimensionMismatch(_))
    ));
}

/// The kNN graph of a spec: joined through the closest pairs by default, the joining edges
/// entering both points' neighbour lists in order of distance and named in one warning;
/// left apart with `Connect::Off`, where `build` refuses it and `build_any` keeps it.
#[test]
fn a_spec_joins_its_graph_and_says_so_unless_connect_is_off() {
    use unfold_graph::{Connect, GraphSpec};
    #[derive(Default)]
    struct Said(std::sync::Mutex<Vec<String>>);
    impl unfold_core::Observer for Said {
        fn warn(&self, message: &str) {
            self.0.lock().unwrap().push(message.to_string());
        }
    }
    let mut y = uniform(60, 2, 9);
    for i in 30..60 {
        y[(i, 0)] += 100.0;
    }
    let spec = GraphSpec::knn(5);
    let (lists, graph, added) = spec.neighbours(&y, Weighting::Binary, "t").unwrap();
    assert_eq!(added.len(), 1);
    let (i, j, d) = added[0];
    assert!(graph.ensure_connected().is_ok());
    let plain = knn(&y, 5).unwrap();
    for p in 0..60 {
        let extra = if p == i {
            Some(j)
        } else if p == j {
            Some(i)
        } else {
            None
        };
        match extra {
            None => assert_eq!(lists.indices[p], plain.indices[p]),
            Some(q) => {
                assert_eq!(lists.indices[p].len(), 6);
                assert_eq!(*lists.indices[p].last().unwrap(), q);
                assert_eq!(*lists.distances[p].last().unwrap(), d);
                assert_eq!(lists.indices[p][..5], plain.indices[p][..]);
            }
        }
    }
    let said = Said::default();
    let (_, built) = spec.build(&y, Weighting::Binary, "t", &said).unwrap();
    assert_eq!(built, graph);
    let said = said.0.into_inner().unwrap();
    assert_eq!(said.len(), 1);
    assert!(said[0].contains(&format!("{}-{}", i, j)), "{}", said[0]);
    let off = spec.connect(Connect::Off);
    assert!(matches!(
        off.build(&y, Weighting::Binary, "t", &unfold_core::Silent),
        Err(Error::DisconnectedGraph { components: 2, .. })
    ));
    let (_, apart) = off
        .build_any(&y, Weighting::Binary, "t", &unfold_core::Silent)
        .unwrap();
    assert_eq!(apart.components().count, 2);
}
