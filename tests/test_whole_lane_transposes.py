"""Transposed views on the whole-array lane (``spmdarray.core.whole.transposed``), against NumPy.

``x.T`` and ``x.transpose(perm)`` of an array every rank holds are NumPy's
transposes of the copy; their view map is composed only when first read.
Each case runs with small arrays replicated (the lane) and with every array
split (``replicate_below=0``).  Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_whole_lane_transposes.py
"""

from __future__ import annotations

import pytest
from helpers import assert_eq, ref

import spmdarray as sp
from spmdarray.core import array as array_module
from spmdarray.core import whole
from spmdarray.settings import FIELDS, config

BELOW = [FIELDS["replicate_below"].default, 0]


@pytest.fixture(params=BELOW, ids=["replicated", "split"])
def below(request):
    with config.set(replicate_below=request.param):
        yield request.param


@pytest.mark.parametrize("perm", [None, (1, 0, 2), (2, 0, 1), (0, 2, 1)])
def test_transposes_compose_their_maps_when_first_read(below, perm, monkeypatch):
    """``x.T`` and ``x.transpose(perm)`` on the lane are NumPy's transposes of the copy; their
    view maps (made when first read) and every result equal the engine's and NumPy's,
    including transposes of views not yet composed and views of transposes."""
    a = ref((4, 5, 6))
    x = sp.array(a)
    lane = whole.local(x) is not None
    made = []
    real = whole.resolve
    monkeypatch.setattr(array_module, "resolve", lambda v, name: made.append(name) or real(v, name))
    chains = [
        (lambda t: t[1:, ::-1], lambda t: t.transpose(perm) if perm else t.T),
        (lambda t: t.transpose(perm) if perm else t.T, lambda t: t[::2, 1]),
        (lambda t: t[:, 2:4, 1:], lambda t: t.transpose(perm) if perm else t.T, lambda t: t.T),
    ]
    for chain in chains:
        got, want, r = x, x, a
        for f in chain:
            got, r = f(got), f(r)
            with config.set(whole_lane=False):
                want = f(want)
        made.clear()
        assert got.shape == r.shape and got.ndim == r.ndim
        assert_eq(got * 2.0, r * 2.0, exact=True)  # an operation reads the copy only
        if lane:
            assert made == []
        assert (got._map, got.layout) == (want._map, want.layout)
    y = sp.array(a.copy())
    t = y.transpose(perm) if perm else y.T
    t[0] = -1.0  # a write through the transpose is seen by the base
    b = a.copy()
    (b.transpose(perm) if perm else b.T)[0] = -1.0
    assert_eq(y, b, exact=True)
    with pytest.raises(ValueError):
        x.transpose((0, 0, 1))
