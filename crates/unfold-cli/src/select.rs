//! `unfold select`: a model's evidence over k, graphs, latent dimensions and restarts.

use crate::args::{GraphKind, ScoreKind, SelectArgs};
use crate::interrupt::Interrupt;
use crate::plot::lines_svg;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use unfold_core::{Error, Result};
use unfold_graph::{NeighbourGraph, Symmetrisation};
use unfold_models::registry::{Registry, Settings};
use unfold_select::{read_edge_list, GraphSource, Plan, Score, Selection, Sweep, Table};

pub fn run(registry: &Registry, name: &str, settings: &Settings, a: &SelectArgs) -> Result<()> {
    // Every candidate is fitted to the preprocessed points (which the table's fingerprint
    // covers, so a resumed sweep must use the same steps).
    let (data, _) =
        crate::input::load(&a.input, a.label_column.as_deref(), a.preprocess.as_deref())?;
    let plan = Plan {
        ks: parse_ks(&a.k)?,
        symmetrisations: a
            .graph
            .iter()
            .map(|g| match g {
                GraphKind::Union => Symmetrisation::Union,
                GraphKind::Mutual => Symmetrisation::Mutual,
            })
            .collect(),
        dims: a.dim.clone(),
        radii: a.radius.clone(),
        graphs: read_graphs(&a.graphs, data.points.nrows())?,
        restarts: a.restarts,
        seed: a.seed,
        score: match a.score {
            ScoreKind::Evidence => Score::Evidence,
            ScoreKind::Gplvm => Score::Gplvm,
            ScoreKind::Trustworthiness => Score::Trustworthiness,
            ScoreKind::Heldout => Score::Heldout,
        },
        holdout: a.holdout,
    };
    let sweep = Sweep::new(registry, name, settings, &data.points, plan)?;
    let total = sweep.candidates().len();
    if a.resume && a.out.is_none() {
        return Err(Error::invalid(
            "resume",
            "--resume continues the table of --out; give the table with --out FILE",
        ));
    }
    let bar = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} candidates ({elapsed})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("unfold select {name}"));
    // A signal stops the sweep at once, but never while a row or an output is being
    // written: the finished rows stay in the table, and the message says how to resume.
    let saved = Arc::new(AtomicUsize::new(0));
    let stop = Interrupt::install(bar.clone(), {
        let (out, saved) = (a.out.clone(), saved.clone());
        move |signal| {
            let done = saved.load(Ordering::SeqCst);
            match &out {
                Some(path) => format!(
                    "unfold select: stopped by {signal}; {done} of {total} candidates are \
                     saved in {}: run the same command with --resume to finish the other {}",
                    path.display(),
                    total - done
                ),
                None => format!(
                    "unfold select: stopped by {signal}; nothing was saved: give --out FILE \
                     to keep each candidate as it finishes, and --resume to continue"
                ),
            }
        }
    })?;
    let writing = stop.writing();
    let (table, finished) = match &a.out {
        Some(path) if a.resume => {
            let resumed = Table::resume(path, sweep.table_spec())?;
            if resumed.dropped_partial_line {
                eprintln!(
                    "{}: dropped a half-written last row (its candidate runs again)",
                    path.display()
                );
            }
            eprintln!(
                "resuming: {} of {total} candidates are in {}",
                resumed.finished.len(),
                path.display()
            );
            (Some(resumed.table), resumed.finished)
        }
        Some(path) => (Some(Table::create(path, sweep.table_spec())?), Vec::new()),
        None => (None, Vec::new()),
    };
    saved.store(finished.len(), Ordering::SeqCst);
    drop(writing);
    bar.set_position(finished.len() as u64);
    let write_failed = AtomicBool::new(false);
    let selection = sweep.run_rest(finished, |trial| {
        let _writing = stop.writing();
        if let Some(table) = &table {
            table
                .append(trial)
                .inspect_err(|_| write_failed.store(true, Ordering::SeqCst))?;
        }
        saved.fetch_add(1, Ordering::SeqCst);
        bar.inc(1);
        Ok(())
    });
    bar.finish_and_clear();
    // The outputs are written whole before a signal may end the process.
    let _writing = stop.writing();
    if let (Some(table), true) = (&table, write_failed.load(Ordering::SeqCst)) {
        eprintln!(
            "the candidates finished before the failed write are in {}; once it can be \
             written, run the same command with --resume to continue",
            table.path().display()
        );
    }
    let selection = selection?;
    report_failures(&selection);
    match &table {
        Some(table) => {
            table.finish(&selection)?;
        }
        None => print!("{}", sweep.table(&selection)),
    }
    if let Some(path) = &a.report {
        let json = serde_json::to_string_pretty(&selection).expect("a selection serialises");
        unfold_core::write_atomic(path, json.as_bytes())?;
    }
    if let Some(path) = &a.plot {
        plot(&selection, name, path)?;
    }
    let best = &selection.settings[selection.best];
    let graph = match best.setting.graph {
        GraphSource::Knn => format!(
            "k = {}, {} graph",
            best.setting.k,
            best.setting.graph_label()
        ),
        _ => best.setting.graph_label(),
    };
    eprintln!(
        "best: {graph}, dim {} with mean {} {:.3} over {} restart(s)",
        best.setting.dim, selection.kind, best.mean, best.succeeded
    );
    Ok(())
}

fn report_failures(selection: &Selection) {
    for t in selection.trials.iter().filter(|t| t.error.is_some()) {
        eprintln!(
            "{} (k = {}), restart {}: failed: {}",
            t.candidate.setting.graph_label(),
            t.candidate.setting.k,
            t.candidate.restart,
            t.error.as_deref().unwrap_or_default()
        );
    }
}

/// The evidence against k for the best setting's graph and dimension, one line per
/// restart, the best k marked.
fn plot(selection: &Selection, name: &str, path: &std::path::Path) -> Result<()> {
    let best = selection.settings[selection.best].setting;
    let restarts = selection
        .trials
        .iter()
        .map(|t| t.candidate.restart)
        .max()
        .unwrap_or(0)
        + 1;
    let series: Vec<(String, Vec<(f64, f64)>)> = (0..restarts)
        .map(|r| {
            let pts = selection
                .trials
                .iter()
                .filter(|t| {
                    let s = t.candidate.setting;
                    t.candidate.restart == r
                        && s.dim == best.dim
                        && s.symmetrisation == best.symmetrisation
                        && std::mem::discriminant(&s.graph) == std::mem::discriminant(&best.graph)
                })
                .filter_map(|t| {
                    t.evidence
                        .as_ref()
                        .map(|e| (t.candidate.setting.x(), e.value))
                })
                .collect();
            (format!("restart {r}"), pts)
        })
        .collect();
    lines_svg(
        path,
        &series,
        Some(best.x()),
        &format!(
            "{name}: {} against {}",
            selection.kind,
            match best.graph {
                GraphSource::Knn => "k",
                GraphSource::Radius(_) => "the radius (x axis)",
                GraphSource::Given(_) => "the graph's index (x axis)",
            }
        ),
        selection.kind.as_str(),
    )
}

/// The graphs of `--graphs`: CSV edge lists `i,j` (0-based rows of the data, optional
/// header, an optional third column ignored), each on the data's `n` points.
fn read_graphs(paths: &[std::path::PathBuf], n: usize) -> Result<Vec<NeighbourGraph>> {
    paths.iter().map(|path| read_edge_list(path, n)).collect()
}

/// The most neighbourhood sizes a range may give (a larger one is surely a typo, and
/// would only allocate).
const MAX_KS: usize = 10_000;

/// `5..12` (inclusive) or `5,7,9`.
pub(crate) fn parse_ks(text: &str) -> Result<Vec<usize>> {
    let bad = || {
        Error::invalid(
            "k",
            format!("expected a range like 5..12 or a list like 5,7,9, got {text:?}"),
        )
    };
    let ks: Vec<usize> = if let Some((lo, hi)) = text.split_once("..") {
        let lo: usize = lo.trim().parse().map_err(|_| bad())?;
        let hi: usize = hi
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?;
        if hi.saturating_sub(lo) >= MAX_KS {
            return Err(Error::invalid(
                "k",
                format!("the range {text} gives more than {MAX_KS} neighbourhood sizes"),
            ));
        }
        (lo..=hi).collect()
    } else {
        text.split(',')
            .map(|v| v.trim().parse().map_err(|_| bad()))
            .collect::<Result<_>>()?
    };
    if ks.is_empty() || ks.contains(&0) {
        return Err(bad());
    }
    Ok(ks)
}

#[cfg(test)]
mod tests {
    use super::parse_ks;

    #[test]
    fn k_ranges_and_lists() {
        assert_eq!(parse_ks("5..8").unwrap(), vec![5, 6, 7, 8]);
        assert_eq!(parse_ks("5..=6").unwrap(), vec![5, 6]);
        assert_eq!(parse_ks("4, 9").unwrap(), vec![4, 9]);
        assert!(parse_ks("9..5").is_err() && parse_ks("x").is_err() && parse_ks("0,3").is_err());
        assert!(parse_ks("-3..4").is_err() && parse_ks("").is_err());
        let huge = parse_ks("1..18446744073709551615").unwrap_err().to_string();
        assert!(huge.contains("more than 10000"), "{huge}");
    }
}
