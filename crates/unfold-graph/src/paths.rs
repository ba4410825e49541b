//! Shortest-path (geodesic) distances by Dijkstra's algorithm (Dijkstra 1959).

use crate::components::disconnected;
use crate::graph::NeighbourGraph;
use nalgebra::DMatrix;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use unfold_core::{Error, Result};

/// A priority queue of `(distance, point)` with lazy deletion. Distances are non-negative
/// finite f64, whose IEEE bit patterns order exactly as the numbers do, so the heap
/// compares integers.
type Queue = BinaryHeap<Reverse<(u64, usize)>>;

/// Distances from `source` to every point into `dist` (length n), `f64::INFINITY` where
/// unreachable. Edge weights are the lengths.
fn dijkstra(g: &NeighbourGraph, source: usize, dist: &mut [f64], queue: &mut Queue) {
    dist.fill(f64::INFINITY);
    queue.clear();
    dist[source] = 0.0;
    queue.push(Reverse((0f64.to_bits(), source)));
    while let Some(Reverse((bits, u))) = queue.pop() {
        let du = f64::from_bits(bits);
        if du > dist[u] {
            continue; // a stale entry: u was settled at a smaller distance
        }
        let (js, ws) = g.neighbours(u);
        for (&v, &w) in js.iter().zip(ws) {
            let dv = du + w;
            if dv < dist[v] {
                dist[v] = dv;
                queue.push(Reverse((dv.to_bits(), v)));
            }
        }
    }
}

/// All-pairs shortest-path distances (edge weights are lengths, e.g. from
/// [`crate::Weighting::Distance`] for Isomap): Dijkstra from every source in parallel,
/// O(n (n + E) log n). The matrix is exactly symmetric: `d_ij` and `d_ji` come from two
/// runs that may round differently, and the smaller is kept for both.
///
/// # Errors
/// [`Error::DisconnectedGraph`] if some pair is not connected.
pub fn shortest_paths(g: &NeighbourGraph) -> Result<DMatrix<f64>> {
    let c = g.components();
    if c.count > 1 {
        return Err(disconnected(&c, g.n()));
    }
    let n = g.n();
    let mut d = DMatrix::<f64>::zeros(n, n);
    // Column s (contiguous) receives the distances from s.
    d.as_mut_slice()
        .par_chunks_mut(n)
        .enumerate()
        .for_each_init(Queue::new, |queue, (s, col)| dijkstra(g, s, col, queue));
    symmetrise_min(&mut d);
    Ok(d)
}

/// Sets `d_ij = d_ji = min(d_ij, d_ji)`, in tiles so both accesses stay in cache.
fn symmetrise_min(d: &mut DMatrix<f64>) {
    const TILE: usize = 64;
    let n = d.nrows();
    for jb in (0..n).step_by(TILE) {
        for ib in (jb..n).step_by(TILE) {
            for j in jb..(jb + TILE).min(n) {
                for i in ib.max(j + 1)..(ib + TILE).min(n) {
                    let m = d[(i, j)].min(d[(j, i)]);
                    d[(i, j)] = m;
                    d[(j, i)] = m;
                }
            }
        }
    }
}

/// Shortest-path distances from each of `sources` (row r for `sources[r]`) to every point
/// (columns), `f64::INFINITY` where unreachable. Sources run in parallel.
///
/// # Errors
/// A source index outside `0..n`.
pub fn shortest_paths_from(g: &NeighbourGraph, sources: &[usize]) -> Result<DMatrix<f64>> {
    let n = g.n();
    if let Some(&s) = sources.iter().find(|&&s| s >= n) {
        return Err(Error::invalid(
            "sources",
            format!("source {s} is not a point of the graph (0..{n})"),
        ));
    }
    let rows: Vec<Vec<f64>> = sources
        .par_iter()
        .map_init(Queue::new, |queue, &s| {
            let mut dist = vec![0.0; n];
            dijkstra(g, s, &mut dist, queue);
            dist
        })
        .collect();
    Ok(DMatrix::from_fn(sources.len(), n, |r, j| rows[r][j]))
}
