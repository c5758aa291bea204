"""Property tests of process-grid selection (``decomposition.grid``).  No MPI."""

import importlib
import math

D = importlib.import_module("spmdarray.decomposition")

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FAST = settings(max_examples=80, deadline=None)

PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61]

nprocs_ = st.one_of(st.integers(1, 64), st.sampled_from(PRIMES))
# Shapes of 1-4 dims, biased towards the degenerate extents 0 and 1.
extent = st.one_of(st.sampled_from([0, 1]), st.integers(0, 5000))
shapes = st.lists(extent, min_size=1, max_size=4).map(tuple)


@FAST
@given(shape=shapes, nprocs=nprocs_)
def test_grid_product_and_length(shape, nprocs):
    dims = D.process_grid(shape, nprocs)
    assert isinstance(dims, tuple)
    assert len(dims) == len(shape)
    assert all(isinstance(d, int) and d >= 1 for d in dims)
    assert math.prod(dims) == nprocs


@FAST
@given(nprocs=nprocs_)
def test_zero_d_grid(nprocs):
    assert D.process_grid((), nprocs) == (nprocs,)


@FAST
@given(n=extent, nprocs=nprocs_)
def test_one_d_grid_is_all_ranks(n, nprocs):
    assert D.process_grid((n,), nprocs) == (nprocs,)


@FAST
@given(shape=shapes, nprocs=nprocs_)
def test_grid_is_deterministic(shape, nprocs):
    D.process_grid.cache_clear()
    first = D.process_grid(shape, nprocs)
    D.process_grid.cache_clear()
    D.factorisations.cache_clear()
    assert D.process_grid(shape, nprocs) == first
    # Same answer whatever integer-like type the shape holds.
    assert D.process_grid(tuple(float(n) for n in shape), nprocs) == first


@FAST
@given(n=st.integers(1, 64), k=st.integers(0, 4))
def test_factorisations_enumerates_every_ordered_factorisation(n, k):
    facs = D.factorisations(n, k)
    assert len(set(facs)) == len(facs)
    assert all(len(f) == k and math.prod(f) == n for f in facs)
    # Brute force over divisors.
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    expected = [()]
    for _ in range(k):
        expected = [e + (d,) for e in expected for d in divisors]
    expected = sorted(f for f in expected if math.prod(f) == n)
    assert sorted(facs) == expected


@FAST
@given(p=st.sampled_from(PRIMES), shape=shapes)
def test_prime_rank_count_splits_one_axis(p, shape):
    dims = D.process_grid(shape, p)
    assert sorted(dims)[-1] == p
    assert sum(1 for d in dims if d > 1) == 1


@pytest.mark.parametrize(
    "shape, nprocs, expected",
    [
        ((4002, 4002), 4, (2, 2)),
        ((5, 1000), 4, (1, 4)),
        ((1000, 5), 4, (4, 1)),
        ((3,), 8, (8,)),
        ((0,), 5, (5,)),
        ((64, 64), 1, (1, 1)),
        ((64, 64, 64), 8, (2, 2, 2)),
        ((100, 100), 7, (7, 1)),
        ((1, 1000), 6, (1, 6)),
    ],
)
def test_explicit_grids(shape, nprocs, expected):
    assert D.process_grid(shape, nprocs) == expected


def test_rejects_zero_ranks():
    with pytest.raises(ValueError):
        D.process_grid((4, 4), 0)
