"""The array and its engine: storage, messages in flight, fetching, dtypes, elementwise
evaluation, operators, NumPy's protocols and conversion.  ``core.array`` sits below
``spmdarray.fusion``; the engine modules above it.  Internal: users import ``spmdarray``."""
