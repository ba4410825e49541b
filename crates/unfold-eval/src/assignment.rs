//! Optimal assignment (the Hungarian method, in its shortest-augmenting-path form).

use nalgebra::DMatrix;
use unfold_core::{check_finite, Error, Result};

/// Minimum-cost assignment of every row of `cost` (r x c, `r <= c`) to its own column:
/// returns `col` with `col[i]` the column given to row `i`, all distinct, minimising
/// `sum_i cost[(i, col[i])]`.
///
/// Kuhn–Munkres in the shortest-augmenting-path form of Jonker & Volgenant (1987): rows are
/// added one at a time; each addition runs Dijkstra on the reduced costs
/// `cost[(i, j)] - u[i] - v[j] >= 0` from the new row to a free column, flips the matching
/// along that path and updates the dual potentials `u`, `v` so that reduced costs stay
/// non-negative and are zero on matched pairs (complementary slackness proves optimality).
/// O(r^2 c) time. Among several optimal assignments the one returned is deterministic.
///
/// Errors: an empty or non-finite cost matrix, or more rows than columns (transpose it).
pub fn hungarian(cost: &DMatrix<f64>) -> Result<Vec<usize>> {
    check_finite(cost, "cost matrix")?;
    let (rows, cols) = cost.shape();
    if rows > cols {
        return Err(Error::DimensionMismatch(format!(
            "the cost matrix has more rows ({rows}) than columns ({cols}), so not every row can \
             get its own column; pass its transpose"
        )));
    }
    // Column index 0 is a virtual column holding the row being inserted; real column j is
    // stored at j + 1. `owner[j]` is the (1-based) row matched to column j, 0 if free.
    let mut u = vec![0.0; rows + 1];
    let mut v = vec![0.0; cols + 1];
    let mut owner = vec![0usize; cols + 1];
    let mut previous = vec![0usize; cols + 1];
    for row in 1..=rows {
        owner[0] = row;
        let mut slack = vec![f64::INFINITY; cols + 1];
        let mut visited = vec![false; cols + 1];
        let mut current = 0usize;
        // Dijkstra on reduced costs until the path reaches a free column.
        loop {
            visited[current] = true;
            let i = owner[current];
            let mut delta = f64::INFINITY;
            let mut next = 0usize;
            for j in 1..=cols {
                if visited[j] {
                    continue;
                }
                let reduced = cost[(i - 1, j - 1)] - u[i] - v[j];
                if reduced < slack[j] {
                    slack[j] = reduced;
                    previous[j] = current;
                }
                if slack[j] < delta {
                    delta = slack[j];
                    next = j;
                }
            }
            for j in 0..=cols {
                if visited[j] {
                    u[owner[j]] += delta;
                    v[j] -= delta;
                } else {
                    slack[j] -= delta;
                }
            }
            current = next;
            if owner[current] == 0 {
                break;
            }
        }
        // Flip the matching along the augmenting path back to the virtual column.
        while current != 0 {
            let before = previous[current];
            owner[current] = owner[before];
            current = before;
        }
    }
    let mut assignment = vec![0usize; rows];
    for j in 1..=cols {
        if owner[j] != 0 {
            assignment[owner[j] - 1] = j - 1;
        }
    }
    Ok(assignment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn total(cost: &DMatrix<f64>, assignment: &[usize]) -> f64 {
        assignment
            .iter()
            .enumerate()
            .map(|(i, &j)| cost[(i, j)])
            .sum()
    }

    /// All injective maps from `rows` rows into `cols` columns.
    fn all_assignments(rows: usize, cols: usize) -> Vec<Vec<usize>> {
        if rows == 0 {
            return vec![Vec::new()];
        }
        let mut out = Vec::new();
        for prefix in all_assignments(rows - 1, cols) {
            for j in (0..cols).filter(|j| !prefix.contains(j)) {
                let mut a = prefix.clone();
                a.push(j);
                out.push(a);
            }
        }
        out
    }

    fn check_optimal(cost: &DMatrix<f64>) {
        let got = hungarian(cost).unwrap();
        let mut sorted = got.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), cost.nrows(), "columns not distinct: {got:?}");
        let best = all_assignments(cost.nrows(), cost.ncols())
            .iter()
            .map(|a| total(cost, a))
            .fold(f64::INFINITY, f64::min);
        assert!((total(cost, &got) - best).abs() < 1e-12, "{got:?}");
    }

    #[test]
    fn matches_brute_force_on_random_costs() {
        let mut rng = unfold_core::seeded_rng(5);
        for _ in 0..50 {
            let cost = DMatrix::from_fn(5, 5, |_, _| rng.random_range(-10.0..10.0));
            check_optimal(&cost);
        }
        for _ in 0..20 {
            // Integer costs: many ties.
            let cost = DMatrix::from_fn(5, 5, |_, _| rng.random_range(0..4) as f64);
            check_optimal(&cost);
        }
        for (r, c) in [(3, 5), (1, 4), (4, 6)] {
            for _ in 0..10 {
                let cost = DMatrix::from_fn(r, c, |_, _| rng.random_range(0.0..1.0));
                check_optimal(&cost);
            }
        }
    }

    #[test]
    fn known_small_case() {
        let cost = DMatrix::from_row_slice(3, 3, &[4., 1., 3., 2., 0., 5., 3., 2., 2.]);
        // Optimal: row 0 -> 1, row 1 -> 0, row 2 -> 2, total 1 + 2 + 2 = 5.
        assert_eq!(hungarian(&cost).unwrap(), vec![1, 0, 2]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            hungarian(&DMatrix::zeros(3, 2)),
            Err(Error::DimensionMismatch(_))
        ));
        assert!(matches!(
            hungarian(&DMatrix::zeros(0, 0)),
            Err(Error::Empty(_))
        ));
        let mut bad = DMatrix::zeros(2, 2);
        bad[(1, 1)] = f64::NAN;
        assert!(matches!(hungarian(&bad), Err(Error::NonFinite { .. })));
    }
}
