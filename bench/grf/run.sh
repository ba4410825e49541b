#!/usr/bin/env bash
# MEU at scale (issue 15): the sparse engine against the dense path over data sets, noise,
# dimension and size; writes bench/results/grf.md. Each configuration runs in its own
# process, so "peak MiB" is that configuration's peak resident memory.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/grf.md
cargo build --release --quiet --example bench_grf
bin=target/release/examples/bench_grf
rows=()
run() { rows+=("$("$bin" "$@")"); echo "${rows[-1]}" >&2; }
for n in 100 200 300 500; do run roll "$n" eval; done
for n in 1000 2000 10000 30000 100000; do run roll "$n" fit; done
for n in 1000 10000; do run s-curve "$n" fit; done
run s-curve 100000 eval
for n in 1000 10000; do run roll-noisy "$n" fit; done
run roll-noisy 30000 eval
for n in 1000 2000 10000; do run roll-p100 "$n" fit; done
run roll-p100 30000 eval
run roll 1000000 eval
{
  echo "# MEU at scale: the sparse engine and the dense path"
  echo
  echo "Run on $(date -u +%Y-%m-%d) on $(nproc) cores. Produced by \`bash bench/grf/run.sh\`."
  echo "k = 10 (union graph), gamma = 1e-4. Data: \`roll\` the Swiss roll with noise 0.05,"
  echo "\`roll-noisy\` with noise 0.5, \`s-curve\` the S-curve with noise 0.05 (2-D manifolds"
  echo "in 3-D), \`roll-p100\` the roll mapped linearly into 100 dimensions plus noise 0.05."
  echo "\"sparse s\" and \"dense s\" are one log-likelihood-and-gradient evaluation at the"
  echo "initial multipliers (median of 3): the grounded sparse Cholesky factor with selected"
  echo "inversion, and the dense Cholesky factor with the inverse (run up to n = 4000)."
  echo "\"factor values\" is the sparse factor's stored values (per point: the fill under the"
  echo "AMD ordering). \"fit s\" is the whole sparse fit to pgtol 1e-5 (kNN graph, search,"
  echo "embedding, evidence), timed like a user's fit; \"-\" where only the evaluation ran."
  echo "\"peak MiB\" is the process's peak resident memory (data, graph, factor, inverse)."
  echo
  echo "| data | n | p | edges | factor values | values per point | sparse s | dense s | dense / sparse | fit s | iterations | evaluations | stopped by | projected gradient | peak MiB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} > "$out"
cat "$out"
