"""save_hdf5: one global dataset per array, read back by plain h5py."""

from __future__ import annotations

import os
import stat

import numpy
import pytest
from helpers import world
from io_helpers import h5_read, leftovers, shared_dir

import spmdarray as sp
from spmdarray.io import _h5
from spmdarray.settings import config as _config

h5py = pytest.importorskip("h5py")

BASE = numpy.arange(9 * 7, dtype=numpy.float64).reshape(9, 7) * 0.5


@pytest.fixture
def folder():
    with shared_dir() as d:
        yield d


def _cases():
    a = sp.array(BASE)
    return {
        "base": (a, BASE),
        "strided": (a[1::2, ::3], BASE[1::2, ::3]),
        "reversed": (a[::-1, 5:0:-2], BASE[::-1, 5:0:-2]),
        "transposed": (a.T, BASE.T),
        "row": (a[4], BASE[4]),
        "column": (a[:, 3], BASE[:, 3]),
        "replicated": (a.sum(axis=0), BASE.sum(axis=0)),
        "kept_dims": (a.max(axis=1, keepdims=True), BASE.max(axis=1, keepdims=True)),
        "scalar": (a.sum(), BASE.sum()),
        "empty": (a[3:3], BASE[3:3]),
        "numpy": (BASE[:2], BASE[:2]),
        "ints": (sp.arange(23, dtype=numpy.int16), numpy.arange(23, dtype=numpy.int16)),
        "bools": (a > 10, BASE > 10),
        "complex": (a * 1j, BASE * 1j),
        "grid3d": (sp.arange(5 * 4 * 6.0).reshape(5, 4, 6), numpy.arange(5 * 4 * 6.0).reshape(5, 4, 6)),
    }


def test_every_layout_round_trips_through_h5py(folder):
    path = os.path.join(folder, "out.h5")
    cases = _cases()
    sp.save_hdf5(path, {k: x for k, (x, _) in cases.items()})
    for name, (_, expected) in cases.items():
        got = h5_read(path, name)
        assert got.shape == numpy.shape(expected), name
        numpy.testing.assert_array_equal(got, expected, err_msg=name)
    assert leftovers(folder) == []


def test_each_element_is_written_once(folder, monkeypatch, comm):
    written = {"n": 0}
    real = _h5.write_slab

    def counting(dset, vmap, box, data, dxpl):
        if data is not None:
            written["n"] += data.size
        return real(dset, vmap, box, data, dxpl)

    monkeypatch.setattr(_h5, "write_slab", counting)
    monkeypatch.setattr(sp.config, "io_buffer_bytes", 48)
    cases = _cases()
    sp.save_hdf5(os.path.join(folder, "out.h5"), {k: x for k, (x, _) in cases.items()})
    total = comm.allreduce(written["n"])
    assert total == sum(numpy.size(e) for _, e in cases.values())


def test_attributes_and_filters_pass_through(folder):
    path = os.path.join(folder, "out.h5")
    a = sp.arange(40 * 30, dtype=numpy.float32).reshape(40, 30)
    attrs = {"dt": 0.25, "name": "run 7", "grid": numpy.array([40, 30]), "n": 3}
    sp.save_hdf5(
        path,
        {"a": a, "b": a[::2], "s": sp.array(4.0)},
        attrs=attrs,
        chunks={"a": (8, 16), "b": True},
        compression="gzip",
        compression_opts=6,
        shuffle=True,
        fletcher32=True,
    )
    with h5py.File(path, "r") as f:
        assert f["a"].chunks == (8, 16)
        assert f["b"].chunks is not None
        for name in ("a", "b"):
            d = f[name]
            assert (d.compression, d.compression_opts, d.shuffle, d.fletcher32) == ("gzip", 6, True, True)
        assert f["s"].chunks is None  # scalars are stored contiguous
        if h5py.version.version_tuple[:2] >= (3, 5):  # every element is written: no fill values first
            assert f["a"].id.get_create_plist().get_fill_time() == h5py.h5d.FILL_TIME_NEVER
        assert f.attrs["dt"] == 0.25 and f.attrs["name"] == "run 7" and f.attrs["n"] == 3
        numpy.testing.assert_array_equal(f.attrs["grid"], [40, 30])
        numpy.testing.assert_array_equal(f["a"][...], numpy.arange(40 * 30, dtype=numpy.float32).reshape(40, 30))
        numpy.testing.assert_array_equal(f["b"][...], numpy.arange(40 * 30, dtype=numpy.float32).reshape(40, 30)[::2])


def test_overwrite_replaces_and_the_file_has_the_usual_mode(folder):
    path = os.path.join(folder, "out.h5")
    sp.save_hdf5(path, {"a": sp.zeros(5)})
    sp.save_hdf5(path, {"b": sp.ones(3)}, overwrite=True)
    with h5py.File(path, "r") as f:
        assert list(f) == ["b"]
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~mask
    assert leftovers(folder) == []


def test_groups_in_names_and_save_then_load(folder):
    path = os.path.join(folder, "out.h5")
    u = sp.arange(12.0).reshape(3, 4)
    sp.save_hdf5(path, {"fields/u": u, "fields/v": -u})
    numpy.testing.assert_array_equal(numpy.asarray(sp.load_hdf5(path, "fields/v")), -numpy.arange(12.0).reshape(3, 4))


def test_arrays_on_a_sub_communicator(folder, comm):
    n = max(1, comm.size - 1)
    sub = comm.Split(0 if comm.rank < n else 1, comm.rank)
    path = os.path.join(folder, "out.h5")
    if comm.rank < n:
        x = sp.arange(17.0, comm=sub)
        sp.save_hdf5(path, {"x": x})
    comm.Barrier()
    numpy.testing.assert_array_equal(h5_read(path, "x"), numpy.arange(17.0))
    sub.Free()


def test_the_io_path_is_chosen_from_the_h5py_build(monkeypatch):
    monkeypatch.setattr(_config, "hdf5_io", "auto")
    assert _h5.parallel() == bool(h5py.get_config().mpi)
    monkeypatch.setattr(_config, "hdf5_io", "serial")
    assert _h5.parallel() is False
    monkeypatch.setattr(_config, "hdf5_io", "sideways")
    with pytest.raises(ValueError, match="use auto, serial or parallel"):
        _h5.parallel()
    if not h5py.get_config().mpi:
        monkeypatch.setattr(_config, "hdf5_io", "parallel")
        with pytest.raises(RuntimeError, match="built without MPI"):
            _h5.parallel()


def test_world_size_is_what_the_tests_assume():
    assert world()[1] >= 1
