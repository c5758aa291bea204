"""h5py access: which I/O path, opening files, moving one slab.

Everything that touches h5py's API goes through here, and so does every
local block: :func:`host` and :func:`to_local` are the only places where data
crosses between an array's block and the host memory that HDF5 reads and
writes (the one place to change for a device backend).
"""

from __future__ import annotations

import logging
import sys

import numpy as np

from spmdarray.io._slabs import file_selection
from spmdarray.settings import config

__all__ = ["h5py", "host", "is_dataset", "logger", "open_file", "parallel", "read_slab", "to_local"]

logger = logging.getLogger("spmdarray.io")


_PATH_ENV = "SPMDARRAY_HDF5_IO"


def h5py():
    """Import and return h5py, or raise ImportError saying how to install it."""
    try:
        import h5py as mod
    except ImportError as e:
        raise ImportError(
            f"spmdarray's HDF5 functions need h5py ({e}); install it with pip install 'spmdarray[hdf5]' "
            "(or pip install h5py; for parallel HDF5, h5py built with HDF5_MPI=ON)"
        ) from None
    return mod


def parallel() -> bool:
    """Whether to use parallel HDF5 (the ``mpio`` driver).  Not collective.

    True when h5py was built against MPI-enabled HDF5, unless the environment
    variable ``SPMDARRAY_HDF5_IO`` is ``serial``; ``parallel`` demands it.
    The environment must be the same on every rank.
    """
    choice = config.hdf5_io or "auto"
    mpi = bool(h5py().get_config().mpi)
    if choice not in ("auto", "serial", "parallel"):
        raise ValueError(f"{_PATH_ENV}={choice!r}: use auto, serial or parallel")
    if choice == "parallel" and not mpi:
        raise RuntimeError(
            f"{_PATH_ENV}=parallel but this h5py ({h5py().__version__}) was built without MPI; "
            "build h5py with HDF5_MPI=ON against MPI-enabled HDF5, or unset the variable"
        )
    return mpi and choice != "serial"


def describe(use_parallel: bool, write: bool = False) -> str:
    """One line naming the I/O path, for the debug log."""
    if use_parallel:
        return f"parallel HDF5 (mpio driver, collective hyperslab {'writes' if write else 'reads'})"
    if write:
        return "serial h5py (ranks write their hyperslabs one at a time, in rank order)"
    return "serial h5py (each rank reads its own hyperslab, independently)"


def is_dataset(obj) -> bool:
    """Whether ``obj`` is an open ``h5py.Dataset`` (without importing h5py)."""
    mod = type(obj).__module__ or ""
    return mod.startswith("h5py") and hasattr(obj, "id") and hasattr(obj, "shape") and hasattr(obj, "dtype")


def open_file(path: str, mode: str, ctx, use_parallel: bool):
    """Open ``path`` with h5py.

    Collective over ``ctx`` when ``use_parallel`` (the ``mpio`` driver on the
    context's communicator); otherwise not collective.  The chunk cache is
    sized to ``config.io_buffer_bytes`` so that slab-by-slab access of a
    compressed dataset decompresses each chunk about once.
    """
    mod = h5py()
    cache = max(1 << 20, config.io_buffer_bytes)
    if use_parallel:
        return mod.File(path, mode, driver="mpio", comm=ctx.comm, rdcc_nbytes=cache)
    return mod.File(path, mode, rdcc_nbytes=cache)


def transfer_list(collective: bool):
    """Dataset transfer property list: collective MPI-IO, or None (the default)."""
    if not collective:
        return None
    mod = h5py()
    dxpl = mod.h5p.create(mod.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(mod.h5fd.MPIO_COLLECTIVE)
    return dxpl


def host(block) -> np.ndarray:
    """A local block as a NumPy array in host memory (no copy for NumPy)."""
    if isinstance(block, np.ndarray):
        return block
    return block.get()  # a device array (CuPy)


def to_local(dst, src: np.ndarray) -> None:
    """Copy host data into (part of) a local block."""
    if isinstance(dst, np.ndarray):
        dst[...] = src
    else:  # a device array: upload with its own library (cupy.asarray for CuPy)
        dst[...] = sys.modules[type(dst).__module__.partition(".")[0]].asarray(src)


def _spaces(dset, vmap, box, count_elems: int):
    mod = h5py()
    fspace = dset.id.get_space()
    mspace = mod.h5s.create_simple((max(1, count_elems),))
    if box is None:
        fspace.select_none()
        mspace.select_none()
        return fspace, mspace, ()
    start, count, stride, flip = file_selection(vmap, box)
    if start:
        fspace.select_hyperslab(start, count, stride)
    return fspace, mspace, flip


def read_slab(dset, vmap, box, dtype, dxpl) -> np.ndarray | None:
    """Read the view ``box`` of dataset ``dset`` (selection ``vmap``).

    Not collective, unless ``dxpl`` is collective: then every rank of the
    file's communicator makes the same number of calls, with ``box=None``
    when it has nothing to read.
    """
    shape = () if box is None else tuple(hi - lo for lo, hi in box)
    n = 0 if box is None else int(np.prod(shape, dtype=np.int64))
    fspace, mspace, flip = _spaces(dset, vmap, box, n)
    buf = np.empty(max(1, n), dtype)
    dset.id.read(mspace, fspace, buf, dxpl=dxpl)
    if box is None:
        return None
    out = buf.reshape(shape)
    if flip:
        out = out[tuple(slice(None, None, -1) if v in flip else slice(None) for v in range(len(shape)))]
    return out


def write_slab(dset, vmap, box, data: np.ndarray | None, dxpl) -> None:
    """Write host ``data`` into the view ``box`` of ``dset`` (selection ``vmap``).

    Collective like :func:`read_slab` (``box=None``, ``data=None``: nothing
    to write on this rank).
    """
    n = 0 if box is None else int(data.size)
    fspace, mspace, flip = _spaces(dset, vmap, box, n)
    if box is None:
        buf = np.empty(1, dset.dtype)
    else:
        if flip:
            data = data[tuple(slice(None, None, -1) if v in flip else slice(None) for v in range(data.ndim))]
        buf = np.ascontiguousarray(data, dtype=dset.dtype).reshape(-1)
        if buf.size == 0:
            buf = np.empty(1, dset.dtype)
    dset.id.write(mspace, fspace, buf, dxpl=dxpl)
