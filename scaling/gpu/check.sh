#!/usr/bin/env bash
# GPU verification of the CuPy backend, in one run of at most ~8 minutes.
#
#   bash scaling/gpu/check.sh          (on a machine with CuPy and a GPU)
#
# 0. the generated fused kernels (scaling/device_fusion_check.py): bit-exact cases and the
#    fused stencil kernel against CuPy eager;
# 1. benchmarks: the aliasing-view stencil (N=16000, fused and with SPMDARRAY_FUSE_DEVICE=0)
#    and matmul against plain CuPy,
#    on one process; the stencil again on 2 ranks sharing the GPU (staged halos);
# 2. the whole test suite with SPMDARRAY_BACKEND=cupy on 1 rank, then on 2 ranks
#    sharing one GPU;
# 3. a short table.
# Logs go to $OUT (default /tmp/gpucheck).  Python wheels in .whl/ (mpich for an
# mpiexec and libmpi, mpi4py, pytest-mpi) are installed first when present, into a
# venv that sees the machine's packages (CuPy): mpi4py finds the wheel's libmpi
# under the venv's prefix, as in a normal install.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/gpucheck}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --prefix /tmp/spmd .whl/*.whl \
        || { echo "check.sh: wheel install failed"; exit 1; }
    site=$(echo /tmp/spmd/lib/python3*/site-packages)
    export PATH=/tmp/spmd/bin:$PATH LD_LIBRARY_PATH=/tmp/spmd/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    extra=":$site"
fi
export PYTHONPATH="$PWD${extra:-}" PYTHONUNBUFFERED=1 SPMDARRAY_BACKEND=cupy
python3 -c "import cupy, numpy, mpi4py, sys; print('python', sys.version.split()[0], 'numpy', numpy.__version__, \
'cupy', cupy.__version__, 'mpi4py', mpi4py.__version__, 'devices', cupy.cuda.runtime.getDeviceCount())"
nvidia-smi -L 2>/dev/null | head -2
MPIEXEC=$(command -v mpiexec || true)
echo "mpiexec: ${MPIEXEC:-none}"

run() { # name timeout command...
    local name=$1 t=$2; shift 2
    local t0=$SECONDS rc=0
    timeout --kill-after=10 "$t" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
    echo "== $name: exit $rc in $((SECONDS - t0)) s"
    grep -E "^RESULT|passed|failed|error" "$OUT/$name.log" | tail -4
    return 0
}

run device-fusion 180 python3 scaling/device_fusion_check.py
run bench-stencil-1 60 python3 scaling/gpu/bench.py stencil -N 16000 --iters 20
SPMDARRAY_FUSE_DEVICE=0 run bench-stencil-1-eager 60 python3 scaling/gpu/bench.py stencil -N 16000 --iters 20
run bench-matmul-1 45 python3 scaling/gpu/bench.py matmul -n 8192 --reps 5
[ -n "$MPIEXEC" ] && run bench-stencil-2 60 mpiexec -n 2 python3 scaling/gpu/bench.py stencil -N 16000 --iters 20
run pytest-1 180 python3 -m pytest -q -p no:cacheprovider --with-mpi tests --ignore=tests/decomposition -rs --maxfail=300
[ -n "$MPIEXEC" ] && run pytest-2 120 mpiexec -n 2 python3 -m pytest -q -p no:cacheprovider --with-mpi tests \
    --ignore=tests/decomposition -x

echo
echo "| run | result |"
echo "|---|---|"
for f in "$OUT"/*.log; do
    echo "| $(basename "$f" .log) | $(grep -E "^RESULT|passed|failed" "$f" | tail -2 | tr '\n' ' ') |"
done
grep -h -E "^(FAILED|ERROR)" "$OUT"/pytest-1.log | head -40
