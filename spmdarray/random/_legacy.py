"""Legacy ``numpy.random`` API: :class:`RandomState`, the module-level functions and :func:`default_rng`.

The module-level functions use one global counter-based :class:`Generator`
(``spmdarray.random._state``), seeded by :func:`seed` or, on first use, from
entropy that rank 0 draws and broadcasts.  Its whole state is the pair
``(seed, draw)`` (:func:`get_state`, :func:`set_state`).
"""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any

import numpy as np

from spmdarray.comm import check_seed
from spmdarray.random._counter import _entropy
from spmdarray.random._generator import Generator

STATE_NAME = "spmdarray.counter"
"""The first item of a state tuple (NumPy's is ``"MT19937"``)."""

# Legacy methods that take the same arguments as the Generator methods of the same name.
_SAME = (
    "beta binomial bytes chisquare choice dirichlet exponential f gamma geometric gumbel hypergeometric laplace "
    "logistic lognormal logseries multinomial multivariate_normal negative_binomial noncentral_chisquare "
    "noncentral_f normal pareto permutation poisson power rayleigh shuffle standard_cauchy standard_exponential "
    "standard_gamma standard_normal standard_t triangular uniform vonmises wald weibull zipf"
).split()


def default_rng(seed: Any = None, *, comm: Any = None) -> Generator:
    """A new counter-based :class:`Generator`.

    Collective over ``comm`` when ``seed`` is None: rank 0 reads 64 bits of
    ``os.urandom`` and broadcasts them, so every rank gets the same seed.
    Not collective otherwise, except in the debug mode (``SPMDARRAY_DEBUG=1``):
    there the ranks compare their seeds and raise
    :class:`~spmdarray.comm.SeedMismatch` on every rank when they differ.

    Parameters
    ----------
    seed : int, Generator, numpy.random.SeedSequence, numpy.random.BitGenerator, sequence of int or None
        A non-negative integer is the seed itself.  A spmdarray Generator is
        returned as is.  A NumPy SeedSequence (or a BitGenerator's
        ``seed_seq``, or a sequence of ints through ``SeedSequence``) gives
        the seed ``generate_state(1, uint64)[0]``: NumPy's seeding objects
        only choose the seed, they never fill arrays.
    comm : mpi4py communicator, optional
        Communicator the entropy is broadcast over (default: the default context).

    Returns
    -------
    Generator
        Element ``i`` of the ``k``-th draw is a function of ``(seed, k, i)``
        only, so results do not depend on the rank count.
    """
    if isinstance(seed, Generator):
        return seed
    if seed is not None:
        check_seed(comm, seed)
    if seed is None:
        return Generator(_entropy(comm))
    if isinstance(seed, np.random.BitGenerator):
        seed = seed.seed_seq
    if isinstance(seed, np.random.Generator):
        raise TypeError("default_rng: a numpy.random.Generator cannot seed a spmdarray Generator; pass an int")
    if isinstance(seed, np.random.SeedSequence):
        return Generator(int(seed.generate_state(1, np.uint64)[0]))
    if isinstance(seed, (list, tuple, np.ndarray)) and np.ndim(seed) == 1:
        return Generator(int(np.random.SeedSequence([int(s) for s in seed]).generate_state(1, np.uint64)[0]))
    return Generator(seed)


class RandomState:
    """NumPy's legacy ``RandomState`` API on a counter-based :class:`Generator`.

    Construction is collective over ``comm`` for ``seed=None`` (entropy
    broadcast from rank 0), not collective otherwise.  Methods are the
    Generator's (same algorithms, same rank-count invariance) under the
    legacy names and signatures; streams differ from NumPy's.

    Parameters
    ----------
    seed : int or None
    comm : mpi4py communicator, optional
    """

    def __init__(self, seed: Any = None, *, comm: Any = None) -> None:
        self._gen = Generator(_entropy(comm) if seed is None else default_rng(seed).seed)

    @classmethod
    def _of(cls, gen: Generator) -> RandomState:
        self = object.__new__(cls)
        self._gen = gen
        return self

    def __repr__(self) -> str:
        return f"RandomState(seed={self._gen.seed}, draw={self._gen.draw})"

    def seed(self, seed: Any = None, *, comm: Any = None) -> None:
        """Reseed and reset the draw counter (collective for ``seed=None``)."""
        g = Generator(_entropy(comm) if seed is None else default_rng(seed).seed)
        self._gen._seed, self._gen._draw = g._seed, g._draw

    def get_state(self, legacy: bool = True) -> Any:
        """The state: ``("spmdarray.counter", seed, draw)``, or a dict for ``legacy=False``.  Not collective."""
        if legacy:
            return (STATE_NAME, self._gen.seed, self._gen.draw)
        return {"bit_generator": STATE_NAME, "state": {"seed": self._gen.seed, "draw": self._gen.draw}}

    def set_state(self, state: Any) -> None:
        """Restore a state from :meth:`get_state` (tuple or dict).  Not collective."""
        if isinstance(state, dict):
            if state.get("bit_generator") != STATE_NAME:
                raise ValueError(f"state must be for a {STATE_NAME} generator, got {state.get('bit_generator')!r}")
            seed, draw = state["state"]["seed"], state["state"]["draw"]
        else:
            if not isinstance(state, tuple) or len(state) != 3 or state[0] != STATE_NAME:
                raise ValueError(f"state must be a tuple ({STATE_NAME!r}, seed, draw) as get_state returns")
            _, seed, draw = state
        g = Generator(seed, draw=draw)
        self._gen._seed, self._gen._draw = g._seed, g._draw

    def random_sample(self, size: Any = None, *, comm: Any = None):
        """Uniform floats in [0, 1) (:meth:`Generator.random`)."""
        return self._gen.random(size, comm=comm)

    random = random_sample

    def rand(self, *shape: int, comm: Any = None):
        """Uniform floats in [0, 1) of shape ``(d0, d1, ...)``; ``rand()`` is a scalar."""
        return self._gen.random(shape if shape else None, comm=comm)

    def randn(self, *shape: int, comm: Any = None):
        """Standard normals of shape ``(d0, d1, ...)``; ``randn()`` is a scalar."""
        return self._gen.standard_normal(shape if shape else None, comm=comm)

    def randint(self, low: Any, high: Any = None, size: Any = None, dtype: Any = int, *, comm: Any = None):
        """Integers in [low, high) (or [0, low)); see :meth:`Generator.integers` (same small bias)."""
        return self._gen._integers("randint", low, high, size, dtype, False, comm)

    def random_integers(self, low: Any, high: Any = None, size: Any = None, *, comm: Any = None):
        """Integers in [low, high] (or [1, low]); deprecated as in NumPy."""
        warnings.warn(
            "This function is deprecated. Please call randint(low, high + 1) instead", DeprecationWarning, stacklevel=2
        )
        if high is None:
            low, high = 1, low
        return self._gen._integers("random_integers", low, high, size, int, True, comm)

    def tomaxint(self, size: Any = None, *, comm: Any = None):
        """Integers in [0, int64 max]."""
        return self._gen._integers("tomaxint", 0, np.iinfo(np.int64).max, size, np.int64, True, comm)


def _delegate(name: str) -> Any:
    meth = getattr(Generator, name)

    @functools.wraps(meth)
    def method(self: RandomState, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._gen, name)(*args, **kwargs)

    return method


for _name in _SAME:
    setattr(RandomState, _name, _delegate(_name))


def _pkg() -> Any:
    return sys.modules[__name__.rsplit(".", 1)[0]]


def _global(comm: Any = None) -> Generator:
    """The global generator, seeded on first use from entropy broadcast over ``comm`` (collective then)."""
    pkg = _pkg()
    if pkg._state is None:
        pkg._state = Generator(_entropy(comm))
    return pkg._state


def seed(seed: Any = None, *, comm: Any = None) -> None:
    """Reseed the global generator of the legacy functions and reset its draw counter.

    ``seed`` is an int, a sequence of ints or a NumPy SeedSequence (as for
    :func:`default_rng`).
    Not collective for an integer seed.  Collective over ``comm`` for
    ``seed=None``: rank 0 draws entropy and broadcasts it.  Call it on every
    rank with the same arguments.
    """
    _pkg()._state = Generator(_entropy(comm) if seed is None else default_rng(seed).seed)


def get_state(legacy: bool = True) -> Any:
    """The global state, ``("spmdarray.counter", seed, draw)`` (see :meth:`RandomState.get_state`).

    Not collective (the same on every rank once seeded; the first use of a
    never-seeded global state draws entropy, which is collective).
    """
    return RandomState._of(_global()).get_state(legacy)


def set_state(state: Any) -> None:
    """Restore the global state from :func:`get_state`.  Not collective (no communication)."""
    g = Generator(0)
    RandomState._of(g).set_state(state)
    _pkg()._state = g


def get_bit_generator() -> Any:
    """Not available: the global generator is counter-based; its state is ``get_state()``.

    Not collective: raises NotImplementedError on every rank.
    """
    raise NotImplementedError(
        "spmdarray.random.get_bit_generator: the global generator is counter-based, not a NumPy BitGenerator; "
        "use get_state()/set_state() (the state is (seed, draw))"
    )


def set_bit_generator(bitgen: Any) -> None:
    """Not available: use :func:`seed` or :func:`set_state`.

    Not collective: raises NotImplementedError on every rank.
    """
    raise NotImplementedError(
        "spmdarray.random.set_bit_generator: a NumPy BitGenerator cannot drive distributed arrays; "
        "use seed() or set_state()"
    )


# Not implemented: the API coverage table counts them so.
get_bit_generator._spmdarray_stub = True  # type: ignore[attr-defined]
set_bit_generator._spmdarray_stub = True  # type: ignore[attr-defined]


def _module_function(name: str) -> Any:
    meth = getattr(RandomState, name)

    @functools.wraps(meth)
    def fn(*args: Any, **kwargs: Any) -> Any:
        return getattr(RandomState._of(_global(kwargs.get("comm"))), name)(*args, **kwargs)

    fn.__qualname__ = name
    fn.__doc__ = (meth.__doc__ or "") + "\n\nUses the global generator (see :func:`seed`)."
    return fn


LEGACY_FUNCTIONS = sorted(set(_SAME) | {"rand", "randn", "randint", "random_integers", "random_sample", "random"})
