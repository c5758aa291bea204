"""Cases for the GPU fused kernels (spmdarray.fusion.kernels_cuda), shared by
tests/test_fusion_device.py (hypothesis) and scaling/device_fusion_check.py
(a real GPU, without pytest).

Each ``check_*`` evaluates programs with the generated CuPy kernels on device
blocks and compares bit for bit (NaN payloads aside) with
``spmdarray.fusion.run._interpret`` run on host copies of the same data.  A
program's random choices come from a ``pick`` object (:class:`RngPick` or the
test's hypothesis adapter).  Not collective.
"""

from __future__ import annotations

import numpy as np

from spmdarray.fusion import record as _fusion
from spmdarray.fusion import run as _fusion_run

DTYPES = [np.dtype(d) for d in ("bool", "uint8", "int32", "int64", "float32", "float64")]
UFUNCS = list(_fusion.FUSABLE)
VIEWS = ("c", "neg", "step", "bcast")


def xp():
    from spmdarray.backend.backends import _cupy_module

    return _cupy_module()


def kd():
    from spmdarray.fusion import kernels_cuda as _kernels_device

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


class RngPick:
    """Random choices from a NumPy generator (the script's; tests draw with hypothesis)."""

    def __init__(self, rng) -> None:
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi, endpoint=True, dtype=np.uint64 if hi >= 2**63 else np.int64))

    def choice(self, seq):
        return seq[int(self.rng.integers(0, len(seq)))]


def random_program(pick, random_leaves: bool = True):
    """(program, root, host values, device values, block shape, root dtype, rng) drawn with ``pick``."""
    rng = np.random.default_rng(pick.int(0, 2**31 - 1))
    nd = pick.int(1, 3)
    shape = tuple(pick.int(1, 5) for _ in range(nd))
    prog = Program()
    host, dev, dts = [], [], []
    for j in range(pick.int(1, 4)):
        kind = "a" if j == 0 else pick.choice(("a", "a", "s", "r") if random_leaves else ("a", "a", "s"))
        if kind == "r":
            key = pick.int(0, 2**64 - 1)
            prog.leaves.append(("r", key))
            host.append(("r", key))
            dev.append(("r", key))
            dts.append(np.dtype(np.float64))
            continue
        dt = pick.choice(DTYPES)
        if kind == "s":
            v = dt.type(values(rng, (), dt)[()])
            prog.leaves.append(("s", v))
            host.append(v)
            dev.append(v)
        else:
            h, d = operand(rng, shape, dt, pick.choice(VIEWS))
            prog.leaves.append(("a", None))
            host.append(h)
            dev.append(d)
        dts.append(dt)
    refs = [("l", i) for i in range(len(prog.leaves))]
    types = {r: dt for r, dt in zip(refs, dts)}
    full = {r for r, lf in zip(refs, prog.leaves) if lf[0] != "s"}  # values of the block's shape
    for _ in range(pick.int(1, 6)):
        func = pick.choice(UFUNCS)
        ops = tuple(pick.choice(refs) for _ in range(func.nin))
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
        return np.asarray(_fusion_run._interpret(prog, root, host, sub, gshape, origin, odt))


# ------------------------------------------------------------------ checks
def check_full_block(case) -> None:
    """A random program over the whole block, into an output of the root dtype or a safe cast of it."""
    prog, root, host, dev, shape, rdt, rng = case
    odt = out_dtype_for(rng, rdt)
    sub = tuple(slice(0, n) for n in shape)
    gshape = tuple(n + 2 for n in shape)
    origin = (1,) * len(shape)
    out = xp().zeros(shape, odt)
    kd().run(prog, root, dev, out, sub, gshape, origin)
    same(out.get(), reference(prog, root, host, sub, gshape, origin, odt))


def check_sub_box(case, out_is_sub: bool) -> None:
    """A random program over a sub-box: into a sub-box buffer, or into a negative-step view of a block."""
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


def check_ufunc(func) -> None:
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
def check_sum(case) -> None:
    """``run_sum`` of a random bool/integer program (a float root is compared with 0.5) against NumPy's sum."""
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


def check_sum_chunked() -> None:
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


def check_no_fma() -> None:
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


def check_integer_wrap_and_float32() -> None:
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
    # no signed overflow in the source (undefined in C++), float32 math in float32, no contraction
    fn = kd().source(kd()._signature(prog, ("t", 5), [a, f], f4, 1), "store")["preamble"]
    assert "(int)((unsigned int)v0 * (unsigned int)v0)" in fn and "sqrtf(v1)" in fn and "fabsf(t3)" in fn, fn
    assert "--fmad=false" in kd().OPTIONS


def check_stencil_and_kernel_cache() -> None:
    """The stencil program; a second scalar value reuses the kernel (scalars are parameters)."""
    d = np.dtype("d")
    rng = np.random.default_rng(0)
    g = rng.standard_normal((9, 10))
    parts = views(g)
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


def views(a):
    """Centre, north, south, east and west views of a grid (the 5-point stencil's operands)."""
    return [a[1:-1, 1:-1], a[:-2, 1:-1], a[2:, 1:-1], a[1:-1, 2:], a[1:-1, :-2]]


def check_in_place_stencil() -> None:
    """``run_lag``: the centre of a grid written from shifted views of the same grid (old values read)."""
    d = np.dtype("d")
    g = np.random.default_rng(1).standard_normal((9, 10))
    dg = xp().asarray(g)
    steps = [(np.add, (d, d, d), (("l", 0), ("l", 1)))]
    steps += [(np.add, (d, d, d), (("t", k - 2), ("l", k))) for k in range(2, 5)]
    steps.append((np.multiply, (d, d, d), (("t", 3), ("l", 5))))
    prog = program([*views(g), np.float64(0.2)], steps)
    full = (slice(0, 7), slice(0, 8))
    exp = reference(prog, ("t", 4), [*views(g), np.float64(0.2)], full, (7, 8), (0, 0), d)
    kd().run_lag(prog, ("t", 4), [*views(dg), np.float64(0.2)], dg[1:-1, 1:-1], full, (7, 8), (0, 0), 1)
    want = g.copy()
    want[1:-1, 1:-1] = exp
    same(dg.get(), want)


def check_empty_sub_box() -> None:
    """An empty sub-box writes nothing; its sum is 0 in the result dtype."""
    i8 = np.dtype("i8")
    a = np.arange(12, dtype=i8).reshape(3, 4)
    prog = program([a, np.int64(3)], [(np.multiply, (i8, i8, i8), (("l", 0), ("l", 1)))])
    dev = [xp().asarray(a), np.int64(3)]
    out = xp().asarray(a)
    sub = (slice(1, 1), slice(0, 4))
    kd().run(prog, ("t", 0), dev, out, sub, (3, 4), (0, 0))
    same(out.get(), a)
    got = kd().run_sum(prog, ("t", 0), dev, sub, (3, 4), (0, 0), i8)
    assert got == 0 and type(got) is np.int64


def check_random(seed: int) -> None:
    """The random-program checks for one seed (full block, both sub-box kinds, sum)."""
    rng = np.random.default_rng(seed)
    check_full_block(random_program(RngPick(rng)))
    check_sub_box(random_program(RngPick(rng)), bool(seed % 2))
    check_sum(random_program(RngPick(rng)))
