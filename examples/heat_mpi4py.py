"""Heat diffusion on a plate with mpi4py: rows split by hand, ghost rows by Sendrecv.

The "before" program of docs/porting.md; examples/heat_spmdarray.py is the
"after".  Both print the same checksum and can save the final field::

    mpiexec -n 3 python examples/heat_mpi4py.py --out before.npy
    mpiexec -n 3 python examples/heat_spmdarray.py --out after.npy
"""

import argparse

import numpy as np
from mpi4py import MPI

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("-N", type=int, default=1000, help="interior rows (default 1000)")
parser.add_argument("-M", type=int, default=300, help="columns, boundary included (default 300)")
parser.add_argument("--steps", type=int, default=50, help="time steps (default 50)")
parser.add_argument("--out", help="save the final interior rows (.npy) from rank 0")
args = parser.parse_args()

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
N, M, alpha = args.N, args.M, 0.2

# 1. The decomposition, by hand: rank r owns `rows` consecutive interior rows from `lo`.
q, r = divmod(N, size)
rows = q + (1 if rank < r else 0)
lo = rank * q + min(rank, r)
up = rank - 1 if rank > 0 else MPI.PROC_NULL
down = rank + 1 if rank < size - 1 else MPI.PROC_NULL

# 2. The local array: the owned rows plus one ghost row above and below (zero at the plate's edge).
u = np.zeros((rows + 2, M))
i = np.arange(lo + 1, lo + rows + 1)[:, None]
j = np.arange(M)[None, :]
u[1:-1] = np.sin(np.pi * i / (N + 1)) * np.cos(np.pi * j / (M - 1)) + 0.01 * ((i * 7 + j * 3) % 11)

for step in range(args.steps):
    # 3. The ghost rows, from the neighbours.
    comm.Sendrecv(u[1], dest=up, recvbuf=u[-1], source=down)
    comm.Sendrecv(u[-2], dest=down, recvbuf=u[0], source=up)
    # 4. The update of the interior columns (the first and last columns stay fixed).
    c = u[1:-1, 1:-1]
    new = c + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * c)
    u[1:-1, 1:-1] = new
    # 5. A global diagnostic: a reduction by hand.
    if step % 10 == 0:
        energy = comm.allreduce(float(np.sum(u[1:-1] ** 2)))

total = comm.allreduce(float(u[1:-1].sum()))
if rank == 0:
    print(f"heat N={N} M={M} steps={args.steps} on {size} rank(s): checksum {total:.12e} energy {energy:.12e}")
# 6. Output: gather the blocks on rank 0.
blocks = comm.gather(u[1:-1], root=0)
if rank == 0 and args.out:
    np.save(args.out, np.concatenate(blocks))
