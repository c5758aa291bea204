"""Values that must not depend on the rank count, bit for bit, whatever SIMD code NumPy dispatches.

NumPy picks its loops at run time (``numpy.show_runtime()``): SVML or its own
AVX-512 code, AVX2, or the scalar libm loop, and within one ufunc call a
contiguous or strided, aligned or not, whole-vector or remainder path.  Those
give different last bits for the same input, so a value that goes through
another path in a smaller block would differ between rank counts.

* Random numbers: every element of every distribution equals the whole
  array's element when it is computed in blocks cut anywhere
  (``random._counter.padded`` evens the paths out).
* Elementwise transcendental ufuncs on distributed arrays equal NumPy on the
  gathered array, for contiguous, strided and reversed views at any rank count.

CI runs this file under several ``NPY_DISABLE_CPU_FEATURES`` settings
(``tests/run_all.sh``, step "determinism").
"""

import numpy
import pytest
from helpers import real_gpu, ref
from test_random_distributions import DISTS, _method

import spmdarray as np
from spmdarray.random import _SerialGenerator
from spmdarray.random._counter import PAD, padded


class _Blocks(_SerialGenerator):
    """The serial reference computed block by block, cut at ``cuts`` along axis 0."""

    __slots__ = ()
    cuts: tuple[int, ...] = ()

    def _materialise(self, shape, dtype, fill, params, comm):
        out = numpy.empty(shape, dtype)
        n = shape[0]
        edges = [0, *[c for c in type(self).cuts if 0 < c < n], n]
        for a, b in zip(edges[:-1], edges[1:]):
            blocks = [
                p if numpy.ndim(p) == 0 else numpy.ascontiguousarray(numpy.broadcast_to(p, shape)[a:b]) for p in params
            ]
            out[a:b] = fill(((a, b), *((0, m) for m in shape[1:])), numpy, blocks)
        return out


def _bits(x):
    x = numpy.ascontiguousarray(x)
    return x.view(numpy.uint8).reshape(x.shape + (-1,)) if x.ndim else x.tobytes()


def _same_bits(got, want):
    """The gathered ``got`` has ``want``'s dtype, shape and bytes.  Collective."""
    g = numpy.asarray(got)
    assert g.dtype == want.dtype and g.shape == want.shape
    bad = numpy.flatnonzero((_bits(g) != _bits(want)).reshape(want.size, -1).any(axis=1))
    assert bad.size == 0, f"{bad.size} elements differ in their bits, the first at flat indices {bad[:10].tolist()}"


def _check_blocks(draw):
    """``draw(generator)`` in one piece and cut into blocks at 24 sets of cut points: the same bytes."""
    rs = numpy.random.default_rng(5)
    want = draw(_SerialGenerator(2024, draw=5))
    n = want.shape[0]
    for trial in range(24):
        _Blocks.cuts = tuple(sorted(set(rs.integers(1, n, size=1 + trial % 9).tolist())))
        got = draw(_Blocks(2024, draw=5))
        bad = numpy.flatnonzero((_bits(got) != _bits(want)).reshape(n, -1).any(axis=1))
        assert bad.size == 0, f"cuts {_Blocks.cuts}: elements {bad[:10].tolist()} differ"


@pytest.mark.parametrize("name", sorted(DISTS))
def test_every_distribution_is_the_same_in_blocks_cut_anywhere(name):
    _check_blocks(lambda g: getattr(g, _method(name))(*DISTS[name], size=(2 * PAD + 37,)))


def test_multivariate_normal_is_the_same_in_blocks_cut_anywhere():
    cov = numpy.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
    _check_blocks(lambda g: g.multivariate_normal([1.0, -2.0, 0.5], cov, size=(PAD + 29,)))


def test_padded_repeats_the_last_entry_to_whole_vectors():
    for n in (1, PAD - 1, PAD, PAD + 1, 3 * PAD + 5):
        a = numpy.arange(n) * 3
        p = padded(a)
        assert p.shape[0] % PAD == 0 and p.shape[0] - n < PAD
        assert (p[:n] == a).all() and (p[n:] == a[-1]).all()
    assert padded(numpy.arange(0)).shape == (0,)


_UNARY = ["exp", "log", "log1p", "expm1", "sin", "cos", "tan", "arctan", "arcsinh", "cbrt", "exp2", "log10"]


@pytest.mark.skipif(real_gpu(), reason="device math differs from NumPy's in the last bits (docs/random.md)")
@pytest.mark.parametrize("name", _UNARY)
def test_transcendental_ufuncs_match_numpy_bit_for_bit_in_any_view(name):
    f = getattr(numpy, name)
    base = numpy.abs(ref((203, 7), seed=3)) + 0.25
    x = np.asarray(base)
    for view, ref_view in ((x, base), (x[::3], base[::3]), (x[::-1, 1::2], base[::-1, 1::2]), (x.T, base.T)):
        _same_bits(getattr(np, name)(view), f(ref_view))


@pytest.mark.skipif(real_gpu(), reason="device math differs from NumPy's in the last bits (docs/random.md)")
def test_power_and_arctan2_match_numpy_bit_for_bit():
    a = numpy.abs(ref((131, 5), seed=4)) + 0.5
    b = ref((131, 5), seed=6)
    x, y = np.asarray(a), np.asarray(b)
    _same_bits(x**y, a**b)
    _same_bits(x[::2] ** 0.37, a[::2] ** 0.37)
    _same_bits(np.arctan2(y[::-1], x), numpy.arctan2(b[::-1], a))
