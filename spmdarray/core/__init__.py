"""The array and what it stands on: the function registry, thunks (stored or deferred),
messages in flight, storage, operators, ``ndarray``, fetching operands and checking dtypes.
Below ``spmdarray.fusion`` and ``spmdarray.engine``; it reaches them only through
``core.registry``.  Internal: users import ``spmdarray``."""
