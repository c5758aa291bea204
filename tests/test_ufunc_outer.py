"""``ufunc.outer`` on spmdarray arrays, against NumPy.

Run serially and under ``mpiexec -n 2/3/4``; every body is SPMD and compares the
gathered result with NumPy's, dtype included.
"""

import numpy
import pytest
from helpers import assert_eq, ref, world
from spmdarray.decomposition import Layout

import spmdarray as sp

BINARY = sorted(n for n in dir(numpy) if isinstance(getattr(numpy, n), numpy.ufunc) and getattr(numpy, n).nin == 2)
BINARY = [n for n in BINARY if getattr(numpy, n).signature is None]


def _operands(ufunc):
    """NumPy operands of the first dtype family ``ufunc.outer`` accepts (uneven shapes)."""
    for dtype in (float, numpy.int64, bool):
        a, b = ref((5,), dtype), ref((3, 2), dtype, seed=1)
        if dtype is numpy.int64:
            a, b = numpy.abs(a) % 7 + 1, numpy.abs(b) % 5  # shifts and powers in range
        try:
            with numpy.errstate(all="ignore"):
                return a, b, ufunc.outer(a, b)
        except TypeError:
            continue
    pytest.skip(f"numpy.{ufunc.__name__}.outer takes none of float, int64, bool")


@pytest.mark.parametrize("name", BINARY)
def test_outer_of_every_binary_ufunc_matches_numpy(name):
    ufunc = getattr(numpy, name)
    a, b, expected = _operands(ufunc)
    with numpy.errstate(all="ignore"):
        got = ufunc.outer(sp.array(a), sp.array(b))
    for g, e in zip(got, expected) if ufunc.nout > 1 else [(got, expected)]:
        assert_eq(g, e, rtol=1e-12)
        _, size = world()
        assert g.layout == Layout.balanced(e.shape, size)


@pytest.mark.parametrize(
    ("sa", "sb"),
    [((7,), (4,)), ((2, 3), (5,)), ((), (6,)), ((4,), ()), ((0,), (3,)), ((3,), (1, 0)), ((1,), (9, 1))],
)
def test_outer_shapes_mixed_operands_match_numpy(sa, sb):
    a, b = ref(sa), ref(sb, seed=2)
    expected = numpy.subtract.outer(a, b)
    # spmdarray on either side, NumPy arrays, Python scalars and lists on the other
    assert_eq(numpy.subtract.outer(sp.array(a), sp.array(b)), expected)
    assert_eq(numpy.subtract.outer(sp.array(a), b), expected)
    assert_eq(numpy.subtract.outer(a.tolist(), sp.array(b)), expected)


def test_outer_of_views_like_floyd_warshall():
    p = ref((9, 9))
    x = sp.array(p)
    for k in (0, 4, 8):
        numpy.minimum(x, numpy.add.outer(x[:, k], x[k, :]), out=x)
        p = numpy.minimum(p, numpy.add.outer(p[:, k], p[k, :]))
        assert_eq(x, p)


def test_outer_out_where_dtype_match_numpy():
    a, b = ref((6,)), ref((4,), seed=3)
    mask = ref((6, 4), bool, seed=4)
    expected = numpy.full((6, 4), -1.0)
    numpy.multiply.outer(a, b, out=expected, where=mask)
    out = sp.full((6, 4), -1.0)
    res = numpy.multiply.outer(sp.array(a), sp.array(b), out=out, where=mask)
    assert res is out
    assert_eq(out, expected)
    assert_eq(
        numpy.add.outer(sp.array(a), sp.array(b), dtype=numpy.float32), numpy.add.outer(a, b, dtype=numpy.float32)
    )


def test_outer_errors_are_numpys():
    x = sp.array(ref((3,)))
    with pytest.raises(ValueError, match="binary"):
        numpy.sin.outer(x, x)
    with pytest.raises(TypeError, match="non-trivial signature"):
        numpy.matmul.outer(x, x)
    with pytest.raises(ValueError, match="broadcast"):
        numpy.add.outer(x, x, out=sp.empty((3, 4)))
    with pytest.raises(TypeError):
        numpy.bitwise_and.outer(x, x)
