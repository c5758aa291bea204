"""The engine: elementwise evaluation, assignment and NumPy protocol dispatch (above ``core`` and ``fusion``)."""
