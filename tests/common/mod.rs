//! What several test files of the command line share. Each test file uses some of these
//! helpers, not all, so the unused ones are allowed in each.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A noiseless Swiss roll-like sheet of `n` points with a header row, as CSV.
pub fn sheet_csv(n: usize) -> String {
    let mut text = String::from("a,b,c\n");
    for i in 0..n {
        let t = 1.5 * std::f64::consts::PI * (1.0 + 2.0 * (i as f64 * 0.618034).fract());
        let h = 10.0 * (i as f64 * 0.414214).fract();
        text.push_str(&format!("{},{},{}\n", t * t.cos(), h, t * t.sin()));
    }
    text
}

pub fn unfold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_unfold"))
        .args(args)
        .output()
        .expect("the unfold binary runs")
}

pub fn project(model: &Path, input: &Path, out: &Path) -> Output {
    unfold(&[
        "project",
        "--model",
        s(model),
        "--input",
        s(input),
        "--out",
        s(out),
    ])
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("unfold-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A scratch directory holding `data.csv`, a sheet of `n` points.
pub fn sheet_input(name: &str, n: usize) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let input = dir.join("data.csv");
    std::fs::write(&input, sheet_csv(n)).unwrap();
    (dir, input)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `unfold` and asserts that it succeeded.
pub fn succeeds(args: &[&str]) {
    let o = unfold(args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Runs `unfold` and asserts that it failed with a message containing `says`.
pub fn fails_with(args: &[&str], says: &str) {
    let o = unfold(args);
    assert!(
        !o.status.success() && stderr(&o).contains(says),
        "{}",
        stderr(&o)
    );
}
