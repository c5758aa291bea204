"""HDF5 write and read throughput of spmdarray, next to plain h5py from one process.

Writes a float64 array of ``--gib`` GiB with ``spmdarray.save_hdf5`` and reads
it back with ``spmdarray.load_hdf5``, then (on rank 0 alone) writes and reads
the same data with plain h5py, followed by an fsync as save_hdf5 does. Reports
GiB/s; the page cache is not dropped, so reads after writes measure memory
copies more than the disk.

    python scaling/io_throughput.py --gib 2                         # 1 rank
    mpiexec -n 2 python scaling/io_throughput.py --gib 2            # serial h5py: writes take turns
    SPMDARRAY_HDF5_IO=serial mpiexec -n 2 ...                       # force the serial path
    /usr/bin/mpiexec.mpich -n 2 .venv-phdf5/bin/python scaling/io_throughput.py --gib 2  # parallel HDF5
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy

import spmdarray
from spmdarray.io import _h5


def _timed(comm, fn) -> float:
    comm.Barrier()
    t0 = time.perf_counter()
    fn()
    comm.Barrier()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0, help="array size in GiB (default 2)")
    parser.add_argument("--dir", default=None, help="directory for the files (default: a temporary one)")
    args = parser.parse_args()
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    n = int(args.gib * (1 << 30) / 8)
    rows = max(1, int(n**0.5))
    shape = (n // rows, rows)
    gib = shape[0] * shape[1] * 8 / (1 << 30)
    folder = args.dir or (tempfile.mkdtemp(prefix="spmdarray-io-bench-", dir="/tmp") if comm.rank == 0 else None)
    folder = comm.bcast(folder, root=0)
    path = os.path.join(folder, "bench.h5")
    x = spmdarray.random.default_rng(1).random(shape)
    path_name = "parallel" if _h5.parallel() else "serial"

    t_write = _timed(comm, lambda: spmdarray.save_hdf5(path, {"x": x}, overwrite=True))
    t_read = _timed(comm, lambda: spmdarray.load_hdf5(path, "x"))
    rows_out = [("spmdarray", f"{comm.size} ranks, {path_name} path", t_write, t_read)]
    if comm.rank == 0:
        import h5py

        data = numpy.empty(shape)
        data[...] = 0.5  # the same size; the values do not matter to HDF5
        ref = os.path.join(folder, "h5py.h5")
        t0 = time.perf_counter()
        with h5py.File(ref, "w") as f:
            f.create_dataset("x", data=data)
        fd = os.open(ref, os.O_RDONLY)  # save_hdf5 fsyncs its file: do the same here
        os.fsync(fd)
        os.close(fd)
        t1 = time.perf_counter()
        with h5py.File(ref, "r") as f:
            f["x"][...]
        t2 = time.perf_counter()
        rows_out.append(("h5py", "1 process, write + fsync", t1 - t0, t2 - t1))
        os.unlink(ref)
        print(f"array {shape} float64, {gib:.2f} GiB, files in {folder}")
        print(f"{'':10} {'':28} {'write GiB/s':>12} {'read GiB/s':>11}")
        for who, how, tw, tr in rows_out:
            print(f"{who:10} {how:28} {gib / tw:12.2f} {gib / tr:11.2f}")
        os.unlink(path)
        if not args.dir:
            os.rmdir(folder)


if __name__ == "__main__":
    main()
