"""Parameters of the :class:`~spmdarray.random.Generator` methods: conversion
to float64 NumPy or distributed arrays, the checks NumPy makes (raised on
every rank; distributed parameters are checked with one reduction each), and
``_SPECS``, the table of the elementwise distributions (kernel, parameter
names, checks, dtype) that ``Generator._dist`` runs.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from spmdarray.core.array import ndarray
from spmdarray.random import _continuous as C
from spmdarray.random import _discrete as D
from spmdarray.random import _mixtures as M

Size = int | tuple[int, ...] | None

# NumPy's ``lam value too large`` limit for Poisson.
_POISSON_LAM_MAX = float(np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10)


def _is_dist(x: Any) -> bool:
    return isinstance(x, ndarray)


def _param(func: str, name: str, value: Any) -> Any:
    """A parameter as a float64 NumPy array or a distributed array.  Collective for 0-d distributed values."""
    if _is_dist(value):
        if value.ndim == 0:
            value = np.asarray(value)  # gathers one element
        else:
            if value.dtype.kind not in "biuf":
                raise TypeError(f"spmdarray.random.{func}: {name} must be real, got dtype {value.dtype}")
            return value if value.dtype == np.float64 else value.astype(np.float64)
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"spmdarray.random.{func}: {name} must be real numbers, got {value!r}")
    return a.astype(np.float64)


def _any(p: Any, pred: Callable[[Any], Any]) -> bool:
    """Whether ``pred`` holds anywhere in ``p``; collective (one reduction) for distributed ``p``."""
    with np.errstate(all="ignore"):
        return bool(np.any(pred(p)))


def _check(checks: list[tuple[Any, Callable[[Any], Any], str]]) -> None:
    for p, pred, msg in checks:
        if _any(p, pred):
            raise ValueError(msg)


def _nan(x: Any) -> Any:
    return np.isnan(x)


def _float_dtype(func: str, dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise TypeError(f"Unsupported dtype {dt!r} for {func}; use numpy.float64 or numpy.float32")
    return dt


def _int_arg(func: str, name: str, value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"spmdarray.random.{func}: {name} must be an integer, got {value!r}") from None


def _neg(s: Any) -> Any:
    return s < 0


def _nonpos(s: Any) -> Any:
    return s <= 0


# name: (kernel, parameter names, checks (parameter index, predicate, ValueError message), dtype)
_SPECS: dict[str, tuple[Any, tuple[str, ...], list[tuple[int, Any, str]], Any]] = {
    "normal": (
        C.normal,
        (
            "loc",
            "scale",
        ),
        [(1, _neg, "scale < 0")],
        np.float64,
    ),
    "exponential": (C.exponential, ("scale",), [(0, _neg, "scale < 0")], np.float64),
    "gamma": (
        C.gamma,
        (
            "shape",
            "scale",
        ),
        [(0, _neg, "shape < 0"), (1, _neg, "scale < 0")],
        np.float64,
    ),
    "beta": (
        C.beta,
        (
            "a",
            "b",
        ),
        [(0, _nonpos, "a <= 0"), (1, _nonpos, "b <= 0")],
        np.float64,
    ),
    "chisquare": (C.chisquare, ("df",), [(0, _nonpos, "df <= 0")], np.float64),
    "noncentral_chisquare": (
        M.noncentral_chisquare,
        (
            "df",
            "nonc",
        ),
        [(0, _nonpos, "df <= 0"), (1, lambda s: (s < 0) | _nan(s), "nonc < 0")],
        np.float64,
    ),
    "f": (
        C.f,
        (
            "dfnum",
            "dfden",
        ),
        [(0, _nonpos, "dfnum <= 0"), (1, _nonpos, "dfden <= 0")],
        np.float64,
    ),
    "noncentral_f": (
        M.noncentral_f,
        (
            "dfnum",
            "dfden",
            "nonc",
        ),
        [(0, _nonpos, "dfnum <= 0"), (1, _nonpos, "dfden <= 0"), (2, lambda s: (s < 0) | _nan(s), "nonc < 0")],
        np.float64,
    ),
    "standard_t": (C.standard_t, ("df",), [(0, _nonpos, "df <= 0")], np.float64),
    "laplace": (
        C.laplace,
        (
            "loc",
            "scale",
        ),
        [(1, _neg, "scale < 0")],
        np.float64,
    ),
    "logistic": (
        C.logistic,
        (
            "loc",
            "scale",
        ),
        [(1, _neg, "scale < 0")],
        np.float64,
    ),
    "lognormal": (
        C.lognormal,
        (
            "mean",
            "sigma",
        ),
        [(1, _neg, "sigma < 0")],
        np.float64,
    ),
    "gumbel": (
        C.gumbel,
        (
            "loc",
            "scale",
        ),
        [(1, _neg, "scale < 0")],
        np.float64,
    ),
    "pareto": (C.pareto, ("a",), [(0, _nonpos, "a <= 0")], np.float64),
    "power": (C.power, ("a",), [(0, _nonpos, "a <= 0")], np.float64),
    "rayleigh": (C.rayleigh, ("scale",), [(0, _neg, "scale < 0")], np.float64),
    "weibull": (C.weibull, ("a",), [(0, _neg, "a < 0")], np.float64),
    "vonmises": (
        C.vonmises,
        (
            "mu",
            "kappa",
        ),
        [(1, _neg, "kappa < 0")],
        np.float64,
    ),
    "wald": (
        C.wald,
        (
            "mean",
            "scale",
        ),
        [(0, _nonpos, "mean <= 0"), (1, _nonpos, "scale <= 0")],
        np.float64,
    ),
    "poisson": (
        D.poisson,
        ("lam",),
        [
            (0, lambda s: (s < 0) | _nan(s), "lam < 0 or lam is NaN"),
            (0, lambda s: s > _POISSON_LAM_MAX, "lam value too large"),
        ],
        np.int64,
    ),
    "negative_binomial": (
        M.negative_binomial,
        (
            "n",
            "p",
        ),
        [
            (0, lambda s: (s <= 0) | _nan(s), "n <= 0"),
            (1, lambda s: (s <= 0) | (s > 1) | _nan(s), "p <= 0, p > 1 or p contains NaNs"),
        ],
        np.int64,
    ),
    "geometric": (
        D.geometric,
        ("p",),
        [(0, lambda s: (s <= 0) | (s > 1) | _nan(s), "p <= 0, p > 1 or p contains NaNs")],
        np.int64,
    ),
    "logseries": (
        D.logseries,
        ("p",),
        [(0, lambda s: (s < 0) | (s >= 1) | _nan(s), "p < 0, p >= 1 or p is NaN")],
        np.int64,
    ),
    "zipf": (D.zipf, ("a",), [(0, lambda s: (s <= 1) | _nan(s), "a <= 1 or a is NaN")], np.int64),
}
