"""Tests of ``spmdarray.random``: counter-based sampling that does not depend on the rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_random.py``.
The reference for every distributed draw is ``_SerialGenerator``, which evaluates the
same pure function of (seed, draw, flat index) on the whole shape in one process;
``numpy.asarray`` gathers the distributed result, so bit equality proves that the
values do not depend on how many ranks made them or how the array is split.
"""

import math

import numpy
import pytest
from helpers import real_gpu
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdarray as np
import spmdarray.random as sr
from spmdarray.random import Generator, _SerialGenerator

SHAPES = [(7, 5), (13,), (3, 4, 5), (), (0, 3), (2, 0), (1,), (5, 1, 3)]


def _gather(x) -> numpy.ndarray:
    return numpy.asarray(x)


def _same_bits(a: numpy.ndarray, b: numpy.ndarray) -> None:
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    if real_gpu() and a.dtype.kind == "f" and a.tobytes() != b.tobytes():
        # Uniforms are exact everywhere; normals go through the GPU's log1p/cos/sqrt,
        # which may differ from the host's in the last bit (documented).
        numpy.testing.assert_array_max_ulp(a, b, maxulp=4)
        return
    assert a.tobytes() == b.tobytes()


def _splitmix64_reference(state: int, n: int) -> list[int]:
    """Textbook SplitMix64 on Python ints (an independent implementation)."""
    mask = (1 << 64) - 1
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append(z ^ (z >> 31))
    return out


# -- pure core (no MPI) ------------------------------------------------------


def test_bits_are_the_splitmix64_stream_of_the_key():
    for key in (0, 1, 12345, (1 << 64) - 1):
        got = sr._bits(key, numpy.arange(20, dtype=numpy.uint64))
        assert got.dtype == numpy.uint64
        assert got.tolist() == _splitmix64_reference(key, 20)


def test_mix64_is_silent_and_shape_preserving():
    with numpy.errstate(all="raise"):
        assert sr._mix64(numpy.uint64(2**64 - 1)).shape == ()
        assert sr._mix64(numpy.zeros((3, 2), numpy.uint64)).shape == (3, 2)
        sr._bits(2**64 - 1, numpy.array([2**64 - 1], dtype=numpy.uint64))


def test_stream_keys_differ_by_seed_draw_and_lane():
    keys = {sr._stream_key(s, k, lane) for s in range(4) for k in range(4) for lane in range(2)}
    assert len(keys) == 32


@st.composite
def _shape_and_box(draw):
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=0, max_size=4)))
    box = []
    for n in shape:
        lo = draw(st.integers(0, n))
        hi = draw(st.integers(lo, n))
        box.append((lo, hi))
    return shape, tuple(box)


@settings(max_examples=200, deadline=None, database=None)
@given(_shape_and_box())
def test_flat_indices_match_numpy_arange(shape_box):
    shape, box = shape_box
    got = sr._flat_indices(box, shape)
    want = numpy.arange(math.prod(shape), dtype=numpy.uint64).reshape(shape)[tuple(slice(lo, hi) for lo, hi in box)]
    assert got.dtype == numpy.uint64
    _same_bits(got, want)


def test_element_is_a_pure_function_of_seed_draw_and_index():
    g = _SerialGenerator(99)
    g.random(3)
    x = g.random((7, 5))  # draw 1
    for i, j in [(0, 0), (3, 2), (6, 4)]:
        flat = numpy.array([i * 5 + j], dtype=numpy.uint64)
        assert x[i, j] == sr._random_kernel(99, 1, flat, numpy.dtype(numpy.float64))[0]


def test_serial_blocks_tile_the_whole_array():
    """Any split of the index space gives the same values as the whole (no MPI)."""
    shape = (7, 5)
    whole = sr._normal_kernel(5, 2, sr._flat_indices(((0, 7), (0, 5)), shape), numpy.dtype(numpy.float64))
    parts = numpy.empty(shape)
    for rows in ((0, 3), (3, 4), (4, 7)):
        for cols in ((0, 2), (2, 5)):
            flat = sr._flat_indices((rows, cols), shape)
            parts[slice(*rows), slice(*cols)] = sr._normal_kernel(5, 2, flat, numpy.dtype(numpy.float64))
    _same_bits(parts, whole)


# -- distributed draws equal the serial reference ----------------------------

CASES = {
    "random": lambda g, size, **kw: g.random(size, **kw),
    "random_f32": lambda g, size, **kw: g.random(size, dtype=numpy.float32, **kw),
    "uniform": lambda g, size, **kw: g.uniform(-2.0, 3.5, size, **kw),
    "standard_normal": lambda g, size, **kw: g.standard_normal(size, **kw),
    "standard_normal_f32": lambda g, size, **kw: g.standard_normal(size, dtype=numpy.float32, **kw),
    "normal": lambda g, size, **kw: g.normal(10.0, 0.5, size, **kw),
    "integers": lambda g, size, **kw: g.integers(-3, 17, size, **kw),
    "integers_int8_endpoint": lambda g, size, **kw: g.integers(-128, 127, size, dtype=numpy.int8, endpoint=True, **kw),
    "integers_large": lambda g, size, **kw: g.integers(-(2**40), 2**41, size, **kw),
    "integers_full_int64": lambda g, size, **kw: g.integers(-(2**63), 2**63 - 1, size, endpoint=True, **kw),
    "integers_uint64_top": lambda g, size, **kw: g.integers(2**63, 2**64, size, dtype=numpy.uint64, **kw),
    "integers_bool": lambda g, size, **kw: g.integers(0, 2, size, dtype=bool, **kw),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_distributed_equals_serial_reference(case, shape):
    draw = CASES[case]
    g = Generator(2024, draw=3)
    x = draw(g, shape)
    assert isinstance(x, np.ndarray)
    assert x.shape == shape
    assert g.draw == 4
    _same_bits(_gather(x), draw(_SerialGenerator(2024, draw=3), shape))


@pytest.mark.parametrize("case", ["random", "standard_normal", "integers_large"])
def test_same_values_on_every_communicator(comm, case):
    """COMM_SELF (one block), COMM_WORLD and a split communicator all agree bit for bit."""
    draw = CASES[case]
    x = draw(Generator(11), (7, 5), comm=comm)
    assert sum(comm.allgather(x.local.size)) == 35
    if comm.size > 1:
        assert max(comm.allgather(x.local.size)) < 35  # really split over the ranks
    world = _gather(x)
    alone = _gather(draw(Generator(11), (7, 5), comm=_self()))
    sub = comm.Split(comm.rank % 2, comm.rank)
    try:
        part = _gather(draw(Generator(11), (7, 5), comm=sub))
    finally:
        sub.Free()
    _same_bits(world, alone)
    _same_bits(world, part)


def _self():
    from mpi4py import MPI

    return MPI.COMM_SELF


def test_array_draw_does_not_communicate():
    g = Generator(1)
    np.zeros(3)  # the default context exists before counting
    with np.comm_stats() as s:
        g.standard_normal((40, 9))
        g.integers(0, 10, size=(40, 9))
    assert (s.messages_sent, s.collectives) == (0, 0)


# -- scalars, counters, seeds -------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_scalar_is_element_zero_and_same_on_every_rank(comm, case):
    draw = CASES[case]
    v = draw(Generator(77), None)
    assert isinstance(v, numpy.generic)
    assert numpy.ndim(v) == 0
    first = _gather(draw(Generator(77), (1,)))[0]
    assert type(v) is type(first)
    _same_bits(numpy.asarray(v), numpy.asarray(first))  # the scalar is drawn on the host
    assert len({x.tobytes() for x in comm.allgather(v)}) == 1


def test_scalar_types_match_numpy():
    g = Generator(0)
    assert type(g.random()) is numpy.float64
    assert type(g.random(dtype=numpy.float32)) is numpy.float32
    assert type(g.normal()) is numpy.float64
    assert type(g.integers(5)) is numpy.int64
    assert type(g.integers(5, dtype=numpy.uint16)) is numpy.uint16


def test_zero_d_and_empty_shapes():
    g = Generator(3)
    x = g.random(())
    assert isinstance(x, np.ndarray) and x.shape == () and x.dtype == numpy.float64
    assert 0.0 <= float(x) < 1.0
    e = g.integers(0, 5, size=(0, 3), dtype=numpy.int16)
    assert e.shape == (0, 3) and e.dtype == numpy.int16
    assert _gather(e).shape == (0, 3)
    assert g.random(4).shape == (4,)
    assert g.random(numpy.int64(4)).shape == (4,)


def test_each_call_advances_the_counter_once():
    g = Generator(5)
    a = _gather(g.random((7, 5)))
    g.random()
    b = _gather(g.random((7, 5)))
    assert g.draw == 3
    assert not numpy.array_equal(a, b)
    _same_bits(b, _gather(Generator(5, draw=2).random((7, 5))))


def test_different_seeds_and_draws_differ():
    a = _gather(Generator(1).random(1000))
    b = _gather(Generator(2).random(1000))
    c = _gather(Generator(1, draw=1).random(1000))
    assert (a != b).mean() > 0.99
    assert (a != c).mean() > 0.99
    n1 = _gather(Generator(1).standard_normal(1000))
    assert (n1 != _gather(Generator(2).standard_normal(1000))).mean() > 0.99


def test_same_seed_same_array():
    _same_bits(_gather(Generator(42).normal(1.0, 2.0, (7, 5))), _gather(Generator(42).normal(1.0, 2.0, (7, 5))))


def test_big_seeds_are_folded_to_64_bits():
    assert Generator(2**64 - 1).seed == 2**64 - 1
    big = Generator(2**64 + 5).seed
    assert 0 <= big < 2**64 and big != 5
    assert Generator(numpy.uint64(7)).seed == 7


def test_failed_call_does_not_advance_the_counter():
    g = Generator(5)
    with pytest.raises(ValueError):
        g.random((-1, 2))
    with pytest.raises(ValueError):
        g.integers(5, 2, size=3)
    assert g.draw == 0


def test_default_rng(comm):
    g = Generator(9)
    assert sr.default_rng(g) is g
    _same_bits(_gather(sr.default_rng(9).random(6)), _gather(Generator(9).random(6)))
    a, b = sr.default_rng(), sr.default_rng(comm=comm)
    seeds = comm.allgather((a.seed, b.seed))
    assert len(set(seeds)) == 1  # fresh entropy, but the same on every rank
    assert a.seed != b.seed
    assert len({x.tobytes() for x in comm.allgather(a.random())}) == 1


# -- legacy module-level API --------------------------------------------------


def test_legacy_functions_use_the_seeded_global_generator():
    sr.seed(123)
    x = sr.rand(7, 5)
    y = sr.random((7, 5))
    z = sr.random_sample((7, 5))
    u = sr.uniform(1.0, 2.0, 4)
    n = sr.normal(3.0, 0.25, (2, 3))
    s = sr.standard_normal(6)
    r = sr.randint(-3, 4, size=(7, 5))
    r0 = sr.randint(10)
    scalar = sr.rand()
    ref = _SerialGenerator(123)
    _same_bits(_gather(x), ref.random((7, 5)))
    _same_bits(_gather(y), ref.random((7, 5)))
    _same_bits(_gather(z), ref.random((7, 5)))
    _same_bits(_gather(u), ref.uniform(1.0, 2.0, 4))
    _same_bits(_gather(n), ref.normal(3.0, 0.25, (2, 3)))
    _same_bits(_gather(s), ref.standard_normal(6))
    _same_bits(_gather(r), ref.integers(-3, 4, (7, 5), dtype=int))
    assert r0 == ref.integers(10, dtype=int)
    assert scalar == ref.random()
    assert r.dtype == numpy.dtype(int)
    assert sr._state.draw == ref.draw == 9


def test_seed_resets_the_draw_counter():
    sr.seed(8)
    a = _gather(sr.random(5))
    sr.random(5)
    sr.seed(8)
    _same_bits(a, _gather(sr.random(5)))


def test_unseeded_global_state_is_the_same_on_every_rank(comm, monkeypatch):
    monkeypatch.setattr(sr, "_state", None)
    v = sr.random()
    assert len({x.tobytes() for x in comm.allgather(v)}) == 1
    sr.seed()
    assert len(set(comm.allgather(sr._state.seed))) == 1
    _same_bits(_gather(sr.standard_normal((3, 3))), _SerialGenerator(sr._state.seed).standard_normal((3, 3)))


# -- statistics ---------------------------------------------------------------

N = 10**5


def _within(value: float, expected: float, sigma: float) -> None:
    assert abs(value - expected) < 5 * sigma, (value, expected, sigma)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_uniform_moments(dtype):
    x = _gather(Generator(31).random(N, dtype=dtype)).astype(numpy.float64)
    assert x.min() >= 0.0 and x.max() < 1.0
    _within(x.mean(), 0.5, math.sqrt(1 / 12 / N))
    _within(x.var(), 1 / 12, math.sqrt((1 / 80 - 1 / 144) / N))


def test_uniform_bounds_and_moments():
    x = _gather(Generator(32).uniform(-2.0, 6.0, N))
    assert x.min() >= -2.0 and x.max() < 6.0
    _within(x.mean(), 2.0, 8 * math.sqrt(1 / 12 / N))


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_standard_normal_moments(dtype):
    z = _gather(Generator(33).standard_normal(N, dtype=dtype)).astype(numpy.float64)
    assert numpy.isfinite(z).all()
    _within(z.mean(), 0.0, 1 / math.sqrt(N))
    _within(z.var(), 1.0, math.sqrt(2 / N))
    _within((z > 1.0).mean(), 0.158655, math.sqrt(0.158655 * 0.841345 / N))  # the shape, not only two moments


def test_normal_loc_scale():
    z = _gather(Generator(34).normal(-5.0, 3.0, N))
    _within(z.mean(), -5.0, 3.0 / math.sqrt(N))
    _within(z.std() ** 2, 9.0, 9.0 * math.sqrt(2 / N))
    assert numpy.all(_gather(Generator(34).normal(2.0, 0.0, 5)) == 2.0)


@pytest.mark.parametrize("low, high", [(-3, 4), (0, 1), (10, 1000)])
def test_integers_cover_the_range_evenly(low, high):
    k = _gather(Generator(35).integers(low, high, N))
    assert k.min() >= low and k.max() < high
    values, counts = numpy.unique(k, return_counts=True)
    assert values.tolist() == list(range(low, high))
    p = 1 / (high - low)
    assert numpy.all(numpy.abs(counts - N * p) < 5 * math.sqrt(N * p * (1 - p)) + 1)


def test_integers_endpoint_and_never_high():
    k = _gather(Generator(36).integers(0, 3, 10_000, endpoint=True))
    assert set(numpy.unique(k).tolist()) == {0, 1, 2, 3}
    r = _gather(sr.Generator(37).integers(5, 7, 10_000))
    assert set(numpy.unique(r).tolist()) == {5, 6}


def test_integers_wide_ranges_stay_in_bounds():
    big = _gather(Generator(38).integers(-(2**40), 2**41, N))
    assert big.min() >= -(2**40) and big.max() < 2**41
    _within(big.mean() / 2**40, 0.5, 3 / math.sqrt(12 * N))
    top = _gather(Generator(39).integers(2**63, 2**64, 1000, dtype=numpy.uint64))
    assert top.dtype == numpy.uint64 and top.min() >= 2**63
    full = _gather(Generator(40).integers(-(2**63), 2**63 - 1, N, endpoint=True))
    assert (full < 0).mean() == pytest.approx(0.5, abs=5 / math.sqrt(4 * N))
    i8 = _gather(Generator(41).integers(-128, 127, N, dtype=numpy.int8, endpoint=True))
    assert i8.dtype == numpy.int8 and i8.min() == -128 and i8.max() == 127


# -- dtypes and errors --------------------------------------------------------


def test_result_dtypes():
    g = Generator(0)
    assert g.random(3).dtype == numpy.float64
    assert g.random(3, dtype=numpy.float32).dtype == numpy.float32
    assert g.standard_normal(3, dtype="float32").dtype == numpy.float32
    assert g.uniform(size=3).dtype == numpy.float64
    assert g.normal(size=3).dtype == numpy.float64
    assert g.integers(9, size=3).dtype == numpy.int64
    assert g.integers(9, size=3, dtype=numpy.uint8).dtype == numpy.uint8
    assert g.integers(2, size=3, dtype=bool).dtype == numpy.bool_
    assert sr.randint(9, size=3, dtype=numpy.int32).dtype == numpy.int32


def test_numpy_scalar_parameters():
    g = Generator(4)
    x = _gather(g.uniform(numpy.float32(1.0), numpy.int64(3), 100))
    assert x.min() >= 1.0 and x.max() < 3.0
    k = _gather(g.integers(numpy.int64(2), numpy.uint8(9), 100))
    assert k.min() >= 2 and k.max() < 9
    assert numpy.isfinite(g.normal(numpy.float64(1.0), numpy.array(2.0)))


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: sr.randint(5, 2), ValueError, "low >= high"),
        (lambda: sr.randint(0), ValueError, "high <= 0"),
        (lambda: Generator(0).integers(3, 2, endpoint=True), ValueError, "low > high"),
        (lambda: Generator(0).integers(0, 300, dtype=numpy.int8), ValueError, "high is out of bounds for int8"),
        (lambda: Generator(0).integers(-1, 3, dtype=numpy.uint8), ValueError, "low is out of bounds for uint8"),
        (lambda: Generator(0).integers(0, 3, dtype=numpy.float64), TypeError, "Unsupported dtype"),
        (lambda: Generator(0).integers(1.5, 3), TypeError, "must be an integer"),
        (lambda: sr.random((-1, 2)), ValueError, "negative dimensions"),
        (lambda: Generator(0).integers(0, 3, size=-4), ValueError, "negative dimensions"),
        (lambda: Generator(0).random(size=(2.5,)), TypeError, "size must be"),
        (lambda: sr.normal(0.0, -1.0), ValueError, "scale < 0"),
        (lambda: Generator(0).random(dtype=numpy.int64), TypeError, "Unsupported dtype"),
        (lambda: Generator(0).standard_normal(dtype=numpy.float16), TypeError, "Unsupported dtype"),
        (lambda: Generator(0).uniform(-1e308, 1e308), OverflowError, "range exceeds"),
        (lambda: sr.normal(numpy.zeros(3), 1.0, 4), ValueError, "shape mismatch"),
        (lambda: Generator(0).normal(0.0, [1.0, -2.0]), ValueError, "scale < 0"),
        (lambda: Generator(0).integers(0, numpy.arange(3)), ValueError, "low >= high"),
        (lambda: sr.randint(numpy.arange(3)), ValueError, "low >= high"),
        (lambda: sr.default_rng(-1), ValueError, "non-negative"),
        (lambda: sr.default_rng(1.5), TypeError, "seed must be"),
        (lambda: sr.seed(-3), ValueError, "non-negative"),
        (lambda: Generator(None), TypeError, "default_rng"),
        (lambda: Generator(0, draw=-1), ValueError, "draw must be"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_array_parameters_from_spmdarray_broadcast():
    """Array-valued parameters (more in test_random_distributions.py) broadcast as in NumPy."""
    x = Generator(0).normal(np.zeros(3), 1.0, (2, 3))
    assert x.shape == (2, 3)
    _same_bits(_gather(x), _SerialGenerator(0).normal(numpy.zeros(3), 1.0, (2, 3)))
