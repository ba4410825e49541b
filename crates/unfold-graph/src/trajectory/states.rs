//! States: the segments of the tree between branch points and leaves, numbered from a
//! root, and the tip of a state to start pseudotime from.

use super::tree::{argmax, Tree};
use super::Position;
use std::collections::HashMap;
use unfold_core::{Error, Result};

/// Every edge's segment (maximal path through centres that are not branch points, so a
/// set-aside spur joins the segment it hangs from, and a junction's link the segment it
/// is entered from), numbered from 1 in
/// depth-first order from the root's edge, children by ascending centre; keyed by the
/// edge's `(min, max)` centres.
pub(super) fn numbered_segments(tree: &Tree, root: Position) -> HashMap<(usize, usize), usize> {
    let key = |a: usize, b: usize| (a.min(b), a.max(b));
    let mut state: HashMap<(usize, usize), usize> = HashMap::new();
    let mut next = 0;
    // Walk the root's edge from `root.from` to `root.to` first, then depth-first; an entry
    // is (node reached, the node we came from, the state carried along, if any).
    let mut stack: Vec<(usize, usize, Option<usize>)> = vec![(root.to, root.from, None)];
    // The root's edge continues through `root.from` when that centre has degree 2.
    let back: Vec<(usize, usize)> = tree.adjacent[root.from]
        .iter()
        .map(|&(c, _)| (c, root.from))
        .filter(|&(c, _)| c != root.to)
        .collect();
    while let Some((node, parent, carried)) = stack.pop() {
        let s = carried.unwrap_or_else(|| {
            next += 1;
            next
        });
        state.insert(key(node, parent), s);
        if state.len() == 1 {
            // After the root's edge: the edges on the other side of `root.from` (explored
            // after those beyond `root.to`), which continue the root's segment if
            // `root.from` has degree 2.
            for &(c, p) in back.iter().rev() {
                stack.push((c, p, tree.continues(p, c).then_some(s)));
            }
        }
        for &(c, _) in tree.adjacent[node].iter().rev() {
            if c != parent {
                stack.push((c, node, tree.continues(node, c).then_some(s)));
            }
        }
    }
    state
}

/// The root cell for `Root::State(s)`: the cell of state `s` farthest from the segment's
/// inner end (towards its leaf), states numbered from the automatic root `auto`.
pub(super) fn state_tip(
    tree: &Tree,
    position: &[Position],
    auto: usize,
    s: usize,
) -> Result<usize> {
    let segments = numbered_segments(tree, position[auto]);
    let count = segments.values().copied().max().unwrap_or(0);
    if s == 0 || s > count {
        return Err(Error::invalid(
            "root_state",
            format!("there is no state {s}: the tree has states 1 to {count}"),
        ));
    }
    // The segment's end centres: its branch points and leaves.
    let mut ends: Vec<usize> = segments
        .iter()
        .filter(|&(_, &v)| v == s)
        .flat_map(|(&(a, b), _)| [a, b])
        .filter(|&c| tree.branch[c] || tree.degree(c) == 1)
        .collect();
    ends.sort_unstable();
    ends.dedup();
    let leaves: Vec<usize> = ends
        .iter()
        .copied()
        .filter(|&c| tree.degree(c) == 1)
        .collect();
    let Some(&leaf) = leaves.first() else {
        return Err(Error::invalid(
            "root_state",
            format!(
                "state {s} lies between branch points {}; start from a state at a tip of \
                 the tree",
                ends.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        ));
    };
    // The inner end: its branch point; for a state without one (the whole tree), its
    // highest-numbered leaf.
    let inner = ends
        .iter()
        .copied()
        .find(|&c| tree.branch[c])
        .or_else(|| leaves.last().copied())
        .unwrap_or(leaf);
    let cells: Vec<usize> = (0..position.len())
        .filter(|&i| {
            let p = position[i];
            segments[&(p.from.min(p.to), p.from.max(p.to))] == s
        })
        .collect();
    if cells.is_empty() {
        return Err(Error::invalid(
            "root_state",
            format!("state {s} has no cells; choose another state"),
        ));
    }
    let origin = Position {
        from: inner,
        to: tree.adjacent[inner][0].0,
        t: 0.0,
    };
    let chosen: Vec<Position> = cells.iter().map(|&i| position[i]).collect();
    let d = tree.distances_along(origin, &chosen);
    Ok(cells[argmax(&d)])
}
