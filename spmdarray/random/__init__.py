"""Random sampling with results that do not depend on the rank count.

``spmdarray.random`` mirrors the parts of :mod:`numpy.random` that SPMD codes
use most: the legacy module-level functions (:func:`seed`, :func:`rand`,
:func:`random`, :func:`uniform`, :func:`normal`, :func:`randint`, ...) and
:func:`default_rng` with its :class:`Generator`.

Counter-based design
--------------------
NumPy's generators are sequential: element ``i`` depends on every element
drawn before it, so a distributed array filled block by block would change
with the number of ranks.  This module instead uses a *counter-based*
generator.  The value of the element with global C-order flat index ``i`` in
the ``k``-th draw (call) of a generator with seed ``s`` is a pure function of
``(s, k, i)``:

1. a 64-bit key is derived by chaining the SplitMix64 finaliser over
   ``(s, k, lane)``; the *lane* separates independent streams needed by one
   element (Box--Muller uses lanes 0 and 1);
2. the element's 64 random bits are output ``i`` of SplitMix64 started at
   that key: ``mix64(key + (i + 1) * 0x9E3779B97F4A7C15)`` (mod ``2**64``).

Each rank evaluates the formula on the global flat indices of its own block,
vectorised over ``uint64`` NumPy arrays, and never communicates.  For a given
seed an array is therefore identical bit for bit for every rank count and
every layout, and ``size=None`` scalars (element ``i = 0``) are identical on
every rank.  Generators are not cryptographically secure.

The draw counter ``k`` advances by one per call, on every rank.  SPMD programs
make the same calls in the same order on every rank, so the counters agree.
NumPy's own streams are *not* reproduced: the same seed gives different
numbers here than in :mod:`numpy.random`.

Collectives
-----------
Array-valued calls are collective over ``comm`` (they create a distributed
array) but move no data.  ``size=None`` calls are not collective.  Drawing
fresh entropy (:func:`default_rng` or :func:`seed` without a seed, or the
first use of a never-seeded global state) is collective: rank 0 reads
``os.urandom`` and broadcasts it, so every rank holds the same seed.

Examples
--------
>>> import spmdarray as np
>>> rng = np.random.default_rng(42)
>>> x = rng.random((1000, 3))  # same values with 1, 2, 3, ... ranks
>>> v = rng.standard_normal()  # a NumPy scalar, the same on every rank
"""

from __future__ import annotations

from numpy.random import MT19937, PCG64, PCG64DXSM, SFC64, BitGenerator, Philox, SeedSequence

from spmdarray.random import _legacy
from spmdarray.random._choice import SMALL_POPULATION
from spmdarray.random._counter import (
    _bits,
    _flat_indices,
    _integers_kernel,
    _mix64,
    _normal_kernel,
    _random_kernel,
    _stream_key,
    _uniform_box,
)
from spmdarray.random._generator import CounterState, Generator, _SerialGenerator
from spmdarray.random._legacy import (
    RandomState,
    default_rng,
    get_bit_generator,
    get_state,
    seed,
    set_bit_generator,
    set_state,
)
from spmdarray.routines.docstrings import annotate as _annotate

_state: Generator | None = None
"""The global generator of the legacy functions (None until seeded or first used)."""

for _name in _legacy.LEGACY_FUNCTIONS:
    globals()[_name] = _legacy._module_function(_name)
ranf = sample = random_sample = globals()["random_sample"]  # NumPy's aliases

__all__ = [
    "BitGenerator",
    "Generator",
    "MT19937",
    "PCG64",
    "PCG64DXSM",
    "Philox",
    "RandomState",
    "SFC64",
    "SeedSequence",
    "default_rng",
    "get_bit_generator",
    "get_state",
    "ranf",
    "sample",
    "seed",
    "set_bit_generator",
    "set_state",
    *_legacy.LEGACY_FUNCTIONS,
]

# spmdarray's functions and Generator methods say whether they are collective
# (spmdarray.routines.docstrings); the BitGenerator classes are NumPy's.
for _name in __all__:
    if callable(globals()[_name]) and not getattr(globals()[_name], "__module__", "").startswith("numpy"):
        _annotate(globals()[_name], "random")
for _name, _method in vars(Generator).items():
    if not _name.startswith("_") and callable(_method):
        _annotate(_method, "random")
for _klass in Generator.__mro__[1:-1]:
    for _name, _method in vars(_klass).items():
        if not _name.startswith("_") and callable(_method):
            _annotate(_method, "random")

_PRIVATE = (
    CounterState,
    SMALL_POPULATION,
    _bits,
    _flat_indices,
    _integers_kernel,
    _mix64,
    _normal_kernel,
    _random_kernel,
    _stream_key,
    _uniform_box,  # the deferred draws of spmdarray.fusion.record
    _SerialGenerator,
)


def __getattr__(name: str):
    """NumPy random names spmdarray does not provide raise NotImplementedError when called."""
    import numpy.random as _npr

    if not name.startswith("_") and hasattr(_npr, name):

        def stub(*args, **kwargs):
            raise NotImplementedError(f"spmdarray.random.{name} is not implemented")

        stub.__name__ = name
        return stub
    raise AttributeError(f"module 'spmdarray.random' has no attribute {name!r}")
