"""Heat diffusion on a plate with spmdarray: examples/heat_mpi4py.py, ported.

The "after" program of docs/porting.md.  No decomposition, no ghost rows and
no messages in the program: the update is NumPy code on shifted views::

    mpiexec -n 3 python examples/heat_spmdarray.py --out after.npy
    mpiexec -n 3 python examples/heat_spmdarray.py --from-local   # step 1 of the port

``--from-local`` keeps the mpi4py program's own blocks (wrapped with
``from_local(..., ghost=1)``), the first step of an incremental port.
"""

import argparse

import numpy

import spmdarray as np

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("-N", type=int, default=1000, help="interior rows (default 1000)")
parser.add_argument("-M", type=int, default=300, help="columns, boundary included (default 300)")
parser.add_argument("--steps", type=int, default=50, help="time steps (default 50)")
parser.add_argument("--out", help="save the final interior rows (.npy) from rank 0")
parser.add_argument("--from-local", action="store_true", help="start from per-rank blocks, as the mpi4py code")
args = parser.parse_args()
N, M, alpha = args.N, args.M, 0.2


def initial(i, j, xp):
    return xp.sin(xp.pi * i / (N + 1)) * xp.cos(xp.pi * j / (M - 1)) + 0.01 * ((i * 7 + j * 3) % 11)


if args.from_local:
    # Step 1: the mpi4py program's blocks, with the plate's zero edge rows on the first and last rank.
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    q, r = divmod(N, size)
    rows = q + (1 if rank < r else 0)
    lo = rank * q + min(rank, r)
    block = initial(numpy.arange(lo + 1, lo + rows + 1)[:, None], numpy.arange(M)[None, :], numpy)
    if rank == 0:
        block = numpy.concatenate([numpy.zeros((1, M)), block])
    if rank == size - 1:
        block = numpy.concatenate([block, numpy.zeros((1, M))])
    u = np.from_local(block, comm, ghost=1)
else:
    # The full port: one global array, its edge rows the plate's zero boundary.
    u = np.zeros((N + 2, M))
    u[1:-1] = initial(np.arange(1, N + 1)[:, None], np.arange(M)[None, :], np)

c = u[1:-1, 1:-1]
north, south, west, east = u[:-2, 1:-1], u[2:, 1:-1], u[1:-1, :-2], u[1:-1, 2:]
for step in range(args.steps):
    c[...] = c + alpha * (north + south + west + east - 4 * c)
    if step % 10 == 0:
        energy = float(np.sum(u[1:-1] ** 2))

total = float(u[1:-1].sum())
rank, size = u.comm.Get_rank(), u.comm.Get_size()
if rank == 0:
    print(f"heat N={N} M={M} steps={args.steps} on {size} rank(s): checksum {total:.12e} energy {energy:.12e}")
result = numpy.asarray(u[1:-1])  # collective: every rank gets the array
if rank == 0 and args.out:
    numpy.save(args.out, result)
