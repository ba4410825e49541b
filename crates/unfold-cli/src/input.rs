//! The data a command reads: the points of `--input`, with `--preprocess` applied.

use std::path::Path;
use unfold_core::Result;
use unfold_data::{read_points, CsvOptions, Dataset, Preprocessing, Step};
use unfold_linalg::SparsePoints;
use unfold_models::method::Points;

/// The points a fit reads: a data set (with `--preprocess` applied), or a sparse matrix
/// as it is, for a method that takes sparse points.
pub enum Loaded {
    Dense(Dataset),
    Sparse(SparsePoints<'static>),
}

impl Loaded {
    /// The points, as the registry fits them.
    pub fn points(&self) -> Points<'_> {
        match self {
            Loaded::Dense(data) => Points::from(&data.points),
            Loaded::Sparse(rows) => Points::sparse(rows),
        }
    }

    /// The number of points and of features.
    pub fn shape(&self) -> (usize, usize) {
        match self {
            Loaded::Dense(data) => data.points.shape(),
            Loaded::Sparse(rows) => rows.shape(),
        }
    }

    /// The class of each point, where the input names them.
    pub fn labels(&self) -> Option<&[usize]> {
        match self {
            Loaded::Dense(data) => data.labels.as_deref(),
            Loaded::Sparse(_) => None,
        }
    }
}

/// [`load`] for a fit: a sparse matrix without `--preprocess` is read as sparse rows
/// when `takes_sparse` (the method fits sparse points as they are).
pub fn load_for(
    input: &Path,
    label_column: Option<&str>,
    preprocess: Option<&str>,
    takes_sparse: bool,
) -> Result<(Loaded, Preprocessing)> {
    if takes_sparse && preprocess.is_none() {
        if let Some(csr) = unfold_data::read_sparse(input)? {
            return Ok((Loaded::Sparse(csr.to_points()?), Preprocessing::default()));
        }
    }
    let (data, preprocessing) = load(input, label_column, preprocess)?;
    Ok((Loaded::Dense(data), preprocessing))
}

/// Reads `input` and fits the `--preprocess` steps (if any) to its points; the returned
/// data set holds the transformed points. A sparse matrix saved by
/// `scipy.sparse.save_npz` is reduced without a dense copy ([`Preprocessing::fit_sparse`]:
/// `--preprocess log1p,pca:50` and the like).
pub fn load(
    input: &Path,
    label_column: Option<&str>,
    preprocess: Option<&str>,
) -> Result<(Dataset, Preprocessing)> {
    if let Some(csr) = unfold_data::read_sparse(input)? {
        let steps = match preprocess {
            Some(text) => Step::parse_list(text)?,
            None => return Err(sparse_needs_pca(csr.nrows, csr.ncols)),
        };
        let (pipeline, points) = Preprocessing::fit_sparse(&steps, csr)?;
        let name = input
            .file_stem()
            .map_or_else(|| "data".to_string(), |s| s.to_string_lossy().into_owned());
        let mut data = Dataset::from_points(&name, points);
        data.feature_names = (1..=data.points.ncols())
            .map(|j| format!("pc{j}"))
            .collect();
        return Ok((data, pipeline));
    }
    let mut data = read_points(
        input,
        &CsvOptions {
            label_column: label_column.map(str::to_string),
        },
    )?;
    let Some(steps) = preprocess else {
        return Ok((data, Preprocessing::default()));
    };
    let steps = Step::parse_list(steps)?;
    let points = std::mem::replace(&mut data.points, nalgebra::DMatrix::zeros(0, 0));
    let (pipeline, points) = Preprocessing::fit(&steps, points)?;
    if points.ncols() != data.feature_names.len() {
        data.feature_names = (1..=points.ncols()).map(|j| format!("pc{j}")).collect();
    }
    data.points = points;
    Ok((data, pipeline))
}

/// The refusal of sparse input without a reduction.
fn sparse_needs_pca(n: usize, p: usize) -> unfold_core::Error {
    unfold_core::Error::invalid(
        "preprocess",
        format!(
            "the input is a sparse {n} x {p} matrix: reduce it with --preprocess pca:Q (after \
             log1p, if any), e.g. --preprocess log1p,pca:50; this command computes on dense \
             points (unfold fit --method isomap, le or lle takes the sparse matrix as it is)"
        ),
    )
}
