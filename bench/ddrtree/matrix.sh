#!/usr/bin/env bash
# DDRTree over a matrix of branching data sets (branch counts, noise, D, N): unfold's fit
# and ordering against ddrtree-python (installed into bench/ddrtree/.venv once); the table
# goes to $OUT/matrix.md (default /tmp/unfold-ddrtree-matrix). An optional argument caps N
# (e.g. 20000 for a shorter run). PEER_LIMIT_S (default 1800) bounds each peer fit and
# PEER_MEMORY_MIB (default: no limit) its address space; MATRIX_CELLS="B,NOISE,D,N;..."
# runs only the cells given.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/venv.sh"
run_trajectory_bench matrix ${1:-}
