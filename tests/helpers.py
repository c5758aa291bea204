"""Shared test utilities: NumPy is the reference for every comparison.

Every helper is safe to call on every rank (comparisons gather the
spmdarray result with ``numpy.asarray``, which is collective).
"""

from __future__ import annotations

import os

import numpy

import spmdarray
from spmdarray.settings import config as _config


def world():
    """``(rank, size)`` of COMM_WORLD."""
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()


def real_gpu() -> bool:
    """Whether this run's arrays live on a real GPU (CuPy, not its CPU stand-in)."""
    return os.environ.get("SPMDARRAY_BACKEND") == "cupy" and not os.environ.get("SPMDARRAY_CUPY_MODULE")


def backend():
    """The backend (NumPy, or CuPy under ``SPMDARRAY_BACKEND=cupy``) of this run's arrays."""
    return spmdarray.empty(0)._st.be


def block(a):
    """A NumPy block as a block of this run's backend (for ``from_local``)."""
    return backend().asarray(a)


def host(a):
    """A local block (NumPy or CuPy) as a NumPy array."""
    return backend().to_host(a)


def ref(shape, dtype=float, seed=0):
    """A deterministic NumPy array, identical on every rank."""
    rng = numpy.random.default_rng(seed)
    if numpy.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, size=shape).astype(dtype)
    if numpy.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if numpy.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def assert_eq(got, expected, *, rtol=1e-12, atol=0.0, check_dtype=True, exact=False):
    """Assert that a spmdarray (or NumPy) result equals NumPy's ``expected``.

    Checks type family (distributed array vs. scalar), shape, dtype and
    values (NaNs compare equal).  Collective when ``got`` is distributed.
    """
    expected_is_array = isinstance(expected, numpy.ndarray)
    if isinstance(got, spmdarray.ndarray):
        assert expected_is_array, f"got a spmdarray array {got.shape}, NumPy gives {type(expected).__name__}"
        g = numpy.asarray(got)
    else:
        g = numpy.asarray(got)
    e = numpy.asarray(expected)
    assert g.shape == e.shape, f"shape {g.shape} != NumPy's {e.shape}"
    if check_dtype:
        assert g.dtype == e.dtype, f"dtype {g.dtype} != NumPy's {e.dtype}"
    if exact and real_gpu() and e.dtype.kind in "fc":
        # GPU math libraries (sin, hypot, pow ...) may differ from the host's in the
        # last bits; a few ulp, relative to the result's magnitude, is the tolerance.
        tol = 32 * numpy.finfo(e.dtype).eps
        finite = numpy.abs(e[numpy.isfinite(e)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        numpy.testing.assert_allclose(g, e, rtol=tol, atol=tol * scale, equal_nan=True)
    elif exact or e.dtype.kind not in "fc":
        numpy.testing.assert_array_equal(g, e)
    else:
        numpy.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


def fuse_everything(monkeypatch, compiler: str) -> None:
    """Defer every elementwise chain, whatever its size, evaluated by ``compiler``.

    ``"numba"`` compiles every kernel at once (CuPy's generated kernels on the
    device backend); ``"numpy"`` evaluates one call per step.  Skips the test
    when that compiler is missing.
    """
    import pytest

    from spmdarray.fusion import run as _fusion_run

    for name, value in (("fuse", True), ("fuse_compiler", compiler), ("fuse_jit_min_size", 0), ("fuse_jit_after", 0)):
        monkeypatch.setattr(_config, name, value)
    monkeypatch.setattr(_config, "fuse_min_size", 0)
    device = spmdarray.empty(0)._st.be.is_device
    if compiler == "numba" and (_fusion_run._device_kernels() if device else _fusion_run._kernels()) is None:
        pytest.skip("no kernel compiler (numba, or CuPy's ElementwiseKernel on the device backend)")


def python_lane_only(monkeypatch) -> None:
    """Set the compiled lane (``spmdarray.core._lane``) aside for one test: the Python lane's
    functions and methods alone, as with ``SPMDARRAY_LANE_EXTENSION=0``."""
    from spmdarray.core import array as array_mod
    from spmdarray.core import operators
    from spmdarray.routines import docstrings

    for mod, name in ((array_mod, "_REDUCE_C"), (docstrings, "_DIRECT_C")):
        monkeypatch.setattr(mod, name, None)
    for cls in (operators.OperatorsMixin, spmdarray.ndarray):
        for name, attr in list(vars(cls).items()):
            if type(attr).__name__ == "LaneMethod":
                monkeypatch.setattr(cls, name, attr.__wrapped__)
            elif type(attr) is property and type(attr.fget).__name__ == "LaneMethod":  # ``x.T``, ``x.shape``
                monkeypatch.setattr(cls, name, property(attr.fget.__wrapped__, attr.fset, doc=attr.__doc__))
