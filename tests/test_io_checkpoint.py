"""checkpoint and restore: atomic, and independent of the rank count."""

from __future__ import annotations

import os

import numpy
import pytest
from io_helpers import h5_read, leftovers, on_rank0, run_mpi, same_on_every_rank, shared_dir
from spmdarray.decomposition import Layout

import spmdarray as sp
from spmdarray.io import _h5
from spmdarray.io._write import is_tmp_of, tmp_name

h5py = pytest.importorskip("h5py")


@pytest.fixture
def folder():
    with shared_dir() as d:
        yield d


def _fields():
    u = sp.arange(13 * 10, dtype=numpy.float64).reshape(13, 10) / 7
    v = sp.arange(6 * 5 * 4, dtype=numpy.int32).reshape(6, 5, 4) - 50
    return {"u": u, "v": v[:, ::-1], "w": sp.arange(11.0) * (1 + 2j), "flag": u > 3, "total": u.sum(axis=0)}


def _expected():
    u = numpy.arange(13 * 10, dtype=numpy.float64).reshape(13, 10) / 7
    v = numpy.arange(6 * 5 * 4, dtype=numpy.int32).reshape(6, 5, 4) - 50
    return {"u": u, "v": v[:, ::-1], "w": numpy.arange(11.0) * (1 + 2j), "flag": u > 3, "total": u.sum(axis=0)}


def test_round_trip_keeps_step_attrs_order_shapes_and_dtypes(folder, comm):
    path = os.path.join(folder, "ck.h5")
    sp.checkpoint(path, step=42, attrs={"dt": 0.125, "note": "hello", "dims": numpy.array([13, 10])}, **_fields())
    step, arrays, attrs = sp.restore(path)
    assert step == 42
    assert list(arrays) == ["u", "v", "w", "flag", "total"]
    assert attrs["dt"] == 0.125 and attrs["note"] == "hello"
    numpy.testing.assert_array_equal(attrs["dims"], [13, 10])
    assert set(attrs) == {"dt", "note", "dims"}
    for name, expected in _expected().items():
        x = arrays[name]
        assert x.dtype == expected.dtype and x.shape == expected.shape
        assert x._st.layout == Layout.balanced(expected.shape, comm.size)
        numpy.testing.assert_allclose(numpy.asarray(x), expected, rtol=1e-15)
        numpy.testing.assert_array_equal(h5_read(path, name), numpy.asarray(x))
    assert leftovers(folder) == []


def test_expect_accepts_arrays_and_pairs(folder):
    path = os.path.join(folder, "ck.h5")
    f = _fields()
    sp.checkpoint(path, step=1, **f)
    ck = sp.restore(path, expect={"u": f["u"], "v": ((6, 5, 4), None), "w": (None, "complex128")})
    assert ck.step == 1 and set(ck.arrays) == set(f)


def test_a_new_checkpoint_replaces_the_old_one_atomically(folder):
    path = os.path.join(folder, "ck.h5")
    sp.checkpoint(path, step=1, u=sp.zeros(8))
    sp.checkpoint(path, step=2, u=sp.ones(8), extra=sp.arange(3))
    step, arrays, _ = sp.restore(path)
    assert step == 2 and list(arrays) == ["u", "extra"]
    numpy.testing.assert_array_equal(numpy.asarray(arrays["u"]), numpy.ones(8))
    assert leftovers(folder) == []


def test_a_failure_mid_write_leaves_the_previous_checkpoint(folder, monkeypatch, comm):
    path = os.path.join(folder, "ck.h5")
    u = sp.arange(40.0).reshape(8, 5)
    sp.checkpoint(path, step=1, u=u)
    monkeypatch.setattr(sp.config, "io_buffer_bytes", 40)  # several slabs per rank
    calls = {"n": 0}
    real = _h5.write_slab
    parallel = _h5.parallel()

    def failing(dset, vmap, box, data, dxpl):
        calls["n"] += 1
        # A collective write fails on every rank (MPI-IO reports it everywhere);
        # a serial-path write fails on the last rank, after the others wrote theirs.
        if calls["n"] == 2 and (parallel or comm.rank == comm.size - 1):
            raise OSError("No space left on device (injected)")
        return real(dset, vmap, box, data, dxpl)

    monkeypatch.setattr(_h5, "write_slab", failing)
    with pytest.raises(OSError, match="injected") as info:
        sp.checkpoint(path, step=2, u=u * 2)
    same_on_every_rank(f"{type(info.value).__name__}: {info.value}")
    monkeypatch.setattr(_h5, "write_slab", real)
    assert leftovers(folder) == []
    step, arrays, _ = sp.restore(path)
    assert step == 1
    numpy.testing.assert_array_equal(numpy.asarray(arrays["u"]), numpy.arange(40.0).reshape(8, 5))


_WRITE = """
import sys, numpy
from mpi4py import MPI
import spmdarray as sp
path, n = sys.argv[1], int(sys.argv[2])
assert MPI.COMM_WORLD.size == n, f"{MPI.COMM_WORLD.size} ranks, expected {n}: a foreign mpiexec?"
sp.config.io_buffer_bytes = 96
u = sp.arange(13 * 10, dtype=numpy.float64).reshape(13, 10) / 7
v = sp.arange(6 * 5 * 4, dtype=numpy.int32).reshape(6, 5, 4) - 50
sp.checkpoint(path, step=42, attrs={"ranks": n}, u=u, v=v[:, ::-1], w=sp.arange(11.0) * (1 + 2j),
              flag=u > 3, total=u.sum(axis=0))
print("WROTE", n)
"""

_RESTORE = """
import sys, numpy, h5py
from mpi4py import MPI
import spmdarray as sp
from spmdarray.decomposition import Layout
path, n = sys.argv[1], int(sys.argv[2])
assert MPI.COMM_WORLD.size == n, f"{MPI.COMM_WORLD.size} ranks, expected {n}: a foreign mpiexec?"
step, arrays, attrs = sp.restore(path)
assert step == 42 and int(attrs["ranks"]) == 3, (step, attrs)
with h5py.File(path, "r") as f:
    for name, x in arrays.items():
        assert x._st.layout == Layout.balanced(x.shape, n), name
        got = numpy.asarray(x)
        ref = f[name][()]
        assert got.dtype == ref.dtype and got.shape == ref.shape, name
        assert numpy.array_equal(got, ref), name
print("RESTORED", n, MPI.COMM_WORLD.rank)
"""


@pytest.fixture(scope="module")
def written_at_3():
    """A checkpoint written by ``mpiexec -n 3`` (serial pass only)."""
    from mpi4py import MPI

    if MPI.COMM_WORLD.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    with shared_dir() as folder:
        path = os.path.join(folder, "ck.h5")
        run_mpi(3, _WRITE, path, "3")
        yield path


@pytest.mark.parametrize("readers", [1, 2, 4])
def test_written_at_3_ranks_restores_at_1_2_4(readers, written_at_3):
    _, out = run_mpi(readers, _RESTORE, written_at_3, str(readers))
    assert out.count("RESTORED") == readers, out
    for name, expected in _expected().items():
        numpy.testing.assert_allclose(h5_read(written_at_3, name), expected, rtol=1e-15)


_CRASH = """
import os, sys, numpy
from mpi4py import MPI
import spmdarray as sp
from spmdarray.io import _h5
from spmdarray.io._write import is_tmp_of, tmp_name
path, n = sys.argv[1], int(sys.argv[2])
world = MPI.COMM_WORLD
assert world.size == n, f"{world.size} ranks, expected {n}: a foreign mpiexec?"
u = sp.arange(40.0).reshape(8, 5)
sp.checkpoint(path, step=1, u=u)
sp.config.io_buffer_bytes = 40
real, calls = _h5.write_slab, [0]

def crashing(*args):
    real(*args)
    calls[0] += 1
    if world.rank == world.size - 1 and calls[0] == 2:
        os._exit(17)  # killed part-way through its blocks: no cleanup runs

_h5.write_slab = crashing
sp.checkpoint(path, step=2, u=u * 2)
print("NOT REACHED")
"""


def test_a_crash_mid_write_leaves_the_previous_checkpoint(comm):
    if comm.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")
    with shared_dir() as folder:
        path = os.path.join(folder, "ck.h5")
        rc, out = run_mpi(2, _CRASH, path, "2", expect_rc=None)
        assert rc != 0 and "NOT REACHED" not in out, out
        with h5py.File(path, "r") as f:
            assert f.attrs["spmdarray_step"] == 1
            numpy.testing.assert_array_equal(f["u"][...], numpy.arange(40.0).reshape(8, 5))
        assert len(leftovers(folder)) == 1, os.listdir(folder)  # the killed job's temporary file
        step, arrays, _ = sp.restore(path)
        assert step == 1
        sp.checkpoint(path, step=3, u=arrays["u"])  # the next checkpoint removes it
        assert leftovers(folder) == []
        assert sp.restore(path).step == 3


# ------------------------------------------------------------ checksums


def _flip(path: str, name: str, at: int = 3) -> None:
    """Rank 0 flips one byte of ``name``'s first chunk, as a damaged disk would."""

    def flip() -> None:
        with h5py.File(path, "r") as f:
            info = f[name].id.get_chunk_info(0)
        with open(path, "r+b") as fh:
            fh.seek(info.byte_offset + at)
            b = fh.read(1)
            fh.seek(info.byte_offset + at)
            fh.write(bytes([b[0] ^ 0xFF]))

    on_rank0(flip)


def test_a_checksum_catches_flipped_bytes_on_every_rank(folder):
    path = os.path.join(folder, "ck.h5")
    u = sp.arange(13 * 10, dtype=numpy.float64).reshape(13, 10) / 7
    sp.checkpoint(path, step=5, checksum=True, u=u, s=sp.asarray(2.5))
    with h5py.File(path, "r") as f:
        assert f["u"].fletcher32 and f["u"].chunks is not None
    step, arrays, _ = sp.restore(path)
    assert step == 5
    assert_eq = numpy.testing.assert_array_equal
    assert_eq(numpy.asarray(arrays["u"]), numpy.arange(130.0).reshape(13, 10) / 7)
    _flip(path, "u")
    with pytest.raises(OSError, match="restore: array 'u' in .* fails its Fletcher32 checksum") as info:
        sp.restore(path)
    same_on_every_rank(f"{type(info.value).__name__}: {info.value}")


def test_without_a_checksum_flipped_bytes_go_unnoticed(folder):
    path = os.path.join(folder, "ck.h5")
    sp.checkpoint(path, step=1, u=sp.arange(64.0).reshape(8, 8))
    with h5py.File(path, "r") as f:
        assert not f["u"].fletcher32
    on_rank0(lambda: _rechunk_free_flip(path))
    got = numpy.asarray(sp.restore(path).arrays["u"])
    assert not numpy.array_equal(got, numpy.arange(64.0).reshape(8, 8))  # silently wrong: hence checksum=True


def _rechunk_free_flip(path: str) -> None:
    with h5py.File(path, "r") as f:
        off = f["u"].id.get_offset()
    with open(path, "r+b") as fh:
        fh.seek(off + 3)
        b = fh.read(1)
        fh.seek(off + 3)
        fh.write(bytes([b[0] ^ 0xFF]))


# ------------------------------------------------------- temporary files


def test_temporary_names_are_unique_and_matched_exactly():
    a, b = tmp_name("state.h5"), tmp_name("state.h5")
    assert a != b and is_tmp_of(a, "state.h5") and is_tmp_of(b, "state.h5")
    other = tmp_name("state.h5.1")  # a concurrent checkpoint("state.h5.1")
    assert not is_tmp_of(other, "state.h5") and is_tmp_of(other, "state.h5.1")
    assert not is_tmp_of(".state.h5.spmdarray-tmp", "state.h5")
    assert not is_tmp_of(tmp_name("xstate.h5"), "state.h5")


def test_cleaning_removes_only_this_targets_leftovers(folder):
    path = os.path.join(folder, "state.h5")
    stale, concurrent = tmp_name("state.h5"), tmp_name("state.h5.1")

    def make() -> None:
        for n in (stale, concurrent):
            open(os.path.join(folder, n), "wb").close()

    on_rank0(make)
    sp.checkpoint(path, step=1, u=sp.arange(5.0))
    left = leftovers(folder)  # rank 0's random names: each rank drew its own
    assert len(left) == 1 and is_tmp_of(left[0], "state.h5.1"), left  # the other target's file is untouched
    assert sp.restore(path).step == 1
