//! End-to-end tests of `unfold select`: candidates ranked by evidence over k, radii, given
//! and learned graphs, held-out points, and LL-LVM's bound.

mod common;

use common::*;

#[test]
fn select_ranks_k_by_evidence_and_refuses_methods_without_it() {
    let (dir, input) = sheet_input("select", 150);
    let (table, plot) = (dir.join("t.csv"), dir.join("b.svg"));
    succeeds(&[
        "select",
        "--method",
        "meu",
        "--input",
        s(&input),
        "--k",
        "5..7",
        "--restarts",
        "2",
        "--out",
        s(&table),
        "--plot",
        s(&plot),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r[5] == "log_likelihood"));
    // k = 5 splits this sheet: those candidates fail with the reason, the search goes on.
    let failed: Vec<_> = rows.iter().filter(|r| r[6].is_empty()).collect();
    assert!(failed
        .iter()
        .all(|r| r[0] == "5" && r[9].contains("connected components")));
    // The marked k has the highest mean value.
    let mean = |k: &str| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r[0] == k && !r[6].is_empty())
            .map(|r| r[6].parse().unwrap())
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let best = rows.iter().find(|r| r[8] == "1").unwrap()[0];
    assert!(["6", "7"].iter().all(|k| mean(best) >= mean(k)));
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    fails_with(
        &[
            "select",
            "--method",
            "isomap",
            "--input",
            s(&input),
            "--k",
            "5,6",
        ],
        "no evidence",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn lllvm_fits_projects_with_variances_and_is_selected_by_its_bound() {
    let (dir, input) = sheet_input("lllvm", 120);
    let (emb, model, report) = (dir.join("e.csv"), dir.join("m.bin"), dir.join("r.json"));
    succeeds(&[
        "fit",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--k",
        "8",
        "--alpha",
        "optimise",
        "--max-iter",
        "10",
        "--restarts",
        "2",
        "--out",
        s(&emb),
        "--save",
        s(&model),
        "--report",
        s(&report),
    ]);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["evidence"]["kind"], "elbo");
    assert_eq!(r["evidence"]["terms"].as_array().unwrap().len(), 3);
    let trace: Vec<f64> = r["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(trace.len(), r["iterations"].as_u64().unwrap() as usize);
    assert!(trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    let new = dir.join("new.csv");
    std::fs::write(&new, sheet_csv(4)).unwrap();
    let (pos, var) = (dir.join("p.csv"), dir.join("v.csv"));
    succeeds(&[
        "project",
        "--model",
        s(&model),
        "--input",
        s(&new),
        "--out",
        s(&pos),
        "--variances",
        s(&var),
    ]);
    let vars = std::fs::read_to_string(&var).unwrap();
    assert_eq!(vars.lines().count(), 5);
    assert!(vars
        .lines()
        .skip(1)
        .flat_map(|l| l.split(','))
        .all(|v| v.parse::<f64>().unwrap() > 0.0));
    let table = dir.join("t.csv");
    succeeds(&[
        "select",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--k",
        "7,9",
        "--restarts",
        "2",
        "--method-args",
        "--max-iter 8 --init spectral",
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    assert_eq!(text.lines().count(), 5);
    assert!(text.lines().skip(1).all(|l| l.contains(",elbo,")));
    let o = unfold(&[
        "select",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--method-args",
        "--no-such-flag 1",
    ]);
    assert!(!o.status.success() && stderr(&o).contains("method-args"));
    let o = unfold(&[
        "fit",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--alpha",
        "fixed:-1",
    ]);
    assert!(!o.status.success() && stderr(&o).contains("fixed:VALUE"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn select_compares_radius_and_given_graphs() {
    let (dir, input) = sheet_input("select-graphs", 80);
    let table = dir.join("t.csv");
    succeeds(&[
        "select",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--radius",
        "9,12",
        "--method-args",
        "--max-iter 5",
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.contains(",radius=9,") && text.contains(",radius=12,"),
        "{text}"
    );
    // Two given graphs: a path, and the path with its second neighbours.
    let (g1, g2) = (dir.join("g1.csv"), dir.join("g2.csv"));
    let path: String = (0..79).map(|i| format!("{i},{}\n", i + 1)).collect();
    let second: String = (0..78).map(|i| format!("{i},{}\n", i + 2)).collect();
    std::fs::write(&g1, format!("i,j\n{path}")).unwrap();
    std::fs::write(&g2, format!("i,j\n{path}{second}")).unwrap();
    let graphs = format!("{},{}", s(&g1), s(&g2));
    succeeds(&[
        "select",
        "--method",
        "lllvm",
        "--input",
        s(&input),
        "--graphs",
        &graphs,
        "--method-args",
        "--max-iter 5",
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.contains(",given=0,") && text.contains(",given=1,"),
        "{text}"
    );
    std::fs::write(&g1, "i,j\n0,80\n").unwrap();
    fails_with(
        &[
            "select",
            "--method",
            "lllvm",
            "--input",
            s(&input),
            "--graphs",
            s(&g1),
        ],
        "point indices",
    );
    // Isomap has no evidence, but an external score ranks it.
    succeeds(&[
        "select",
        "--method",
        "isomap",
        "--input",
        s(&input),
        "--k",
        "8,10",
        "--score",
        "trustworthiness",
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.lines().skip(1).all(|l| l.contains(",objective,0.")),
        "{text}"
    );
    fails_with(
        &[
            "select",
            "--method",
            "alle",
            "--input",
            s(&input),
            "--radius",
            "4",
        ],
        "kNN graph",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn learned_graphs_and_held_out_points_rank_candidates() {
    let (dir, input) = sheet_input("select-learned", 80);
    // The kNN graph and MPME's learned graph, written by `fit --graph-out`, compared by
    // MEU's likelihood on each.
    let (knn, learned) = (dir.join("knn.csv"), dir.join("mpme.csv"));
    for (method, out) in [("le", &knn), ("mpme", &learned)] {
        let o = unfold(&[
            "fit",
            "--method",
            method,
            "--input",
            s(&input),
            "--k",
            "8",
            "--graph-out",
            s(out),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(out).unwrap();
        assert!(
            text.starts_with("i,j,weight\n") && text.lines().count() > 40,
            "{text}"
        );
    }
    let table = dir.join("t.csv");
    let graphs = format!("{},{}", s(&knn), s(&learned));
    succeeds(&[
        "select",
        "--method",
        "meu",
        "--input",
        s(&input),
        "--graphs",
        &graphs,
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(text.contains(",given=0,2,0,0,log_likelihood,-"), "{text}");
    fails_with(
        &[
            "fit",
            "--method",
            "pca",
            "--input",
            s(&input),
            "--out",
            s(&table),
            "--graph-out",
            s(&knn),
        ],
        "no graph",
    );
    // Held-out log predictive density: every candidate gets a finite value of one kind.
    succeeds(&[
        "select",
        "--method",
        "meu",
        "--input",
        s(&input),
        "--k",
        "6,8",
        "--score",
        "heldout",
        "--holdout",
        "0.2",
        "--out",
        s(&table),
    ]);
    let text = std::fs::read_to_string(&table).unwrap();
    let values: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(6).unwrap().parse().unwrap())
        .collect();
    assert!(
        values.len() == 2 && values.iter().all(|v| v.is_finite()),
        "{text}"
    );
    assert!(
        text.lines().skip(1).all(|l| l.contains(",log_likelihood,")),
        "{text}"
    );
    for (method, extra, says) in [
        ("le", "0.1", "no out-of-sample rule"),
        ("meu", "1.5", "(0, 1)"),
    ] {
        let o = unfold(&[
            "select",
            "--method",
            method,
            "--input",
            s(&input),
            "--score",
            "heldout",
            "--holdout",
            extra,
        ]);
        assert!(
            !o.status.success() && stderr(&o).contains(says),
            "{}",
            stderr(&o)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
