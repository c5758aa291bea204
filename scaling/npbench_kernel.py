"""One npbench kernel under ``mpiexec``: NumPy and spmdarray in the same processes.

::

    mpiexec -n 2 python -m scaling.npbench_kernel --npbench DIR --bench jacobi_2d --preset S

The kernel file ``<module>_numpy.py`` is loaded twice, unmodified: once as it
is, once with its global ``np`` rebound to :mod:`spmdarray`.  The inputs come
from the benchmark's own ``initialize()`` on rank 0 and are broadcast, so every
rank passes identical NumPy inputs.  Each repeat runs the NumPy kernel, then
the spmdarray kernel on ``spmdarray.asarray(numpy.copy(a))`` of every array
argument (the conversion is not timed, as npbench's setup is not), followed by
``spmdarray.sync()`` (evaluation is deferred).  A run's time is the maximum
over ranks, and the figure is the minimum over repeats.

The first spmdarray run is validated as npbench's ``util.validate`` does: the
returned values followed by the ``output_args``, after ``numpy.asarray``,
pass ``numpy.allclose(ref, val, rtol, atol)`` (the benchmark's tolerances,
default 1e-5 / 1e-8) or a relative 2-norm error below ``norm_error``.  The
gathered values must also be identical on every rank.

Rank 0 prints one line ``NPBENCH {json}``; a rank that fails prints its own
line and, with more than one rank, the job is aborted after a grace period
so that ranks left in a collective do not hang.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
import time
import traceback

import numpy

MARKER = "NPBENCH "


def load_module(path: str, name: str):
    """Import the Python file ``path`` as a fresh module called ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_info(root: str, name: str) -> dict:
    """The ``benchmark`` record of ``bench_info/<name>.json``."""
    with open(os.path.join(root, "bench_info", name + ".json")) as f:
        return json.load(f)["benchmark"]


def get_data(root: str, info: dict, preset: str) -> dict:
    """The preset's parameters and the arrays of the benchmark's initializer (npbench's ``get_data``)."""
    data = dict(info["parameters"][preset])
    init = info.get("init")
    if init:
        d = os.path.join(root, "npbench", "benchmarks", info["relative_path"])
        mod = load_module(os.path.join(d, info["module_name"] + ".py"), "init_" + info["module_name"])
        res = getattr(mod, init["func_name"])(*[data[a] for a in init["input_args"]])
        names = init["output_args"]
        data.update({names[0]: res} if len(names) == 1 else zip(names, res))
    return data


def _as_list(out) -> list:
    if out is None:
        return []
    return list(out) if isinstance(out, (tuple, list)) else [out]


def validate(ref: list, val: list, rtol: float, atol: float, norm_error: float) -> tuple[bool, float]:
    """npbench's rule on gathered NumPy values: ``(passed, largest relative 2-norm error)``."""
    if len(ref) != len(val):
        return False, float("inf")
    ok, worst = True, 0.0
    for r, v in zip(ref, val):
        if r.shape != v.shape:
            return False, float("inf")
        if numpy.allclose(r, v, rtol=rtol, atol=atol, equal_nan=False):
            continue
        with numpy.errstate(all="ignore"):
            nref = numpy.linalg.norm(r)
            err = float(numpy.linalg.norm(r - v) / nref) if nref else float(numpy.linalg.norm(r - v))
        worst = max(worst, err)
        ok = ok and err < norm_error
    return ok, worst


def _error(e: BaseException, kfile: str) -> dict:
    frames = traceback.extract_tb(e.__traceback__)
    lines = [f"{os.path.basename(f.filename)}:{f.lineno}: {f.line}" for f in frames if f.filename == kfile]
    msg = (str(e).strip().splitlines() or [""])[0]
    return {"status": "error", "etype": type(e).__name__, "emsg": msg[:300], "kernel_lines": lines}


def run(a: argparse.Namespace) -> dict:
    """Validate and time one kernel; the record rank 0 prints.  Collective."""
    from mpi4py import MPI

    import spmdarray

    comm = MPI.COMM_WORLD
    info = bench_info(a.npbench, a.bench)
    kfile = os.path.join(a.npbench, "npbench", "benchmarks", info["relative_path"], info["module_name"] + "_numpy.py")
    np_kernel = getattr(load_module(kfile, "np_" + info["module_name"]), info["func_name"])
    sp_mod = load_module(kfile, "sp_" + info["module_name"])
    sp_mod.np = spmdarray  # the only change to the kernel
    sp_kernel = getattr(sp_mod, info["func_name"])
    data = None
    if comm.rank == 0:
        try:
            data = get_data(a.npbench, info, a.preset)
        except Exception as e:  # the benchmark's initializer (e.g. spmv needs scipy)
            data = {"__init_error__": f"{type(e).__name__}: {e}"}
    data = comm.bcast(data, root=0)
    if "__init_error__" in data:
        return {"status": "init-error", "etype": "init", "emsg": data["__init_error__"][:300]}
    arrays, in_args, out_args = set(info["array_args"]), info["input_args"], info.get("output_args", [])
    rtol, atol = info.get("rtol", 1e-5), info.get("atol", 1e-8)
    norm_error = info.get("norm_error", 1e-5)

    def args(convert):
        return [convert(numpy.copy(data[n])) if n in arrays else data[n] for n in in_args]

    def timed(kernel, argv, after):
        comm.Barrier()
        t0 = time.perf_counter()
        out = kernel(*argv)
        after()
        return out, comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)

    def gathered(out, argv):
        named = [argv[in_args.index(n)] for n in out_args]
        return [numpy.asarray(o) for o in _as_list(out) + named]

    rec: dict = {"status": "pass"}
    np_times, sp_times, spent = [], [], 0.0
    for r in range(a.repeats):
        argv = args(lambda x: x)
        out, t = timed(np_kernel, argv, lambda: None)
        np_times.append(t)
        if r == 0:
            ref = gathered(out, argv)
        try:
            argv = args(spmdarray.asarray)
            spmdarray.sync()
            with spmdarray.comm_stats() as cs:
                out, t = timed(sp_kernel, argv, spmdarray.sync)
            sp_times.append(t)
            if r == 0:  # this rank's spmdarray communication in the first run
                rec["comm"] = {k: getattr(cs, k) for k in ("collectives", "messages_sent", "bytes_sent")}
            if r == 0:
                val = gathered(out, argv)
        except Exception as e:
            return _error(e, kfile)
        if r == 0:
            ok, err = validate(ref, val, rtol, atol, norm_error)
            h = hashlib.sha256(b"".join(numpy.ascontiguousarray(v).tobytes() for v in val)).hexdigest()
            same = len(set(comm.allgather(h))) == 1
            rec.update(status="pass" if ok and same else "wrong", rel_err=err, rank_consistent=same)
            if not a.time:
                break
        spent += np_times[-1] + sp_times[-1]
        if spent > a.budget and r >= 1:
            break
    if a.profile:
        rec["profile"] = profile(sp_kernel, args(spmdarray.asarray), f"{a.profile}.r{comm.rank}.prof")
    np_min, sp_min = min(np_times), min(sp_times)
    rec.update(np_time=np_min, sp_time=sp_min, ratio=sp_min / np_min if np_min > 0 else None, repeats=len(sp_times))
    return rec


def profile(kernel, argv: list, path: str) -> dict:
    """One more spmdarray run under cProfile (stats saved to ``path``); its communication counts.  Collective."""
    import cProfile

    import spmdarray

    spmdarray.sync()  # the conversion of the arguments is not profiled
    prof = cProfile.Profile()
    with spmdarray.comm_stats() as cs:
        prof.enable()
        kernel(*argv)
        spmdarray.sync()
        prof.disable()
    prof.dump_stats(path)
    keys = ("messages_sent", "bytes_sent", "collectives", "collective_bytes")
    return {k: getattr(cs, k) for k in keys}


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the kernel, print the record."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--npbench", required=True, help="root of an npbench checkout")
    p.add_argument("--bench", required=True, help="short name, as bench_info/<name>.json")
    p.add_argument("--preset", default="S")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--budget", type=float, default=20.0, help="seconds of runs after which repeating stops")
    p.add_argument("--no-time", dest="time", action="store_false", help="validate only (one run)")
    p.add_argument("--profile", default=None, help="profile one more run: cProfile stats to PATH.r<rank>.prof")
    a = p.parse_args(argv)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    try:
        rec = run(a)
    except Exception as e:  # a failure outside the kernel: still one record
        rec = {"status": "error", "etype": type(e).__name__, "emsg": str(e)[:300], "where": "runner"}
    rec.update(bench=a.bench, preset=a.preset, ranks=comm.size, rank=comm.rank)
    if comm.rank == 0 or rec["status"] == "error":
        print(MARKER + json.dumps(rec), flush=True)
    if rec["status"] == "error" and comm.size > 1:
        sys.stderr.flush()
        time.sleep(3)  # let other ranks print their own error first
        comm.Abort(3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
