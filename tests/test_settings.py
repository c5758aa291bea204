"""spmdarray.config: one object for every setting, read once, scoped overrides, agreed across ranks."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy
import pytest
from helpers import world
from spmdarray.comm import Context

import spmdarray as sp
from spmdarray.settings import FIELDS, Settings, SettingsDisagree, config

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


def test_every_variable_is_read_into_one_object():
    env = {f.env: "" for f in FIELDS.values() if f.env}
    s = Settings(env)  # empty values keep the defaults
    assert s.as_dict() == {k: f.default for k, f in FIELDS.items()}
    s = Settings(
        {
            "SPMDARRAY_FUSE": "off",
            "SPMDARRAY_FUSE_MIN_SIZE": "7",
            "SPMDARRAY_FUSE_OVERLAP": "1",
            "SPMDARRAY_BACKEND": " NumPy ",
            "SPMDARRAY_HDF5_IO": "serial",
            "SPMDARRAY_DEVICE": "0,1",
        }
    )
    assert (s.fuse, s.fuse_min_size, s.fuse_overlap, s.backend, s.hdf5_io, s.device) == (
        False,
        7,
        True,
        "numpy",
        "serial",
        "0,1",
    )
    with pytest.raises(ValueError, match="SPMDARRAY_FUSE_MIN_SIZE='many'"):
        Settings({"SPMDARRAY_FUSE_MIN_SIZE": "many"})


def test_no_module_reads_the_environment_itself():
    import spmdarray as pkg

    root = os.path.dirname(pkg.__file__)
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py") and f != "settings.py":
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    text = fh.read()
                assert "os.environ" not in text and "getenv" not in text, os.path.join(d, f)


def test_set_is_scoped_in_a_with_block_and_permanent_as_a_call():
    old = config.fuse_min_size
    with sp.config.set(fuse_min_size=3, ghost_width=2) as cfg:
        assert cfg is config and (config.fuse_min_size, config.ghost_width) == (3, 2)
    assert (config.fuse_min_size, config.ghost_width) == (old, 1)
    try:
        sp.config.set(fuse_min_size=5)
        assert config.fuse_min_size == 5
    finally:
        sp.config.set(fuse_min_size=old)
    with pytest.raises(TypeError, match="unknown setting.*fuse_min_sise.*fuse_min_size"):
        sp.config.set(fuse_min_sise=1)


def test_settings_change_behaviour_through_config():
    x = sp.arange(20000.0)
    with sp.config.set(fuse=True, fuse_min_size=0):
        assert (x + 1)._s.deferred
    with sp.config.set(fuse=False):
        assert not (x + 1)._s.deferred
    with sp.config.set(ghost_width=2):
        g = sp.zeros((8, 8))._st.ghost
    assert set(g) == ({2} if world()[1] > 1 else {0}) or set(g) == {0, 2}
    numpy.testing.assert_array_equal(numpy.asarray(x + 1), numpy.arange(20000.0) + 1)


def test_agreed_hash_follows_agreed_settings_only():
    h = config.agreed_hash()
    with sp.config.set(fuse_jit_after=99):  # a local setting
        assert config.agreed_hash() == h
    with sp.config.set(fuse_min_size=config.fuse_min_size + 1):
        assert config.agreed_hash() != h
    assert 0 <= h < 1 << 62


def test_settings_table_in_docs_is_current():
    gen = os.path.join(DOCS, "gen_settings.py")
    if not os.path.exists(gen):
        pytest.skip("docs/ not beside tests/")
    subprocess.run([sys.executable, gen, "--check"], check=True)


@pytest.mark.mpi(min_size=2)
def test_a_setting_that_differs_raises_on_every_rank_and_names_it():
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    Context(comm)  # agreeing settings: no error
    with sp.config.set(fuse_min_size=100 + (rank == 1), reduce_gather_bytes=1 << 20):
        with pytest.raises(SettingsDisagree, match=r"config.fuse_min_size is 100 on rank 0, 101 on rank 1"):
            Context(comm)
    Context(comm)
