"""The GPU fused kernels (spmdarray._kernels_device) against NumPy run one step at a time.

Random programs (trees of the fusable ufuncs over mixed dtypes, scalars,
strided, negative-step and broadcast operands, random leaves) are evaluated
by the generated CuPy kernels on device blocks and compared bit for bit (NaN
payloads aside) with ``spmdarray._fusion._interpret`` on host copies of the
same data.  Runs under the emulated backend (``SPMDARRAY_BACKEND=cupy
SPMDARRAY_CUPY_MODULE=fake_cupy``: the generated source is compiled as C++
and run on the CPU) and on a real GPU; skipped otherwise.  Not collective:
every rank runs the same local checks.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdarray import _fusion

pytestmark = pytest.mark.skipif(
    os.environ.get("SPMDARRAY_BACKEND") != "cupy", reason="GPU kernels: run with SPMDARRAY_BACKEND=cupy"
)

DTYPES = [np.dtype(d) for d in ("bool", "uint8", "int32", "int64", "float32", "float64")]
UFUNCS = list(_fusion.FUSABLE)
VIEWS = ("c", "neg", "step", "bcast")


def xp():
    from spmdarray._backend import _cupy_module

    return _cupy_module()


def kd():
    from spmdarray import _kernels_device

    return _kernels_device


class Program:
    """The duck type the kernels read: ``leaves`` and ``steps``."""

    def __init__(self) -> None:
        self.leaves: list = []
        self.steps: list = []


def values(rng, shape, dt):
    """Data with the edge cases: extremes of integer types, nan, inf, -0.0, subnormals."""
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
        small = rng.integers(-3 if dt.kind == "i" else 0, 4, size=shape).astype(dt)
        return np.where(rng.random(shape) < 0.5, small, a)
    a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, size=shape)).astype(dt)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, np.finfo(dt).tiny / 4, np.finfo(dt).max], dt)
    pick = rng.random(shape) < 0.2
    return np.where(pick, special[rng.integers(0, len(special), size=shape)], a)


def operand(rng, shape, dt, view):
    """(host view, device view) of one array leaf with the same layout."""
    x = xp()
    if view == "neg":
        base = values(rng, shape, dt)
        key = tuple(slice(None, None, -1) for _ in shape)
        return base[key], x.asarray(base)[key]
    if view == "step":
        base = values(rng, (*shape[:-1], 2 * shape[-1] + 1), dt)
        key = (Ellipsis, slice(1, None, 2))
        return base[key], x.asarray(base)[key]
    if view == "bcast":
        small = tuple(1 if rng.random() < 0.5 else n for n in shape)
        base = values(rng, small, dt)
        return np.broadcast_to(base, shape), x.broadcast_to(x.asarray(base), shape)
    base = values(rng, shape, dt)
    return base, x.asarray(base)


def valid_loop(func, dts):
    """NumPy's loop for ``dts`` when the fuser would record it (as ``_fusion._loop`` decides), else None."""
    try:
        lp = func.resolve_dtypes((*dts, None))
    except Exception:  # noqa: BLE001
        return None
    ins = lp[: func.nin]
    ok = _fusion.FUSABLE[func]
    if any(d != ins[0] for d in ins) or any(d.kind not in ok or d.itemsize == 2 for d in ins):
        return None
    if lp[-1].kind not in "biuf" or lp[-1].itemsize == 2:
        return None
    return lp


@st.composite
def programs(draw, nd=None, random_leaves=True):
    """(program, root, host values, device values, block shape, seed)."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    nd = draw(st.integers(1, 3)) if nd is None else nd
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    prog = Program()
    host, dev, dts = [], [], []
    for j in range(draw(st.integers(1, 4))):
        kind = "a" if j == 0 else draw(st.sampled_from(("a", "a", "s", "r") if random_leaves else ("a", "a", "s")))
        if kind == "r":
            key = draw(st.integers(0, 2**64 - 1))
            prog.leaves.append(("r", key))
            host.append(("r", key))
            dev.append(("r", key))
            dts.append(np.dtype(np.float64))
            continue
        dt = draw(st.sampled_from(DTYPES))
        if kind == "s":
            v = values(rng, (), dt)[()]
            v = dt.type(v)
            prog.leaves.append(("s", v))
            host.append(v)
            dev.append(v)
        else:
            h, d = operand(rng, shape, dt, draw(st.sampled_from(VIEWS)))
            prog.leaves.append(("a", None))
            host.append(h)
            dev.append(d)
        dts.append(dt)
    refs = [("l", i) for i in range(len(prog.leaves))]
    types = {r: dt for r, dt in zip(refs, dts)}
    full = {r for r, lf in zip(refs, prog.leaves) if lf[0] != "s"}  # values of the block's shape
    for _ in range(draw(st.integers(1, 6))):
        func = draw(st.sampled_from(UFUNCS))
        ops = tuple(draw(st.sampled_from(refs)) for _ in range(func.nin))
        lp = valid_loop(func, [types[r] for r in ops])
        if lp is None:
            continue
        prog.steps.append((func, lp, ops))
        r = ("t", len(prog.steps) - 1)
        types[r] = lp[-1]
        refs.append(r)
        if any(o in full for o in ops):
            full.add(r)
    root = [r for r in refs if r in full][-1]
    return prog, root, host, dev, shape, types[root], rng


def same(got: np.ndarray, exp: np.ndarray) -> None:
    """Bit for bit (any NaN equals any NaN: CUDA's NaN bits differ from x86's)."""
    assert got.dtype == exp.dtype and got.shape == exp.shape, (got.dtype, got.shape, exp.dtype, exp.shape)
    if got.dtype.kind == "f":
        bits = np.dtype(f"u{got.dtype.itemsize}")
        eq = (got.view(bits) == exp.view(bits)) | (np.isnan(got) & np.isnan(exp))
    else:
        eq = got == exp
    if not eq.all():
        bad = np.argwhere(~eq)[:5]
        raise AssertionError(f"{(~eq).sum()} elements differ, e.g. at {bad.tolist()}: {got[~eq][:5]} != {exp[~eq][:5]}")


def box(draw_rng, shape):
    """A random non-empty sub-box of ``shape`` and a global placement (gshape, origin)."""
    sub = []
    for n in shape:
        lo = int(draw_rng.integers(0, n))
        hi = int(draw_rng.integers(lo + 1, n + 1))
        sub.append(slice(lo, hi))
    origin = tuple(int(draw_rng.integers(0, 4)) for _ in shape)
    gshape = tuple(o + n + int(draw_rng.integers(0, 3)) for o, n in zip(origin, shape))
    return tuple(sub), gshape, origin


def out_dtype_for(rng, dt):
    """The root dtype, or another one the root casts to without NaN/overflow trouble."""
    choices = [dt] + [d for d in DTYPES if d != dt and np.can_cast(dt, d, "safe")]
    return choices[int(rng.integers(0, len(choices)))]


def reference(prog, root, host, sub, gshape, origin, odt):
    with np.errstate(all="ignore"):
        return np.asarray(_fusion._interpret(prog, root, host, sub, gshape, origin, odt))


# ------------------------------------------------------------------ run
@settings(max_examples=30, deadline=None, database=None)
@given(programs())
def test_random_programs_full_block(case):
    prog, root, host, dev, shape, rdt, rng = case
    odt = out_dtype_for(rng, rdt)
    sub = tuple(slice(0, n) for n in shape)
    gshape = tuple(n + 2 for n in shape)
    origin = (1,) * len(shape)
    out = xp().zeros(shape, odt)
    kd().run(prog, root, dev, out, sub, gshape, origin)
    same(out.get(), reference(prog, root, host, sub, gshape, origin, odt))


@settings(max_examples=20, deadline=None, database=None)
@given(programs(), st.booleans())
def test_random_programs_sub_box(case, out_is_sub):
    prog, root, host, dev, shape, rdt, rng = case
    sub, gshape, origin = box(rng, shape)
    exp = reference(prog, root, host, sub, gshape, origin, rdt)
    if out_is_sub:
        out = xp().zeros(exp.shape, rdt)
        kd().run(prog, root, dev, out, sub, gshape, origin, out_is_sub=True)
        same(out.get(), exp)
    else:
        # the destination is a negative-step view of a larger array; outside ``sub`` it must not change
        big = values(rng, tuple(n + 1 for n in shape), rdt)
        dbig = xp().asarray(big)
        key = tuple(slice(n - 1, None, -1) for n in shape)
        kd().run(prog, root, dev, dbig[key], sub, gshape, origin)
        want = big.copy()
        want[key][sub] = exp
        same(dbig.get(), want)


@pytest.mark.parametrize("func", UFUNCS, ids=lambda f: f.__name__)
def test_every_ufunc_and_dtype(func):
    """Each fusable ufunc once per operand dtype (its NumPy loop), on edge values and mixed layouts."""
    rng = np.random.default_rng(UFUNCS.index(func))
    shape = (3, 17)
    tested = 0
    for dt in DTYPES:
        lp = valid_loop(func, [dt] * func.nin)
        if lp is None:
            continue
        host, dev = zip(*(operand(rng, shape, dt, v) for v in ("neg", "step")[: func.nin]))
        prog = Program()
        prog.leaves = [("a", None)] * func.nin
        prog.steps = [(func, lp, tuple(("l", k) for k in range(func.nin)))]
        sub = (slice(0, 3), slice(0, 17))
        out = xp().empty(shape, lp[-1])
        kd().run(prog, ("t", 0), list(dev), out, sub, shape, (0, 0))
        same(out.get(), reference(prog, ("t", 0), list(host), sub, shape, (0, 0), lp[-1]))
        tested += 1
    assert tested


# ------------------------------------------------------------------ run_sum
@settings(max_examples=20, deadline=None, database=None)
@given(programs())
def test_random_programs_sum(case):
    prog, root, host, dev, shape, rdt, rng = case
    if rdt.kind == "f":  # sum a comparison of the float value
        prog.leaves.append(("s", rdt.type(0.5)))
        host.append(rdt.type(0.5))
        dev.append(rdt.type(0.5))
        prog.steps.append((np.greater, (rdt, rdt, np.dtype(bool)), (root, ("l", len(prog.leaves) - 1))))
        root, rdt = ("t", len(prog.steps) - 1), np.dtype(bool)
    res_dtype = np.sum(np.zeros(1, rdt)).dtype
    sub, gshape, origin = box(rng, shape)
    exp = reference(prog, root, host, sub, gshape, origin, rdt).sum()
    got = kd().run_sum(prog, root, dev, sub, gshape, origin, res_dtype)
    assert type(got) is type(exp) and got == exp, (got, exp)


def test_sum_random_leaf_large():
    """The chunked path of sums with random leaves (a reduction kernel has no element index)."""
    prog = Program()
    prog.leaves = [("r", 12345), ("s", np.float64(0.25))]
    prog.steps = [(np.less, (np.dtype("d"),) * 2 + (np.dtype(bool),), (("l", 0), ("l", 1)))]
    vals = [("r", 12345), np.float64(0.25)]
    sub = (slice(3, 30), slice(2, 11))
    exp = reference(prog, ("t", 0), vals, sub, (40, 11), (3, 0), np.dtype(bool)).sum()
    got = kd()._sum_chunked(prog, ("t", 0), vals, sub, (40, 11), (3, 0), np.dtype(np.int64), chunk=20)
    assert got == exp and got.dtype == exp.dtype


# ------------------------------------------------------------------ exactness cases
def program(leaves, steps):
    p = Program()
    p.leaves = [("a", None) if isinstance(v, np.ndarray) else ("s", v) for v in leaves]
    p.steps = steps
    return p


def run_both(prog, root, host, odt):
    shape = next(v.shape for v in host if isinstance(v, np.ndarray))
    dev = [xp().asarray(v) if isinstance(v, np.ndarray) else v for v in host]
    sub = tuple(slice(0, n) for n in shape)
    out = xp().empty(shape, odt)
    kd().run(prog, root, dev, out, sub, shape, (0,) * len(shape))
    got = out.get()
    same(got, reference(prog, root, host, sub, shape, (0,) * len(shape), odt))
    return got


def test_no_fma_contraction():
    """``a * b + c`` rounds twice (a fused multiply-add would give -2**-60 here, not 0)."""
    d = np.dtype("d")
    a = np.full(4, 1 + 2.0**-30)
    b = np.full(4, 1 - 2.0**-30)
    c = np.full(4, -1.0)
    prog = program(
        [a, b, c], [(np.multiply, (d, d, d), (("l", 0), ("l", 1))), (np.add, (d, d, d), (("t", 0), ("l", 2)))]
    )
    got = run_both(prog, ("t", 1), [a, b, c], d)
    assert (got == 0.0).all()


def test_integer_wrap_and_float32():
    i4, f4 = np.dtype("i4"), np.dtype("f4")
    a = np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min, 46341, -7], np.int32)
    f = np.array([2.0, 1e-45, 3.4e38, -0.0], np.float32)
    prog = program(
        [a, f],
        [
            (np.multiply, (i4, i4, i4), (("l", 0), ("l", 0))),
            (np.add, (i4, i4, i4), (("t", 0), ("l", 0))),
            (np.negative, (i4, i4), (("t", 1),)),
            (np.sqrt, (f4, f4), (("l", 1),)),
            (np.absolute, (f4, f4), (("t", 3),)),
            (np.multiply, (f4, f4, f4), (("t", 4), ("l", 1))),
        ],
    )
    run_both(prog, ("t", 2), [a, f], i4)
    run_both(prog, ("t", 5), [a, f], f4)


def test_stencil_and_kernel_cache():
    """The stencil program; a second scalar value reuses the kernel (scalars are parameters)."""
    d = np.dtype("d")
    rng = np.random.default_rng(0)
    g = rng.standard_normal((9, 10))
    parts = [g[1:-1, 1:-1], g[:-2, 1:-1], g[2:, 1:-1], g[1:-1, 2:], g[1:-1, :-2]]
    steps = [(np.add, (d, d, d), (("l", 0), ("l", 1)))]
    steps += [(np.add, (d, d, d), (("t", k - 2), ("l", k))) for k in range(2, 5)]
    steps.append((np.multiply, (d, d, d), (("t", 3), ("l", 5))))
    run_both(program([*parts, np.float64(0.2)], steps), ("t", 4), [*parts, np.float64(0.2)], d)
    n = kd().compile_stats()["compiled"]
    run_both(program([*parts, np.float64(0.3)], steps), ("t", 4), [*parts, np.float64(0.3)], d)
    assert kd().compile_stats()["compiled"] == n
    sig = kd()._signature(program([*parts, np.float64(0.2)], steps), ("t", 4), [*parts, 0.2], d, 2)
    src = kd().source(sig, "store")
    assert "0.2" not in src["preamble"] and "s5" in src["in_params"]


def test_check():
    kd().check()


# ------------------------------------------------------------------ the emulation's strictness
fake_only = pytest.mark.skipif(os.environ.get("SPMDARRAY_CUPY_MODULE") != "fake_cupy", reason="fake_cupy only")


@fake_only
def test_fake_kernels_are_strict():
    x = xp()
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
    x = xp()
    k = x.ElementwiseKernel("int64 a, int64 s", "int64 o", "o = i * 100 + a + s;", "k")
    a = np.arange(4, dtype=np.int64)
    out = x.zeros((3, 4), np.int64)[:, ::-1]
    k(x.broadcast_to(x.asarray(a), (3, 4)), np.int64(7), out)
    assert (out.get() == np.arange(12).reshape(3, 4) * 100 + a + 7).all()
    r = x.ReductionKernel("int32 a", "uint64 res", "a", "a + b", "res = a", "0", "r")
    b = np.array([-1, 5, 7], np.int32)
    assert int(r(x.asarray(b))) == (int(b.astype(np.uint64).sum()) & (2**64 - 1))
