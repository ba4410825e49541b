//! `unfold project`.

use crate::args::ProjectArgs;
use crate::fit::coord_header;
use crate::interrupt::Interrupt;
use unfold_core::{Error, Result};
use unfold_data::{read_points, write_csv, CsvOptions};
use unfold_models::registry::Registry;

pub fn run(registry: &Registry, a: &ProjectArgs) -> Result<()> {
    let stop = Interrupt::install(indicatif::ProgressBar::hidden(), |signal| {
        format!("unfold project: stopped by {signal}; nothing was written")
    })?;
    let saved = registry.load_saved(&a.model)?;
    let model = saved.model;
    let rule = model.out_of_sample().ok_or_else(|| {
        Error::invalid(
            "model",
            format!(
                "{} has no out-of-sample rule; refit with {} to project new points",
                model.method(),
                registry.names_where(|i| i.projects)
            ),
        )
    })?;
    // New points in a sparse matrix are read as their dense values (within the memory
    // limit): they are few, and every projection reads them whole.
    let points = match unfold_data::read_sparse(&a.input)? {
        Some(csr) => {
            unfold_models::traits::check_dense_copy(csr.nrows, csr.ncols)?;
            csr.to_dense()?
        }
        None => {
            let options = CsvOptions {
                label_column: a.label_column.clone(),
            };
            read_points(&a.input, &options)?.points
        }
    };
    // A model fitted after `--preprocess` carries the fitted steps: new points go through
    // them first, as the training points did.
    let points = saved.preprocessing.apply(points)?;
    let projection = rule.project(&points)?;
    let _writing = stop.writing();
    write_csv(
        &a.out,
        &projection.mean,
        &coord_header(projection.mean.ncols()),
    )?;
    if let Some(path) = &a.variances {
        let cov = projection.covariance.as_ref().ok_or_else(|| {
            Error::invalid(
                "variances",
                format!(
                    "the {} model gives positions only, no variances",
                    model.method()
                ),
            )
        })?;
        let q = projection.mean.ncols();
        let var = nalgebra::DMatrix::from_fn(cov.len(), q, |i, c| cov[i][(c, c)]);
        let header: Vec<String> = (1..=q).map(|c| format!("var{c}")).collect();
        write_csv(path, &var, &header)?;
    }
    let after = if saved.preprocessing.is_empty() {
        String::new()
    } else {
        format!(
            " after its preprocessing ({})",
            saved.preprocessing.describe()
        )
    };
    eprintln!(
        "projected {} points with the {} model{after}; wrote {}",
        points.nrows(),
        model.method(),
        a.out.display()
    );
    Ok(())
}
