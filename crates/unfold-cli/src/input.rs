//! The data a command reads: the points of `--input`, with `--preprocess` applied.

use std::path::Path;
use unfold_core::Result;
use unfold_data::{read_points, CsvOptions, Dataset, Preprocessing, Step};

/// Reads `input` and fits the `--preprocess` steps (if any) to its points; the returned
/// data set holds the transformed points.
pub fn load(
    input: &Path,
    label_column: Option<&str>,
    preprocess: Option<&str>,
) -> Result<(Dataset, Preprocessing)> {
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
