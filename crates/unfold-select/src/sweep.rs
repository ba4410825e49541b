//! A registered method swept over candidates: the one place where a candidate's settings
//! are derived, its model fitted and its score computed. `unfold select`, the Python
//! package's serial `select` and its Dask path (one candidate per task) all call
//! [`Sweep::evaluate`], so the three give the same numbers to the bit.

use crate::search::{search, Candidate, GraphSource, Selection, Trial};
use crate::{grid, grid_graphs};
use nalgebra::DMatrix;
use unfold_core::{Error, Evidence, EvidenceKind, Result};
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
        })
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
            let data = FitData {
                y: &self.train,
                graph,
            };
            self.registry
                .fit(self.info.name, &data, &settings, &unfold_vem::Silent)
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
        search(&self.candidates, |c| {
            let result = self.evaluate(c);
            done();
            result
        })
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
            Score::Evidence => model.evidence_on(y),
            Score::Gplvm => Ok(gplvm_evidence(x, y, &GplvmScoreOptions::default())?.evidence()),
            Score::Trustworthiness => Ok(Evidence::new(
                EvidenceKind::Objective,
                trustworthiness(y, x, 10)?,
            )),
        }
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
        let bad = Settings::new().with("gamma", -1.0);
        assert!(Sweep::new(&registry, "meu", &bad, &y, Plan::default()).is_err());
        assert!(Score::parse("bound").is_err());
    }
}
