"""``spmdarray.ndarray(shape, dtype)`` and ``x.shape = newshape``, against NumPy.

Run serially and under ``mpiexec -n 2/3/4``; every body is SPMD.
"""

import numpy
import pytest
from helpers import assert_eq, ref, world

import spmdarray as sp


@pytest.mark.parametrize("shape", [(7,), 5, (3, 4), (2, 0, 3), (), (1, 9, 2)])
@pytest.mark.parametrize("dtype", [float, numpy.int32, numpy.complex64, bool])
def test_ndarray_constructor_is_numpys_empty(shape, dtype):
    x = sp.ndarray(shape, dtype=dtype)
    e = numpy.ndarray(shape, dtype=dtype)
    assert type(x) is sp.ndarray
    assert (x.shape, x.dtype) == (e.shape, e.dtype)
    assert x.layout == sp.empty(shape, dtype).layout
    x[...] = 1  # usable as any array
    assert_eq(x, numpy.ones(e.shape, dtype))


def test_ndarray_constructor_positional_dtype_and_default():
    assert sp.ndarray((3,), numpy.int16).dtype == numpy.ndarray((3,), numpy.int16).dtype
    assert sp.ndarray(4).dtype == numpy.ndarray(4).dtype == numpy.float64


@pytest.mark.parametrize("kw", [{"buffer": numpy.zeros(3)}, {"strides": (8,)}, {"offset": 8, "buffer": b"x" * 32}])
def test_ndarray_constructor_memory_arguments_raise(kw):
    with pytest.raises(NotImplementedError, match="from_local"):
        sp.ndarray((3,), **kw)


def test_ndarray_constructor_errors_are_numpys():
    with pytest.raises(ValueError, match="negative"):
        sp.ndarray((-1, 2))
    with pytest.raises(TypeError):
        sp.ndarray((2,), dtype="not a dtype")


def test_properties_read_on_the_class():
    for name in ("shape", "dtype", "ndim", "size", "T", "local"):
        assert isinstance(getattr(sp.ndarray, name), property)
    assert isinstance(sp.ndarray.shape.__doc__, str)


@pytest.mark.parametrize(
    ("shape", "new"),
    [((3, 4), 12), ((3, 4), (4, 3)), ((3, 4), (2, -1, 3)), ((12,), (3, 4)), ((5, 1), (5,)), ((5,), (1, 5, 1)),
     ((2, 3, 4), (6, 4)), ((0, 3), (3, 0)), ((1,), ())],
)  # fmt: skip
def test_set_shape_of_a_base_array_matches_numpy(shape, new):
    a = ref(shape)
    x = sp.array(a)
    a.shape = new
    x.shape = new
    assert x.shape == a.shape
    assert_eq(x, a)
    x += 1  # still an ordinary array
    a += 1
    assert_eq(x, a)


def test_set_shape_like_mandelbrot2():
    xi, yi = numpy.mgrid[0:5, 0:7]
    gx, gy = sp.mgrid[0:5, 0:7]  # two views of one storage, disjoint elements
    c = sp.array(ref((5, 7)))
    xi.shape = yi.shape = 35
    gx.shape = gy.shape = c.shape = 35
    assert_eq(gx, xi)
    assert_eq(gy, yi)
    assert c.shape == (35,)


def test_set_shape_length_one_axes_keeps_the_storage():
    a = ref((4, 3))
    x = sp.array(a)
    row = x[1]
    x.shape = (1, 4, 3, 1)
    x[0, 1, 0, 0] = 99.0
    a[1, 0] = 99.0
    assert_eq(row, a[1])  # still aliased, as in NumPy
    assert_eq(x, a.reshape(1, 4, 3, 1))


def test_set_shape_errors_are_numpys():
    a = ref((4, 6))
    x = sp.array(a)
    with pytest.raises(ValueError, match="cannot reshape array of size 24 into shape"):
        x.shape = (5, 5)
    with pytest.raises(AttributeError, match="Incompatible shape for in-place modification"):
        v = x[:, 1:]
        v.shape = 20
    with pytest.raises(AttributeError, match="Incompatible shape for in-place modification"):
        x.T.shape = 24
    assert x.shape == (4, 6)
    assert_eq(x, a)


def test_set_shape_refused_while_another_view_shares_elements():
    # A split array (this suite splits every array at 2+ ranks) whose new shape moves data:
    # refused while another view shares elements, since it would no longer alias it.
    a = ref((4, 6))
    x = sp.array(a)
    keep = x[1:3]
    if _held_whole(x):  # NumPy's in-place reshape, still aliased
        x.shape = 24
        x[7] = -1.0
        assert keep[0, 1] == -1.0
        return
    with pytest.raises(AttributeError, match=r"x = x.reshape\(newshape\)"):
        x.shape = 24
    assert x.shape == (4, 6)
    del keep
    x.shape = 24
    assert_eq(x, a.reshape(24))


def _held_whole(x) -> bool:
    """Whether ``x.shape = ...`` reshapes ``x`` in place over its memory: one rank, host blocks
    (this suite splits every array at 2+ ranks)."""
    return world()[1] == 1 and not x._st.be.is_device


def _whole(a):
    with sp.config.set(replicate_below=1 << 20):  # replicated: every rank holds it whole
        return sp.array(a)


@pytest.mark.parametrize(
    ("shape", "new", "view"),
    [((4, 6), 24, ()), ((4, 6), (3, 8), ()), ((6, 4), (2, 6), (slice(2, 5),)), ((2, 5, 7), 35, (1,)),
     ((3, 4, 2), (4, 6), ()), ((12,), (2, 2, 3), ())],
)  # fmt: skip
def test_set_shape_of_an_array_held_whole_keeps_it_aliased(shape, new, view, monkeypatch):
    # Replicated (or on one rank): NumPy's in-place reshape of the copy, over the same memory,
    # whatever other views there are; found without walking the process's objects.
    import spmdarray.routines.manipulation.shape as shape_module

    def no_walk(*args):
        raise AssertionError("walked the heap for an array held whole")

    a = ref(shape)
    base = _whole(a)
    if base._st.be.is_device:
        pytest.skip("device blocks keep the rule of split arrays (a copy, refused while another view shares it)")
    monkeypatch.setattr(shape_module.gc, "get_referrers", no_walk)
    x = base[view] if view else base[...]  # (a view: the base keeps its shape)
    e = a[view] if view else a[...]
    other, e_other = (base[..., :1], a[..., :1]) if not view else (base, a)  # another view sharing elements
    x.shape = new
    e.shape = new
    assert x.shape == e.shape
    assert_eq(x, e)
    idx = min(5, x.size - 1)
    x[numpy.unravel_index(idx, x.shape)] = -7.0  # a write through x is seen through the others
    e[numpy.unravel_index(idx, e.shape)] = -7.0
    assert_eq(base, a)
    assert_eq(other, e_other)
    base[...] = base * 2 + 1  # and the other way round
    a[...] = a * 2 + 1
    assert_eq(x, e)
    assert numpy.shares_memory(x, other) == numpy.shares_memory(e, e_other)


def test_set_shape_held_whole_computes_deferred_readers_first():
    # One rank, fused: a deferred value reading the storage is computed before the memory
    # is shared, so a later write through the reshaped array does not reach it.
    if world()[1] != 1:
        pytest.skip("one rank: arrays there are whole and deferred")
    a = ref((8, 8))
    with sp.config.set(fuse_min_size=0):
        x = sp.array(a)
        if x._st.be.is_device:
            pytest.skip("device blocks keep the rule of split arrays")
        y = x * 2 + 1  # deferred: reads x's storage
        x.shape = 64
        x[3] = 1000.0
        z = x + 1  # x is exposed now: computed at once, from the written memory
    assert_eq(y, a * 2 + 1)
    a2 = a.reshape(64).copy()
    a2[3] = 1000.0
    assert_eq(z, a2 + 1)


def test_set_shape_of_a_contiguous_view_without_other_views():
    a = ref((6, 4))
    x = sp.array(a)[2:5]  # NumPy allows it: the rows are contiguous
    e = a[2:5]
    x.shape = e.shape = (2, 6)
    assert_eq(x, e)


def test_set_shape_of_a_deferred_result():
    a = ref((4, 6))
    x = sp.array(a)
    with sp.config.set(fuse_min_size=0):
        y = x * 2 + 1
        y.shape = (3, 8)
        z = x + 1
        w = z[1:3]  # a view of the deferred result's elements
        if _held_whole(x):  # NumPy's in-place reshape, still aliased
            z.shape = 24
            z[7] = -1.0
            assert w[0, 1] == -1.0
            w[0, 1] = (a + 1)[1, 1]
        else:
            with pytest.raises(AttributeError, match="shares its elements"):
                z.shape = 24
    assert_eq(y, (a * 2 + 1).reshape(3, 8))
    assert_eq(w, (a + 1)[1:3])


def test_reshape_of_a_split_array_into_a_small_shape():
    # the result is small (replicated) while the source is split: every rank needs every element
    a = ref((4, 20000))
    x = sp.array(a)
    assert_eq(x[1].reshape(100, 200), a[1].reshape(100, 200))
    y = x[2:4]
    del x
    y.shape = (200, 200)
    assert_eq(y, a[2:4].reshape(200, 200))


def test_set_shape_of_an_array_alone_walks_no_objects(monkeypatch):
    # An array holding its storage alone (``C.shape = n``) needs no walk over live objects;
    # a view of its storage that shares no elements (``Xi, Yi = mgrid``) does, and is allowed.
    import gc

    walks = []
    real = gc.get_referrers
    monkeypatch.setattr(gc, "get_referrers", lambda *a: walks.append(1) or real(*a))
    a = ref((4, 6))
    x = sp.array(a)
    x.shape = 24
    assert walks == []
    assert_eq(x, a.reshape(24))
    pair = sp.array(numpy.stack([a, -a]))
    first, second = pair[0], pair[1]
    del pair
    held_whole = _held_whole(first)
    first.shape = 24
    if held_whole:
        assert walks == []  # held whole: reshaped in place over the same memory, nothing to look for
    else:
        assert walks  # split, ``second`` holds the storage too: its elements are looked at
    assert_eq(first, a.reshape(24))
    assert_eq(second, -a)
