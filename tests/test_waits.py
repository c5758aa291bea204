"""Waits per loop step: a fused statement waits once for the halos of all its operations.

``comm_stats().waits`` counts ``Waitall`` calls.  A fused expression posts one
exchange per operation that needs other ranks' cells and waits for all of
them together when it is evaluated.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq, world

import spmdarray as sp
from spmdarray.settings import config


def _heat3d(xp, A, B):
    """One step of npbench's heat_3d: two statements, B from A then A from B."""
    for src, dst in ((A, B), (B, A)):
        c = src[1:-1, 1:-1, 1:-1]
        dst[1:-1, 1:-1, 1:-1] = (
            0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
            + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
            + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2])
            + c
        )


def test_heat3d_waits_a_few_times_per_statement_not_per_operation():
    rank, size = world()
    n = 26
    rng = numpy.random.default_rng(0)
    a0, b0 = rng.random((n, n, n)), rng.random((n, n, n))
    A, B = sp.array(a0), sp.array(b0)
    with config.set(fuse=True, fuse_min_size=1000):
        _heat3d(sp, A, B)
        sp.sync()
        with sp.comm_stats() as s:
            for _ in range(2):
                _heat3d(sp, A, B)
            sp.sync()
    for _ in range(3):
        _heat3d(numpy, a0, b0)
    assert_eq(A, a0, exact=True)
    assert_eq(B, b0, exact=True)
    if size == 1:
        assert s.waits == 0 and s.messages_sent == 0
    else:
        # Per statement: one wait for the halos of all 19 operations, and at 3 ranks one
        # more for the assignment (computed on another layout there); waiting once per
        # operation made up to 6 per statement.
        assert 0 < s.waits <= 3 * 2 * 2, s.waits
        if size == 2:  # computed where the assignment lands: one wait per statement, the minimum
            assert s.waits == 2 * 2, s.waits


def test_jacobi_statement_waits_once():
    rank, size = world()
    n = 40
    g0 = numpy.random.default_rng(1).random((n + 2, n + 2))
    grid = sp.array(g0)
    c, no, so, e, w = grid[1:-1, 1:-1], grid[:-2, 1:-1], grid[2:, 1:-1], grid[1:-1, 2:], grid[1:-1, :-2]
    with config.set(fuse=True, fuse_min_size=100):
        c[...] = 0.25 * (no + so + e + w)
        with sp.comm_stats() as s:
            for _ in range(3):
                c[...] = 0.25 * (no + so + e + w)
            sp.sync()
    ref = g0.copy()
    rc, rn, rs, re, rw = ref[1:-1, 1:-1], ref[:-2, 1:-1], ref[2:, 1:-1], ref[1:-1, 2:], ref[1:-1, :-2]
    for _ in range(4):
        rc[...] = 0.25 * (rn + rs + re + rw)
    assert_eq(grid, ref, exact=True)
    assert s.waits == (3 if size > 1 else 0), s.waits


# --------------------------------------------------------------- channel_flow-like loop
def _channel_step(xp, u, v, p, nit):
    """One time step shaped like npbench's ``channel_flow``: statements of interior
    stencils, periodic columns (``x[1:-1, -1]`` from ``x[1:-1, 0]``), ``** 2``, a
    pressure loop over a copy, wall rows, and a convergence measure (three sums)."""
    un, vn = u.copy(), v.copy()
    b = xp.zeros_like(u)
    b[1:-1, 1:-1] = ((u[1:-1, 2:] - u[1:-1, :-2]) * 0.5 + (v[2:, 1:-1] - v[:-2, 1:-1]) * 0.5) ** 2 - (
        (u[2:, 1:-1] - u[:-2, 1:-1]) * (v[1:-1, 2:] - v[1:-1, :-2])
    )
    b[1:-1, -1] = ((u[1:-1, 0] - u[1:-1, -2]) * 0.5 + (v[2:, -1] - v[:-2, -1])) ** 2
    b[1:-1, 0] = ((u[1:-1, 1] - u[1:-1, -1]) * 0.5 + (v[2:, 0] - v[:-2, 0])) ** 2
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = 0.25 * ((pn[1:-1, 2:] + pn[1:-1, :-2]) + (pn[2:, 1:-1] + pn[:-2, 1:-1])) - 0.1 * b[1:-1, 1:-1]
        p[1:-1, -1] = 0.25 * ((pn[1:-1, 0] + pn[1:-1, -2]) + (pn[2:, -1] + pn[:-2, -1])) - 0.1 * b[1:-1, -1]
        p[1:-1, 0] = 0.25 * ((pn[1:-1, 1] + pn[1:-1, -1]) + (pn[2:, 0] + pn[:-2, 0])) - 0.1 * b[1:-1, 0]
        p[-1, :] = p[-2, :]
        p[0, :] = p[1, :]
    u[1:-1, 1:-1] = un[1:-1, 1:-1] - 0.1 * (un[1:-1, 1:-1] - un[:-2, 1:-1]) - 0.05 * (p[1:-1, 2:] - p[1:-1, :-2])
    v[1:-1, 1:-1] = vn[1:-1, 1:-1] - 0.1 * (vn[1:-1, 1:-1] - vn[:-2, 1:-1]) - 0.05 * (p[2:, 1:-1] - p[:-2, 1:-1])
    u[1:-1, -1] = un[1:-1, -1] - 0.1 * (un[2:, -1] - un[:-2, -1]) - 0.05 * (p[1:-1, 0] - p[1:-1, -2])
    u[1:-1, 0] = un[1:-1, 0] - 0.1 * (un[2:, 0] - un[:-2, 0]) - 0.05 * (p[1:-1, 1] - p[1:-1, -1])
    v[1:-1, -1] = vn[1:-1, -1] - 0.1 * (vn[2:, -1] - vn[:-2, -1]) - 0.05 * (p[2:, -1] - p[:-2, -1])
    v[1:-1, 0] = vn[1:-1, 0] - 0.1 * (vn[2:, 0] - vn[:-2, 0]) - 0.05 * (p[2:, 0] - p[:-2, 0])
    u[0, :] = 0
    u[-1, :] = 0
    return (xp.sum(u) - xp.sum(un)) / xp.sum(u)


# Per step, at 2 ranks (rows split), the dependence chain: the three statements of b
# read u and v (written last step) and the first pressure iteration's three statements
# read b in place and the copy pn of p (written last step): one wait together; each
# later iteration reads the copy of the one before: one wait; the six statements of u
# and v read p, un and vn: one wait.  The wall rows (p[-1, :] = p[-2, :]) are on one
# rank; the three sums are three collectives.  Waiting once per statement made
# 3 + 3 * nit + 6.
def _channel_waits(nit: int) -> int:
    return nit + 1


@pytest.mark.parametrize("shape", [(45, 37), (31, 24)])
def test_channel_flow_step_waits_once_per_statement_with_halos(shape):
    if sp.empty(1)._st.be.is_device:
        pytest.skip("pending writes are host-only: waits differ on a device")
    rank, size = world()
    nit, steps = 2, 3
    rng = numpy.random.default_rng(2)
    u0, v0, p0 = (rng.random(shape) for _ in range(3))
    # (fuse_min_size below the length of a column: the column statements are fused too)
    with config.set(fuse=True, fuse_min_size=16, replicate_below=0):
        u, v, p = sp.array(u0), sp.array(v0), sp.array(p0)
        d = [_channel_step(sp, u, v, p, nit)]  # warm-up: plans built, kernels compiled
        sp.sync()
        with sp.comm_stats() as s:
            for _ in range(steps):
                d.append(_channel_step(sp, u, v, p, nit))
            sp.sync()
    ref = [_channel_step(numpy, u0, v0, p0, nit) for _ in range(steps + 1)]
    for x, r in ((u, u0), (v, v0), (p, p0)):
        assert_eq(x, r, rtol=1e-13)
    numpy.testing.assert_allclose(d, ref, rtol=1e-12)
    if size == 1:
        assert s.waits == 0 and s.messages_sent == 0 and s.collectives == 0
    elif size == 2:
        assert u.layout.dims == (2, 1)  # rows split: the wall rows are on one rank
        assert s.waits == steps * _channel_waits(nit), s.waits
        assert s.collectives == steps * 3, s.collectives
        # rows 1 and n - 2 of u, v, pn (each pressure iteration) and p: one message each
        # per statement that reads them, sent once per (array, plan) and step.
        assert s.messages_sent > 0


def test_power_two_stays_in_the_fused_statement():
    """``x ** 2`` is NumPy's ``square`` (fused), so the statement waits once for the halos
    of ``a`` and ``b``; ``power`` evaluated its operand, waiting for ``a``'s halo first."""
    rank, size = world()
    rng = numpy.random.default_rng(3)
    a0, b0 = rng.random((41, 29)), rng.random((41, 29))

    def stmt(xp, a, b, out):
        a *= 0.5  # writes: the halos are stale
        b *= 0.5
        out[1:-1, :] = (a[2:, :] - a[:-2, :]) ** 2 + b[2:, :] * b[:-2, :]

    with config.set(fuse=True, fuse_min_size=64, replicate_below=0):
        a, b = sp.array(a0), sp.array(b0)
        out = sp.zeros_like(a)
        stmt(sp, a, b, out)
        sp.sync()
        with sp.comm_stats() as s:
            stmt(sp, a, b, out)
            sp.sync()
    ref = numpy.zeros_like(a0)
    for _ in range(2):
        stmt(numpy, a0, b0, ref)
    assert_eq(out, ref, exact=True)
    if size == 2:
        assert a.layout.dims == (2, 1)
        assert s.waits == 1 and s.messages_sent == 2, s


def test_sibling_columns_meet_half_way():
    """``pn[2:, -1] + pn[:-2, -1]`` is computed on ``pn[1:-1, -1]``'s layout, the layout of
    ``pn[1:-1, 0]``: the sum with that column moves nothing more (one wait)."""
    rank, size = world()
    a0 = numpy.random.default_rng(4).random((53, 7))
    with config.set(fuse=True, fuse_min_size=16, replicate_below=0):
        a = sp.array(a0)
        pn = a.copy()
        a[1:-1, -1] = (pn[1:-1, 0] + pn[1:-1, -2]) + (pn[2:, -1] + pn[:-2, -1])
        sp.sync()
        with sp.comm_stats() as s:
            pn = a.copy()
            t = pn[2:, -1] + pn[:-2, -1]
            a[1:-1, -1] = (pn[1:-1, 0] + pn[1:-1, -2]) + t
            sp.sync()
        assert t._layout == pn[1:-1, -1]._layout
    ref = a0.copy()
    for _ in range(2):
        rn = ref.copy()
        ref[1:-1, -1] = (rn[1:-1, 0] + rn[1:-1, -2]) + (rn[2:, -1] + rn[:-2, -1])
    assert_eq(a, ref, exact=True)
    if size == 2:
        assert s.waits == 1, s.waits


@pytest.mark.parametrize("dtype", ["f8", "f4", "c16", "i8", "u1", "?"])
def test_scalar_power_is_numpys(dtype):
    """``x ** e`` takes the ufunc NumPy's operator takes: bit for bit, same dtype and errors."""
    a0 = (numpy.arange(1, 91).reshape(9, 10) % 7 + 1).astype(dtype)
    with config.set(replicate_below=0):
        for e in (2, 0.5, -1, 2.0, 3, True):
            try:
                ref = a0**e
            except Exception as err:  # noqa: BLE001 - compared below
                with pytest.raises(type(err)):
                    sp.array(a0) ** e
                continue
            assert_eq(sp.array(a0) ** e, ref, exact=True)
        x, r = sp.array(a0), a0.copy()
        try:
            r **= 2
        except Exception as err:  # noqa: BLE001 - NumPy's casting error for bool
            with pytest.raises(type(err)):
                x **= 2
        else:
            x **= 2
            assert_eq(x, r, exact=True)
