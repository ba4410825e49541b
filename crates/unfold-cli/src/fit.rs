//! `unfold fit`.

use crate::args::FitArgs;
use crate::methods;
use crate::plot::{scatter_svg, Colouring};
use crate::report::Report;
use indicatif::{ProgressBar, ProgressStyle};
use nalgebra::DMatrix;
use std::time::Instant;
use unfold_core::{Convergence, Evidence, Result};
use unfold_data::{read_csv, to_csv_string, write_csv, CsvOptions};
use unfold_models::FittedModel;
use unfold_vem::Observer;

/// The header of an embedding CSV: `x1,...,xQ`.
pub fn coord_header(dim: usize) -> Vec<String> {
    (1..=dim).map(|j| format!("x{j}")).collect()
}

/// A progress line on standard error while a fit runs (hidden when it is not a terminal).
struct Progress {
    bar: ProgressBar,
}

impl Progress {
    fn new(method: &str) -> Self {
        let bar = ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {prefix} {msg} ({elapsed})")
                .expect("a valid template"),
        );
        bar.set_prefix(format!("unfold fit {method}"));
        // Every fit shows its elapsed time; iterative fits also report each iteration.
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Progress { bar }
    }
}

impl Observer for Progress {
    fn iteration(&self, restart: usize, iteration: usize, evidence: &Evidence) {
        self.bar.set_message(format!(
            "restart {restart}, iteration {iteration}: {} {:.4}",
            evidence.kind, evidence.value
        ));
        self.bar.tick();
    }
}

pub fn run(a: &FitArgs) -> Result<()> {
    let data = read_csv(
        &a.input,
        &CsvOptions {
            label_column: a.label_column.clone(),
        },
    )?;
    let start = Instant::now();
    let progress = Progress::new(methods::name(a.method.method));
    let model = methods::fit(&a.method, &data.points, &progress);
    progress.bar.finish_and_clear();
    let model = model?;
    let seconds = start.elapsed().as_secs_f64();
    let convergence = match &model {
        FittedModel::Meu(m) => m.convergence.clone(),
        FittedModel::Drill(m) => m.convergence.clone(),
        FittedModel::LlLvm(m) => m.convergence.clone(),
        FittedModel::Spl(m) => m.convergence.clone(),
        FittedModel::Mpme(m) => m.convergence.clone(),
        FittedModel::DrTree(m) => m.convergence.clone(),
        FittedModel::DdrTree(m) => m.convergence.clone(),
        _ => Convergence::closed_form(),
    };
    let (iterations, converged, trace) = (
        convergence.iterations,
        convergence.converged,
        convergence.trace,
    );
    let embedding = model.embedding();
    let x = embedding.coords();
    let header = coord_header(x.ncols());
    let name = methods::name(a.method.method);

    // Checked before anything is written, so a bad request leaves no partial output.
    let graph_table = match &a.graph_out {
        None => None,
        Some(_) => {
            let edges = match &model {
                // DRILL's learned structure: the non-zero off-diagonal precision entries.
                FittedModel::Drill(m) => m
                    .learned_edges()
                    .into_iter()
                    .map(|(i, j)| (i, j, -m.precision[(i, j)]))
                    .collect(),
                _ => embedding
                    .graph()
                    .ok_or_else(|| {
                        unfold_core::Error::invalid(
                            "graph-out",
                            format!("{name} has no graph to write; use a graph-based method"),
                        )
                    })?
                    .edges(),
            };
            Some(DMatrix::from_fn(edges.len(), 3, |r, c| {
                let (i, j, w) = edges[r];
                [i as f64, j as f64, w][c]
            }))
        }
    };
    let mut wrote = Vec::new();
    if let Some(out) = &a.out {
        write_csv(out, x, &header)?;
        wrote.push(format!("embedding {}", out.display()));
        if let FittedModel::DdrTree(m) = &model {
            let (tree, centres) = (
                out.with_extension("tree.csv"),
                out.with_extension("centres.csv"),
            );
            let edges = DMatrix::from_fn(m.edges.len(), 3, |r, c| {
                let (i, j, d2) = m.edges[r];
                [i as f64, j as f64, d2][c]
            });
            write_csv(
                &tree,
                &edges,
                &[
                    "centre_i".into(),
                    "centre_j".into(),
                    "squared_length".into(),
                ],
            )?;
            write_csv(&centres, &m.centres, &coord_header(m.centres.ncols()))?;
            wrote.push(format!(
                "tree {} and centres {}",
                tree.display(),
                centres.display()
            ));
        }
    }
    if let Some(path) = &a.save {
        model.save(path)?;
        wrote.push(format!("model {}", path.display()));
    }
    if let Some(path) = &a.report {
        let report = Report {
            method: name.to_string(),
            n: data.points.nrows(),
            p: data.points.ncols(),
            dim: a.method.dim,
            k: methods::uses_graph(a.method.method).then_some(a.method.k),
            seconds,
            iterations,
            converged,
            evidence: (&embedding.evidence()).into(),
            trace,
        };
        let json = serde_json::to_string_pretty(&report).expect("a report always serialises");
        unfold_core::write_atomic(path, json.as_bytes())?;
        wrote.push(format!("report {}", path.display()));
    }
    if let (Some(path), Some(table)) = (&a.graph_out, &graph_table) {
        write_csv(path, table, &["i".into(), "j".into(), "weight".into()])?;
        wrote.push(format!(
            "graph {} ({} edges)",
            path.display(),
            table.nrows()
        ));
    }
    if let Some(path) = &a.plot {
        let colouring = match &data.labels {
            Some(l) => Colouring::Class(l),
            None => Colouring::None,
        };
        scatter_svg(path, x, colouring, name)?;
        wrote.push(format!("plot {}", path.display()));
    }
    if wrote.is_empty() {
        print!("{}", to_csv_string(x, &header));
    } else {
        eprintln!(
            "fitted {name} to {} points x {} features in {seconds:.3} s; wrote {}",
            data.points.nrows(),
            data.points.ncols(),
            wrote.join(", ")
        );
    }
    Ok(())
}
