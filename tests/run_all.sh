#!/usr/bin/env bash
# The one test command: lint, the whole suite serially, then the same suite under
# mpiexec at 2, 3 and 4 ranks (tests/decomposition is pure math: serial only), then
# on the emulated device backend at 1 and 2 ranks.
#
#   bash tests/run_all.sh                     # from any directory
#   SPMDARRAY_MPI_TIMEOUT=600                 # seconds per mpiexec run before it is killed
#   SPMDARRAY_TEST_TIMEOUT=120                # seconds per test before its watchdog fires
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

banner() { printf '\n===== %s =====\n' "$*"; }
fail() { printf '\nrun_all.sh: FAILED: %s\n' "$*" >&2; exit 1; }

banner "setup: .venv"
# No pip in .venv means a missing or half-made venv: (re)make it.
[ -x .venv/bin/pip ] || python3 -m venv --clear .venv || fail "setup: python3 -m venv .venv"
.venv/bin/python -m pip install -q -e ".[test,mpich]" ruff || fail "setup: pip install"
export PATH="$PWD/.venv/bin:$PATH"  # python, ruff and mpiexec (mpich wheel) from the venv

banner "ruff check ."
ruff check . || fail "ruff check"

# --with-mpi: pytest-mpi (a test dependency) would otherwise skip tests marked @pytest.mark.mpi.
banner "pytest, serial"
python -m pytest -q --with-mpi tests || fail "pytest serial"

cores=$(nproc)
for k in 2 3 4; do
    banner "pytest under mpiexec -n $k"
    # More ranks than cores: waiting ranks nanosleep instead of poll-and-sched_yield
    # (MPICH's default), so they leave the CPU to the ranks doing the work.
    # Not set otherwise: it costs ~100 us per wait (a 2-rank ping-pong is ~5x slower).
    heavy=0
    [ "$k" -le "$cores" ] || heavy=1
    rc=0
    MPIR_CVAR_ENABLE_HEAVY_YIELD=${MPIR_CVAR_ENABLE_HEAVY_YIELD:-$heavy} timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" \
        mpiexec -n "$k" python -m pytest -q -x --with-mpi tests --ignore=tests/decomposition || rc=$?
    [ "$rc" -ne 137 ] || fail "pytest under mpiexec timed out (deadlock?) at $k ranks"
    [ "$rc" -eq 0 ] || fail "pytest under mpiexec -n $k (exit code $rc)"
done

# The GPU code paths without a GPU: CuPy's interface over NumPy (tests/fake_cupy.py),
# which refuses implicit host conversion as CuPy does; halos are staged through
# pinned host buffers.  On a GPU machine, scaling/gpu/check.sh runs real CuPy.
emu=(env SPMDARRAY_BACKEND=cupy SPMDARRAY_CUPY_MODULE=fake_cupy)
banner "pytest on the emulated device backend, serial"
"${emu[@]}" python -m pytest -q --with-mpi tests --ignore=tests/decomposition || fail "pytest, emulated device backend"
banner "pytest on the emulated device backend under mpiexec -n 2"
rc=0
timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" mpiexec -n 2 "${emu[@]}" \
    python -m pytest -q -x --with-mpi tests --ignore=tests/decomposition || rc=$?
[ "$rc" -ne 137 ] || fail "pytest on the emulated device backend timed out (deadlock?) at 2 ranks"
[ "$rc" -eq 0 ] || fail "pytest on the emulated device backend at 2 ranks (exit code $rc)"

banner "examples at 1, 2, 3, 4 and 8 ranks, checked against NumPy"
bash tests/run_examples.sh || fail "examples"

banner "summary"
echo "run_all.sh: ALL PASSED: ruff, pytest serial, pytest at 2, 3 and 4 ranks, emulated device backend at 1 and 2 ranks, examples (${SECONDS}s)"
