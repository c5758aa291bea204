"""Fused elementwise kernels for the GPU backend, generated as CUDA C++ for CuPy.

Not collective: everything here works on this rank's local (device) blocks.

The interface is :mod:`spmdarray.fusion.kernels_cpu`'s: :func:`run` evaluates a
program (``prog.leaves``, ``prog.steps``; see :class:`spmdarray.fusion.run.Program`)
over a sub-box of the block into an output, :func:`run_lag` does so when the
operands read the output's memory (through a buffer), :func:`run_sum` sums a
bool or integer program.  Each program signature becomes one
``cupy.ElementwiseKernel`` (one ``cupy.ReductionKernel`` for sums): the
program is a ``__device__`` function in the kernel's preamble that takes the
operand elements, scalar parameters and random-stream keys, runs the
recorded ufuncs in NumPy's order on values of the loop dtypes NumPy chose,
and returns the value cast to the output dtype.

Exactness
---------
Each step casts its operands to its loop input dtypes and rounds its result
to the loop output dtype, as :mod:`spmdarray.fusion.kernels_cpu` does:

* integer ``add``/``subtract``/``multiply``/``negative``/``square`` are
  computed in the unsigned type of the same width (at least ``unsigned
  int``) and cast back, so they wrap as NumPy's do (signed overflow is
  undefined in C++);
* ``maximum``/``minimum`` (integers, bool), comparisons, logical and
  bitwise operations follow the bool templates of ``_kernels``;
* floating point ``+ - * /`` are single IEEE operations of the loop type
  (``float`` stays ``float``), ``sqrt``/``absolute`` are ``sqrtf``/``fabsf``
  or ``sqrt``/``fabs``;
* kernels are compiled with ``--fmad=false --ftz=false --prec-div=true
  --prec-sqrt=true``: NVRTC contracts ``a * b + c`` into one fused
  multiply-add by default, which rounds once where NumPy rounds twice;
  ``--fmad=false`` forbids it.  Division and square root are correctly
  rounded and subnormals are kept.

Random leaves are SplitMix64 of the element's global C-order flat index
(``spmdarray.fusion.splitmix.uniform_box``; the device function is
``spmdarray.fusion.splitmix.CUDA_U01``), computed in the kernel from the
ElementwiseKernel index ``i``: ``i`` is decomposed in C order over the
sub-box shape and combined with the global C strides and the flat index of
the sub-box's first element, all passed as ``int64`` parameters.

Scalars are kernel parameters of their dtype, so one kernel serves every
value.  Known differences from NumPy on a GPU: the bits of NaN results (CUDA
returns the canonical positive NaN where x86 gives a negative one; NaN-ness
is the same) and float-to-integer casts of NaN or out-of-range values in a
final cast to an integer output (undefined in C++; CUDA saturates).

Cache: kernels are kept per process in a dictionary keyed by the program's
signature (operations, loop dtypes, leaf kinds and dtypes, output dtype,
number of axes with random leaves).  CuPy itself caches the compiled
binary on disk (``~/.cupy/kernel_cache``), keyed by the source.
"""

from __future__ import annotations

import hashlib

import numpy as np

from spmdarray.backend import backends as _backends
from spmdarray.fusion import splitmix

__all__ = ["check", "run", "run_lag", "run_sum", "compile_stats", "source"]

#: NVRTC options: no multiply-add contraction, IEEE division/sqrt, no flush to zero.
OPTIONS = ("--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")

#: C++ type of each dtype (CuPy's names for them).
_CTYPE = {
    "bool": "bool",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short",
    "uint16": "unsigned short",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long long",
    "uint64": "unsigned long long",
    "float32": "float",
    "float64": "double",
}

#: Templates per ufunc name: (bool loop, integer loop, float loop); None: no such loop.
#: ``{W}`` is the unsigned type integer arithmetic wraps in, ``{T}`` the loop type.
_WRAP2 = "({T})(({W}){0} {op} ({W}){1})"
_TEMPLATES = {
    "add": ("{0} || {1}", _WRAP2.replace("{op}", "+"), "{0} + {1}"),
    "subtract": (None, _WRAP2.replace("{op}", "-"), "{0} - {1}"),
    "multiply": ("{0} && {1}", _WRAP2.replace("{op}", "*"), "{0} * {1}"),
    "divide": (None, None, "{0} / {1}"),
    "negative": (None, "({T})(({W})0 - ({W}){0})", "-{0}"),
    "positive": (None, "{0}", "{0}"),
    "absolute": (None, None, "{ABS}({0})"),
    "square": (None, "({T})(({W}){0} * ({W}){0})", "{0} * {0}"),
    "sqrt": (None, None, "{SQRT}({0})"),
    "less": ("{0} < {1}",) * 3,
    "less_equal": ("{0} <= {1}",) * 3,
    "greater": ("{0} > {1}",) * 3,
    "greater_equal": ("{0} >= {1}",) * 3,
    "equal": ("{0} == {1}",) * 3,
    "not_equal": ("{0} != {1}",) * 3,
    "logical_and": ("{0} && {1}", "({0} != 0) && ({1} != 0)", "({0} != 0) && ({1} != 0)"),
    "logical_or": ("{0} || {1}", "({0} != 0) || ({1} != 0)", "({0} != 0) || ({1} != 0)"),
    "logical_xor": ("{0} != {1}", "({0} != 0) != ({1} != 0)", "({0} != 0) != ({1} != 0)"),
    "logical_not": ("!{0}", "{0} == 0", "{0} == 0"),
    "bitwise_and": ("{0} & {1}", "{0} & {1}", None),
    "bitwise_or": ("{0} | {1}", "{0} | {1}", None),
    "bitwise_xor": ("{0} ^ {1}", "{0} ^ {1}", None),
    "maximum": ("{0} || {1}", "({0} < {1} ? {1} : {0})", None),
    "minimum": ("{0} && {1}", "({1} < {0} ? {1} : {0})", None),
}

_CACHE: dict = {}
_STATS = {"compiled": 0, "calls": 0}


def _xp():
    return _backends._cupy_module()


def check() -> None:
    """Raise ImportError when the CuPy module has no ``ElementwiseKernel``.  Not collective."""
    try:
        cp = _xp()
    except Exception as e:  # noqa: BLE001 - any import failure
        raise ImportError(f"cupy does not import: {e}") from e
    if not hasattr(cp, "ElementwiseKernel") or not hasattr(cp, "ReductionKernel"):
        raise ImportError(f"{cp.__name__} has no ElementwiseKernel/ReductionKernel")


def compile_stats() -> dict:
    """Kernels built in this process and calls made.  Not collective."""
    return dict(_STATS)


def _ct(dt: np.dtype) -> str:
    return _CTYPE[np.dtype(dt).name]


def _cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    if src == dst:
        return expr
    if dst.kind == "b":
        return f"({expr} != 0)"
    return f"(({_ct(dst)}){expr})"


def _expr(name: str, loop, ops) -> str:
    dt = loop[0]
    k = 0 if dt.kind == "b" else 2 if dt.kind == "f" else 1
    tmpl = _TEMPLATES[name][k]
    if tmpl is None:
        raise NotImplementedError(f"fused device kernel: no {name} loop for {dt}")
    f32 = dt == np.float32
    return tmpl.format(
        *ops,
        T=_ct(dt),
        W="unsigned long long" if dt.itemsize == 8 else "unsigned int",
        ABS="fabsf" if f32 else "fabs",
        SQRT="sqrtf" if f32 else "sqrt",
    )


def _signature(prog, root, vals, out_dtype, nd: int):
    leaves = []
    for leaf, v in zip(prog.leaves, vals):
        if leaf[0] == "a":
            leaves.append(("a", v.dtype.name))
        elif leaf[0] == "s":
            leaves.append(("s", np.asarray(v).dtype.name))
        else:
            leaves.append(("r", "float64"))
    steps = tuple((f.__name__, tuple(np.dtype(d).name for d in loop), tuple(refs)) for f, loop, refs in prog.steps)
    rnd = any(lf[0] == "r" for lf in leaves)
    return tuple(leaves), steps, tuple(root), np.dtype(out_dtype).name, nd if rnd else -1


def _function(sig, rtype: str) -> tuple[str, list, list]:
    """(``__device__`` function source, kernel parameter declarations, call arguments)."""
    leaves, steps, root, out_name, _ = sig
    fparams, decls, args = [], [], []
    dts = {}
    for i, (kind, name) in enumerate(leaves):
        ct = _CTYPE[name]
        if kind == "a":
            fparams.append(f"{ct} v{i}")
            decls.append(f"{name} a{i}")
            args.append(f"a{i}")
        elif kind == "s":
            fparams.append(f"{ct} v{i}")
            decls.append(f"{name} s{i}")
            args.append(f"s{i}")
        else:
            fparams.append(f"unsigned long long k{i}")
            decls.append(f"uint64 k{i}")
            args.append(f"k{i}")
        dts[("l", i)] = np.dtype(name)
    if any(k == "r" for k, _ in leaves):
        fparams.append("unsigned long long flat")
        args.append("flat")
    body = []
    for i, (kind, _) in enumerate(leaves):
        if kind == "r":
            body.append(f"double v{i} = {splitmix.CUDA_U01_NAME}(k{i}, flat);")
    for j, (name, loop, refs) in enumerate(steps):
        loop = [np.dtype(d) for d in loop]
        ops = [_cast(f"{'v' if r[0] == 'l' else 't'}{r[1]}", dts[tuple(r)], ldt) for r, ldt in zip(refs, loop)]
        odt = loop[-1]
        body.append(f"{_ct(odt)} t{j} = ({_ct(odt)})({_expr(name, loop, ops)});")
        dts[("t", j)] = odt
    rname = f"{'v' if root[0] == 'l' else 't'}{root[1]}"
    val = _cast(rname, dts[tuple(root)], np.dtype(out_name))
    body.append(f"return ({rtype})({val});")
    src = (
        f"__device__ __forceinline__ {rtype} spmd_f({', '.join(fparams)}) {{\n"
        + "".join(f"    {b}\n" for b in body)
        + "}\n"
    )
    return src, decls, args


def source(sig, mode: str) -> dict:
    """The CuPy kernel arguments (in_params, out_params, operation/map_expr, preamble, name) of ``sig``."""
    leaves, _, _, out_name, nd = sig
    rnd = any(k == "r" for k, _ in leaves)
    if mode == "sum":
        fn, decls, args = _function(sig, "unsigned long long")
        pre = fn
    else:
        fn, decls, args = _function(sig, _CTYPE[out_name])
        pre = (splitmix.CUDA_U01 if rnd else "") + fn
    h = hashlib.sha1((pre + mode).encode()).hexdigest()[:16]
    if mode == "sum":
        return {
            "in_params": ", ".join(decls),
            "out_params": "uint64 res",
            "map_expr": f"spmd_f({', '.join(args)})",
            "preamble": pre,
            "name": f"spmd_sum_{h}",
        }
    lines = []
    if rnd:
        decls += ["int64 rb"] + [f"int64 rn{k}" for k in range(nd)] + [f"int64 rs{k}" for k in range(nd)]
        # global flat index of element i (C order over the sub-box)
        lines.append("long long ri = i;")
        lines.append("unsigned long long flat = (unsigned long long)rb;")
        for k in range(nd - 1, 0, -1):
            lines.append(f"flat += (unsigned long long)((ri % rn{k}) * rs{k}); ri /= rn{k};")
        if nd:
            lines.append("flat += (unsigned long long)(ri * rs0);")
    lines.append(f"out = spmd_f({', '.join(args)});")
    return {
        "in_params": ", ".join(decls),
        "out_params": f"{out_name} out",
        "operation": "\n".join(lines),
        "preamble": pre,
        "name": f"spmd_fused_{h}",
    }


def _kernel(sig, mode: str):
    key = (sig, mode)
    k = _CACHE.get(key)
    if k is not None:
        return k
    cp = _xp()
    s = source(sig, mode)
    if mode == "sum":
        k = cp.ReductionKernel(
            s["in_params"],
            s["out_params"],
            s["map_expr"],
            "a + b",
            "res = a",
            "0",
            s["name"],
            preamble=s["preamble"],
            options=OPTIONS,
        )
    else:
        k = cp.ElementwiseKernel(
            s["in_params"], s["out_params"], s["operation"], s["name"], preamble=s["preamble"], options=OPTIONS
        )
    _CACHE[key] = k
    _STATS["compiled"] += 1
    return k


def _inputs(prog, vals, sub, gshape, origin):
    """Kernel input arguments for the sub-box ``sub`` (without the random index parameters)."""
    nd = len(sub)
    cstr = [1] * nd
    for k in range(nd - 2, -1, -1):
        cstr[k] = cstr[k + 1] * gshape[k + 1]
    args = []
    for leaf, v in zip(prog.leaves, vals):
        if leaf[0] == "a":
            args.append(v[sub])
        elif leaf[0] == "s":
            args.append(v)
        else:
            args.append(np.uint64(splitmix.base(v[1])))
    rnd = [
        np.int64(sum((origin[k] + sub[k].start) * cstr[k] for k in range(nd))),
        *(np.int64(s.stop - s.start) for s in sub),
        *(np.int64(c) for c in cstr),
    ]
    return args, rnd


def run(prog, root, vals, out, sub, gshape, origin, out_is_sub: bool = False) -> None:
    """Evaluate ``prog`` over the block sub-box ``sub`` into ``out[sub]`` (or ``out``).  Not collective."""
    shape = tuple(s.stop - s.start for s in sub)
    o = out if out_is_sub or out.shape == shape else out[sub]
    if not all(shape):
        return
    sig = _signature(prog, root, vals, o.dtype, len(sub))
    args, rnd = _inputs(prog, vals, sub, gshape, origin)
    if sig[-1] >= 0:
        args += rnd
    _STATS["calls"] += 1
    _kernel(sig, "store")(*args, o)


def run_lag(prog, root, vals, out, sub, gshape, origin, lag: int) -> None:
    """Evaluate into ``out[sub]`` while operands read ``out``'s memory (Jacobi semantics).  Not collective.

    The CPU kernels write each row back ``lag`` rows late; GPU threads run in
    no order, so here the sub-box is computed into a buffer and copied back
    (``lag`` is accepted for the same interface and not used).
    """
    shape = tuple(s.stop - s.start for s in sub)
    tmp = _xp().empty(shape, out.dtype)
    run(prog, root, vals, tmp, sub, gshape, origin, out_is_sub=True)
    out[sub] = tmp


def run_sum(prog, root, vals, sub, gshape, origin, res_dtype):
    """Sum of ``prog``'s values over ``sub`` in ``res_dtype`` (integers wrap modulo 2**64).  Not collective."""
    res_dtype = np.dtype(res_dtype)
    shape = tuple(s.stop - s.start for s in sub)
    if not all(shape):
        return res_dtype.type(0)
    sig = _signature(prog, root, vals, res_dtype, len(sub))
    if sig[-1] >= 0 or not any(lf[0] == "a" for lf in prog.leaves):
        return _sum_chunked(prog, root, vals, sub, gshape, origin, res_dtype)
    args, _ = _inputs(prog, vals, sub, gshape, origin)
    _STATS["calls"] += 1
    total = int(_kernel(sig, "sum")(*args))
    return np.array(total, np.uint64).astype(res_dtype)[()]


def _sum_chunked(prog, root, vals, sub, gshape, origin, res_dtype, chunk: int = 1 << 24):
    """Sum for programs with random leaves: a reduction kernel has no element index,
    so slabs along axis 0 are evaluated into a buffer of ``res_dtype`` and summed."""
    cp = _xp()
    shape = tuple(s.stop - s.start for s in sub)
    row = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    step = max(1, chunk // max(row, 1)) if shape else 1
    total = 0
    if not shape:
        buf = cp.empty((), res_dtype)
        run(prog, root, vals, buf, sub, gshape, origin, out_is_sub=True)
        total = int(buf.astype(np.uint64).sum(dtype=np.uint64))
    else:
        s0 = sub[0]
        buf = cp.empty((min(step, shape[0]), *shape[1:]), res_dtype)
        for lo in range(s0.start, s0.stop, step):
            hi = min(lo + step, s0.stop)
            part = buf[: hi - lo]
            run(prog, root, vals, part, (slice(lo, hi), *sub[1:]), gshape, origin, out_is_sub=True)
            total += int(part.sum(dtype=np.uint64))
    return np.array(total & splitmix.MASK, np.uint64).astype(res_dtype)[()]
