#!/usr/bin/env bash
# Seconds per LL-LVM EM iteration (issue 5, issue 15) and the time to project a batch of new
# points; writes bench/results/lllvm.md. Extra arguments go to the EM table's run
# (`sizes [iterations]`).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/lllvm.md
cargo build --release --quiet --example bench_lllvm
bench=target/release/examples/bench_lllvm
table=$("$bench" "${@:-200,400,1000,2000,5000}")
projection=$("$bench" project 2000 100 5)
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
  echo "**Scope.** Every time and ratio here is for one generator, the LL-LVM paper's Swiss roll"
  echo "(dy = 3, dx = 2, 9-NN), at the sizes listed; other generators, noise levels and dimensions"
  echo "have not been timed, so the ratios are a claim about this roll only."
  echo
  echo "$table"
  echo
  echo "## Out-of-sample projection"
  echo
  echo "100 new points of a second Swiss roll (seed 8) projected into the model fitted above at"
  echo "n = 2000 (5 EM iterations; spec §4.4). The checksum sums the projected means and"
  echo "covariances."
  echo
  echo "$projection"
} > "$out"
cat "$out"
