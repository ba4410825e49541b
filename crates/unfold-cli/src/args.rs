//! Command-line arguments: the fixed options of each command (clap derive) and the method
//! options, generated from the registry: one flag per parameter name (`--max-iter` for
//! `max_iter`), parsed into typed [`Settings`] for the chosen method.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, ValueEnum};
use std::path::PathBuf;
use unfold_core::{Error, Result};
use unfold_models::registry::{ParamKind, ParamSpec, Registry, Settings};

/// The whole command line for `registry`.
pub fn command(registry: &Registry) -> Command {
    let method = || {
        Arg::new("method")
            .long("method")
            .required(true)
            .value_parser(clap::builder::PossibleValuesParser::new(registry.names()))
            .help("The method (`unfold methods` lists them with their parameters)")
    };
    let fit = FitArgs::augment_args(
        Command::new("fit")
            .about("Fit one method to a data file and write the embedding, a report, a model file"),
    )
    .arg(method());
    let select = SelectArgs::augment_args(Command::new("select").about(
        "Compare a model's evidence over neighbourhood sizes, graphs, latent dimensions and \
         restarts; write the table and a plot of the evidence against k",
    ))
    .arg(method());
    Command::new("unfold")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Probabilistic spectral dimensionality reduction")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(max_memory_arg())
        .subcommand(
            DemoArgs::augment_args(Command::new("demo").about(
                "Fit the headline methods on bundled data sets; write plots and a summary table",
            ))
            .allow_negative_numbers(true),
        )
        .subcommand(method_options(fit, registry, &[]))
        .subcommand(ProjectArgs::augment_args(
            Command::new("project").about("Place new points into the embedding of a saved model"),
        ))
        .subcommand(method_options(select, registry, SELECT_OWN))
        .subcommand(
            Command::new("methods").about("List the methods, their capabilities and parameters"),
        )
}

/// The global `--max-memory SIZE`: the most memory a fit may use, checked before the
/// large allocations of the methods whose memory grows faster than n.
fn max_memory_arg() -> Arg {
    Arg::new(MAX_MEMORY)
        .long(MAX_MEMORY)
        .global(true)
        .value_name("SIZE")
        .value_parser(|text: &str| {
            unfold_core::parse_size(text, "--max-memory").map_err(|e| e.to_string())
        })
        .help(
            "The most memory a fit may use: bytes with an optional suffix K, M, G or T \
             (powers of 1024), e.g. 4G or 512M; methods whose memory grows faster than n \
             (dense n x n matrices, all-pairs distances, MVU's semidefinite program, DRILL, \
             exact LL-LVM, the exact GP-LVM score, a sparse factor's predicted fill) refuse \
             a fit that would need more, before allocating [default: UNFOLD_MAX_MEMORY, \
             else the machine's available memory]",
        )
}

const MAX_MEMORY: &str = "max-memory";

/// Makes a given `--max-memory` the limit of every fit of this process
/// ([`unfold_core::MemoryLimit::set_process`]).
pub fn apply_max_memory(matches: &ArgMatches) {
    if let Some(&bytes) = matches.get_one::<u64>(MAX_MEMORY) {
        unfold_core::MemoryLimit::set_process(Some(unfold_core::MemoryLimit::given(
            bytes,
            "--max-memory",
        )));
    }
}

/// The options every method accepts: those without a neighbourhood graph ignore `--k` and
/// `--graph`, so one command line serves a loop over methods.
pub const COMMON: &[&str] = &["dim", "k", "graph", "connect", "seed"];

/// The parameters `unfold select` sets itself for each candidate (its grid and seeds).
pub const SELECT_OWN: &[&str] = &["k", "dim", "graph", "seed", "restarts"];

/// The flag of a parameter: `--max-iter` for `max_iter`.
pub fn flag_name(param: &str) -> String {
    param.replace('_', "-")
}

/// Every parameter name of the registry's methods (but `skip`), each with the specs of
/// the methods that declare it.
fn parameters(
    registry: &Registry,
    skip: &[&str],
) -> Vec<(&'static str, Vec<(&'static str, ParamSpec)>)> {
    let mut out: Vec<(&'static str, Vec<(&'static str, ParamSpec)>)> = Vec::new();
    for m in registry.methods() {
        let info = m.info();
        let params = registry.params(info.name).unwrap_or_default();
        for p in params {
            if skip.contains(&p.name) {
                continue;
            }
            match out.iter_mut().find(|(n, _)| *n == p.name) {
                Some((_, specs)) => specs.push((info.name, p)),
                None => out.push((p.name, vec![(info.name, p)])),
            }
        }
    }
    out
}

/// The help of a parameter flag: the meanings, the allowed values and each method's
/// default.
fn help(specs: &[(&str, ParamSpec)]) -> String {
    let mut meanings: Vec<&str> = Vec::new();
    for (_, p) in specs {
        if !meanings.contains(&p.help) {
            meanings.push(p.help);
        }
    }
    let default = |p: &ParamSpec| p.default_text();
    // One phrase when every method agrees, else one entry per method.
    let per_method = |what: &str, f: &dyn Fn(&ParamSpec) -> String| {
        let first = f(&specs[0].1);
        if specs.iter().all(|(_, p)| f(p) == first) {
            format!("{what}: {first}")
        } else {
            let each: Vec<String> = specs.iter().map(|(m, p)| format!("{m} {}", f(p))).collect();
            format!("{what}: {}", each.join(", "))
        }
    };
    let users = if specs.len() > 4 {
        String::new()
    } else {
        let names: Vec<&str> = specs.iter().map(|(m, _)| *m).collect();
        format!("; for {}", names.join(", "))
    };
    format!(
        "{} ({}; {}{users})",
        meanings.join("; "),
        per_method("allowed", &|p| p.allowed()),
        per_method("default", &default)
    )
}

/// Adds one flag per method parameter (but `skip`) to `cmd`.
pub fn method_options(cmd: Command, registry: &Registry, skip: &[&str]) -> Command {
    let mut cmd = cmd.allow_negative_numbers(true);
    for (name, specs) in parameters(registry, skip) {
        let arg = Arg::new(name)
            .long(flag_name(name))
            .help(help(&specs))
            .help_heading("Method options");
        // A value may start with a hyphen (`--rho -1,2`, `--alpha -inf`): it reaches the
        // parameter's own range check rather than being taken for a flag.
        cmd = cmd.arg(match specs[0].1.kind {
            ParamKind::Flag => arg.action(ArgAction::SetTrue),
            _ => arg
                .action(ArgAction::Set)
                .value_name("VALUE")
                .allow_hyphen_values(true),
        });
    }
    cmd
}

/// The settings for `method` that the command line gives in `m` (flags added by
/// [`method_options`] with the same `skip`), parsed into typed values and checked. A flag
/// of a parameter the method does not have is refused with the method's parameters (but
/// the [`COMMON`] ones).
pub fn read_settings(
    m: &ArgMatches,
    registry: &Registry,
    method: &str,
    skip: &[&str],
) -> Result<Settings> {
    let own = registry.params(method)?;
    let mut settings = Settings::new();
    for (name, specs) in parameters(registry, skip) {
        if m.value_source(name) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Some(spec) = own.iter().find(|p| p.name == name) else {
            if COMMON.contains(&name) {
                continue;
            }
            let names: Vec<String> = own
                .iter()
                .filter(|p| !skip.contains(&p.name))
                .map(|p| format!("--{}", flag_name(p.name)))
                .collect();
            return Err(Error::invalid(
                name,
                format!(
                    "--{} is a parameter of {}, not of {method}; {method} takes {}",
                    flag_name(name),
                    specs.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(", "),
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        let value = match spec.kind {
            ParamKind::Flag => m.get_flag(name).into(),
            _ => {
                let text: &String = m.get_one(name).expect("a value was given");
                spec.parse(text)?
            }
        };
        settings.set(name, value);
    }
    Ok(settings)
}

/// The method's options given in one string (`--method-args "--max-iter 30"`), read as
/// if they were on the command line.
pub fn parse_method_args(registry: &Registry, method: &str, text: &str) -> Result<Settings> {
    let cmd = method_options(
        Command::new("method-args").no_binary_name(true),
        registry,
        &["k", "dim", "graph", "seed"],
    );
    let m = cmd
        .try_get_matches_from(text.split_whitespace())
        .map_err(|e| Error::invalid("method-args", e.to_string()))?;
    read_settings(&m, registry, method, &["k", "dim", "graph", "seed"])
        .map_err(|e| Error::invalid("method-args", e.to_string()))
}

/// A whole number of at least 0 for a fixed option (`--n`, `--seed`, `--restarts`, ...):
/// a negative or fractional value is refused with the range, not taken for a flag.
fn whole<T: std::str::FromStr>(text: &str) -> std::result::Result<T, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("expected a whole number >= 0, got `{text}`"))
}

/// Like [`whole`], at least 1 (latent dimensions).
fn positive(text: &str) -> std::result::Result<usize, String> {
    match whole::<usize>(text) {
        Ok(0) | Err(_) => Err(format!("expected a whole number >= 1, got `{text}`")),
        Ok(v) => Ok(v),
    }
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Directory for the plots and the summary.
    #[arg(long, default_value = "unfold-demo")]
    pub out: PathBuf,
    /// Number of Swiss roll points.
    #[arg(long, default_value_t = 1000, value_parser = whole::<usize>)]
    pub n: usize,
    /// Neighbours per point.
    #[arg(long, default_value_t = 10, value_parser = whole::<usize>)]
    pub k: usize,
    /// Seed of the data generator.
    #[arg(long, default_value_t = 0, value_parser = whole::<u64>)]
    pub seed: u64,
    /// Points of the large Swiss roll that MEU fits on its sparse engine.
    #[arg(long, default_value_t = 20_000, value_parser = whole::<usize>)]
    pub large_n: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphKind {
    Union,
    Mutual,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScoreKind {
    Evidence,
    Gplvm,
    Trustworthiness,
    Heldout,
}

#[derive(Args, Debug)]
pub struct FitArgs {
    /// Input data: CSV (one point per row, optional header row), a NumPy .npy array or
    /// one array of a .npz archive (`file.npz:NAME`), optionally gzip-compressed (told
    /// apart by content).
    #[arg(long)]
    pub input: PathBuf,
    /// A column holding labels rather than features (header name or 0-based index).
    #[arg(long)]
    pub label_column: Option<String>,
    /// Preprocessing before the method, steps in the order given: centre, scale
    /// (z-scores), log1p, pca:Q (e.g. `log1p,scale,pca:50`). A saved model keeps the
    /// fitted steps, and `unfold project` applies them to new points.
    #[arg(long, value_name = "STEPS")]
    pub preprocess: Option<String>,
    /// Output CSV of the embedding (header x1,...,xQ; input row order).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Save the fitted model here (for `unfold project`).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Write a JSON report here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write an SVG scatter plot of the first two coordinates here.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write the model's graph as a CSV edge list `i,j,weight` here (`unfold select
    /// --graphs` reads it): the kNN graph it was fitted on, the graph SPL or MPME learned
    /// (weighted by the dual variables), or DRILL's learned structure (the non-zero
    /// entries of its precision, weighted by `-Lambda_ij`).
    #[arg(long)]
    pub graph_out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ProjectArgs {
    /// A model saved by `unfold fit --save`.
    #[arg(long)]
    pub model: PathBuf,
    /// New points with the training data's features: CSV, .npy or .npz:NAME (optionally
    /// gzip-compressed).
    #[arg(long)]
    pub input: PathBuf,
    /// A column of the input holding labels, to ignore.
    #[arg(long)]
    pub label_column: Option<String>,
    /// Output CSV of the projected coordinates.
    #[arg(long)]
    pub out: PathBuf,
    /// Output CSV of the per-axis variances of the projected points (models with a
    /// conditional distribution: meu, alle, lle-pl, lllvm).
    #[arg(long)]
    pub variances: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SelectArgs {
    /// Input data: CSV (one point per row, optional header row), a NumPy .npy array or
    /// one array of a .npz archive (`file.npz:NAME`), optionally gzip-compressed (told
    /// apart by content).
    #[arg(long)]
    pub input: PathBuf,
    /// A column holding labels rather than features.
    #[arg(long)]
    pub label_column: Option<String>,
    /// Preprocessing before every candidate's fit: centre, scale, log1p, pca:Q, in order.
    #[arg(long, value_name = "STEPS")]
    pub preprocess: Option<String>,
    /// Neighbourhood sizes: a range `5..12` (inclusive) or a list `5,7,9`.
    #[arg(long, default_value = "5..12", allow_hyphen_values = true)]
    pub k: String,
    /// Latent dimensions, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "2", value_parser = positive, allow_hyphen_values = true)]
    pub dim: Vec<usize>,
    /// Symmetrisations of the kNN graph, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "union")]
    pub graph: Vec<GraphKind>,
    /// Compare epsilon-ball graphs of these radii instead of kNN graphs (methods that fit
    /// on a given graph).
    #[arg(
        long,
        value_delimiter = ',',
        conflicts_with = "graphs",
        allow_hyphen_values = true
    )]
    pub radius: Vec<f64>,
    /// Compare these graphs instead of kNN graphs: CSV edge lists `i,j` (0-based rows),
    /// e.g. a graph learned by DRILL or MPME (methods that fit on a given graph).
    #[arg(long, value_delimiter = ',')]
    pub graphs: Vec<PathBuf>,
    /// Seeded restarts per setting (seeds seed, seed + 1, ...).
    #[arg(long, default_value_t = 1, value_parser = whole::<usize>)]
    pub restarts: usize,
    /// Seed of the first restart.
    #[arg(long, default_value_t = 0, value_parser = whole::<u64>)]
    pub seed: u64,
    /// What ranks the candidates: the model's own evidence, or an external score of the
    /// embedding for any model: the GP-LVM log-likelihood score of the data given the
    /// embedding (Lawrence 2012's metric), trustworthiness with 10 neighbours, or
    /// `heldout`: the log predictive density of left-out points (`--holdout`), projected by
    /// the model fitted without them, under the GP-LVM score's Gaussian process.
    #[arg(long, value_enum, default_value_t = ScoreKind::Evidence)]
    pub score: ScoreKind,
    /// Fraction of the points left out for `--score heldout` (the same seeded split for
    /// every candidate).
    #[arg(long, default_value_t = 0.1, allow_hyphen_values = true)]
    pub holdout: f64,
    /// Method options in one string, as `unfold fit` takes them (an alias of the method
    /// options below; those given directly win), e.g. `--method-args "--max-iter 200"`.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub method_args: String,
    /// Output CSV, one row per candidate (default: printed). Each candidate's row is
    /// appended (and synced) as soon as it finishes; at the end the complete table, in
    /// the plan's order with the best setting marked, replaces it.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Continue the sweep whose table is `--out` (stopped by a signal, a full disk or a
    /// lost node): the candidates already there are not fitted again. The table must come
    /// from the same method, score, data and options.
    #[arg(long)]
    pub resume: bool,
    /// SVG plot of the evidence against k (one line per restart, the best k marked).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// JSON with every trial and the summary per setting.
    #[arg(long)]
    pub report: Option<PathBuf>,
}
