#!/usr/bin/env bash
# Make .venv-phdf5: spmdarray with h5py built against MPI-enabled HDF5 (Debian's
# libhdf5-mpich-dev) and mpi4py built against Debian's MPICH, for the parallel-HDF5
# I/O path.  Idempotent: a venv whose h5py already reports mpi=True is kept.
#
#   bash .ci/phdf5.sh              # several minutes from scratch (mostly compiling)
#   bash .ci/phdf5.sh --packages   # only the Debian packages (mpich, libhdf5-mpich-dev)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.venv-phdf5
hdf5_dir=/usr/lib/x86_64-linux-gnu/hdf5/mpich
mpicc=/usr/bin/mpicc.mpich
fail() { printf '\n.ci/phdf5.sh: FAILED: %s\n' "$*" >&2; exit 1; }

if [ ! -x "$mpicc" ] || [ ! -d "$hdf5_dir" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get -y -qq)
    "${apt[@]}" update || fail "apt-get update"
    "${apt[@]}" install mpich libmpich-dev libhdf5-mpich-dev || fail "apt-get install mpich libmpich-dev libhdf5-mpich-dev"
fi
[ "${1:-}" != --packages ] || exit 0

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import h5py, sys; sys.exit(not h5py.get_config().mpi)' 2>/dev/null; then
    "$venv/bin/python" -m pip install -q -e ".[test]" || fail "pip install -e .[test] into $venv"
    echo ".ci/phdf5.sh: $venv is ready (kept)"
    exit 0
fi

python3 -m venv --clear "$venv" || fail "python3 -m venv $venv"
pip=("$venv/bin/python" -m pip install -q)
"${pip[@]}" --upgrade pip setuptools wheel || fail "pip install setuptools wheel"
# Build requirements first: h5py is built without isolation (with isolation its build
# pins an old mpi4py and runs out of memory compiling it).
"${pip[@]}" numpy Cython pkgconfig || fail "pip install numpy Cython pkgconfig"
# -O0: this venv only runs the I/O tests, and unoptimised builds compile about 3x
# faster (mpi4py's one large C file dominates a cold build).
export CFLAGS="${PHDF5_CFLAGS:--O0 -g0}"
MPICC=$mpicc "${pip[@]}" --no-binary=mpi4py mpi4py || fail "building mpi4py against Debian's MPICH"
CC=$mpicc HDF5_MPI=ON HDF5_DIR=$hdf5_dir "${pip[@]}" --no-binary=h5py --no-build-isolation h5py \
    || fail "building h5py against $hdf5_dir"
# spmdarray and its test tools, without the mpich wheel: Debian's MPICH is the MPI here.
"${pip[@]}" -e ".[test]" || fail "pip install -e .[test] into $venv"
"$venv/bin/python" -c 'import h5py, sys; sys.exit(not h5py.get_config().mpi)' \
    || fail "h5py in $venv was built without MPI"
echo ".ci/phdf5.sh: $venv is ready (h5py $("$venv/bin/python" -c 'import h5py; print(h5py.__version__)'), HDF5 $("$venv/bin/python" -c 'import h5py; print(h5py.version.hdf5_version)'))"
