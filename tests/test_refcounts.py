"""Decisions made from reference counts: a named array is never taken for a temporary.

``core/operators.py`` reuses the allocation of an unnamed temporary operand
(``(a + b) * 0.2``); ``core/thunk.py`` computes an unnamed deferred operand
inside its consumer's kernel; ``ndarray.resize`` refuses an array that
another holds.  All three count references relative to the baselines of
``core/refs.py``.  Python 3.14 borrows stack references of named locals, so
elision must be off there (checked on the decision function, since CI has no
3.14 interpreter).
"""

import operator
import sys

import numpy
import pytest
from helpers import assert_eq, python_lane_only

import spmdarray as sp
from spmdarray.core import operators, refs

GLOBAL = None


class _Holder:
    pass


def _shares(x, y):
    return x._st is y._st


def _fresh():
    return sp.ones(7)


# Each path in its own function, with the operand held by one name only (a
# second holder, such as a lambda's parameter, would hide a miscount).
def _add():
    x = _fresh()
    r = x + 1
    return x, r


def _radd():
    x = _fresh()
    r = 1 + x
    return x, r


def _square():
    x = _fresh()
    r = x * x
    return x, r


def _dunder():
    x = _fresh()
    r = x.__add__(1)
    return x, r


def _reflected_dunder():
    x = _fresh()
    r = x.__radd__(1)
    return x, r


def _unbound():
    x = _fresh()
    r = type(x).__mul__(x, 2)
    return x, r


def _operator_module():
    x = _fresh()
    r = operator.add(x, 1)
    return x, r


def _global():
    global GLOBAL
    GLOBAL = _fresh()
    r = GLOBAL - 1
    x, GLOBAL = GLOBAL, None
    return x, r


def _attribute():
    h = _Holder()
    h.x = _fresh()
    r = h.x / 2
    return h.x, r


def _item():
    items = [_fresh()]
    r = items[0] ** 2
    return items[0], r


def _closure():
    y = _fresh()

    def inner():
        return y * 3

    r = inner()
    return y, r


@pytest.mark.parametrize(
    "path",
    [_add, _radd, _square, _dunder, _reflected_dunder, _unbound, _operator_module]
    + [_global, _attribute, _item, _closure],
    ids=lambda f: f.__name__.strip("_"),
)
def test_a_named_operand_is_never_reused(path):
    x, r = path()
    assert not _shares(r, x), f"{path.__name__}: the result was written into the named operand"
    assert_eq(x, numpy.ones(7), exact=True)


def test_temporaries_are_reused_where_the_count_tells(monkeypatch):
    if not operators._TEMP_COUNT:
        assert sys.version_info >= (3, 14) or sys.implementation.name != "cpython", "elision off on CPython < 3.14"
        pytest.skip("temporary elision is off on this interpreter (by design)")
    reused = []
    original = operators._maybe_reuse

    def spy(ufunc, a, b, args):
        out = original(ufunc, a, b, args)
        reused.append(out is not None)
        return out

    monkeypatch.setattr(operators, "_maybe_reuse", spy)
    monkeypatch.setattr(operators, "MIN_ELIDE_BYTES", 0)  # small arrays too
    # eager: a deferred sum is no allocation to reuse; the engine's path, not NumPy's own call
    with sp.config.set(fuse=False, whole_lane=False):
        a = _fresh()
        d = (a + 1) * 0.5  # the sum is a temporary
    assert reused == [True]
    assert_eq(d, numpy.ones(7), exact=True)
    assert_eq(a, numpy.ones(7), exact=True)


def test_elision_decision_errs_on_the_side_of_copying():
    op = {"l": (4, True), "r": (4, True)}
    named = {"l": (5, True), "r": (5, True)}
    assert operators.elision_decision(op, named, (3, 11), "cpython") == {"l": 4, "r": 4}
    # Python 3.14's borrowed references: a named local counts as a temporary.
    assert operators.elision_decision(op, op, (3, 11), "cpython") == {}
    assert operators.elision_decision(op, named, (3, 14), "cpython") == {}
    assert operators.elision_decision(op, named, (3, 11), "pypy") == {}
    # The binary-operator instruction not seen above the operator method: no decision.
    assert operators.elision_decision({"l": (4, False), "r": (4, True)}, named, (3, 11), "cpython") == {}
    assert operators.elision_decision({"l": (4, True)}, named, (3, 11), "cpython") == {}


def test_baselines_count_holders_only():
    def holders():
        x = object()
        alone = sys.getrefcount(x) - refs.LOCAL
        kept = [x, x]
        two_more = sys.getrefcount(x) - refs.LOCAL
        h = _Holder()
        h.x = object()
        by_attribute = sys.getrefcount(h.x) - refs.ATTRIBUTE
        also = [h.x]
        by_attribute_and_list = sys.getrefcount(h.x) - refs.ATTRIBUTE
        del kept, also
        return alone, two_more, by_attribute, by_attribute_and_list

    assert holders() == (0, 2, 0, 1)


def test_resize_refuses_an_array_another_view_holds():
    a = sp.arange(6.0)
    v = a[1:]
    with pytest.raises(ValueError, match="referenced"):
        a.resize((8,))
    del v
    a.resize((8,))
    assert_eq(a, numpy.concatenate([numpy.arange(6.0), [0.0, 0.0]]), exact=True)


def test_only_temporaries_of_numpys_threshold_are_reused(monkeypatch):
    if not operators._TEMP_COUNT:
        pytest.skip("temporary elision is off on this interpreter (by design)")
    reused = []
    original = operators._maybe_reuse

    def spy(ufunc, a, b, args):
        out = original(ufunc, a, b, args)
        reused.append((a.size, out is not None))
        return out

    monkeypatch.setattr(operators, "_maybe_reuse", spy)
    n = operators.MIN_ELIDE_BYTES // 8
    with sp.config.set(fuse=False, whole_lane=False):
        for size in (n - 1, n):
            a = sp.ones(size)
            d = (a + 1) * 0.5  # the sum is a temporary: reused from NumPy's threshold on
            assert_eq(d, numpy.ones(size), exact=True)
            assert_eq(a, numpy.ones(size), exact=True)
    assert reused == [(n, True)]  # the smaller one is not even considered


_PATHS = [_add, _radd, _square, _dunder, _reflected_dunder, _unbound, _operator_module]
_PATHS += [_global, _attribute, _item, _closure]


@pytest.mark.parametrize("path", _PATHS, ids=lambda f: f.__name__.strip("_"))
def test_a_named_operand_is_never_reused_on_the_lane(path, monkeypatch):
    # The whole-array lane's elision (``operators._elide``), every array size allowed.
    monkeypatch.setattr(operators, "MIN_ELIDE_BYTES", 0)
    with sp.config.set(replicate_below=1 << 18):  # replicated: NumPy's own calls on each rank's copy
        x, r = path()
    assert not _shares(r, x), f"{path.__name__}: the result was written into the named operand"
    assert_eq(x, numpy.ones(7), exact=True)


def _wraps(monkeypatch) -> list:
    """Count the operators' results (their Python lane's: the compiled lane, which hands every
    operand of ``MIN_ELIDE_BYTES`` or more to it, is set aside so that the count sees all)."""
    made = []
    python_lane_only(monkeypatch)
    real = operators.wrap
    monkeypatch.setattr(operators, "wrap", lambda *a: made.append(1) or real(*a))
    return made


def test_lane_temporaries_take_the_result_as_numpy(monkeypatch):
    """``(a + 1) * 0.5`` on replicated arrays writes the product into the sum's allocation
    (NumPy's own elision); never a named array, a view, a result of another dtype or a
    broadcast one."""
    if not operators._TEMP_COUNT:
        pytest.skip("temporary elision is off on this interpreter (by design)")
    monkeypatch.setattr(operators, "MIN_ELIDE_BYTES", 0)
    made = _wraps(monkeypatch)
    a0, u0 = numpy.ones(7), numpy.arange(7.0)
    with sp.config.set(replicate_below=1 << 18):
        a, u = sp.array(a0), sp.array(u0)
        if a._st.be.is_device:
            pytest.skip("device blocks: the engine (the lane holds host copies)")
        i = sp.arange(7)
        cases = [
            ("(a + 1) * 0.5", 1),
            ("3.0 - (a * 2)", 1),  # reflected
            ("(a * 1) + u", 1),
            ("(u - a) / (a + 1)", 2),  # the left temporary takes the quotient
            ("(i * 1) + 0.5", 2),  # float64: not into the int64 temporary
            ("(a[:3] * 1) + u.reshape(7, 1)", 2),  # broadcast to (7, 3): not into the (3,) temporary
            ("a[:] + 1", 1),  # a view of a: a new array
            ("a.reshape(7) + 1", 1),  # views that share a's storage, whatever made them
            ("a.ravel() * 2", 1),
            ("a.T - 1", 1),
        ]
        for expr, allocations in cases:
            made.clear()
            got = eval(expr, {"a": a, "u": u, "i": i})
            assert len(made) == allocations, expr
            expected = eval(expr, {"a": a0, "u": u0, "i": numpy.arange(7)})
            assert_eq(got, expected, exact=True)
    assert_eq(a, a0, exact=True)
    assert_eq(u, u0, exact=True)


def test_large_lane_temporaries_are_reused_at_numpys_threshold(monkeypatch):
    # NumPy's threshold (256 KiB): a 40,000-element float64 temporary takes the sum, at every rank count.
    made = _wraps(monkeypatch)
    n = 40_000
    a0 = numpy.linspace(0.0, 1.0, n)
    with sp.config.set(replicate_below=1 << 18):
        a = sp.array(a0)
        made.clear()
        got = (a * 2.0) + a
        assert_eq(got, (a0 * 2.0) + a0, exact=True)
        small = (a[:10] * 2.0) + 1.0  # below the threshold: a new array, as NumPy
        assert_eq(small, (a0[:10] * 2.0) + 1.0, exact=True)
    assert_eq(a, a0, exact=True)
    if operators._TEMP_COUNT and not a._st.be.is_device:
        assert len(made) == 3, len(made)  # one for the large temporary, two for the small pair
