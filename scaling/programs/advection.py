"""2-D advection-diffusion of a tracer, first-order upwind and a 5-point Laplacian: a NumPy program.

A tracer ``c`` on an ``(n + 2) x (n + 2)`` grid with a fixed (zero) frame is
carried by a steady rotating velocity field ``(u, v)`` and diffuses.  The
time step follows the CFL condition from the largest speed (a full reduction
each step, as such programs compute it), the upwind differences pick their
side with ``numpy.where`` on the velocity's sign, and the tracer's mass is a
second reduction each step.  The code takes the array namespace as its first
argument and is the same for ``numpy`` and ``spmdarray``.
"""

from __future__ import annotations

D = 1e-3  # diffusivity
CFL = 0.4


def setup(np, n: int) -> dict:
    """A Gaussian blob of tracer off centre in a solid-body rotation, grid spacing ``1 / n``."""
    h = 1.0 / n
    x = (np.arange(n + 2) - 0.5) * h
    X = x[:, None] + np.zeros((1, n + 2))
    Y = x[None, :] + np.zeros((n + 2, 1))
    c = np.exp(-((X - 0.3) ** 2 + (Y - 0.5) ** 2) / 0.01)
    c[0, :] = 0.0
    c[-1, :] = 0.0
    c[:, 0] = 0.0
    c[:, -1] = 0.0
    u = -(Y[1:-1, 1:-1] - 0.5) * 2.0
    v = (X[1:-1, 1:-1] - 0.5) * 2.0
    return {"c": c, "u": u, "v": v, "h": h, "t": 0.0, "mass": []}


def step(np, s: dict) -> None:
    """One time step, in place; appends the tracer's mass to ``s["mass"]``."""
    c, u, v, h = s["c"], s["u"], s["v"], s["h"]
    speed = np.abs(u).max() + np.abs(v).max()
    dt = min(CFL * h / speed, 0.2 * h * h / D)
    mid = c[1:-1, 1:-1]
    west, east = c[1:-1, :-2], c[1:-1, 2:]
    south, north = c[:-2, 1:-1], c[2:, 1:-1]
    dcdx = np.where(u > 0, mid - south, north - mid) / h
    dcdy = np.where(v > 0, mid - west, east - mid) / h
    lap = (north + south + east + west - 4.0 * mid) / (h * h)
    mid[...] = mid + dt * (D * lap - u * dcdx - v * dcdy)
    s["t"] += dt
    s["mass"].append(float(mid.sum()) * h * h)


def result(np, s: dict) -> dict:
    """The tracer (a NumPy array: collective on spmdarray) and its mass history."""
    import numpy

    return {"c": numpy.asarray(s["c"]), "mass": numpy.asarray(s["mass"])}
