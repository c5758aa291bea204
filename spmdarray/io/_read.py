"""Reading HDF5 datasets into distributed arrays: each rank reads its own block."""

from __future__ import annotations

import os

import numpy as np

from spmdarray.comm import get_context
from spmdarray.core.array import ndarray
from spmdarray.decomposition import ViewMap, normalize_key
from spmdarray.io import _h5
from spmdarray.io._errors import DatasetNotFoundError, agree, attempt
from spmdarray.io._slabs import relative, transfers
from spmdarray.routines.creation import empty, empty_like
from spmdarray.settings import config

__all__ = ["array_dtype", "check_file", "load_hdf5", "open_dataset", "read_into", "target"]


def array_dtype(dtype: np.dtype, what: str) -> np.dtype:
    """The dtype of the array that holds a dataset of HDF5 type ``dtype``.

    Not collective.  Numbers get the native byte order; variable-length and
    reference types (NumPy ``object``) raise TypeError.
    """
    h5py = _h5.h5py()
    if dtype.hasobject:
        kind = "a variable-length string" if h5py.check_string_dtype(dtype) else "a variable-length or reference"
        raise TypeError(
            f"{what} has {kind} type (NumPy dtype {dtype}), which a spmdarray array cannot hold; "
            "store fixed-length strings (NumPy 'S' dtype) or numbers, or read it with h5py directly"
        )
    if dtype.kind in "biufc" and not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    return dtype


def selection(shape: tuple[int, ...], select, what: str) -> ViewMap:
    """The view of a dataset of ``shape`` that ``select`` (a basic index) picks.  Not collective."""
    if select is None:
        return ViewMap.identity(tuple(shape))
    try:
        key = normalize_key(select, tuple(shape))
    except (IndexError, NotImplementedError) as e:
        raise type(e)(
            f"{what}: select={select!r} does not fit a dataset of shape {tuple(shape)}: {e}; "
            "use integers, slices (any step), None and ... within the shape, e.g. numpy.s_[100:200, ::2]"
        ) from None
    return ViewMap.identity(tuple(shape)).getitem(key)


def check_file(path: str, what: str) -> None:
    """Raise a clear error unless ``path`` is an existing HDF5 file.  Not collective."""
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{what}: no file {path!r} (absolute path {os.path.abspath(path)!r}); "
            "check the path and the working directory of the job"
        )
    if os.path.isdir(path):
        raise IsADirectoryError(f"{what}: {path!r} is a directory; give the path of an HDF5 file")
    if not _h5.h5py().is_hdf5(path):
        raise OSError(
            f"{what}: {path!r} is not an HDF5 file ({os.path.getsize(path)} bytes); "
            "give the path of a file written by HDF5 (h5py, spmdarray.save_hdf5, ...)"
        )


def _dataset_names(group, limit: int = 20) -> str:
    h5py = _h5.h5py()
    names: list[str] = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            names.append(name)
        return True if len(names) > limit else None

    group.visititems(visit)
    if not names:
        return "none"
    more = ", ..." if len(names) > limit else ""
    return ", ".join(repr(n) for n in names[:limit]) + more


def open_dataset(f, name: str, what: str):
    """The dataset ``name`` of open file ``f``, or a clear error.  Not collective."""
    if not isinstance(name, str):
        raise TypeError(f"{what}: the dataset name must be a str, got {type(name).__name__} {name!r}")
    obj = f.get(name)
    if obj is None:
        raise DatasetNotFoundError(
            f"{what}: {f.filename!r} has no dataset {name!r}; datasets in the file: {_dataset_names(f)}"
        )
    if not isinstance(obj, _h5.h5py().Dataset):
        raise TypeError(
            f"{what}: {name!r} in {f.filename!r} is a group, not a dataset; datasets under it: {_dataset_names(obj)}"
        )
    return obj


def _describe(dset, select, what: str):
    where = f"dataset {dset.name!r}"
    dtype = array_dtype(dset.dtype, f"{what}: {where}")
    return tuple(dset.shape), dtype, selection(dset.shape, select, what)


def _inspect_path(path: str, name: str, select, what: str):
    check_file(path, what)
    with _h5.h5py().File(path, "r") as f:
        return _describe(open_dataset(f, name, what), select, what)


def read_into(x, dset, vmap: ViewMap, collective: bool) -> None:
    """Read this rank's block of ``x`` from the selection ``vmap`` of ``dset``.

    Collective over ``x``'s communicator when ``collective`` (every rank makes
    the same number of collective HDF5 reads); otherwise not collective, and
    a rank holding no data does nothing.  Data moves in slabs of at most
    ``spmdarray.config.io_buffer_bytes``.
    """
    lay = x.layout
    rank = x._st.ctx.rank
    steps = transfers(lay, rank, max(1, x.dtype.itemsize), config.io_buffer_bytes, collective)
    if not steps:
        return
    dxpl = _h5.transfer_list(collective)
    block = lay.block(rank)
    local = x._block if steps[0] is not None else None
    for box in steps:
        data = _h5.read_slab(dset, vmap, box, x.dtype, dxpl)
        if box is not None:
            _h5.to_local(local[(*relative(box, block), ...)], data)


def check_like(like, what: str, comm=None):
    """``like`` checked to be a spmdarray array (TypeError otherwise); its context.

    Not collective.  A ``comm`` other than ``like``'s communicator raises
    ValueError.
    """
    if not isinstance(like, ndarray):
        raise TypeError(
            f"{what}: like= must be a spmdarray array whose layout the data is read into, got {type(like).__name__}; "
            "wrap your own blocks with spmdarray.from_local(block) first"
        )
    ctx = like._st.ctx
    if comm is not None and comm is not ctx and comm is not ctx.user_comm and comm is not ctx.comm:
        raise ValueError(f"{what}: comm= is not the communicator of like=; omit comm= (like='s is used)")
    return ctx


def target(shape: tuple, dtype, ctx, like, what: str):
    """A new array of ``shape`` and ``dtype`` to read into: balanced, or laid out as ``like``.

    Collective (no communication).  ``like`` must have ``shape`` (ValueError
    naming both shapes otherwise).
    """
    if like is None:
        return empty(shape, dtype, comm=ctx)
    if tuple(like.shape) != tuple(shape):
        raise ValueError(
            f"{what}: like= has shape {tuple(like.shape)} but the data has shape {tuple(shape)}; pass an array of "
            "the data's shape (or select= a part of that shape), or omit like= for the balanced layout"
        )
    return empty_like(like, dtype=dtype)


def load_hdf5(source, dataset: str | None = None, comm=None, *, select=None, like=None):
    """Read an HDF5 dataset into a distributed array.

    Collective.  The result has the default layout for its shape (whole on
    every rank below ``spmdarray.config.replicate_below`` elements, else
    balanced), and each rank reads only its own block (hyperslab) of the file, in slabs
    of at most ``spmdarray.config.io_buffer_bytes`` bytes.  With parallel HDF5
    (h5py built with MPI) the reads are collective MPI-IO reads through the
    ``mpio`` driver; otherwise every rank opens the file read-only and reads
    independently (see ``docs/io.md``).

    Parameters
    ----------
    source : str, os.PathLike or h5py.Dataset
        Path of the HDF5 file, or a dataset that every rank has opened
        (opened with ``driver='mpio'``, its reads are collective over the
        file's communicator, which must then be ``comm``).
    dataset : str
        Name (path) of the dataset in the file.  Omit it when ``source`` is a
        dataset.
    comm : mpi4py communicator, optional
        Communicator of the result (default: the default communicator).
    select : index, optional
        A basic index applied to the dataset before loading, as in
        ``h5py_dataset[select]``: integers, slices with any step, ``None``
        and ``...``; for example ``numpy.s_[100:200, ::2]``.  Only the
        selected elements are read.
    like : spmdarray.ndarray, optional
        Read into this array's layout instead of the balanced one: each rank
        reads exactly the cells ``like`` holds there, for example the blocks
        of an array made by :func:`spmdarray.from_local`.  It must have the
        dataset's (or the selection's) shape; its communicator is used.

    Returns
    -------
    spmdarray.ndarray
        With the dataset's shape (or the selection's) and dtype (numbers in
        native byte order).

    Raises
    ------
    FileNotFoundError, OSError
        No such file, or not an HDF5 file.
    DatasetNotFoundError
        No such dataset (a ``KeyError``); the message lists the datasets.
    TypeError
        Variable-length or reference types, which arrays cannot hold.
    IndexError
        ``select`` does not fit the dataset's shape.
    ValueError
        ``like`` has another shape than the data.

    Every error is raised on every rank.

    Examples
    --------
    >>> import numpy, spmdarray                                       # doctest: +SKIP
    >>> u = spmdarray.load_hdf5("run.h5", "u")                         # doctest: +SKIP
    >>> part = spmdarray.load_hdf5("run.h5", "u", select=numpy.s_[100:200, ::2])  # doctest: +SKIP
    """

    what = "load_hdf5"
    ctx = get_context(comm) if like is None else check_like(like, what, comm)
    use_parallel = _h5.parallel()
    if _h5.is_dataset(source):
        if dataset is not None:
            raise TypeError(
                f"load_hdf5: got an open h5py.Dataset and dataset={dataset!r}; pass either the dataset alone "
                "or a file path and a dataset name"
            )
        meta, err = attempt(_describe, source, select, what)
        shape, dtype, vmap = agree(ctx, err, meta)
        collective = source.file.driver == "mpio"
        x = target(vmap.shape, dtype, ctx, like, what)
        _h5.logger.debug("load_hdf5(%r): %s", source.name, _h5.describe(collective))
        agree(ctx, attempt(read_into, x, source, vmap, collective)[1], which_rank=True)
        return x
    path = os.fspath(source)
    meta, err = attempt(_inspect_path, path, dataset, select, what) if ctx.rank == 0 else (None, None)
    shape, dtype, vmap = agree(ctx, err, meta)
    x = target(vmap.shape, dtype, ctx, like, what)
    _h5.logger.debug("load_hdf5(%r, %r) on %d ranks: %s", path, dataset, ctx.size, _h5.describe(use_parallel))

    def run() -> None:
        if not use_parallel and not x.layout.owned_size(ctx.rank):
            return
        with _h5.open_file(path, "r", ctx, use_parallel) as f:
            read_into(x, f[dataset], vmap, use_parallel)

    agree(ctx, attempt(run)[1], which_rank=True)
    return x
