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
# The package is built once as a wheel by maturin: abi3 (one file for CPython 3.9 and
# later) and tagged manylinux where the toolchain's glibc allows, installed without a Rust
# toolchain; the tests run on that wheel installed, and one of them installs it into a
# fresh environment with no Rust on PATH.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.9,<2"
rm -rf target/wheels
"$venv/bin/maturin" build --quiet --release -m python/Cargo.toml -o target/wheels
wheel=$(ls target/wheels/unfold-*-cp39-abi3-*.whl)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[test]"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall \
    --no-deps "$wheel"
echo "== Python: pytest"
# From the repository root, so that `import unfold` is the installed package.
UNFOLD_BIN="$PWD/target/release/unfold" UNFOLD_WHEEL="$PWD/$wheel" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
