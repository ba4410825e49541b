//! Duplicate points merged into one node: what the registry fits for a method that needs
//! distinct points ([`crate::method::MethodInfo::distinct_points`]) when the data repeat a
//! row, as real data do (iris repeats one; single-cell data repeat many cells).
//!
//! The method is fitted to the distinct rows, and every copy of a row shares that row's
//! embedding: the fitted model is a model of the distinct points, and [`Merged`] reads its
//! outputs back onto the rows as given (the embedding, per-row tables, graph edges between
//! first copies). Its evidence is the inner model's, on the distinct points. A saved model
//! is the inner model: loaded again, it has one row per distinct point.

use crate::method::{Model, Named, Overlay, Points, Table};
use crate::traits::{Embedding, OutOfSample};
use nalgebra::DMatrix;
use unfold_core::{Convergence, Evidence, Result};

/// A model fitted to the distinct rows, read back onto every row (module doc).
pub struct Merged {
    inner: Box<dyn Model>,
    /// For every row as given, its distinct row.
    copy_of: Vec<usize>,
    /// The first row of each distinct row.
    first: Vec<usize>,
    /// The inner embedding, one row per row as given.
    coords: DMatrix<f64>,
}

impl Merged {
    /// `inner`, fitted to the rows `first` of the data, read back through `copy_of`
    /// ([`unfold_graph::distinct_rows`]).
    pub(crate) fn new(inner: Box<dyn Model>, first: Vec<usize>, copy_of: Vec<usize>) -> Self {
        let coords = expand(inner.coords(), &copy_of);
        Merged {
            inner,
            copy_of,
            first,
            coords,
        }
    }

    /// The warning that says what was merged.
    pub(crate) fn message(method: &str, first: &[usize], copy_of: &[usize]) -> String {
        let (copies, rows) = repeated_rows(first, copy_of);
        format!(
            "{copies} of the {} points {} another point exactly (0-based rows: {rows}); {method} \
             needs distinct points, so it was fitted to the {} distinct ones and every copy \
             shares its point's embedding (the fit's other warnings number the distinct \
             points). Pass duplicates = jitter to move the copies apart instead, or error to \
             refuse such data",
            copy_of.len(),
            if copies == 1 { "repeats" } else { "repeat" },
            first.len()
        )
    }
}

/// The distinct rows of `y`, dense or sparse ([`unfold_graph::distinct_rows`]): the first
/// row of each and every row's distinct row, `None` when all are distinct.
///
/// # Errors
/// Dense points that are not finite.
pub(crate) fn distinct(y: Points<'_>) -> Result<Option<(Vec<usize>, Vec<usize>)>> {
    match y.as_sparse() {
        Some(sparse) => Ok(unfold_graph::distinct_rows_sparse(sparse)),
        None => unfold_graph::distinct_rows(&y.matrix()),
    }
}

/// `f` of the rows `rows` of `y`, sparse or dense as `y` is (dense rows are read from
/// the view, without a copy of the whole matrix).
///
/// # Errors
/// None for points made by [`Points`]' constructors; the view's error otherwise.
pub(crate) fn on_rows<T>(
    y: Points<'_>,
    rows: &[usize],
    f: impl FnOnce(Points<'_>) -> T,
) -> Result<T> {
    Ok(match y.as_sparse() {
        Some(sparse) => f(Points::sparse(&sparse.select_rows(rows))),
        None => {
            let v = y.view()?;
            let selected = DMatrix::from_fn(rows.len(), v.ncols(), |r, c| v[(rows[r], c)]);
            f(Points::from(&selected))
        }
    })
}

/// How many rows are copies, and the first five as `copy = original` (0-based rows).
pub(crate) fn repeated_rows(first: &[usize], copy_of: &[usize]) -> (usize, String) {
    let repeated: Vec<String> = (0..copy_of.len())
        .filter(|&i| first[copy_of[i]] != i)
        .take(5)
        .map(|i| format!("{} = {}", i, first[copy_of[i]]))
        .collect();
    let copies = copy_of.len() - first.len();
    let more = if copies > 5 { ", ..." } else { "" };
    (copies, format!("{}{more}", repeated.join(", ")))
}

/// The rows of `m` (one per distinct row) repeated onto every row.
fn expand(m: &DMatrix<f64>, copy_of: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(copy_of.len(), m.ncols(), |i, j| m[(copy_of[i], j)])
}

impl Embedding for Merged {
    fn coords(&self) -> &DMatrix<f64> {
        &self.coords
    }

    fn evidence(&self) -> Evidence {
        self.inner.evidence()
    }
}

impl crate::method::Encode for Merged {
    fn encode(&self) -> Result<Vec<u8>> {
        self.inner.encode()
    }
}

impl Named for Merged {
    fn method(&self) -> &'static str {
        self.inner.method()
    }
}

impl Model for Merged {
    fn convergence(&self) -> Convergence {
        self.inner.convergence()
    }

    fn out_of_sample(&self) -> Option<&dyn OutOfSample> {
        self.inner.out_of_sample()
    }

    /// The inner model's evidence on the distinct rows of `y`.
    fn evidence_on(&self, y: Points<'_>) -> Result<Evidence> {
        match distinct(y)? {
            None => self.inner.evidence_on(y),
            Some((first, _)) => on_rows(y, &first, |rows| self.inner.evidence_on(rows))?,
        }
    }

    /// The inner graph's edges, between the first copies of their points.
    fn learned_edges(&self) -> Option<Vec<(usize, usize, f64)>> {
        let edges = self.inner.learned_edges()?;
        Some(
            edges
                .into_iter()
                .map(|(i, j, w)| (self.first[i], self.first[j], w))
                .collect(),
        )
    }

    /// The inner tables, those with a row per distinct point repeated onto every row.
    fn tables(&self) -> Vec<Table> {
        self.inner
            .tables()
            .into_iter()
            .map(|t| match t.rows.nrows() == self.first.len() {
                true => Table {
                    rows: expand(&t.rows, &self.copy_of),
                    ..t
                },
                false => t,
            })
            .collect()
    }

    fn overlay(&self) -> Option<Overlay> {
        let mut o = self.inner.overlay()?;
        if let Some((name, values)) = o.colour_by.take() {
            let values = self.copy_of.iter().map(|&u| values[u]).collect();
            o.colour_by = Some((name, values));
        }
        Some(o)
    }

    fn notes(&self) -> Vec<(String, String)> {
        let mut notes = self.inner.notes();
        notes.push((
            "duplicates".to_string(),
            format!(
                "{} rows merged into {} distinct points",
                self.copy_of.len(),
                self.first.len()
            ),
        ));
        notes
    }

    fn validate(&self) -> Result<()> {
        self.inner.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_repeats_each_distinct_row_onto_its_copies() {
        let m = DMatrix::from_row_slice(3, 1, &[10.0, 20.0, 30.0]);
        assert_eq!(
            expand(&m, &[0, 1, 0, 1, 2]).as_slice(),
            &[10.0, 20.0, 10.0, 20.0, 30.0]
        );
    }
}
