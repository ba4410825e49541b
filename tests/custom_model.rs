//! The custom-model example (a new Gaussian random field in under a hundred lines) is
//! registered and runs through unfold's own command line: fit with a report and a model
//! file, selection over k, projection of new points from the saved model.

#[path = "../examples/custom_model/main.rs"]
mod custom_model;

use std::path::Path;

/// Runs `unfold ARGS` with the example's registry (its `main` does the same with the
/// process arguments).
fn run(args: &[&str]) {
    let _main: fn() = custom_model::main;
    let argv = std::iter::once("unfold").chain(args.iter().copied());
    let status = unfold::cli::run_from(&custom_model::registry(), argv);
    assert_eq!(status, 0, "unfold {}", args.join(" "));
}

fn write_points(path: &Path, y: &nalgebra::DMatrix<f64>) {
    let header: Vec<String> = (1..=y.ncols()).map(|j| format!("y{j}")).collect();
    unfold::data::write_csv(path, y, &header).unwrap();
}

#[test]
fn custom_model_fits_selects_saves_and_projects_through_the_cli() {
    let dir = std::env::temp_dir().join(format!("unfold-custom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let roll = unfold::data::synthetic::swiss_roll(200, 0.05, 0)
        .unwrap()
        .points;
    let (data, new) = (dir.join("roll.csv"), dir.join("new.csv"));
    write_points(&data, &roll);
    write_points(&new, &roll.rows(0, 3).into_owned());
    let p = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let input = p("roll.csv");
    run(&[
        "fit",
        "--method",
        "heat",
        "--input",
        &input,
        "--k",
        "8",
        "--save",
        &p("m.bin"),
        "--report",
        &p("r.json"),
        "--out",
        &p("x.csv"),
    ]);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("r.json")).unwrap()).unwrap();
    assert_eq!(report["evidence"]["kind"], "log_likelihood");
    assert!(report["evidence"]["value"].as_f64().unwrap().is_finite());
    run(&[
        "select",
        "--method",
        "heat",
        "--input",
        &input,
        "--k",
        "6,8,10",
        "--out",
        &p("t.csv"),
    ]);
    let table = std::fs::read_to_string(p("t.csv")).unwrap();
    assert_eq!(table.lines().count(), 4, "{table}");
    run(&[
        "project",
        "--model",
        &p("m.bin"),
        "--input",
        &p("new.csv"),
        "--out",
        &p("proj.csv"),
    ]);
    let projected = std::fs::read_to_string(p("proj.csv")).unwrap();
    assert_eq!(projected.lines().count(), 4, "{projected}");
    let lines = include_str!("../examples/custom_model/main.rs")
        .lines()
        .count();
    assert!(lines < 100, "the example has grown to {lines} lines");
    std::fs::remove_dir_all(&dir).ok();
}

/// The example's precision derivatives are right: the gradient the field trait builds from
/// them matches central finite differences of the exact log-likelihood, on the dense path
/// (60 points) and on the sparse one with selected inversion (400 points).
#[test]
fn custom_field_gradient_matches_finite_differences() {
    use unfold::prelude::*;
    for n in [60, 400] {
        let y = unfold::data::synthetic::swiss_roll(n, 0.05, 1)
            .unwrap()
            .points;
        let edges = GraphSpec::knn(6)
            .build(&y, Weighting::Distance, "test", &unfold::prelude::Silent)
            .unwrap()
            .1
            .edges();
        let field = custom_model::HeatField(&y, edges);
        let theta = [0.7, 0.4];
        let mut grad = [0.0; 2];
        field.log_likelihood_gradient(&theta, &mut grad).unwrap();
        for e in 0..2 {
            let h = 1e-6 * theta[e];
            let at = |s: f64| {
                let mut t = theta;
                t[e] += s;
                field.log_likelihood(&t).unwrap().value
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (grad[e] - fd).abs() < 1e-6 * fd.abs().max(1.0),
                "n = {n}, {e}: {} vs {fd}",
                grad[e]
            );
        }
    }
}
