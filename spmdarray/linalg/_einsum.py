"""``einsum`` and ``einsum_path``: contractions as sums over labels and distributed matmuls."""

from __future__ import annotations

import math
import operator
import string

import numpy as np

from spmdarray.core import fetch as _fetch
from spmdarray.core.registry import implements
from spmdarray.engine import elementwise as _engine
from spmdarray.linalg._batch import operand
from spmdarray.linalg._products import _probe, diagonal, matmul, matmul_nd
from spmdarray.routines.creation import full

__all__ = ["einsum", "einsum_path"]


_LETTERS = string.ascii_uppercase + string.ascii_lowercase


def _subscripts_of(operands):
    """``(subscripts, arrays)`` from either einsum calling convention."""
    if isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    ops = list(operands)
    arrays, terms = [], []

    def letters(sub):
        s = ""
        for v in sub:
            if v is Ellipsis:
                s += "..."
            else:
                v = operator.index(v)
                if not 0 <= v < 52:
                    raise ValueError(f"subscript is not within the valid range [0, 52): {v}")
                s += _LETTERS[v]
        return s

    while len(ops) >= 2:
        arrays.append(ops.pop(0))
        terms.append(letters(ops.pop(0)))
    sub = ",".join(terms)
    if ops:
        sub += "->" + letters(ops[0])
    return sub, arrays


def _parse(subscripts: str, shapes):
    """Input label lists and output label list; ``...`` becomes labels ``.0``, ``.1`` ... (right aligned)."""
    s = subscripts.replace(" ", "")
    explicit = "->" in s
    ins, out = s.split("->") if explicit else (s, None)
    if explicit and ("-" in out or ">" in out):
        raise ValueError("einstein sum subscript string does not contain proper '->' output specified")
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            ("more" if len(terms) < len(shapes) else "fewer") + " operands provided to einstein sum function than "
            "specified in the subscripts string"
        )
    for t in terms + ([out] if explicit else []):
        rest = t.replace("...", "", 1)
        for c in rest:
            if c not in _LETTERS:
                raise ValueError(
                    f"invalid subscript '{c}' in einstein sum subscripts string, subscripts must be letters"
                )
    nells = []
    for k, (t, sh) in enumerate(zip(terms, shapes)):
        nlab = len(t.replace("...", ""))
        if "..." in t:
            if nlab > len(sh):
                raise ValueError(f"operand {k} has more dimensions than subscripts given in einstein sum")
            nells.append(len(sh) - nlab)
        else:
            if nlab != len(sh):
                what = "too many" if nlab > len(sh) else "not enough"
                raise ValueError(
                    f"einstein sum subscripts string contains {what} subscripts for operand {k}"
                    if nlab > len(sh)
                    else f"operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis "
                    f"provided to broadcast the extra dimensions (operand {k})"
                )
            nells.append(0)
    E = max(nells, default=0)  # noqa: N806
    labels = []
    for t, ne in zip(terms, nells):
        if "..." in t:
            pre, post = t.split("...")
            labels.append(list(pre) + [f".{E - ne + i}" for i in range(ne)] + list(post))
        else:
            labels.append(list(t))
    ell = [f".{i}" for i in range(E)]
    if explicit:
        if "..." in out:
            pre, post = out.split("...")
            olab = list(pre) + ell + list(post)
        else:
            olab = list(out)
            if any(ne for ne in nells):
                raise ValueError(
                    "output has more dimensions than subscripts given in einstein sum, but no '...' ellipsis "
                    "provided to broadcast the extra dimensions."
                )
        if len(set(olab)) != len(olab):
            raise ValueError("einstein sum subscripts string includes output subscript multiple times")
        allin = {c for lab in labels for c in lab}
        for c in olab:
            if c not in allin:
                raise ValueError(
                    f"einstein sum subscripts string included output subscript '{c}' which never appeared in an input"
                )
    else:
        count = {}
        for lab in labels:
            for c in lab:
                if not c.startswith("."):
                    count[c] = count.get(c, 0) + 1
        olab = ell + sorted(c for c, n in count.items() if n == 1)
    return labels, olab


def _sum_out(arr, lab, drop, dt):
    axes = tuple(i for i, c in enumerate(lab) if c in drop)
    if not axes:
        return arr, lab
    if dt.kind == "b":
        r = arr.any(axis=axes)
    else:
        r = arr.sum(axis=axes, dtype=dt)
    if not _fetch.is_distributed(r):  # a NumPy scalar
        r = full((), r, dtype=dt, comm=arr._st.ctx)
    return r, [c for c in lab if c not in drop]


def _contract(x, lx, y, ly, keep, sizes, dt):
    """Pairwise contraction of two labelled operands, keeping labels in ``keep``.  Collective."""
    x, lx = _sum_out(x, lx, {c for c in lx if c not in keep and c not in ly}, dt)
    y, ly = _sum_out(y, ly, {c for c in ly if c not in keep and c not in lx}, dt)
    shared = [c for c in lx if c in ly]
    bat = [c for c in shared if c in keep]
    con = [c for c in shared if c not in keep]
    fx = [c for c in lx if c not in shared]
    fy = [c for c in ly if c not in shared]
    nb = math.prod(sizes[c] for c in bat)
    k = math.prod(sizes[c] for c in con)
    px = math.prod(sizes[c] for c in fx)
    py = math.prod(sizes[c] for c in fy)
    xt = x.transpose([lx.index(c) for c in bat + fx + con])
    yt = y.transpose([ly.index(c) for c in bat + con + fy])
    if bat:
        z = matmul_nd(xt.reshape((nb, px, k)), yt.reshape((nb, k, py)))
    else:
        z = matmul(xt.reshape((px, k)), yt.reshape((k, py)))
    lz = bat + fx + fy
    return z.reshape(tuple(sizes[c] for c in lz)), lz


@implements(np.einsum)
def einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """Distributed ``numpy.einsum`` for any subscripts.  Collective.

    Repeated labels within an operand take distributed diagonals, labels of
    one operand absent from the output are summed first, and operands are
    contracted pairwise (left to right, or in the order ``numpy.einsum_path``
    finds when ``optimize`` is given) with transposes, reshapes and
    distributed ``matmul``.  Size-1 axes broadcast as in NumPy.
    """
    subscripts, arrays = _subscripts_of(operands)
    ctx = _fetch.context_of(*arrays, out)
    arrays = [operand(a, ctx) for a in arrays]
    labels, olab = _parse(subscripts, [a.shape for a in arrays])
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*(a.dtype for a in arrays))
    if dtype is not None:
        for a in arrays:
            if not np.can_cast(a.dtype, dt, casting=casting):
                raise TypeError(f"Cannot cast array data from {a.dtype!r} to {dt!r} according to the rule '{casting}'")
    sizes = {}
    for a, lab in zip(arrays, labels):
        for c, n in zip(lab, a.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise ValueError(
                    f"operands could not be broadcast together with remapped shapes: size {n} of subscript "
                    f"'{c.lstrip('.')}' differs from {sizes[c]}"
                )
    ops = []
    for a, lab in zip(arrays, labels):
        a = a.astype(dt, copy=False)
        lab = list(lab)
        # repeated labels: take the diagonal
        while len(set(lab)) != len(lab):
            c = next(c for c in lab if lab.count(c) > 1)
            i = lab.index(c)
            j = lab.index(c, i + 1)
            if a.shape[i] != a.shape[j]:
                raise ValueError(
                    f"dimensions in operand for collapsing index '{c}' don't match ({a.shape[i]} != {a.shape[j]})"
                )
            a = diagonal(a, 0, i, j)
            lab = [v for k, v in enumerate(lab) if k not in (i, j)] + [c]
        # broadcast size-1 axes: the value does not depend on that label
        drop = [i for i, c in enumerate(lab) if a.shape[i] == 1 and sizes[c] != 1]
        if drop:
            a = a[tuple(0 if i in drop else slice(None) for i in range(a.ndim)) + (Ellipsis,)]
            lab = [c for i, c in enumerate(lab) if i not in drop]
        ops.append((a, lab))
    if optimize is not False and len(ops) > 2:
        path = einsum_path(subscripts, *arrays, optimize=optimize)[0][1:]
    else:
        path = [(0, 1)] * (len(ops) - 1)
    for step in path:
        step = sorted(step, reverse=True)
        group = [ops.pop(i) for i in step][::-1]
        x, lx = group[0]
        for k, (y, ly) in enumerate(group[1:]):
            keep = set(olab)
            for _, lo in ops + group[k + 2 :]:
                keep |= set(lo)
            x, lx = _contract(x, lx, y, ly, keep, sizes, dt)
        ops.append((x, lx))
    (x, lx) = ops[0]
    x, lx = _sum_out(x, lx, {c for c in lx if c not in olab}, dt)
    res = x.transpose([lx.index(c) for c in olab]) if lx != olab else x
    if out is not None:
        _engine.assign(out, res)
        return out
    if res.ndim == 0:
        return _engine.to_scalar(res)
    return res


@implements(np.einsum_path, replicated=True)
def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """``numpy.einsum_path`` (shapes only: computed on stand-ins, the same on every rank).  Not collective."""
    subscripts, arrays = _subscripts_of(operands)
    stand = _probe([(np.shape(a), a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype) for a in arrays])
    return np.einsum_path(subscripts, *stand, optimize=optimize, einsum_call=einsum_call)
