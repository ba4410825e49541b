//! A registered method swept over candidates: the one place where a candidate's settings
//! are derived, its model fitted and its score computed. `unfold select`, the Python
//! package's serial `select` and its Dask path (one candidate per task) all call
//! [`Sweep::evaluate`], so the three give the same numbers to the bit.

use crate::search::{Candidate, GraphSource, Selection, Trial};
use crate::table::TableSpec;
use crate::{grid, grid_graphs};
use nalgebra::DMatrix;
use rayon::prelude::*;
use unfold_core::{Error, Evidence, EvidenceKind, Observer, Result, Silent};
use unfold_eval::{gplvm_evidence, heldout_log_density, trustworthiness, GplvmScoreOptions};
use unfold_graph::{NeighbourGraph, Symmetrisation, Weighting};
use unfold_models::registry::{FitData, MethodInfo, Model, Registry, Settings};

/// What ranks the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// The model's own evidence (likelihood, bound or pseudo-likelihood).
    Evidence,
    /// The GP-LVM log-likelihood score of the data given the embedding (its sparse bound,
    /// labelled `elbo`, above `unfold_eval::GPLVM_EXACT_MAX_POINTS` points).
    Gplvm,
    /// Trustworthiness of the embedding with 10 neighbours (an objective).
    Trustworthiness,
    /// The log predictive density of a seeded held-out fraction of the points, projected
    /// by the model fitted without them.
    Heldout,
}

impl Score {
    /// The score named `word` (`evidence`, `gplvm`, `trustworthiness`, `heldout`).
    pub fn parse(word: &str) -> Result<Score> {
        match word {
            "evidence" => Ok(Score::Evidence),
            "gplvm" => Ok(Score::Gplvm),
            "trustworthiness" => Ok(Score::Trustworthiness),
            "heldout" => Ok(Score::Heldout),
            _ => Err(Error::invalid(
                "score",
                format!("expected evidence, gplvm, trustworthiness or heldout, got `{word}`"),
            )),
        }
    }

    /// The score's name, as [`Score::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Score::Evidence => "evidence",
            Score::Gplvm => "gplvm",
            Score::Trustworthiness => "trustworthiness",
            Score::Heldout => "heldout",
        }
    }
}

/// The candidates of a sweep: kNN graphs over `ks` and `symmetrisations`, or epsilon-ball
/// `radii`, or given `graphs` (one of the three), times `dims`, each with `restarts`
/// seeds `seed, seed + 1, ...`.
#[derive(Clone, Debug)]
pub struct Plan {
    pub ks: Vec<usize>,
    pub symmetrisations: Vec<Symmetrisation>,
    pub dims: Vec<usize>,
    pub radii: Vec<f64>,
    pub graphs: Vec<NeighbourGraph>,
    pub restarts: usize,
    pub seed: u64,
    pub score: Score,
    /// Fraction of the points left out for [`Score::Heldout`].
    pub holdout: f64,
}

impl Default for Plan {
    /// `unfold select`'s defaults: k = 5..12 on the union graph, dimension 2, one restart
    /// from seed 0, ranked by the model's evidence (10% held out for `heldout`).
    fn default() -> Self {
        Plan {
            ks: (5..=12).collect(),
            symmetrisations: vec![Symmetrisation::Union],
            dims: vec![2],
            radii: Vec::new(),
            graphs: Vec::new(),
            restarts: 1,
            seed: 0,
            score: Score::Evidence,
            holdout: 0.1,
        }
    }
}

/// A method, its settings and the data, ready to fit and score each candidate of a plan.
pub struct Sweep<'a> {
    registry: &'a Registry,
    info: MethodInfo,
    settings: Settings,
    train: DMatrix<f64>,
    test: Option<DMatrix<f64>>,
    graphs: Vec<NeighbourGraph>,
    score: Score,
    candidates: Vec<Candidate>,
    /// Hears every candidate's fit, and stops the sweep when it asks to.
    observer: &'a dyn Observer,
}

impl<'a> Sweep<'a> {
    /// Checks the plan against the method (and the settings against its parameters) before
    /// any fit, splits off the held-out points for [`Score::Heldout`], and lists the
    /// candidates.
    pub fn new(
        registry: &'a Registry,
        method: &str,
        settings: &Settings,
        points: &DMatrix<f64>,
        plan: Plan,
    ) -> Result<Sweep<'a>> {
        let info = registry.get(method)?.info();
        let name = info.name;
        let graphs_given = !plan.radii.is_empty() || !plan.graphs.is_empty();
        if !plan.radii.is_empty() && !plan.graphs.is_empty() {
            return Err(Error::invalid(
                "graphs",
                "compare either epsilon-ball radii or given graphs, not both in one sweep",
            ));
        }
        if graphs_given && !info.takes_graph {
            return Err(Error::invalid(
                "method",
                format!(
                    "{name} builds its own kNN graph; epsilon-ball and given graphs are compared with {}",
                    registry.names_where(|i| i.takes_graph)
                ),
            ));
        }
        if !graphs_given && !info.has("k") {
            return Err(Error::invalid(
                "method",
                format!(
                    "{name} builds no neighbourhood graph, so there are no graphs to compare; \
                     selection compares {}",
                    registry.names_where(|i| i.has("k"))
                ),
            ));
        }
        if !graphs_given && (plan.ks.is_empty() || plan.ks.contains(&0)) {
            return Err(Error::invalid(
                "k",
                "give at least one neighbourhood size, each at least 1",
            ));
        }
        if let Some(r) = plan.radii.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(Error::invalid(
                "radius",
                format!("each epsilon-ball radius must be finite and positive, got {r}"),
            ));
        }
        if plan.dims.is_empty() || plan.symmetrisations.is_empty() {
            return Err(Error::invalid(
                "dim",
                "give at least one latent dimension and one symmetrisation",
            ));
        }
        let n = points.nrows();
        if let Some(g) = plan.graphs.iter().find(|g| g.n() != n) {
            return Err(Error::invalid(
                "graphs",
                format!("a given graph has {} nodes but the data {n} points", g.n()),
            ));
        }
        // Check the method's settings once, before any fit.
        registry.resolve(name, settings)?;
        let (train, test) = match plan.score {
            Score::Heldout => {
                let (train, test) = held_out_split(registry, &info, &plan, n)?;
                (points.select_rows(&train), Some(points.select_rows(&test)))
            }
            _ => (points.clone(), None),
        };
        let candidates = if graphs_given {
            let sources: Vec<GraphSource> = if plan.radii.is_empty() {
                (0..plan.graphs.len()).map(GraphSource::Given).collect()
            } else {
                plan.radii.iter().map(|&r| GraphSource::Radius(r)).collect()
            };
            grid_graphs(&sources, &plan.dims, plan.restarts, plan.seed)
        } else {
            grid(
                &plan.ks,
                &plan.symmetrisations,
                &plan.dims,
                plan.restarts,
                plan.seed,
            )
        };
        Ok(Sweep {
            registry,
            info,
            settings: settings.clone(),
            train,
            test,
            graphs: plan.graphs,
            score: plan.score,
            candidates,
            observer: &Silent,
        })
    }

    /// The sweep with every candidate's fit reporting to `observer` (its iterations and
    /// warnings). When the observer asks to stop, the fits under way end, no further
    /// candidate starts, and [`Sweep::run_rest`] returns [`Error::Interrupted`] after
    /// handing on the candidates that finished.
    pub fn observed(mut self, observer: &'a dyn Observer) -> Self {
        self.observer = observer;
        self
    }

    /// The candidates, in the order of the table.
    pub fn candidates(&self) -> &[Candidate] {
        &self.candidates
    }

    /// The method's settings for candidate `c`: the sweep's settings with its dimension,
    /// seed, k and symmetrisation.
    pub fn settings_of(&self, c: &Candidate) -> Settings {
        let s = &c.setting;
        let mut settings = self
            .settings
            .clone()
            .with("dim", s.dim)
            .with("seed", c.seed);
        if self.info.has("k") {
            settings.set("k", s.k.max(1));
        }
        if self.info.has("graph") {
            settings.set("graph", crate::search::graph_name(s.symmetrisation));
        }
        settings
    }

    /// Fits candidate `c` on the training points and scores it.
    pub fn evaluate(&self, c: &Candidate) -> Result<Evidence> {
        let settings = self.settings_of(c);
        let fit = |graph: Option<&NeighbourGraph>| {
            let data = FitData::points(&self.train).with_graph(graph);
            self.registry
                .fit(self.info.name, &data, &settings, self.observer)
        };
        let fitted = match c.setting.graph {
            GraphSource::Knn => fit(None),
            GraphSource::Radius(r) => {
                NeighbourGraph::epsilon_ball(&self.train, r, Weighting::Binary).and_then(|g| {
                    g.ensure_connected()?;
                    fit(Some(&g))
                })
            }
            GraphSource::Given(i) => fit(Some(&self.graphs[i])),
        }?;
        self.score_of(fitted.model.as_ref())
    }

    /// Candidate number `index` fitted, scored and timed.
    pub fn trial(&self, index: usize) -> Result<Trial> {
        let c = self.candidates.get(index).ok_or_else(|| {
            Error::invalid(
                "candidate",
                format!(
                    "the sweep has {} candidates, there is no number {index}",
                    self.candidates.len()
                ),
            )
        })?;
        Ok(Trial::timed(c, || self.evaluate(c)))
    }

    /// Every candidate, in parallel; `done` is called after each.
    pub fn run(&self, done: impl Fn() + Sync) -> Result<Selection> {
        self.run_rest(Vec::new(), |_| {
            done();
            Ok(())
        })
    }

    /// The candidates that have no trial in `finished` (trials of this sweep read back
    /// from its table), in parallel; `each` is called with every new trial as it
    /// completes (to append it to the table). All trials are then ranked in the plan's
    /// order, as if the sweep had run in one go.
    ///
    /// # Errors
    /// An error of `each` (a row that could not be written) stops the sweep: no further
    /// candidate starts and the error is returned. A stop asked by the sweep's observer
    /// ([`Sweep::observed`]) returns [`Error::Interrupted`] once the fits under way have
    /// ended; `each` has then seen every candidate that finished. Otherwise as
    /// [`Selection::from_trials`].
    pub fn run_rest(
        &self,
        finished: Vec<Trial>,
        each: impl Fn(&Trial) -> Result<()> + Sync,
    ) -> Result<Selection> {
        let mut slots: Vec<Option<Trial>> = vec![None; self.candidates.len()];
        for t in finished {
            if let Some(i) = self.candidates.iter().position(|c| *c == t.candidate) {
                slots[i] = Some(t);
            }
        }
        let todo: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].is_none()).collect();
        let new = todo
            .par_iter()
            .map(|&i| {
                self.observer.checkpoint()?;
                let c = &self.candidates[i];
                let trial = Trial::timed(c, || self.evaluate(c));
                // A fit cut short by the stop is not a result; one that finished is kept.
                let stopped = self.observer.stopped();
                if !(stopped && trial.evidence.is_none()) {
                    each(&trial)?;
                }
                if stopped {
                    return Err(Error::Interrupted);
                }
                Ok((i, trial))
            })
            .collect::<Result<Vec<(usize, Trial)>>>()?;
        for (i, t) in new {
            slots[i] = Some(t);
        }
        Selection::from_trials(slots.into_iter().flatten().collect())
    }

    /// The table of a ranked sweep: [`Selection::to_csv`]'s columns and the sweep's
    /// `method,score,sweep` on every row (see [`TableSpec`]).
    pub fn table(&self, selection: &Selection) -> String {
        self.table_spec().csv(selection)
    }

    /// What identifies this sweep's rows in its table: the method, the score, the
    /// candidates, and a fingerprint (64-bit FNV-1a) of the method's options with their
    /// defaults filled in (but those each candidate sets), the score, the training and
    /// held-out points and the given graphs.
    pub fn table_spec(&self) -> TableSpec {
        let mut h = Fnv::new();
        h.text(self.info.name);
        h.text(self.score.as_str());
        let resolved = self
            .registry
            .resolve(self.info.name, &self.settings)
            .map(|r| Settings::clone(&r))
            .unwrap_or_else(|_| self.settings.clone());
        for (name, value) in resolved.iter() {
            if !["dim", "seed", "k", "graph"].contains(&name) {
                h.text(&format!("{name}={value}"));
            }
        }
        for m in std::iter::once(&self.train).chain(&self.test) {
            h.bytes(&(m.nrows() as u64).to_le_bytes());
            h.bytes(&(m.ncols() as u64).to_le_bytes());
            for v in m.iter() {
                h.bytes(&v.to_bits().to_le_bytes());
            }
        }
        for g in &self.graphs {
            h.bytes(&(g.n() as u64).to_le_bytes());
            for (i, j, w) in g.edges() {
                h.bytes(&(i as u64).to_le_bytes());
                h.bytes(&(j as u64).to_le_bytes());
                h.bytes(&w.to_bits().to_le_bytes());
            }
        }
        TableSpec {
            method: self.info.name.to_string(),
            score: self.score.as_str().to_string(),
            fingerprint: format!("{:016x}", h.0),
            candidates: self.candidates.clone(),
        }
    }

    /// The number that ranks a fitted candidate. External scores are labelled as what they
    /// are: the GP-LVM score is the log-likelihood of the data given the embedding (`elbo`,
    /// its sparse lower bound, at large n), the held-out density a log-likelihood,
    /// trustworthiness an objective; every candidate of a sweep has the same points, so
    /// gets the same kind.
    fn score_of(&self, model: &dyn Model) -> Result<Evidence> {
        let (x, y) = (model.coords(), &self.train);
        match self.score {
            Score::Heldout => {
                let test = self
                    .test
                    .as_ref()
                    .expect("a held-out sweep keeps its test rows");
                let rule = model.out_of_sample().ok_or_else(|| {
                    Error::invalid("score", format!("{} cannot project points", model.method()))
                })?;
                let projected = rule.project(test)?;
                let held = heldout_log_density(
                    x,
                    y,
                    &projected.mean,
                    test,
                    &GplvmScoreOptions::default(),
                )?;
                Ok(Evidence::new(EvidenceKind::LogLikelihood, held.log_density))
            }
            Score::Evidence => model.evidence_on(y.into()),
            Score::Gplvm => Ok(gplvm_evidence(x, y, &GplvmScoreOptions::default())?.evidence()),
            Score::Trustworthiness => Ok(Evidence::new(
                EvidenceKind::Objective,
                trustworthiness(y, x, 10)?,
            )),
        }
    }
}

/// The 64-bit FNV-1a hash (Fowler, Noll and Vo): a fingerprint that tells sweeps apart,
/// not a cryptographic digest.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// A text and its length, so that consecutive texts cannot run together.
    fn text(&mut self, text: &str) {
        self.bytes(&(text.len() as u64).to_le_bytes());
        self.bytes(text.as_bytes());
    }
}

/// The rows `(train, test)` of a held-out sweep: a seeded random fraction of the points is
/// left out, the same for every candidate.
fn held_out_split(
    registry: &Registry,
    info: &MethodInfo,
    plan: &Plan,
    n: usize,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if !plan.graphs.is_empty() {
        return Err(Error::invalid(
            "score",
            "held-out scoring refits every candidate without the left-out points, but a given \
             graph covers all of them; compare given graphs by evidence, or use k or radii",
        ));
    }
    if !info.projects {
        return Err(Error::invalid(
            "score",
            format!(
                "held-out scoring projects the left-out points, and {} has no out-of-sample \
                 rule; use {} (or another score)",
                info.name,
                registry.names_where(|i| i.projects)
            ),
        ));
    }
    if !(plan.holdout > 0.0 && plan.holdout < 1.0) {
        return Err(Error::invalid(
            "holdout",
            format!(
                "the fraction left out must lie in (0, 1), got {}",
                plan.holdout
            ),
        ));
    }
    let m = ((plan.holdout * n as f64).round() as usize).max(1);
    if n < m + 3 {
        return Err(Error::TooFewPoints {
            what: "held-out scoring".to_string(),
            needed: m + 3,
            got: n,
            advice: "lower the held-out fraction or give more points".to_string(),
        });
    }
    Ok(unfold_data::holdout_split(n, m, plan.seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roll(n: usize) -> DMatrix<f64> {
        unfold_data::synthetic::swiss_roll(n, 0.05, 3)
            .unwrap()
            .points
    }

    #[test]
    fn a_trial_by_index_equals_the_parallel_run() {
        let registry = Registry::builtin();
        let y = roll(120);
        let plan = Plan {
            ks: vec![6, 8],
            restarts: 2,
            seed: 4,
            ..Plan::default()
        };
        let sweep = Sweep::new(&registry, "meu", &Settings::new(), &y, plan).unwrap();
        let all = sweep.run(|| ()).unwrap();
        let one_by_one: Vec<Trial> = (0..sweep.candidates().len())
            .map(|i| sweep.trial(i).unwrap())
            .collect();
        let again = Selection::from_trials(one_by_one).unwrap();
        let values = |s: &Selection| -> Vec<u64> {
            s.trials
                .iter()
                .map(|t| t.evidence.as_ref().unwrap().value.to_bits())
                .collect()
        };
        assert_eq!(values(&all), values(&again));
        assert_eq!(all.best, again.best);
        assert!(sweep.trial(4).is_err());
    }

    /// Asks to stop once it has heard `after` iterations of any candidate.
    struct StopAfter {
        after: usize,
        heard: std::sync::atomic::AtomicUsize,
    }

    impl Observer for StopAfter {
        fn iteration(&self, _: usize, _: usize, _: &Evidence) {
            self.heard.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        fn stopped(&self) -> bool {
            self.heard.load(std::sync::atomic::Ordering::SeqCst) >= self.after
        }
    }

    /// A sweep stopped by its observer returns `Interrupted` after handing on only
    /// finished candidates; resuming from them completes the same table as one whole run.
    #[test]
    fn a_stopped_sweep_keeps_its_finished_candidates_and_resumes_to_the_same_table() {
        let registry = Registry::builtin();
        let y = roll(100);
        let plan = || Plan {
            ks: vec![4, 6, 8, 10],
            seed: 2,
            ..Plan::default()
        };
        let whole = Sweep::new(&registry, "meu", &Settings::new(), &y, plan()).unwrap();
        let all = whole.run(|| ()).unwrap();
        // The first candidate's evaluations, counted by an observer that never stops.
        let count = StopAfter {
            after: usize::MAX,
            heard: Default::default(),
        };
        Sweep::new(&registry, "meu", &Settings::new(), &y, plan())
            .unwrap()
            .observed(&count)
            .trial(0)
            .unwrap();
        // On one thread the candidates run in order: the stop falls at the second
        // candidate's first evaluation.
        let stop = StopAfter {
            after: count.heard.into_inner() + 1,
            heard: Default::default(),
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let kept = std::sync::Mutex::new(Vec::new());
        let stopped = Sweep::new(&registry, "meu", &Settings::new(), &y, plan())
            .unwrap()
            .observed(&stop);
        let result = pool.install(|| {
            stopped.run_rest(Vec::new(), |t| {
                kept.lock().unwrap().push(t.clone());
                Ok(())
            })
        });
        assert!(matches!(result, Err(Error::Interrupted)));
        let kept = kept.into_inner().unwrap();
        assert_eq!(kept.len(), 1);
        assert!(kept
            .iter()
            .all(|t| t.evidence.is_some() && t.error.is_none()));
        let rest = whole.run_rest(kept, |_| Ok(())).unwrap();
        let values = |s: &Selection| -> Vec<u64> {
            s.trials
                .iter()
                .map(|t| t.evidence.as_ref().unwrap().value.to_bits())
                .collect()
        };
        assert_eq!(values(&rest), values(&all));
    }

    #[test]
    fn the_rest_of_a_sweep_completes_it_to_the_bit_and_the_fingerprint_tells_sweeps_apart() {
        let registry = Registry::builtin();
        let y = roll(100);
        let plan = || Plan {
            ks: vec![4, 6, 8],
            restarts: 2,
            seed: 1,
            ..Plan::default()
        };
        let sweep = Sweep::new(&registry, "meu", &Settings::new(), &y, plan()).unwrap();
        let all = sweep.run(|| ()).unwrap();
        // Trials 1, 2 and 5 were in the table; the others run now, each reported once.
        let finished: Vec<Trial> = [5, 1, 2].iter().map(|&i| all.trials[i].clone()).collect();
        let reported = std::sync::Mutex::new(Vec::new());
        let rest = sweep
            .run_rest(finished, |t| {
                reported.lock().unwrap().push(t.candidate);
                Ok(())
            })
            .unwrap();
        let mut reported = reported.into_inner().unwrap();
        reported.sort_by_key(|c| sweep.candidates().iter().position(|d| d == c));
        let c = sweep.candidates();
        assert_eq!(reported, vec![c[0], c[3], c[4]]);
        let strip = |s: String| -> Vec<String> {
            s.lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    [&f[..7], &f[8..]].concat().join(",")
                })
                .collect()
        };
        assert_eq!(strip(sweep.table(&all)), strip(sweep.table(&rest)));
        // A failed write stops the sweep with its error.
        let failed = sweep.run_rest(Vec::new(), |_| Err(Error::invalid("out", "disk full")));
        assert!(failed.unwrap_err().to_string().contains("disk full"));
        // Same inputs, same fingerprint; a default given explicitly changes nothing.
        let fp = |settings: &Settings, y: &DMatrix<f64>, plan: Plan| {
            Sweep::new(&registry, "meu", settings, y, plan)
                .unwrap()
                .table_spec()
                .fingerprint()
                .to_string()
        };
        let base = fp(&Settings::new(), &y, plan());
        assert_eq!(base, sweep.table_spec().fingerprint());
        assert_eq!(base, fp(&Settings::new().with("gamma", 1e-4), &y, plan()));
        assert_ne!(base, fp(&Settings::new().with("gamma", 1e-3), &y, plan()));
        let mut moved = y.clone();
        moved[(7, 1)] += 1e-12;
        assert_ne!(base, fp(&Settings::new(), &moved, plan()));
        let gplvm = Plan {
            score: Score::Gplvm,
            ..plan()
        };
        assert_ne!(base, fp(&Settings::new(), &y, gplvm));
    }

    #[test]
    fn plans_the_method_cannot_run_are_refused_before_any_fit() {
        let registry = Registry::builtin();
        let y = roll(60);
        let radii = Plan {
            radii: vec![1.0],
            ..Plan::default()
        };
        let err = Sweep::new(&registry, "lle", &Settings::new(), &y, radii).err();
        assert!(err
            .unwrap()
            .to_string()
            .contains("builds its own kNN graph"));
        let pca = Sweep::new(&registry, "pca", &Settings::new(), &y, Plan::default()).err();
        assert!(pca.unwrap().to_string().contains("no neighbourhood graph"));
        let heldout = Plan {
            score: Score::Heldout,
            ..Plan::default()
        };
        let err = Sweep::new(&registry, "le", &Settings::new(), &y, heldout).err();
        assert!(err.unwrap().to_string().contains("no out-of-sample"));
        let negative = Plan {
            radii: vec![1.0, -1.0],
            ..Plan::default()
        };
        let err = Sweep::new(&registry, "meu", &Settings::new(), &y, negative).err();
        assert!(err
            .unwrap()
            .to_string()
            .contains("finite and positive, got -1"));
        let bad = Settings::new().with("gamma", -1.0);
        assert!(Sweep::new(&registry, "meu", &bad, &y, Plan::default()).is_err());
        assert!(Score::parse("bound").is_err());
    }
}
