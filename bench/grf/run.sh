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
analysed=()
analyse() { analysed+=("$("$bin" "$@" analyse)"); echo "${analysed[-1]}" >&2; }
for d in roll s-curve roll-noisy roll-p100; do analyse "$d" 10000; done
for d in roll s-curve roll-noisy; do analyse "$d" 100000; done
analyse roll-p100 30000
analyse roll 1000000
analyse s-curve 1000000
for n in 100 200 300 500; do run roll "$n" eval; done
for n in 1000 2000 10000 30000 100000; do run roll "$n" fit; done
for n in 1000 10000; do run s-curve "$n" fit; done
run s-curve 100000 eval
for n in 1000 10000; do run roll-noisy "$n" fit; done
run roll-noisy 30000 eval
for n in 1000 2000 10000; do run roll-p100 "$n" fit; done
run roll-p100 30000 eval
# The two fill-reducing orderings forced, on every generator (the fits above use auto).
for d in roll s-curve roll-noisy roll-p100; do for o in amd nd; do run "$d" 10000 eval "$o"; done; done
for d in roll s-curve roll-noisy; do for o in amd nd; do run "$d" 100000 eval "$o"; done; done
for o in amd nd; do run roll-p100 30000 eval "$o"; done
run roll 1000000 eval amd
run roll 1000000 eval nd
# About two hours on 2 idle cores; its evaluations go to stderr with their times.
run roll 1000000 fit
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
  echo "\"ordering\" is the sparse engine's fill-reducing ordering (\`amd\` minimum degree, \`nd\`"
  echo "nested dissection; forced in the eval rows that compare them, else the engine's own"
  echo "choice) and \"analysis s\" its symbolic analysis (with \`auto\` from 10,000 points: both)."
  echo "\"factor values\" is the sparse factor's stored values (per point: the fill under that"
  echo "ordering). \"fit s\" is the whole sparse fit to pgtol 1e-5 (kNN graph, search,"
  echo "embedding, evidence), timed like a user's fit; \"-\" where only the evaluation ran."
  echo "\"peak MiB\" is the process's peak resident memory (data, graph, factor, inverse)."
  echo
  echo "| data | n | p | edges | ordering | analysis s | factor values | values per point | sparse s | dense s | dense / sparse | fit s | iterations | evaluations | stopped by | projected gradient | peak MiB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "## The two orderings, analysis only"
  echo
  echo "\`bench_grf <data> <n> analyse\`: both symbolic analyses, no numeric work. \"Gflop\" is"
  echo "the supernodal factorisation's operation count (\`SparseSymbolic::factor_flops\`), which"
  echo "does not depend on the machine's load; the selected inversion costs about twice as much."
  echo
  echo "| data | n | p | edges | ordering | analysis s | factor values | values per point | factor Gflop |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${analysed[@]}"
} > "$out"
cat "$out"
