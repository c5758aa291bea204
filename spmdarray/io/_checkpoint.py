"""Checkpoint and restart: atomic files that any rank count can restore.

A checkpoint is an ordinary HDF5 file: one global dataset per array at the
root, and root attributes ``spmdarray_format``, ``spmdarray_step`` and
``spmdarray_arrays`` (a JSON list of the array names, in order) next to the
user's attributes.  Nothing in it depends on the rank count that wrote it.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from spmdarray.comm import get_context
from spmdarray.decomposition import ViewMap
from spmdarray.io import _h5
from spmdarray.io._errors import DatasetNotFoundError, agree, attempt
from spmdarray.io._read import array_dtype, check_file, check_like, open_dataset, read_into, target
from spmdarray.io._write import _arrays, save

__all__ = ["Checkpoint", "checkpoint", "restore"]

FORMAT = "spmdarray checkpoint 1"
_FORMAT, _STEP, _NAMES = "spmdarray_format", "spmdarray_step", "spmdarray_arrays"
_RESERVED = (_FORMAT, _STEP, _NAMES)


class Checkpoint(NamedTuple):
    """What :func:`restore` returns: ``step, arrays, attrs = restore(path)``.

    Not collective: a named tuple (reading its fields communicates nothing).
    """

    step: int
    """The ``step`` given to :func:`checkpoint`."""
    arrays: dict
    """Array name to distributed array, in the order they were written."""
    attrs: dict
    """The user's attributes (values as h5py returns them)."""


def checkpoint(path, step: int = 0, attrs: Mapping | None = None, comm=None, checksum: bool = False, **arrays) -> None:
    """Write a restart file atomically.

    Collective.  Writes ``arrays`` (one global dataset each), ``step`` and
    ``attrs`` to a temporary file next to ``path``, fsyncs it, renames it
    onto ``path`` and fsyncs the directory: a crash at any point leaves the
    previous checkpoint at ``path`` intact.  A temporary file left by a
    killed job is removed by the next checkpoint to the same path.  The file
    does not depend on the rank count: :func:`restore` reads it at any.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file; an existing one is replaced.
    step : int
        Time step (or any integer) to restart from.
    attrs : mapping, optional
        Extra attributes (numbers, strings, NumPy arrays); names starting
        with ``spmdarray_`` are reserved.
    comm : mpi4py communicator, optional
        Default: the arrays' communicator.
    checksum : bool
        Store a Fletcher32 checksum with every chunk of every array (the
        HDF5 filter; 0-d arrays have none).  :func:`restore` verifies it and
        raises ``OSError`` on every rank when a stored byte has changed.
    **arrays
        Name to spmdarray array (or a NumPy array or scalar, the same on
        every rank).  ``path``, ``step``, ``attrs``, ``comm`` and
        ``checksum`` cannot be array names.

    Examples
    --------
    >>> spmdarray.checkpoint("run.h5", step=n, attrs={"dt": dt}, u=u, v=v)  # doctest: +SKIP
    >>> step, arrays, attrs = spmdarray.restore("run.h5")                   # doctest: +SKIP
    """
    try:
        step = operator.index(step)
    except TypeError:
        raise TypeError(f"checkpoint: step must be an integer, got {type(step).__name__} {step!r}") from None
    user = dict(attrs or {})
    taken = sorted(k for k in user if str(k).startswith("spmdarray_"))
    if taken:
        raise ValueError(f"checkpoint: attribute names {taken} are reserved (prefix 'spmdarray_'); rename them")
    ctx, items = _arrays(arrays, comm, "checkpoint")
    meta = {_FORMAT: FORMAT, _STEP: np.int64(step), _NAMES: json.dumps([n for n, _ in items])}
    options = {"fletcher32": True} if checksum else {}
    save(ctx, path, items, {**user, **meta}, options, overwrite=True, what="checkpoint", clean=True)


def _expected(spec, name: str):
    """(shape or None, dtype or None) from an array-like or a (shape, dtype) pair."""
    if hasattr(spec, "shape") and hasattr(spec, "dtype"):
        return tuple(spec.shape), np.dtype(spec.dtype)
    try:
        shape, dtype = spec
    except (TypeError, ValueError):
        raise TypeError(
            f"restore: expect[{name!r}] must be an array (anything with .shape and .dtype) or a (shape, dtype) pair, "
            f"got {spec!r}"
        ) from None
    return (None if shape is None else tuple(shape)), (None if dtype is None else np.dtype(dtype))


def _inspect(path: str, expect: Mapping | None):
    """Rank 0: the step, (name, shape, dtype) per array and the user's attrs; validated."""
    what = "restore"
    check_file(path, what)
    with _h5.h5py().File(path, "r") as f:
        if f.attrs.get(_FORMAT) != FORMAT:
            raise ValueError(
                f"restore: {path!r} is not a spmdarray checkpoint (its root attribute {_FORMAT!r} is "
                f"{f.attrs.get(_FORMAT)!r}, not {FORMAT!r}); read its datasets with spmdarray.load_hdf5"
            )
        names = json.loads(f.attrs[_NAMES])
        specs = []
        for name in names:
            d = open_dataset(f, name, what)
            specs.append((name, tuple(d.shape), array_dtype(d.dtype, f"restore: array {name!r}")))
        step = int(f.attrs[_STEP])
        attrs = {k: v for k, v in f.attrs.items() if k not in _RESERVED}
    found = {n: (s, d) for n, s, d in specs}
    for name, spec in (expect or {}).items():
        shape, dtype = _expected(spec, name)
        if name not in found:
            raise DatasetNotFoundError(
                f"restore: checkpoint {path!r} has no array {name!r}; it holds {sorted(found)}. "
                f"Restore from a checkpoint that has it, or drop {name!r} from expect="
            )
        got_shape, got_dtype = found[name]
        if shape is not None and shape != got_shape:
            raise ValueError(
                f"restore: array {name!r} in {path!r} has shape {got_shape}, expected {shape}; restart with the "
                f"configuration that wrote it, or drop {name!r} from expect= to take the stored shape"
            )
        if dtype is not None and dtype != got_dtype:
            raise TypeError(
                f"restore: array {name!r} in {path!r} has dtype {got_dtype}, expected {dtype}; restore without "
                f"expect= for {name!r} and convert with .astype({str(dtype)!r})"
            )
    return step, specs, attrs


def _like_for(like, name: str, shape: tuple, specs: list):
    """The array whose layout stored array ``name`` is read into, or None (balanced).  Not collective."""
    if like is None:
        return None
    if isinstance(like, Mapping):
        unknown = sorted(set(like) - {n for n, _, _ in specs})
        if unknown:
            raise ValueError(
                f"restore: like= names {unknown}, which the checkpoint does not hold; it holds "
                f"{[n for n, _, _ in specs]}"
            )
        return like.get(name)
    if not any(tuple(s) == tuple(like.shape) for _, s, _ in specs):
        raise ValueError(
            f"restore: like= has shape {tuple(like.shape)}, but the checkpoint's arrays have shapes "
            f"{ {n: s for n, s, _ in specs} }; pass an array of one of those shapes, or a mapping name -> array"
        )
    return like if tuple(like.shape) == tuple(shape) else None


def restore(path, expect: Mapping | None = None, comm=None, *, like=None) -> Checkpoint:
    """Read a file written by :func:`checkpoint`, at any rank count.

    Collective.  Each array gets the default (balanced) layout for this
    communicator, or the layout of an existing array (``like=``), and each
    rank reads only its own blocks.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file.
    expect : mapping, optional
        Array name to what it must be: an array (its ``.shape`` and
        ``.dtype`` are compared) or a ``(shape, dtype)`` pair, either part
        None to skip it.  Checked before anything is read.
    comm : mpi4py communicator, optional
    like : spmdarray.ndarray or mapping, optional
        Read into the layout of an existing array instead of the balanced
        one, for example an array made by :func:`spmdarray.from_local` from
        your own blocks.  An array: used for every stored array of its shape
        (the others stay balanced).  A mapping: array name to such an array,
        each of the stored array's shape.  Its communicator is used.

    Returns
    -------
    Checkpoint
        The named tuple ``(step, arrays, attrs)``: the step, a dict of name to
        spmdarray array in the order written, and the user's attributes.

    Raises
    ------
    FileNotFoundError, OSError
        No such file, or not an HDF5 file.
        Also a stored byte that fails its checksum (``checkpoint(...,
        checksum=True)``), on every rank.
    ValueError
        Not a spmdarray checkpoint, a shape that does not match ``expect``,
        or a ``like`` that matches no array (or has another shape than its
        array, or another communicator than ``comm``).
    TypeError
        A dtype that does not match ``expect``.
    DatasetNotFoundError
        An array named in ``expect`` is not in the file.

    Every error is raised on every rank, before any array is read.

    Examples
    --------
    >>> step, arrays, attrs = spmdarray.restore("run.h5", expect={"u": ((512, 512), "float64")})  # doctest: +SKIP
    >>> u = arrays["u"]                                                                              # doctest: +SKIP
    """

    what = "restore"
    likes = like if isinstance(like, Mapping) else {}
    first = next(iter(likes.values()), None) if likes else like
    ctx = get_context(comm) if first is None else check_like(first, what, comm)
    for v in likes.values():
        if check_like(v, what, comm) is not ctx:
            raise ValueError("restore: the arrays in like= live on different communicators; pass arrays of one")
    use_parallel = _h5.parallel()
    path = os.fspath(path)
    meta, err = attempt(_inspect, path, expect) if ctx.rank == 0 else (None, None)
    step, specs, attrs = agree(ctx, err, meta)
    arrays = {
        name: target(shape, dtype, ctx, _like_for(like, name, shape, specs), what) for name, shape, dtype in specs
    }
    _h5.logger.debug("restore(%r) on %d ranks: %s", path, ctx.size, _h5.describe(use_parallel))

    def run() -> None:
        if not use_parallel and not any(x.layout.owned_size(ctx.rank) for x in arrays.values()):
            return
        with _h5.open_file(path, "r", ctx, use_parallel) as f:
            for name, x in arrays.items():
                try:
                    read_into(x, f[name], ViewMap.identity(x.shape), use_parallel)
                except OSError as e:
                    # HDF5 says "filter returned failure during read" (or names fletcher32).
                    text = str(e).lower()
                    if not (f[name].fletcher32 and ("filter" in text or "fletcher32" in text)):
                        raise
                    raise OSError(
                        f"restore: array {name!r} in {path!r} fails its Fletcher32 checksum: the file was changed "
                        f"or damaged after it was written (HDF5: {e}); restore an older checkpoint"
                    ) from None

    agree(ctx, attempt(run)[1], which_rank=True)
    return Checkpoint(step, arrays, attrs)
