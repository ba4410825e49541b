//! `unfold select`: a model's evidence over k, graphs, latent dimensions and restarts.

use crate::args::{GraphKind, ScoreKind, SelectArgs};
use crate::plot::lines_svg;
use indicatif::{ProgressBar, ProgressStyle};
use nalgebra::DMatrix;
use unfold_core::{Error, Result};
use unfold_core::{Evidence, EvidenceKind};
use unfold_data::{read_csv, CsvOptions};
use unfold_eval::{gplvm_evidence, heldout_log_density, trustworthiness, GplvmScoreOptions};
use unfold_graph::{NeighbourGraph, Symmetrisation, Weighting};
use unfold_models::registry::{FitData, Model, Registry, Settings};
use unfold_select::{grid, grid_graphs, search, GraphSource, Selection};

pub fn run(registry: &Registry, name: &str, settings: &Settings, a: &SelectArgs) -> Result<()> {
    let info = registry.get(name)?.info();
    let data = read_csv(
        &a.input,
        &CsvOptions {
            label_column: a.label_column.clone(),
        },
    )?;
    let ks = parse_ks(&a.k)?;
    let syms: Vec<Symmetrisation> = a
        .graph
        .iter()
        .map(|g| match g {
            GraphKind::Union => Symmetrisation::Union,
            GraphKind::Mutual => Symmetrisation::Mutual,
        })
        .collect();
    if (!a.radius.is_empty() || !a.graphs.is_empty()) && !info.takes_graph {
        return Err(Error::invalid(
            "method",
            format!(
                "{name} builds its own kNN graph; epsilon-ball and given graphs are compared with {}",
                registry.names_where(|i| i.takes_graph)
            ),
        ));
    }
    if a.radius.is_empty() && a.graphs.is_empty() && !info.has("k") {
        return Err(Error::invalid(
            "method",
            format!(
                "{name} builds no neighbourhood graph, so there are no graphs to compare; \
                 `unfold select` compares {}",
                registry.names_where(|i| i.has("k"))
            ),
        ));
    }
    let given = read_graphs(&a.graphs, data.points.nrows())?;
    let split = match a.score {
        ScoreKind::Heldout => Some(held_out_split(
            registry,
            name,
            a,
            &given,
            data.points.nrows(),
        )?),
        _ => None,
    };
    // Candidates are fitted to the training rows; the held-out rows only score them.
    let (train, test) = match &split {
        Some((train, test)) => (
            data.points.select_rows(train),
            Some(data.points.select_rows(test)),
        ),
        None => (data.points.clone(), None),
    };
    let candidates = if !a.radius.is_empty() || !given.is_empty() {
        let sources: Vec<GraphSource> = if a.radius.is_empty() {
            (0..given.len()).map(GraphSource::Given).collect()
        } else {
            a.radius.iter().map(|&r| GraphSource::Radius(r)).collect()
        };
        grid_graphs(&sources, &a.dim, a.restarts, a.seed)
    } else {
        grid(&ks, &syms, &a.dim, a.restarts, a.seed)
    };
    // Check the method's settings once, before any fit.
    registry.resolve(name, settings)?;
    let bar = ProgressBar::new(candidates.len() as u64).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} candidates ({elapsed})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("unfold select {name}"));
    let selection = search(&candidates, |c| {
        let s = &c.setting;
        let mut settings = settings.clone().with("dim", s.dim).with("seed", c.seed);
        if info.has("k") {
            settings.set("k", s.k.max(1));
        }
        if info.has("graph") {
            let graph = match s.symmetrisation {
                Symmetrisation::Union => "union",
                Symmetrisation::Mutual => "mutual",
            };
            settings.set("graph", graph);
        }
        let fit = |graph: Option<&NeighbourGraph>| {
            let data = FitData { y: &train, graph };
            registry.fit(name, &data, &settings, &unfold_vem::Silent)
        };
        let fitted = match s.graph {
            GraphSource::Knn => fit(None),
            GraphSource::Radius(r) => NeighbourGraph::epsilon_ball(&train, r, Weighting::Binary)
                .and_then(|g| {
                    g.ensure_connected()?;
                    fit(Some(&g))
                }),
            GraphSource::Given(i) => fit(Some(&given[i])),
        };
        let result = fitted.and_then(|f| score(a.score, f.model.as_ref(), &train, test.as_ref()));
        bar.inc(1);
        result
    });
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

/// The rows `(train, test)` of `--score heldout`: a seeded random `--holdout` fraction of
/// the points is left out, the same for every candidate.
fn held_out_split(
    registry: &Registry,
    name: &str,
    a: &SelectArgs,
    given: &[NeighbourGraph],
    n: usize,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if !given.is_empty() {
        return Err(Error::invalid(
            "score",
            "held-out scoring refits every candidate without the left-out points, but a given \
             graph covers all of them; compare given graphs by evidence, or use --k or --radius",
        ));
    }
    if !registry.get(name)?.info().projects {
        return Err(Error::invalid(
            "score",
            format!(
                "held-out scoring projects the left-out points, and {name} has no out-of-sample \
                 rule; use {} (or another --score)",
                registry.names_where(|i| i.projects)
            ),
        ));
    }
    if !(a.holdout > 0.0 && a.holdout < 1.0) {
        return Err(Error::invalid(
            "holdout",
            format!(
                "the fraction left out must lie in (0, 1), got {}",
                a.holdout
            ),
        ));
    }
    let m = ((a.holdout * n as f64).round() as usize).max(1);
    if n < m + 3 {
        return Err(Error::TooFewPoints {
            what: "held-out scoring".to_string(),
            needed: m + 3,
            got: n,
            advice: "lower --holdout or give more points".to_string(),
        });
    }
    Ok(unfold_data::holdout_split(n, m, a.seed))
}

/// The number that ranks a fitted candidate (`--score`). External scores are labelled as
/// what they are: the GP-LVM score is the log-likelihood of the data given the embedding
/// (`elbo`, its sparse lower bound, above `unfold_eval::GPLVM_EXACT_MAX_POINTS` points), the
/// held-out density a log-likelihood, trustworthiness an objective; every candidate of a
/// search has the same points, so gets the same kind. `y` is the data the model was fitted on; `test`, the held-out rows
/// (`--score heldout` only).
fn score(
    kind: ScoreKind,
    model: &dyn Model,
    y: &DMatrix<f64>,
    test: Option<&DMatrix<f64>>,
) -> Result<Evidence> {
    let x = model.coords();
    match kind {
        ScoreKind::Heldout => {
            let test = test.expect("held-out rows come with --score heldout");
            let rule = model.out_of_sample().ok_or_else(|| {
                Error::invalid("score", format!("{} cannot project points", model.method()))
            })?;
            let projected = rule.project(test)?;
            let held =
                heldout_log_density(x, y, &projected.mean, test, &GplvmScoreOptions::default())?;
            Ok(Evidence::new(EvidenceKind::LogLikelihood, held.log_density))
        }
        ScoreKind::Evidence => model.evidence_on(y),
        ScoreKind::Gplvm => Ok(gplvm_evidence(x, y, &GplvmScoreOptions::default())?.evidence()),
        ScoreKind::Trustworthiness => Ok(Evidence::new(
            EvidenceKind::Objective,
            trustworthiness(y, x, 10)?,
        )),
    }
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
