"""Where local blocks live: NumPy on the host or CuPy on a GPU.  Above ``comm`` and ``settings``;
below everything that touches a block."""
