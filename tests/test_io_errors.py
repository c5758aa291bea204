"""Bad input to the HDF5 functions: a clear error on every rank, and no file left behind."""

from __future__ import annotations

import os

import numpy
import pytest
from io_helpers import leftovers, on_rank0, same_on_every_rank, shared_dir

import spmdarray as sp

h5py = pytest.importorskip("h5py")


@pytest.fixture
def folder():
    with shared_dir() as d:

        def setup():
            with h5py.File(os.path.join(d, "data.h5"), "w") as f:
                f.create_dataset("d", data=numpy.arange(20.0).reshape(4, 5))
                f.create_group("g").create_dataset("inner", data=numpy.zeros(3))
                f.create_dataset("names", data=["a", "bc"], dtype=h5py.string_dtype())
            with open(os.path.join(d, "notes.txt"), "w") as f:
                f.write("not HDF5\n")

        on_rank0(setup)
        sp.checkpoint(os.path.join(d, "ck.h5"), step=5, u=sp.zeros((4, 5)), n=sp.arange(3))
        yield d


def _p(folder, *parts):
    return os.path.join(folder, *parts)


CASES = {
    "load: missing file": (
        lambda d: sp.load_hdf5(_p(d, "nope.h5"), "d"),
        FileNotFoundError,
        "load_hdf5: no file '.*nope.h5'",
    ),
    "load: not HDF5": (lambda d: sp.load_hdf5(_p(d, "notes.txt"), "d"), OSError, "is not an HDF5 file"),
    "load: missing dataset": (
        lambda d: sp.load_hdf5(_p(d, "data.h5"), "e"),
        sp.io.DatasetNotFoundError,
        "has no dataset 'e'; datasets in the file: 'd', 'g/inner', 'names'",
    ),
    "load: a group": (lambda d: sp.load_hdf5(_p(d, "data.h5"), "g"), TypeError, "'g' .* is a group"),
    "load: variable-length strings": (
        lambda d: sp.load_hdf5(_p(d, "data.h5"), "names"),
        TypeError,
        "variable-length string .* fixed-length strings",
    ),
    "load: select out of range": (
        lambda d: sp.load_hdf5(_p(d, "data.h5"), "d", select=numpy.s_[:, 7]),
        IndexError,
        r"select=.* does not fit a dataset of shape \(4, 5\)",
    ),
    "load: dataset and name": (
        lambda d: sp.load_hdf5(h5py.File(_p(d, "data.h5"), "r")["d"], "d"),
        TypeError,
        "pass either the dataset alone",
    ),
    "save: file exists": (
        lambda d: sp.save_hdf5(_p(d, "data.h5"), {"x": sp.zeros(3)}),
        FileExistsError,
        "already exists; pass overwrite=True",
    ),
    "save: missing directory": (
        lambda d: sp.save_hdf5(_p(d, "no", "such", "out.h5"), {"x": sp.zeros(3)}),
        FileNotFoundError,
        "directory .* does not exist; create it first",
    ),
    "save: directory is a file": (
        lambda d: sp.save_hdf5(_p(d, "notes.txt", "out.h5"), {"x": sp.zeros(3)}),
        NotADirectoryError,
        "is not a directory",
    ),
    "save: path is a directory": (
        lambda d: sp.save_hdf5(d, {"x": sp.zeros(3)}, overwrite=True),
        IsADirectoryError,
        "is a directory; give a file name",
    ),
    "save: chunks larger than the array": (
        lambda d: sp.save_hdf5(_p(d, "out.h5"), {"x": sp.zeros((3, 4))}, chunks=(8, 8)),
        ValueError,
        r"cannot create dataset 'x' \(shape \(3, 4\), dtype float64, options \{'chunks': \(8, 8\)\}\)",
    ),
    "save: unknown filter": (
        lambda d: sp.save_hdf5(_p(d, "out.h5"), {"x": sp.zeros(4)}, compression="zip9"),
        ValueError,
        "cannot create dataset 'x'",
    ),
    "save: unicode dtype": (
        lambda d: sp.save_hdf5(_p(d, "out.h5"), {"x": numpy.array(["ab", "c"])}),
        TypeError,
        r"dtype <U2, which HDF5 cannot store as is; convert it with a.astype\('S'\)",
    ),
    "save: bad attribute": (
        lambda d: sp.save_hdf5(_p(d, "out.h5"), {"x": sp.zeros(4)}, attrs={"f": print}),
        TypeError,
        "cannot store attribute 'f'",
    ),
    "restore: missing file": (lambda d: sp.restore(_p(d, "nope.h5")), FileNotFoundError, "restore: no file"),
    "restore: not a checkpoint": (
        lambda d: sp.restore(_p(d, "data.h5")),
        ValueError,
        "is not a spmdarray checkpoint .* read its datasets with spmdarray.load_hdf5",
    ),
    "restore: shape": (
        lambda d: sp.restore(_p(d, "ck.h5"), expect={"u": ((5, 4), None)}),
        ValueError,
        r"array 'u' in .* has shape \(4, 5\), expected \(5, 4\)",
    ),
    "restore: dtype": (
        lambda d: sp.restore(_p(d, "ck.h5"), expect={"n": sp.zeros(3, dtype=numpy.int32)}),
        TypeError,
        "array 'n' in .* has dtype int64, expected int32",
    ),
    "restore: missing array": (
        lambda d: sp.restore(_p(d, "ck.h5"), expect={"v": ((4, 5), "f8")}),
        KeyError,
        r"has no array 'v'; it holds \['n', 'u'\]",
    ),
    "checkpoint: reserved attribute": (
        lambda d: sp.checkpoint(_p(d, "ck2.h5"), attrs={"spmdarray_step": 1}, u=sp.zeros(2)),
        ValueError,
        "reserved",
    ),
    "checkpoint: step not an integer": (
        lambda d: sp.checkpoint(_p(d, "ck2.h5"), step=1.5, u=sp.zeros(2)),
        TypeError,
        "step must be an integer, got float 1.5",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_on_every_rank_and_no_file_left(folder, name, comm):
    call, cls, pattern = CASES[name]
    before = sorted(os.listdir(folder))
    comm.Barrier()  # every rank has looked before rank 0 starts writing
    with pytest.raises(cls, match=pattern) as info:
        call(folder)
    same_on_every_rank(f"{type(info.value).__name__}: {info.value}")
    assert sorted(os.listdir(folder)) == before
    assert leftovers(folder) == []
    # The ranks are still in step: a collective works afterwards.
    assert float(sp.arange(4.0).sum()) == 6.0


def test_unwritable_directory(folder):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root can write anywhere; the missing-directory cases cover the error path")
    locked = _p(folder, "locked")
    on_rank0(lambda: os.mkdir(locked, 0o500))
    with pytest.raises(PermissionError, match="cannot create a file in .*locked.* choose a directory you can write to"):
        sp.save_hdf5(_p(locked, "out.h5"), {"x": sp.zeros(3)})
    assert os.listdir(locked) == []
