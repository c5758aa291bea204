#!/usr/bin/env bash
# The main job: the stencil demo on ${RANKS:-4} ranks. Arguments go to examples/stencil.py.
#   RANKS=3 bash examples/run_demo.sh [stencil arguments...]      (from any directory)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Same venv as tests/run_all.sh (no pip in .venv means a missing or half-made venv).
[ -x .venv/bin/pip ] || python3 -m venv --clear .venv
# Installed already (spmdarray from this checkout, mpi4py, and the venv's mpiexec): no pip run.
if ! { [ -x .venv/bin/mpiexec ] && .venv/bin/python -c 'import mpi4py, spmdarray, sys; sys.exit(not spmdarray.__file__.startswith(sys.argv[1]))' "$PWD/" 2>/dev/null; }; then
    .venv/bin/python -m pip install -q -e ".[test,mpich,fuse]" ruff
fi
export PATH="$PWD/.venv/bin:$PATH"  # python and mpiexec (mpich wheel) from the venv

ranks=${RANKS:-4}
# More ranks than cores: waiting ranks sleep instead of busy-polling (see tests/run_all.sh).
if [ "$ranks" -gt "$(nproc)" ]; then
    export MPIR_CVAR_ENABLE_HEAVY_YIELD=${MPIR_CVAR_ENABLE_HEAVY_YIELD:-1}
fi
rc=0
timeout --kill-after=30 900 mpiexec -n "$ranks" python examples/stencil.py "$@" || rc=$?
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "run_demo.sh: timed out after 900 s at $ranks ranks" >&2
exit "$rc"
