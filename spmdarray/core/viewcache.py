"""Cached basic indexing: the view map and layout of ``x[key]`` computed once per key.

Loops over rows (``A[i, :i]``, ``C[:i + 1, k]``) index with the same few keys
again and again; normalising the key and composing the view map cost far
more than the NumPy view they describe.  :func:`view_of_key` remembers, per
(base layout, view map, key), the resulting view map, its layout and whether
NumPy would give a scalar.  Only keys made of Python ints, slices, ``None``
and ``...`` are cached (the others, NumPy integers and arrays among them,
take the general path); a key that raises is never cached, so errors are
those of :func:`~spmdarray.decomposition.normalize_key`.
"""

from __future__ import annotations

import numpy as np

from spmdarray.decomposition import Layout, ViewMap, normalize_key, view_layout

__all__ = ["cached_view", "hashable_key", "remember_view", "view_of_key"]

_VIEWS: dict = {}
_MAX_VIEWS = 8192


def hashable_key(key):
    """A hashable stand-in for a basic ``key``, or None (not cached, or not basic).  Not collective.

    Basic here: Python and NumPy integers (not bools), slices of Python
    integers, None and ``...``, alone or in a tuple.
    """
    if type(key) is not tuple:
        key = (key,)
    out = []
    for k in key:
        t = type(k)
        if t is int or k is None or k is Ellipsis:
            out.append(k)
        elif t is slice:
            s = (k.start, k.stop, k.step)
            for part in s:
                if part is not None and type(part) is not int:
                    return None
            out.append(s)
        elif isinstance(k, np.integer):  # NumPy's integer scalars (np.bool_ is not one)
            out.append(int(k))
        else:
            return None
    return tuple(out)


def _plain_key(key, shape: tuple[int, ...]) -> tuple | None:
    """``key`` normalised as :func:`~spmdarray.decomposition.normalize_key` gives it, when it
    is Python ints in range and slices with a nonzero step, at most one per axis; else None
    (the caller normalises it, with NumPy's errors).  Not collective."""
    keys = key if type(key) is tuple else (key,)
    if len(keys) > len(shape):
        return None
    out = []
    for k, n in zip(keys, shape):
        t = type(k)
        if t is int:
            if not -n <= k < n:
                return None
            out.append(k + n if k < 0 else k)
        elif t is slice and k.step != 0:
            out.append(k)
        else:
            return None
    out.extend([slice(None)] * (len(shape) - len(keys)))
    return tuple(out)


def cached_view(layout: Layout, vmap: ViewMap, hk):
    """The cached ``(view map, view layout, scalar)`` of hashable key ``hk``, or None.  Not collective."""
    return _VIEWS.get((layout, vmap, hk))


def remember_view(layout: Layout, vmap: ViewMap, hk, hit: tuple) -> None:
    """Cache ``hit`` for :func:`cached_view` (a view composed by the caller).  Not collective."""
    if len(_VIEWS) >= _MAX_VIEWS:
        _VIEWS.clear()
    _VIEWS[layout, vmap, hk] = hit


def view_of_key(layout: Layout, vmap: ViewMap, key, hk=None) -> tuple[ViewMap, Layout, bool]:
    """``(view map, view layout or None, scalar)`` of basic index ``key`` into a view ``vmap``
    of a base array laid out as ``layout``.  Not collective.

    The layout is None for a key of Python ints and slices: the caller leaves the
    view's ``_lay`` unset (None), and ``ndarray._layout`` makes it when first read.

    ``scalar`` says whether NumPy gives a scalar (a 0-d result from integers only).
    Raises ``NotImplementedError`` for advanced indices and NumPy's ``IndexError``
    for bad ones, as :func:`~spmdarray.decomposition.normalize_key`.  ``hk``:
    :func:`hashable_key` of ``key`` where the caller computed it already.
    """
    if hk is None:
        hk = hashable_key(key)
    if hk is not None:
        # Keyed by value: arrays made alike (each run of a kernel) share the entries.
        ck = (layout, vmap, hk)
        hit = _VIEWS.get(ck)
        if hit is not None:
            return hit
    nkey = _plain_key(key, vmap.shape)
    if nkey is not None:  # (Python ints and slices only: a new ``a[lo:hi]`` in each step of a loop)
        view = vmap.getitem(nkey)
        # (The layout is left to ``ndarray._layout``, made when first asked for: a small
        # product of split vectors reads their copies and never asks.)
        hit = (view, None, not view.shape)
        if hk is not None:
            if len(_VIEWS) >= _MAX_VIEWS:
                _VIEWS.clear()
            _VIEWS[ck] = hit
        return hit
    # As in NumPy, an index containing ``...`` gives an array, never a scalar.
    ell = key is Ellipsis or (isinstance(key, tuple) and any(k is Ellipsis for k in key))
    nkey = normalize_key(key, vmap.shape)
    view = vmap.getitem(nkey)
    scalar = not view.shape and not ell and all(k is not None for k in nkey)
    hit = (view, view_layout(layout, view), scalar)
    if hk is not None:
        if len(_VIEWS) >= _MAX_VIEWS:
            _VIEWS.clear()
        _VIEWS[ck] = hit
    return hit
