"""restore(..., like=x) and load_hdf5(..., like=x) read into the layout of an existing array."""

from __future__ import annotations

import os

import numpy
import pytest
from io_helpers import on_rank0, shared_dir

import spmdarray as sp

h5py = pytest.importorskip("h5py")


@pytest.fixture
def folder():
    with shared_dir() as d:
        yield d


def _uneven(n_cols: int = 5, ghost: int = 0):
    """A from_local array with uneven row blocks (rank r holds r + 1 rows; rank 1 none at 3+ ranks)."""
    comm = sp.arange(1.0).comm
    rank, size = comm.Get_rank(), comm.Get_size()
    rows = [r + 1 if r != 1 or size < 3 else 0 for r in range(size)]
    n = sum(rows)
    full = numpy.arange(n * n_cols, dtype=numpy.float64).reshape(n, n_cols) * 0.5
    lo = sum(rows[:rank])
    return sp.from_local(full[lo : lo + rows[rank]].copy(), ghost=ghost), full, rows


@pytest.mark.skipif(
    os.environ.get("SPMDARRAY_BACKEND") == "cupy",
    reason="from_local of a NumPy block makes a NumPy-backend array; the other operands here are on the device backend",
)
@pytest.mark.parametrize("ghost", [0, 1])
def test_restore_like_keeps_the_users_blocks(folder, ghost):
    x, full, rows = _uneven(ghost=ghost)
    path = os.path.join(folder, "ck.h5")
    sp.checkpoint(path, step=3, u=x, s=sp.arange(7.0))
    step, arrays, _ = sp.restore(path, like=x)
    u = arrays["u"]
    assert step == 3 and u.layout == x.layout
    numpy.testing.assert_array_equal(u.local, x.local)  # this rank's own block, not a balanced one
    numpy.testing.assert_array_equal(numpy.asarray(u), full)
    assert arrays["s"].layout == sp.arange(7.0).layout  # another shape: balanced
    _, by_name, _ = sp.restore(path, like={"u": x})
    assert by_name["u"].layout == x.layout


def test_load_hdf5_like(folder):
    x, full, _ = _uneven()
    path = os.path.join(folder, "d.h5")

    def write():
        with h5py.File(path, "w") as f:
            f["d"] = full
            f["wide"] = numpy.zeros((3, 3))

    on_rank0(write)
    y = sp.load_hdf5(path, "d", like=x)
    assert y.layout == x.layout
    numpy.testing.assert_array_equal(y.local, x.local)
    with pytest.raises(ValueError, match=r"like= has shape .* but the data has shape \(3, 3\)"):
        sp.load_hdf5(path, "wide", like=x)
    with pytest.raises(TypeError, match="like= must be a spmdarray array"):
        sp.load_hdf5(path, "d", like=full)


def test_restore_like_errors(folder):
    x, _, _ = _uneven()
    path = os.path.join(folder, "ck.h5")
    sp.checkpoint(path, step=0, s=sp.arange(7.0))
    with pytest.raises(ValueError, match="like= has shape"):
        sp.restore(path, like=x)
    with pytest.raises(ValueError, match=r"like= names \['nope'\]"):
        sp.restore(path, like={"nope": x})


def test_from_local_ghost_stencil_moves_only_the_edges():
    n_cols = 6
    with sp.config.set(fuse=False):
        plain, full, rows = _uneven(n_cols)
        framed, _, _ = _uneven(n_cols, ghost=1)
        size = plain.comm.Get_size()
        assert framed._st.ghost == ((1 if size > 1 else 0), 0)
        numpy.testing.assert_array_equal(framed.local, plain.local)
        res = {}
        for name, g in (("plain", plain), ("framed", framed)):
            g[1:-1] + g[:-2]  # plans built; halos now cached
            g.mark_modified()
            with sp.comm_stats() as st:
                r = g[1:-1] + g[:-2] + g[2:]
            res[name] = (numpy.asarray(r), g.comm.allreduce(st.bytes_sent))
    expect = full[1:-1] + full[:-2] + full[2:]
    numpy.testing.assert_array_equal(res["plain"][0], expect)
    numpy.testing.assert_array_equal(res["framed"][0], expect)
    # The same edge rows move either way: one row of n_cols per neighbour pair with data.
    assert res["framed"][1] == res["plain"][1]


def test_like_and_another_comm(folder):
    from mpi4py import MPI

    x, full, _ = _uneven()
    path = os.path.join(folder, "ck.h5")
    sp.checkpoint(path, step=0, u=x)
    other = MPI.COMM_WORLD.Dup()
    try:
        with pytest.raises(ValueError, match="comm= is not the communicator of like="):
            sp.restore(path, comm=other, like=x)
        step, arrays, _ = sp.restore(path, comm=x.comm, like=x)  # its own communicator is fine
        numpy.testing.assert_array_equal(arrays["u"].local, x.local)
    finally:
        other.Free()
