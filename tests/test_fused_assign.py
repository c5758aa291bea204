"""A deferred chain assigned into a view of the storage it reads (the seed stencil,
``center[:] = (center + north + east + west + south) * 0.2``) is computed as one
fused chain at every rank count, 1 included: none of its intermediate values is
computed on its own.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_fused_assign.py``.
"""

import numpy
import pytest
from helpers import assert_eq

import spmdarray as sp
from spmdarray.fusion import record

N = 520  # (a 522 x 522 grid: past replicate_below, so split and deferred)


def _views(g):
    return g[1:-1, 1:-1], g[:-2, 1:-1], g[1:-1, 2:], g[1:-1, :-2], g[2:, 1:-1]


@pytest.mark.parametrize("key", [slice(None), Ellipsis], ids=["[:]", "[...]"])
def test_stencil_chain_assigned_into_its_operand_is_one_chain(monkeypatch, key):
    assert (N + 2) ** 2 >= sp.config.replicate_below
    ref = numpy.zeros((N + 2, N + 2))
    ref[0, :] = 1.0
    grid = sp.asarray(ref)
    c, n, e, w, s = _views(grid)
    rc, rn, re, rw, rs = _views(ref)
    c[key] = (c + n + e + w + s) * 0.2  # (warm-up: kernels made here)
    rc[key] = (rc + rn + re + rw + rs) * 0.2
    sp.sync()
    alone = []
    real = record.Node.materialise
    monkeypatch.setattr(record.Node, "materialise", lambda self, x: alone.append(1) or real(self, x))
    for _ in range(2):
        c[key] = (c + n + e + w + s) * 0.2
        rc[key] = (rc + rn + re + rw + rs) * 0.2
    sp.sync()
    assert alone == [], f"{len(alone)} intermediate values computed on their own"
    assert_eq(grid, ref)
