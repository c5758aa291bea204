"""SplitMix64 (spmdarray.fusion.splitmix): published values, and one stream in every form.

The NumPy form is checked against SplitMix64's published outputs; the scalar
sources spliced into the numba and CUDA kernels are run (plain Python, numba,
and the CUDA source compiled as C++ by ``fake_cupy``) and compared with it bit
for bit; a fused random draw must give the field the NumPy path gives.  Run
serially and under ``mpiexec -n 2 python -m pytest --with-mpi``: the fused
draws are collective, every other test is local.
"""

from __future__ import annotations

import ast
import pathlib
import shutil
import sys

import numpy
import pytest
from helpers import fuse_everything

import spmdarray as sp
import spmdarray.random as sr
from spmdarray.fusion import kernels_cpu, kernels_cuda, splitmix
from spmdarray.random import _counter
from spmdarray.settings import config as _config

PACKAGE = pathlib.Path(splitmix.__file__).resolve().parents[1]

#: SplitMix64 seeded 1234567, its first five outputs (the published check values).
SEED_1234567 = [
    6457827717110365317,
    3203168211198807973,
    9817491932198370423,
    4593380528125082431,
    16408922859458223821,
]
#: Counts of ``floor(5 * u)`` over the first 100000 floats of SplitMix64 seeded 987654321 (published).
COUNTS_987654321 = [20027, 19892, 20073, 19978, 20030]

KEYS = [0, 1, 1234567, 2**63, splitmix.MASK]
#: Counters, the largest near the top of the int64 range the kernels index with.
COUNTERS = numpy.array([0, 1, 2, 3, 1000, 2**31, 2**32 + 7, 2**62 + 5, 2**63 - 1], dtype=numpy.uint64)


def _u01(key: int, flat) -> numpy.ndarray:
    """The NumPy form: float64 uniforms of stream ``key`` at counters ``flat``."""
    return splitmix.unit(splitmix.bits(key, numpy.asarray(flat, dtype=numpy.uint64)))


# -------------------------------------------------------------- NumPy form
def test_bits_give_the_published_outputs():
    got = splitmix.bits(1234567, numpy.arange(5, dtype=numpy.uint64))
    assert got.dtype == numpy.uint64
    assert got.tolist() == SEED_1234567


def test_first_output_of_seed_zero():
    assert int(splitmix.mix64(splitmix.GAMMA)) == 0xE220A8397B1DCDAF


def test_unit_gives_the_published_float_counts():
    u = _u01(987654321, numpy.arange(100_000, dtype=numpy.uint64))
    assert u.dtype == numpy.float64 and 0.0 <= u.min() and u.max() < 1.0
    assert numpy.bincount(numpy.floor(u * 5).astype(numpy.int64), minlength=5).tolist() == COUNTS_987654321


@pytest.mark.parametrize("key", KEYS)
def test_output_i_is_the_finaliser_of_key_plus_i_plus_one_gammas(key):
    got = splitmix.bits(key, COUNTERS)
    want = [int(splitmix.mix64((key + (int(i) + 1) * splitmix.GAMMA) & splitmix.MASK)) for i in COUNTERS]
    assert got.tolist() == want
    assert splitmix.base(key) == (key + splitmix.GAMMA) % 2**64


def test_unit_keeps_the_top_bits():
    words = [0, 1, 2**11 - 1, 2**11, 2**40, 2**63, splitmix.MASK]
    w = numpy.array(words, dtype=numpy.uint64)
    assert splitmix.unit(w.copy()).tolist() == [(x >> 11) / 2.0**53 for x in words]
    f32 = splitmix.unit(w.copy(), numpy.float32)
    assert f32.dtype == numpy.float32 and f32.tolist() == [(x >> 40) / 2.0**24 for x in words]
    assert splitmix.unit_open(w.copy()).tolist() == [((x >> 11) + 0.5) / 2.0**53 for x in words]


def test_fold_chains_the_finaliser():
    def step(h: int, word: int) -> int:
        return int(splitmix.mix64(splitmix.base(h ^ word)))

    h = int(splitmix.mix64(splitmix.base(5)))
    assert splitmix.fold(5, ()) == h
    assert splitmix.fold(5, (7, 2**64 + 3)) == step(step(h, 7), 3)
    assert _counter._stream_key(5, 7, 3) == splitmix.fold(5, (7, 3))
    assert _counter._seed64(2**64 + 9) == splitmix.fold(9, (1,))


def test_random_package_uses_the_module():
    assert sr._bits is splitmix.bits and sr._mix64 is splitmix.mix64
    assert _counter._unit is splitmix.unit and _counter._fold is splitmix.fold


# --------------------------------------------------- the spliced sources
def _python_u01():
    """:data:`splitmix.NUMBA_U01` executed as plain Python."""
    env = {"np": numpy}
    exec(splitmix.NUMBA_U01, env)  # noqa: S102 - our own generated source
    return env[splitmix.NUMBA_U01_NAME]


@pytest.mark.parametrize("key", KEYS)
def test_numba_source_as_python_equals_numpy(key):
    fn = _python_u01()
    k = numpy.uint64(splitmix.base(key))
    with numpy.errstate(over="ignore"):
        got = numpy.array([fn(k, int(i)) for i in COUNTERS])
    assert got.tobytes() == _u01(key, COUNTERS).tobytes()


def test_numba_source_compiled_equals_numpy():
    numba = pytest.importorskip("numba")

    @numba.njit
    def field(fn, k, flat):
        out = numpy.empty(flat.shape[0])
        for j in range(flat.shape[0]):
            out[j] = fn(k, flat[j])
        return out

    fn = numba.njit(_python_u01())
    flat = COUNTERS.astype(numpy.int64)  # the kernels pass int64 counters
    for key in KEYS:
        got = field(fn, numpy.uint64(splitmix.base(key)), flat)
        assert got.tobytes() == _u01(key, COUNTERS).tobytes()


@pytest.mark.skipif(shutil.which("g++") is None, reason="fake_cupy compiles CUDA kernels with g++")
def test_cuda_source_compiled_by_the_emulator_equals_numpy():
    import fake_cupy

    kernel = fake_cupy.ElementwiseKernel(
        "uint64 k, uint64 f",
        "float64 out",
        f"out = {splitmix.CUDA_U01_NAME}(k, f);",
        "splitmix_check",
        preamble=splitmix.CUDA_U01,
        options=kernels_cuda.OPTIONS,
    )
    for key in KEYS:
        got = kernel(numpy.uint64(splitmix.base(key)), fake_cupy.asarray(COUNTERS)).get()
        assert got.tobytes() == _u01(key, COUNTERS).tobytes()


def _constants() -> list[str]:
    return [f"0x{c:016X}" for c in (splitmix.GAMMA, *(m for _, m in splitmix.MIX_ROUNDS))]


def test_fragments_hold_the_constants():
    for c in _constants():
        assert c in splitmix.NUMBA_U01 and c + "ULL" in splitmix.CUDA_U01
    for shift, _ in splitmix.MIX_ROUNDS:
        assert f">> np.uint64({shift})" in splitmix.NUMBA_U01 and f">> {shift})" in splitmix.CUDA_U01


def test_generated_kernels_splice_the_fragments():
    loop = ("float64",) * 3
    steps = (("multiply", loop, (("l", 0), ("l", 0))),)
    sig = ((("r", "float64"),), steps, ("t", 0), "float64", 2)
    pre = kernels_cuda.source(sig, "store")["preamble"]
    assert splitmix.CUDA_U01 in pre and f"{splitmix.CUDA_U01_NAME}(k0, flat)" in pre
    cpu_sig = ((("r", "d"),), (("multiply", "ddd", (("l", 0), ("l", 0))),), ("t", 0), "d", "1")
    src = kernels_cpu._source(cpu_sig, 2, "store")
    assert splitmix.NUMBA_U01 in src and f"{splitmix.NUMBA_U01_NAME}(K0, " in src
    plain = kernels_cpu._source(((("a", "d", "1"),), (), ("l", 0), "d", "1"), 2, "store")
    assert splitmix.NUMBA_U01_NAME not in plain


def _code_constants(tree: ast.AST) -> list[ast.Constant]:
    """Every literal of ``tree`` that is not a docstring."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docs]


def test_constants_live_only_in_splitmix():
    values = {splitmix.GAMMA, *(m for _, m in splitmix.MIX_ROUNDS)}
    hexes = [c[2:] for c in _constants()]
    holders = []
    own = pathlib.Path(splitmix.__file__).resolve()
    for path in sorted(p for p in PACKAGE.rglob("*.py") if p.resolve() != own):
        for node in _code_constants(ast.parse(path.read_text())):
            v = node.value
            if (type(v) is int and v in values) or (isinstance(v, str) and any(h in v.upper() for h in hexes)):
                holders.append(path.relative_to(PACKAGE).as_posix())
    assert holders == [], f"SplitMix64 constants outside spmdarray/fusion/splitmix.py: {holders}"
    assert splitmix.GAMMA in {n.value for n in _code_constants(ast.parse(own.read_text()))}


def test_splitmix_imports_only_numpy_and_the_standard_library():
    tree = ast.parse(pathlib.Path(splitmix.__file__).read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    every = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert every == top, "imports inside functions"
    names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in top if isinstance(n, ast.ImportFrom)}
    assert names <= set(sys.stdlib_module_names) | {"numpy"}, names


# ------------------------------------------ fused draws against NumPy's
@pytest.mark.parametrize("shape", [(6, 7), (11,), (3, 4, 5), (1000,)], ids=str)
@pytest.mark.parametrize("seed", [0, 2024, 2**64 - 1])
def test_fused_random_field_equals_the_numpy_path(monkeypatch, shape, seed):
    fuse_everything(monkeypatch, "numba")
    device = sp.empty(0)._st.be.is_device
    kernels = kernels_cuda if device else kernels_cpu
    calls = kernels.compile_stats()["calls"]
    x = sp.random.default_rng(seed).random(shape)
    assert x._s.deferred
    got = numpy.asarray(x * 1.0)  # a fused program with a random leaf
    below = sp.sum(x < 0.5)  # a fused count over a random leaf
    assert kernels.compile_stats()["calls"] > calls
    monkeypatch.setattr(_config, "fuse", False)
    want = numpy.asarray(sp.random.default_rng(seed).random(shape))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert int(below) == int(numpy.sum(want < 0.5))
