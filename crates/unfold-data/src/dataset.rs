use nalgebra::DMatrix;

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
