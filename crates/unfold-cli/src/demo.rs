//! `unfold demo`: the spectral methods on the Swiss roll of the LL-LVM paper, then the
//! Gaussian random field comparison of Lawrence (2012) on the Swiss roll and the USHCN
//! stations, with plots and tables of trustworthiness, Procrustes error, labelled evidence,
//! GP-LVM likelihood score and seconds; then MEU on a large Swiss roll on the sparse
//! engine; then LL-LVM's lower bound over k on the paper's
//! Swiss roll; then the posterior-regularised models (SPL and MPME on Iris, DDRTree's
//! learned tree on a helix).

use crate::args::DemoArgs;
use crate::plot::{scatter_svg, Colouring};
use nalgebra::DMatrix;
use std::fmt::Write as _;
use unfold_core::{Error, Result};
use unfold_eval::{gplvm_evidence, procrustes_error, trustworthiness, GplvmScoreOptions};
use unfold_models::registry::{FitData, Fitted, Registry, Settings};

const SPECTRAL: [&str; 6] = ["pca", "cmds", "kpca", "le", "lle", "isomap"];

/// The paper's comparison (§4): LE, LLE, Isomap, MVU, MEU, ALLE, DRILL.
const FIELDS: [&str; 7] = ["le", "lle", "isomap", "mvu", "meu", "alle", "drill"];

pub fn run(registry: &Registry, a: &DemoArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).map_err(|e| Error::io(&a.out, e))?;
    let spectral = spectral_section(registry, a)?;
    let fields = field_section(registry, a)?;
    let large = large_field_section(registry, a)?;
    let lllvm = lllvm_section(registry, a)?;
    let regularised = regularised_section(registry, a)?;
    let others = other_section(registry, a)?;
    let summary =
        format!("# unfold demo\n\n{spectral}\n{fields}\n{large}\n{lllvm}\n{regularised}{others}");
    unfold_core::write_atomic(&a.out.join("summary.md"), summary.as_bytes())?;
    eprintln!("wrote {} (plots and summary.md)", a.out.display());
    Ok(())
}

/// Fits `method` with the neighbourhood size `k` (where it has one) and `seed`.
fn fit_timed(
    registry: &Registry,
    method: &str,
    k: usize,
    seed: u64,
    y: &DMatrix<f64>,
) -> Result<Fitted> {
    let mut settings = Settings::new().with("seed", seed);
    if registry.get(method)?.info().has("k") {
        settings.set("k", k);
    }
    fit_with(registry, method, &settings, y)
}

fn fit_with(
    registry: &Registry,
    method: &str,
    settings: &Settings,
    y: &DMatrix<f64>,
) -> Result<Fitted> {
    registry.fit(method, &FitData::points(y), settings, &unfold_core::Silent)
}

fn spectral_section(registry: &Registry, a: &DemoArgs) -> Result<String> {
    let data = unfold_data::synthetic::swiss_roll(a.n, 0.0, a.seed)?;
    let truth = data
        .latent
        .as_ref()
        .expect("the Swiss roll has latent coordinates");
    let t: Vec<f64> = truth.column(0).iter().copied().collect();
    eprintln!(
        "Swiss roll: {} points in 3-D (seed {}), k = {}",
        a.n, a.seed, a.k
    );
    let mut table = format!(
        "## Spectral methods\n\nSwiss roll (LL-LVM paper generator), n = {}, seed {}, k = {}, 2-D; \
         plots `<method>.svg`, coloured by the true roll coordinate t.\n\n\
         | method | trustworthiness (k={}) | Procrustes error | seconds |\n|---|---|---|---|\n",
        a.n, a.seed, a.k, a.k
    );
    for name in SPECTRAL {
        let Fitted { model, report } = fit_timed(registry, name, a.k, a.seed, &data.points)?;
        let (x, seconds) = (model.coords(), report.seconds);
        let tw = trustworthiness(&data.points, x, a.k)?;
        let pe = procrustes_error(x, truth)?;
        let title = format!("{name} (Swiss roll, n = {})", a.n);
        scatter_svg(
            &a.out.join(format!("{name}.svg")),
            x,
            Colouring::Value(&t),
            &title,
        )?;
        writeln!(table, "| {name} | {tw:.4} | {pe:.4} | {seconds:.3} |").ok();
    }
    println!("{table}");
    table.push_str(&images(SPECTRAL.iter().map(|m| m.to_string())));
    Ok(table)
}

/// One data set of the field comparison: points, neighbours, colouring and a tag.
struct FieldData {
    tag: &'static str,
    title: String,
    points: DMatrix<f64>,
    k: usize,
    colour: Vec<f64>,
}

/// The first latent coordinate of a data set that has one (roll position, latitude).
fn first_latent(d: &unfold_data::Dataset) -> Vec<f64> {
    let latent = d
        .latent
        .as_ref()
        .expect("the demo's data sets carry latent coordinates");
    latent.column(0).iter().copied().collect()
}

fn field_section(registry: &Registry, a: &DemoArgs) -> Result<String> {
    let roll = unfold_data::synthetic::swiss_roll(400, 0.0, a.seed)?;
    let ushcn = unfold_data::bundled::ushcn_400(a.seed);
    let sets = [
        FieldData {
            tag: "roll",
            title: "Swiss roll, n = 400, k = 7".into(),
            colour: first_latent(&roll),
            points: roll.points,
            k: 7,
        },
        FieldData {
            tag: "ushcn",
            title: "USHCN precipitation, 400 stations x 12 months (z-scores), k = 12 (colour: latitude)"
                .into(),
            colour: first_latent(&ushcn),
            // MEU's gamma = 1e-4 is absolute: put the monthly totals (~1000) on a unit scale.
            points: unfold_data::standardise(&ushcn.points).points,
            k: 12,
        },
    ];
    let mut out = String::from(
        "## Gaussian random field models (Lawrence 2012)\n\n\
         The paper's comparison, scored by the GP-LVM log-likelihood of each embedding (its \
         metric: higher is better) and by trustworthiness. `evidence` is each model's own \
         score, labelled by kind: only values of the same kind on the same data compare; for \
         LE and LLE it is the exact likelihood of the field with their precision and a fitted \
         scale. \
         Plots `grf-<data>-<method>.svg`.\n",
    );
    for set in &sets {
        eprintln!("field models: {}", set.title);
        write!(
            out,
            "\n### {}\n\n| method | evidence kind | evidence | GP-LVM score | trustworthiness (k={}) | seconds |\n|---|---|---|---|---|---|\n",
            set.title, set.k
        )
        .ok();
        for name in FIELDS {
            let Fitted { model, report } = fit_timed(registry, name, set.k, a.seed, &set.points)?;
            let (x, seconds) = (model.coords(), report.seconds);
            let score = gplvm_evidence(x, &set.points, &GplvmScoreOptions::default())?;
            let tw = trustworthiness(&set.points, x, set.k)?;
            let ev = model.evidence_on((&set.points).into())?;
            let value = if ev.value.is_finite() {
                format!("{:.2}", ev.value)
            } else {
                "-".into()
            };
            writeln!(
                out,
                "| {name} | {} | {value} | {:.2}{} | {tw:.4} | {seconds:.3} |",
                ev.kind,
                score.value(),
                if score.is_bound() { " (bound)" } else { "" }
            )
            .ok();
            let path = a.out.join(format!("grf-{}-{name}.svg", set.tag));
            scatter_svg(
                &path,
                x,
                Colouring::Value(&set.colour),
                &format!("{name} ({})", set.title),
            )?;
        }
        out.push_str(&images(
            FIELDS.iter().map(|m| format!("grf-{}-{m}", set.tag)),
        ));
    }
    println!("{out}");
    Ok(out)
}

/// LL-LVM (Park et al. 2015) on the paper's 400-point Swiss roll: the variational lower
/// bound for three neighbourhood sizes, and the embedding at the best.
fn lllvm_section(registry: &Registry, a: &DemoArgs) -> Result<String> {
    let roll = unfold_data::synthetic::swiss_roll(400, 0.0, a.seed)?;
    let truth = roll
        .latent
        .as_ref()
        .expect("the Swiss roll has latent coordinates");
    let t: Vec<f64> = truth.column(0).iter().copied().collect();
    eprintln!("LL-LVM: Swiss roll, n = 400, k = 6, 9, 12");
    let mut out = String::from(
        "## LL-LVM (Park et al. 2015)\n\n\
         The paper's Swiss roll (n = 400) and settings (eps = alpha = 1e-3, data scaled to \
         largest entry 1, at most 50 EM iterations, one seed) with the default spectral start. \
         The bound (kind `elbo`) compares neighbourhood graphs on the same data; \
         `unfold select --method lllvm` runs the full scan with restarts. \
         Plot `lllvm-roll.svg` at the best k.\n\n\
         | k | bound | EM iterations | trustworthiness (k=9) | Procrustes error | seconds |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut best: Option<(usize, f64, DMatrix<f64>)> = None;
    for k in [6, 9, 12] {
        let Fitted { model, report } = fit_timed(registry, "lllvm", k, a.seed, &roll.points)?;
        let (x, seconds) = (model.coords(), report.seconds);
        let bound = report.evidence.value;
        writeln!(
            out,
            "| {k} | {bound:.2} | {} | {:.4} | {:.4} | {seconds:.2} |",
            report.iterations,
            trustworthiness(&roll.points, x, 9)?,
            procrustes_error(x, truth)?
        )
        .ok();
        if best.as_ref().is_none_or(|b| bound > b.1) {
            best = Some((k, bound, x.clone()));
        }
    }
    let (k, _, x) = best.expect("three fits");
    scatter_svg(
        &a.out.join("lllvm-roll.svg"),
        &x,
        Colouring::Value(&t),
        &format!("LL-LVM posterior mean (Swiss roll, k = {k})"),
    )?;
    println!("{out}");
    out.push_str(&images(["lllvm-roll".to_string()].into_iter()));
    Ok(out)
}

/// MEU past the papers' scale: a large noisy Swiss roll on the sparse engine (grounded
/// sparse Cholesky with selected inversion, `docs/methods/meu.md`).
fn large_field_section(registry: &Registry, a: &DemoArgs) -> Result<String> {
    let n = a.large_n;
    let roll = unfold_data::synthetic::swiss_roll(n, 0.05, a.seed)?;
    let truth = roll
        .latent
        .as_ref()
        .expect("the Swiss roll has latent coordinates");
    eprintln!("MEU at scale: Swiss roll, n = {n}, k = {}", a.k);
    let settings = Settings::new()
        .with("seed", a.seed)
        .with("k", a.k)
        .with("solver", "sparse");
    let Fitted { model, report } = fit_with(registry, "meu", &settings, &roll.points)?;
    let x = model.coords();
    let mut out = format!(
        "## MEU at scale\n\n\
         A Swiss roll of n = {n} points (noise 0.05), k = {}: MEU's exact likelihood and \
         gradient from a sparse Cholesky factor with selected inversion, never an n x n \
         matrix (`--solver sparse`; `bench/results/grf.md` goes to 10^6 points). \
         Plot `meu-large-roll.svg`.\n\n\
         | n | edges | log-likelihood | iterations | stopped by | Procrustes error | seconds |\n\
         |---|---|---|---|---|---|---|\n",
        a.k
    );
    let edges = model.learned_edges().map_or(0, |e| e.len());
    writeln!(
        out,
        "| {n} | {edges} | {:.2} | {} | {} | {:.4} | {:.1} |",
        report.evidence.value,
        report.iterations,
        report.stopped_by,
        procrustes_error(x, truth)?,
        report.seconds
    )
    .ok();
    let t: Vec<f64> = truth.column(0).iter().copied().collect();
    scatter_svg(
        &a.out.join("meu-large-roll.svg"),
        x,
        Colouring::Value(&t),
        &format!("MEU on a Swiss roll of {n} points (sparse engine)"),
    )?;
    println!("{out}");
    out.push_str(&images(["meu-large-roll".to_string()].into_iter()));
    Ok(out)
}

/// Markdown image links to the plots `<name>.svg` written next to `summary.md`.
fn images(names: impl Iterator<Item = String>) -> String {
    let links: Vec<String> = names.map(|n| format!("![{n}]({n}.svg)")).collect();
    format!("\n{}\n", links.join(" "))
}

/// The posterior-regularised models: SPL and MPME on Iris (leave-one-out 1-NN accuracy of
/// the 2-D embedding, the SPL paper's protocol) and DDRTree's tree on a noisy helix.
fn regularised_section(registry: &Registry, a: &DemoArgs) -> Result<String> {
    let iris = unfold_data::bundled::iris();
    let labels = iris.labels.as_ref().expect("iris has labels");
    eprintln!("posterior-regularised models: Iris, helix");
    let mut out = String::from(
        "## Posterior-regularised models (Wang et al.)\n\n\
         The dual objective (kind `objective`) is each model's own; Iris is scored by the \
         leave-one-out 1-NN accuracy of the 2-D embedding (the SPL paper's protocol: SPL 0.9600 \
         there). DDRTree learns a tree over 30 centres of a noisy helix \
         (`ddrtree-helix.svg`: the centres and the tree).\n\n\
         | model | data | objective | 1-NN accuracy | seconds |\n|---|---|---|---|---|\n",
    );
    let classes: Vec<usize> = labels.clone();
    for (name, settings) in [
        ("spl", Settings::new().with("k", 10usize)),
        ("mpme", Settings::new().with("lambda", 0.1).with("C", 10.0)),
    ] {
        let Fitted { model, report } = fit_with(registry, name, &settings, &iris.points)?;
        let (x, seconds) = (model.coords(), report.seconds);
        let acc = unfold_eval::loo_1nn_accuracy(x, labels)?;
        let value = report.evidence.value;
        writeln!(
            out,
            "| {name} | iris | {value:.3} | {acc:.4} | {seconds:.3} |"
        )
        .ok();
        scatter_svg(
            &a.out.join(format!("{name}-iris.svg")),
            x,
            Colouring::Class(&classes),
            &format!("{name} (Iris)"),
        )?;
    }
    let curve = unfold_data::synthetic::helix(300, 0.05, a.seed)?;
    let settings = Settings::new()
        .with("ncenters", 30usize)
        .with("order", true);
    let Fitted { model, report } = fit_with(registry, "ddrtree", &settings, &curve.points)?;
    writeln!(
        out,
        "| ddrtree | helix, n = 300 | {:.3} | - | {:.3} |",
        report.evidence.value, report.seconds
    )
    .ok();
    let overlay = model
        .overlay()
        .ok_or_else(|| Error::numerical("the demo", "DDRTree gave no tree"))?;
    let (name, pseudotime) = overlay
        .colour_by
        .as_ref()
        .ok_or_else(|| Error::numerical("the demo", "DDRTree gave no ordering"))?;
    crate::plot::scatter_over_svg(
        &a.out.join("ddrtree-helix.svg"),
        model.coords(),
        Colouring::Value(pseudotime),
        name,
        &overlay.segments,
        &overlay.marks,
        "DDRTree on a helix: cells by pseudotime, the learned tree",
    )?;
    println!("{out}");
    out.push_str(&images(
        ["spl-iris", "mpme-iris", "ddrtree-helix"]
            .iter()
            .map(|n| n.to_string()),
    ));
    Ok(out)
}

/// Methods registered from outside unfold (a researcher's own models): each fitted with
/// its defaults to the 400-point Swiss roll with k = 7, with its evidence, GP-LVM score,
/// trustworthiness and seconds. Empty when the registry holds only unfold's methods.
fn other_section(registry: &Registry, a: &DemoArgs) -> Result<String> {
    let builtin = Registry::builtin().names();
    let others: Vec<&str> = registry
        .names()
        .into_iter()
        .filter(|n| !builtin.contains(n))
        .collect();
    if others.is_empty() {
        return Ok(String::new());
    }
    let roll = unfold_data::synthetic::swiss_roll(400, 0.0, a.seed)?;
    let mut out = String::from(
        "\n## Registered models\n\nSwiss roll, n = 400, k = 7 (where the model has k), \
         defaults otherwise.\n\n\
         | method | evidence kind | evidence | GP-LVM score | trustworthiness (k=7) | seconds |\n\
         |---|---|---|---|---|---|\n",
    );
    for name in others {
        eprintln!("registered model: {name}");
        let Fitted { model, report } = fit_timed(registry, name, 7, a.seed, &roll.points)?;
        let x = model.coords();
        let ev = model.evidence_on((&roll.points).into())?;
        let score = gplvm_evidence(x, &roll.points, &GplvmScoreOptions::default())?;
        writeln!(
            out,
            "| {name} | {} | {:.2} | {:.2}{} | {:.4} | {:.3} |",
            ev.kind,
            ev.value,
            score.value(),
            if score.is_bound() { " (bound)" } else { "" },
            trustworthiness(&roll.points, x, 7)?,
            report.seconds
        )
        .ok();
    }
    println!("{out}");
    Ok(out)
}
