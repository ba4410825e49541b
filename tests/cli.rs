//! End-to-end tests of the `unfold` binary: fit, project, the models' outputs and options,
//! and the errors bad input gets.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

#[test]
fn fit_then_project_round_trips() {
    let (dir, input) = sheet_input("fit", 300);
    for method in ["pca", "cmds", "kpca", "lle", "isomap"] {
        let (emb, model, report) = (dir.join("emb.csv"), dir.join("m.bin"), dir.join("r.json"));
        let plot = dir.join("p.svg");
        let o = unfold(&[
            "fit",
            "--method",
            method,
            "--input",
            s(&input),
            "--dim",
            "2",
            "--k",
            "10",
            "--out",
            s(&emb),
            "--save",
            s(&model),
            "--report",
            s(&report),
            "--plot",
            s(&plot),
        ]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let text = std::fs::read_to_string(&emb).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("x1,x2"));
        assert_eq!(lines.count(), 300);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(json["method"], method);
        assert_eq!(json["n"], 300);
        assert_eq!(json["p"], 3);
        assert_eq!(json["evidence"]["kind"], "none");
        assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));

        // Projecting the training points returns their embedding.
        let proj = dir.join("proj.csv");
        let o = project(&model, &input, &proj);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let read = |p: &Path| -> Vec<f64> {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .skip(1)
                .flat_map(|l| {
                    l.split(',')
                        .map(|v| v.parse::<f64>().unwrap())
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let (a, b) = (read(&emb), read(&proj));
        let scale = a.iter().map(|v| v.abs()).fold(0.0, f64::max);
        let worst = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        // LLE places a training point by its neighbours' weights, not exactly at itself.
        let tol = if method == "lle" { 0.05 } else { 1e-6 };
        assert!(
            worst <= tol * scale,
            "{method}: projection differs by {worst}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn laplacian_eigenmaps_model_refuses_projection() {
    let (dir, input) = sheet_input("le", 100);
    let model = dir.join("le.bin");
    succeeds(&[
        "fit",
        "--method",
        "le",
        "--input",
        s(&input),
        "--k",
        "8",
        "--save",
        s(&model),
    ]);
    let o = project(&model, &input, &dir.join("x.csv"));
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no out-of-sample rule"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs `fit` on `csv` and returns the error message, asserting a non-zero exit.
fn fit_error(name: &str, csv: &str, extra: &[&str]) -> String {
    let dir = scratch(name);
    let input = dir.join("data.csv");
    std::fs::write(&input, csv).unwrap();
    let mut args = vec!["fit", "--input", s(&input)];
    args.extend_from_slice(extra);
    let o = unfold(&args);
    std::fs::remove_dir_all(&dir).ok();
    assert!(!o.status.success(), "{name}: expected failure");
    assert!(o.stdout.is_empty(), "{name}: nothing on stdout on failure");
    let e = stderr(&o);
    assert!(e.starts_with("error: "), "{name}: {e}");
    e
}

#[test]
fn bad_input_gets_a_clear_error() {
    let e = fit_error(
        "nan",
        "a,b,c\n1,2,3\n4,NaN,6\n7,8,9\n",
        &["--method", "pca", "--dim", "1"],
    );
    assert!(e.contains("line 3") && e.contains("non-finite"), "{e}");
    let e = fit_error("ragged", "1,2,3\n4,5\n", &["--method", "pca", "--dim", "1"]);
    assert!(e.contains("line 2"), "{e}");
    let e = fit_error("empty", "", &["--method", "pca", "--dim", "1"]);
    assert!(e.contains("empty"), "{e}");
    let e = fit_error("k", &sheet_csv(8), &["--method", "isomap", "--k", "8"]);
    assert!(e.contains("k = 8") && e.contains("at least 9"), "{e}");
    let e = fit_error("dim", &sheet_csv(20), &["--method", "pca", "--dim", "3"]);
    assert!(e.contains("latent dimension 3 is too large"), "{e}");
    let mut dup = String::from("a,b,c\n");
    for _ in 0..6 {
        dup.push_str("1,1,1\n");
    }
    dup.push_str(&sheet_csv(40)[6..]);
    let e = fit_error("dup", &dup, &["--method", "lle", "--k", "4"]);
    assert!(e.contains("identical"), "{e}");
    let mut two = sheet_csv(40);
    for line in sheet_csv(40).lines().skip(1) {
        let v: Vec<f64> = line
            .split(',')
            .map(|x| x.parse::<f64>().unwrap() + 1000.0)
            .collect();
        two.push_str(&format!("{},{},{}\n", v[0], v[1], v[2]));
    }
    let e = fit_error(
        "disconnected",
        &two,
        &["--method", "isomap", "--k", "5", "--connect", "off"],
    );
    assert!(
        e.contains("2 connected components") && e.contains("k"),
        "{e}"
    );
    // By default the two copies are joined by their closest pair, with a warning on
    // standard error and in the report.
    let dir = scratch("joined");
    let (input, report) = (dir.join("two.csv"), dir.join("r.json"));
    std::fs::write(&input, &two).unwrap();
    let o = unfold(&[
        "fit",
        "--input",
        s(&input),
        "--method",
        "isomap",
        "--k",
        "5",
        "--report",
        s(&report),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("warning") && e.contains("joined them by 1 edge"),
        "{e}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(r["warnings"][0]
        .as_str()
        .unwrap()
        .contains("2 separate components"));
    std::fs::remove_dir_all(&dir).ok();
}

/// DRILL, MVU and LL-LVM refuse more points than the memory limit allows (here
/// `UNFOLD_MAX_MEMORY`, set on the child process only), naming the limit, the memory
/// needed and the scalable alternative, and exit non-zero with nothing on stdout.
#[test]
fn dense_methods_refuse_more_points_than_memory_allows() {
    let (dir, input) = sheet_input("memory", 200);
    let out = dir.join("x.csv");
    let fit_with = |method: &str, limit: &str, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_unfold"))
            .env("UNFOLD_MAX_MEMORY", limit)
            .args(["fit", "--method", method, "--input", s(&input)])
            .args(["--out", s(&out)])
            .args(extra)
            .output()
            .expect("the unfold binary runs")
    };
    let fit = |method: &str, limit: &str| fit_with(method, limit, &[]);
    for (method, extra, name, needed, alternative) in [
        ("drill", &[][..], "DRILL", "4.0 MiB", "Use meu"),
        (
            "mvu",
            &[][..],
            "MVU (exact SDP)",
            "MiB of memory",
            "Use le (Laplacian eigenmaps",
        ),
        (
            "lllvm",
            &["--posterior", "full"][..],
            "LL-LVM",
            "7.0 MiB",
            "Use LL-LVM's per-point family (posterior=factorised",
        ),
    ] {
        let o = fit_with(method, "1M", extra);
        let e = stderr(&o);
        assert!(!o.status.success() && o.stdout.is_empty(), "{method}: {e}");
        for part in [
            &format!("error: {name} on 200 points would need about"),
            needed,
            "more than the limit of 1.0 MiB (UNFOLD_MAX_MEMORY)",
            "points fit",
            alternative,
        ] {
            assert!(e.contains(part), "{method}: {part:?} missing from {e}");
        }
    }
    let o = fit("drill", "lots");
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("`UNFOLD_MAX_MEMORY`") && e.contains("=4G"),
        "{e}"
    );
    let o = fit("drill", "1G");
    assert!(o.status.success() && out.exists(), "{}", stderr(&o));
    // LL-LVM's default family is the per-point one where the full one does not fit (7.0
    // MiB) and it does (6.6 MiB, from its analysed systems); below both, it is refused.
    let o = fit_with("lllvm", "6.8M", &["--max-iter", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fit_with("lllvm", "1M", &[]);
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("LL-LVM (per-point family) on 200 points"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn corrupt_model_file_is_refused() {
    let dir = scratch("corrupt");
    let model = dir.join("m.bin");
    std::fs::write(&model, b"UNFOLDMD\x01\x00\x00\x00garbage").unwrap();
    let input = dir.join("data.csv");
    std::fs::write(&input, sheet_csv(10)).unwrap();
    let o = project(&model, &input, &dir.join("o.csv"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("corrupt"), "{}", stderr(&o));
    assert!(!dir.join("o.csv").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn field_models_fit_save_and_project_with_variances() {
    let (dir, input) = sheet_input("fields", 200);
    for (method, kind) in [
        ("meu", "log_likelihood"),
        ("alle", "log_likelihood"),
        ("lle-pl", "pseudo_log_likelihood"),
        ("drill", "log_likelihood"),
        ("mvu", "none"),
    ] {
        let (emb, model, report) = (dir.join("emb.csv"), dir.join("m.bin"), dir.join("r.json"));
        let o = unfold(&[
            "fit",
            "--method",
            method,
            "--input",
            s(&input),
            "--k",
            "7",
            "--out",
            s(&emb),
            "--save",
            s(&model),
            "--report",
            s(&report),
        ]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(json["evidence"]["kind"], kind, "{method}");
        let (proj, var) = (dir.join("proj.csv"), dir.join("var.csv"));
        let o = unfold(&[
            "project",
            "--model",
            s(&model),
            "--input",
            s(&input),
            "--out",
            s(&proj),
            "--variances",
            s(&var),
        ]);
        if matches!(method, "drill" | "mvu") {
            assert!(
                stderr(&o).contains("no out-of-sample rule"),
                "{method}: {}",
                stderr(&o)
            );
            continue;
        }
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let text = std::fs::read_to_string(&var).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("var1,var2"));
        let vars: Vec<f64> = lines
            .flat_map(|l| {
                l.split(',')
                    .map(|v| v.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(vars.len(), 400);
        assert!(vars.iter().all(|v| *v >= 0.0 && v.is_finite()), "{method}");
    }
    let e = fit_error("rho", &sheet_csv(50), &["--method", "drill", "--rho=-1"]);
    assert!(e.contains("`rho`") && e.contains("[0, inf)"), "{e}");
    let e = fit_error("mvu-big", &sheet_csv(700), &["--method", "mvu", "--k", "6"]);
    assert!(e.contains("600 points") || e.contains("max_points"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn posterior_regularised_models_fit_save_and_report() {
    let (dir, input) = sheet_input("postreg", 60);
    for (method, extra) in [
        ("spl", vec!["--k", "8"]),
        ("mpme", vec!["--lambda", "0.01"]),
        ("drtree", vec!["--lambda", "1"]),
        ("ddrtree", vec!["--ncenters", "10", "--compat", "r"]),
    ] {
        let (emb, model, report) = (dir.join("e.csv"), dir.join("m.bin"), dir.join("r.json"));
        let mut args = vec![
            "fit",
            "--method",
            method,
            "--input",
            s(&input),
            "--out",
            s(&emb),
            "--save",
            s(&model),
            "--report",
            s(&report),
        ];
        args.extend(extra);
        let o = unfold(&args);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["evidence"]["kind"], "objective", "{method}");
        assert_eq!(std::fs::read_to_string(&emb).unwrap().lines().count(), 61);
        let o = project(&model, &input, &dir.join("p.csv"));
        assert!(!o.status.success() && stderr(&o).contains("no out-of-sample rule"));
    }
    let tree = std::fs::read_to_string(dir.join("e.tree.csv")).unwrap();
    assert_eq!(
        tree.lines().count(),
        10,
        "a tree over 10 centres has 9 edges: {tree}"
    );
    let centres = std::fs::read_to_string(dir.join("e.centres.csv")).unwrap();
    assert_eq!(centres.lines().count(), 11);
    for (method, flag, value, needle) in [
        ("mpme", "--lambda", "-1", "lambda"),
        ("spl", "--C", "0", "C"),
        ("ddrtree", "--sigma", "0", "sigma"),
        ("ddrtree", "--ncenters", "100", "centres"),
    ] {
        let setting = format!("{flag}={value}");
        let o = unfold(&["fit", "--method", method, "--input", s(&input), &setting]);
        assert!(!o.status.success(), "{method} {flag} {value}");
        assert!(
            stderr(&o).to_lowercase().contains(&needle.to_lowercase()),
            "{method} {flag} {value}: {}",
            stderr(&o)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn method_options_are_typed_flags_checked_against_the_method() {
    let (dir, input) = sheet_input("options", 80);
    // Negative numbers reach the parameter's own range check.
    for (method, flag, value, says) in [
        (
            "spl",
            "--C",
            "-1",
            "invalid value for `C`: expected a number in (0, inf], got -1",
        ),
        ("drill", "--rho", "-1", "invalid value for `rho`"),
        ("meu", "--gamma", "-0.5", "invalid value for `gamma`"),
        ("lllvm", "--max-iter", "0", "invalid value for `max_iter`"),
    ] {
        fails_with(
            &["fit", "--method", method, "--input", s(&input), flag, value],
            says,
        );
    }
    // An option of another method is refused with this method's options.
    fails_with(
        &[
            "fit",
            "--method",
            "meu",
            "--input",
            s(&input),
            "--rho",
            "0.1",
        ],
        "--rho is a parameter of drill, not of meu; meu takes --dim",
    );
    // select takes the method's options directly, typed.
    let table = dir.join("t.csv");
    succeeds(&[
        "select",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--k",
        "7,8",
        "--max-iter",
        "3",
        "--alpha",
        "fixed:1e-3",
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    fails_with(
        &[
            "select",
            "--method",
            "lllvm",
            "--input",
            s(&input),
            "--alpha",
            "fixed:-1",
        ],
        "invalid value for `alpha`",
    );
    // The methods and their parameters, from the registry.
    let o = unfold(&["methods"]);
    let listing = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && listing.contains("meu (random field)"),
        "{listing}"
    );
    assert!(listing.contains("--max-iter") && listing.contains("(0, inf]"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reports_give_the_iterations_of_iterative_fits() {
    let (dir, input) = sheet_input("reports", 80);
    let report = dir.join("r.json");
    for method in [
        "meu", "spl", "mpme", "drtree", "ddrtree", "lllvm", "drill", "mvu",
    ] {
        let mut args = vec!["fit", "--method", method, "--input", s(&input), "--k", "8"];
        args.extend(["--report", s(&report)]);
        if method == "lllvm" {
            args.extend(["--max-iter", "5"]);
        }
        succeeds(&args);
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let iterations = r["iterations"].as_u64().unwrap();
        assert!(iterations > 0, "{method}: {r}");
        assert!(
            r["trace"].as_array().unwrap().len() as u64 <= iterations,
            "{method}"
        );
        assert_ne!(r["stopped_by"], "closed_form", "{method}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ddrtree_orders_the_cells_along_its_tree() {
    let (dir, input) = sheet_input("order", 80);
    let (emb, report) = (dir.join("e.csv"), dir.join("r.json"));
    let base = [
        "fit",
        "--method",
        "ddrtree",
        "--input",
        s(&input),
        "--ncenters",
        "12",
        "--out",
        s(&emb),
        "--report",
        s(&report),
    ];
    let o = unfold(&[&base[..], &["--order"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("root_cell: "), "{}", stderr(&o));
    let order = std::fs::read_to_string(dir.join("e.order.csv")).unwrap();
    let rows: Vec<Vec<f64>> = order
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(order.lines().next().unwrap(), "pseudotime,state,centre");
    assert_eq!(rows.len(), 80);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let note = |name: &str| {
        let notes = r["notes"].as_array().unwrap();
        let pair = notes.iter().find(|p| p[0] == name).unwrap();
        pair[1].as_str().unwrap().to_string()
    };
    let root: usize = note("root_cell").parse().unwrap();
    // The settings chosen from the data are reported with their reasons.
    let dim: usize = note("dim").parse().unwrap();
    assert!(dim >= 2, "{r}");
    assert!(note("dim_reason").contains("singular values"), "{r}");
    assert!(note("lambda_reason").contains("gamma N / K"), "{r}");
    assert_eq!(rows[root][0], 0.0, "pseudotime starts at the root cell");
    assert!(rows
        .iter()
        .all(|row| row[0] >= 0.0 && row[1] >= 1.0 && row[2] < 12.0));
    // A given root cell; a root out of range and an unknown state are refused.
    let o = unfold(&[&base[..], &["--root-cell", "7"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let order = std::fs::read_to_string(dir.join("e.order.csv")).unwrap();
    assert!(order.lines().nth(8).unwrap().starts_with("0,"));
    fails_with(
        &[&base[..], &["--root-cell", "80"]].concat(),
        "out of range",
    );
    fails_with(
        &[&base[..], &["--root-state", "99"]].concat(),
        "no state 99",
    );
    fails_with(
        &[&base[..], &["--root-cell", "1", "--root-state", "1"]].concat(),
        "not both",
    );
    std::fs::remove_dir_all(&dir).ok();
}
