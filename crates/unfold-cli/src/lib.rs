//! The `unfold` command-line tool: `demo`, `fit`, `project` and `select` (DESIGN.md's
//! contract).
//!
//! Errors go to standard error with a non-zero exit status and a message a user can act on.

mod args;
mod demo;
mod fit;
mod methods;
pub mod plot;
mod project;
mod report;
mod select;

use clap::Parser;
use std::process::ExitCode;

/// Runs the command line with the process arguments.
pub fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let result = match cli.command {
        args::Command::Demo(a) => demo::run(&a),
        args::Command::Fit(a) => fit::run(&a),
        args::Command::Project(a) => project::run(&a),
        args::Command::Select(a) => select::run(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
