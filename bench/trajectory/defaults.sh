#!/usr/bin/env bash
# DDRTree's defaults chosen from the data against the papers' fixed settings over the tree
# generators: shapes x sizes x dimensions x noise x seeds. Writes the table to
# ${OUT:-/tmp/unfold-trajectory}/trajectory_defaults.md (copy it to bench/results/).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
(cd "$root" && cargo build --release -q --example trajectory_defaults)
bin="${CARGO_TARGET_DIR:-$root/target}/release/examples/trajectory_defaults"
out="${OUT:-${TMPDIR:-/tmp}/unfold-trajectory}"
mkdir -p "$out"
{
  echo "| shape | N | D | noise | seed | setting | d | lambda | min branch | branch points | Spearman | F1 | seconds |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for seed in 1 2 3; do
    for cfg in "4000 50 0.02" "4000 50 0.05" "4000 50 0.1" "4000 20 0.05" "4000 200 0.05" \
      "2000 50 0.05" "20000 50 0.05"; do
      "$bin" $cfg "$seed"
    done
  done
} > "$out/trajectory_defaults.md"
cat "$out/trajectory_defaults.md"
