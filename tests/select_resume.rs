//! `unfold select` stopped by SIGTERM mid-sweep and resumed with `--resume` ends with the
//! table of an uninterrupted run: the same rows in the same order with the same numbers,
//! no row twice and none missing.

mod common;

use common::sheet_csv;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("unfold-resume-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// LL-LVM over k = 5..9 with three restarts: 15 candidates of a few tenths of a second.
fn select(input: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_unfold"));
    cmd.args(["select", "--method", "lllvm", "--input"])
        .arg(input)
        .args([
            "--k",
            "5..9",
            "--restarts",
            "3",
            "--max-iter",
            "30",
            "--connect",
            "off",
            "--out",
        ])
        .arg(out)
        .args(extra);
    cmd
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The fields of a table row, the quoted error as one field (it holds commas, no quotes).
fn fields(line: &str) -> Vec<String> {
    let (head, rest) = line.split_once(",\"").expect("a quoted error field");
    let (error, tail) = rest.split_once("\",").expect("fields after the error");
    let mut f: Vec<String> = head.split(',').map(str::to_string).collect();
    f.push(error.to_string());
    f.extend(tail.split(',').map(str::to_string));
    assert_eq!(f.len(), 13, "{line}");
    f
}

/// The rows of a table without the time column (index 7), which differs between runs.
fn rows_but_time(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip(1)
        .map(|l| {
            let mut f = fields(l);
            f.remove(7);
            f
        })
        .collect()
}

#[test]
fn select_stopped_by_sigterm_resumes_to_the_uninterrupted_table() {
    let dir = scratch("sigterm");
    let input = dir.join("data.csv");
    // k = 5 splits the sheet into components, and connect = off leaves them apart, so the
    // sweep also has failed candidates.
    std::fs::write(&input, sheet_csv(150)).unwrap();
    let (full, part) = (dir.join("full.csv"), dir.join("part.csv"));

    let o = select(&input, &full, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let full_text = std::fs::read_to_string(&full).unwrap();
    let header = full_text.lines().next().unwrap().to_string();
    let want = rows_but_time(&full_text);
    assert_eq!(want.len(), 15);
    assert!(want.iter().any(|r| !r[8].is_empty()) && want.iter().any(|r| r[6].is_empty()));

    // Stop the sweep once a few rows are in its table.
    let child = select(&input, &part, &[])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let rows = || std::fs::read_to_string(&part).map_or(0, |t| t.lines().count().saturating_sub(1));
    while rows() < 4 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no rows were written"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("stopped by SIGTERM") && stderr(&o).contains("--resume"),
        "{}",
        stderr(&o)
    );

    // The partial table: the header and whole rows of the sweep, each once, fewer than
    // all, and no temporary file beside it.
    let text = std::fs::read_to_string(&part).unwrap();
    assert!(text.ends_with('\n') && text.lines().next() == Some(header.as_str()));
    let partial = rows_but_time(&text);
    assert!(partial.len() >= 4 && partial.len() < 15, "{text}");
    for r in &partial {
        let same = want.iter().filter(|w| w[..5] == r[..5]).count();
        assert_eq!(same, 1, "{r:?} is not a candidate of the sweep");
        assert_eq!(partial.iter().filter(|o| o[..5] == r[..5]).count(), 1);
        assert!(r[7].is_empty(), "best is only marked at the end");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // A row half-written when the process died is dropped, and its candidate runs again.
    let mut cut = text.clone();
    cut.push_str("9,union,2,2,2,elbo,25");
    std::fs::write(&part, cut).unwrap();
    let o = select(&input, &part, &["--resume"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dropped a half-written last row")
            && stderr(&o).contains(&format!("resuming: {} of 15", partial.len())),
        "{}",
        stderr(&o)
    );
    let resumed = std::fs::read_to_string(&part).unwrap();
    assert_eq!(resumed.lines().next(), Some(header.as_str()));
    assert_eq!(rows_but_time(&resumed), want);

    // A table of another sweep is refused.
    let o = select(&input, &part, &["--resume", "--score", "gplvm"])
        .output()
        .unwrap();
    assert!(
        !o.status.success() && stderr(&o).contains("ranked by `evidence`"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}
