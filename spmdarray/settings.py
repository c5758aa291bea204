"""``spmdarray.config``: every setting of the library in one object.

Each setting has a default, an environment variable read once when
spmdarray is imported, and a scoped override::

    spmdarray.config.set(fuse_min_size=0)          # from now on
    with spmdarray.config.set(fuse=False):         # inside the block only
        ...

Settings marked *agreed* decide what is communicated, so every rank must use
the same value.  They are compared once per communicator context, when it is
made (:func:`check_agreement`: one 64-bit hash, one ``Allreduce``); a
difference raises ``ValueError`` on every rank and names the setting.
Changing an agreed setting later is the program's business: call
``config.set`` on every rank alike.  The table of every setting is in
docs/settings.md (generated from ``Settings.fields``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from spmdarray.comm import allgather_object, allreduce_max, on_new_context, unchecked, use_config

__all__ = ["Settings", "config", "check_agreement", "SettingsDisagree"]

_FALSE = ("0", "off", "false", "no")


def _flag(s: str) -> bool:
    return s.strip().lower() not in _FALSE


def _overlap(s: str):
    s = s.strip().lower()
    return "auto" if s == "auto" else _flag(s)


def _lower(s: str) -> str:
    return s.strip().lower()


def _opt_str(s: str) -> str | None:
    return s.strip() or None


def _seconds(s: str) -> float:
    v = float(s)
    if v < 0:
        raise ValueError(s)
    return v


@dataclass(frozen=True)
class Field:
    """One setting: default, environment variable, parser, whether ranks must agree, meaning."""

    default: Any
    env: str | None
    parse: Callable[[str], Any] | None
    agreed: bool
    doc: str
    group: str


_F = Field
#: Every setting, in the order of the docs table.
FIELDS: dict[str, Field] = {
    # layout and collectives
    "ghost_width": _F(
        1, None, None, True, "Ghost cells per side of each partitioned axis for arrays created afterwards.", "layout"
    ),
    "replicate_below": _F(
        1 << 18,
        "SPMDARRAY_REPLICATE_BELOW",
        int,
        True,
        "Arrays with fewer elements are created whole on every rank (replicated): they compute "
        "redundantly with no messages, and scalar reads and writes on them are local. 0: split every "
        "array.",
        "layout",
    ),
    "gather_rereads_below": _F(
        1 << 19,
        "SPMDARRAY_GATHER_REREADS_BELOW",
        int,
        True,
        "A split array with fewer elements that a loop reads again and again without writing it (elements, "
        "slices, windows, products such as ``d[:, i] @ d[:, i:]``) is gathered whole onto every rank once, after "
        "as many reads with a collective as it has 64 KiB (at least 3; a product counts as 4); the reads that "
        "follow are NumPy's own on "
        "that copy, with no collective until the array is written. 0: never.",
        "layout",
    ),
    "whole_lane": _F(
        True,
        "SPMDARRAY_WHOLE_LANE",
        _flag,
        True,
        "Operations whose arrays every rank holds whole (replicated, or any array on one rank) are NumPy's own "
        "call on each rank's copy, skipping the distributed engine. Off: the engine takes them (same results).",
        "layout",
    ),
    "lane_extension": _F(
        True,
        "SPMDARRAY_LANE_EXTENSION",
        _flag,
        False,
        "Use the compiled lane (``spmdarray.core._lane``, built with the wheel): the usual cases of the "
        "whole-array lane (operators, indexing and assignment with integers, slices and index arrays, ``x.T``, "
        "ufunc calls, full reductions, metadata, the pure functions, wrapping NumPy's result) in C, with the "
        "same results as the Python lane. Read when spmdarray is imported. Off, or not built: the Python lane "
        "alone.",
        "layout",
    ),
    "reduce_gather_bytes": _F(
        16 << 20,
        None,
        None,
        True,
        "Above this many bytes of partial results per "
        "reduction group, reductions combine with a rank-ordered Reduce + Bcast instead of an "
        "all-gather.",
        "layout",
    ),
    "agree_allocation_bytes": _F(
        1 << 20,
        None,
        None,
        True,
        "A device allocation of at least this many bytes "
        "on any rank checks with every rank that none ran out of memory, so that all raise "
        "MemoryError (None: never).",
        "backend",
    ),
    "linalg_max_elements": _F(
        4096 * 4096,
        None,
        None,
        True,
        "The largest matrix (elements) that a replicated "
        "linear-algebra routine (inv, eig, det, ...) gathers onto one rank; larger ones raise "
        "NotImplementedError.",
        "linalg",
    ),
    # fusion
    "fuse": _F(
        True,
        "SPMDARRAY_FUSE",
        _flag,
        True,
        "Defer elementwise operations and fuse chains of them into one kernel per rank.",
        "fusion",
    ),
    "fuse_compiler": _F(
        "numba",
        "SPMDARRAY_FUSE_COMPILER",
        _lower,
        False,
        "'numba' or 'numpy' (evaluate deferred chains with NumPy); 'numba' falls back to 'numpy' without numba.",
        "fusion",
    ),
    "fuse_min_size": _F(
        1 << 14, "SPMDARRAY_FUSE_MIN_SIZE", int, True, "Operations with fewer elements run eagerly.", "fusion"
    ),
    "fuse_replicated_min": _F(
        0,
        "SPMDARRAY_FUSE_REPLICATED_MIN",
        int,
        True,
        "Elementwise operations on replicated arrays (below ``replicate_below``) with at least this many "
        "elements (and at least ``fuse_min_size``) are deferred and fused, as on split arrays, each rank "
        "computing the whole result in one kernel; smaller ones run NumPy's own calls. Element and slice "
        "reads stay NumPy's indexing either way. 0 (the default): never fuse replicated arrays. Chains of "
        "elementwise statements gain (a 400 x 400 shallow-water step 2.3 x faster at 100000); programs of "
        "single operations and reductions lose (the fuser's overhead, about 45 us an operation).",
        "fusion",
    ),
    "fuse_defer_writes": _F(
        True,
        "SPMDARRAY_FUSE_DEFER_WRITES",
        _flag,
        False,
        "An assignment of a fused value that waits for messages is computed when its destination "
        "is next used, so that consecutive statements wait once for all their halos.",
        "fusion",
    ),
    "fuse_max_ops": _F(48, None, None, True, "A deferred tree with more operations is evaluated at once.", "fusion"),
    "fuse_chunk_bytes": _F(
        1 << 18, None, None, False, "Size of the row chunks an aliased assignment is computed in.", "fusion"
    ),
    "fuse_jit_min_size": _F(
        1 << 14,
        "SPMDARRAY_FUSE_JIT_MIN_SIZE",
        int,
        False,
        "A kernel is compiled for blocks of at least this many elements ...",
        "fusion",
    ),
    "fuse_jit_after": _F(
        3,
        "SPMDARRAY_FUSE_JIT_AFTER",
        int,
        False,
        "... or once the same program was evaluated this many times; before that NumPy evaluates it.",
        "fusion",
    ),
    "fuse_overlap": _F(
        "auto",
        "SPMDARRAY_FUSE_OVERLAP",
        _overlap,
        False,
        "Compute the interior while halos "
        "travel: 'auto' (blocks of at least fuse_overlap_min_size elements, unless a node runs more "
        "ranks than cores), True or False.",
        "fusion",
    ),
    "fuse_overlap_min_size": _F(1 << 20, None, None, False, "Smallest block 'auto' overlaps.", "fusion"),
    "fuse_device": _F(
        True,
        "SPMDARRAY_FUSE_DEVICE",
        _flag,
        True,
        "Defer on the CuPy backend too (generated cupy.ElementwiseKernels).",
        "fusion",
    ),
    "fuse_cache": _F(
        None,
        "SPMDARRAY_FUSE_CACHE",
        _opt_str,
        False,
        "Folder of compiled kernels (None: $NUMBA_CACHE_DIR/spmdarray-fusion, else ~/.cache/spmdarray/fusion).",
        "fusion",
    ),
    # backend and devices
    "backend": _F(
        "auto",
        "SPMDARRAY_BACKEND",
        _lower,
        True,
        "'auto', 'numpy' or 'cupy': where new arrays keep their blocks.",
        "backend",
    ),
    "device": _F(
        None,
        "SPMDARRAY_DEVICE",
        _opt_str,
        False,
        "GPU of each rank: one device number, or a "
        "comma-separated list indexed by node-local rank (None: node-local rank modulo the device "
        "count).",
        "backend",
    ),
    "gpu_aware_mpi": _F(
        None,
        "SPMDARRAY_GPU_AWARE_MPI",
        _opt_str,
        True,
        "'1': pass CuPy buffers straight to MPI; '0': stage through host memory; None: ask MPI.",
        "backend",
    ),
    "blas_threads": _F(
        -1,
        "SPMDARRAY_BLAS_THREADS",
        int,
        False,
        "BLAS and OpenMP threads of each rank, set at import. -1 (auto): where the MPI launcher says that "
        "several ranks share the node (MPI_LOCALNRANKS, OMPI_COMM_WORLD_LOCAL_SIZE, MV2_COMM_WORLD_LOCAL_SIZE) "
        "and none of OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS, BLIS_NUM_THREADS, "
        "VECLIB_MAXIMUM_THREADS is set, the node's cores divided by its ranks (at least 1), so that the ranks do "
        "not oversubscribe the cores. 0: leave the libraries alone. n: n threads.",
        "backend",
    ),
    "cupy_module": _F(
        "cupy",
        "SPMDARRAY_CUPY_MODULE",
        str.strip,
        False,
        "Module with CuPy's interface (tests use an emulation over NumPy).",
        "backend",
    ),
    # errors, hangs and debugging
    "abort_on_error": _F(
        True,
        "SPMDARRAY_ABORT_ON_ERROR",
        _flag,
        False,
        "An uncaught exception on one rank prints its traceback with the rank number and aborts the "
        "whole job (MPI_Abort), instead of leaving the other ranks waiting (never in an interactive "
        "interpreter).",
        "debug",
    ),
    "hang_timeout": _F(
        600.0,
        "SPMDARRAY_HANG_TIMEOUT",
        _seconds,
        False,
        "Seconds a rank may wait in one spmdarray collective or halo exchange before it prints its "
        "stack and what it waits for, and aborts the job (0: wait for ever). Raise it where ranks "
        "legitimately wait longer, e.g. serial-HDF5 checkpoints of many GB (ranks write one at a time).",
        "debug",
    ),
    "debug": _F(
        False,
        "SPMDARRAY_DEBUG",
        _flag,
        True,
        "Check every collective: the ranks compare the call (function, arguments, source line, "
        "sequence number, settings) before it runs and raise CollectiveMismatch naming each rank's "
        "call; random seeds must be equal on every rank.",
        "debug",
    ),
    # I/O
    "hdf5_io": _F("auto", "SPMDARRAY_HDF5_IO", _lower, True, "'auto', 'serial' or 'parallel': the HDF5 path.", "io"),
    "io_buffer_bytes": _F(
        64 << 20,
        None,
        None,
        True,
        "The largest slab, in bytes, that a rank stages through "
        "host memory per HDF5 read or write: a rank never holds more than its own block plus one "
        "slab.",
        "io",
    ),
}


class SettingsDisagree(ValueError):
    """An agreed setting differs between the ranks of a communicator."""


class _Override:
    """What :meth:`Settings.set` returns: already applied; as a ``with`` block, undone on exit."""

    __slots__ = ("_cfg", "_old")

    def __init__(self, cfg: Settings, old: dict) -> None:
        self._cfg = cfg
        self._old = old

    def __enter__(self) -> Settings:
        return self._cfg

    def __exit__(self, *exc) -> None:
        for k, v in self._old.items():
            object.__setattr__(self._cfg, k, v)


class Settings:
    """Library settings (see the module docstring).  Not collective.

    Read an attribute (``config.fuse_min_size``) to get a value; change values
    with :meth:`set`.  ``fields`` describes each setting.
    """

    __slots__ = tuple(FIELDS)
    fields = FIELDS

    def __init__(self, environ=None) -> None:
        env = os.environ if environ is None else environ
        for name, f in FIELDS.items():
            v = f.default
            raw = env.get(f.env) if f.env else None
            if raw is not None and raw.strip() != "":
                try:
                    v = f.parse(raw)
                except ValueError:
                    raise ValueError(f"{f.env}={raw!r} is not a valid value for config.{name}") from None
            object.__setattr__(self, name, v)

    def __setattr__(self, name: str, value) -> None:
        # ``config.x = v`` is ``config.set(x=v)`` (kept for programs written that way).
        self.set(**{name: value})

    def set(self, **values) -> _Override:
        """Change settings now; used in a ``with`` statement, only until the block ends.

        Unknown names raise TypeError listing the valid ones.  Not collective,
        but agreed settings must be changed alike on every rank.
        """
        bad = [k for k in values if k not in FIELDS]
        if bad:
            raise TypeError(f"unknown setting(s) {', '.join(bad)}; spmdarray.config has: {', '.join(FIELDS)}")
        old = {k: getattr(self, k) for k in values}
        for k, v in values.items():
            object.__setattr__(self, k, v)
        return _Override(self, old)

    def as_dict(self) -> dict:
        """Every setting's current value.  Not collective."""
        return {k: getattr(self, k) for k in FIELDS}

    def agreed_hash(self) -> int:
        """A 62-bit hash of the agreed settings (the same on every rank when they agree).  Not collective."""
        text = repr([(k, getattr(self, k)) for k, f in FIELDS.items() if f.agreed])
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 2

    def __repr__(self) -> str:
        return "spmdarray.config(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


#: The one settings object (``spmdarray.config``).
config = Settings()


def check_agreement(ctx) -> None:
    """Raise on every rank when an agreed setting differs between the ranks of ``ctx``.

    Collective over the context (called once, when it is made): one
    ``Allreduce`` of two 64-bit integers; only when the hashes differ, one
    ``allgather`` more finds the settings to name.
    """
    if ctx.size == 1:
        return
    h = config.agreed_hash()
    with unchecked():  # the debug mode's own checks depend on these settings
        hi, neg_lo = allreduce_max(ctx, (h, -h))
        if hi == -neg_lo:
            return
        mine = {k: repr(getattr(config, k)) for k, f in FIELDS.items() if f.agreed}
        every = allgather_object(ctx, mine)
    diff = [k for k in mine if len({d[k] for d in every}) > 1]
    raise SettingsDisagree(
        "spmdarray settings differ between ranks: "
        + "; ".join(f"config.{k} is " + ", ".join(f"{d[k]} on rank {r}" for r, d in enumerate(every)) for k in diff)
        + ". Set the same SPMDARRAY_* variables (or config.set values) on every rank"
    )


on_new_context(check_agreement)
use_config(config)


def environment(names) -> dict[str, str]:
    """The variables of the process environment among ``names`` that are set (this module is the
    one that reads the environment).  Not collective."""
    return {name: os.environ[name] for name in names if name in os.environ}


def set_environment_defaults(values: dict[str, str]) -> None:
    """Set each variable of ``values`` that the process environment does not have (for libraries
    loaded later and for child processes).  Not collective."""
    for name, value in values.items():
        os.environ.setdefault(name, value)
