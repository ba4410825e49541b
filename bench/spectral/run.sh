#!/usr/bin/env bash
# Side-by-side benchmark of unfold's spectral methods against scikit-learn, in one run.
#
#   bash bench/spectral/run.sh [N ...]        (default: 2000 5000)
#
# Installs scikit-learn from PyPI into bench/spectral/.venv, generates the LL-LVM paper's
# Swiss roll with unfold, times both libraries on the same points (k = 10, 2-D, median of
# REPS fits) and compares their embeddings. The table goes to standard output and to
# bench/results/spectral.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sizes=("${@:-2000 5000}")
read -r -a sizes <<< "${sizes[*]}"
k=10
reps=${REPS:-3}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ ! -x "$here/.venv/bin/python" ]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install --quiet --upgrade pip
  "$here/.venv/bin/pip" install --quiet scikit-learn numpy scipy
fi
py="$here/.venv/bin/python"

cd "$root"
cargo build --release --quiet --example bench_spectral
bin="$root/target/release/examples/bench_spectral"

out="$root/bench/results/spectral.md"
{
  echo "# Spectral methods: unfold vs scikit-learn"
  echo
  echo "Run on $(date -u +%Y-%m-%d) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
  echo "Produced by \`bash bench/spectral/run.sh\`; ratios below 1 mean unfold is faster."
  echo
  echo "**Scope.** One generator (the LL-LVM paper's noiseless Swiss roll in 3-D) at n = 2000 and"
  echo "5000: the ratios are a claim about that roll only; other generators, noise levels and"
  echo "dimensions have not been timed yet."
  for n in "${sizes[@]}"; do
    "$bin" gen "$n" 0 "$work/swiss_$n.csv"
    "$bin" run "$work/swiss_$n.csv" "$k" "$reps" "$work" > "$work/rust_$n.txt"
    "$py" "$here/compare.py" "$work/swiss_$n.csv" "$k" "$reps" "$work" "$work/rust_$n.txt"
  done
} | tee "$out.tmp"
mv "$out.tmp" "$out"
