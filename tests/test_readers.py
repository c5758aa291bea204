"""Creation from iterables, buffers and text files that every rank passes,
against NumPy's own readers (the parse is replicated, the result distributed)."""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp


@pytest.fixture
def shared_dir(tmp_path_factory):
    """One directory every rank sees (rank 0's, broadcast)."""
    from mpi4py import MPI

    path = str(tmp_path_factory.mktemp("readers")) if world()[0] == 0 else None
    return MPI.COMM_WORLD.bcast(path, root=0)


@pytest.mark.parametrize("dtype", [numpy.int32, numpy.int64, numpy.float32, numpy.float64, numpy.complex128])
def test_fromiter_frombuffer_fromstring(dtype):
    a = ref((11,), dtype)
    x = sp.fromiter(iter(a.tolist()), dtype)
    assert isinstance(x, sp.ndarray)
    assert_eq(x, numpy.fromiter(iter(a.tolist()), dtype), exact=True)
    assert_eq(sp.fromiter(iter(a.tolist()), dtype, count=4), numpy.fromiter(iter(a.tolist()), dtype, count=4))
    buf = a.tobytes()
    assert_eq(sp.frombuffer(buf, dtype), numpy.frombuffer(buf, dtype), exact=True)
    isz = numpy.dtype(dtype).itemsize
    assert_eq(sp.frombuffer(buf, dtype, count=3, offset=isz), numpy.frombuffer(buf, dtype, count=3, offset=isz))
    assert_eq(sp.fromiter([], dtype), numpy.fromiter([], dtype))
    if numpy.dtype(dtype).kind != "c":
        text = " ".join(str(v) for v in a.tolist())
        assert_eq(sp.fromstring(text, dtype, sep=" "), numpy.fromstring(text, dtype, sep=" "), exact=True)


def test_text_and_binary_files(shared_dir):
    a = ref((9, 4))
    txt, csv, raw = (f"{shared_dir}/a.txt", f"{shared_dir}/a.csv", f"{shared_dir}/a.bin")
    if world()[0] == 0:
        numpy.savetxt(txt, a)
        numpy.savetxt(csv, a, delimiter=",", header="w,x,y,z")
        a.tofile(raw)
    from mpi4py import MPI

    MPI.COMM_WORLD.Barrier()
    assert_eq(sp.loadtxt(txt), numpy.loadtxt(txt), exact=True)
    assert_eq(sp.loadtxt(csv, delimiter=",", usecols=(0, 2)), numpy.loadtxt(csv, delimiter=",", usecols=(0, 2)))
    assert_eq(sp.genfromtxt(csv, delimiter=","), numpy.genfromtxt(csv, delimiter=","), exact=True)
    assert_eq(sp.fromfile(raw), numpy.fromfile(raw), exact=True)
    assert_eq(sp.fromregex(txt, r"(\S+) ", [("v", float)]), numpy.fromregex(txt, r"(\S+) ", [("v", float)])["v"])
    with pytest.raises(NotImplementedError, match="names="):
        sp.genfromtxt(csv, delimiter=",", names=True)
    with pytest.raises(FileNotFoundError):
        sp.loadtxt(f"{shared_dir}/missing.txt")
