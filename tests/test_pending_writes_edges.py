"""Pending writes under attack: every way a program can observe a destination left pending.

A fused assignment ``x[...] = expr`` whose value waits for halo messages is
computed when its destination is next used (``config.fuse_defer_writes``).
Each case below leaves such a write pending (checked: the destination's
storage lists it at two or more ranks) and then observes the destination,
its value or its operands another way; NumPy is the reference.  Two modes:
every operation fused (``fuse_min_size=0``, small uneven shapes) and the
library's defaults (arrays above the default fusion threshold).
"""

from __future__ import annotations

import copy
import os

import numpy
import pytest
from helpers import assert_eq, world
from io_helpers import shared_dir

import spmdarray as sp
from spmdarray.fusion.record import Write
from spmdarray.settings import config

#: (settings, shape) per mode: small arrays with every operation fused, and large ones at the defaults.
MODES = {"min_size_0": ({"fuse_min_size": 0}, (13, 7)), "defaults": ({}, (133, 131))}


@pytest.fixture(params=list(MODES))
def mode(request):
    """The settings of the mode (entered) and the shape to use."""
    settings, shape = MODES[request.param]
    with config.set(fuse=True, replicate_below=0, **settings):
        yield shape


def _pending(x) -> bool:
    """Whether a pending write into ``x``'s storage is recorded (without computing anything)."""
    return any(type(w) is Write for w in x._s.flights)


def _pending_somewhere(x) -> bool:
    """Whether a rank has a pending write into ``x`` (collective; computes nothing)."""
    from mpi4py import MPI

    return MPI.COMM_WORLD.allreduce(_pending(x), op=MPI.LOR)


def _stmt(xp, a, x):
    """The statement left pending: reads the four neighbours of ``a`` (halo messages on any split)."""
    x[1:-1, 1:-1] = (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] - a[1:-1, :-2]) * 0.5


def _setup(shape, seed=0):
    a0 = numpy.random.default_rng(seed).random(shape)
    x0 = numpy.zeros(shape)
    a, x = sp.array(a0), sp.array(x0)
    _stmt(sp, a, x)
    _stmt(numpy, a0, x0)
    if world()[1] > 1 and not sp.empty(1)._st.be.is_device:  # (never left pending on a device)
        assert _pending_somewhere(x), "the statement under test was not left pending"
    return a, x, a0, x0


def _np(v):
    return numpy.asarray(v) if isinstance(v, sp.ndarray) else v


def _block_of(x, full):
    return full[tuple(slice(lo, hi) for lo, hi in x.layout.block(world()[0]))]


# ---------------------------------------------------------------- observations
OBSERVE = {
    "element": lambda xp, x: x[5, 3],
    "negative index": lambda xp, x: x[-3, -2],
    "item": lambda xp, x: x.item(40),
    "float": lambda xp, x: float(x[6, 1]),
    "asarray": lambda xp, x: numpy.asarray(x),
    "tolist": lambda xp, x: numpy.array(x.tolist()),
    "repr": lambda xp, x: repr(x).replace("array(", "").replace("ndarray(", "")[:60],
    "str": lambda xp, x: str(x)[:60],
    "equal all": lambda xp, x: bool((x == x.copy()).all()),
    "equal other": lambda xp, x: bool((x == xp.zeros(x.shape)).any()),
    "sum": lambda xp, x: x.sum(),
    "max axis 1": lambda xp, x: x.max(axis=1),
    "deepcopy": lambda xp, x: copy.deepcopy(x),
    "copy": lambda xp, x: x.copy(),
    "astype": lambda xp, x: x.astype(numpy.float32),
    "reshape": lambda xp, x: x.reshape(-1),
    "transpose": lambda xp, x: x.T.copy(),
    "fancy rows": lambda xp, x: x[[1, 5, 2, 5]],
    "fancy pairs": lambda xp, x: x[[1, 4, 6], [0, 2, 3]],
    "mask": lambda xp, x: x[x > 0.7],
    "where": lambda xp, x: xp.where(x > 0.7, x, -1.0),
    "sort": lambda xp, x: xp.sort(x, axis=0),
    "argsort": lambda xp, x: xp.argsort(x.ravel(), kind="stable"),
    "concatenate": lambda xp, x: xp.concatenate([x, x[:3]]),
    "matmul": lambda xp, x: x @ x.T,
    "fft": lambda xp, x: xp.fft.fft(x, axis=0),
    "shift read": lambda xp, x: x[2:, :] - x[:-2, :],
    "strided view": lambda xp, x: x[::3, ::2] * 2.0,
    "column": lambda xp, x: x[:, 2] + 1.0,
    "cumsum": lambda xp, x: xp.cumsum(x, axis=0),
}


@pytest.mark.parametrize("how", list(OBSERVE))
def test_observing_a_pending_destination(mode, how):
    a, x, a0, x0 = _setup(mode)
    got = OBSERVE[how](sp, x)
    ref = OBSERVE[how](numpy, x0)
    if isinstance(ref, str | bool):
        assert got == ref
    elif isinstance(ref, float):
        numpy.testing.assert_allclose(got, ref, rtol=1e-12)
    else:
        assert_eq(got, ref, rtol=1e-10)
    assert_eq(x, x0, exact=True)


def test_local_block_and_global_slices(mode):
    a, x, a0, x0 = _setup(mode)
    sl = x.global_slices
    numpy.testing.assert_array_equal(x.local, x0[sl])
    assert_eq(x, x0, exact=True)


def test_send_and_recv_of_local_blocks(mode, comm):
    """The program exchanges blocks itself (mpi4py): each rank receives its left neighbour's."""
    rank, size = comm.rank, comm.size
    a, x, a0, x0 = _setup(mode)
    left, right = (rank - 1) % size, (rank + 1) % size
    box = tuple(slice(lo, hi) for lo, hi in x.layout.block(left))
    got = numpy.empty(x0[box].shape)
    mine = numpy.ascontiguousarray(x.local)
    req = comm.Isend(mine, dest=right)
    comm.Recv(got, source=left)
    req.Wait()
    numpy.testing.assert_array_equal(got, x0[box])


def test_from_local_of_a_pending_block(mode):
    a, x, a0, x0 = _setup(mode)
    y = sp.from_local(x.local.copy(), grid=x.layout.dims)
    assert_eq(y, x0, exact=True)
    z = sp.from_local(x.local, grid=x.layout.dims)  # aliases the block: a later write into x shows through
    _stmt(sp, 2.0 * a, x)
    _stmt(numpy, 2.0 * a0, x0)
    assert_eq(z, x0, exact=True)


def test_hdf5_round_trip(mode):
    pytest.importorskip("h5py")
    a, x, a0, x0 = _setup(mode)
    with shared_dir() as d:
        path = os.path.join(d, "x.h5")
        sp.save_hdf5(path, {"x": x})
        y = sp.load_hdf5(path, "x")
    assert_eq(y, x0, exact=True)


def test_checkpoint_with_two_pending_writes(mode):
    pytest.importorskip("h5py")
    a, x, a0, x0 = _setup(mode)
    y, y0 = sp.zeros(mode), numpy.zeros(mode)
    _stmt(sp, x, y)
    _stmt(numpy, x0, y0)
    with shared_dir() as d:
        path = os.path.join(d, "ck.h5")
        sp.checkpoint(path, step=3, x=x, y=y)
        step, arrays, _ = sp.restore(path)
    assert step == 3
    assert_eq(arrays["x"], x0, exact=True)
    assert_eq(arrays["y"], y0, exact=True)


def test_blocks_sent_then_received_by_the_program(mode, comm):
    """Blocks of a pending destination sent by the program (mpi4py), then a received block written
    into ``x.local`` after a further assignment: NumPy's order."""
    rank, size = comm.rank, comm.size
    a, x, a0, x0 = _setup(mode)
    left, right = (rank - 1) % size, (rank + 1) % size
    peer = tuple(slice(lo, hi) for lo, hi in x.layout.block(left))
    got = numpy.empty(x0[peer].shape)
    req = comm.Irecv(got, source=left)
    comm.Send(numpy.ascontiguousarray(x.local), dest=right)
    req.Wait()
    numpy.testing.assert_array_equal(got, x0[peer])
    _stmt(sp, 2.0 * a, x)  # x's block is exposed now: computed at once
    _stmt(numpy, 2.0 * a0, x0)
    one = numpy.empty(1)
    req = comm.Irecv(one, source=left)
    comm.Send(numpy.array([float(rank)]), dest=right)
    req.Wait()
    x.local[...] = one[0]
    x.mark_modified()
    for r in range(size):
        x0[tuple(slice(lo, hi) for lo, hi in x.layout.block(r))] = float((r - 1) % size)
    assert_eq(x, x0, exact=True)


def test_resize_and_shape_assignment(mode):
    a, x, a0, x0 = _setup(mode)
    x.shape = (x0.size,)
    x0.shape = (x0.size,)
    assert_eq(x, x0, exact=True)
    a, x, a0, x0 = _setup(mode, seed=1)
    x.resize((x0.shape[0] + 2, x0.shape[1]), refcheck=False)
    x0.resize((x0.shape[0] + 2, x0.shape[1]), refcheck=False)
    assert_eq(x, x0, exact=True)


def test_view_with_another_dtype_made_before(mode):
    """``x.view(dtype)`` shares the allocation through another storage; it must see the write."""
    rng = numpy.random.default_rng(2)
    a0 = rng.random(mode)
    x0 = numpy.zeros(mode)
    a, x = sp.array(a0), sp.array(x0)
    v, v0 = x.view(numpy.int64), x0.view(numpy.int64)
    same, same0 = x.view(numpy.float64), x0.view(numpy.float64)
    _stmt(sp, a, x)
    _stmt(numpy, a0, x0)
    assert_eq(v, v0, exact=True)
    assert_eq(same, same0, exact=True)
    _stmt(sp, 3.0 * a, x)  # pending again, then a write through the view
    _stmt(numpy, 3.0 * a0, x0)
    same[2:4, :] = -1.0
    same0[2:4, :] = -1.0
    assert_eq(x, x0, exact=True)
    t, t0 = x[2:, :] * 2.0 + x[:-2, :], x0[2:, :] * 2.0 + x0[:-2, :]  # a value reading x, then a write via v
    v[...] = 0
    v0[...] = 0
    assert_eq(t, t0, exact=True)
    assert_eq(same, same0, exact=True)


@pytest.mark.parametrize("part", ["real", "imag"])
def test_write_into_a_part_of_a_complex_array(mode, part):
    a0 = numpy.random.default_rng(8).random(mode)
    z0 = numpy.zeros(mode, complex) + 1j
    a, z = sp.array(a0), sp.array(z0)
    _stmt(sp, a, getattr(z, part))
    _stmt(numpy, a0, getattr(z0, part))
    assert_eq(z, z0, exact=True)
    _stmt(sp, 2.0 * a, getattr(z, part))
    _stmt(numpy, 2.0 * a0, getattr(z0, part))
    assert_eq(abs(z), abs(z0))
    assert_eq(getattr(z, part), getattr(z0, part), exact=True)


# ---------------------------------------------------------------- ordering and aliasing
def _two_writes(xp, a, x):
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    x[:-2, 1:] = a[2:, :-1] * a[1:-1, 1:]  # overlaps the first
    return x


def _aliasing(xp, a, x):
    x[1:-1, :] = a[2:, :] - a[:-2, :]
    x[1:, :] = x[:-1, :] + a[1:, :]  # reads its own pending destination, shifted
    a[1:, :] = a[:-1, :] * 0.5 + a[1:, :]  # overlapping views of one array
    return x


def _view_write(xp, a, x):
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    v = x[2:6, 1:]
    v[...] = 7.0  # eager write into a view of the pending destination
    w = x[:, :3]
    w[1:-1, :] = a[2:, :3] - a[:-2, :3]  # a second pending write through another view
    return x


def _value_changed_after(xp, a, x):
    y = xp.zeros_like(x)
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    y[1:-1, :] = x[2:, :] + x[:-2, :]  # reads the pending x across ranks
    x[...] = 0.0
    a[...] = -1.0
    return y


def _sources_deleted(xp, a, x):
    b = a * 2.0
    t = b[2:, :] - a[:-2, :]
    x[1:-1, :] = t
    del b, t
    a += 1.0
    return x


def _in_place_operators(xp, a, x):
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    x[1:-1, :] += a[2:, :] * a[:-2, :]
    x[1:-1, :] *= 0.5
    return x


def _pending_into_operand(xp, a, x):
    x[1:-1, :] = a[2:, :] + a[:-2, :]
    a[1:-1, :] = x[1:-1, :] + a[:-2, :]  # x read in place, a written while x's write reads a
    return a


def _one_value_two_destinations(xp, a, x):
    """One named value assigned twice, then changed: both destinations hold the old value."""
    y = xp.zeros_like(x)
    t = (a[2:, :] + a[:-2, :]) * 0.5
    x[1:-1, :] = t
    y[1:-1, :] = t
    t += 1.0
    return y, t


def _one_value_copied_then_changed(xp, a, x):
    y = xp.zeros_like(x)
    t = (a[2:, :] - a[:-2, :]) * 0.5
    x[1:-1, :] = t
    y[:-2, :] = t
    z = t.copy()
    t -= 1.0
    return y, z


def _named_value_read_inline(xp, a, x):
    t = (a[2:, :] + a[:-2, :]) * 0.5
    x[1:-1, :] = t
    x[:-2, :] = t * 2.0  # a second pending write computing the same value inside its kernel
    u = t * 3.0
    t[...] = 0.0
    return u, t


def _local_second_write(xp, a, x):
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 0.5
    x[1:-1, :] = a[1:-1, :] * 2.0  # needs no message: computed at once, after the first
    x[2:4, :] = a[2:4, :] - 1.0
    return (x,)


def _chained_pending(xp, a, x):
    y = xp.zeros_like(x)
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 0.5
    y[1:-1, :] = (x[2:, :] + x[:-2, :]) * 0.5
    x[1:-1, :] = y[2:, :] - y[:-2, :]
    y[...] = 0.0
    return (y,)


def _eager_writes(xp, a, x):
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 0.5
    xp.copyto(x[2:5], 3.0)
    x[1:-1, :] = (a[2:, :] - a[:-2, :]) * 0.5
    x[[1, 2]] = -1.0
    x[1:-1, :] = (a[2:, :] * a[:-2, :]) * 0.5
    x[x > 0.2] = 9.0
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 0.25
    x.put([3, 10], [5.0, 6.0])
    y = x.copy()
    x[1:-1, :] = (a[2:, :] - a[:-2, :]) * 0.25
    x.fill(2.0)
    return (y,)


def _strided_and_transposed_writes(xp, a, x):
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 0.5
    v = x[::2]
    v[1:] = (a[2::2] - a[:-2:2])[: v.shape[0] - 1]
    w = x.T
    w[1:, 1:-1] = a.T[1:, 2:] - w[1:, :-2]
    x[...] = x[::-1]
    return (x,)


def _rows_iterated(xp, a, x):
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * 0.5
    return (xp.asarray([float(r[1]) for r in x]),)


def _five(a):
    return (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] - a[1:-1, :-2]) * 0.5


def _value_then_into_its_own_operand(xp, a, x):
    """Pending into ``x``, then assigned into the array it reads (computed in place), then changed."""
    t = _five(a)
    x[1:-1, 1:-1] = t
    a[1:-1, 1:-1] = t
    t += 1.0
    return (t,)


def _value_then_into_its_own_operand_then_overwritten(xp, a, x):
    t = _five(a)
    x[1:-1, 1:-1] = t
    a[1:-1, 1:-1] = t
    u = t * 2.0
    a[...] = -1.0
    return t, u


def _value_into_its_operand_then_pending_elsewhere(xp, a, x):
    t = _five(a)
    a[1:-1, 1:-1] = t  # reads its destination: computed at once, ``t`` then reads ``a``
    x[1:-1, 1:-1] = t
    t[...] = 7.0
    a[...] = 3.0
    return (t,)


@pytest.mark.parametrize(
    "body",
    [
        _value_then_into_its_own_operand,
        _value_then_into_its_own_operand_then_overwritten,
        _value_into_its_operand_then_pending_elsewhere,
        _two_writes,
        _aliasing,
        _view_write,
        _value_changed_after,
        _sources_deleted,
        _in_place_operators,
        _pending_into_operand,
        _one_value_two_destinations,
        _one_value_copied_then_changed,
        _named_value_read_inline,
        _local_second_write,
        _chained_pending,
        _eager_writes,
        _strided_and_transposed_writes,
        _rows_iterated,
    ],
)
def test_ordering_and_aliasing(mode, body):
    a0 = numpy.random.default_rng(3).random(mode)
    x0 = numpy.zeros(mode)
    a, x = sp.array(a0), sp.array(x0)
    got = body(sp, a, x)
    ref = body(numpy, a0, x0)
    for g, r in zip(got if type(got) is tuple else (got,), ref if type(ref) is tuple else (ref,)):
        assert_eq(g, r, exact=True)
    assert_eq(x, x0, exact=True)
    assert_eq(a, a0, exact=True)
    assert_eq(x, x0, exact=True)
    assert_eq(a, a0, exact=True)


def test_sync_in_a_loop(mode):
    a0 = numpy.random.default_rng(4).random(mode)
    b0 = numpy.zeros(mode)
    a, b = sp.array(a0), sp.array(b0)
    for k in range(4):
        b[1:-1, 1:-1] = 0.25 * (a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2])
        if k % 2:
            sp.sync()
        a[1:-1, 1:-1] = 0.25 * (b[2:, 1:-1] + b[:-2, 1:-1] + b[1:-1, 2:] + b[1:-1, :-2])
        sp.sync()
        b0[1:-1, 1:-1] = 0.25 * (a0[2:, 1:-1] + a0[:-2, 1:-1] + a0[1:-1, 2:] + a0[1:-1, :-2])
        a0[1:-1, 1:-1] = 0.25 * (b0[2:, 1:-1] + b0[:-2, 1:-1] + b0[1:-1, 2:] + b0[1:-1, :-2])
        assert not _pending(a) and not _pending(b)
    assert_eq(a, a0, exact=True)
    assert_eq(b, b0, exact=True)


# ---------------------------------------------------------------- settings flipped
@pytest.mark.parametrize(
    "flip", [{"fuse_defer_writes": False}, {"fuse": False}, {"whole_lane": False}, {"fuse_compiler": "numpy"}]
)
def test_settings_flipped_while_pending(mode, flip):
    a, x, a0, x0 = _setup(mode)
    with config.set(**flip):
        y = x[2:, :] * 2.0 - x[:-2, :]
        x[:3, :] = a[-3:, :] + 1.0
        _stmt(sp, x, a)
    y0 = x0[2:, :] * 2.0 - x0[:-2, :]
    x0[:3, :] = a0[-3:, :] + 1.0
    _stmt(numpy, x0, a0)
    assert_eq(y, y0, exact=True)
    assert_eq(a, a0, exact=True)
    assert_eq(x, x0, exact=True)


# ---------------------------------------------------------------- errors
def test_errstate_raise_in_the_statement(mode):
    a0 = numpy.random.default_rng(5).random(mode)
    a0[3, :] = 0.0
    a, x = sp.array(a0), sp.zeros(mode)
    with sp.errstate(divide="raise"), pytest.raises(FloatingPointError):
        x[1:-1, :] = a[2:, :] / a[:-2, :]
    with numpy.errstate(divide="raise"), pytest.raises(FloatingPointError):
        numpy.zeros(mode)[1:-1, :] = a0[2:, :] / a0[:-2, :]


def test_errstate_raise_when_the_pending_write_is_computed(mode):
    """Recorded where errors are ignored, computed inside ``errstate(all="raise")``: NumPy computed it at
    the statement (a warning at most), so reading it later raises nothing, whatever evaluates it."""
    a0 = numpy.random.default_rng(6).random(mode)
    a0[3, :] = 0.0
    a, x = sp.array(a0), sp.zeros(mode)
    x0 = numpy.zeros(mode)
    for k, compiler in enumerate(("numba", "numpy")):
        with config.set(fuse_compiler=compiler):
            with sp.errstate(all="ignore"), numpy.errstate(all="ignore"):
                x[1:-1, :] = a[2:, :] / a[:-2, :] - k
                x0[1:-1, :] = a0[2:, :] / a0[:-2, :] - k
            with sp.errstate(all="raise"):
                y = x.sum()
                assert_eq(x, x0, exact=True)
        assert y == x0.sum()  # inf


def test_integer_values_and_division(mode):
    a0 = numpy.random.default_rng(7).integers(-5, 5, mode)
    a0[2, :] = 0
    a, x = sp.array(a0), sp.zeros(mode, dtype=numpy.int64)
    x0 = numpy.zeros(mode, dtype=numpy.int64)
    x[1:-1, :] = a[2:, :] - a[:-2, :] * 3
    x0[1:-1, :] = a0[2:, :] - a0[:-2, :] * 3
    with sp.errstate(all="ignore"), numpy.errstate(all="ignore"):
        y, y0 = x // a, x0 // a0
    assert_eq(y, y0, exact=True)
    with sp.errstate(divide="raise"), pytest.raises(FloatingPointError):
        x // a  # noqa: B018
    for xp, b, y in ((numpy, a0, x0), (sp, a, x)):  # an ``out`` NumPy's casting rule refuses
        with pytest.raises(TypeError, match="same_kind"):
            xp.add(b[2:, :], b[:-2, :], out=xp.zeros(mode, dtype=bool)[1:-1, :], casting="same_kind")
        f = xp.zeros(mode, dtype=numpy.float32)
        xp.add(b[2:, :], b[:-2, :], out=f[1:-1, :], casting="same_kind")
        y[1:-1, :] = f[1:-1, :].astype(numpy.int64) + y[1:-1, :]
    assert_eq(x, x0, exact=True)


# ---------------------------------------------------------------- shapes, dtypes, many writes
def _stencil_1d(xp, a, x):
    x[1:-1] = (a[2:] + a[:-2]) * 0.5
    return x.sum()


def _stencil_3d(xp, a, x):
    x[1:-1, :, 1:] = (a[2:, :, 1:] - a[:-2, :, :-1]) * 0.5
    return x[:, 1, :].max()


def _broadcast_operands(xp, a, x):
    r = a[0, :] * 3.0
    s = xp.asarray(a[1, 1] + 0.0)  # 0-d
    x[1:-1, :] = (a[2:, :] + a[:-2, :]) * r[None, :] - s
    x[:-2, 1:] = a[2:, :-1] + r[1:]
    return x[1, :]


def _int_into_float(xp, a, x):
    i = (a * 100).astype(numpy.int32)
    x[1:-1, :] = i[2:, :] - i[:-2, :]  # an int32 value into a float64 destination
    j = i.astype(numpy.int64)
    x[:-2, :] = j[2:, :] * j[1:-1, :]
    return x[-1, :]


def _ufunc_out(xp, a, x):
    xp.add(a[2:, :], a[:-2, :], out=x[1:-1, :])
    xp.multiply(x[1:-1, :], a[2:, :], out=x[1:-1, :])
    x.sort(axis=0)
    return x[2, :]


@pytest.mark.parametrize(
    "body, shapes",
    [
        (_stencil_1d, ((2,), (3,), (5,), (31,), (20001,))),
        (_stencil_3d, ((2, 3, 2), (5, 2, 7), (31, 26, 21))),
        (_broadcast_operands, ((3, 2), (13, 7), (131, 129))),
        (_int_into_float, ((3, 2), (13, 7), (131, 129))),
        (_ufunc_out, ((3, 2), (13, 7), (131, 129))),
    ],
)
def test_shapes_dtypes_and_empty_blocks(body, shapes):
    """Uneven and tiny shapes (some ranks own nothing at 3 and 4 ranks), 1-d and 3-d, broadcast operands."""
    for shape in shapes:
        for min_size in (0, None):
            a0 = numpy.random.default_rng(9).random(shape)
            x0 = numpy.zeros(shape)
            with config.set(fuse=True, replicate_below=0, **({} if min_size is None else {"fuse_min_size": 0})):
                a, x = sp.array(a0), sp.array(x0)
                got = body(sp, a, x)
                ref = body(numpy, a0, x0)
                assert_eq(got, ref)
                assert_eq(x, x0, exact=True)


def test_more_pending_writes_than_open_flights_allowed():
    """Over ``MAX_OPEN`` pending writes into distinct arrays, never read until the end."""
    a0 = numpy.random.default_rng(10).random((11, 5))
    with config.set(fuse=True, replicate_below=0, fuse_min_size=0):
        a = sp.array(a0)
        xs = [sp.zeros((11, 5)) for _ in range(300)]
        for k, x in enumerate(xs):
            x[1:-1, :] = (a[2:, :] + a[:-2, :]) * k
            a[k % 11, :] = a[(k + 1) % 11, :] * 0.5 + 1.0
        sums = [x.sum() for x in xs]
    refs = []
    for k in range(300):
        x0 = numpy.zeros((11, 5))
        x0[1:-1, :] = (a0[2:, :] + a0[:-2, :]) * k
        a0[k % 11, :] = a0[(k + 1) % 11, :] * 0.5 + 1.0
        refs.append(x0.sum())
    numpy.testing.assert_allclose(sums, refs, rtol=1e-12)
    assert_eq(a, a0, exact=True)


def test_local_taken_on_one_rank_only(mode, comm):
    """``x.local`` is not collective: one rank computes (and exposes) its block, the others keep it pending."""
    a, x, a0, x0 = _setup(mode)
    if comm.rank == 0:
        numpy.testing.assert_array_equal(x.local, _block_of(x, x0))
    for k in range(3):
        _stmt(sp, a * k, x)
        _stmt(numpy, a0 * k, x0)
        a[1:-1, :] = (x[2:, :] - x[:-2, :]) * 0.5
        a0[1:-1, :] = (x0[2:, :] - x0[:-2, :]) * 0.5
    if comm.rank == comm.size - 1:
        sp.sync()  # also not collective
    assert_eq(x, x0, exact=True)
    assert_eq(a, a0, exact=True)


def test_an_error_in_a_later_statement_keeps_the_pending_write(mode):
    a, x, a0, x0 = _setup(mode)
    with pytest.raises(ValueError, match="broadcast"):
        x[1:-1, :] = a[3:, :] + a[:-2, :]
    with pytest.raises(ValueError):
        numpy.zeros(mode)[1:-1, :] = a0[3:, :] + a0[:-2, :]
    with pytest.raises(TypeError):
        x[1:-1, :] = (a[2:, :] + a[:-2, :]) | 1
    assert_eq(x, x0, exact=True)


@pytest.mark.parametrize("part", ["real", "imag"])
def test_values_reading_a_complex_part_then_a_write_through_another_storage(mode, part):
    """``z.real`` is a second storage on ``z``'s memory: a value read from one and a write through the
    other (the parent, or a second part view) keep NumPy's order (they used to read the new values)."""
    z0 = numpy.random.default_rng(11).random(mode) * (1 + 2j)
    z = sp.array(z0)
    t = getattr(z, part)[2:, :] + getattr(z, part)[:-2, :]
    t0 = getattr(z0, part)[2:, :] + getattr(z0, part)[:-2, :]
    z[...] = 0
    z0[...] = 0
    assert_eq(t, t0, exact=True)
    z, z0 = sp.array(z0 + 1j), z0 + 1j
    w = getattr(z, part)[2:, :] * 2.0
    w0 = getattr(z0, part)[2:, :] * 2.0
    q, q0 = getattr(z, part), getattr(z0, part)
    q[...] = 5.0
    q0[...] = 5.0
    assert_eq(w, w0, exact=True)
    assert_eq(z, z0, exact=True)


# ---------------------------------------------------------------- random programs
def _random_program(xp, arrs, ops):
    """Statements over three arrays chosen by ``ops``; returns the scalars read on the way."""
    obs = []
    for op, i, j, k, c in ops:
        a, b = arrs[i], arrs[j]
        if op == 0:  # a stencil into a view, from another array (halos)
            a[1:-1, 1:-1] = (b[2:, 1:-1] + b[:-2, 1:-1] - b[1:-1, 2:] * c) * 0.5
        elif op == 1:  # reads its own destination, shifted
            a[1:-1, :] = a[2:, :] * c + b[:-2, :]
        elif op == 2:  # another array read in place, a third with halos
            a[1:-1, 1:-1] = b[1:-1, 1:-1] * c + arrs[k][2:, 2:] - arrs[k][:-2, :-2]
        elif op == 3:
            obs.append(float(a[k + 1, 2]))
        elif op == 4:
            a[k % 5 + 1, :] = c
        elif op == 5:
            obs.append(float(a.sum()))
        elif op == 6:
            a[:, 1:] += b[:, :-1] * c
        elif op == 7:  # a named value, then its operand's name rebound
            t = (b[2:, :] - b[:-2, :]) * c
            a[1:-1, :] = t
            arrs[j] = b * 0.5 + 1.0
        elif op == 8:  # a strided view as destination
            v = a[::2, 1:]
            v[1:, :] = (b[2::2, 1:] + b[1:-1:2, :-1])[: v.shape[0] - 1]
        elif op == 9 and xp is sp:
            sp.sync()
    return obs


@pytest.mark.parametrize("seed", range(12))
def test_random_programs(seed, monkeypatch):
    made = []
    init = Write.__init__

    def counted(self, *args):
        made.append(1)
        init(self, *args)

    monkeypatch.setattr(Write, "__init__", counted)
    r = numpy.random.default_rng(seed)
    shape = (int(r.integers(5, 20)), int(r.integers(4, 12)))
    ops = [(int(r.integers(0, 10)), *map(int, r.integers(0, 3, 3)), float(r.integers(1, 4))) for _ in range(40)]
    ops = [(o, i, (i + 1) % 3 if o == 7 and j == i else j, k, c) for o, i, j, k, c in ops]
    base = [r.random(shape) for _ in range(3)]
    with config.set(fuse=True, replicate_below=0, fuse_min_size=0):
        arrs = [sp.array(b) for b in base]
        got = _random_program(sp, arrs, ops)
        refs = [b.copy() for b in base]
        ref = _random_program(numpy, refs, ops)
        numpy.testing.assert_allclose(got, ref, rtol=1e-12)
        for x, x0 in zip(arrs, refs):
            assert_eq(x, x0, exact=True)
    if world()[1] > 1 and not sp.empty(1)._st.be.is_device:  # (never left pending on a device)
        from mpi4py import MPI

        assert MPI.COMM_WORLD.allreduce(len(made)) > 0


def test_casts_into_a_smaller_dtype(mode):
    """A value cast unsafely by the assignment (NumPy wraps integers, warns or raises on inf to int)."""
    a0 = (numpy.random.default_rng(12).random(mode) * 1000).astype(numpy.int64) * 1000
    a = sp.array(a0)
    xs, x0s = sp.zeros(mode, dtype=numpy.int8), numpy.zeros(mode, dtype=numpy.int8)
    _stmt(sp, a, xs)
    _stmt(numpy, a0, x0s)
    assert_eq(xs, x0s, exact=True)
    f0 = a0.astype(float)
    f0[4, :] = 0.0
    f = sp.array(f0)
    for xp, src, dst in ((numpy, f0, numpy.zeros(mode, numpy.int32)), (sp, f, sp.zeros(mode, numpy.int32))):
        with xp.errstate(all="ignore"):
            t = src[2:, :] / src[:-2, :]
        with xp.errstate(invalid="raise"), pytest.raises(FloatingPointError):
            dst[1:-1, :] = t
