"""Views of basic keys made of Python ints and slices (``A_col[a:b]`` in a loop), against the
general normalisation (:func:`spmdarray.decomposition.normalize_key`) and NumPy.

Pure layout math for the first test (hypothesis); the second runs under ``mpiexec -n 2/3/4`` too.
"""

from __future__ import annotations

import numpy
import pytest
from helpers import assert_eq
from hypothesis import given, settings
from hypothesis import strategies as st
from spmdarray.decomposition import ViewMap, normalize_key

import spmdarray as sp
from spmdarray.core import viewcache

BOUNDS = st.one_of(st.none(), st.integers(-9, 9))
SLICES = st.builds(slice, BOUNDS, BOUNDS, st.one_of(st.none(), st.integers(-3, 3)))


@st.composite
def _cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)))
    n = draw(st.integers(1, len(shape)))
    keys = [draw(st.one_of(st.integers(-8, 8), SLICES)) for _ in range(n)]
    return shape, tuple(keys) if n > 1 or draw(st.booleans()) else keys[0]


@settings(max_examples=800, deadline=None)
@given(_cases())
def test_plain_keys_compose_as_the_general_normalisation(case):
    shape, key = case
    vm = ViewMap.identity(shape)
    plain = viewcache._plain_key(key, shape)
    try:
        ref = vm.getitem(normalize_key(key, shape))
    except (IndexError, ValueError):
        assert plain is None  # an error: the general path raises NumPy's
        return
    if plain is not None:
        assert vm.getitem(plain) == ref


@pytest.mark.parametrize("n", [5, 64])
def test_a_loop_of_new_slices_of_a_split_array(n):
    a = numpy.arange(n * 3.0)
    x = sp.asarray(a)  # split (the suite's replicate_below is 0)
    for lo in range(0, n, 3):
        for hi in (lo + 1, lo + 4, n + 2):
            assert_eq(x[lo:hi], a[lo:hi], exact=True)
            assert_eq(x[-hi : -lo or None : 2], a[-hi : -lo or None : 2], exact=True)
    with pytest.raises(IndexError):
        x[3 * n]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[1:4:0]
