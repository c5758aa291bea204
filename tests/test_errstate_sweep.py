"""Every distributed function under ``numpy.errstate(all="raise")`` with ordinary data.

The agreement of data errors must not change what a call does when nothing
fails: for each public function that spmdarray implements for distributed
arrays (NumPy's dispatch table, ufuncs, ``linalg`` and ``fft``), called with
one or two ordinary arrays under ``errstate(all="raise")``, the result is
NumPy's (same values) or the exception is NumPy's class, on every rank.

The cases in ``KNOWN`` pass arguments NumPy rejects (an array where it wants
an axis, a dtype or a scalar); spmdarray rejects them too, with another
exception class, with or without ``errstate``.  They are strict xfails on
several ranks: one that starts to pass there must leave the list.  On one
rank, where NumPy's own call computes the functions spmdarray calls directly
(the whole-array lane), some give NumPy's exception class: not strict there.
"""

from __future__ import annotations

import numpy
import pytest
from mpi4py import MPI

import spmdarray as sp
from spmdarray.core.registry import HANDLED

A = numpy.linspace(0.25, 3.0, 13)
B = numpy.linspace(1.0, 2.0, 13)
_RNG = numpy.random.default_rng(7)
M = _RNG.uniform(0.5, 2.0, (5, 4))
SQ = _RNG.uniform(0.5, 2.0, (4, 4)) + 4 * numpy.eye(4)
PATTERNS = {"a": (A,), "ab": (A, B), "m": (M,), "sq": (SQ,)}

# Files, printing and NumPy's global state: not functions of arrays.
SKIP = {
    "save", "load", "savetxt", "loadtxt", "genfromtxt", "fromfile", "tofile", "memmap", "fromregex", "savez",
    "savez_compressed", "info", "show_config", "show_runtime", "printoptions", "set_printoptions",
    "get_printoptions", "seterr", "geterr", "errstate", "setbufsize", "getbufsize", "seterrcall", "geterrcall",
    "get_include", "test", "lookfor", "source",
}  # fmt: skip

KNOWN = {
    ("asarray_chkfinite", "ab"), ("astype", "ab"), ("can_cast", "ab"), ("choose", "ab"), ("clip", "ab"),
    ("copy", "ab"), ("diagonal", "ab"), ("diff", "ab"), ("einsum", "a"), ("einsum", "m"), ("einsum", "sq"),
    ("empty_like", "ab"), ("gradient", "ab"), ("histogram", "ab"), ("histogram_bin_edges", "ab"),
    ("lexsort", "a"), ("lexsort", "ab"), ("nanpercentile", "ab"), ("ones_like", "ab"), ("percentile", "ab"),
    ("ravel", "ab"), ("repeat", "ab"), ("trace", "ab"), ("tril", "ab"), ("triu", "ab"), ("zeros_like", "ab"),
    ("linalg.cond", "ab"), ("linalg.eigh", "ab"), ("linalg.eigvalsh", "ab"), ("linalg.matrix_norm", "a"),
    ("linalg.matrix_power", "ab"), ("linalg.matrix_rank", "ab"), ("linalg.pinv", "ab"),
}  # fmt: skip


def _get(mod, name: str):
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


def _names() -> list[str]:
    out = []
    for n in sorted(getattr(sp, "__all__", dir(sp))):
        f = getattr(numpy, n, None)
        if n.startswith("_") or n in SKIP or getattr(sp, n, None) is None:
            continue
        if callable(f) and not isinstance(f, type) and (isinstance(f, numpy.ufunc) or f in HANDLED):
            out.append(n)
    for mod in ("linalg", "fft"):
        for n in sorted(dir(getattr(sp, mod))):
            f = getattr(getattr(numpy, mod), n, None)
            if callable(f) and not isinstance(f, type) and f in HANDLED:
                out.append(f"{mod}.{n}")
    return out


_SEVERAL = MPI.COMM_WORLD.Get_size() > 1


def _cases():
    for n in _names():
        for p in PATTERNS:
            marks = [pytest.mark.xfail(strict=_SEVERAL, reason="bad arguments: another exception class")]
            yield pytest.param(n, p, id=f"{n}-{p}", marks=marks if (n, p) in KNOWN else [])


def _outcome(xp, name: str, pattern: str):
    """("ok", host values) or ("error", exception class).  Collective for spmdarray."""
    args = [sp.array(a) if xp is sp else a.copy() for a in PATTERNS[pattern]]
    with numpy.errstate(all="raise"):
        try:
            r = _get(xp, name)(*args)
        except Exception as e:  # noqa: BLE001 - the class is compared with NumPy's
            return "error", type(e)
    if isinstance(r, (tuple, list)):
        return "ok", [numpy.asarray(v) if isinstance(v, (sp.ndarray, numpy.ndarray)) else v for v in r]
    return "ok", numpy.asarray(r) if isinstance(r, (sp.ndarray, numpy.ndarray, numpy.generic)) else r


# Values that are not determined: compared by shape and dtype only.
SHAPE_ONLY = {"empty_like"}
# Singular vectors, Q factors and eigenvectors are determined up to sign: compared in absolute value.
UP_TO_SIGN = {"linalg.svd", "linalg.qr", "linalg.eigh", "linalg.eig"}


def _same_value(got, want) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _same_value(g, w)
        return
    if isinstance(want, numpy.ndarray):
        got = numpy.asarray(got)
        assert got.shape == want.shape, (got.shape, want.shape)
        if want.dtype.kind in "fc" and got.dtype.kind in "fc":
            numpy.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, equal_nan=True)
        else:
            numpy.testing.assert_array_equal(got, want)
        return
    assert got == want or (got is None and want is None), (got, want)


@pytest.mark.parametrize("name,pattern", list(_cases()))
def test_errstate_raise_gives_numpys_result_or_exception(name, pattern):
    from mpi4py import MPI

    kind, want = _outcome(numpy, name, pattern)
    got_kind, got = _outcome(sp, name, pattern)
    outcomes = MPI.COMM_WORLD.allgather((got_kind, got.__name__ if got_kind == "error" else None))
    assert len(set(outcomes)) == 1, outcomes  # the same on every rank
    assert got_kind == kind, (got_kind, got, kind, want)
    if kind == "error":
        assert issubclass(got, want), (got, want)
    elif name in SHAPE_ONLY:
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
    elif name in UP_TO_SIGN:
        _same_value([numpy.abs(g) for g in got], [numpy.abs(w) for w in want])
    else:
        _same_value(got, want)
