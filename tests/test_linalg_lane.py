"""``spmdarray.linalg`` on matrices every rank holds whole: NumPy's own routines on the copies.

A replicated matrix, or any matrix in a one-rank run, goes to NumPy's
routine on each rank's copy (``spmdarray.linalg._batch.on_lane``), with
nothing copied into a batch layout and nothing sent.  Run at 1, 2, 3 and 4
ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_linalg_lane.py
"""

import numpy
import pytest
from helpers import ref, world

import spmdarray as sp
from spmdarray.settings import config


def _spd(shape, dtype):
    a = ref(shape, dtype)
    n = shape[-1]
    return (a @ numpy.conj(numpy.swapaxes(a, -1, -2)) + n * numpy.eye(n)).astype(dtype)


def _routines(linalg, x, y, z) -> dict:
    return {
        "cholesky": linalg.cholesky(x),
        "qr": linalg.qr(y),
        "svd": linalg.svd(y, full_matrices=False),
        "eigh": linalg.eigh(x),
        "inv": linalg.inv(x),
        "det": linalg.det(x),
        "solve": linalg.solve(x, z),
    }


@pytest.mark.parametrize("below", [1 << 12, 0], ids=["replicated", "split"])
def test_matrices_every_rank_holds_are_numpys_routines_on_the_copies(monkeypatch, below):
    """``spmdarray.linalg`` on a matrix that every rank holds whole (replicated, or split over
    one rank) is NumPy's own routine on each rank's copy: NumPy's bits (LAPACK's signs for
    ``qr`` and ``svd``, not TSQR's), NumPy's result types, no collective, and no
    distributed algorithm, batch layout or scatter."""
    from spmdarray.linalg import _batch, _decomp

    if below == 0 and world()[1] > 1:
        pytest.skip("split over several ranks: the distributed algorithms")
    for name in ("_cholesky_rows", "_tsqr"):
        monkeypatch.setattr(_decomp, name, lambda *a, name=name, **k: pytest.fail(name))
    monkeypatch.setattr(_batch, "_laid_out", lambda *a: pytest.fail("batch layout"))
    spd = _spd((7, 7), numpy.float64)
    a, b = ref((9, 4)), ref((7, 3), seed=2)
    with config.set(replicate_below=below):
        x, y, z = sp.array(spd), sp.array(a), sp.array(b)
        if x._st.be.is_device:
            pytest.skip("device blocks: the general path (the lane holds host copies)")
        with sp.comm_stats() as s:
            got = _routines(sp.linalg, x, y, z)
        assert (s.collectives, s.messages_sent) == (0, 0)
    expected = _routines(numpy.linalg, spd, a, b)
    for name, e in expected.items():
        g = got[name]
        assert type(g) is type(e) if isinstance(e, (tuple, numpy.generic)) else type(g) is sp.ndarray, name
        for gi, ei in zip(g, e) if isinstance(e, tuple) else [(g, e)]:
            gi = numpy.asarray(gi)
            assert gi.dtype == ei.dtype and gi.tobytes() == numpy.asarray(ei).tobytes(), name
