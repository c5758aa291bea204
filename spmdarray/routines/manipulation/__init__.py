"""Shape changes, joining and splitting, padding, diagonals: NumPy's array manipulation routines."""
