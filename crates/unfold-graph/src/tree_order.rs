//! A depth-first order of the nodes of a forest in which every subtree is a contiguous run
//! (DDRTree numbers its centres by it, so that the non-zeros of a soft assignment lie on
//! few runs of columns).

use crate::union_find::UnionFind;
use unfold_core::{Error, Result};

/// Depth-first preorder of the nodes `0..k` over the forest `edges`: each subtree is a
/// contiguous run of positions. Each component is rooted at an end of a longest path (in
/// edges; the farthest node from its smallest), and children are visited by ascending
/// subtree size (then index), the largest last, so a node's parent and heavy child are near
/// it in the order (the gaps are the smaller subtrees visited in between). DDRTree numbers
/// its centres so: a point's assignments lie around its nearest centre, so most rows of
/// `R` span few positions.
///
/// The weights of `edges` are not read (a spanning tree's edges can be passed as found).
///
/// # Errors
/// An edge with an end outside `0..k` or a loop, or edges that close a cycle (not a
/// forest).
pub fn tree_order(edges: &[(usize, usize, f64)], k: usize) -> Result<Vec<usize>> {
    check_forest(edges, k)?;
    let mut adjacent = vec![Vec::new(); k];
    for &(a, b, _) in edges {
        adjacent[a].push(b);
        adjacent[b].push(a);
    }
    let mut parent = vec![usize::MAX; k];
    let mut placed = vec![false; k];
    let mut order = Vec::with_capacity(k);
    let (mut visit, mut stack) = (Vec::new(), Vec::new());
    let mut size = vec![1usize; k];
    for first in 0..k {
        if placed[first] {
            continue;
        }
        // The last node reached breadth-first is a farthest one.
        breadth_first(&adjacent, first, &mut parent, &mut visit);
        let root = *visit.last().expect("the component holds `first`");
        breadth_first(&adjacent, root, &mut parent, &mut visit);
        for &v in visit.iter().rev() {
            size[v] = 1 + adjacent[v]
                .iter()
                .filter(|&&u| parent[u] == v)
                .map(|&u| size[u])
                .sum::<usize>();
        }
        stack.push(root);
        while let Some(v) = stack.pop() {
            placed[v] = true;
            order.push(v);
            let mut children: Vec<usize> = adjacent[v]
                .iter()
                .copied()
                .filter(|&u| parent[u] == v)
                .collect();
            children.sort_unstable_by_key(|&u| (size[u], u));
            stack.extend(children.into_iter().rev());
        }
    }
    Ok(order)
}

/// The nodes of `root`'s component in breadth-first order into `visit`, and the parent of
/// each in `parent` (`usize::MAX` at the root).
fn breadth_first(
    adjacent: &[Vec<usize>],
    root: usize,
    parent: &mut [usize],
    visit: &mut Vec<usize>,
) {
    visit.clear();
    visit.push(root);
    parent[root] = usize::MAX;
    let mut head = 0;
    while head < visit.len() {
        let v = visit[head];
        head += 1;
        for &u in &adjacent[v] {
            if u != parent[v] {
                parent[u] = v;
                visit.push(u);
            }
        }
    }
}

/// Refuses `edges` over `0..k` that are not a forest (an end out of range, a loop, a cycle).
fn check_forest(edges: &[(usize, usize, f64)], k: usize) -> Result<()> {
    let mut sets = UnionFind::new(k);
    for &(a, b, _) in edges {
        if a >= k || b >= k || a == b {
            return Err(Error::invalid(
                "edges",
                format!("edge ({a}, {b}) is not a pair of distinct nodes of 0..{k}"),
            ));
        }
        if !sets.union(a, b) {
            return Err(Error::invalid(
                "edges",
                format!("edge ({a}, {b}) closes a cycle: the edges must form a tree or forest"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minimum_spanning_tree_dense;
    use nalgebra::DMatrix;
    use rand::Rng;
    use unfold_linalg::pairwise_sq_dists;

    /// The parent of every node under `order` (`usize::MAX` at the roots): its one
    /// neighbour placed earlier.
    fn parents(edges: &[(usize, usize, f64)], order: &[usize]) -> Vec<usize> {
        let k = order.len();
        let mut position = vec![0; k];
        for (p, &v) in order.iter().enumerate() {
            position[v] = p;
        }
        let mut parent = vec![usize::MAX; k];
        for &v in order {
            let neighbours = edges
                .iter()
                .filter_map(|&(a, b, _)| (a == v).then_some(b).or((b == v).then_some(a)));
            let earlier: Vec<usize> = neighbours.filter(|&u| position[u] < position[v]).collect();
            assert!(earlier.len() <= 1, "node {v} has two earlier neighbours");
            if let [u] = earlier[..] {
                parent[v] = u;
            }
        }
        parent
    }

    #[test]
    fn tree_order_keeps_subtrees_contiguous() {
        let mut rng = unfold_core::seeded_rng(13);
        let c = DMatrix::from_fn(60, 2, |_, _| rng.random::<f64>());
        let edges = minimum_spanning_tree_dense(&pairwise_sq_dists(&c)).unwrap();
        let order = tree_order(&edges, 60).unwrap();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..60).collect::<Vec<_>>());
        let mut position = vec![0; 60];
        for (p, &v) in order.iter().enumerate() {
            position[v] = p;
        }
        // Rooted at order[0], every other node's parent comes earlier, and the subtree of
        // the node at position p fills positions p..p + size.
        let parent = parents(&edges, &order);
        assert_eq!(parent.iter().filter(|&&p| p == usize::MAX).count(), 1);
        for v in 0..60 {
            let mut members = Vec::new();
            for (u, &pu) in position.iter().enumerate() {
                let mut w = u;
                while w != v && parent[w] != usize::MAX {
                    w = parent[w];
                }
                if w == v {
                    members.push(pu);
                }
            }
            members.sort_unstable();
            let p = position[v];
            assert_eq!(members, (p..p + members.len()).collect::<Vec<_>>());
        }
    }

    /// A forest: each component is one run, rooted at an end of its longest path, the
    /// larger child last; an isolated node is a run of its own.
    #[test]
    fn a_forest_is_ordered_component_by_component() {
        // 0-1-2-3 with 4 hanging from 1; 5 alone; 6-7.
        let edges = [
            (0, 1, 1.0),
            (1, 2, 1.0),
            (2, 3, 1.0),
            (1, 4, 1.0),
            (6, 7, 1.0),
        ];
        let order = tree_order(&edges, 8).unwrap();
        // From 0, the farthest node is 3: rooted there, 1's children are 4 (size 1) and 0
        // (size 1), by index.
        assert_eq!(order, [3, 2, 1, 0, 4, 5, 7, 6]);
    }

    #[test]
    fn edges_that_are_not_a_forest_are_refused() {
        for (edges, k, what) in [
            (vec![(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)], 3, "cycle"),
            (vec![(0, 1, 1.0), (0, 1, 1.0)], 2, "cycle"),
            (vec![(0, 3, 1.0)], 3, "0..3"),
            (vec![(1, 1, 1.0)], 3, "distinct"),
        ] {
            let err = tree_order(&edges, k).unwrap_err().to_string();
            assert!(err.contains(what), "{err}");
        }
        assert_eq!(tree_order(&[], 0).unwrap(), Vec::<usize>::new());
    }
}
