"""Boolean masks and index arrays on the layout of the array they index (mandelbrot2's loop).

``x[mask]`` with ``x`` and the mask on one layout whose rank order is C order
compresses each rank's own block: one all-gather of the counts, none for a
second array selected by the same unwritten mask, and no point-to-point
message.  ``N[xi, yi] = v`` with index arrays (and value) on one layout is
computed there.  NumPy is the reference.  Run serially and under
``mpiexec -n 2/3/4``.
"""

import numpy
import pytest
from helpers import assert_eq, world

import spmdarray as sp
from spmdarray.routines.indexing.routing import _rows_in_rank_order


@pytest.mark.parametrize("shape", [(40,), (7,), (2,), (9, 4), (3, 5, 2), (12, 3, 2)])
@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_masked_selection_matches_numpy_and_sends_nothing(shape, density):
    rng = numpy.random.default_rng(5)
    a = rng.random(shape)
    b = (rng.random(shape) * 10).astype(numpy.int64)
    m = rng.random(shape) < density
    x, y, k = sp.asarray(a), sp.asarray(b), sp.asarray(m)
    sp.sync()
    with sp.comm_stats() as s:
        gx, gy = x[k], y[k]
    assert_eq(gx, a[m], exact=True)
    assert_eq(gy, b[m], exact=True)
    if len(shape) == 1 or _rows_in_rank_order(x.layout):  # 1-D arrays always are
        assert s.messages_sent == 0
        assert s.collectives == (1 if world()[1] > 1 else 0)  # the counts, once for both selections
    k[...] = ~k  # a written mask: counted again
    assert_eq(x[k], a[~m], exact=True)


def test_a_chain_of_compressions_and_scatters_as_in_mandelbrot():
    n = 23
    rng = numpy.random.default_rng(11)
    xi_n, yi_n = numpy.mgrid[0:n, 0:n]
    c_n = (rng.random((n, n)) * 4 - 2).reshape(-1)
    out_n = numpy.zeros((n, n), numpy.int64)
    xi_n, yi_n = xi_n.reshape(-1), yi_n.reshape(-1)
    xi, yi, c = sp.asarray(xi_n), sp.asarray(yi_n), sp.asarray(c_n)
    out = sp.zeros((n, n), numpy.int64)
    z, z_n = sp.zeros(c.shape), numpy.zeros(c_n.shape)
    messages = 0
    for i in range(6):
        z = z * z + c
        z_n = z_n * z_n + c_n
        big, big_n = abs(z) > 2.0, abs(z_n) > 2.0
        with sp.comm_stats() as s:
            out[xi[big], yi[big]] = i + 1
        out_n[xi_n[big_n], yi_n[big_n]] = i + 1
        messages += s.messages_sent
        keep, keep_n = ~big, ~big_n
        z, xi, yi, c = z[keep], xi[keep], yi[keep], c[keep]
        z_n, xi_n, yi_n, c_n = z_n[keep_n], xi_n[keep_n], yi_n[keep_n], c_n[keep_n]
    assert_eq(out, out_n, exact=True)
    assert_eq(z, z_n, exact=True)
    assert_eq(xi, xi_n, exact=True)
    # The index arrays and the value share their layout: the scatter is one all-to-all
    # (collective), with no halo or redistribution message to line them up first.
    assert messages == 0


def test_a_mask_on_another_layout_takes_the_general_path():
    a = numpy.arange(30.0).reshape(5, 6)
    m = a % 4 == 1
    x = sp.asarray(a)
    k = sp.asarray(m.T).T  # the transpose of a split array: another layout
    assert_eq(x[k], a[m], exact=True)
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[sp.asarray(m[:4])]
