"""load_hdf5 against plain h5py: files that h5py wrote, read at any rank count."""

from __future__ import annotations

import logging
import os

import numpy
import pytest
from helpers import world
from io_helpers import h5_read, on_rank0, reference, shared_dir
from spmdarray.decomposition import Layout

import spmdarray as sp
from spmdarray.core.placement import is_whole
from spmdarray.settings import FIELDS, config

h5py = pytest.importorskip("h5py")

DTYPES = [
    "f2",
    "f4",
    "f8",
    "i1",
    "i2",
    "i4",
    "i8",
    "u1",
    "u2",
    "u4",
    "u8",
    "?",
    "c8",
    "c16",
    "S7",
    ">i4",
    ">f8",
    [("x", "f8"), ("n", "i2")],
]


@pytest.fixture
def folder():
    with shared_dir() as d:
        yield d


def _write(path, name, data, **opts):
    def go():
        with h5py.File(path, "a") as f:
            f.create_dataset(name, data=data, **opts)

    on_rank0(go)


def _equal(got, expected):
    g = numpy.asarray(got)
    assert g.shape == expected.shape, (g.shape, expected.shape)
    numpy.testing.assert_array_equal(g, expected)


def test_launched_with_the_right_mpiexec(comm):
    # A foreign mpiexec starts K singletons, each seeing size 1.
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        if var in os.environ:
            assert comm.size == int(os.environ[var]), f"{var}={os.environ[var]} but COMM_WORLD has {comm.size} ranks"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_dtypes_of_a_chunked_gzip_dataset(folder, dtype):
    path = os.path.join(folder, "d.h5")
    data = reference((9, 7), dtype)
    _write(path, "d", data, chunks=(4, 3), compression="gzip")
    x = sp.load_hdf5(path, "d")
    expected = h5_read(path, "d")
    assert x.dtype == (expected.dtype.newbyteorder("=") if expected.dtype.kind in "biufc" else expected.dtype)
    assert x.dtype.isnative
    _equal(x, expected)


@pytest.mark.parametrize("shape", [(13,), (9, 7), (5, 4, 6), (3, 4, 2, 5), (2,), (1, 1)], ids=str)
def test_one_to_four_dims_with_filters(folder, shape):
    path = os.path.join(folder, "d.h5")
    data = reference(shape, "f8")
    chunks = tuple(max(1, n // 2) for n in shape)
    _write(path, "grp/d", data, chunks=chunks, compression="gzip", compression_opts=4, shuffle=True)
    x = sp.load_hdf5(path, "grp/d")
    assert x._st.layout == Layout.balanced(shape, world()[1])  # the default layout
    _equal(x, h5_read(path, "grp/d"))


def test_contiguous_and_scalar_and_empty(folder):
    path = os.path.join(folder, "d.h5")
    _write(path, "c", reference((6, 5), "i4"))
    _write(path, "s", numpy.float32(2.5))
    _write(path, "e", numpy.zeros((0, 3)))
    _equal(sp.load_hdf5(path, "c"), h5_read(path, "c"))
    s = sp.load_hdf5(path, "s")
    assert s.shape == () and s.dtype == numpy.float32 and float(s) == 2.5
    _equal(sp.load_hdf5(path, "e"), numpy.zeros((0, 3)))


SELECTIONS = [
    numpy.s_[2:8, ::2],
    numpy.s_[1::3, 5:1:-2],
    numpy.s_[::-1],
    numpy.s_[4],
    numpy.s_[3, 2],
    numpy.s_[..., ::-3],
    numpy.s_[None, 1:5],
    numpy.s_[5:2],
    numpy.s_[-2:, -1],
]


@pytest.mark.parametrize("key", SELECTIONS, ids=repr)
def test_selection_reads_only_what_it_names(folder, key):
    path = os.path.join(folder, "d.h5")
    data = reference((10, 9), "f8")
    _write(path, "d", data, chunks=(3, 4), compression="gzip")
    x = sp.load_hdf5(path, "d", select=key)
    expected = h5_read(path, "d")[key]  # h5py has no negative steps: select in NumPy
    if numpy.ndim(expected) == 0:
        assert x.shape == () and numpy.asarray(x) == expected
    else:
        _equal(x, expected)


def test_selection_of_a_4d_dataset_in_small_slabs(folder, monkeypatch):
    path = os.path.join(folder, "d.h5")
    data = reference((6, 5, 4, 7), "i8")
    _write(path, "d", data, chunks=(2, 2, 2, 3), compression="gzip")
    monkeypatch.setattr(sp.config, "io_buffer_bytes", 40)  # every slab is a piece of a row
    key = numpy.s_[1:6:2, ::-1, 2, 1::3]
    _equal(sp.load_hdf5(path, "d", select=key), data[key])


def test_open_h5py_dataset(folder, comm):
    path = os.path.join(folder, "d.h5")
    data = reference((8, 6), "f4")
    _write(path, "d", data, chunks=(3, 3), compression="gzip")
    kw = {"driver": "mpio", "comm": comm} if h5py.get_config().mpi else {}
    with h5py.File(path, "r", **kw) as f:
        x = sp.load_hdf5(f["d"], comm=comm)
        y = sp.load_hdf5(f["d"], comm=comm, select=numpy.s_[::2, 1])
    _equal(x, data)
    _equal(y, data[::2, 1])


def test_read_at_fewer_ranks_than_wrote(folder, comm):
    # Written by this run's ranks, read by a sub-communicator of the first max(1, size - 1).
    path = os.path.join(folder, "d.h5")
    a = sp.arange(7 * 11, dtype=numpy.int32).reshape(7, 11)
    sp.save_hdf5(path, {"a": a})
    n = max(1, comm.size - 1)
    sub = comm.Split(0 if comm.rank < n else 1, comm.rank)
    if comm.rank < n:
        x = sp.load_hdf5(path, "a", comm=sub)
        assert x.comm.size == n
        _equal(x, numpy.arange(7 * 11, dtype=numpy.int32).reshape(7, 11))
    sub.Free()
    comm.Barrier()


def test_the_io_path_is_logged(folder, caplog):
    path = os.path.join(folder, "d.h5")
    _write(path, "d", numpy.arange(5.0))
    with caplog.at_level(logging.DEBUG, logger="spmdarray.io"):
        sp.load_hdf5(path, "d")
    text = caplog.text
    if h5py.get_config().mpi and os.environ.get("SPMDARRAY_HDF5_IO", "auto") != "serial":
        assert "parallel HDF5 (mpio driver, collective hyperslab reads)" in text, text
    else:
        assert "serial h5py (each rank reads its own hyperslab" in text, text


@pytest.mark.parametrize("below", [None, 50], ids=["default", "50"])
def test_small_datasets_load_replicated_and_large_ones_split(folder, below, comm):
    """Loads follow ``config.replicate_below``: below it the whole array on every rank, else split."""
    threshold = FIELDS["replicate_below"].default if below is None else below
    path = os.path.join(folder, "d.h5")
    small, large = reference((7, 5), "f8"), reference((13, 10) if below else (300, 220), "i4")
    _write(path, "small", small, chunks=(3, 2), compression="gzip")
    _write(path, "large", large)
    with config.set(replicate_below=threshold):
        xs = sp.load_hdf5(path, "small")
        xl = sp.load_hdf5(path, "large")
        sel = sp.load_hdf5(path, "large", select=numpy.s_[3, :7])  # a small selection of a large dataset
        ck = os.path.join(folder, "ck.h5")
        sp.checkpoint(ck, step=3, small=xs, large=xl)
        _, arrays, _ = sp.restore(ck)
    for x, expected in [
        (xs, small),
        (xl, large),
        (sel, large[3, :7]),
        (arrays["small"], small),
        (arrays["large"], large),
    ]:
        replicated = expected.size < threshold
        assert is_whole(x.layout) == replicated
        if replicated:
            # Every rank holds the whole array: its own copy equals the file's data.
            numpy.testing.assert_array_equal(x.local, expected)
            assert x.layout == Layout.replicated(expected.shape, comm.size)
        else:
            assert x.layout == Layout.balanced(expected.shape, comm.size)
        _equal(x, expected)
