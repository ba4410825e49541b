//! The loop of the workspace's fuzz tests (data readers, edge lists, command lines): one
//! generated input per seed, checked under `catch_unwind` with the panic message
//! silenced, the run stopped at the first failure with its seed, so that any failure can
//! be replayed.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The seeds of a long run (`cargo test --release -- --ignored fuzz`): `cases` of them
/// from 1,000,000 on, or as the environment sets them (`UNFOLD_FUZZ_CASES`,
/// `UNFOLD_FUZZ_SEED`).
pub fn long_run_seeds(cases: u64) -> Range<u64> {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let first = env("UNFOLD_FUZZ_SEED", 1_000_000);
    first..first + env("UNFOLD_FUZZ_CASES", cases)
}

/// For every seed, `check(&input(seed))` under `catch_unwind` (the panic hook silenced
/// meanwhile). A check that panics or returns an error stops the run with a panic that
/// names `what`, the seed, the failure and `describe(&input)`.
pub fn run_cases<I>(
    what: &str,
    seeds: Range<u64>,
    mut input: impl FnMut(u64) -> I,
    describe: impl Fn(&I) -> String,
    mut check: impl FnMut(&I) -> Result<(), String>,
) {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for seed in seeds {
        let case = input(seed);
        let failure = match catch_unwind(AssertUnwindSafe(|| check(&case))) {
            Ok(Ok(())) => continue,
            Ok(Err(message)) => message,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("it panicked: {message}")
            }
        };
        std::panic::set_hook(hook);
        panic!(
            "{what} failed (case seed {seed}): {failure}\n{}",
            describe(&case)
        );
    }
    std::panic::set_hook(hook);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_case_is_reported_with_its_seed() {
        let mut seen = 0;
        run_cases(
            "counting",
            0..10,
            |s| s,
            |s| format!("input {s}"),
            |_| {
                seen += 1;
                Ok(())
            },
        );
        assert_eq!(seen, 10);
        let report = std::panic::catch_unwind(|| {
            run_cases(
                "the reader",
                5..9,
                |s| s,
                |s| format!("input {s}"),
                |&s| {
                    assert!(s != 7, "seven");
                    Ok(())
                },
            )
        })
        .unwrap_err();
        let text = report.downcast_ref::<String>().unwrap();
        assert!(
            text.contains("the reader failed (case seed 7): it panicked: seven\ninput 7"),
            "{text}"
        );
        let report = std::panic::catch_unwind(|| {
            run_cases(
                "the reader",
                0..3,
                |s| s,
                |_| String::new(),
                |&s| {
                    if s == 2 {
                        Err("bad points".to_string())
                    } else {
                        Ok(())
                    }
                },
            )
        })
        .unwrap_err();
        assert!(report
            .downcast_ref::<String>()
            .unwrap()
            .contains("(case seed 2): bad points"));
    }
}
