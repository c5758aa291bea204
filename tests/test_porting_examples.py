"""docs/porting.md: the mpi4py program and its spmdarray port give the same field, bit for bit."""

import os

import numpy
import pytest
from io_helpers import TESTS, run_mpi, shared_dir

EXAMPLES = os.path.join(os.path.dirname(TESTS), "examples")
_RUN = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"


@pytest.fixture(scope="module", autouse=True)
def serial_only():
    from mpi4py import MPI

    if MPI.COMM_WORLD.size > 1:
        pytest.skip("launches mpiexec itself: runs in the serial pass")


@pytest.mark.parametrize("nprocs", [2, 3])
def test_port_matches_the_mpi4py_program(nprocs):
    with shared_dir() as d:
        fields = {}
        for name, script, extra in (
            ("before", "heat_mpi4py.py", ()),
            ("after", "heat_spmdarray.py", ()),
            ("blocks", "heat_spmdarray.py", ("--from-local",)),
        ):
            out_path = os.path.join(d, f"{name}.npy")
            args = (os.path.join(EXAMPLES, script), "-N", "41", "-M", "23", "--steps", "12", "--out", out_path, *extra)
            _, out = run_mpi(nprocs, _RUN, *args, timeout=120)
            fields[name] = (numpy.load(out_path), out.split("checksum")[1].split()[0])
    before = fields["before"][0]
    assert before.shape == (41, 23)
    for name in ("after", "blocks"):
        numpy.testing.assert_array_equal(fields[name][0], before)
        assert fields[name][1] == fields["before"][1]
