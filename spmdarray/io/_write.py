"""Writing distributed arrays into one HDF5 file, atomically.

Three phases, each ended by one agreement (:func:`agree`) so that a failure
on any rank raises on every rank:

1. rank 0 checks the target, creates a temporary file next to it
   (``.<name>.<16 hex digits>.spmdarray-tmp``) and, on the serial path, creates
   every dataset and attribute in it (on the parallel path it only tries the
   same creation in memory, to catch bad options before any collective);
2. the owners of the blocks write them: collectively through the ``mpio``
   driver, or one rank at a time (a token passed in rank order), each
   opening the file ``r+``; every writer then fsyncs the file;
3. rank 0 fsyncs the file, renames it onto the target and fsyncs the
   directory.

A failure removes the temporary file, so the target is either the complete
new file or whatever it was before.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Mapping

import numpy as np

from spmdarray.comm import get_context, pass_turn, wait_turn
from spmdarray.core.array import ndarray
from spmdarray.decomposition import ViewMap
from spmdarray.io import _h5
from spmdarray.io._errors import agree, attempt
from spmdarray.io._slabs import relative, transfers
from spmdarray.routines.creation import asarray
from spmdarray.settings import config

__all__ = ["TMP_SUFFIX", "is_tmp_of", "save", "save_hdf5", "tmp_name", "write_from"]

#: Suffix of the temporary file a write goes to before it is renamed.
TMP_SUFFIX = ".spmdarray-tmp"
_TOKEN = 16  # hex digits of the random part of a temporary name


def tmp_name(base: str) -> str:
    """A fresh temporary file name for target ``base`` (no directory).  Not collective."""
    return f".{base}.{secrets.token_hex(_TOKEN // 2)}{TMP_SUFFIX}"


def is_tmp_of(name: str, base: str) -> bool:
    """Whether ``name`` is a temporary file of target ``base`` exactly.  Not collective.

    ``.state.h5.<token>.spmdarray-tmp`` is one of ``state.h5``;
    ``.state.h5.1.<token>.spmdarray-tmp`` (one of ``state.h5.1``) is not.
    """
    pattern = re.escape(f".{base}.") + f"[0-9a-f]{{{_TOKEN}}}" + re.escape(TMP_SUFFIX)
    return re.fullmatch(pattern, name) is not None


def _mkstemp(directory: str, base: str) -> str:
    """Create a new empty temporary file for ``base`` in ``directory`` (never an existing one)."""
    while True:
        path = os.path.join(directory, tmp_name(base))
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return path


def _arrays(arrays, comm, what: str):
    """(context, [(name, array)]) with every value a spmdarray array on that context."""

    if not isinstance(arrays, Mapping):
        raise TypeError(f"{what}: arrays must be a mapping {{name: array}}, got {type(arrays).__name__}")
    ctx = get_context(comm) if comm is not None else None
    if ctx is None:
        ctx = next((a._st.ctx for a in arrays.values() if isinstance(a, ndarray)), None) or get_context(None)
    out = []
    for name, a in arrays.items():
        if not isinstance(name, str) or not name.strip("/"):
            raise ValueError(f"{what}: dataset names must be non-empty strings, got {name!r}")
        if isinstance(a, ndarray):
            if a._st.ctx is not ctx:
                raise ValueError(
                    f"{what}: array {name!r} lives on a communicator of {a._st.ctx.size} ranks, not on the one "
                    f"of this call ({ctx.size} ranks); pass comm=None, or the array's own communicator"
                )
        else:
            a = asarray(np.asarray(a), comm=ctx)  # the same value on every rank
        if a.dtype.hasobject or a.dtype.kind == "U":
            fix = "a.astype('S')" if a.dtype.kind == "U" else "a numeric or fixed-length string dtype"
            raise TypeError(
                f"{what}: array {name!r} has dtype {a.dtype}, which HDF5 cannot store as is; convert it with {fix}"
            )
        out.append((name, a))
    return ctx, out


def _options(name: str, shape: tuple[int, ...], options: dict) -> dict:
    """``create_dataset`` keywords for one dataset: a Mapping value is per name."""
    out = {}
    for k, v in options.items():
        if isinstance(v, Mapping):
            v = v.get(name)
        if v is not None:
            out[k] = v
    if not shape:  # HDF5 stores scalars contiguous: no chunks, no filters
        out = {k: v for k, v in out.items() if k not in _CHUNK_OPTIONS}
    return out


# create_dataset keywords that need a chunked layout, so do not apply to scalars.
_CHUNK_OPTIONS = ("chunks", "compression", "compression_opts", "shuffle", "fletcher32", "scaleoffset", "maxshape")


def _create(f, items, options: dict, attrs: Mapping, what: str) -> None:
    for name, x in items:
        opts = _options(name, x.shape, options)
        # Every element gets written, so HDF5 need not write fill values first
        # (for a contiguous dataset, that would write the whole file twice).
        fill = {} if "fill_time" in opts or _h5.h5py().version.version_tuple[:2] < (3, 5) else {"fill_time": "never"}
        try:
            f.create_dataset(name, shape=x.shape, dtype=x.dtype, **fill, **opts)
        except Exception as e:  # noqa: BLE001 - rewrapped with the values involved
            raise type(e)(
                f"{what}: cannot create dataset {name!r} (shape {x.shape}, dtype {x.dtype}, options {opts}): {e}; "
                "fix the chunks/compression options (chunks may not exceed the shape) or the name"
            ) from None
    for k, v in attrs.items():
        try:
            f.attrs[k] = v
        except Exception as e:  # noqa: BLE001
            raise type(e)(
                f"{what}: cannot store attribute {k!r} = {v!r} ({type(v).__name__}): {e}; "
                "use numbers, strings, or NumPy arrays of them"
            ) from None


def _remove(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _fsync(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError as e:
        # Some file systems cannot fsync a directory; the rename is still atomic.
        if not (directory and e.errno in (errno.EINVAL, errno.ENOTSUP, errno.EBADF)):
            raise
    finally:
        os.close(fd)


def _start(target: str, items, options, attrs, overwrite: bool, use_parallel: bool, what: str, clean: bool) -> str:
    """Rank 0: check the target, make the temporary file, create its datasets."""
    directory, base = os.path.split(target)
    if os.path.isdir(target):
        raise IsADirectoryError(f"{what}: {target!r} is a directory; give a file name")
    if os.path.lexists(target) and not overwrite:
        raise FileExistsError(
            f"{what}: {target!r} already exists; pass overwrite=True to replace it, or choose another path"
        )
    if not os.path.isdir(directory):
        if os.path.exists(directory):
            raise NotADirectoryError(f"{what}: cannot write {target!r}: {directory!r} is not a directory")
        raise FileNotFoundError(
            f"{what}: cannot write {target!r}: directory {directory!r} does not exist; "
            "create it first (os.makedirs) or choose another path"
        )
    if clean:  # left by a job killed while writing this target (and only this one)
        for stale in os.listdir(directory):
            if is_tmp_of(stale, base):
                _remove(os.path.join(directory, stale))
    try:
        tmp = _mkstemp(directory, base)
    except OSError as e:
        raise type(e)(
            f"{what}: cannot create a file in {directory!r} ({e.strerror or e}); choose a directory you can write to"
        ) from None
    h5py = _h5.h5py()
    try:
        if use_parallel:  # try the creation in memory only: the real one is collective
            with h5py.File(tmp + ".check", "w", driver="core", backing_store=False) as f:
                _create(f, items, options, attrs, what)
        else:
            with h5py.File(tmp, "w") as f:
                _create(f, items, options, attrs, what)
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def _publish(tmp: str, target: str, overwrite: bool, what: str) -> None:
    """Rank 0: fsync, rename onto the target (atomic), fsync the directory."""
    try:
        _fsync(tmp)
        if overwrite:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # fails if the target appeared meanwhile
            except FileExistsError:
                raise FileExistsError(
                    f"{what}: {target!r} appeared during the write; pass overwrite=True to replace it"
                ) from None
            except OSError:  # no hard links here: check, then rename
                if os.path.lexists(target):
                    raise FileExistsError(
                        f"{what}: {target!r} already exists; pass overwrite=True to replace it"
                    ) from None
                os.replace(tmp, target)
            else:
                os.unlink(tmp)
        _fsync(os.path.dirname(target), directory=True)
    except BaseException:
        _remove(tmp)
        raise


def _writes(x, rank: int) -> bool:
    lay = x.layout
    return bool(lay.owned_size(rank)) and rank in lay.owners()


def write_from(x, dset, collective: bool) -> None:
    """Write the blocks of ``x`` into dataset ``dset`` (of ``x``'s shape).

    Collective over ``x``'s communicator when ``collective``; otherwise not
    collective.  Only the owner of each element writes it: for a replicated
    layout, the ranks at coordinate 0 of the replicated grid axes.  Data moves
    in slabs of at most ``spmdarray.config.io_buffer_bytes``.
    """
    lay = x.layout
    rank = x._st.ctx.rank
    itemsize = max(1, x.dtype.itemsize)
    steps = transfers(lay, rank, itemsize, config.io_buffer_bytes, collective, movers=set(lay.owners()))
    if not steps:
        return
    dxpl = _h5.transfer_list(collective)
    vmap = ViewMap.identity(x.shape)
    block = lay.block(rank)
    local = x._block if steps[0] is not None else None
    for box in steps:
        data = None if box is None else _h5.host(local[(*relative(box, block), ...)])
        _h5.write_slab(dset, vmap, box, data, dxpl)


def _write_serial(ctx, tmp: str, items) -> None:
    """Each rank in turn opens the file ``r+`` and writes its blocks."""
    ok = wait_turn(ctx)
    done = False
    try:
        if ok and any(_writes(x, ctx.rank) for _, x in items):
            with _h5.open_file(tmp, "r+", ctx, False) as f:
                for name, x in items:
                    write_from(x, f[name], False)
            _fsync(tmp)
        done = True
    finally:
        pass_turn(ctx, ok and done)


def _write_parallel(ctx, tmp: str, items, options, attrs, what: str) -> None:
    with _h5.open_file(tmp, "w", ctx, True) as f:
        _create(f, items, options, attrs, what)
        for name, x in items:
            write_from(x, f[name], True)
    if any(_writes(x, ctx.rank) for _, x in items):
        _fsync(tmp)


def save(ctx, path, items, attrs: Mapping, options: dict, *, overwrite: bool, what: str, clean: bool = False) -> None:
    """Write ``items`` (``[(name, array)]``) and ``attrs`` to ``path`` atomically.

    Collective.  ``attrs`` and ``options`` are taken from rank 0.
    """
    use_parallel = _h5.parallel()
    target = os.path.abspath(os.fspath(path))
    _h5.logger.debug("%s(%r) on %d ranks: %s", what, target, ctx.size, _h5.describe(use_parallel, write=True))
    tmp, err = None, None
    if ctx.rank == 0:
        tmp, err = attempt(_start, target, items, options, attrs, overwrite, use_parallel, what, clean)
    tmp, attrs, options = agree(ctx, err, (tmp, dict(attrs), options) if use_parallel else (tmp, None, None))
    try:
        if use_parallel:
            err = attempt(_write_parallel, ctx, tmp, items, options, attrs, what)[1]
        else:
            err = attempt(_write_serial, ctx, tmp, items)[1]
        agree(ctx, err, which_rank=True)
    except BaseException:
        if ctx.rank == 0:
            _remove(tmp)
        raise
    err = attempt(_publish, tmp, target, overwrite, what)[1] if ctx.rank == 0 else None
    agree(ctx, err)


def save_hdf5(
    path,
    arrays: Mapping,
    attrs: Mapping | None = None,
    comm=None,
    *,
    overwrite: bool = False,
    chunks=None,
    compression=None,
    compression_opts=None,
    **create_options,
) -> None:
    """Write arrays into one HDF5 file, one global dataset per array.

    Collective.  Each element is written once, by the rank that owns it (for
    a view or a replicated layout, one rank per element), and no rank holds
    more than its own blocks plus a slab of ``spmdarray.config.io_buffer_bytes``.
    The file is written under a temporary name in the same directory,
    fsynced and renamed onto ``path``, so ``path`` never holds a partial
    file.  The I/O path (parallel HDF5 or serial h5py) is chosen as for
    :func:`load_hdf5`; see ``docs/io.md`` for both and their costs.

    Parameters
    ----------
    path : str or os.PathLike
        File to write.
    arrays : mapping of str to array
        Dataset name (``/`` makes groups) to a spmdarray array, or to a NumPy
        array or scalar that is the same on every rank.
    attrs : mapping, optional
        Attributes of the file's root group (numbers, strings, NumPy arrays);
        rank 0's are written.
    comm : mpi4py communicator, optional
        Default: the arrays' communicator.
    overwrite : bool
        Replace an existing ``path`` (default: raise FileExistsError).
    chunks, compression, compression_opts, **create_options
        Passed to ``h5py.Group.create_dataset`` for every dataset (a mapping
        gives per-name values), e.g. ``chunks=(64, 64), compression="gzip"``
        or ``shuffle=True``.  Scalars (0-d) are stored without chunks or
        filters.

    Raises
    ------
    FileExistsError
        ``path`` exists and ``overwrite`` is False.
    FileNotFoundError, NotADirectoryError, PermissionError, OSError
        The directory is missing or not writable.
    TypeError, ValueError
        A dtype HDF5 cannot store, bad options or names.

    Every error is raised on every rank, and no file is left behind.

    Examples
    --------
    >>> spmdarray.save_hdf5("out.h5", {"u": u, "v": v}, attrs={"t": 0.5},
    ...                     chunks=True, compression="gzip")  # doctest: +SKIP
    """
    ctx, items = _arrays(arrays, comm, "save_hdf5")
    options = {"chunks": chunks, "compression": compression, "compression_opts": compression_opts, **create_options}
    save(ctx, path, items, dict(attrs or {}), options, overwrite=overwrite, what="save_hdf5")
