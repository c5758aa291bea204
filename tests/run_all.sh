#!/usr/bin/env bash
# The one test command: lint (ruff), the API coverage page, then packaging: the sdist
# and the wheel built from the files git sees (python -m build, twine check, their
# contents against the source tree), the import contracts (lint-imports, .importlinter)
# on the built modules, and the wheel installed with its extras into a fresh venv
# outside the checkout.  From a folder outside the checkout, against that installed
# wheel: a stencil at 1 and 2 ranks, then the whole suite serially and under mpiexec
# at 2 ranks.  Then, in the checkout's .venv (pip install -e .): the scaling suite's
# communication figures, the suite at 3 and 4 ranks (tests/decomposition is pure
# math: serial only), at 2 ranks with every elementwise chain fused, then
# on the emulated device backend at 1 and 2 ranks, the examples, and last the HDF5
# I/O tests on the parallel-HDF5 path (.venv-phdf5: h5py built against Debian's
# MPI-enabled HDF5; made by .ci/phdf5.sh, skipped without it unless CI=true).
#
#   bash tests/run_all.sh                     # from any directory
#   SPMDARRAY_MPI_TIMEOUT=600                 # seconds per mpiexec run before it is killed
#   SPMDARRAY_TEST_TIMEOUT=120                # seconds per test before its watchdog fires
#   SPMDARRAY_PHDF5=0                         # skip the parallel-HDF5 step (even with CI=true)
#   TMPDIR=/elsewhere                         # where the packaging step builds and installs
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

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

banner "summary"
echo "run_all.sh: ALL PASSED: ruff, sdist and wheel checked, import contracts, the installed wheel serially and at 2 ranks, scaling figures, pytest at 3 and 4 ranks, fusion forced at 2 ranks, emulated device backend at 1 and 2 ranks, examples, $phdf5, docs site and its examples (${SECONDS}s)"
