"""The compiled lane on split arrays this rank does not hold whole, against the Python lane.

``x[key]`` of a split array with a key of Python ints and slices makes its
view in C (the map composed as ``ViewMap.getitem`` composes it), an element
that a current copy holds is read in C (after the storage's element runs,
whose record counts the read), and a binary operator on a row part that a
current copy holds (``L[i, :i] @ x[:i]`` in a triangular solve) computes on
that copy in C.  Each must give the Python lane's objects, values, collectives
and records, and NumPy's bits.  At one rank every split array is held whole
(the whole-array lane); the paths here run at 2 ranks and more.

Run at 1, 2, 3 and 4 ranks::

    mpiexec -n 3 python -m pytest -q --with-mpi tests/test_lane_split_copies.py
"""

from __future__ import annotations

import numpy
import pytest
from helpers import backend, ref, world
from lane_helpers import needs_lane, python_calls, python_only

import spmdarray as sp
from spmdarray.core import element
from spmdarray.core.thunk import READERS
from spmdarray.settings import FIELDS, config

DEFAULT = FIELDS["replicate_below"].default


pytestmark = pytest.mark.usefixtures("rectangles_only")


def _split(a):
    with config.set(replicate_below=0):
        return sp.array(a)


def _bits(got, expected):
    g = numpy.asarray(got)
    assert g.dtype == expected.dtype and g.shape == expected.shape
    assert g.tobytes() == expected.tobytes(), numpy.flatnonzero(g != expected)[:10]


KEYS = [
    3,
    -1,
    (2,),
    (1, slice(None)),
    (4, slice(0, 7)),
    (-3, slice(2, None, 3)),
    (slice(None, None, -1), 5),
    (slice(8, 2, -2), slice(1, 9)),
    (slice(3, 3), 2),
    (slice(None), slice(None, None, -1)),
    (0, slice(40, 50)),
    (slice(-5, None), -2),
]


def _same_view(a, b):
    assert type(a) is type(b) is sp.ndarray
    assert a._s is b._s
    assert a._map == b._map and hash(a._map) == hash(b._map)
    assert a._map.start == b._map.start and a._map.axes == b._map.axes and a._map.shape == b._map.shape
    assert a._lay is b._lay is None and a._pend is b._pend is None
    assert a._loc == b._loc


@pytest.mark.parametrize("key", KEYS, ids=repr)
@pytest.mark.parametrize("view", ["whole", "rows", "transposed", "stepped"])
def test_views_of_split_arrays_as_python_makes_them(key, view):
    a = ref((23, 11), float, 1)
    A = _split(a)
    base, ref_base = {
        "whole": (A, a),
        "rows": (A[3:20], a[3:20]),
        "transposed": (A.T, a.T),
        "stepped": (A[::-2, 1:], a[::-2, 1:]),
    }[view]
    try:
        expected = ref_base[key]
    except IndexError:
        with pytest.raises(IndexError):
            base[key]
        with pytest.raises(IndexError):
            python_only(lambda: base[key])
        return
    python_only(lambda: base[key])  # (the first read sets the array's ``_loc``, which views then keep)
    got = base[key]
    want = python_only(lambda: base[key])
    if numpy.ndim(expected) == 0:
        assert type(got) is type(want) is type(expected) and got == want == expected
        return
    if base._loc[2] is None:  # (not held whole here: the split view; at one rank, the whole-array lane's)
        _same_view(got, want)
    _bits(got, expected)
    _bits(want, expected)


@pytest.mark.parametrize("key", [(23, 0), (0, 11), (-24, 1), (slice(None), 11), (1, slice(None), 0)], ids=repr)
def test_bad_keys_raise_numpy_errors(key):
    a = ref((23, 11), float, 2)
    A = _split(a)
    with pytest.raises(IndexError) as np_err:
        a[key]
    with pytest.raises(IndexError) as sp_err:
        A[key]
    with pytest.raises(IndexError):
        python_only(lambda: A[key])
    assert type(sp_err.value) is type(np_err.value)


def _solve(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def _runs(A):
    h = element.RUNS.get(id(A._s))
    return None if h is None else (h[1], h[2], h[4], None if h[3] is None else h[3][:4])


@pytest.mark.parametrize("n", [300, 37])
@pytest.mark.parametrize("dtype", [float, numpy.complex128, numpy.float32])
def test_triangular_solve_equal_on_both_lanes(n, dtype):
    a = ref((n, n), dtype, 3) + n * numpy.eye(n, dtype=dtype)
    b = ref((n,), dtype, 4)
    expected = _solve(a, numpy.zeros(n, dtype), b)

    def run():
        L = _split(a)
        x, bs = sp.array(numpy.zeros(n, dtype)), sp.array(b)
        sp.sync()
        with sp.comm_stats() as s:
            got = numpy.asarray(_solve(L, x, bs))
        return got, (s.collectives, s.collective_bytes, s.messages_sent), _runs(L), sorted(map(repr, L._s.copies or {}))

    with config.set(replicate_below=DEFAULT):
        got, counts, runs, copies = run()
        got_py, counts_py, runs_py, copies_py = python_only(run)
    _bits(got, expected)
    _bits(got_py, expected)
    assert counts == counts_py
    assert runs == runs_py
    assert copies == copies_py


@pytest.mark.parametrize("walk", ["diagonal", "column", "row then diagonal"])
def test_element_reads_count_runs_as_python_does(walk):
    # Reads a run serves, reads a copy serves and misses, interleaved: the run record (its
    # count of reads since the last miss among them) and the collectives match the Python lane.
    n = 120
    a = ref((n, n), float, 5)

    def reads(A):
        out = []
        for i in range(n):
            if walk == "diagonal":
                out.append(A[i, i])
            elif walk == "column":
                out.append(A[i, 7])
            else:
                out.append(A[i, : i + 1] @ A[i, : i + 1] if i % 3 else A[i, n - 1 - i])
                out.append(A[i, i // 2])
        return out

    def run():
        A = _split(a)
        sp.sync()
        with sp.comm_stats() as s:
            got = reads(A)
        return got, (s.collectives, s.collective_bytes), _runs(A)

    with config.set(replicate_below=DEFAULT):
        got, counts, runs = run()
        got_py, counts_py, runs_py = python_only(run)
    expected = reads(a)
    assert [type(g) for g in got] == [type(g) for g in got_py] == [type(e) for e in expected]
    _bits(numpy.array(got), numpy.array(expected))
    _bits(numpy.array(got_py), numpy.array(expected))
    assert counts == counts_py
    assert runs == runs_py


def test_writes_between_reads_are_seen():
    n = 90
    a = ref((n, n), float, 6)
    v = ref((n,), float, 7)

    def loop(xp, A, w):
        out = []
        for i in range(n):
            out.append(A[i, :i] @ w[:i])
            out.append(A[i, i])
            if i % 5 == 2 and i + 1 < n:
                A[i + 1, 0] = float(i)
            if i % 7 == 3:
                A[i:, : i // 2] *= 0.5
        return out

    expected = numpy.array(loop(numpy, a.copy(), v))
    with config.set(replicate_below=DEFAULT):
        got = numpy.array(loop(sp, _split(a), sp.array(v)))
        got_py = numpy.array(python_only(loop, sp, _split(a), sp.array(v)))
    _bits(got, expected)
    _bits(got_py, expected)


@needs_lane
def test_sweep_in_c_after_its_rectangle():
    # Past the first rows, a row part's view, its product and the diagonal element run
    # with no Python call on a rank that does not hold the matrix whole.
    if world()[1] == 1:
        pytest.skip("at one rank every split array is held whole (the whole-array lane)")
    if backend().is_device:
        pytest.skip("device blocks: their copies are read by the Python path")
    n = 400
    a = ref((n, n), float, 8) + n * numpy.eye(n)
    with config.set(replicate_below=DEFAULT):
        L = _split(a)
        x = sp.array(numpy.ones(n))
        for i in range(200):
            L[i, :i] @ x[:i]
            L[i, i]
        i = 199
        view = L[i, :i]
        view @ x[:i]  # (copies hold the row part and the diagonal now, whatever the sweep gathered)
        L[i, i]
        assert python_calls(lambda: L[i, :i]) == 0
        called = []
        assert python_calls(lambda: view @ x[:i], names=called) == 0, called
        assert python_calls(lambda: L[i, i]) == 0
        _bits(numpy.array(view @ x[:i]), numpy.array(a[i, :i] @ numpy.ones(i)))
        assert L[i, i] == a[i, i]
        # A deferred value reading another array does not stop it; one reading L's storage is
        # computed first (by the Python path).
        other = _split(ref((300, 300), float, 9))
        with config.set(fuse=True, fuse_min_size=0):
            pending = other + 1.0
            assert READERS and id(L._s) not in READERS
            assert python_calls(lambda: view @ x[:i]) == 0
            reader = L * 2.0
            assert id(L._s) in READERS
            _bits(numpy.array(view @ x[:i]), numpy.array(a[i, :i] @ numpy.ones(i)))
            assert id(L._s) not in READERS
        _bits(numpy.asarray(reader), a * 2.0)
        _bits(numpy.asarray(pending), ref((300, 300), float, 9) + 1.0)
