"""The result of an elementwise operation takes the layout that moves the fewest bytes, whatever the operand order."""

import os

import numpy
import pytest

import spmdarray as np


def _moved(fn):
    """(result gathered, messages, bytes) sent by all ranks together while running ``fn``."""
    with np.comm_stats() as st:
        res = fn()
        np.sync()
    comm = np.arange(1.0).comm
    return numpy.asarray(res), comm.allreduce(st.messages_sent), comm.allreduce(st.bytes_sent)


@pytest.mark.parametrize("fuse", [False, True])
def test_operand_order_moves_the_same_minimum(fuse):
    n = 12  # divisible by 1, 2, 3 and 4: u[:-1] has the balanced layout of 11 elements
    vn = numpy.linspace(1.0, 2.0, n - 1)
    un = numpy.arange(float(n)) ** 2
    got = []
    with np.config.set(fuse=fuse, fuse_min_size=1):
        vm = np.linspace(1.0, 2.0, n - 1)
        for k in range(2):
            u = np.arange(float(n)) ** 2  # fresh: no halo cached from the other order
            S, C = u[1:], u[:-1]
            exprs = (lambda: vm * (S - C), lambda: -vm * (C - S))  # noqa: B023 - called at once
            got.append(_moved(exprs[k]))
    size = vm.comm.Get_size()
    (r1, m1, b1), (r2, m2, b2) = got
    # The minimum: one element across each inner boundary (S onto C's layout), nothing for vm.
    assert (m1, b1) == (m2, b2) == (size - 1, 8 * (size - 1))
    numpy.testing.assert_array_equal(r1, vn * (un[1:] - un[:-1]))
    numpy.testing.assert_array_equal(r2, -vn * (un[:-1] - un[1:]))


@pytest.mark.skipif(
    os.environ.get("SPMDARRAY_BACKEND") == "cupy",
    reason="from_local of a NumPy block makes a NumPy-backend array; the other operands here are on the device backend",
)
def test_three_operands_move_the_odd_one_out():
    # x has uneven blocks (from_local); lo and hi are balanced.  Computing on x's
    # layout would move lo and hi; the balanced layout moves x only.
    comm = np.arange(1.0).comm
    rank, size = comm.Get_rank(), comm.Get_size()
    ext = [2 + 3 * r for r in range(size)]  # uneven; rank 0 smallest
    n = sum(ext)
    full = numpy.sin(numpy.arange(float(n)))
    off = sum(ext[:rank])
    x = np.from_local(full[off : off + ext[rank]].copy())
    lo, hi = np.full(n, -0.5), np.linspace(0.2, 0.9, n)
    res, msgs, nbytes = _moved(lambda: np.clip(x, lo, hi))
    res2, msgs2, nbytes2 = _moved(lambda: np.clip(x, lo, hi) + 0)  # same, another call
    bal = numpy.array_split(numpy.arange(n), size)
    moved = sum(len(set(b) - set(range(sum(ext[:r]), sum(ext[: r + 1])))) for r, b in enumerate(bal))
    assert nbytes == 8 * moved  # x moves once, onto the balanced layout
    assert msgs <= size * (size - 1)
    numpy.testing.assert_array_equal(res, numpy.clip(full, -0.5, numpy.linspace(0.2, 0.9, n)))
    numpy.testing.assert_array_equal(res2, res)


def test_aligned_operands_move_nothing():
    a = np.arange(10.0)
    b = np.ones(10)
    res, msgs, nbytes = _moved(lambda: b * a + a)
    assert (msgs, nbytes) == (0, 0)
    numpy.testing.assert_array_equal(res, numpy.arange(10.0) + numpy.arange(10.0))
