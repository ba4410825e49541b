use nalgebra::DMatrix;
use unfold_core::{Error, Result};

/// A data set: n points with p features each, one point per row, with optional class
/// labels and optional ground-truth latent coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub name: String,
    /// n x p, one point per row.
    pub points: DMatrix<f64>,
    /// One name per feature column.
    pub feature_names: Vec<String>,
    /// Class of each point, `0..label_names.len()`.
    pub labels: Option<Vec<usize>>,
    /// Name of each class.
    pub label_names: Vec<String>,
    /// True manifold coordinates of each point (n x d), where known.
    pub latent: Option<DMatrix<f64>>,
    /// An identifier per point (e.g. a station id), or empty.
    pub row_names: Vec<String>,
}

impl Dataset {
    /// A data set of bare points with generated feature names `y1..yp`.
    pub fn from_points(name: &str, points: DMatrix<f64>) -> Self {
        Dataset {
            name: name.to_string(),
            feature_names: (1..=points.ncols()).map(|j| format!("y{j}")).collect(),
            points,
            labels: None,
            label_names: Vec::new(),
            latent: None,
            row_names: Vec::new(),
        }
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.points.nrows()
    }

    /// Number of features.
    pub fn p(&self) -> usize {
        self.points.ncols()
    }

    /// A simulated trajectory's truth: the first latent column (each point's true time,
    /// as `synthetic::tree` and `synthetic::branching` record it) and the earliest point.
    /// `None` without latent coordinates or points.
    pub fn time_and_start(&self) -> Option<(Vec<f64>, usize)> {
        let time: Vec<f64> = self.latent.as_ref()?.column(0).iter().copied().collect();
        let start = (0..time.len()).min_by(|&a, &b| time[a].total_cmp(&time[b]))?;
        Some((time, start))
    }

    /// The same data set (labels, latent coordinates, row names) with new points, e.g.
    /// standardised ones. Feature names are kept when the number of columns is unchanged
    /// and become `y1..yp` otherwise.
    ///
    /// Fails with [`Error::DimensionMismatch`] when `points` has a different number of rows.
    pub fn with_points(&self, points: DMatrix<f64>) -> Result<Dataset> {
        if points.nrows() != self.n() {
            return Err(Error::DimensionMismatch(format!(
                "{} new rows for data set {:?} of {} points",
                points.nrows(),
                self.name,
                self.n()
            )));
        }
        let feature_names = if points.ncols() == self.p() {
            self.feature_names.clone()
        } else {
            (1..=points.ncols()).map(|j| format!("y{j}")).collect()
        };
        Ok(Dataset {
            points,
            feature_names,
            ..self.clone()
        })
    }

    /// The data set restricted to the given rows, in the given order.
    ///
    /// # Panics
    /// If a row index is out of range (a programming error).
    pub fn select_rows(&self, rows: &[usize]) -> Dataset {
        let pick =
            |m: &DMatrix<f64>| DMatrix::from_fn(rows.len(), m.ncols(), |i, j| m[(rows[i], j)]);
        Dataset {
            name: self.name.clone(),
            points: pick(&self.points),
            feature_names: self.feature_names.clone(),
            labels: self
                .labels
                .as_ref()
                .map(|l| rows.iter().map(|&i| l[i]).collect()),
            label_names: self.label_names.clone(),
            latent: self.latent.as_ref().map(pick),
            row_names: if self.row_names.is_empty() {
                Vec::new()
            } else {
                rows.iter().map(|&i| self.row_names[i].clone()).collect()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_points_keeps_labels_and_checks_rows() {
        let mut d = Dataset::from_points(
            "d",
            DMatrix::from_row_slice(3, 2, &[1., 2., 3., 4., 5., 6.]),
        );
        d.feature_names = vec!["a".into(), "b".into()];
        d.labels = Some(vec![0, 1, 0]);
        let same = d.with_points(d.points.scale(2.0)).unwrap();
        assert_eq!(same.labels, d.labels);
        assert_eq!(same.feature_names, ["a", "b"]);
        assert_eq!(same.points[(2, 1)], 12.0);
        let wider = d.with_points(DMatrix::zeros(3, 3)).unwrap();
        assert_eq!(wider.feature_names, ["y1", "y2", "y3"]);
        assert!(matches!(
            d.with_points(DMatrix::zeros(2, 2)),
            Err(Error::DimensionMismatch(_))
        ));
        let sub = d.select_rows(&[2, 0]);
        assert_eq!(sub.labels, Some(vec![0, 0]));
        assert_eq!(sub.points.row(0)[0], 5.0);
    }
}
