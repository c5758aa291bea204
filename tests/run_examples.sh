#!/usr/bin/env bash
# The three example programs, unchanged NumPy code with only the import swapped,
# at 1, 2, 3, 4 and 8 ranks, each checked against NumPy (--check) or against pi.
# Called by tests/run_all.sh (expects the venv's python and mpiexec on PATH).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PI_N=${SPMDARRAY_PI_N:-10000000}
for k in 1 2 3 4 8; do
    heavy=0
    [ "$k" -le "$(nproc)" ] || heavy=1
    export MPIR_CVAR_ENABLE_HEAVY_YIELD=$heavy
    run() {
        local rc=0
        timeout --signal=KILL 600 mpiexec -n "$k" python "$@" || rc=$?
        [ "$rc" -ne 137 ] || { echo "run_examples.sh: $* timed out at $k ranks (deadlock?)" >&2; exit 1; }
        [ "$rc" -eq 0 ] || { echo "run_examples.sh: $* failed at $k ranks (exit $rc)" >&2; exit 1; }
    }
    echo "--- $k rank(s)"
    run examples/stencil.py -N 203 --iters 7 --check
    run examples/matmul.py -n 157 --check
    run examples/pi.py -n "$PI_N"
done
echo "run_examples.sh: all examples match NumPy at 1, 2, 3, 4 and 8 ranks"
