#!/usr/bin/env bash
# Every test of unfold: the Rust workspace, then the Python package, built into a local
# virtual environment (target/python-venv) with its test dependencies, and its pytest suite
# (which also compares with the `unfold` binary built here).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== Rust: cargo test --workspace --release"
cargo test --workspace --release
echo "== Python: build the wheel and install it into target/python-venv"
cargo build --release --bin unfold
venv=target/python-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# The package is built once as a wheel, abi3 (one file for CPython 3.9 and later, installed
# without a Rust toolchain); the tests run on that wheel installed.
rm -rf target/wheels
"$venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
    -w target/wheels ./python
wheel=$(ls target/wheels/unfold-*-cp39-abi3-*.whl)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[test]"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall \
    --no-deps "$wheel"
echo "== Python: pytest"
# From the repository root, so that `import unfold` is the installed package.
UNFOLD_BIN="$PWD/target/release/unfold" "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
