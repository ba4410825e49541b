//! Tests of the soft assignments: the softmax against its definition, the products against
//! dense ones, the nearest centres, reused buffers, and the same bits on every instruction
//! set.

use super::products::{products_blocks, LaneRows, Layout};
use super::*;
use crate::simd::Level;
use crate::sq_dists_to;
use crate::view::as_faer;
use faer::MatRef;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// Scattered points (sines of their indices).
fn points(n: usize, d: usize, shift: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, d, |i, j| {
        (((i + shift) * 7 + j * 13) as f64 * 0.37).sin()
    })
}

/// One distance ([`Geometry::sq_dist`], for the objective) has the bits of its entry in
/// the row the assignments are computed from, in the latent dimensions 2 (its own
/// loop) and 3.
#[test]
fn one_distance_has_the_bits_of_its_row() {
    for dim in [2, 3] {
        let (z, c) = (points(300, dim, 0), points(40, dim, 5000));
        let order: Vec<usize> = (0..40).rev().collect();
        let g = Geometry::new(&z, &c, &order);
        let mut row = vec![0.0; 40];
        for i in 0..300 {
            g.sq_dists(i, &mut row);
            for (p, d) in row.iter().enumerate() {
                assert_eq!(
                    g.sq_dist(i, p).to_bits(),
                    d.to_bits(),
                    "dim {dim}, {i}, {p}"
                );
            }
        }
    }
}

#[test]
fn every_instruction_set_gives_the_same_bits() {
    // The three dispatched kernels on every instruction set the processor has, against
    // the baseline: latent dimensions 2 (its own distance loop) and 3, a sparse and a
    // dense R, more than one block.
    for (dim, sigma) in [(2, 0.05), (3, 0.05), (2, 5.0)] {
        let (z, c) = (points(1100, dim, 0), points(40, dim, 5000));
        let order: Vec<usize> = (0..40).rev().collect();
        let g = Geometry::new(&z, &c, &order);
        let x = LaneRows::new(as_faer(&points(1100, 11, 99)));
        let a = Assignment::from_points(&z, &c, sigma, order.clone(), None);
        let run = |level: Level| {
            let mut block = Block::default();
            block.clear();
            let part = level.run_out(
                &mut block,
                #[inline(always)]
                |block| points_block(&g, sigma, 0..1100, block),
            );
            let labels = level.run(
                #[inline(always)]
                || nearest_block(&g, 0..1100),
            );
            let (gram, rtx, sums) = level.run(
                #[inline(always)]
                || products_blocks(&a.blocks, &x.lanes, x.width, a.block_rows, a.k),
            );
            let rows = (block.ptr, block.pos, block.val, part);
            (rows, labels, gram, rtx, sums)
        };
        let want = run(Level::baseline());
        for level in Level::available() {
            assert!(run(level) == want, "{level:?}, d = {dim}, sigma = {sigma}");
        }
    }
}

fn noise(n: usize, p: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = unfold_core::seeded_rng(seed);
    DMatrix::from_fn(n, p, |_, _| StandardNormal.sample(&mut rng))
}

/// The centres ordered by their first coordinate (nearby centres at nearby positions, as
/// an order along a tree over them puts them).
fn by_first_coordinate(c: &DMatrix<f64>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..c.nrows()).collect();
    order.sort_by(|&a, &b| c[(a, 0)].total_cmp(&c[(b, 0)]));
    order
}

#[test]
fn soft_assignments_are_a_stable_softmax() {
    // Points as columns: dist[(k, i)] = ||z_i - c_k||^2.
    let dist = DMatrix::from_column_slice(3, 2, &[1.0, 2.0, 4.0, 1e4, 1e4 + 1.0, 3e4]);
    for order in [vec![0, 1, 2], vec![2, 0, 1]] {
        for sigma in [0.7, 1e-6] {
            let a = Assignment::from_distances(&dist, sigma, order.clone());
            let r = a.to_dense();
            for i in 0..2 {
                assert!((r.row(i).sum() - 1.0).abs() < 1e-15);
            }
            // At the optimal R, sum r d + sigma sum r log r = -sigma sum log sum exp(-d/sigma).
            assert!(
                (a.dot(&dist) + a.neg_entropy() - a.soft_min()).abs() < 1e-9 * a.soft_min().abs()
            );
            assert!(r.iter().all(|v| v.is_finite()));
        }
        let r = Assignment::from_distances(&dist, 0.7, order.clone()).to_dense();
        let z: f64 = (0..3).map(|k| (-dist[(k, 0)] / 0.7).exp()).sum();
        assert!((r[(0, 1)] - (-2.0f64 / 0.7).exp() / z).abs() < 1e-15);
        // With sigma = 1e-6 the second point's other centres underflow to exactly zero.
        let a = Assignment::from_distances(&dist, 1e-6, order);
        assert_eq!(
            a.to_dense().row(1).iter().copied().collect::<Vec<_>>(),
            [1.0, 0.0, 0.0]
        );
        assert_eq!(a.nnz(), 2);
    }
}

#[test]
fn assignments_from_points_equal_the_dense_softmax() {
    // Enough points for several row blocks; a small sigma leaves R sparse. Latent
    // dimensions 2 (its own distance loop) and 3.
    for (dim, sigma) in [(2, 5.0), (2, 0.05), (3, 0.05)] {
        let (z, c) = (noise(1500, dim, 8), noise(40, dim, 9));
        let dist = sq_dists_to(&c, &z);
        let a = Assignment::from_points(&z, &c, sigma, by_first_coordinate(&c), None);
        let b = Assignment::from_distances(&dist, sigma, (0..40).collect());
        let r = a.to_dense();
        let (mut neg_entropy, mut soft_min) = (0.0, 0.0);
        for i in 0..1500 {
            let col = dist.column(i);
            let shift = col.min();
            let total: f64 = col.iter().map(|d| (-(d - shift) / sigma).exp()).sum();
            soft_min += shift - sigma * total.ln();
            for k in 0..40 {
                let x = -(col[k] - shift) / sigma;
                let want = if x > -37.0 { x.exp() / total } else { 0.0 };
                assert!((r[(i, k)] - want).abs() <= 1e-12 * want, "{i} {k}");
                if want > 0.0 {
                    neg_entropy += sigma * want * (x - total.ln());
                }
            }
        }
        assert!((a.soft_min() - soft_min).abs() < 1e-12 * soft_min.abs());
        assert!((a.neg_entropy() - neg_entropy).abs() < 1e-12 * neg_entropy.abs());
        assert!((b.to_dense() - &r).norm() < 1e-12 * r.norm());
        if sigma < 1.0 {
            assert!(a.nnz() < 1500 * 40 / 2, "{} non-zeros", a.nnz());
        }
    }
}

#[test]
fn sparse_products_match_dense() {
    // A random pattern (runs, gaps, empty rows) over several row blocks and a shuffled
    // centre order.
    let (n, k) = (1300, 37);
    let mut rng = unfold_core::seeded_rng(8);
    let r = DMatrix::from_fn(n, k, |i, c| {
        let near = (i * 7 + c * 3) % 11 < 4 || (i % 5 == 0 && c % 9 == 1);
        if i % 97 == 3 || !near {
            0.0
        } else {
            rng.random::<f64>()
        }
    });
    let mut order: Vec<usize> = (0..k).collect();
    for j in (1..k).rev() {
        order.swap(j, rng.random_range(0..=j));
    }
    let dist = noise(k, n, 12).map(f64::abs);
    let x = noise(n, 50, 10);
    let g = noise(k, 3, 11);
    for order in [order, (0..k).collect()] {
        let a = Assignment::from_dense(&r, order);
        assert_eq!(a.to_dense(), r);
        let close = |got: DMatrix<f64>, want: DMatrix<f64>| {
            assert!((&got - &want).norm() <= 1e-12 * want.norm());
        };
        let products = a.products(&DataRows(Layout::Lanes(LaneRows::new(as_faer(&x)))));
        assert_eq!(products.gram, products.gram.transpose());
        close(products.gram.clone(), r.transpose() * &r);
        close(products.tr_mul, r.transpose() * &x);
        // From DENSE_PRODUCT_COLS columns on, R^T X by dense products over each
        // block's window: R^T R and the sums are the sparse path's, bit for bit.
        let wide = noise(n, DENSE_PRODUCT_COLS + 5, 13);
        let rows = DataRows::new(&wide);
        assert!(matches!(rows.0, Layout::Columns(_)));
        let dense = a.products(&rows);
        assert_eq!(dense.gram, products.gram);
        assert_eq!(dense.col_sums, products.col_sums);
        close(dense.tr_mul, r.transpose() * &wide);
        let sums = DMatrix::from_vec(1, k, products.col_sums);
        close(sums, DMatrix::from_fn(1, k, |_, c| r.column(c).sum()));
        for p in [1, 2, 3] {
            let g = g.columns(0, p).into_owned();
            close(a.mul(&g), &r * &g);
        }
        let wide = noise(k, 5, 15);
        close(a.mul(&wide), &r * &wide);
        let want = r.transpose().dot(&dist);
        assert!((a.dot(&dist) - want).abs() < 1e-12 * want);
        // The same sum with the distances of points and centres, entry by entry.
        let (z, c) = (noise(n, 3, 18), noise(k, 3, 19));
        let want = r.transpose().dot(&sq_dists_to(&c, &z));
        assert!((a.dot_to(&z, &c) - want).abs() < 1e-12 * want);
    }
}

#[test]
fn nearest_centres_are_the_first_minima() {
    // 21 centres (a partial last chunk of eight), with repeated rows so that ties occur,
    // some of them in the last chunk.
    let z = noise(700, 2, 16);
    let mut c = noise(21, 2, 17);
    for (from, to) in [(3, 9), (3, 19), (12, 20), (5, 17)] {
        let row = c.row(from).into_owned();
        c.row_mut(to).copy_from(&row);
    }
    let dist = sq_dists_to(&c, &z);
    let labels = nearest_centres(&z, &c);
    for (i, &label) in labels.iter().enumerate() {
        let col = dist.column(i);
        let least = col.min();
        assert_eq!(
            label,
            col.iter().position(|&v| v == least).unwrap(),
            "point {i}"
        );
    }
    assert!(labels.iter().any(|&l| l >= 16));
}

/// An assignment built on the buffers of an earlier one (as an alternating minimisation
/// hands each iteration's to the next) has the bits of one built afresh, whatever the
/// earlier one held (more or fewer points, centres and non-zeros), and takes over its
/// storage: with room enough, no row buffer is allocated anew.
#[test]
fn reused_buffers_give_the_bits_of_fresh_ones() {
    let (z, c) = (noise(1500, 2, 20), noise(40, 2, 21));
    let order = by_first_coordinate(&c);
    let fresh = Assignment::from_points(&z, &c, 0.05, order.clone(), None);
    let x = noise(1500, 7, 22);
    let want = fresh.products(&DataRows::new(&x));
    let mut kept = 0;
    for (n, k, sigma) in [
        (1500, 40, 5.0),
        (1500, 40, 1e-3),
        (700, 12, 0.05),
        (4000, 60, 0.5),
    ] {
        let (z0, c0) = (noise(n, 2, 23), noise(k, 2, 24));
        let spare = Assignment::from_points(&z0, &c0, sigma, (0..k).collect(), None);
        let (blocks, first) = (spare.blocks.as_ptr(), spare.blocks[0].val.as_ptr());
        let room = spare.blocks[0].val.capacity() >= fresh.blocks[0].val.len();
        let enough_blocks = spare.blocks.len() >= fresh.blocks.len();
        let reused = Assignment::from_points(&z, &c, 0.05, order.clone(), Some(spare));
        assert_eq!(
            reused.to_dense(),
            fresh.to_dense(),
            "n {n}, k {k}, sigma {sigma}"
        );
        assert_eq!(
            reused.neg_entropy().to_bits(),
            fresh.neg_entropy().to_bits()
        );
        assert_eq!(reused.soft_min().to_bits(), fresh.soft_min().to_bits());
        let got = reused.products(&DataRows::new(&x));
        assert_eq!(
            (got.gram, got.tr_mul),
            (want.gram.clone(), want.tr_mul.clone())
        );
        assert_eq!(got.col_sums, want.col_sums);
        if enough_blocks {
            assert_eq!(
                reused.blocks.as_ptr(),
                blocks,
                "the blocks were reallocated"
            );
        }
        if room {
            assert_eq!(
                reused.blocks[0].val.as_ptr(),
                first,
                "a row buffer was reallocated"
            );
            kept += 1;
        }
    }
    assert!(kept > 0, "no case had room for the new rows");
}

/// The products of a row-major view (a C-order array read where it lies) are those of the
/// column-major matrix: to the bit through the lane copy below `DENSE_PRODUCT_COLS`
/// columns, to round-off through the dense blocks from there on; a column-major view
/// gives `DataRows::new`'s bits.
#[test]
fn row_major_views_give_the_products_of_the_matrix() {
    let (z, c) = (noise(1500, 2, 30), noise(40, 2, 31));
    let a = Assignment::from_points(&z, &c, 0.05, by_first_coordinate(&c), None);
    for p in [7, DENSE_PRODUCT_COLS + 5] {
        let x = noise(1500, p, 32);
        let rows: Vec<f64> = x.transpose().as_slice().to_vec();
        let view = MatRef::from_row_major_slice(&rows, 1500, p);
        let want = a.products(&DataRows::new(&x));
        let same = a.products(&DataRows::of(as_faer(&x)));
        assert_eq!((&same.gram, &same.tr_mul), (&want.gram, &want.tr_mul));
        let got = a.products(&DataRows::of(view));
        assert_eq!(got.gram, want.gram, "p = {p}");
        assert_eq!(got.col_sums, want.col_sums, "p = {p}");
        if p < DENSE_PRODUCT_COLS {
            assert_eq!(got.tr_mul, want.tr_mul, "p = {p}");
        } else {
            let rel = (&got.tr_mul - &want.tr_mul).amax() / want.tr_mul.amax();
            assert!(rel < 1e-13, "p = {p}: {rel:e}");
        }
    }
}
