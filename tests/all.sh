#!/usr/bin/env bash
# Every test of unfold: the Rust workspace, then the Python package, built into a local
# virtual environment (target/python-venv) with its test dependencies, and its pytest suite
# (which also compares with the `unfold` binary built here).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== Rust: cargo test --workspace --release"
cargo test --workspace --release
echo "== Python: build the package into target/python-venv"
cargo build --release --bin unfold
venv=target/python-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "./python[test]"
echo "== Python: pytest"
# From the repository root, so that `import unfold` is the installed package.
UNFOLD_BIN="$PWD/target/release/unfold" "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
