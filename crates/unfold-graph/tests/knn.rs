mod common;

use common::{grid, naive_knn, uniform};
use nalgebra::DMatrix;
use unfold_core::Error;
use unfold_graph::{duplicate_pairs, knn, knn_query_with, knn_with, Knn, KnnAlgorithm};

const ALGORITHMS: [KnnAlgorithm; 3] = [
    KnnAlgorithm::Auto,
    KnnAlgorithm::KdTree,
    KnnAlgorithm::BruteForce,
];

/// Every algorithm must reproduce the naive sort bit for bit (indices and distances).
fn check_all(y: &DMatrix<f64>, k: usize) {
    let (idx, dst) = naive_knn(y, y, k, true);
    for a in ALGORITHMS {
        let r = knn_with(y, k, a).unwrap();
        assert_eq!(r.k, k);
        assert_eq!(
            r.indices,
            idx,
            "{a:?}, n = {}, p = {}, k = {k}",
            y.nrows(),
            y.ncols()
        );
        assert_eq!(r.distances, dst, "{a:?}");
    }
}

#[test]
fn matches_naive_on_random_data_in_several_dimensions() {
    for (seed, &p) in [1usize, 2, 3, 5, 8, 16, 40].iter().enumerate() {
        let y = uniform(300, p, seed as u64);
        check_all(&y, 1);
        check_all(&y, 7);
    }
}

#[test]
fn ties_duplicates_and_all_neighbours() {
    // Integer coordinates: many exactly equal distances and many duplicate points.
    for (p, levels) in [(1, 5), (2, 3), (3, 3), (20, 2)] {
        let y = grid(120, p, levels, 7 + p as u64);
        check_all(&y, 5);
        check_all(&y, 40);
        check_all(&y, 119); // k = n - 1
    }
    // All points identical: neighbours are simply the other indices in order.
    let y = DMatrix::from_element(20, 3, 1.5);
    for a in ALGORITHMS {
        let r = knn_with(&y, 19, a).unwrap();
        assert_eq!(
            r.indices[4],
            (0..20).filter(|&j| j != 4).collect::<Vec<_>>()
        );
        assert!(r.distances[4].iter().all(|&d| d == 0.0));
    }
}

#[test]
fn brute_force_survives_cancellation_far_from_the_origin() {
    // Two tiny clusters far apart (centring cannot remove both offsets): the product form
    // |a|^2 + |b|^2 - 2 a.b alone gets the within-cluster distances wrong.
    for (p, seed) in [(20, 11), (3, 12)] {
        let mut y = uniform(200, p, seed);
        for ((i, _), v) in y
            .iter_mut()
            .enumerate()
            .map(|(t, v)| ((t % 200, t / 200), v))
        {
            let offset = if i % 2 == 0 { 1e6 } else { -1e6 };
            *v = offset + 1e-3 * *v;
        }
        check_all(&y, 6);
    }
}

#[test]
fn queries_find_reference_points_without_self_exclusion() {
    for p in [2, 30] {
        let reference = uniform(150, p, 21);
        let mut queries = uniform(40, p, 22);
        // Query 3 is reference row 10 exactly.
        queries.set_row(3, &reference.row(10));
        let (idx, dst) = naive_knn(&reference, &queries, 150, false);
        for a in ALGORITHMS {
            for k in [1, 9, 150] {
                let r = knn_query_with(&reference, &queries, k, a).unwrap();
                let cut =
                    |v: &Vec<Vec<usize>>| v.iter().map(|r| r[..k].to_vec()).collect::<Vec<_>>();
                assert_eq!(r.indices, cut(&idx), "{a:?} p = {p} k = {k}");
                assert_eq!(r.distances[0], dst[0][..k].to_vec());
                assert_eq!((r.indices[3][0], r.distances[3][0]), (10, 0.0));
            }
        }
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let y = uniform(2000, 3, 5);
    let z = uniform(600, 24, 6);
    let run = || (knn(&y, 10).unwrap(), knn(&z, 10).unwrap());
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(run);
    assert_eq!(single, run());
}

#[test]
fn duplicate_pairs_are_found() {
    let y = DMatrix::from_row_slice(6, 2, &[0., 0., 1., 1., 0., 0., 5., 5., 1., 1., 0., 0.]);
    let r = knn(&y, 2).unwrap();
    assert_eq!(duplicate_pairs(&r), vec![(0, 2), (0, 5), (1, 4), (2, 5)]);
    let r = knn(&uniform(50, 2, 3), 3).unwrap();
    assert!(duplicate_pairs(&r).is_empty());
}

#[test]
fn bad_input_is_an_error() {
    let mut y = uniform(10, 3, 1);
    assert!(matches!(knn(&y, 0), Err(Error::InvalidParameter { .. })));
    assert!(matches!(
        knn(&y, 10),
        Err(Error::TooFewPoints {
            needed: 11,
            got: 10,
            ..
        })
    ));
    assert!(knn(&y, 9).is_ok());
    assert!(matches!(
        knn(&DMatrix::zeros(0, 3), 1),
        Err(Error::Empty(_))
    ));
    let q = uniform(4, 2, 2);
    assert!(matches!(
        knn_query_with(&y, &q, 2, KnnAlgorithm::Auto),
        Err(Error::DimensionMismatch(_))
    ));
    let q = uniform(4, 3, 2);
    assert!(knn_query_with(&y, &q, 10, KnnAlgorithm::KdTree).is_ok());
    assert!(matches!(
        knn_query_with(&y, &q, 11, KnnAlgorithm::BruteForce),
        Err(Error::TooFewPoints {
            needed: 11,
            got: 10,
            ..
        })
    ));
    y[(4, 1)] = f64::NAN;
    for a in ALGORITHMS {
        assert!(matches!(
            knn_with(&y, 2, a),
            Err(Error::NonFinite { row: 4, col: 1, .. })
        ));
        assert!(matches!(
            knn_query_with(&q, &y, 2, a),
            Err(Error::NonFinite { row: 4, col: 1, .. })
        ));
    }
    let _: Knn = knn(&q, 1).unwrap();
}

/// `knn_later` (ALLE's parents) equals a naive sort over the later points, on the kd-tree
/// path (3-D) and the brute-force path (80-D), with exact ties on a grid; the last point
/// has no later neighbours, and an order that is not a permutation is refused.
#[test]
fn later_neighbours_are_the_nearest_later_points() {
    use unfold_graph::knn_later;
    for (y, k) in [
        (uniform(500, 3, 11), 7),
        (uniform(200, 80, 12), 5),
        (grid(144, 2, 20, 3), 4),
    ] {
        let n = y.nrows();
        // A scrambled order: position r holds point (r * 37 + 5) mod n when that is a
        // permutation, which it is for these n (37 is prime to 500, 200 and 144).
        let order: Vec<usize> = (0..n).map(|r| (r * 37 + 5) % n).collect();
        let found = knn_later(&y, &order, k).unwrap();
        for (r, &i) in order.iter().enumerate() {
            let mut naive: Vec<(f64, usize)> = order[r + 1..]
                .iter()
                .map(|&j| ((y.row(i) - y.row(j)).norm_squared(), j))
                .collect();
            naive.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            naive.truncate(k);
            let ours: Vec<usize> = found[i].iter().map(|e| e.1).collect();
            let want: Vec<usize> = naive.iter().map(|e| e.1).collect();
            assert_eq!(ours, want, "point {i} at rank {r} of {n}");
            for (a, b) in found[i].iter().zip(&naive) {
                assert!((a.0 - b.0).abs() <= 1e-12 * b.0.max(1.0));
            }
        }
        assert!(found[*order.last().unwrap()].is_empty());
    }
    let y = uniform(10, 2, 1);
    assert!(knn_later(&y, &[0, 1, 2], 2).is_err());
    assert!(knn_later(&y, &[0, 0, 1, 2, 3, 4, 5, 6, 7, 8], 2).is_err());
}
