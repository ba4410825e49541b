//! The global `--max-memory`: each method whose memory grows faster than n refuses a fit
//! that would need more, before allocating it, with a message naming what it would need,
//! the limit and the option; a malformed size is refused by name.

use std::path::PathBuf;
use std::process::{Command, Output};

fn unfold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_unfold"))
        .args(args)
        .env_remove("UNFOLD_MAX_MEMORY")
        .output()
        .expect("run unfold")
}

/// 60 points of a noisy curved sheet in 3-D, as a CSV file.
fn sheet() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("unfold-max-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sheet.csv");
    let mut text = String::new();
    for i in 0..60 {
        let t = 1.5 + 3.0 * i as f64 / 60.0;
        let h = ((i * 37) % 11) as f64 / 5.0;
        text += &format!("{},{h},{}\n", t * t.cos(), t * t.sin());
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_method_whose_memory_grows_faster_than_n_refuses_a_tiny_limit() {
    let input = sheet();
    let input = input.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["--method", "cmds"],
        &["--method", "kpca"],
        &["--method", "isomap"],
        &["--method", "mvu"],
        &["--method", "meu", "--solver", "dense"],
        &["--method", "meu", "--solver", "sparse"],
        &["--method", "drill"],
        &["--method", "lllvm"],
        &["--method", "spl"],
        &["--method", "mpme", "--solver", "dense"],
    ];
    for case in cases {
        // The option is global: before the command or among its options.
        for before in [true, false] {
            let mut args = if before {
                vec!["--max-memory", "1K", "fit", "--input", input]
            } else {
                vec!["fit", "--input", input, "--max-memory", "1K"]
            };
            args.extend_from_slice(case);
            let out = unfold(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{case:?}: {err}");
            for part in [
                "would need about",
                "1.0 KiB (--max-memory)",
                "raise --max-memory",
            ] {
                assert!(err.contains(part), "{case:?}: {part:?} missing from {err}");
            }
        }
    }
    // The exact GP-LVM score of a selection sweep.
    let out = unfold(&[
        "--max-memory",
        "2K",
        "select",
        "--input",
        input,
        "--method",
        "le",
        "--score",
        "gplvm",
        "--k",
        "5",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("exact GP-LVM score") && err.contains("--max-memory"),
        "{err}"
    );
    // Enough memory: the same fits run.
    let out = unfold(&[
        "--max-memory",
        "4G",
        "fit",
        "--input",
        input,
        "--method",
        "cmds",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(std::path::Path::new(input).parent().unwrap()).unwrap();
}

#[test]
fn a_malformed_max_memory_is_refused_by_name() {
    for (bad, why) in [
        ("lots", "is not a size"),
        ("4X", "unknown unit"),
        ("0", "not a positive size"),
    ] {
        let out = unfold(&["--max-memory", bad, "methods"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{bad}: {err}");
        for part in ["--max-memory", why, "e.g. --max-memory=4G"] {
            assert!(err.contains(part), "{bad}: {part:?} missing from {err}");
        }
    }
}
