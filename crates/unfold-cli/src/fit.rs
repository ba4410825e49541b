//! `unfold fit`.

use crate::args::FitArgs;
use crate::interrupt::Interrupt;
use crate::plot::{scatter_over_svg, Colouring};
use crate::report::Report;
use indicatif::{ProgressBar, ProgressStyle};
use nalgebra::DMatrix;
use unfold_core::Observer;
use unfold_core::{Evidence, Result};
use unfold_data::{to_csv_string, write_csv};
use unfold_models::registry::{FitData, Fitted, Registry, Resolved};

/// The header of an embedding CSV: `x1,...,xQ`.
pub fn coord_header(dim: usize) -> Vec<String> {
    (1..=dim).map(|j| format!("x{j}")).collect()
}

/// A progress line on standard error while a fit runs (hidden when it is not a terminal),
/// and the fit's warnings, printed there and kept for the report.
struct Progress {
    bar: ProgressBar,
    warnings: std::sync::Mutex<Vec<String>>,
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
        Progress {
            bar,
            warnings: Default::default(),
        }
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

    fn warn(&self, message: &str) {
        self.bar
            .suspend(|| eprintln!("unfold fit: warning: {message}"));
        if let Ok(mut kept) = self.warnings.lock() {
            kept.push(message.to_string());
        }
    }
}

/// Fits with the settings the command line resolved (checked before the data are read, so
/// a bad setting fails at once).
pub fn run(registry: &Registry, resolved: &Resolved, a: &FitArgs) -> Result<()> {
    let method = resolved.method();
    let progress = Progress::new(method);
    // A signal before the outputs stops the command with nothing written; the outputs
    // are written whole before a signal is heard.
    let stop = Interrupt::install(progress.bar.clone(), |signal| {
        format!("unfold fit: stopped by {signal}; nothing was written")
    })?;
    let takes_sparse = registry.get(method)?.info().sparse_points;
    let (data, preprocessing) = crate::input::load_for(
        &a.input,
        a.label_column.as_deref(),
        a.preprocess.as_deref(),
        takes_sparse,
    )?;
    let fitted = registry.fit_resolved(resolved, &FitData::view(data.points()), &progress);
    progress.bar.finish_and_clear();
    let Fitted { model, report } = fitted?;
    let _writing = stop.writing();
    let x = model.coords();
    let header = coord_header(x.ncols());

    // Checked before anything is written, so a bad request leaves no partial output.
    let graph_table = match &a.graph_out {
        None => None,
        Some(_) => {
            let edges = model.learned_edges().ok_or_else(|| {
                unfold_core::Error::invalid(
                    "graph-out",
                    format!("{method} has no graph to write; use a graph-based method"),
                )
            })?;
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
        for table in model.tables() {
            let path = out.with_extension(format!("{}.csv", table.name));
            write_csv(&path, &table.rows, &table.header)?;
            wrote.push(format!("{} {}", table.name, path.display()));
        }
    }
    if let Some(path) = &a.save {
        // The fitted preprocessing goes into the file: `unfold project` applies it to new
        // points before the model projects them.
        Registry::save_with(model.as_ref(), &preprocessing, path)?;
        wrote.push(format!("model {}", path.display()));
    }
    if let Some(path) = &a.report {
        let mut notes = model.notes();
        if !preprocessing.is_empty() {
            notes.insert(0, ("preprocess".to_string(), preprocessing.describe()));
        }
        let report = Report::new(
            &report,
            data.shape().0,
            data.shape().1,
            x.ncols(),
            resolved.count("k").ok(),
            notes,
            progress
                .warnings
                .lock()
                .map(|w| w.clone())
                .unwrap_or_default(),
        );
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
        let overlay = model.overlay().unwrap_or_default();
        let (colouring, value_name) = match (&overlay.colour_by, data.labels()) {
            (Some((name, values)), _) => (Colouring::Value(values), name.as_str()),
            (None, Some(l)) => (Colouring::Class(l), ""),
            (None, None) => (Colouring::None, ""),
        };
        scatter_over_svg(
            path,
            x,
            colouring,
            value_name,
            &overlay.segments,
            &overlay.marks,
            method,
        )?;
        wrote.push(format!("plot {}", path.display()));
    }
    if wrote.is_empty() {
        print!("{}", to_csv_string(x, &header));
    } else {
        eprintln!(
            "fitted {method} to {} points x {} features in {:.3} s; wrote {}",
            data.shape().0,
            data.shape().1,
            report.seconds,
            wrote.join(", ")
        );
    }
    for (name, value) in model.notes() {
        eprintln!("{name}: {value}");
    }
    Ok(())
}
