//! Shortest-path (geodesic) distances by Dijkstra's algorithm (Dijkstra 1959).

use crate::components::disconnected;
use crate::graph::NeighbourGraph;
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{interrupt, Error, Result};

/// Marks a point that is not in the heap.
const ABSENT: u32 = u32::MAX;

/// A 4-ary min-heap of `(tentative distance, point)` with decrease-key, so every point
/// enters at most once (heap size <= n, no stale entries). Keys are stored next to the
/// points so a sift touches one contiguous array.
struct Heap {
    items: Vec<(f64, u32)>,
    /// `pos[v]` is the slot of `v` in `items`, or [`ABSENT`].
    pos: Vec<u32>,
}

impl Heap {
    fn new(n: usize) -> Self {
        Heap {
            items: Vec::with_capacity(n),
            pos: vec![ABSENT; n],
        }
    }

    #[inline]
    fn place(&mut self, slot: usize, item: (f64, u32)) {
        self.items[slot] = item;
        self.pos[item.1 as usize] = slot as u32;
    }

    /// Inserts `v` with key `key`, or lowers its key to `key`.
    #[inline]
    fn push_or_decrease(&mut self, v: usize, key: f64) {
        let mut slot = match self.pos[v] {
            ABSENT => {
                self.items.push((key, v as u32));
                self.items.len() - 1
            }
            s => s as usize,
        };
        while slot > 0 {
            let parent = (slot - 1) / 4;
            let up = self.items[parent];
            if up.0 <= key {
                break;
            }
            self.place(slot, up);
            slot = parent;
        }
        self.place(slot, (key, v as u32));
    }

    /// Removes and returns the `(key, point)` of least key.
    fn pop(&mut self) -> Option<(f64, usize)> {
        let (top_key, top) = *self.items.first()?;
        self.pos[top as usize] = ABSENT;
        let last = self.items.pop().expect("the heap is not empty");
        let len = self.items.len();
        if len > 0 {
            let mut slot = 0;
            loop {
                let first = 4 * slot + 1;
                if first >= len {
                    break;
                }
                let mut child = first;
                let mut child_key = self.items[first].0;
                for c in first + 1..(first + 4).min(len) {
                    if self.items[c].0 < child_key {
                        child = c;
                        child_key = self.items[c].0;
                    }
                }
                if child_key >= last.0 {
                    break;
                }
                self.place(slot, self.items[child]);
                slot = child;
            }
            self.place(slot, last);
        }
        Some((top_key, top as usize))
    }
}

/// Distances from `source` to every point into `dist` (length n), `f64::INFINITY` where
/// unreachable. Edge weights are the lengths. `heap` is empty on entry and on exit.
fn dijkstra(g: &NeighbourGraph, source: usize, dist: &mut [f64], heap: &mut Heap) {
    dist.fill(f64::INFINITY);
    dist[source] = 0.0;
    heap.push_or_decrease(source, 0.0);
    while let Some((du, u)) = heap.pop() {
        let (js, ws) = g.neighbours(u);
        for (&v, &w) in js.iter().zip(ws) {
            // Settled points never improve: du + w >= du >= dist[v] for them.
            let dv = du + w;
            if dv < dist[v] {
                dist[v] = dv;
                heap.push_or_decrease(v, dv);
            }
        }
    }
}

/// The heap stores points as `u32`.
fn check_size(n: usize) -> Result<()> {
    if n >= ABSENT as usize {
        return Err(Error::invalid(
            "graph",
            format!("shortest paths support fewer than {ABSENT} points, the graph has {n}"),
        ));
    }
    Ok(())
}

/// All-pairs shortest-path distances (edge weights are lengths, e.g. from
/// [`crate::Weighting::Distance`] for Isomap): Dijkstra from every source in parallel,
/// O(n (n + E) log n). The matrix is exactly symmetric: `d_ij` and `d_ji` come from two
/// runs that may round differently, and the smaller is kept for both.
///
/// # Errors
/// [`Error::DisconnectedGraph`] if some pair is not connected (the error names the
/// component sizes; [`shortest_paths_from`] gives infinite distances instead);
/// [`Error::Interrupted`] when the process's interruption flag is set.
pub fn shortest_paths(g: &NeighbourGraph) -> Result<DMatrix<f64>> {
    check_size(g.n())?;
    let c = g.components();
    if c.count > 1 {
        return Err(disconnected(&c, g.n()));
    }
    let n = g.n();
    // Zeroed by the allocator (fresh pages from the system, no pass over them here): the
    // pages are first touched by the interruptible searches below, not by a long memset.
    let mut d = DMatrix::from_vec(n, n, vec![0.0; n * n]);
    // Column s (contiguous) receives the distances from s. One source is milliseconds of
    // work, so each checks the process's interruption flag.
    d.as_mut_slice()
        .par_chunks_mut(n)
        .enumerate()
        .try_for_each_init(
            || Heap::new(n),
            |heap, (s, col)| {
                interrupt::check()?;
                dijkstra(g, s, col, heap);
                Ok::<(), Error>(())
            },
        )?;
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
/// A source index outside `0..n`; [`Error::Interrupted`] as in [`shortest_paths`].
pub fn shortest_paths_from(g: &NeighbourGraph, sources: &[usize]) -> Result<DMatrix<f64>> {
    let n = g.n();
    check_size(n)?;
    if let Some(&s) = sources.iter().find(|&&s| s >= n) {
        return Err(Error::invalid(
            "sources",
            format!("source {s} is not a point of the graph (0..{n})"),
        ));
    }
    let rows: Vec<Vec<f64>> = sources
        .par_iter()
        .map_init(
            || Heap::new(n),
            |heap, &s| {
                interrupt::check()?;
                let mut dist = vec![0.0; n];
                dijkstra(g, s, &mut dist, heap);
                Ok(dist)
            },
        )
        .collect::<Result<_>>()?;
    Ok(DMatrix::from_fn(sources.len(), n, |r, j| rows[r][j]))
}
