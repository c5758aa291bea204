"""Where local blocks live: NumPy on the host, or CuPy on a GPU.

This is the only module that knows CuPy.  Everything else asks a
:class:`Backend` for allocations (``empty``, ``zeros``, ``full``), for host
and device copies (``to_host``, ``asarray``) and for the array namespace
``xp``; elementwise work calls NumPy's own ufuncs and functions, which
dispatch to CuPy through ``__array_ufunc__`` and ``__array_function__``, so
the NumPy and CuPy paths are one code path.

Choosing the backend
--------------------
``SPMDARRAY_BACKEND=auto|numpy|cupy`` (default ``auto``), or ``backend=`` on
the creation functions.  ``auto`` takes CuPy when it imports *and* a device
answers: ``cupy.cuda.runtime.getDeviceCount() > 0`` and a one-element
allocation on this rank's device succeed.  Otherwise it takes NumPy; it
warns once, on rank 0, saying why, when CuPy is installed but unusable or a
GPU was asked for (``SPMDARRAY_DEVICE`` set), and silently when CuPy is not
installed.

Each rank binds to device ``local_rank % device_count``, where the local rank
counts the ranks on the same node (``MPI_Comm_split_type(SHARED)``).
``SPMDARRAY_DEVICE`` overrides it: one device number for every rank, or a
comma-separated list that the node's ranks take round-robin.

Device buffers and MPI
----------------------
``SPMDARRAY_GPU_AWARE_MPI=1`` passes CuPy buffers straight to MPI (after
synchronising the stream).  ``0`` stages every point-to-point message
through pinned host buffers that are kept and reused.  Unset, the MPI
library is asked (``MPIX_Query_cuda_support`` in Open MPI and MVAPICH,
``MPIX_GPU_query_support`` in MPICH 4); if it cannot say, staging is used,
because device memory passed to an MPI that is not GPU-aware crashes it.
Collectives (reductions, broadcasts, gathers) always go through host memory:
they carry partial results, which are small, and the reduction operators
run on the host.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from spmdarray.backend.threads import blas_threads
from spmdarray.comm import allgather_object, first_failure, get_context, local_rank
from spmdarray.settings import config

__all__ = [
    "Backend",
    "BackendWarning",
    "HOST",
    "decide_backend",
    "decide_gpu_aware",
    "device_for_rank",
    "get_backend",
    "backend_info",
    "context",
]

BACKENDS = ("auto", "numpy", "cupy")


class BackendWarning(UserWarning):
    """``auto`` fell back to NumPy (set ``SPMDARRAY_BACKEND=numpy`` to silence it)."""


class Backend:
    """Allocation and host/device movement for one array library.  Not collective.

    Parameters
    ----------
    name : str
        ``"numpy"`` or ``"cupy"``.
    xp : module
        The array namespace.
    device : int or None
        The bound device (None on the host).
    gpu_aware : bool
        Whether point-to-point messages may carry device buffers.
    rank : int
        This rank, for error messages.
    """

    __slots__ = ("name", "xp", "device", "gpu_aware", "rank", "ndarray", "is_device", "_free", "fill_chunk", "stats")

    def __init__(self, name: str, xp: Any, device: int | None = None, gpu_aware: bool = False, rank: int = 0) -> None:
        self.name = name
        self.xp = xp
        self.device = device
        self.is_device = device is not None
        self.gpu_aware = gpu_aware
        self.rank = rank
        self.ndarray = xp.ndarray
        self._free: dict[int, list] = {}
        # Creation fills blocks in slabs of this many elements (fewer, larger launches on a GPU).
        self.fill_chunk = 1 << (24 if self.is_device else 18)
        self.stats = {"pinned_allocations": 0, "pinned_bytes": 0, "staged_messages": 0}

    def __repr__(self) -> str:
        where = f"device {self.device}" if self.is_device else "host"
        return f"Backend({self.name!r}, {where}, gpu_aware={self.gpu_aware})"

    # ------------------------------------------------------------ allocation
    def empty(self, shape, dtype):
        """Uninitialised block (MemoryError with the sizes when the device is full)."""
        if not self.is_device:
            return np.empty(shape, dtype)
        return self._alloc(self.xp.empty, shape, dtype)

    def zeros(self, shape, dtype):
        """Zero-filled block."""
        if not self.is_device:
            return np.zeros(shape, dtype)
        return self._alloc(self.xp.zeros, shape, dtype)

    def full(self, shape, value, dtype):
        """Block filled with ``value``."""
        if not self.is_device:
            return np.full(shape, value, dtype)
        out = self._alloc(self.xp.empty, shape, dtype)
        out.fill(value)
        return out

    def _alloc(self, fn, shape, dtype):
        try:
            return fn(shape, dtype)
        except Exception as e:  # noqa: BLE001 - CuPy's OutOfMemoryError has no public base here
            if "OutOfMemory" not in type(e).__name__ and "out of memory" not in str(e).lower():
                raise
            need = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            raise MemoryError(self.oom_message(need)) from None

    def oom_message(self, need: int) -> str:
        free, total = self.mem_info()
        return (
            f"out of GPU memory on rank {self.rank}, device {self.device}: requested {need} bytes, "
            f"{free} bytes free of {total}. Use more ranks or GPUs, smaller arrays, or "
            "SPMDARRAY_BACKEND=numpy"
        )

    def mem_info(self) -> tuple[int, int]:
        """(free, total) bytes on the device; (0, 0) on the host."""
        if not self.is_device:
            return 0, 0
        try:
            pool = self.xp.get_default_memory_pool()
            free, total = self.xp.cuda.runtime.memGetInfo()
            return int(free) + int(pool.free_bytes()), int(total)
        except Exception:  # noqa: BLE001 - only for a message
            return -1, -1

    # ------------------------------------------------------------- movement
    def is_block(self, a) -> bool:
        """Whether ``a`` is an array of this backend."""
        return isinstance(a, self.ndarray)

    def asarray(self, a, dtype=None):
        """``a`` (host data, a scalar or a block of this backend) as a block of this backend."""
        if not self.is_device:
            return np.asarray(a, dtype=dtype)
        if isinstance(a, self.ndarray):
            return a if dtype is None else a.astype(dtype, copy=False)
        return self.xp.asarray(np.asarray(a, dtype=dtype))

    def to_host(self, a):
        """``a`` as a NumPy array (a copy for device blocks, ``a`` itself on the host)."""
        if self.is_device and isinstance(a, self.ndarray):
            return a.get()
        return np.asarray(a)

    def synchronize(self) -> None:
        """Wait for the device's queued work (nothing on the host)."""
        if self.is_device:
            self.xp.cuda.get_current_stream().synchronize()

    # --------------------------------------------- staging for point-to-point
    def pinned(self, nbytes: int) -> np.ndarray:
        """A pinned host buffer of at least ``nbytes`` bytes, from the reuse pool."""
        cls = max(6, (max(nbytes, 1) - 1).bit_length())
        free = self._free.get(cls)
        if free:
            return free.pop()[:nbytes]
        mem = self.xp.cuda.alloc_pinned_memory(1 << cls)
        self.stats["pinned_allocations"] += 1
        self.stats["pinned_bytes"] += 1 << cls
        return np.frombuffer(mem, np.uint8, 1 << cls)[:nbytes]

    def release(self, buf: np.ndarray) -> None:
        """Return a buffer from :meth:`pinned` to the pool."""
        whole = buf.base if buf.base is not None and isinstance(buf.base, np.ndarray) else buf
        cls = max(6, (whole.nbytes - 1).bit_length())
        self._free.setdefault(cls, []).append(whole)

    def send_buffer(self, data):
        """(buffer for MPI, pinned buffer to release or None) holding ``data``'s bytes."""
        xp = self.xp
        src = xp.ascontiguousarray(data).reshape(-1)
        if self.gpu_aware:
            return src.view(xp.uint8), None
        host = self.pinned(src.nbytes)
        src.view(xp.uint8).get(out=host)
        self.stats["staged_messages"] += 1
        return host, host

    def recv_buffer(self, dst):
        """(buffer for MPI, finish) for receiving into device block ``dst``.

        ``finish()`` (after the wait) copies staged bytes into ``dst`` and
        releases the staging buffer; it is None when MPI wrote ``dst`` itself.
        """
        xp = self.xp
        if self.gpu_aware:
            if dst.flags.c_contiguous:
                return dst.reshape(-1).view(xp.uint8), None
            tmp = xp.empty(dst.shape, dst.dtype)

            def unpack_device() -> None:
                dst[...] = tmp

            return tmp.reshape(-1).view(xp.uint8), unpack_device
        host = self.pinned(dst.nbytes)
        self.stats["staged_messages"] += 1

        def unpack() -> None:
            dst[...] = xp.asarray(host.view(dst.dtype).reshape(dst.shape))
            self.release(host)

        return host, unpack


HOST = Backend("numpy", np)

# ------------------------------------------------------------ pure decisions


def decide_backend(requested: str | None, probe: Callable[[], tuple[bool, str]]) -> tuple[str, str]:
    """Which backend to use, and why.  Pure.

    Parameters
    ----------
    requested : str or None
        ``"auto"``, ``"numpy"`` or ``"cupy"`` (None or ``""`` mean ``"auto"``).
    probe : callable
        ``probe() -> (usable, reason)``: whether CuPy imports and a device
        answers.  Called only when needed.

    Returns
    -------
    (name, reason)
        ``reason`` is empty unless ``auto`` fell back to NumPy.

    Raises
    ------
    ValueError
        For an unknown name.
    RuntimeError
        When ``cupy`` was asked for explicitly and is not usable.
    """
    req = (requested or "auto").strip().lower()
    if req not in BACKENDS:
        raise ValueError(f"SPMDARRAY_BACKEND / backend= must be one of {', '.join(BACKENDS)}; got {requested!r}")
    if req == "numpy":
        return "numpy", ""
    ok, why = probe()
    if ok:
        return "cupy", ""
    if req == "cupy":
        raise RuntimeError(
            f"backend 'cupy' was asked for but is not usable: {why}. Use SPMDARRAY_BACKEND=auto or numpy"
        )
    return "numpy", why


def device_for_rank(local_rank: int, device_count: int, override: str | None = None) -> int:
    """The device a rank binds to.  Pure.

    ``local_rank % device_count`` by default.  ``override`` is
    ``SPMDARRAY_DEVICE``: one device number for every rank, or a
    comma-separated list that the node's ranks take round-robin.

    >>> [device_for_rank(r, 4) for r in range(6)]
    [0, 1, 2, 3, 0, 1]
    >>> [device_for_rank(r, 4, "2,3") for r in range(3)]
    [2, 3, 2]
    """
    if device_count <= 0:
        raise ValueError(f"no CUDA device to bind local rank {local_rank} to (device count {device_count})")
    if override is not None and override.strip():
        try:
            devs = [int(s) for s in override.split(",") if s.strip()]
        except ValueError:
            raise ValueError(
                f"SPMDARRAY_DEVICE must be a device number or a comma-separated list; got {override!r}"
            ) from None
        bad = [d for d in devs if not 0 <= d < device_count]
        if not devs or bad:
            raise ValueError(
                f"SPMDARRAY_DEVICE={override!r} names devices {bad or devs} but this node has {device_count} "
                f"(0..{device_count - 1})"
            )
        return devs[local_rank % len(devs)]
    return local_rank % device_count


def decide_gpu_aware(env: str | None, query: Callable[[], bool | None]) -> bool:
    """Whether to hand device buffers to MPI.  Pure.

    ``env`` is ``SPMDARRAY_GPU_AWARE_MPI`` (``"1"``/``"0"``, or None/``""``
    to ask the library); ``query()`` returns True or False when the MPI
    library can say, None when it cannot (then: stage through the host).
    """
    if env is not None and env.strip() != "":
        v = env.strip().lower()
        if v in ("1", "true", "yes", "on"):
            return True
        if v in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"SPMDARRAY_GPU_AWARE_MPI must be 0 or 1; got {env!r}")
    return bool(query())


def _query_mpi_cuda() -> bool | None:
    """Ask the loaded MPI library whether it accepts CUDA buffers (None: cannot tell)."""
    import ctypes

    try:
        lib = ctypes.CDLL(None)
    except OSError:
        return None
    fn = getattr(lib, "MPIX_Query_cuda_support", None)  # Open MPI, MVAPICH
    if fn is not None:
        fn.restype = ctypes.c_int
        return bool(fn())
    fn = getattr(lib, "MPIX_GPU_query_support", None)  # MPICH >= 4.0
    if fn is not None:
        flag = ctypes.c_int(0)
        fn.restype = ctypes.c_int
        if fn(ctypes.c_int(0), ctypes.byref(flag)) == 0:  # MPIX_GPU_SUPPORT_CUDA == 0
            return bool(flag.value)
    return None


# ------------------------------------------------------------- resolution

_resolved: dict[str, Backend] = {}
_warned = False


def _cupy_module():
    # SPMDARRAY_CUPY_MODULE names a stand-in module with CuPy's interface
    # (the test suite's CPU emulation); it defaults to CuPy itself.
    return importlib.import_module(config.cupy_module or "cupy")


#: How :func:`_probe_cupy`'s reason starts when CuPy is not installed (no warning then).
_NO_IMPORT = "cupy does not import"


def _probe_cupy(local_rank: int) -> tuple[bool, str, Any, int]:
    try:
        cp = _cupy_module()
    except Exception as e:  # noqa: BLE001 - any import failure means no CuPy
        return False, f"{_NO_IMPORT} ({type(e).__name__}: {e})", None, -1
    try:
        n = int(cp.cuda.runtime.getDeviceCount())
    except Exception as e:  # noqa: BLE001
        return False, f"no CUDA device answers ({type(e).__name__}: {e})", None, -1
    if n <= 0:
        return False, "CuPy sees no CUDA device", None, -1
    try:
        dev = device_for_rank(local_rank, n, config.device)
        cp.cuda.Device(dev).use()
        cp.zeros(1).sum()  # a driver-less machine fails here: cudaErrorInsufficientDriver
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001
        return False, f"a one-element allocation on the GPU failed ({type(e).__name__}: {e})", None, -1
    return True, "", cp, dev


def get_backend(name: str | None, ctx) -> Backend:
    """The backend ``name`` (None: ``SPMDARRAY_BACKEND``), resolved once per process.

    Collective over ``ctx`` the first time a device backend is resolved (the
    node-local rank is computed with a shared-memory split).
    """
    global _warned
    key = name or config.backend or "auto"
    be = _resolved.get(key)
    if be is not None:
        return be

    if key.strip().lower() == "numpy":
        be = HOST
    else:
        lrank = local_rank(ctx)[0]
        found: list = []

        def probe() -> tuple[bool, str]:
            ok, why, cp, dev = _probe_cupy(lrank)
            found[:] = [cp, dev]
            return agree_on_device(ctx, ok, why)

        chosen, why = decide_backend(key, probe)
        if chosen == "numpy":
            be = HOST
            # Without CuPy installed NumPy is the only choice: warn only when CuPy is
            # installed but unusable, or a GPU was asked for (SPMDARRAY_DEVICE).
            silent = why.startswith(_NO_IMPORT) and config.device is None
            if not silent and not _warned and ctx.rank == 0:
                _warned = True
                warnings.warn(
                    f"spmdarray: backend 'auto' uses NumPy: {why}. Set SPMDARRAY_BACKEND=numpy to silence this",
                    BackendWarning,
                    stacklevel=_outside_package(),
                )
        else:
            cp, dev = found
            aware = decide_gpu_aware(config.gpu_aware_mpi, _query_mpi_cuda)
            be = Backend("cupy", cp, device=dev, gpu_aware=aware, rank=ctx.rank)
    _resolved[key] = be
    return be


def agree_on_device(ctx, ok: bool, why: str) -> tuple[bool, str]:
    """The device backend only if every rank of ``ctx`` has a usable device.

    Collective over ``ctx``: one ``Allreduce`` of a flag (and, only when
    some rank has no device, one ``allgather`` of the reasons).  Each rank
    probing alone would let a rank with a GPU run collectives (a ``Clone``
    of its communicator for the device context) that the others never call.

    Returns
    -------
    (bool, str)
        Whether every rank may use its device, and why not: this rank's own
        reason, or, on a rank with a device, the ranks without one.
    """
    if ctx.size == 1 or first_failure(ctx, not ok) < 0:
        return ok, why
    every = allgather_object(ctx, why if not ok else "")
    if not ok:  # this rank's own reason (kept as is: no CuPy installed here stays silent)
        return False, why
    bad = "; ".join(f"rank {r}: {w}" for r, w in enumerate(every) if w)
    return False, f"not every rank has a usable GPU ({bad}), so every rank uses NumPy"


def _outside_package() -> int:
    """``stacklevel`` of the first caller outside spmdarray (warnings then name user code)."""
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level


def context(comm=None, backend: str | None = None):
    """The context for ``comm`` whose arrays use ``backend``.  Collective on first use."""

    if backend is not None and backend.strip().lower() not in BACKENDS:
        raise ValueError(f"backend= must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if comm is not None and hasattr(comm, "backend") and backend is None:
        return comm  # already a context
    base = get_context(comm)
    be = get_backend(backend, base)
    return get_context(base.user_comm, backend=be)


def backend_info(comm=None, backend: str | None = None) -> dict:
    """Which backend arrays made with ``comm`` and ``backend`` use on this rank.

    Collective on first use (the backend is resolved then); afterwards not
    collective.

    Returns
    -------
    dict
        ``backend`` (``"numpy"`` or ``"cupy"``), ``device`` (the bound GPU,
        or None), ``gpu_aware_mpi`` (whether device buffers go to MPI
        directly), ``pinned_bytes`` (staging memory held) and ``blas_threads``
        (the threads of each BLAS/OpenMP library loaded in this rank, and the
        count ``config.blas_threads`` set at import, or None).
    """
    be = backend_of(context(comm, backend))
    return {
        "backend": be.name,
        "device": be.device,
        "gpu_aware_mpi": be.gpu_aware,
        "pinned_bytes": be.stats["pinned_bytes"],
        "blas_threads": blas_threads(),
    }


def backend_of(ctx) -> Backend:
    """The backend of a context (NumPy for contexts made without one)."""
    be = ctx.backend
    return HOST if be is None else be
