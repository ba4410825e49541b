//! `unfold fit` stopped by SIGINT or SIGTERM mid-fit: exit status 130 or 143, one line
//! that says so, and no output file, whole or partial, nor a temporary file beside them.

mod common;

use common::{s, sheet_input};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A DDRTree fit that runs until it is stopped (no tolerance, an endless iteration limit),
/// asked for every output.
fn endless_fit(input: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_unfold"));
    cmd.args(["fit", "--method", "ddrtree", "--input", s(input)])
        .args(["--tol", "0", "--max-iter", "100000000"])
        .args(["--out", s(&dir.join("x.csv"))])
        .args(["--save", s(&dir.join("m.bin"))])
        .args(["--report", s(&dir.join("report.json"))])
        .args(["--plot", s(&dir.join("x.svg"))])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn stopped_by(signal: &str, code: i32) {
    let (dir, input) = sheet_input(&format!("signal-{signal}"), 300);
    let mut child = endless_fit(&input, &dir).spawn().unwrap();
    // Into the fit: the data are read in milliseconds.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the fit ended by itself"
    );
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("unfold fit did not stop on {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(
        err.contains(&format!(
            "unfold fit: stopped by SIG{signal}; nothing was written"
        )),
        "{err}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, vec!["data.csv".to_string()]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fit_stopped_by_sigint_exits_130_and_writes_nothing() {
    stopped_by("INT", 130);
}

#[test]
fn fit_stopped_by_sigterm_exits_143_and_writes_nothing() {
    stopped_by("TERM", 143);
}
