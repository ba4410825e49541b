//! Every registered method, through the registry: fit a small data set, report how the fit
//! went, save and load, project where the method says it can, and check the capability
//! flags against what actually works; then every parameter of every method refused with
//! its name and allowed range when out of range.

use nalgebra::DMatrix;
use std::path::Path;
use unfold_core::Silent;
use unfold_models::registry::{
    DefaultValue, FitData, Interval, ParamKind, ParamSpec, Registry, Settings, Value,
};

/// A noisy curved sheet: 50 points in 3-D.
fn data() -> DMatrix<f64> {
    DMatrix::from_fn(50, 3, |i, j| {
        let t = 1.5 + 3.0 * i as f64 / 50.0;
        [t * t.cos(), ((i * 37) % 11) as f64 / 5.0, t * t.sin()][j]
    })
}

/// Settings that keep each fit small on [`data`].
fn small(method: &str) -> Settings {
    let s = Settings::new().with("seed", 3usize);
    match method {
        "lllvm" => s.with("max_iter", 5usize).with("k", 6usize),
        "mpme" => s.with("lambda", 0.5),
        "ddrtree" => s.with("ncenters", 20usize),
        "pca" | "cmds" | "kpca" | "drtree" => s,
        _ => s.with("k", 6usize),
    }
}

/// The methods fitted in closed form (one eigendecomposition); every other method must
/// report its iterations.
const CLOSED_FORM: [&str; 8] = [
    "pca", "cmds", "kpca", "le", "lle", "isomap", "alle", "lle-pl",
];

#[test]
fn every_method_fits_saves_loads_and_projects_as_its_flags_say() {
    let registry = Registry::builtin();
    let y = data();
    let new = DMatrix::from_fn(3, 3, |i, j| y[(10 * i + 5, j)] * 1.01 + 0.02);
    assert_eq!(registry.names().len(), 16);
    for method in registry.methods() {
        let info = method.info();
        let name = info.name;
        let fitted = registry
            .fit(name, &FitData::points(&y), &small(name), &Silent)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (model, report) = (fitted.model, fitted.report);
        assert_eq!(model.method(), name);
        assert_eq!(model.coords().shape(), (50, 2), "{name}");
        assert!(model.coords().iter().all(|v| v.is_finite()), "{name}");
        // How the fit went: iterative fits report their iterations.
        if CLOSED_FORM.contains(&name) {
            assert_eq!(
                (report.iterations, report.stopped_by.as_str()),
                (0, "closed_form"),
                "{name}"
            );
        } else {
            assert!(report.iterations > 0, "{name} reports 0 iterations");
            assert_ne!(report.stopped_by, "closed_form", "{name}");
        }
        // One objective value per iteration (MVU's interior-point steps record none).
        if name != "mvu" {
            assert_eq!(report.trace.len(), report.iterations, "{name}");
        }
        // The evidence is of the kind the method declares.
        let evidence = model.evidence_on((&y).into()).unwrap();
        assert_eq!(evidence.kind, info.evidence, "{name}");
        if info.evidence != unfold_core::EvidenceKind::None {
            assert!(evidence.value.is_finite(), "{name}");
        }
        // Projection works exactly for the methods that say so.
        assert_eq!(model.out_of_sample().is_some(), info.projects, "{name}");
        // Model files: the same numbers after a round trip.
        let bytes = Registry::to_bytes(model.as_ref()).unwrap();
        let back = registry.from_bytes(&bytes, Path::new("m.bin")).unwrap();
        assert_eq!(back.method(), name);
        assert_eq!(back.coords(), model.coords(), "{name}");
        let (a, b) = (back.evidence(), model.evidence());
        assert_eq!(
            (a.value.to_bits(), a.kind),
            (b.value.to_bits(), b.kind),
            "{name}"
        );
        if let Some(rule) = model.out_of_sample() {
            let p = rule.project(&new).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.mean.shape(), (3, 2), "{name}");
            assert!(p.mean.iter().all(|v| v.is_finite()), "{name}");
            let q = back.out_of_sample().unwrap().project(&new).unwrap();
            assert_eq!(p, q, "{name}");
        }
    }
}

#[test]
fn methods_that_take_a_graph_fit_on_it_and_the_others_refuse_it() {
    let registry = Registry::builtin();
    let y = data();
    // A graph unlike any kNN graph of the settings: the 9-nearest-neighbour graph.
    let (_, graph) = unfold_models::GraphSpec::knn(9)
        .build(&y, Default::default(), "test", &unfold_core::Silent)
        .unwrap();
    for method in registry.methods() {
        let info = method.info();
        let data = FitData::points(&y).with_graph(Some(&graph));
        let fitted = registry.fit(info.name, &data, &small(info.name), &Silent);
        if info.takes_graph {
            let model = fitted
                .unwrap_or_else(|e| panic!("{}: {e}", info.name))
                .model;
            let used = model.graph().expect("a method fitted on a graph keeps it");
            let mut a = used
                .edges()
                .iter()
                .map(|&(i, j, _)| (i, j))
                .collect::<Vec<_>>();
            let mut b = graph
                .edges()
                .iter()
                .map(|&(i, j, _)| (i, j))
                .collect::<Vec<_>>();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "{} did not fit on the given graph", info.name);
        } else {
            let err = fitted
                .err()
                .unwrap_or_else(|| panic!("{} took a graph", info.name));
            assert!(err.to_string().contains("builds its own graph"), "{err}");
        }
    }
}

/// Values just outside a parameter's allowed range (and NaN), or of the wrong kind.
fn bad_values(spec: &ParamSpec) -> Vec<Value> {
    let real = |r: &Interval| {
        let mut v = vec![f64::NAN];
        if r.lo.is_finite() {
            v.push(if r.lo_open { r.lo } else { r.lo - 1.0 });
        }
        if r.hi.is_finite() {
            v.push(if r.hi_open { r.hi } else { r.hi + 1.0 });
        } else if r.hi_open {
            v.push(f64::INFINITY);
        }
        v
    };
    match &spec.kind {
        ParamKind::Count { min } if *min > 0 => vec![Value::Count(min - 1), Value::Real(1.0)],
        ParamKind::Count { .. } => vec![Value::Real(1.0)],
        ParamKind::Real(r) => real(r).into_iter().map(Value::Real).collect(),
        ParamKind::Reals(r) => {
            let mut v: Vec<Value> = real(r)
                .into_iter()
                .map(|x| Value::Reals(vec![1.0, x]))
                .collect();
            v.push(Value::Reals(Vec::new()));
            v
        }
        ParamKind::RealOr(r, _) => {
            let mut v: Vec<Value> = real(r).into_iter().map(Value::Real).collect();
            v.push(Value::Choice("no-such-rule".into()));
            v
        }
        ParamKind::Choice(_) => vec![Value::Choice("no-such-choice".into()), Value::Count(1)],
        ParamKind::Flag => vec![Value::Real(1.0)],
    }
}

/// Keeps the warnings of a fit.
#[derive(Default)]
struct Warnings(std::sync::Mutex<Vec<String>>);

impl unfold_core::Observer for Warnings {
    fn warn(&self, message: &str) {
        self.0.lock().unwrap().push(message.to_string());
    }
}

/// Two copies of [`data`] far apart: every kNN graph on them has two components. Each
/// method with a kNN graph fits them by default, joined by one edge between the copies'
/// closest points and a warning that says so; with `connect = off` every method but SPL
/// (whose precision is proper on any graph) refuses them.
#[test]
fn separate_clusters_are_joined_with_a_warning_unless_connect_is_off() {
    let registry = Registry::builtin();
    let one = data();
    let y = DMatrix::from_fn(100, 3, |i, j| {
        one[(i % 50, j)] + if i >= 50 && j == 0 { 100.0 } else { 0.0 }
    });
    let mut graph_methods = Vec::new();
    for method in registry.methods() {
        let name = method.info().name;
        if !registry
            .params(name)
            .unwrap()
            .iter()
            .any(|p| p.name == "connect")
        {
            continue;
        }
        graph_methods.push(name);
        let warnings = Warnings::default();
        let fitted = registry
            .fit(name, &FitData::points(&y), &small(name), &warnings)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            fitted.model.coords().iter().all(|v| v.is_finite()),
            "{name}"
        );
        let said = warnings.0.lock().unwrap().clone();
        assert_eq!(said.len(), 1, "{name}: {said:?}");
        assert!(
            said[0].contains("2 separate components") && said[0].contains("1 edge"),
            "{name}: {}",
            said[0]
        );
        let off = registry.fit(
            name,
            &FitData::points(&y),
            &small(name).with("connect", Value::Choice("off".into())),
            &Silent,
        );
        match (name, off) {
            ("spl", Ok(_)) => {}
            (_, Err(unfold_core::Error::DisconnectedGraph { components: 2, .. })) => {}
            (_, other) => panic!("{name} with connect = off: {:?}", other.err()),
        }
    }
    assert_eq!(
        graph_methods,
        ["le", "lle", "isomap", "mvu", "meu", "lle-pl", "drill", "lllvm", "spl"]
    );
}

/// [`data`] with rows 7 and 31 repeated (as rows 50 and 51): every method that needs
/// distinct points fits the 50 distinct rows by default, says so, and gives each copy its
/// row's embedding; its evidence on the rows as given is the distinct rows' evidence; with
/// `duplicates = error` it refuses the data naming the rows.
#[test]
fn methods_that_need_distinct_points_merge_or_jitter_copies_with_a_warning() {
    let registry = Registry::builtin();
    let one = data();
    let y = DMatrix::from_fn(52, 3, |i, j| {
        one[([7, 31].get(i.wrapping_sub(50)).copied().unwrap_or(i), j)]
    });
    let mut merging = Vec::new();
    for method in registry.methods() {
        let info = method.info();
        let name = info.name;
        let has = registry
            .params(name)
            .unwrap()
            .iter()
            .any(|p| p.name == "duplicates");
        assert_eq!(has, info.distinct_points, "{name}");
        if !has {
            continue;
        }
        merging.push(name);
        let warnings = Warnings::default();
        let merged = registry
            .fit(name, &FitData::points(&y), &small(name), &warnings)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let said = warnings.0.lock().unwrap().clone();
        assert!(
            said[0].contains("2 of the 52 points repeat") && said[0].contains("50 = 7, 51 = 31"),
            "{name}: {said:?}"
        );
        let x = merged.model.coords();
        assert_eq!(x.nrows(), 52, "{name}");
        assert_eq!(x.row(50), x.row(7), "{name}");
        assert_eq!(x.row(51), x.row(31), "{name}");
        let distinct = registry
            .fit(name, &FitData::points(&one), &small(name), &Silent)
            .unwrap();
        assert_eq!(x.rows(0, 50), *distinct.model.coords(), "{name}");
        // (Compared as printed: a method without evidence has NaN.)
        assert_eq!(
            format!("{:?}", merged.model.evidence_on((&y).into()).unwrap()),
            format!("{:?}", distinct.model.evidence_on((&one).into()).unwrap()),
            "{name}"
        );
        let refused = registry.fit(
            name,
            &FitData::points(&y),
            &small(name).with("duplicates", Value::Choice("error".into())),
            &Silent,
        );
        assert!(
            matches!(refused, Err(unfold_core::Error::DuplicatePoints { .. })),
            "{name}: {:?}",
            refused.err()
        );
        // Jittered: every row is fitted, the copies moved a little, near their points but
        // not on them.
        let warnings = Warnings::default();
        let jittered = registry
            .fit(
                name,
                &FitData::points(&y),
                &small(name).with("duplicates", Value::Choice("jitter".into())),
                &warnings,
            )
            .unwrap_or_else(|e| panic!("{name} jitter: {e}"));
        let said = warnings.0.lock().unwrap().clone();
        assert!(
            said[0].contains("50 = 7, 51 = 31") && said[0].contains("random offset of about 1%"),
            "{name}: {said:?}"
        );
        let x = jittered.model.coords();
        assert_eq!(x.nrows(), 52, "{name}");
        let spread = (x.rows(0, 50).column(0).max() - x.rows(0, 50).column(0).min()).abs();
        for (copy, of) in [(50, 7), (51, 31)] {
            let apart = (x.row(copy) - x.row(of)).norm();
            assert!(
                apart > 0.0 && apart < 0.2 * spread,
                "{name}: {apart} of {spread}"
            );
        }
    }
    assert_eq!(merging, ["isomap", "mvu", "meu", "alle", "mpme"]);
}

/// On data with two features, the methods whose embedding comes from an n x n eigenproblem
/// (Laplacian eigenmaps, LLE, Isomap, MVU, kernel PCA, MPME) give two and three coordinates, as
/// scikit-learn's spectral methods do; the others, whose math reduces the features (PCA's
/// directions, LL-LVM's maps, the trees' projections), refuse a dimension of 2 with the
/// reason (SPL, whose field allows d <= min(N, D), refuses 3).
#[test]
fn graph_and_kernel_spectral_methods_embed_in_as_many_dimensions_as_features_or_more() {
    let registry = Registry::builtin();
    let y = data().columns(0, 2).into_owned();
    let any_dim = ["le", "lle", "isomap", "mvu", "kpca", "mpme"];
    for method in registry.methods() {
        let name = method.info().name;
        for dim in [2usize, 3] {
            let fit = registry.fit(
                name,
                &FitData::points(&y),
                &small(name).with("dim", dim),
                &Silent,
            );
            // SPL's embedding is a field over the points with d <= min(N, D).
            let limit = if name == "spl" { 3 } else { 2 };
            if any_dim.contains(&name) || dim < limit {
                let x = fit
                    .unwrap_or_else(|e| panic!("{name} at dim {dim}: {e}"))
                    .model;
                assert_eq!(x.coords().shape(), (50, dim), "{name}");
                assert!(x.coords().iter().all(|v| v.is_finite()), "{name}");
            } else {
                match fit {
                    Err(unfold_core::Error::DimensionTooLarge { limit: l, .. }) if l == limit => {}
                    other => panic!("{name} at dim {dim}: {:?}", other.err()),
                }
            }
        }
    }
}

#[test]
fn every_parameter_of_every_method_is_refused_out_of_range_with_its_name_and_range() {
    let registry = Registry::builtin();
    let y = data();
    let mut checked = 0;
    for method in registry.methods() {
        let name = method.info().name;
        for spec in registry.params(name).unwrap() {
            // The default itself is allowed.
            if let DefaultValue::Is(v) = &spec.default {
                spec.check(v)
                    .unwrap_or_else(|e| panic!("{name}: default of {}: {e}", spec.name));
            }
            for bad in bad_values(&spec) {
                let settings = small(name).with(spec.name, bad.clone());
                let err = registry
                    .fit(name, &FitData::points(&y), &settings, &Silent)
                    .err()
                    .unwrap_or_else(|| panic!("{name}: {} = {bad} was accepted", spec.name));
                let text = err.to_string();
                assert!(
                    text.contains(&format!("`{}`", spec.name)) && text.contains(&spec.allowed()),
                    "{name}: {} = {bad}: {text}",
                    spec.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} bad values tried");
    // A parameter the method does not have is refused with the method's parameters.
    let err = registry
        .fit(
            "meu",
            &FitData::points(&y),
            &Settings::new().with("rho", vec![0.1]),
            &Silent,
        )
        .err()
        .unwrap();
    assert!(err.to_string().contains("has no such parameter") && err.to_string().contains("gamma"));
}

#[test]
fn registering_a_taken_name_or_a_clashing_parameter_is_refused() {
    let mut registry = Registry::builtin();
    let err = registry
        .register(unfold_models::registry::registered::<unfold_models::Pca>())
        .unwrap_err();
    assert!(err.to_string().contains("already registered"), "{err}");
    // `k` is a whole number for every built-in method; a real-valued `k` would need a
    // second `--k` flag.
    struct RealK;
    impl unfold_models::registry::Method for RealK {
        fn info(&self) -> unfold_models::registry::MethodInfo {
            use unfold_models::registry::{Family, MethodInfo};
            MethodInfo::new("real-k", Family::Other, "test").params([ParamSpec::real(
                "k",
                1.0,
                Interval::POSITIVE,
                "test",
            )])
        }
        fn fit(
            &self,
            _: &FitData<'_>,
            _: &Settings,
            _: &dyn unfold_core::Observer,
        ) -> unfold_core::Result<Box<dyn unfold_models::registry::Model>> {
            unreachable!("never fitted")
        }
        fn decode(&self, _: &[u8]) -> unfold_core::Result<Box<dyn unfold_models::registry::Model>> {
            unreachable!("never decoded")
        }
    }
    let err = registry.register(Box::new(RealK)).unwrap_err();
    assert!(
        err.to_string().contains("`k`") && err.to_string().contains("another name"),
        "{err}"
    );
}

#[test]
fn model_files_of_unknown_kinds_and_corrupt_payloads_are_refused() {
    let registry = Registry::builtin();
    let y = data();
    let model = registry
        .fit("pca", &FitData::points(&y), &Settings::new(), &Silent)
        .unwrap()
        .model;
    let bytes = Registry::to_bytes(model.as_ref()).unwrap();
    let p = Path::new("m.bin");
    let msg = |b: &[u8]| registry.from_bytes(b, p).err().unwrap().to_string();
    let foreign = unfold_core::model_file_bytes("heat", &[], &bytes[19..]);
    assert!(msg(&foreign).contains("`heat` model"), "{}", msg(&foreign));
    assert!(msg(&bytes[..bytes.len() - 5]).contains("corrupt"));
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(msg(&extra).contains("corrupt"));
}

/// Counts the iterations it hears; once it has heard `after` of them it asks the fit to
/// stop (`Observer::stopped`) or, with `end`, to end and keep its iterate
/// (`Observer::ended`).
struct After {
    after: usize,
    end: bool,
    heard: std::sync::atomic::AtomicUsize,
}

impl After {
    fn new(after: usize, end: bool) -> After {
        After {
            after,
            end,
            heard: Default::default(),
        }
    }

    fn reached(&self) -> bool {
        self.heard.load(std::sync::atomic::Ordering::Relaxed) >= self.after
    }
}

impl unfold_core::Observer for After {
    fn iteration(&self, _: usize, _: usize, _: &unfold_core::Evidence) {
        self.heard
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    fn stopped(&self) -> bool {
        !self.end && self.reached()
    }
    fn ended(&self) -> bool {
        self.end && self.reached()
    }
}

/// Every iterative method tells the observer of each iteration and stops with
/// `Error::Interrupted` right after the one at which the observer asks it to (DRILL's
/// graphical lasso reports no objective, and stops at its first sweep when asked before
/// it); the closed-form methods never ask. Starts run in parallel each stop after their
/// own next iteration, so DDRTree runs one start here (`ddrtree_starts_stop_together`
/// in `ddrtree/tests/consensus.rs` covers several).
#[test]
fn every_iterative_method_reports_its_iterations_and_stops_when_asked() {
    let registry = Registry::builtin();
    let y = data();
    for method in registry.methods() {
        let name = method.info().name;
        if CLOSED_FORM.contains(&name) {
            continue;
        }
        let after = if name == "drill" { 0 } else { 1 };
        let stop = After::new(after, false);
        let settings = match name {
            "ddrtree" => small(name).with("restarts", 1usize),
            _ => small(name),
        };
        let fit = registry.fit(name, &FitData::points(&y), &settings, &stop);
        assert!(
            matches!(fit, Err(unfold_core::Error::Interrupted)),
            "{name}: {:?}",
            fit.map(|f| f.report.iterations)
        );
        assert_eq!(stop.heard.into_inner(), after, "{name}");
    }
}

/// A caller's end keeps the iterate: every iterative method that reports its iterations,
/// ended once it has heard one (before any tolerance can be met), returns a model of its
/// first iteration, stopped by `caller` and not converged (a search hears its evaluations
/// and is asked after each accepted step). MVU's interior-point iterates are not a solution before they converge,
/// so it stops without a model; DRILL's graphical lasso reports no objective and runs on.
#[test]
fn every_iterative_method_ended_by_the_caller_keeps_its_iterate() {
    let registry = Registry::builtin();
    let y = data();
    for method in registry.methods() {
        let name = method.info().name;
        if CLOSED_FORM.contains(&name) || name == "drill" {
            continue;
        }
        let end = After::new(1, true);
        let fit = registry.fit(name, &FitData::points(&y), &small(name), &end);
        if name == "mvu" {
            assert!(
                matches!(fit, Err(unfold_core::Error::Interrupted)),
                "{name}: {:?}",
                fit.map(|f| f.report.iterations)
            );
            continue;
        }
        let report = fit.unwrap_or_else(|e| panic!("{name}: {e}")).report;
        assert_eq!(report.stopped_by, "caller", "{name}");
        assert!(!report.converged, "{name}");
        assert_eq!(report.iterations, 1, "{name}");
        assert_eq!(report.trace.len(), 1, "{name}");
    }
}
