#!/usr/bin/env bash
# Seconds per LL-LVM EM iteration (issue 5); writes bench/results/lllvm.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/lllvm.md
table=$(cargo run --release --quiet --example bench_lllvm -- "$@")
{
  echo "# LL-LVM: seconds per EM iteration"
  echo
  echo "Run on $(date -u +%Y-%m-%d) on $(nproc) cores. Produced by \`bash bench/lllvm/run.sh\`."
  echo "Swiss roll (specs/lllvm.md §5.1, dy = 3, dx = 2), 9-NN union graph, eps = alpha = 1e-3,"
  echo "gamma0 = 1, the authors' random start; 5 EM iterations per size, no tolerance. \"setup\""
  echo "is the graph, L^+ and the eigenvalues of L, once per graph. The authors' code times are"
  echo "those of their MATLAB implementation under GNU Octave on this kind of machine"
  echo "(shared/fixtures/lllvm_swiss_n200/README.md); it was not re-run here."
  echo
  echo "$table"
} > "$out"
cat "$out"
