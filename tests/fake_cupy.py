"""A CPU stand-in for CuPy, strict where CuPy is strict.

The test suite runs spmdarray's device code paths without a GPU by pointing
``SPMDARRAY_CUPY_MODULE`` at this module (with ``SPMDARRAY_BACKEND=cupy``).
Its arrays wrap NumPy arrays but behave like CuPy's where it matters for
catching host/device mix-ups:

* ``numpy.asarray(device_array)`` raises TypeError (no implicit transfer);
  ``.get()`` and ``asnumpy`` are the explicit ways to the host;
* NumPy ufuncs and functions on them dispatch through ``__array_ufunc__`` and
  ``__array_function__``; a NumPy array operand (not 0-d) raises TypeError,
  as CuPy does, and ufuncs take no ``where=``;
* pinned host memory, a memory pool, streams and devices exist with CuPy's
  names.

``FAKE_CUPY_DEVICES`` sets the device count (default 1; 0 for none);
``FAKE_CUPY_OOM_BYTES`` makes any single allocation of more bytes raise
``OutOfMemoryError``, on every rank or only on rank ``FAKE_CUPY_OOM_RANK``.
"""

from __future__ import annotations

import os
import types

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

_ALLOCATED = {"bytes": 0}
_MISSING_UFUNCS = {"spacing"}


class OutOfMemoryError(MemoryError):
    def __init__(self, size: int, total: int) -> None:
        super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes).")


def _check_alloc(nbytes: int) -> None:
    limit = os.environ.get("FAKE_CUPY_OOM_BYTES")
    if not limit or nbytes <= int(limit):
        return
    who = os.environ.get("FAKE_CUPY_OOM_RANK")
    if who is not None:
        rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
        if rank != int(who):
            return
    raise OutOfMemoryError(nbytes, _ALLOCATED["bytes"])


def _unwrap(x, strict: bool = True):
    if isinstance(x, ndarray):
        return x._a
    if strict and isinstance(x, np.ndarray) and x.ndim:
        raise TypeError(f"Unsupported type {type(x)}")
    if type(x) is list or type(x) is tuple:  # nested too, as numpy.block([[a]]) takes them
        return type(x)(_unwrap(v, strict) for v in x)
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return ndarray._of(x)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    if isinstance(x, list):
        return [_wrap(v) for v in x]
    if isinstance(x, np.generic):  # CuPy returns 0-d arrays, not scalars
        return ndarray._of(np.asarray(x))
    return x


class _Flags:
    def __init__(self, a: np.ndarray) -> None:
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.flags.owndata


class ndarray(NDArrayOperatorsMixin):  # noqa: N801 - CuPy's name
    """A 'device' array: a NumPy array that refuses implicit conversion."""

    __slots__ = ("_a", "_base", "__weakref__")

    def __init__(self, shape, dtype=float) -> None:
        self._a = np.empty(shape, dtype)
        self._base = None

    @classmethod
    def _of(cls, a: np.ndarray, base: ndarray | None = None) -> ndarray:
        self = object.__new__(cls)
        self._a = a
        self._base = base
        return self

    def _view(self, res):
        # As in CuPy, a view holds a reference to the array that owns the memory.
        if isinstance(res, np.ndarray) and res.base is not None and np.may_share_memory(res, self._a):
            return ndarray._of(res, self if self._base is None else self._base)
        return _wrap(res)

    # -- no implicit host conversion
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array "
            "explicitly."
        )

    @property
    def __cuda_array_interface__(self):
        return self._a.__array_interface__

    def __array_namespace__(self, api_version=None):
        import sys

        return sys.modules[__name__]

    def get(self, stream=None, order="C", out=None):
        if out is not None:
            if not isinstance(out, np.ndarray) or out.shape != self._a.shape or out.dtype != self._a.dtype:
                raise ValueError("Shape mismatch / dtype mismatch in get(out=)")
            out[...] = self._a
            return out
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        self._a[...] = arr

    # -- dispatch
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "where" in kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")  # CuPy ufuncs take no where=
        if method not in ("__call__", "reduce", "accumulate"):
            return NotImplemented
        if method == "accumulate" and ufunc not in (np.add, np.multiply):
            raise NotImplementedError(f"`cupy_{ufunc.__name__}.accumulate` is not supported yet")
        # CuPy 14's limits, mimicked so that the CPU runs cover the workarounds.
        if "signature" in kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        if ufunc.__name__ in _MISSING_UFUNCS:
            return NotImplemented
        if isinstance(kwargs.get("out"), tuple) and len(kwargs["out"]) > 1:
            raise ValueError("The 'out' parameter must have exactly one array value")
        if ufunc.__name__.startswith("logical_") and any(
            getattr(x, "dtype", None) is not None and x.dtype.kind == "c" for x in inputs
        ):
            raise TypeError(f"Wrong type of arguments for cupy_{ufunc.__name__}")
        if any(type(x) is int and not -(1 << 63) <= x < 1 << 63 for x in inputs):
            raise OverflowError("Python int too large to convert to C long")
        args = [_unwrap(x) for x in inputs]
        out = kwargs.get("out")
        if out is not None:
            outs = out if isinstance(out, tuple) else (out,)
            for o in outs:
                if o is not None and not isinstance(o, ndarray):
                    raise TypeError(f"Output arguments must be cupy.ndarray, got {type(o)}")
            kwargs["out"] = tuple(_unwrap(o) for o in outs)
        res = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if isinstance(out, tuple) and len(out) == 1 else out
        return _wrap(res)

    def __array_function__(self, func, types_, args, kwargs):
        if func.__name__ in ("asarray", "array", "ascontiguousarray") and func.__module__.startswith("numpy"):
            raise TypeError("Implicit conversion to a NumPy array is not allowed")
        args = [_unwrap(a) for a in args]
        out = kwargs.get("out")
        kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
        res = func(*args, **kwargs)
        if out is not None and res is kwargs["out"]:
            return out
        return _wrap(res)

    # -- attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a))
    T = property(lambda self: self._view(self._a.T))
    real = property(lambda self: self._view(self._a.real))
    imag = property(lambda self: self._view(self._a.imag))
    base = property(lambda self: self._base)

    def __getitem__(self, key):
        return self._view(self._a[_unwrap(key)])

    def __setitem__(self, key, value) -> None:
        if isinstance(value, np.ndarray) and value.ndim:
            raise TypeError("Unsupported type <class 'numpy.ndarray'>: copy to the device first")
        self._a[_unwrap(key)] = _unwrap(value, strict=False)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def __index__(self) -> int:
        return self._a.__index__()

    def __repr__(self) -> str:
        return f"fake_cupy.{self._a!r}"

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    def __getattr__(self, name: str):
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            out = kwargs.get("out")
            res = attr(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
            return out if out is not None else self._view(res)

        return method


# -- module functions


def _alloc(fn):
    def make(shape, dtype=float, *args, **kwargs):
        n = int(np.prod(shape if isinstance(shape, tuple) else (shape,), dtype=np.int64)) * np.dtype(dtype).itemsize
        _check_alloc(n)
        _ALLOCATED["bytes"] += n
        return ndarray._of(fn(shape, dtype, *args, **kwargs))

    make.__name__ = fn.__name__
    return make


empty = _alloc(np.empty)
zeros = _alloc(np.zeros)
ones = _alloc(np.ones)


def full(shape, fill_value, dtype=None):
    _check_alloc(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype or float).itemsize)
    return ndarray._of(np.full(shape, fill_value, dtype))


def asarray(a, dtype=None, order=None):
    if isinstance(a, ndarray):
        return a if dtype is None else a.astype(dtype)
    return ndarray._of(np.array(a, dtype=dtype, copy=True))


array = asarray


def ascontiguousarray(a, dtype=None):
    return ndarray._of(np.ascontiguousarray(_unwrap(a), dtype=dtype))


def asnumpy(a, stream=None, order="C", out=None):
    return a.get(out=out) if isinstance(a, ndarray) else np.asarray(a)


def may_share_memory(a, b, max_work=None):
    return np.may_share_memory(_unwrap(a, False), _unwrap(b, False))


def get_array_module(*args):
    import sys

    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else np


def __getattr__(name: str):
    obj = getattr(np, name)
    if isinstance(obj, type) or not callable(obj):
        return obj  # dtypes, constants

    def fn(*args, **kwargs):
        out = kwargs.get("out")
        res = obj(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        return out if out is not None else _wrap(res)

    fn.__name__ = name
    return fn


# -- cuda namespace


class _Stream:
    def synchronize(self) -> None:
        pass


class _Device:
    def __init__(self, device: int = 0) -> None:
        n = int(os.environ.get("FAKE_CUPY_DEVICES", "1"))
        if not 0 <= device < n:
            raise RuntimeError(f"cudaErrorInvalidDevice: device {device} of {n}")
        self.id = device

    def use(self) -> None:
        _state["device"] = self.id


_state = {"device": 0, "pinned": 0}


def _device_count() -> int:
    return int(os.environ.get("FAKE_CUPY_DEVICES", "1"))


def _alloc_pinned(nbytes: int):
    _state["pinned"] += 1
    return bytearray(nbytes)


class _Pool:
    def free_bytes(self) -> int:
        return 0


def get_default_memory_pool() -> _Pool:
    return _Pool()


cuda = types.SimpleNamespace(
    runtime=types.SimpleNamespace(getDeviceCount=_device_count, memGetInfo=lambda: (1 << 30, 1 << 31)),
    Device=_Device,
    get_current_stream=lambda: _Stream(),
    alloc_pinned_memory=_alloc_pinned,
    memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
)


# -- user-defined kernels, executed on the CPU
#
# ``ElementwiseKernel`` and ``ReductionKernel`` compile the CUDA C++ they are
# given as ordinary C++ (``__device__`` and ``__forceinline__`` defined away)
# inside a loop over the C-order index ``i`` of the output, with each
# parameter name bound to its element (inputs const, outputs by reference) at
# the arrays' real strides (0 for broadcast axes).  g++ compiles the unit with
# ``-O2 -ffp-contract=off -fno-fast-math`` when NVRTC's ``--fmad=false`` is
# given (else with multiply-add contraction, NVRTC's default) into
# ``FAKE_CUPY_KERNEL_CACHE`` (default: a per-user folder under the temporary
# directory), keyed by the hash of the source; ctypes loads and runs it.  Strict like CuPy: unknown
# parameter types and unknown compile options raise.

#: CuPy's C++ names of the dtypes a parameter may be declared with.  Written out
#: here, not imported from spmdarray's kernel generator: the stand-in checks the
#: generator against CuPy's names, never against itself.
_KERNEL_CTYPES = {
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
#: NVRTC options the emulation understands (what g++ does anyway: IEEE, no contraction).
_KERNEL_OPTIONS = {"--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true"}
_KERNEL_LIBS: dict = {}


def _kernel_params(spec: str) -> list:
    params = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        words = part.split()
        if len(words) != 2 or words[0] not in _KERNEL_CTYPES or not words[1].isidentifier():
            raise ValueError(f"fake_cupy kernels take '<dtype name> <identifier>' parameters; got {part!r}")
        if words[1] == "i" or words[1].startswith("_"):
            raise ValueError(f"reserved parameter name {words[1]!r}")
        params.append((np.dtype(words[0]), words[1]))
    return params


def _kernel_options(options) -> tuple:
    """g++ flags for NVRTC ``options``.

    NVRTC contracts multiply-adds unless given ``--fmad=false``; so does the
    emulation (``-ffp-contract=fast``, with ``-mfma`` where the CPU has it), so
    a kernel built without the option is caught on the CPU too.
    """
    bad = [o for o in options if o not in _KERNEL_OPTIONS]
    if bad:
        raise ValueError(f"fake_cupy kernels: unknown compile options {bad}")
    if "--fmad=false" in options:
        return ("-ffp-contract=off",)
    return ("-ffp-contract=fast", "-mfma") if _cpu_has_fma() else ("-ffp-contract=fast",)


def _cpu_has_fma() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return " fma " in f.read().replace("\n", " ")
    except OSError:
        return False


def _kernel_lib(src: str, flags: tuple):
    import ctypes
    import hashlib
    import subprocess
    import tempfile

    h = hashlib.sha1(repr((src, flags)).encode()).hexdigest()[:24]
    lib = _KERNEL_LIBS.get(h)
    if lib is not None:
        return lib
    d = os.environ.get("FAKE_CUPY_KERNEL_CACHE") or os.path.join(
        tempfile.gettempdir(), f"fake-cupy-kernels-{os.getuid()}"
    )
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, f"k_{h}.so")
    if not os.path.exists(so):
        cpp = os.path.join(d, f"k_{h}.{os.getpid()}.cpp")
        with open(cpp, "w") as f:
            f.write(src)
        tmp = f"{so}.{os.getpid()}.tmp"
        cmd = ["g++", "-O2", "-shared", "-fPIC", *flags, "-fno-fast-math", "-o", tmp, cpp]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"fake_cupy kernel compilation failed:\n{r.stderr}\n--- source ---\n{src}")
        os.replace(tmp, so)
        os.remove(cpp)
    lib = ctypes.CDLL(so)
    lib.spmd_fake_run.restype = None
    lib.spmd_fake_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
    _KERNEL_LIBS[h] = lib
    return lib


# No standard headers (they triple the compile time): the CUDA math functions the
# generated kernels may call are declared here; any other is a compile error.
_KERNEL_HEAD = """extern "C" { double sqrt(double); float sqrtf(float); double fabs(double); float fabsf(float); }
typedef decltype((char*)0 - (char*)0) ptrdiff_t;
#define __device__
#define __forceinline__ inline
"""


def _kernel_unit(params, preamble: str, nd: int, body: str, prologue: str = "", epilogue: str = "") -> str:
    """C++ unit: ``spmd_fake_run(ptrs, strides, shape, n)`` loops ``i`` over ``n`` elements."""
    binds = []
    for k, (dt, name, kind) in enumerate(params):
        ct = _KERNEL_CTYPES[dt.name]
        off = " + ".join([f"idx[{d}] * st[{k * max(nd, 1) + d}]" for d in range(nd)] or ["0"])
        if kind == "scalar":
            binds.append(f"const {ct} {name} = *(const {ct}*)p[{k}];")
        elif kind == "in":
            binds.append(f"const {ct}& {name} = *(const {ct}*)(p[{k}] + ({off}));")
        elif kind == "out":
            binds.append(f"{ct}& {name} = *({ct}*)(p[{k}] + ({off}));")
    lines = [
        _KERNEL_HEAD,
        preamble,
        'extern "C" void spmd_fake_run(char** p, const long long* st, const long long* shape, long long n) {',
        prologue,
        "    for (ptrdiff_t i = 0; i < n; ++i) {",
        f"        long long idx[{max(nd, 1)}]; long long r = i;",
        f"        for (int d = {nd - 1}; d >= 0; --d) {{ idx[d] = r % shape[d]; r /= shape[d]; }}",
        *("        " + b for b in binds),
        "        {",
        body,
        "        }",
        "    }",
        epilogue,
        "}",
    ]
    return "\n".join(lines) + "\n"


def _kernel_call(lib, params, args, shape) -> None:
    import ctypes

    nd = len(shape)
    ptrs = (ctypes.c_void_p * len(params))()
    strides = (ctypes.c_longlong * (len(params) * max(nd, 1)))()
    keep = []
    for k, ((dt, _, kind), a) in enumerate(zip(params, args)):
        if kind == "scalar":
            v = np.array(a, dtype=dt)
            keep.append(v)
            ptrs[k] = v.ctypes.data
            continue
        b = np.broadcast_to(a, shape) if kind == "in" else a
        ptrs[k] = b.ctypes.data
        for d in range(nd):
            strides[k * max(nd, 1) + d] = b.strides[d]
    shp = (ctypes.c_longlong * max(nd, 1))(*shape)
    n = int(np.prod(shape, dtype=np.int64))
    lib.spmd_fake_run(ptrs, strides, shp, n)
    del keep


def _kernel_args(in_params, args, cls_name):
    if len(args) < len(in_params):
        raise TypeError(f"{cls_name}: wrong number of arguments ({len(args)} for {len(in_params)} inputs)")
    kinds, vals = [], []
    for (dt, name), a in zip(in_params, args):
        if isinstance(a, np.ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        if isinstance(a, ndarray):
            if a.dtype != dt:
                raise TypeError(f"{cls_name}: parameter {name} is {dt}, got an array of {a.dtype}")
            kinds.append("in")
            vals.append(a._a)
        else:
            kinds.append("scalar")
            vals.append(a)
    return kinds, vals


class ElementwiseKernel:
    """CuPy's ``ElementwiseKernel`` (concrete dtypes, no ``raw``), run as compiled C++ on the CPU."""

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="", **kwargs):
        opts = kwargs.pop("options", ())
        if kwargs:
            raise TypeError(f"fake_cupy.ElementwiseKernel: unsupported arguments {sorted(kwargs)}")
        self._flags = _kernel_options(opts)
        if not name.isidentifier():
            raise ValueError(f"kernel name must be an identifier; got {name!r}")
        self.in_params = _kernel_params(in_params)
        self.out_params = _kernel_params(out_params)
        self.operation = operation
        self.preamble = preamble
        self.name = name
        self._libs: dict = {}

    def __call__(self, *args, size=None):
        nin, nout = len(self.in_params), len(self.out_params)
        kinds, vals = _kernel_args(self.in_params, args, "ElementwiseKernel")
        outs = list(args[nin:])
        arrays = [v for k, v in zip(kinds, vals) if k == "in"]
        if outs and len(outs) != nout:
            raise TypeError(f"ElementwiseKernel: wrong number of arguments ({len(args)} for {nin + nout})")
        if not outs:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            outs = [empty(shape, dt) for dt, _ in self.out_params]
        for (dt, name), o in zip(self.out_params, outs):
            if not isinstance(o, ndarray) or o.dtype != dt:
                raise TypeError(f"ElementwiseKernel: output {name} must be a {dt} array")
        shape = outs[0].shape
        for a in arrays:
            np.broadcast_shapes(a.shape, shape)  # raises ValueError as CuPy does
            if np.broadcast_shapes(a.shape, shape) != shape:
                raise ValueError(f"operands could not be broadcast to the output shape {shape}")
        params = [(dt, nm, k) for (dt, nm), k in zip(self.in_params, kinds)]
        params += [(dt, nm, "out") for dt, nm in self.out_params]
        key = (tuple(kinds), len(shape))
        lib = self._libs.get(key)
        if lib is None:
            src = _kernel_unit(params, self.preamble, len(shape), self.operation)
            lib = self._libs[key] = _kernel_lib(src, self._flags)
        if all(shape):
            _kernel_call(lib, params, vals + [o._a for o in outs], shape)
        return outs[0] if nout == 1 else tuple(outs)


class ReductionKernel:
    """CuPy's ``ReductionKernel`` for full reductions (``axis=None``), run as compiled C++ on the CPU."""

    def __init__(
        self,
        in_params,
        out_params,
        map_expr,
        reduce_expr,
        post_map_expr,
        identity,
        name="reduce_kernel",
        reduce_type=None,
        reduce_dims=True,
        preamble="",
        options=(),
    ):
        self._flags = _kernel_options(options)
        if not name.isidentifier():
            raise ValueError(f"kernel name must be an identifier; got {name!r}")
        self.in_params = _kernel_params(in_params)
        self.out_params = _kernel_params(out_params)
        if len(self.out_params) != 1:
            raise ValueError("fake_cupy.ReductionKernel takes one output")
        if reduce_type is not None and reduce_type not in _KERNEL_CTYPES:
            raise ValueError(f"unknown reduce_type {reduce_type!r}")
        self.reduce_type = np.dtype(reduce_type or self.out_params[0][0])
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity = identity
        self.preamble = preamble
        self._libs: dict = {}

    def __call__(self, *args, axis=None, keepdims=False):
        if axis is not None or keepdims:
            raise NotImplementedError("fake_cupy.ReductionKernel: full reductions only")
        nin = len(self.in_params)
        if len(args) != nin:
            raise TypeError(f"ReductionKernel: wrong number of arguments ({len(args)} for {nin})")
        kinds, vals = _kernel_args(self.in_params, args, "ReductionKernel")
        arrays = [v for k, v in zip(kinds, vals) if k == "in"]
        if not arrays:
            raise ValueError("ReductionKernel needs at least one array argument")
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        dt, oname = self.out_params[0]
        res = empty((), dt)
        params = [(d, nm, k) for (d, nm), k in zip(self.in_params, kinds)] + [(dt, "spmd_fake_res", "out")]
        key = (tuple(kinds), len(shape))
        lib = self._libs.get(key)
        if lib is None:
            rt = _KERNEL_CTYPES[self.reduce_type.name]
            pre = (
                self.preamble
                + f"\ntypedef {rt} _type_reduce;\n"
                + "static inline _type_reduce spmd_fake_reduce(_type_reduce a, _type_reduce b) "
                + f"{{ return ({self.reduce_expr}); }}\n"
            )
            prologue = f"    _type_reduce spmd_acc = (_type_reduce)({self.identity});"
            body = f"            spmd_acc = spmd_fake_reduce(spmd_acc, static_cast<_type_reduce>({self.map_expr}));"
            ct = _KERNEL_CTYPES[dt.name]
            epilogue = (
                f"    {{ _type_reduce a = spmd_acc; {ct}& {oname} = *({ct}*)p[{len(params) - 1}]; "
                f"{self.post_map_expr}; }}"
            )
            src = _kernel_unit(params, pre, len(shape), body, prologue, epilogue)
            lib = self._libs[key] = _kernel_lib(src, self._flags)
        # the output is bound once, after the loop: give it zero strides
        out = np.broadcast_to(res._a.reshape((1,) * len(shape)), shape) if shape else res._a
        if all(shape):
            _kernel_call(lib, params, vals + [out], shape)
        else:
            res._a[()] = np.array(self.identity if self.identity else 0).astype(dt)
        return res
