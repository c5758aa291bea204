"""The GPU fused kernels (spmdarray.fusion.kernels_cuda) against NumPy run one step at a time.

Random programs (trees of the fusable ufuncs over mixed dtypes, scalars,
strided, negative-step and broadcast operands, random leaves) are evaluated
by the generated CuPy kernels on device blocks and compared bit for bit (NaN
payloads aside) with ``spmdarray.fusion.run._interpret`` on host copies of the
same data (the cases live in ``fusion_device_cases``, shared with
``scaling/device_fusion_check.py``).  Runs under the emulated backend
(``SPMDARRAY_BACKEND=cupy SPMDARRAY_CUPY_MODULE=fake_cupy``: the generated
source is compiled as C++ and run on the CPU) and on a real GPU; skipped
otherwise.  Not collective: every rank runs the same local checks.
"""

from __future__ import annotations

import os

import fusion_device_cases as cases
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(
    os.environ.get("SPMDARRAY_BACKEND") != "cupy", reason="GPU kernels: run with SPMDARRAY_BACKEND=cupy"
)


class HypPick:
    """``fusion_device_cases.random_program``'s choices drawn by hypothesis."""

    def __init__(self, draw) -> None:
        self.draw = draw

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(st.sampled_from(seq))


@st.composite
def programs(draw):
    return cases.random_program(HypPick(draw))


@settings(max_examples=30, deadline=None, database=None)
@given(programs())
def test_random_programs_full_block(case):
    cases.check_full_block(case)


@settings(max_examples=20, deadline=None, database=None)
@given(programs(), st.booleans())
def test_random_programs_sub_box(case, out_is_sub):
    cases.check_sub_box(case, out_is_sub)


@settings(max_examples=20, deadline=None, database=None)
@given(programs())
def test_random_programs_sum(case):
    cases.check_sum(case)


@pytest.mark.parametrize("func", cases.UFUNCS, ids=lambda f: f.__name__)
def test_every_ufunc_and_dtype(func):
    cases.check_ufunc(func)


def test_sum_with_random_leaves_in_slabs():
    cases.check_sum_chunked()


def test_no_fma_contraction():
    cases.check_no_fma()


def test_integer_wrap_and_float32():
    cases.check_integer_wrap_and_float32()


def test_stencil_and_kernel_cache():
    cases.check_stencil_and_kernel_cache()


def test_in_place_stencil():
    cases.check_in_place_stencil()


def test_random_seeds_as_the_gpu_script_runs_them():
    for seed in range(3):
        cases.check_random(seed)


def test_empty_sub_box():
    cases.check_empty_sub_box()


def test_check(monkeypatch):
    cases.kd().check()
    import types

    from spmdarray.backend import backends as _backend

    monkeypatch.setattr(_backend, "_cupy_module", lambda: types.SimpleNamespace(__name__="nokernels"))
    with pytest.raises(ImportError, match="ElementwiseKernel"):
        cases.kd().check()


# ------------------------------------------------------------------ the emulation's strictness
fake_only = pytest.mark.skipif(os.environ.get("SPMDARRAY_CUPY_MODULE") != "fake_cupy", reason="fake_cupy only")


@fake_only
def test_fake_kernels_are_strict():
    x = cases.xp()
    with pytest.raises(ValueError, match="options"):
        x.ElementwiseKernel("float64 a", "float64 o", "o = a;", "k", options=("--use_fast_math",))
    with pytest.raises(ValueError, match="parameters"):
        x.ElementwiseKernel("T a", "T o", "o = a;", "k")
    with pytest.raises(ValueError, match="parameters"):
        x.ReductionKernel("float128 a", "float64 o", "a", "a + b", "o = a", "0", "k")
    k = x.ElementwiseKernel("float64 a", "float64 o", "o = a;", "k")
    with pytest.raises(TypeError):
        k(np.zeros(3), x.zeros(3))  # a host array
    with pytest.raises(TypeError):
        k(x.zeros(3, np.float32), x.zeros(3))  # another dtype


@fake_only
def test_fake_kernels_index_and_broadcast():
    """``i`` is the C-order index of the output; broadcast inputs have zero strides."""
    x = cases.xp()
    k = x.ElementwiseKernel("int64 a, int64 s", "int64 o", "o = i * 100 + a + s;", "k")
    a = np.arange(4, dtype=np.int64)
    out = x.zeros((3, 4), np.int64)[:, ::-1]
    k(x.broadcast_to(x.asarray(a), (3, 4)), np.int64(7), out)
    assert (out.get() == np.arange(12).reshape(3, 4) * 100 + a + 7).all()
    r = x.ReductionKernel("int32 a", "uint64 res", "a", "a + b", "res = a", "0", "r")
    b = np.array([-1, 5, 7], np.int32)
    assert int(r(x.asarray(b))) == (int(b.astype(np.uint64).sum()) & (2**64 - 1))


@fake_only
def test_fake_kernels_contract_without_fmad_false():
    """As NVRTC, the emulation contracts ``a * b + c`` unless ``--fmad=false``: the no-FMA check is real on a CPU."""
    from fake_cupy import _cpu_has_fma

    if not _cpu_has_fma():
        pytest.skip("this CPU has no FMA instruction")
    x = cases.xp()
    args = [x.full(2, v) for v in (1 + 2.0**-30, 1 - 2.0**-30, -1.0)]
    spec = ("float64 a, float64 b, float64 c", "float64 o", "double t = a * b; o = t + c;", "k")
    fused = x.ElementwiseKernel(*spec)(*args)
    plain = x.ElementwiseKernel(*spec, options=("--fmad=false",))(*args)
    assert (fused.get() == -(2.0**-60)).all() and (plain.get() == 0.0).all()
