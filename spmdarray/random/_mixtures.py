"""Mixture distributions, drawn from a continuous and a discrete variate
(``noncentral_chisquare``, ``noncentral_f``, ``negative_binomial``).  Not collective."""

from __future__ import annotations

from typing import Any

import numpy as np

from spmdarray.random._continuous import chisquare, standard_gamma
from spmdarray.random._counter import Stream
from spmdarray.random._discrete import poisson

__all__ = ["noncentral_chisquare", "noncentral_f", "negative_binomial"]


def noncentral_chisquare(st: Stream, df: Any, nonc: Any) -> Any:
    """Poisson mixture: ``chisquare(df + 2 * N)`` with ``N ~ Poisson(nonc / 2)``."""
    n = poisson(st.sub(0), 0.5 * nonc).astype(np.float64)
    return chisquare(st.sub(1), df + 2.0 * n)


def noncentral_f(st: Stream, dfnum: Any, dfden: Any, nonc: Any) -> Any:
    """``(noncentral_chisquare(dfnum, nonc) / dfnum) / (chisquare(dfden) / dfden)``."""
    t = noncentral_chisquare(st.sub(0), dfnum, nonc) * dfden
    return t / (chisquare(st.sub(1), dfden) * dfnum)


def negative_binomial(st: Stream, n: Any, p: Any) -> Any:
    """Gamma--Poisson mixture: ``Poisson(Gamma(n) * (1 - p) / p)``."""
    y = standard_gamma(st.sub(0), n) * ((1.0 - p) / p)
    return poisson(st.sub(1), np.where(p >= 1.0, 0.0, y))
