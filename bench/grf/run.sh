#!/usr/bin/env bash
# MEU fit and gradient timings (issue 4); writes bench/results/grf.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/grf.md
table=$(cargo run --release --quiet --example bench_grf -- "$@")
{
  echo "# MEU fit and gradient time"
  echo
  echo "Run on $(date -u +%Y-%m-%d) on $(nproc) cores. Produced by \`bash bench/grf/run.sh\`."
  echo "Swiss roll (noise 0.05), k = 10 (union graph), gamma = 1e-4, pgtol = 1e-5 on the scaled"
  echo "multipliers; p = 100 maps the roll linearly into 100 dimensions plus noise 0.05."
  echo "\"gradient s\" is one log-likelihood-and-gradient evaluation (dense Cholesky of"
  echo "L + gamma I, then the inverse); \"Cholesky share\" is the factorisation's part of it."
  echo
  echo "$table"
} > "$out"
cat "$out"
