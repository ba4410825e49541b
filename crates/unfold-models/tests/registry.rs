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
        .build(&y, Default::default(), "test")
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
