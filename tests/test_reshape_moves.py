"""Reshapes of split arrays (C-order redistributions), against NumPy and the fewest bytes.

A reshape that changes how the elements fall on the ranks sends each element
whose owner changes once, from its owner to its new owner, and nothing else
(``routines.manipulation.shape._reshape_copy``, with the runs of
``decomposition.runs``).  Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q tests/test_reshape_moves.py
"""

from __future__ import annotations

import math

import numpy
import pytest
from helpers import assert_eq, block, world

import spmdarray as sp
from spmdarray.settings import config

SHAPES = [
    ((60,), (3, 4, 5)),
    ((3, 4, 5), (60,)),
    ((37, 11), (11, 37)),
    ((6, 35), (35, 6)),
    ((1024,), (2, 4, 128)),
    ((2, 4, 128), (8, 128)),
    ((5, 1, 7), (7, 5)),
    ((3, 13), (39, 1)),
    ((2, 3), (3, 2)),
    ((0, 5), (5, 0)),
    ((7,), (7, 1, 1)),
]


def _owners(lay) -> numpy.ndarray:
    """The rank sending each element (C order): its holder at coordinate 0 of replicated grid axes."""
    own = numpy.full(lay.shape, -1, numpy.int64)
    for r in range(lay.nprocs):
        c = numpy.unravel_index(r, lay.dims)
        if lay.holds(r) and all(c[k] == 0 for k in range(len(lay.dims)) if lay.is_replicated_axis(k)):
            own[tuple(slice(lo, hi) for lo, hi in lay.block(r))] = r
    return own.reshape(-1)


def _holders(lay) -> list[numpy.ndarray]:
    """Per rank, whether it holds each element (C order)."""
    out = []
    for r in range(lay.nprocs):
        h = numpy.zeros(lay.shape, bool)
        if lay.holds(r):
            h[tuple(slice(lo, hi) for lo, hi in lay.block(r))] = True
        out.append(h.reshape(-1))
    return out


@pytest.mark.parametrize("src, dst", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.int16, numpy.complex128])
def test_reshapes_equal_numpy_and_move_the_fewest_bytes(src, dst, dtype):
    a = numpy.arange(math.prod(src)).astype(dtype).reshape(src) * 3 - 7
    with config.set(replicate_below=0):
        x = sp.array(a)
        sp.sync()
        with sp.comm_stats() as s:
            y = x.reshape(dst)
            sp.sync()
    assert_eq(y, a.reshape(dst), exact=True)
    rank = world()[0]
    owners = _owners(x._layout)
    mine = owners == rank
    need = _holders(y._layout)
    expected = sum(int((mine & need[r]).sum()) for r in range(len(need)) if r != rank)
    if x._st.be.is_device:
        return  # (device blocks are staged through the host alike; the count is the host's)
    assert s.bytes_sent == expected * a.itemsize, (s.bytes_sent, expected)


@pytest.mark.parametrize("kind", ["front", "empty"])
def test_uneven_and_empty_blocks(kind):
    rank, size = world()
    n, m = 23, 6
    a = numpy.arange(n * m, dtype=float).reshape(n, m)
    if size == 1:
        counts = [n]
    elif kind == "front":
        first = n - (size - 1) * (n // (2 * size))
        counts = [first] + [n // (2 * size)] * (size - 1)
    else:
        q, r = divmod(n, size - 1)
        counts = [q + (i < r) for i in range(size - 1)] + [0]
    lo = sum(counts[:rank])
    x = sp.from_local(block(numpy.ascontiguousarray(a[lo : lo + counts[rank]])))
    for dst in [(m, n), (n * m,), (2, 3, n)]:
        assert_eq(x.reshape(dst), a.reshape(dst), exact=True)
    assert_eq(x[::-1].reshape(m, n), a[::-1].reshape(m, n), exact=True)
    assert_eq(x.T.reshape(-1), a.T.reshape(-1), exact=True)


def test_reductions_on_a_grid_reshape():
    # A reduction over one axis of an array on a 2-D process grid may be held by several ranks
    # (replicated along a grid axis); only one of them sends each element.
    a = numpy.arange(8 * 6 * 5, dtype=float).reshape(8, 6, 5)
    with config.set(replicate_below=0):
        x = sp.array(a)
        r = x.sum(axis=1)
        assert_eq(r.reshape(5, 8), a.sum(axis=1).reshape(5, 8))
        assert_eq(r.reshape(-1), a.sum(axis=1).reshape(-1))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, xp: xp.reshape(m, (6, 8)),
        lambda m, xp: xp.reshape(m, (-1,)),
        lambda m, xp: xp.reshape(m, (2, -1, 4), order="F"),
        lambda m, xp: m.reshape(6, 8),
        lambda m, xp: m.T.reshape(8, 6),
        lambda m, xp: m[::-2].reshape(-1),
        lambda m, xp: xp.ravel(m),
        lambda m, xp: xp.ravel(m.T, order="F"),
        lambda m, xp: m.reshape(xp.asarray(numpy.int64(3)), 16),
    ],
)
def test_reshapes_of_arrays_every_rank_holds(call):
    # Replicated arrays (the default replicate_below): NumPy's values and shapes, in an array
    # of their own (writing it leaves the source alone), the shape asked again and again.
    a = numpy.arange(48.0).reshape(12, 4)
    with config.set(replicate_below=1 << 18):
        m = sp.array(a)
        for _ in range(3):
            got = call(m, sp)
            assert_eq(got, call(a, numpy), exact=True)
        got[...] = -1.0
        assert_eq(m, a, exact=True)


@pytest.mark.parametrize("shape, error", [((5, 4), ValueError), ((2.5, 4), TypeError), ((-1, -1), ValueError)])
def test_reshape_errors_are_numpys_every_time(shape, error):
    a = numpy.arange(12.0)
    with config.set(replicate_below=1 << 18):
        m = sp.array(a)
        for _ in range(2):  # (errors are not remembered: each call raises)
            with pytest.raises(error) as e_np:
                a.reshape(shape)
            with pytest.raises(error) as e_sp:
                m.reshape(shape)
            assert str(e_sp.value) == str(e_np.value)
