"""Array creation against NumPy, at any rank count.

Run serially and under ``mpiexec -n 2/3/4 python -m pytest tests/test_creation.py``.
Every test body is SPMD: all ranks build the same NumPy reference, make the
distributed array, and compare the gathered result (shape, dtype and values) with
NumPy's.  The shapes are chosen to be uneven over 2, 3 and 4 ranks, to have fewer
rows than ranks, or to be empty, so some ranks own empty blocks.

The only rank-dependent data are the blocks handed to ``from_local`` and the
arrays made on ``COMM_SELF`` or on a ``Split`` sub-communicator, whose collectives
involve only their own ranks.
"""

import re
import warnings

import numpy
import pytest
from helpers import assert_eq, host, world
from helpers import ref as _ref

import spmdarray as sp

SHAPES = [(7, 5), (3,), (1, 9), (2, 5), (0, 3), (5, 0), (0,), (1,), (), (2, 3, 4), (2, 1, 3, 2)]
DTYPES = [numpy.float32, numpy.int64, numpy.bool_, numpy.complex128]


def ref(shape, dtype=float, seed=0):
    """``helpers.ref`` as an array also for 0-d bool (it gives a NumPy scalar there)."""
    return numpy.asarray(_ref(shape, dtype, seed))


def _ids(vals):
    return [str(v) for v in vals]


# ------------------------------------------------------------------ array / asarray


@pytest.mark.parametrize("dtype", [numpy.float64, *DTYPES], ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids(SHAPES))
def test_array_from_numpy(shape, dtype):
    a = ref(shape, dtype)
    assert_eq(sp.array(a), a, exact=True)
    assert_eq(sp.asarray(a), a, exact=True)


@pytest.mark.parametrize("shape", SHAPES, ids=_ids(SHAPES))
def test_array_from_nested_lists(shape):
    a = ref(shape, numpy.int64)
    lst = a.tolist()
    assert_eq(sp.array(lst), numpy.array(lst))
    assert_eq(sp.asarray(lst, dtype=numpy.float32), numpy.asarray(lst, dtype=numpy.float32))


@pytest.mark.parametrize(
    "obj",
    [3.5, 7, True, 1 - 2j, [1, 2.5], [[True, False], [False, True]], [[1, 2], [3, 4], [5, 6]], [[]], [], [[1j]]],
    ids=repr,
)
def test_array_from_python_scalars_and_lists(obj):
    assert_eq(sp.array(obj), numpy.array(obj), exact=True)


def test_array_dtype_and_ndmin():
    assert_eq(sp.array([1, 2, 3], dtype=numpy.float32), numpy.array([1, 2, 3], dtype=numpy.float32))
    assert_eq(sp.array([1, 2], ndmin=3), numpy.array([1, 2], ndmin=3))
    assert_eq(sp.array(5.0, ndmin=2), numpy.array(5.0, ndmin=2))
    assert_eq(sp.array([1.7, -2.7], dtype=numpy.int64), numpy.array([1.7, -2.7], dtype=numpy.int64))


def test_array_copies_its_input():
    a = ref((7, 5))
    x = sp.array(a)
    a[...] = 0  # the same on every rank: the distributed copy must not change
    assert_eq(x, ref((7, 5)))


def test_array_of_a_distributed_array():
    a = ref((7, 5))
    x = sp.array(a)
    assert sp.asarray(x) is x  # no copy needed, as numpy.asarray
    y = sp.array(x)  # a copy with the same layout
    assert y is not x and y.layout == x.layout
    y[...] = -1
    assert_eq(x, a)
    assert_eq(y, numpy.full((7, 5), -1.0))
    assert_eq(sp.array(x, dtype=numpy.int32), a.astype(numpy.int32))
    assert_eq(sp.asarray(x, dtype=numpy.float32), a.astype(numpy.float32))


# ------------------------------------------------------------ local / global_slices


@pytest.mark.parametrize("shape", SHAPES, ids=_ids(SHAPES))
def test_local_is_the_block_at_global_slices(shape):
    from mpi4py import MPI

    a = ref(shape)
    x = sp.array(a)
    g = numpy.asarray(x)
    assert len(x.global_slices) == len(shape)
    assert x.local.shape == g[x.global_slices].shape
    numpy.testing.assert_array_equal(host(x.local), g[x.global_slices])
    numpy.testing.assert_array_equal(host(x.local), a[x.global_slices])
    if shape:
        # The blocks of all ranks tile the global array exactly once.
        count = numpy.zeros(shape, int)
        for sl in MPI.COMM_WORLD.allgather(x.global_slices):
            count[sl] += 1
        assert (count == 1).all()


@pytest.mark.parametrize("key", [(slice(None),), (slice(1, None), slice(None, None, 2)), (slice(None, None, -1),)])
def test_local_of_a_view_is_the_block_at_its_global_slices(key):
    a = ref((7, 5))
    x = sp.array(a)[key]
    numpy.testing.assert_array_equal(host(x.local), a[key][x.global_slices])
    tx = x.T
    numpy.testing.assert_array_equal(host(tx.local), a[key].T[tx.global_slices])


def test_writes_through_local_then_mark_modified():
    a = ref((9, 4))
    x = sp.array(a)
    assert_eq(x[1:] + x[:-1], a[1:] + a[:-1])  # caches halo cells of the shifted views
    x.local[...] *= 10  # every rank scales its own block
    x.mark_modified()
    b = a * 10
    assert_eq(x, b)
    assert_eq(x[1:] + x[:-1], b[1:] + b[:-1])  # stale halos would give a mix of a and b


# ------------------------------------------------------------ zeros / ones / full


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=_ids(SHAPES))
def test_zeros_ones_full_empty(shape, dtype):
    assert_eq(sp.zeros(shape, dtype), numpy.zeros(shape, dtype))
    assert_eq(sp.ones(shape, dtype), numpy.ones(shape, dtype))
    assert_eq(sp.full(shape, 3, dtype), numpy.full(shape, 3, dtype))
    assert_eq(sp.full(shape, 0, dtype=dtype), numpy.full(shape, 0, dtype=dtype))
    e = sp.empty(shape, dtype)
    assert isinstance(e, sp.ndarray)
    assert e.shape == shape and e.dtype == numpy.dtype(dtype)


@pytest.mark.parametrize("n", [0, 1, 4, 13])
def test_integer_shape_and_default_dtypes(n):
    assert_eq(sp.zeros(n), numpy.zeros(n))
    assert_eq(sp.ones(n), numpy.ones(n))
    assert sp.empty(n).shape == (n,) and sp.empty(n).dtype == numpy.float64
    assert_eq(sp.zeros(numpy.int64(n)), numpy.zeros(numpy.int64(n)))


@pytest.mark.parametrize("fill", [2.5, 7, True, 1 + 2j, numpy.float32(1.5), numpy.int8(-3)], ids=repr)
def test_full_infers_numpy_dtype(fill):
    assert_eq(sp.full((4, 3), fill), numpy.full((4, 3), fill), exact=True)


def test_full_with_array_fill_value_broadcasts():
    row = numpy.arange(5.0)
    assert_eq(sp.full((7, 5), row), numpy.full((7, 5), row))
    col = numpy.arange(7)[:, None]
    assert_eq(sp.full((7, 5), col, dtype=numpy.float32), numpy.full((7, 5), col, dtype=numpy.float32))


def test_creation_errors_match_numpy():
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        numpy.zeros((2, -1))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        sp.zeros((2, -1))
    with pytest.raises(ValueError, match="could not convert string to float"):
        sp.full((3,), "abc", dtype=float)
    with pytest.raises(TypeError):
        sp.ones((2, 2.5))
    assert_eq(sp.ones(3), numpy.ones(3))  # the next collective still works


# ---------------------------------------------------------------------- *_like


def _like_sources():
    a = ref((7, 5))
    x = sp.array(a)
    return [
        ("base", x, a),
        ("T", x.T, a.T),
        ("slice", x[1:, ::2], a[1:, ::2]),
        ("reversed", x[::-1], a[::-1]),
        ("row", x[2], a[2]),
        ("3d", sp.array(ref((3, 4, 5))).transpose(2, 0, 1), ref((3, 4, 5)).transpose(2, 0, 1)),
    ]


LIKE = {
    "zeros_like": lambda x: sp.zeros_like(x),
    "ones_like": lambda x: sp.ones_like(x),
    "empty_like": lambda x: sp.empty_like(x),
    "full_like": lambda x: sp.full_like(x, 4.5),
}
NP_LIKE = {
    "zeros_like": numpy.zeros_like,
    "ones_like": numpy.ones_like,
    "empty_like": None,
    "full_like": lambda a: numpy.full_like(a, 4.5),
}


@pytest.mark.parametrize("src", range(6), ids=[s for s, _, _ in _like_sources()])
@pytest.mark.parametrize("name", list(LIKE))
def test_like_preserves_layout_and_aligned_ops_send_nothing(name, src):
    _, x, a = _like_sources()[src]
    y = LIKE[name](x)
    assert y.layout == x.layout
    assert y.shape == a.shape and y.dtype == a.dtype
    if name == "empty_like":
        y[...] = 2.0
        expected = numpy.full_like(a, 2.0)
    else:
        expected = NP_LIKE[name](a)
    assert_eq(y, expected)
    with sp.comm_stats() as s:
        z = x + y
        w = y * x
    assert s.bytes_sent == 0 and s.messages_sent == 0 and s.messages_received == 0
    assert_eq(z, a + expected)
    assert_eq(w, expected * a)


def test_comm_stats_sees_a_misaligned_operation():
    # The counterpart of the test above: a shifted operand needs halo cells.
    _, size = world()
    x = sp.arange(20.0)
    with sp.comm_stats() as s:
        z = x[1:] + x[:-1]
        sp.sync()  # a deferred (fused) result exchanges its halos when evaluated
    total = _world_sum(s.bytes_sent)
    assert (total > 0) == (size > 1)
    assert_eq(z, numpy.arange(1.0, 20.0) + numpy.arange(19.0))


def _world_sum(v):
    from mpi4py import MPI

    return MPI.COMM_WORLD.allreduce(v)


def test_like_with_dtype_and_shape():
    a = ref((7, 5))
    x = sp.array(a)
    y = sp.zeros_like(x, dtype=numpy.int32)
    assert y.layout == x.layout
    assert_eq(y, numpy.zeros_like(a, dtype=numpy.int32))
    assert_eq(sp.ones_like(x, dtype=bool), numpy.ones_like(a, dtype=bool))
    assert_eq(sp.full_like(x, 7, dtype=numpy.int64), numpy.full_like(a, 7, dtype=numpy.int64))
    assert_eq(sp.full_like(x, 2.7), numpy.full_like(a, 2.7))
    assert_eq(sp.full_like(sp.array(a.astype(int)), 2.7), numpy.full_like(a.astype(int), 2.7))
    assert_eq(sp.zeros_like(x, shape=(2, 3)), numpy.zeros_like(a, shape=(2, 3)))
    e = sp.empty_like(x, shape=(4,))
    assert e.shape == (4,) and e.dtype == a.dtype


def test_like_of_numpy_arrays():
    a = ref((4, 6), numpy.int64)
    assert_eq(sp.zeros_like(a), numpy.zeros_like(a))
    assert_eq(sp.ones_like(a), numpy.ones_like(a))
    assert_eq(sp.full_like(a, 3), numpy.full_like(a, 3))
    assert isinstance(sp.empty_like(a), sp.ndarray) and sp.empty_like(a).shape == (4, 6)


# --------------------------------------------------------------------- arange

ARANGE = [
    (10,),
    (0,),
    (3, 17),
    (5, 5),
    (5, 2),
    (2, 30, 4),
    (10, 0, -1),
    (10, 0, -3),
    (-7, 8, 5),
    (1.5, 7.3, 0.7),
    (0, 1, 0.1),
    (0.1, 1.0, 0.1),
    (-3, 4.0),
    (5, 1, -0.5),
    (2.5, -2.5, -0.25),
    (1e-3, 0.4, 0.0137),
]


@pytest.mark.parametrize("args", ARANGE, ids=_ids(ARANGE))
def test_arange_matches_numpy_exactly(args):
    assert_eq(sp.arange(*args), numpy.arange(*args), exact=True)


@pytest.mark.parametrize(
    "args, dtype",
    [
        ((0, 1, 0.1), numpy.float32),
        ((0, 10, 0.3), numpy.float32),
        ((3, 9, 1.5), numpy.int64),
        ((-2.5, 9, 1.5), numpy.int32),
        ((10,), numpy.float64),
        ((2, 9, 2), float),
        ((1, 20, 3), numpy.float16),
        ((0, 3, 0.5), numpy.complex128),
        ((9, -9, -2), numpy.int8),
        ((0, 2), bool),
        ((0, 1, 0.5), bool),
    ],
    ids=str,
)
def test_arange_with_dtype_matches_numpy_exactly(args, dtype):
    assert_eq(sp.arange(*args, dtype=dtype), numpy.arange(*args, dtype=dtype), exact=True)


@pytest.mark.parametrize(
    "args, kwargs",
    [((0, 5, 0), {}), ((0, 3), {"dtype": bool}), ((-3, 10), {"dtype": numpy.uint8}), ((0, 4, 1.5), {"dtype": "S3"})],
    ids=str,
)
def test_arange_errors_match_numpy(args, kwargs):
    with pytest.raises(Exception) as expected:
        numpy.arange(*args, **kwargs)
    with pytest.raises(expected.type, match=re.escape(str(expected.value))):
        sp.arange(*args, **kwargs)
    assert_eq(sp.arange(3), numpy.arange(3))


# ------------------------------------------------------------------- linspace

LINSPACE_ENDS = [(0, 1), (-3, 7.5), (2, 2), (10, -10), (1e-3, 1e3)]


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 2, 5, 50])
def test_linspace_matches_numpy(num, endpoint):
    for start, stop in LINSPACE_ENDS:
        for dtype in (None, numpy.float32, int, numpy.int64):
            got, gstep = sp.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype)
            exp, estep = numpy.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dtype)
            assert_eq(got, exp, exact=True)
            assert (numpy.isnan(gstep) and numpy.isnan(estep)) or gstep == estep, (start, stop, gstep, estep)
        assert_eq(sp.linspace(start, stop, num, endpoint), numpy.linspace(start, stop, num, endpoint), exact=True)


def test_linspace_negative_num_raises_like_numpy():
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative."):
        numpy.linspace(0, 1, -1)
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative."):
        sp.linspace(0, 1, -1)


# -------------------------------------------------------------- eye / identity

EYE = [(3, None, 0), (4, 6, 1), (5, 3, -2), (4, 4, 7), (4, 4, -7), (0, 3, 0), (6, 2, -1), (1, None, 0), (7, 9, 3)]


@pytest.mark.parametrize("dtype", [float, numpy.int64, bool, numpy.complex128], ids=lambda d: numpy.dtype(d).name)
@pytest.mark.parametrize("n, m, k", EYE, ids=_ids(EYE))
def test_eye(n, m, k, dtype):
    assert_eq(sp.eye(n, m, k, dtype=dtype), numpy.eye(n, m, k, dtype=dtype))
    assert_eq(sp.eye(n, M=m, k=k), numpy.eye(n, M=m, k=k))


@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_identity(n):
    assert_eq(sp.identity(n), numpy.identity(n))
    assert_eq(sp.identity(n, dtype=numpy.int32), numpy.identity(n, dtype=numpy.int32))


# ---------------------------------------------------------------- copy / astype


@pytest.mark.parametrize("shape", [(7, 5), (3,), (), (0, 3)], ids=str)
def test_copy_is_independent(shape):
    a = ref(shape)
    x = sp.array(a)
    for c in (x.copy(), sp.copy(x), sp.array(x, copy=True)):
        assert c.layout == x.layout
        assert_eq(c, a)
        c[...] = 99.0
        assert_eq(c, numpy.full(shape, 99.0))
        assert_eq(x, a)


def test_copy_of_a_view_copies_the_view():
    a = ref((7, 5))
    x = sp.array(a)
    c = x[::-2, 1:4].copy()
    assert c.base is None
    assert_eq(c, a[::-2, 1:4])
    c[...] = 0
    assert_eq(x, a)


@pytest.mark.parametrize("src", [numpy.float64, numpy.int64, numpy.bool_, numpy.complex128, numpy.float32])
@pytest.mark.parametrize("dst", [numpy.float64, numpy.int32, numpy.bool_, numpy.float32, numpy.uint8])
def test_astype_matches_numpy(src, dst):
    a = ref((6, 5), src)
    if numpy.dtype(dst).kind == "u":
        a = abs(a)  # negative floats to unsigned ints are undefined in C
    x = sp.array(a)
    with numpy.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", numpy.exceptions.ComplexWarning)  # complex to real drops .imag
        expected = a.astype(dst)
        got = x.astype(dst)
    assert got.layout == x.layout
    assert_eq(got, expected)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize(
    "src, dst",
    [
        (numpy.float64, numpy.int32),
        (numpy.int64, numpy.int32),
        (numpy.int32, numpy.int64),
        (numpy.float32, numpy.float64),
        (numpy.complex128, numpy.float64),
    ],
    ids=lambda d: numpy.dtype(d).name,
)
def test_astype_casting_rules(src, dst, casting):
    a = ref((5, 3), src)
    x = sp.array(a)
    try:
        with warnings.catch_warnings(record=True) as expected_warnings:
            warnings.simplefilter("always")
            expected = a.astype(dst, casting=casting)
    except TypeError as e:
        with pytest.raises(TypeError, match=re.escape(str(e))):
            x.astype(dst, casting=casting)
        assert_eq(x, a)  # unchanged, and the next collective works
    else:
        with warnings.catch_warnings(record=True) as got_warnings:
            warnings.simplefilter("always")
            got = x.astype(dst, casting=casting)
        # The same warnings as NumPy (ComplexWarning for complex to real), on every rank.
        assert {w.category for w in got_warnings} == {w.category for w in expected_warnings}
        assert_eq(got, expected)


def test_astype_without_copy():
    x = sp.array(ref((4, 4)))
    assert x.astype(numpy.float64, copy=False) is x
    y = x.astype(numpy.float64)
    assert y is not x
    y[0, 0] = 1234.0
    assert x[0, 0] != 1234.0


# ------------------------------------------------------------------ from_local


def _rows_per_rank(size):
    """Rows of each rank's block: uneven, and empty on rank 1 when there is one."""
    return [(k + 2) % 3 for k in range(size)]


def test_from_local_stacks_blocks_along_axis_0():
    rank, size = world()
    rows = _rows_per_rank(size)
    full = ref((sum(rows), 4))
    lo = sum(rows[:rank])
    block = full[lo : lo + rows[rank]].copy()
    x = sp.from_local(block)
    assert_eq(x, full)
    assert x.local.shape == block.shape
    if rows[rank]:  # an empty block's slices are empty, wherever they point
        assert x.global_slices == (slice(lo, lo + rows[rank]), slice(0, 4))
        assert numpy.shares_memory(x.local, block)
    # Shifted views and reductions over uneven blocks, one of them empty.
    assert_eq(x[1:] - x[:-1], full[1:] - full[:-1])
    assert_eq(x[::-1] * 2, full[::-1] * 2)


def test_from_local_aliases_the_block():
    rank, size = world()
    rows = _rows_per_rank(size)
    full = ref((sum(rows), 3), numpy.int64)
    lo = sum(rows[:rank])
    block = full[lo : lo + rows[rank]].copy()
    x = sp.from_local(block)
    assert_eq(x[1:] + x[:-1], full[1:] + full[:-1])
    block *= -1  # the user writes the NumPy block ...
    x.mark_modified()  # ... and says so
    assert_eq(x, -full)
    assert_eq(x[1:] + x[:-1], -full[1:] - full[:-1])
    x[...] = 7  # writes through the array land in the user's block
    numpy.testing.assert_array_equal(block, numpy.full(block.shape, 7))


def _grid2d(size):
    p = max(d for d in range(1, size + 1) if size % d == 0 and d * d <= size)
    return (p, size // p)


def test_from_local_grid_2d_tiling():
    rank, size = world()
    grid = _grid2d(size)
    heights = [2 + i for i in range(grid[0])]
    widths = [3 - j % 2 for j in range(grid[1])]
    full = ref((sum(heights), sum(widths)))
    i, j = divmod(rank, grid[1])
    r0, c0 = sum(heights[:i]), sum(widths[:j])
    block = full[r0 : r0 + heights[i], c0 : c0 + widths[j]].copy()
    x = sp.from_local(block, grid=grid)
    assert x.layout.dims == grid
    assert x.global_slices == (slice(r0, r0 + heights[i]), slice(c0, c0 + widths[j]))
    assert_eq(x, full)
    assert_eq(x.T + 1, full.T + 1)
    assert_eq(x[1:, 1:] * x[:-1, :-1], full[1:, 1:] * full[:-1, :-1])


def test_from_local_grid_with_empty_columns():
    rank, size = world()
    grid = (1, size)
    widths = [0 if j % 2 else 2 for j in range(size)]
    full = ref((3, sum(widths)))
    c0 = sum(widths[:rank])
    x = sp.from_local(full[:, c0 : c0 + widths[rank]].copy(), grid=grid)
    assert_eq(x, full)
    assert_eq(x[:, ::-1] - 1, full[:, ::-1] - 1)


MISMATCH = ["extent", "dtype", "ndim", "grid-product", "grid-length", "zero-d"]


@pytest.mark.parametrize("kind", MISMATCH)
def test_from_local_mismatch_raises_on_every_rank(kind):
    from mpi4py import MPI

    rank, size = world()
    last = rank == size - 1
    block, grid, always = numpy.zeros((2, 3)), None, False
    if kind == "extent":
        block = numpy.zeros((2, 4 if last else 3))
    elif kind == "dtype":
        block = numpy.zeros((2, 3), numpy.int64 if last else numpy.float64)
    elif kind == "ndim":
        block = numpy.zeros((2, 3, 1) if last else (2, 3))
    elif kind == "grid-product":
        grid, always = (size + 1, 1), True
    elif kind == "grid-length":
        grid, always = (size,), True
    else:
        block, always = numpy.float64(1.0), True
    if always or size > 1:
        with pytest.raises(ValueError) as err:
            sp.from_local(block, grid=grid)
        messages = MPI.COMM_WORLD.allgather(str(err.value))
        assert all(m == messages[0] for m in messages), messages  # the same message everywhere
    else:
        # One rank: its block is the whole array, there is nothing to disagree with.
        assert_eq(sp.from_local(block, grid=grid), block)
    # No rank was left inside a collective: the next one works.
    assert_eq(sp.from_local(numpy.ones((1, 2))), numpy.ones((size, 2)))


# ------------------------------------------------------------------------ comm=


def test_comm_self_arrays_are_private_to_each_rank():
    from mpi4py import MPI

    rank, _ = world()
    n = 5 + rank  # every rank makes a different array: no rank waits for another
    x = sp.arange(n, comm=MPI.COMM_SELF)
    assert x.comm.Get_size() == 1
    assert x.layout.nprocs == 1
    assert x.global_slices == (slice(0, n),)
    numpy.testing.assert_array_equal(host(x.local), numpy.arange(n))
    with sp.comm_stats() as s:
        for _ in range(rank + 1):  # a different number of operations on every rank
            y = x[1:] + x[:-1]
        g = numpy.asarray(y)
    assert s.messages_sent == 0 and s.bytes_sent == 0
    numpy.testing.assert_array_equal(g, numpy.arange(1, n) + numpy.arange(n - 1))
    z = sp.zeros((3, n), comm=MPI.COMM_SELF)
    assert_eq(z, numpy.zeros((3, n)))
    with pytest.raises(ValueError, match="different communicators"):
        x[:5] + sp.arange(5)  # arrays on different communicators do not mix


def test_split_subcommunicator_involves_only_its_ranks():
    from mpi4py import MPI

    rank, size = world()
    color = rank % 2
    sub = MPI.COMM_WORLD.Split(color, rank)
    n = 7 + color
    x = sp.arange(n, comm=sub)
    assert x.comm.Get_size() == sub.Get_size() == len(range(color, size, 2))
    assert x.layout.nprocs == sub.Get_size()
    # The sub-communicator's blocks tile its array; ranks of the other group are not in it.
    count = numpy.zeros(n, int)
    for sl in sub.allgather(x.global_slices):
        count[sl] += 1
    assert (count == 1).all()
    ref_x = numpy.arange(n)
    # Group 1 does more collective work than group 0: were any world rank
    # involved, the ranks would wait for each other forever.
    for _ in range(1 + 2 * color):
        y = x[1:] + x[:-1]
        assert_eq(y, ref_x[1:] + ref_x[:-1])
    m = sp.from_local(numpy.full((1, 2), float(sub.Get_rank())), comm=sub)
    assert_eq(m, numpy.repeat(numpy.arange(sub.Get_size(), dtype=float), 2).reshape(-1, 2))
    assert_eq(sp.eye(3, comm=sub), numpy.eye(3))
