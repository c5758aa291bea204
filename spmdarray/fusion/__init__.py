"""Deferred elementwise evaluation: recording, evaluation, and the generated CPU (numba)
and CUDA (CuPy) kernels.  Internal: users see it only through ``spmdarray.sync`` and
``spmdarray.config``."""
