//! Random command lines for `fit`, `project`, `select` and `demo`, built from the real
//! option names (the registry's method parameters included) with random values: negative,
//! NaN, infinite, huge, empty, garbage, repeated. Parsing them into typed arguments and
//! checked settings ([`crate::parse`]) must give `Ok` or a typed error, never a panic.
//! Nothing is fitted and no file is read. The normal tests run a few thousand cases;
//! `cargo test --release -- --ignored fuzz` runs many more (`UNFOLD_FUZZ_CASES`, and
//! `UNFOLD_FUZZ_SEED` for the first case's seed).

use crate::args;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::ops::Range;
use unfold_core::fuzz::{long_run_seeds, run_cases};
use unfold_models::registry::{DefaultValue, ParamKind, Registry};

/// The subcommands, each with the long names of its options.
fn options(cmd: &clap::Command) -> Vec<(String, Vec<String>)> {
    ["fit", "project", "select", "demo"]
        .iter()
        .map(|name| {
            let sub = cmd.find_subcommand(name).expect("a subcommand");
            let longs = sub
                .get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect();
            (name.to_string(), longs)
        })
        .collect()
}

/// Words the options take: the methods' choices, and values that have broken parsers.
fn words(registry: &Registry) -> Vec<String> {
    let mut out: Vec<String> = [
        "0",
        "1",
        "-1",
        "-0",
        "2",
        "-3",
        "1.5",
        "-0.5",
        "1e-300",
        "1e308",
        "-1e308",
        "1e400",
        "NaN",
        "-NaN",
        "nan",
        "inf",
        "-inf",
        "+inf",
        "",
        " ",
        "  -1 ",
        "5..12",
        "12..5",
        "-3..4",
        "0..0",
        "5..=6",
        "1..18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
        "1,2,-3",
        ",",
        ",,",
        "1,",
        "union,mutual",
        "union,",
        "fixed:-1",
        "fixed:",
        "fixed:1e-3",
        "fixed:nan",
        "evidence",
        "heldout",
        "gplvm",
        "--",
        "-",
        "--k",
        "--method",
        "=",
        "a=b",
        "\u{0}",
        "é",
        "\u{202e}",
        "x.csv",
        "/nonexistent/unfold-fuzz/x.csv",
        "true",
        "false",
        "yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.extend(registry.names().iter().map(|s| s.to_string()));
    for m in registry.methods() {
        for p in registry.params(m.info().name).unwrap_or_default() {
            match p.kind {
                ParamKind::Choice(ws) | ParamKind::RealOr(_, ws) => {
                    out.extend(ws.iter().map(|w| w.to_string()))
                }
                _ => {}
            }
        }
    }
    out
}

/// A random value: a known word, a random number in several spellings, or garbage.
fn value(rng: &mut StdRng, words: &[String]) -> String {
    match rng.random_range(0..6) {
        0 | 1 => words[rng.random_range(0..words.len())].clone(),
        2 => rng.random_range(-1000i64..1000).to_string(),
        3 => format!(
            "{:e}",
            rng.random::<f64>() * 10f64.powi(rng.random_range(-320..320))
        ),
        4 => {
            let n = rng.random_range(1..4);
            (0..n)
                .map(|_| rng.random_range(-5i32..40).to_string())
                .collect::<Vec<_>>()
                .join(if rng.random_bool(0.5) { "," } else { ".." })
        }
        _ => {
            let len = rng.random_range(0..12);
            (0..len)
                .map(|_| char::from(rng.random_range(0x20u8..0x7f)))
                .collect()
        }
    }
}

/// A valid command line of `sub` for `method`, as options and values: the required
/// options, some of the method's parameters at their defaults, and for `select` some of
/// its own options.
fn valid_line(
    rng: &mut StdRng,
    sub: &str,
    method: &str,
    registry: &Registry,
) -> Vec<(String, Option<String>)> {
    let mut line: Vec<(String, Option<String>)> = Vec::new();
    let mut add = |o: &str, v: Option<&str>| line.push((format!("--{o}"), v.map(str::to_string)));
    match sub {
        "project" => {
            add("model", Some("m.bin"));
            add("input", Some("data.csv"));
            add("out", Some("out.csv"));
        }
        "demo" => {
            for (o, v) in [("n", "300"), ("k", "8"), ("seed", "2"), ("large-n", "500")] {
                if rng.random_bool(0.5) {
                    add(o, Some(v));
                }
            }
        }
        _ => {
            add("method", Some(method));
            add("input", Some("data.csv"));
            let params = registry.params(method).unwrap_or_default();
            for p in &params {
                let set_by_select = sub == "select" && args::SELECT_OWN.contains(&p.name);
                if set_by_select
                    || matches!(p.default, DefaultValue::Auto(_))
                    || rng.random_bool(0.6)
                {
                    continue;
                }
                let flag = args::flag_name(p.name);
                match p.kind {
                    ParamKind::Flag => add(&flag, None),
                    _ => add(&flag, Some(&p.default_text())),
                }
            }
            if sub == "select" {
                let own = [
                    ("k", "5..12"),
                    ("dim", "2,3"),
                    ("graph", "union,mutual"),
                    ("restarts", "2"),
                    ("seed", "3"),
                    ("score", "evidence"),
                    ("holdout", "0.2"),
                    ("radius", "0.5,1"),
                    ("method-args", "--max-iter 3"),
                ];
                let iterative = params.iter().any(|p| p.name == "max_iter");
                for (o, v) in own {
                    if (o != "method-args" || iterative) && rng.random_bool(0.3) {
                        add(o, Some(v));
                    }
                }
            }
        }
    }
    line
}

/// A value changed: negated, made a list or a range, non-finite, huge, empty or garbage.
fn mutated(rng: &mut StdRng, v: &str, words: &[String]) -> String {
    match rng.random_range(0..8) {
        0 => format!("-{v}"),
        1 => format!("{v},-{v}"),
        2 => format!("-{v}..{v}"),
        3 => format!("{v}{v}{v}{v}{v}{v}"),
        4 => format!("fixed:-{v}"),
        _ => value(rng, words),
    }
}

/// One random command line (with the program name first): half are valid lines with one
/// to three mutations (a value changed, an option repeated, a value dropped, a random
/// option or word inserted), half are random options of the subcommand with random values.
fn command_line(
    rng: &mut StdRng,
    subcommands: &[(String, Vec<String>)],
    words: &[String],
    registry: &Registry,
) -> Vec<String> {
    let (sub, all) = &subcommands[rng.random_range(0..subcommands.len())];
    let methods = registry.names();
    let method = methods[rng.random_range(0..methods.len())];
    let mut line = if rng.random_bool(0.5) {
        valid_line(rng, sub, method, registry)
    } else {
        let mut line = Vec::new();
        if sub != "project" && sub != "demo" {
            line.push(("--method".to_string(), Some(method.to_string())));
        }
        line
    };
    let mutations = if line.is_empty() {
        4
    } else {
        rng.random_range(1..4)
    };
    for _ in 0..mutations {
        let at = rng.random_range(0..=line.len());
        match rng.random_range(0..10) {
            0..=4 if at < line.len() => {
                let v = line[at].1.clone().unwrap_or_default();
                line[at].1 = Some(mutated(rng, &v, words));
            }
            5 if at < line.len() => {
                let again = line[at].clone();
                line.push(again);
            }
            6 if at < line.len() => line[at].1 = None,
            7 => line.insert(at, (value(rng, words), None)),
            _ => {
                let long = &all[rng.random_range(0..all.len())];
                line.insert(at, (format!("--{long}"), Some(value(rng, words))));
            }
        }
    }
    let mut argv = vec!["unfold".to_string(), sub.clone()];
    for (option, v) in line {
        match v {
            Some(v) if rng.random_bool(0.2) && option.starts_with("--") => {
                argv.push(format!("{option}={v}"))
            }
            Some(v) => {
                argv.push(option);
                argv.push(v);
            }
            None => argv.push(option),
        }
    }
    argv
}

/// Parses the random command lines of `seeds`; panics (naming the seed
/// and the command line) if parsing panicked. Returns the counts of command lines
/// accepted, refused by clap (unknown options, missing values) and refused by the typed
/// parsing and range checks.
fn run(seeds: Range<u64>) -> [u64; 3] {
    let registry = Registry::builtin();
    let cmd = args::command(&registry);
    let subcommands = options(&cmd);
    let words = words(&registry);
    let mut counts = [0; 3];
    run_cases(
        "parsing",
        seeds,
        |seed| {
            command_line(
                &mut StdRng::seed_from_u64(seed),
                &subcommands,
                &words,
                &registry,
            )
        },
        |argv| format!("{argv:?}"),
        |argv| {
            let i = match cmd.clone().try_get_matches_from(argv) {
                Ok(m) => match crate::parse(&registry, &m) {
                    Ok(_) => 0,
                    Err(_) => 2,
                },
                Err(_) => 1,
            };
            counts[i] += 1;
            Ok(())
        },
    );
    counts
}

#[test]
fn random_command_lines_parse_or_are_refused_never_panic() {
    let cases = 20000;
    let [ok, clap, typed] = run(0..cases);
    eprintln!(
        "fuzz cli options: {cases} cases ({ok} accepted, {clap} refused by the option \
         parser, {typed} by the typed values and ranges)"
    );
    assert!(ok > 0 && clap > 0 && typed > 0);
}

#[test]
#[ignore = "long fuzz run: cargo test --release -- --ignored fuzz"]
fn fuzz_cli_options_long() {
    let seeds = long_run_seeds(300_000);
    let [ok, clap, typed] = run(seeds.clone());
    eprintln!(
        "fuzz cli options: seeds {seeds:?} ({ok} accepted, {clap} refused by the option \
         parser, {typed} by the typed values and ranges)"
    );
}

/// Regression cases: command lines that once misbehaved, each with what it must say.
#[test]
fn negative_and_huge_values_reach_the_range_checks() {
    let registry = Registry::builtin();
    let refused = |line: &str| {
        let argv = std::iter::once("unfold").chain(line.split(' '));
        match args::command(&registry).try_get_matches_from(argv) {
            Ok(m) => match crate::parse(&registry, &m) {
                Ok(_) => panic!("`{line}` was accepted"),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        }
    };
    let cases = [
        (
            "fit --method spl --input x --C -1",
            "invalid value for `C`: expected a number in (0, inf]",
        ),
        (
            "fit --method drill --input x --rho -1",
            "invalid value for `rho`",
        ),
        (
            "fit --method drill --input x --rho -1,2",
            "invalid value for `rho`",
        ),
        (
            "fit --method meu --input x --gamma -1e-3",
            "invalid value for `gamma`",
        ),
        (
            "fit --method meu --input x --gamma -inf",
            "invalid value for `gamma`",
        ),
        (
            "fit --method lllvm --input x --max-iter -3",
            "invalid value for `max_iter`",
        ),
        (
            "fit --method lllvm --input x --alpha -1",
            "invalid value for `alpha`",
        ),
        (
            "fit --method spl --input x --dim -2",
            "invalid value for `dim`",
        ),
        ("fit --method meu --input x --k -8", "invalid value for `k`"),
        (
            "select --method spl --input x --C -1",
            "invalid value for `C`",
        ),
        (
            "select --method meu --input x --k -3..4",
            "invalid value for `k`",
        ),
        (
            "select --method meu --input x --k 1..18446744073709551615",
            "more than 10000",
        ),
        (
            "select --method meu --input x --restarts -1",
            "expected a whole number >= 0, got `-1`",
        ),
        (
            "select --method meu --input x --seed -1",
            "expected a whole number >= 0, got `-1`",
        ),
        (
            "select --method meu --input x --dim -1",
            "expected a whole number >= 1, got `-1`",
        ),
        (
            "select --method meu --input x --dim 2,-1",
            "expected a whole number >= 1, got `-1`",
        ),
        (
            "select --method meu --input x --method-args --C=-1",
            "method-args",
        ),
        ("demo --n -5", "expected a whole number >= 0, got `-5`"),
        ("demo --k -1", "expected a whole number >= 0, got `-1`"),
        (
            "demo --large-n -1",
            "expected a whole number >= 0, got `-1`",
        ),
        ("demo --seed -1", "expected a whole number >= 0, got `-1`"),
    ];
    for (line, says) in cases {
        let e = refused(line);
        assert!(e.contains(says), "`{line}`: {e}");
        assert!(!e.contains("unexpected argument"), "`{line}`: {e}");
    }
}
