//! The search over candidate settings and restarts.

use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;
use unfold_core::{Error, Evidence, EvidenceKind, Result};
use unfold_graph::Symmetrisation;

/// Where a setting's neighbourhood graph comes from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum GraphSource {
    /// The kNN graph with the setting's `k` and `symmetrisation`.
    Knn,
    /// The epsilon-ball graph of this radius (`k` and `symmetrisation` unused).
    Radius(f64),
    /// Graph number `i` of a list the caller holds: graphs given by the user, or learned
    /// by a model such as DRILL or MPME (`k` and `symmetrisation` unused).
    Given(usize),
}

/// One setting of the graph and the latent dimension.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Setting {
    pub k: usize,
    pub symmetrisation: Symmetrisation,
    pub dim: usize,
    pub graph: GraphSource,
}

impl Setting {
    /// The position of the setting on a plot's x axis: k, the radius or the graph's index.
    pub fn x(&self) -> f64 {
        match self.graph {
            GraphSource::Knn => self.k as f64,
            GraphSource::Radius(r) => r,
            GraphSource::Given(i) => i as f64,
        }
    }

    /// `union` or `mutual` for kNN graphs, `radius=R` or `given=I` otherwise.
    pub fn graph_label(&self) -> String {
        match self.graph {
            GraphSource::Knn => graph_name(self.symmetrisation).to_string(),
            GraphSource::Radius(r) => format!("radius={r}"),
            GraphSource::Given(i) => format!("given={i}"),
        }
    }
}

/// A setting with one seeded restart.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub setting: Setting,
    /// Restart index within the setting, `0..restarts`.
    pub restart: usize,
    pub seed: u64,
}

/// Every combination of `ks`, `symmetrisations` and `dims`, each with `restarts` seeds
/// `seed, seed + 1, ...` (the same seeds for every setting, so restarts pair up across k).
pub fn grid(
    ks: &[usize],
    symmetrisations: &[Symmetrisation],
    dims: &[usize],
    restarts: usize,
    seed: u64,
) -> Vec<Candidate> {
    let mut settings = Vec::new();
    for &dim in dims {
        for &symmetrisation in symmetrisations {
            for &k in ks {
                settings.push(Setting {
                    k,
                    symmetrisation,
                    dim,
                    graph: GraphSource::Knn,
                });
            }
        }
    }
    with_restarts(&settings, restarts, seed)
}

/// Every combination of graph sources (epsilon-ball radii, or given or learned graphs by
/// index) and `dims`, each with `restarts` seeds `seed, seed + 1, ...`.
pub fn grid_graphs(
    sources: &[GraphSource],
    dims: &[usize],
    restarts: usize,
    seed: u64,
) -> Vec<Candidate> {
    let mut settings = Vec::new();
    for &dim in dims {
        for &graph in sources {
            settings.push(Setting {
                k: 0,
                symmetrisation: Symmetrisation::Union,
                dim,
                graph,
            });
        }
    }
    with_restarts(&settings, restarts, seed)
}

fn with_restarts(settings: &[Setting], restarts: usize, seed: u64) -> Vec<Candidate> {
    settings
        .iter()
        .flat_map(|&setting| {
            (0..restarts.max(1)).map(move |restart| Candidate {
                setting,
                restart,
                seed: seed.wrapping_add(restart as u64),
            })
        })
        .collect()
}

/// The outcome of one candidate.
#[derive(Clone, Debug, Serialize)]
pub struct Trial {
    pub candidate: Candidate,
    /// The fitted model's evidence, `None` if the fit failed.
    pub evidence: Option<Evidence>,
    /// Why the fit failed.
    pub error: Option<String>,
    pub seconds: f64,
}

/// Mean and spread of the evidence of one setting over its successful restarts.
#[derive(Clone, Debug, Serialize)]
pub struct SettingSummary {
    pub setting: Setting,
    pub mean: f64,
    /// Sample standard deviation over restarts (0 for a single one).
    pub sd: f64,
    pub succeeded: usize,
    pub failed: usize,
}

/// The result of a [`search`]: every trial, the summary per setting, and the best setting
/// (highest mean evidence).
#[derive(Clone, Debug, Serialize)]
pub struct Selection {
    pub kind: EvidenceKind,
    pub trials: Vec<Trial>,
    pub settings: Vec<SettingSummary>,
    /// Index into `settings` of the best one.
    pub best: usize,
}

/// Fits every candidate with `fit` (in parallel) and ranks the settings by their mean
/// evidence over restarts.
///
/// # Errors
/// No candidates; every candidate failed (the first error is reported); evidence of more
/// than one kind (say which), or of kind `none` (the method has no score to compare).
pub fn search<F>(candidates: &[Candidate], fit: F) -> Result<Selection>
where
    F: Fn(&Candidate) -> Result<Evidence> + Sync,
{
    let trials: Vec<Trial> = candidates
        .par_iter()
        .map(|c| Trial::timed(c, || fit(c)))
        .collect();
    Selection::from_trials(trials)
}

impl Trial {
    /// Runs `fit` for candidate `c` and records its evidence or error and the seconds it
    /// took; a non-finite value is recorded as a failure.
    pub fn timed(c: &Candidate, fit: impl FnOnce() -> Result<Evidence>) -> Trial {
        let start = Instant::now();
        let result = fit();
        let seconds = start.elapsed().as_secs_f64();
        match result {
            Ok(e) if !e.value.is_finite() && e.kind != EvidenceKind::None => Trial {
                candidate: *c,
                evidence: None,
                error: Some(format!("non-finite {} {}", e.kind, e.value)),
                seconds,
            },
            Ok(e) => Trial {
                candidate: *c,
                evidence: Some(e),
                error: None,
                seconds,
            },
            Err(e) => Trial {
                candidate: *c,
                evidence: None,
                error: Some(e.to_string()),
                seconds,
            },
        }
    }
}

impl Selection {
    /// Ranks trials run elsewhere (one per candidate, in the candidates' order: a
    /// distributed sweep's tasks) exactly as [`search`] ranks its own.
    ///
    /// # Errors
    /// As [`search`].
    pub fn from_trials(trials: Vec<Trial>) -> Result<Selection> {
        if trials.is_empty() {
            return Err(Error::invalid(
                "candidates",
                "give at least one setting to compare",
            ));
        }
        let kind = single_kind(&trials)?;
        let settings = summarise(&trials);
        let best = settings
            .iter()
            .enumerate()
            .filter(|(_, s)| s.succeeded > 0)
            .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
            .map(|(i, _)| i)
            .expect("at least one trial succeeded");
        Ok(Selection {
            kind,
            trials,
            settings,
            best,
        })
    }
}

fn single_kind(trials: &[Trial]) -> Result<EvidenceKind> {
    let mut kinds: Vec<EvidenceKind> = trials
        .iter()
        .filter_map(|t| t.evidence.as_ref().map(|e| e.kind))
        .collect();
    kinds.sort_by_key(|k| k.as_str());
    kinds.dedup();
    match kinds[..] {
        [] => Err(Error::numerical(
            "model selection",
            format!(
                "every candidate failed; the first: {}",
                trials[0].error.as_deref().unwrap_or("unknown error")
            ),
        )),
        [EvidenceKind::None] => Err(Error::invalid(
            "method",
            "the method reports no evidence, so candidates cannot be ranked; choose a probabilistic model",
        )),
        [kind] => Ok(kind),
        _ => Err(Error::invalid(
            "candidates",
            format!(
                "they report evidence of different kinds ({}); only values of one kind can be ranked",
                kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

fn summarise(trials: &[Trial]) -> Vec<SettingSummary> {
    let mut settings: Vec<Setting> = Vec::new();
    for t in trials {
        if !settings.contains(&t.candidate.setting) {
            settings.push(t.candidate.setting);
        }
    }
    settings
        .into_iter()
        .map(|setting| {
            let of: Vec<&Trial> = trials
                .iter()
                .filter(|t| t.candidate.setting == setting)
                .collect();
            let values: Vec<f64> = of
                .iter()
                .filter_map(|t| t.evidence.as_ref().map(|e| e.value))
                .collect();
            let m = values.len() as f64;
            let mean = values.iter().sum::<f64>() / m;
            let sd = if values.len() > 1 {
                (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt()
            } else {
                0.0
            };
            SettingSummary {
                setting,
                mean: if values.is_empty() { f64::NAN } else { mean },
                sd,
                succeeded: values.len(),
                failed: of.len() - values.len(),
            }
        })
        .collect()
}

/// The columns of [`Selection::to_csv`].
pub(crate) const CSV_COLUMNS: &str = "k,graph,dim,restart,seed,kind,value,seconds,best,error";

impl Selection {
    /// One CSV row per trial: `k,graph,dim,restart,seed,kind,value,seconds,best,error`,
    /// where `best` is 1 on the trials of the best setting; `graph` is the symmetrisation
    /// of a kNN graph (`union`, `mutual`), `radius=R` or `given=I`, and `k` is empty for
    /// the latter two.
    pub fn to_csv(&self) -> String {
        let mut out = format!("{CSV_COLUMNS}\n");
        for t in &self.trials {
            out.push_str(&self.row(t));
            out.push('\n');
        }
        out
    }

    /// The row of trial `t` in [`Selection::to_csv`] (no line end).
    pub(crate) fn row(&self, t: &Trial) -> String {
        let best = self.settings[self.best].setting;
        row(t, Some(self.kind), Some(t.candidate.setting == best))
    }
}

/// The fields of a candidate that identify it in a table: `k,graph,dim,restart,seed`.
pub(crate) fn candidate_key(c: &Candidate) -> String {
    let k = match c.setting.graph {
        GraphSource::Knn => c.setting.k.to_string(),
        _ => String::new(),
    };
    format!(
        "{k},{},{},{},{}",
        c.setting.graph_label(),
        c.setting.dim,
        c.restart,
        c.seed
    )
}

/// A table row of trial `t`: `kind` and `best` are empty where not given (a row written
/// before the sweep is ranked). The value is printed as the shortest decimal that reads
/// back to the same double.
pub(crate) fn row(t: &Trial, kind: Option<EvidenceKind>, best: Option<bool>) -> String {
    let value = t
        .evidence
        .as_ref()
        .map_or(String::new(), |e| format!("{}", e.value));
    let error = t.error.as_deref().unwrap_or("").replace(['"', '\n'], " ");
    format!(
        "{},{},{},{:.4},{},\"{}\"",
        candidate_key(&t.candidate),
        kind.map_or("", |k| k.as_str()),
        value,
        t.seconds,
        best.map_or(String::new(), |b| u8::from(b).to_string()),
        error
    )
}

/// `union` or `mutual`.
pub(crate) fn graph_name(s: Symmetrisation) -> &'static str {
    match s {
        Symmetrisation::Union => "union",
        Symmetrisation::Mutual => "mutual",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(c: &Candidate) -> Result<Evidence> {
        // A bound peaking at k = 9, with restart noise, failing at k = 3.
        if c.setting.k == 3 {
            return Err(Error::invalid("k", "disconnected graph"));
        }
        let k = c.setting.k as f64;
        Ok(Evidence::new(
            EvidenceKind::Elbo,
            -(k - 9.0).powi(2) + 0.1 * c.restart as f64,
        ))
    }

    #[test]
    fn best_setting_has_the_highest_mean_and_failures_are_kept() {
        let cands = grid(&[3, 5, 7, 9, 11], &[Symmetrisation::Union], &[2], 3, 10);
        let sel = search(&cands, fake).unwrap();
        assert_eq!(sel.settings[sel.best].setting.k, 9);
        assert_eq!(sel.trials.len(), 15);
        let failed = &sel.settings[0];
        assert_eq!((failed.succeeded, failed.failed), (0, 3));
        assert!((sel.settings[sel.best].mean - 0.1).abs() < 1e-12);
        let csv = sel.to_csv();
        assert_eq!(csv.lines().count(), 16);
        assert!(csv
            .lines()
            .any(|l| l.starts_with("9,union,2,0,10,elbo,0,") && l.contains(",1,")));
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let cands = grid(
            &[5, 7, 9],
            &[Symmetrisation::Union, Symmetrisation::Mutual],
            &[2, 3],
            2,
            1,
        );
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| search(&cands, fake).unwrap().to_csv())
        };
        let strip = |s: String| -> Vec<String> {
            s.lines()
                .map(|l| l.split(',').take(7).collect::<Vec<_>>().join(","))
                .collect()
        };
        assert_eq!(strip(run(1)), strip(run(2)));
    }

    #[test]
    fn radius_and_given_graphs_are_settings_too() {
        let cands = grid_graphs(
            &[GraphSource::Radius(0.5), GraphSource::Given(1)],
            &[2],
            2,
            0,
        );
        assert_eq!(cands.len(), 4);
        let sel = search(&cands, |c| {
            let v = match c.setting.graph {
                GraphSource::Radius(r) => r,
                GraphSource::Given(i) => i as f64 + 10.0,
                GraphSource::Knn => unreachable!(),
            };
            Ok(Evidence::new(EvidenceKind::Elbo, v))
        })
        .unwrap();
        assert_eq!(sel.settings[sel.best].setting.graph, GraphSource::Given(1));
        assert_eq!(sel.settings[sel.best].setting.x(), 1.0);
        let csv = sel.to_csv();
        assert!(csv
            .lines()
            .any(|l| l.starts_with(",radius=0.5,2,0,0,elbo,0.5,")));
        assert!(csv
            .lines()
            .any(|l| l.starts_with(",given=1,2,1,1,elbo,11,")));
    }

    #[test]
    fn mixed_or_missing_kinds_are_refused() {
        let cands = grid(&[5, 7], &[Symmetrisation::Union], &[2], 1, 0);
        let mixed = search(&cands, |c| {
            let kind = if c.setting.k == 5 {
                EvidenceKind::Elbo
            } else {
                EvidenceKind::LogLikelihood
            };
            Ok(Evidence::new(kind, 1.0))
        });
        assert!(mixed.unwrap_err().to_string().contains("different kinds"));
        let none = search(&cands, |_| Ok(Evidence::none()));
        assert!(none.unwrap_err().to_string().contains("no evidence"));
        let all_fail = search(&cands, |_| Err(Error::invalid("k", "boom")));
        assert!(all_fail.unwrap_err().to_string().contains("boom"));
        assert!(search(&[], fake).is_err());
    }
}
