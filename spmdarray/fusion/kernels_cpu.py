"""Fused elementwise kernels, generated as Python source and compiled by numba.

Not collective: everything here works on this rank's local blocks.

A program (:class:`spmdarray.fusion.run.Program`) becomes one loop nest over a
sub-box of the block that loads each operand once per element, runs the
recorded ufuncs in NumPy's order on scalars of the loop dtypes NumPy chose,
and stores the result (or adds it to an accumulator, for fused sums).

Exactness: each step casts its operands to the loop dtypes NumPy resolved
(:meth:`numpy.ufunc.resolve_dtypes`) and rounds its result to the loop's
output dtype, so integer arithmetic wraps as NumPy's does and every floating
point operation is one IEEE operation in the same order.  Kernels are
compiled without ``fastmath`` (LLVM neither contracts multiply-adds nor
reassociates) and with ``error_model="numpy"`` (division by zero gives inf or
nan, as in NumPy; floating-point warnings are not raised).

Operands are passed as flat 1-D views of their allocation plus an element
offset and element strides; a unit or zero innermost stride is compiled in,
so the innermost loop over contiguous rows vectorises.

Random leaves call the scalar SplitMix64 of
:data:`spmdarray.fusion.splitmix.NUMBA_U01`, spliced into the kernel source
(the same bits as :func:`spmdarray.fusion.splitmix.bits` and ``unit``).

Cache: kernels are kept per process in a dictionary keyed by the program's
shape (operations, loop dtypes, leaf kinds and dtypes, number of axes,
innermost stride classes).  The generated source is written to
``$SPMDARRAY_FUSE_CACHE`` (default ``$NUMBA_CACHE_DIR/spmdarray-fusion`` when
numba's cache folder is set, else ``~/.cache/spmdarray/fusion``) and compiled
with ``cache=True``, so a later process loads the machine code from numba's
on-disk cache instead of compiling again.  Many processes share the folder
(every rank of a node, every node of a shared home): the source is written
under a name unique to the host and process and renamed into place, and a
kernel's first compilation and its first load hold an exclusive lock on the
kernel's lock file, so one process compiles while the others wait for it and
then load its machine code.  The lock involves no MPI call: a kernel is
compiled by whichever ranks reach it, never waiting for ranks that do not.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import socket
import sys
import tempfile
import weakref

import numpy as np

from spmdarray.fusion import splitmix
from spmdarray.settings import config

try:
    import fcntl
except ImportError:  # not POSIX: kernels are compiled without the lock
    fcntl = None

__all__ = ["check", "run", "run_sum", "compile_stats"]

#: Scalar templates per ufunc name (``b``: for bool loops).
_TEMPLATES = {
    "add": ("{0} + {1}", "{0} | {1}"),
    "subtract": ("{0} - {1}", None),
    "multiply": ("{0} * {1}", "{0} & {1}"),
    "divide": ("{0} / {1}", None),
    "negative": ("-{0}", None),
    "positive": ("{0}", None),
    "absolute": ("abs({0})", None),
    "square": ("{0} * {0}", None),
    "sqrt": ("np.sqrt({0})", None),
    "less": ("{0} < {1}", "{0} < {1}"),
    "less_equal": ("{0} <= {1}", "{0} <= {1}"),
    "greater": ("{0} > {1}", "{0} > {1}"),
    "greater_equal": ("{0} >= {1}", "{0} >= {1}"),
    "equal": ("{0} == {1}", "{0} == {1}"),
    "not_equal": ("{0} != {1}", "{0} != {1}"),
    "logical_and": ("({0} != 0) & ({1} != 0)", "{0} & {1}"),
    "logical_or": ("({0} != 0) | ({1} != 0)", "{0} | {1}"),
    "logical_xor": ("({0} != 0) != ({1} != 0)", "{0} != {1}"),
    "logical_not": ("{0} == 0", "not {0}"),
    "bitwise_and": ("{0} & {1}", "{0} & {1}"),
    "bitwise_or": ("{0} | {1}", "{0} | {1}"),
    "bitwise_xor": ("{0} ^ {1}", "{0} ^ {1}"),
    "maximum": ("max({0}, {1})", "{0} | {1}"),
    "minimum": ("min({0}, {1})", "{0} & {1}"),
}

_NAMES = {
    "?": "np.bool_",
    "b": "np.int8",
    "h": "np.int16",
    "i": "np.int32",
    "l": "np.int64",
    "q": "np.int64",
    "B": "np.uint8",
    "H": "np.uint16",
    "I": "np.uint32",
    "L": "np.uint64",
    "Q": "np.uint64",
    "f": "np.float32",
    "d": "np.float64",
}

_CACHE: dict = {}
_STATS = {"compiled": 0, "compile_s": 0.0, "calls": 0}


def check() -> None:
    """Raise ImportError when numba is unavailable.  Not collective."""
    import numba  # noqa: F401

    _freeze()


def _freeze() -> None:
    """Move every object alive now out of the cyclic garbage collector's reach.

    numba and LLVM leave hundreds of thousands of long-lived objects (after
    the import and after each compile); every full collection would walk all
    of them again, a 100 ms pause every few hundred kernel calls.  Frozen
    objects are still freed by reference counting.  Not collective.
    """
    import gc

    gc.freeze()


def compile_stats() -> dict:
    """Kernels compiled (or loaded from disk) in this process, the seconds it took, and calls."""
    return dict(_STATS)


def _cache_dir() -> str:
    from numba.core import config as numba_config  # numba's reading of NUMBA_CACHE_DIR ("" when unset)

    numba_dir = numba_config.CACHE_DIR
    default = (
        os.path.join(numba_dir, "spmdarray-fusion")
        if numba_dir
        else os.path.join(os.path.expanduser("~"), ".cache", "spmdarray", "fusion")
    )
    d = config.fuse_cache or default
    try:
        os.makedirs(d, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    d = os.path.join(tempfile.gettempdir(), f"spmdarray-fusion-{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    return d


_FLAT: dict = {}  # id -> (weak refs to the array and its allocation, offset, strides): cached storage views


def _flat(a: np.ndarray):
    """(1-D view of ``a``'s allocation, element offset of ``a[0, ...]``, element strides, copied).

    ``copied`` is True when ``a``'s allocation is not a contiguous array (then
    the view is of a contiguous copy of ``a``).  Results for arrays seen again
    (the cached views of storage) are remembered, weakly.
    """
    e = _FLAT.get(id(a))
    if e is not None and e[0]() is a:
        root = e[1]()
        if root is not None:
            return root.reshape(-1), e[2], e[3], False
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    copied = False
    item = a.itemsize
    if not root.flags.c_contiguous or root.dtype != a.dtype or any(s % item for s in a.strides):
        root = a = np.ascontiguousarray(a)
        copied = True
    off = (a.ctypes.data - root.ctypes.data) // item if a.size else 0
    st = tuple(s // item for s in a.strides)
    if not copied:
        if len(_FLAT) > 1024:
            _FLAT.clear()
        _FLAT[id(a)] = (weakref.ref(a), weakref.ref(root), off, st)  # (weak: never keeps memory alive)
    return root.reshape(-1), off, st, copied


def _sub_flat(a: np.ndarray, sub):
    """:func:`_flat` of ``a[sub]`` (``sub``: slices with step 1, or None for all of ``a``).

    The offset of the sub-box is computed from ``a``'s (cached) offset and
    strides, without a new view: kernel calls on sub-boxes (interior, strips,
    row chunks) cost no pointer arithmetic through ``ctypes``.
    """
    flat, off, st, copied = _flat(a)
    if copied and sub is not None:
        flat, off, st, _ = _flat(a[sub])
        return flat, off, st
    if sub is not None:
        off += sum(x.start * k for x, k in zip(sub, st))
    return flat, off, st


def _cls(s: int) -> str:
    return "1" if s == 1 else "0" if s == 0 else "s"


def _tname(dt: np.dtype) -> str:
    return _NAMES[dt.char]


def _cast(expr: str, src: np.dtype, dst: np.dtype) -> str:
    if src == dst:
        return expr
    if dst.kind == "b":
        return f"({expr} != 0)"
    return f"{_tname(dst)}({expr})"


def _source(sig, nd: int, mode: str) -> str:
    """Python source of the kernel for signature ``sig`` (see :func:`_signature`)."""
    leaves, steps, root, out_char, out_cls = sig
    params = [f"n{k}" for k in range(nd)]
    pre: list = []  # per leaf: pointer name per loop level
    loads = []
    for i, leaf in enumerate(leaves):
        kind = leaf[0]
        if kind == "a":
            _, ch, c = leaf
            params += [f"A{i}", f"o{i}", *(f"s{i}_{k}" for k in range(nd))]
            pre.append(("a", i, c))
        elif kind == "s":
            params.append(f"S{i}")
            loads.append(f"v{i} = S{i}")
            pre.append(("s", i, None))
        else:
            params += [f"K{i}", f"o{i}", *(f"s{i}_{k}" for k in range(nd))]
            pre.append(("r", i, None))
    if mode in ("store", "lag"):
        params += ["O", "oo", *(f"os_{k}" for k in range(nd))]
    if mode == "lag":
        params += ["R", "L"]
    lines = ["def kernel(" + ", ".join(params) + "):"]
    if mode == "sum":
        lines.append(f"    acc = {_tname(np.dtype(out_char))}(0)")
    ind = "    "
    # pointer names: p{i}_{k} after k outer loops
    for k in range(nd):
        lines.append(f"{ind}for i{k} in range(n{k}):")
        ind += "    "
        if k < nd - 1:
            for kind, i, _ in pre:
                if kind != "s":
                    prev = f"o{i}" if k == 0 else f"p{i}_{k - 1}"
                    lines.append(f"{ind}p{i}_{k} = {prev} + i{k} * s{i}_{k}")
            if mode == "store":
                prev = "oo" if k == 0 else f"q_{k - 1}"
                lines.append(f"{ind}q_{k} = {prev} + i{k} * os_{k}")
            elif mode == "lag":
                lines.append(f"{ind}slot = (i0 % (L + 1)) * n1")
        elif mode == "lag" and nd == 1:
            lines.append(f"{ind}slot = i0 % (L + 1)")

    def at(base: str, k: int, cls: str, s: str) -> str:
        # pointer of the innermost element
        if nd == 0:
            return base
        if cls == "1":
            return f"{base} + i{k}"
        if cls == "0":
            return base
        return f"{base} + i{k} * {s}"

    last = nd - 1
    body = []
    for kind, i, c in pre:
        base = f"o{i}" if nd <= 1 else f"p{i}_{last - 1}"
        if kind == "a":
            body.append(f"v{i} = A{i}[np.uint64({at(base, last, c, f's{i}_{last}')})]")
        elif kind == "r":
            body.append(f"v{i} = {splitmix.NUMBA_U01_NAME}(K{i}, {at(base, last, 's', f's{i}_{last}')})")
    body += loads
    dts = {}
    for i, leaf in enumerate(leaves):
        dts[("l", i)] = np.dtype(leaf[1]) if leaf[0] != "r" else np.dtype(np.float64)
    for j, (name, loop, refs) in enumerate(steps):
        loop = [np.dtype(c) for c in loop]
        ops = []
        for r, ldt in zip(refs, loop):
            nm = f"v{r[1]}" if r[0] == "l" else f"t{r[1]}"
            ops.append(_cast(nm, dts[r], ldt))
        tmpl = _TEMPLATES[name][1 if loop[0].kind == "b" else 0]
        expr = tmpl.format(*ops)
        odt = loop[-1]
        if odt.kind != "b":
            expr = f"{_tname(odt)}({expr})"
        body.append(f"t{j} = {expr}")
        dts[("t", j)] = odt
    rname = f"v{root[1]}" if root[0] == "l" else f"t{root[1]}"
    odt = np.dtype(out_char)
    val = _cast(rname, dts[tuple(root)], odt)
    if mode == "store":
        qbase = "oo" if nd <= 1 else f"q_{last - 1}"
        body.append(f"O[np.uint64({at(qbase, last, out_cls, f'os_{last}')})] = {val}")
    elif mode == "lag":
        body.append(f"R[np.uint64(slot + i1)] = {val}" if nd == 2 else f"R[np.uint64(slot)] = {val}")
    else:
        body.append(f"acc += {val}")
    lines += [ind + b for b in body]
    if mode == "lag":
        # Row i0 - L is written back once no later row reads its old values.
        # unsigned indices: numba then skips negative-index wrapping (and vectorises)
        dst = "q + j * os_1" if out_cls == "s" else "q + j"
        put = f"O[np.uint64({dst})] = R[np.uint64(rs + j)]"
        if nd == 1:
            lines += [
                "        if i0 >= L:",
                "            O[oo + (i0 - L) * os_0] = R[(i0 - L) % (L + 1)]",
                "    for r in range(max(0, n0 - L), n0):",
                "        O[oo + r * os_0] = R[r % (L + 1)]",
            ]
        else:
            lines += [
                "        if i0 >= L:",
                "            rs = ((i0 - L) % (L + 1)) * n1",
                "            q = oo + (i0 - L) * os_0",
                "            for j in range(n1):",
                f"                {put}",
                "    for r in range(max(0, n0 - L), n0):",
                "        rs = (r % (L + 1)) * n1",
                "        q = oo + r * os_0",
                "        for j in range(n1):",
                f"            {put}",
            ]
    if mode == "sum":
        lines.append("    return acc")
    head = "import numpy as np\nfrom numba import njit\n\n\n"
    if any(leaf[0] == "r" for leaf in leaves):
        # SplitMix64 (spmdarray.fusion.splitmix), inlined into the kernel
        head += "@njit(cache=True, nogil=True, inline='always')\n" + splitmix.NUMBA_U01 + "\n\n"
    head += "@njit(cache=True, nogil=True, error_model='numpy', boundscheck=False)\n"
    return head + "\n".join(lines) + "\n"


def _load(sig, nd: int, mode: str):
    key = (sig, nd, mode)
    k = _CACHE.get(key)
    if k is not None:
        return k
    import time

    t0 = time.perf_counter()
    src = _source(sig, nd, mode)
    name = "spmdk_" + hashlib.sha1(src.encode()).hexdigest()[:20]
    path = os.path.join(_cache_dir(), name + ".py")
    with _locked(path):
        if not os.path.exists(path):
            # Unique per host and process: ranks of several nodes may share the folder.
            tmp = f"{path}.{socket.gethostname()}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                f.write(src)
            os.replace(tmp, path)  # atomic: a reader sees no file or the whole file
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # numba's cache finds the module by name
    spec.loader.exec_module(mod)
    k = _CACHE[key] = [mod.kernel, False, path]
    _STATS["compiled"] += 1
    _STATS["compile_s"] += time.perf_counter() - t0
    return k


@contextlib.contextmanager
def _locked(path: str):
    """An exclusive lock on ``path + ".lock"`` (``flock``) while the block runs.  Not collective.

    Where the file system refuses locks, the block runs unlocked: the files
    are written atomically either way, and the worst case is that several
    processes compile the same kernel.
    """
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def _args(prog, root, vals, sub, gshape, origin):
    """(signature leaves, steps, kernel arguments) for the sub-box ``sub``."""
    nd = len(sub)
    args: list = [s.stop - s.start for s in sub]
    full = all(s.start == 0 for s in sub) and all(s.stop == n for s, n in zip(sub, vals_shape(vals, nd)))
    leaves = []
    cstr = [1] * nd
    for k in range(nd - 2, -1, -1):
        cstr[k] = cstr[k + 1] * gshape[k + 1]
    for leaf, v in zip(prog.leaves, vals):
        kind = leaf[0]
        if kind == "a":
            flat, off, st = _sub_flat(v, None if full else sub)
            args += [flat, off, *st]
            leaves.append(("a", v.dtype.char, _cls(st[-1]) if nd else "0"))
        elif kind == "s":
            args.append(v)
            leaves.append(("s", v.dtype.char))
        else:
            args.append(np.uint64(splitmix.base(v[1])))
            args.append(sum((origin[k] + sub[k].start) * cstr[k] for k in range(nd)))
            args += cstr
            leaves.append(("r", "d"))
    steps = tuple((f.__name__, "".join(d.char for d in loop), refs) for f, loop, refs in prog.steps)
    return tuple(leaves), steps, args


def vals_shape(vals, nd: int):
    """Block shape of the first array operand (every array operand has it)."""
    for v in vals:
        if isinstance(v, np.ndarray):
            return v.shape
    return (-1,) * nd


def run(prog, root, vals, out, sub, gshape, origin, out_is_sub: bool = False) -> None:
    """Evaluate ``prog`` over the block sub-box ``sub`` into ``out[sub]`` (or ``out``)."""
    leaves, steps, args = _args(prog, root, vals, sub, gshape, origin)
    whole = out_is_sub or out.shape == tuple(x.stop - x.start for x in sub)
    flat, off, st, copied = _flat(out)
    if copied:  # not a view of an allocation (never for spmdarray storage): through a buffer
        o = out if whole else out[sub]
        tmp = np.empty(o.shape, o.dtype)
        run(prog, root, vals, tmp, sub, gshape, origin, out_is_sub=True)
        o[...] = tmp
        return
    if not whole:
        off += sum(x.start * k for x, k in zip(sub, st))
    args += [flat, off, *st]
    sig = (leaves, steps, tuple(root), out.dtype.char, _cls(st[-1]) if out.ndim else "0")
    _call(_load(sig, len(sub), "store"), args)


def run_lag(prog, root, vals, out, sub, gshape, origin, lag: int) -> None:
    """Evaluate into ``out[sub]`` (1 or 2 axes) while operands read ``out``'s memory.

    Each row (element, for one axis) is computed into a ring of ``lag + 1``
    rows and written back ``lag`` rows later, once no row still to be computed
    reads its old values (see ``spmdarray.fusion.run._lag``).
    """
    leaves, steps, args = _args(prog, root, vals, sub, gshape, origin)
    flat, off, st, copied = _flat(out)
    if copied:
        raise ValueError("lagged evaluation needs an output inside an allocation")
    off += sum(x.start * k for x, k in zip(sub, st))
    row = sub[1].stop - sub[1].start if len(sub) == 2 else 1
    ring = np.empty((lag + 1) * row, out.dtype)
    args += [flat, off, *st, ring, lag]
    sig = (leaves, steps, tuple(root), out.dtype.char, _cls(st[-1]))
    _call(_load(sig, len(sub), "lag"), args)


def run_sum(prog, root, vals, sub, gshape, origin, res_dtype):
    """Sum of ``prog``'s values over the sub-box ``sub``, in ``res_dtype`` (wrapping integers)."""
    leaves, steps, args = _args(prog, root, vals, sub, gshape, origin)
    sig = (leaves, steps, tuple(root), res_dtype.char, "0")
    return res_dtype.type(_call(_load(sig, len(sub), "sum"), args))


def _call(k, args):
    _STATS["calls"] += 1
    if k[1]:
        return k[0](*args)
    import time

    t0 = time.perf_counter()
    with _locked(k[2]):  # one process compiles; the others wait, then load its machine code
        r = k[0](*args)  # compiles (or loads from numba's disk cache) for these types
    _STATS["compile_s"] += time.perf_counter() - t0
    k[1] = True
    _freeze()
    return r
