//! The `unfold` command-line tool: `demo`, `fit`, `project`, `select` and `methods`
//! (DESIGN.md's contract), generated from a method registry.
//!
//! [`main`] runs it with unfold's own methods; [`run_with`] with any registry, so that a
//! researcher's crate that registers its own model gets the whole command line for it:
//!
//! ```no_run
//! use unfold_models::registry::{Registry, Settings};
//! # struct MyMethod;
//! # impl unfold_models::registry::Method for MyMethod {
//! #     fn info(&self) -> unfold_models::registry::MethodInfo { unimplemented!() }
//! #     fn fit(&self, _: &unfold_models::registry::FitData<'_>, _: &unfold_models::registry::Settings,
//! #            _: &dyn unfold_core::Observer) -> unfold_core::Result<Box<dyn unfold_models::registry::Model>> { unimplemented!() }
//! #     fn decode(&self, _: &[u8]) -> unfold_core::Result<Box<dyn unfold_models::registry::Model>> { unimplemented!() }
//! # }
//! let registry = Registry::builtin().with(Box::new(MyMethod)).expect("a new name");
//! std::process::exit(unfold_cli::run_with(registry));
//! ```
//!
//! Errors go to standard error with a non-zero exit status and a message a user can act on.

mod args;
mod demo;
mod fit;
#[cfg(test)]
mod fuzz_tests;
mod input;
mod interrupt;
mod methods;
pub mod plot;
mod project;
mod report;
mod select;

use clap::FromArgMatches;
use std::process::ExitCode;
use unfold_core::Result;
use unfold_models::registry::{Registry, Resolved, Settings};

/// Runs the command line with unfold's own methods and the process arguments.
pub fn main() -> ExitCode {
    match run_with(Registry::builtin()) {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

/// Runs the command line with the methods of `registry` and the process arguments;
/// returns the exit status (0 on success). Errors are printed to standard error.
pub fn run_with(registry: Registry) -> i32 {
    run_from(&registry, std::env::args_os())
}

/// Runs the command line with the methods of `registry` and the arguments `args` (the
/// first is the program's name); returns the exit status. Help and usage errors are
/// printed as clap prints them.
pub fn run_from<I, T>(registry: &Registry, args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = match args::command(registry).try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => {
            let code = e.exit_code();
            e.print().ok();
            return code;
        }
    };
    match dispatch(registry, &matches) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// A command line parsed into typed arguments and checked settings, ready to run.
pub(crate) enum Invocation {
    Demo(args::DemoArgs),
    Fit {
        settings: Resolved,
        args: args::FitArgs,
    },
    Project(args::ProjectArgs),
    Select {
        method: String,
        settings: Settings,
        args: args::SelectArgs,
    },
    Methods,
}

/// Reads the matches of [`args::command`] into an [`Invocation`]: the method's options
/// become typed settings, checked against the method's declared ranges (and `select`'s
/// neighbourhood sizes parsed) before any file is read.
pub(crate) fn parse(registry: &Registry, matches: &clap::ArgMatches) -> Result<Invocation> {
    Ok(match matches.subcommand() {
        Some(("demo", m)) => Invocation::Demo(from(m)?),
        Some(("fit", m)) => {
            let method = method_name(m);
            let settings = args::read_settings(m, registry, method, &[])?;
            Invocation::Fit {
                settings: registry.resolve(method, &settings)?,
                args: from(m)?,
            }
        }
        Some(("project", m)) => Invocation::Project(from(m)?),
        Some(("select", m)) => {
            let method = method_name(m);
            let a: args::SelectArgs = from(m)?;
            let mut settings = args::parse_method_args(registry, method, &a.method_args)?;
            settings =
                settings.merged(&args::read_settings(m, registry, method, args::SELECT_OWN)?);
            registry.resolve(method, &settings)?;
            select::parse_ks(&a.k)?;
            Invocation::Select {
                method: method.to_string(),
                settings,
                args: a,
            }
        }
        Some(("methods", _)) => Invocation::Methods,
        _ => unreachable!("clap requires a subcommand"),
    })
}

fn dispatch(registry: &Registry, matches: &clap::ArgMatches) -> Result<()> {
    args::apply_max_memory(matches);
    match parse(registry, matches)? {
        Invocation::Demo(a) => demo::run(registry, &a),
        Invocation::Fit { settings, args } => fit::run(registry, &settings, &args),
        Invocation::Project(a) => project::run(registry, &a),
        Invocation::Select {
            method,
            settings,
            args,
        } => select::run(registry, &method, &settings, &args),
        Invocation::Methods => {
            print!("{}", methods::table(registry));
            Ok(())
        }
    }
}

/// The `--method` of a subcommand (clap checked it is a registered name).
fn method_name(m: &clap::ArgMatches) -> &str {
    m.get_one::<String>("method")
        .map(String::as_str)
        .expect("--method is required")
}

/// A derive-parsed argument struct from a subcommand's matches.
fn from<T: FromArgMatches>(m: &clap::ArgMatches) -> Result<T> {
    T::from_arg_matches(m).map_err(|e| unfold_core::Error::invalid("arguments", e.to_string()))
}
