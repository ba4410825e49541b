//! Model selection: the sweep over a plan from Python's `select`, run whole in this
//! process or one candidate per task, and the table a distributed sweep appends to.

use crate::conversion::{compute, graph_of, matrix, to_py};
use crate::settings::{registry, settings_of};
use crate::watch::Watch;
use numpy::PyReadonlyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use unfold_core::{Error, Evidence, EvidenceKind};
use unfold_graph::Symmetrisation;
use unfold_select::{Candidate, GraphSource, Plan, Score, Selection, Sweep, Table, Trial};

/// A plan from the dict the Python `select` builds.
fn plan_of(d: &Bound<'_, PyDict>, n: usize) -> PyResult<Plan> {
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(key)?
            .ok_or_else(|| PyValueError::new_err(format!("the plan has no `{key}`")))
    };
    let symmetrisations = get("symmetrisations")?
        .extract::<Vec<String>>()?
        .iter()
        .map(|s| match s.as_str() {
            "union" => Ok(Symmetrisation::Union),
            "mutual" => Ok(Symmetrisation::Mutual),
            other => Err(PyValueError::new_err(format!(
                "invalid value for `graph`: expected union or mutual, got `{other}`"
            ))),
        })
        .collect::<PyResult<_>>()?;
    let graphs = get("graphs")?
        .extract::<Vec<(Vec<i64>, Vec<i64>)>>()?
        .into_iter()
        .map(|g| graph_of(n, g).map_err(to_py))
        .collect::<PyResult<_>>()?;
    Ok(Plan {
        ks: get("ks")?.extract()?,
        symmetrisations,
        dims: get("dims")?.extract()?,
        radii: get("radii")?.extract()?,
        graphs,
        restarts: get("restarts")?.extract()?,
        seed: get("seed")?.extract()?,
        score: Score::parse(&get("score")?.extract::<String>()?).map_err(to_py)?,
        holdout: get("holdout")?.extract()?,
    })
}

/// One candidate's outcome as it crosses between processes: `(index, evidence kind,
/// value, error, seconds)`.
type TrialTuple = (usize, Option<String>, Option<f64>, Option<String>, f64);

/// Runs `work` on the sweep of `method` over the points `x` with `settings` and `plan`
/// (checked as `select` checks them), without the GIL and observed by a [`Watch`]: Ctrl-C
/// stops the fits under way, and `verbose` prints what the work says.
fn with_sweep<T: Send>(
    py: Python<'_>,
    method: &str,
    x: &PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    verbose: u32,
    work: impl FnOnce(&Sweep<'_>, &Watch) -> unfold_core::Result<T> + Send,
) -> PyResult<T> {
    let settings = settings_of(method, settings)?;
    let y = matrix(x);
    let plan = plan_of(plan, y.nrows())?;
    // Warnings point at the user's call of `select`, which called this.
    let watch = Watch::new(false, 2);
    watch.run(py, &format!("select {method}"), verbose, None, || {
        let sweep = Sweep::new(registry(), method, &settings, &y, plan)?.observed(&watch);
        work(&sweep, &watch)
    })
}

/// The number of candidates of a sweep.
#[pyfunction]
pub(crate) fn sweep_size(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
) -> PyResult<usize> {
    with_sweep(py, method, &x, settings, plan, 0, |sweep, _| {
        Ok(sweep.candidates().len())
    })
}

/// The whole sweep in this process (candidates in parallel): the CSV table of `unfold
/// select`. With `out`, each finished candidate's row is appended to that table as it
/// completes, and with `resume` the candidates already there are skipped
/// (`unfold_select::Table`, as `unfold select --out --resume`); the complete table then
/// replaces it. Ctrl-C stops the sweep: the finished rows stay in `out`, and `resume`
/// continues it. With `verbose`, a line per finished candidate.
#[pyfunction]
#[pyo3(signature = (method, x, settings, plan, out=None, resume=false, verbose=0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep_table(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    out: Option<PathBuf>,
    resume: bool,
    verbose: u32,
) -> PyResult<String> {
    with_sweep(py, method, &x, settings, plan, verbose, |sweep, watch| {
        let total = sweep.candidates().len();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let say = |t: &Trial| {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            watch.say(format!("candidate {n} of {total}: {}", describe(t)));
        };
        let (table, finished) = match out {
            None => {
                let selection = sweep.run_rest(Vec::new(), |t| {
                    say(t);
                    Ok(())
                })?;
                return Ok(sweep.table(&selection));
            }
            Some(path) if resume => {
                let r = Table::resume(&path, sweep.table_spec())?;
                (r.table, r.finished)
            }
            Some(path) => (Table::create(&path, sweep.table_spec())?, Vec::new()),
        };
        done.store(finished.len(), std::sync::atomic::Ordering::Relaxed);
        let selection = sweep.run_rest(finished, |t| {
            table.append(t)?;
            say(t);
            Ok(())
        })?;
        table.finish(&selection)
    })
}

/// A finished candidate in a line: its setting and its score or error.
fn describe(t: &Trial) -> String {
    let s = &t.candidate.setting;
    let what = match &t.evidence {
        Some(e) => format!("{} {:.6}", e.kind, e.value),
        None => format!("failed: {}", t.error.as_deref().unwrap_or("")),
    };
    let graph = match s.graph {
        GraphSource::Knn => format!("k = {}, {}", s.k, s.graph_label()),
        _ => s.graph_label(),
    };
    format!(
        "{graph}, dim {}, seed {}: {what} ({:.2} s)",
        s.dim, t.candidate.seed, t.seconds
    )
}

/// `(index, evidence kind, value, error, seconds)` of candidate number `index`'s trial.
fn trial_tuple(index: usize, trial: &Trial) -> TrialTuple {
    (
        index,
        trial.evidence.as_ref().map(|e| e.kind.as_str().to_string()),
        trial.evidence.as_ref().map(|e| e.value),
        trial.error.clone(),
        trial.seconds,
    )
}

/// The trial a tuple of `sweep_trial` describes, with its candidate's index.
fn trial_of(candidates: &[Candidate], tuple: TrialTuple) -> unfold_core::Result<(usize, Trial)> {
    let (index, kind, value, error, seconds) = tuple;
    let candidate = candidates
        .get(index)
        .ok_or_else(|| Error::invalid("trials", format!("there is no candidate number {index}")))?;
    let evidence = match (kind, value) {
        (Some(kind), Some(value)) => Some(Evidence::new(
            EvidenceKind::parse(&kind).ok_or_else(|| {
                Error::invalid("trials", format!("unknown evidence kind `{kind}`"))
            })?,
            value,
        )),
        _ => None,
    };
    Ok((
        index,
        Trial {
            candidate: *candidate,
            evidence,
            error,
            seconds,
        },
    ))
}

/// The trial of each tuple (`sweep_trial`'s, any order), one per candidate, in the
/// candidates' order.
fn trials_of(candidates: &[Candidate], trials: Vec<TrialTuple>) -> unfold_core::Result<Vec<Trial>> {
    let mut rows: Vec<Option<Trial>> = vec![None; candidates.len()];
    for tuple in trials {
        let (index, trial) = trial_of(candidates, tuple)?;
        rows[index] = Some(trial);
    }
    rows.into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.ok_or_else(|| Error::invalid("trials", format!("candidate {i} has no trial")))
        })
        .collect()
}

/// Candidate number `index` of a sweep, fitted and scored: `(index, kind, value, error,
/// seconds)`, a failed fit with its error rather than an exception (one Dask task).
#[pyfunction]
pub(crate) fn sweep_trial(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    index: usize,
) -> PyResult<TrialTuple> {
    let trial = with_sweep(py, method, &x, settings, plan, 0, |sweep, _| {
        sweep.trial(index)
    })?;
    Ok(trial_tuple(index, &trial))
}

/// The table of a sweep whose trials ran elsewhere (`sweep_trial`'s tuples, any order),
/// ranked exactly as the serial sweep ranks its own.
#[pyfunction]
pub(crate) fn sweep_assemble(
    py: Python<'_>,
    method: &str,
    x: PyReadonlyArray2<'_, f64>,
    settings: &Bound<'_, PyDict>,
    plan: &Bound<'_, PyDict>,
    trials: Vec<TrialTuple>,
) -> PyResult<String> {
    with_sweep(py, method, &x, settings, plan, 0, |sweep, _| {
        let trials = trials_of(sweep.candidates(), trials)?;
        Ok(sweep.table(&Selection::from_trials(trials)?))
    })
}

/// The table of a distributed sweep, kept by the driver: each task's row is appended as
/// the task completes, and a resumed table's finished candidates are not submitted again.
#[pyclass(module = "unfold._native")]
pub(crate) struct SweepTable {
    table: Table,
    finished: Vec<TrialTuple>,
}

#[pymethods]
impl SweepTable {
    /// Starts the table at `out` for the sweep (or, with `resume`, reads the rows already
    /// there, refusing a table of another sweep).
    #[new]
    fn new(
        py: Python<'_>,
        method: &str,
        x: PyReadonlyArray2<'_, f64>,
        settings: &Bound<'_, PyDict>,
        plan: &Bound<'_, PyDict>,
        out: PathBuf,
        resume: bool,
    ) -> PyResult<Self> {
        with_sweep(py, method, &x, settings, plan, 0, |sweep, _| {
            let spec = sweep.table_spec();
            if !resume {
                return Ok(SweepTable {
                    table: Table::create(&out, spec)?,
                    finished: Vec::new(),
                });
            }
            let r = Table::resume(&out, spec)?;
            let candidates = r.table.spec().candidates();
            let finished = r
                .finished
                .iter()
                .map(|t| {
                    let i = candidates.iter().position(|c| *c == t.candidate);
                    trial_tuple(i.expect("a resumed trial is a candidate"), t)
                })
                .collect();
            Ok(SweepTable {
                table: r.table,
                finished,
            })
        })
    }

    /// The trials already in the table, as `sweep_trial`'s tuples.
    fn finished(&self) -> Vec<TrialTuple> {
        self.finished.clone()
    }

    /// Appends the row of one finished task (a `sweep_trial` tuple) and syncs it to disk.
    fn append(&self, py: Python<'_>, trial: TrialTuple) -> PyResult<()> {
        compute(py, || {
            let (_, t) = trial_of(self.table.spec().candidates(), trial)?;
            self.table.append(&t)
        })
    }

    /// Ranks every trial (the finished ones and the new, any order) and replaces the table
    /// with the complete one; returns its text.
    fn finish(&self, py: Python<'_>, trials: Vec<TrialTuple>) -> PyResult<String> {
        compute(py, || {
            let trials = trials_of(self.table.spec().candidates(), trials)?;
            self.table.finish(&Selection::from_trials(trials)?)
        })
    }
}
