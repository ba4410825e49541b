#!/usr/bin/env bash
# DDRTree's ordering on simulated branching trajectories with known time and branch
# (examples/branching.rs): Spearman's correlation of pseudotime with the true time and the
# agreement of the states with the true segments, at N = 20,000 over branch counts, noise
# and dimension, with the R package's lambda (5 N) and with lambda = N / 10, every centre of
# degree above 2 a branch point (min branch 0), and with lambda = N / 10 and spurs of fewer
# than 5 or 10 centres set aside (min branch 5, 10; the same fit, ordered again). Prints a
# Markdown table.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet --example branching
bin=target/release/examples/branching
n=20000
echo "| N | D | noise | branches | lambda | min branch | centres | states | Spearman | state agreement | seconds |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for d in 50 500; do
  for noise in 0.02 0.05 0.1; do
    for b in 2 3 4 6; do
      for lambda in auto $((n / 10)); do
        "$bin" "$n" "$d" "$noise" "$b" "$lambda" 1 0
      done
      for min_branch in 5 10; do
        "$bin" "$n" "$d" "$noise" "$b" $((n / 10)) 1 "$min_branch"
      done
    done
  done
done
