//! Orderings that make a neighbourhood relation acyclic (acyclic LLE, Lawrence 2012 §2.7.4).

use crate::knn::Knn;
use unfold_core::{Error, Result};

/// Parents of every point under an ordering, for acyclic LLE (ALLE).
///
/// `order` is a permutation of `0..n` listing the points from first to last: the position
/// of a point in `order` is its rank. The parents of point `i` are its kNN neighbours
/// (`knn.indices[i]`) that come **later** in the ordering, kept in kNN order (nearest
/// first). Every parent edge goes to a strictly higher rank, so the parent relation is a
/// DAG and, with points renumbered by rank, the ALLE factor `M` is lower triangular; the
/// last point has no parents. (The paper searches the k nearest among the later points
/// only; this helper filters the ordinary kNN lists instead, so points late in the order
/// have fewer than k parents.)
///
/// # Errors
/// `order` not a permutation of `0..n`, or a neighbour index outside `0..n`.
pub fn acyclic_parents(knn: &Knn, order: &[usize]) -> Result<Vec<Vec<usize>>> {
    let n = knn.indices.len();
    if order.len() != n {
        return Err(Error::DimensionMismatch(format!(
            "the ordering has {} entries but the kNN result has {n} points",
            order.len()
        )));
    }
    let rank = ranks(order, n)?;
    knn.indices
        .iter()
        .enumerate()
        .map(|(i, js)| {
            if let Some(&j) = js.iter().find(|&&j| j >= n) {
                return Err(Error::invalid(
                    "knn",
                    format!("neighbour {j} of point {i} is outside 0..{n}"),
                ));
            }
            Ok(js.iter().copied().filter(|&j| rank[j] > rank[i]).collect())
        })
        .collect()
}

/// The position of each point in `order` (`rank[order[r]] = r`), which must hold each
/// of `0..n` once.
///
/// # Errors
/// An entry out of range or repeated (a shorter `order` leaves a point out, which the
/// caller compares with n).
pub(crate) fn ranks(order: &[usize], n: usize) -> Result<Vec<usize>> {
    let mut rank = vec![usize::MAX; n];
    for (r, &i) in order.iter().enumerate() {
        if i >= n || rank[i] != usize::MAX {
            return Err(Error::invalid(
                "order",
                format!("must be a permutation of 0..{n}, but entry {r} is {i} (out of range or repeated)"),
            ));
        }
        rank[i] = r;
    }
    Ok(rank)
}
