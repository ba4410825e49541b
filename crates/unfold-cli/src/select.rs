//! `unfold select`: a model's evidence over k, graphs, latent dimensions and restarts.

use crate::args::{GraphKind, ScoreKind, SelectArgs};
use crate::plot::lines_svg;
use indicatif::{ProgressBar, ProgressStyle};
use unfold_core::{Error, Result};
use unfold_data::{read_csv, read_points, CsvOptions};
use unfold_graph::{NeighbourGraph, Symmetrisation};
use unfold_models::registry::{Registry, Settings};
use unfold_select::{GraphSource, Plan, Score, Selection, Sweep};

pub fn run(registry: &Registry, name: &str, settings: &Settings, a: &SelectArgs) -> Result<()> {
    let data = read_points(
        &a.input,
        &CsvOptions {
            label_column: a.label_column.clone(),
        },
    )?;
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
    let bar = ProgressBar::new(sweep.candidates().len() as u64).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} candidates ({elapsed})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("unfold select {name}"));
    let selection = sweep.run(|| bar.inc(1));
    bar.finish_and_clear();
    let selection = selection?;
    report_failures(&selection);
    let csv = selection.to_csv();
    match &a.out {
        Some(path) => unfold_core::write_atomic(path, csv.as_bytes())?,
        None => print!("{csv}"),
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
    paths
        .iter()
        .map(|path| {
            let table = read_csv(path, &CsvOptions { label_column: None })?;
            let m = &table.points;
            if m.ncols() < 2 {
                return Err(Error::invalid(
                    "graphs",
                    format!("{}: an edge list needs two columns i,j", path.display()),
                ));
            }
            let mut edges = Vec::with_capacity(m.nrows());
            for r in 0..m.nrows() {
                let (i, j) = (m[(r, 0)], m[(r, 1)]);
                let index = |v: f64| (v >= 0.0 && v.fract() == 0.0 && v < n as f64).then_some(v as usize);
                match (index(i), index(j)) {
                    (Some(i), Some(j)) if i != j => edges.push((i, j, 1.0)),
                    _ => {
                        return Err(Error::invalid(
                            "graphs",
                            format!(
                                "{}, edge {}: ({i}, {j}) is not a pair of distinct point indices 0..{n}",
                                path.display(),
                                r + 1
                            ),
                        ))
                    }
                }
            }
            NeighbourGraph::from_edges(n, &edges)
        })
        .collect()
}

/// `5..12` (inclusive) or `5,7,9`.
fn parse_ks(text: &str) -> Result<Vec<usize>> {
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
    }
}
