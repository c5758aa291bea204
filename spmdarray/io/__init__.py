"""HDF5 input and output: each rank moves only its own block, into and out of one file.

* :func:`load_hdf5` reads a dataset (or a selection of it) into a
  distributed array;
* :func:`save_hdf5` writes arrays into one file, one global dataset each;
* :func:`checkpoint` and :func:`restore` write and read restart files
  atomically, at any rank count.

All four are collective.  Two I/O paths are chosen automatically (and named
in a debug message of the ``spmdarray.io`` logger): parallel HDF5, when
h5py was built with MPI (``h5py.get_config().mpi``), uses the ``mpio``
driver with collective hyperslab reads and writes; otherwise the PyPI h5py
reads each rank's hyperslab independently and writes one rank at a time.
Set ``SPMDARRAY_HDF5_IO=serial`` to force the second.  See ``docs/io.md``.
"""

from spmdarray.io._checkpoint import Checkpoint, checkpoint, restore
from spmdarray.io._errors import DatasetNotFoundError
from spmdarray.io._read import load_hdf5
from spmdarray.io._write import save_hdf5

__all__ = ["Checkpoint", "DatasetNotFoundError", "checkpoint", "load_hdf5", "restore", "save_hdf5"]
