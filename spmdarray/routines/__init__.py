"""NumPy's routines on distributed arrays, grouped as NumPy's reference groups them:
creation, manipulation, indexing, reductions, scans, sorting, logic and statistics.
Each module registers its functions with :mod:`spmdarray.core.registry`."""
