"""Shallow-water equations, two-step Lax-Wendroff, reflecting walls: a NumPy program.

The classic finite-volume scheme of Moler's "waterwave" (the form Python HPC
benchmarks use): three fields ``H`` (height), ``U`` and ``V`` (momenta) on an
``(n + 2) x (n + 2)`` grid with a ghost frame, a drop of water as the initial
condition.  Each step copies the walls into the frame, computes the x and y
half steps on staggered grids (``(n + 1) x n`` and ``n x (n + 1)``), then
updates the interior: about 120 whole-array operations on shifted views.  The
code takes the array namespace as its first argument and is the same for
``numpy`` and ``spmdarray``.
"""

from __future__ import annotations

G = 9.8
DT = 0.02
DX = DY = 1.0


def setup(np, n: int) -> dict:
    """The fields of an ``n x n`` interior: still water of height 1 and a drop of height 2."""
    H = np.ones((n + 2, n + 2))
    U = np.zeros((n + 2, n + 2))
    V = np.zeros((n + 2, n + 2))
    k = max(n // 8, 1)
    lo = n // 2 - k // 2 + 1
    H[lo : lo + k, lo : lo + k] = 2.0
    return {"H": H, "U": U, "V": V}


def step(np, s: dict) -> None:
    """One time step, in place."""
    H, U, V = s["H"], s["U"], s["V"]
    g, dt, dx, dy = G, DT, DX, DY
    # Reflecting walls: the ghost frame mirrors the first interior row or column.
    H[:, 0] = H[:, 1]
    U[:, 0] = U[:, 1]
    V[:, 0] = -V[:, 1]
    H[:, -1] = H[:, -2]
    U[:, -1] = U[:, -2]
    V[:, -1] = -V[:, -2]
    H[0, :] = H[1, :]
    U[0, :] = -U[1, :]
    V[0, :] = V[1, :]
    H[-1, :] = H[-2, :]
    U[-1, :] = -U[-2, :]
    V[-1, :] = V[-2, :]

    # First half step, x direction: on the (n + 1) x n grid between rows.
    Hx = (H[1:, 1:-1] + H[:-1, 1:-1]) / 2 - dt / (2 * dx) * (U[1:, 1:-1] - U[:-1, 1:-1])
    Ux = (U[1:, 1:-1] + U[:-1, 1:-1]) / 2 - dt / (2 * dx) * (
        (U[1:, 1:-1] ** 2 / H[1:, 1:-1] + g / 2 * H[1:, 1:-1] ** 2)
        - (U[:-1, 1:-1] ** 2 / H[:-1, 1:-1] + g / 2 * H[:-1, 1:-1] ** 2)
    )
    Vx = (V[1:, 1:-1] + V[:-1, 1:-1]) / 2 - dt / (2 * dx) * (
        U[1:, 1:-1] * V[1:, 1:-1] / H[1:, 1:-1] - U[:-1, 1:-1] * V[:-1, 1:-1] / H[:-1, 1:-1]
    )
    # First half step, y direction: on the n x (n + 1) grid between columns.
    Hy = (H[1:-1, 1:] + H[1:-1, :-1]) / 2 - dt / (2 * dy) * (V[1:-1, 1:] - V[1:-1, :-1])
    Uy = (U[1:-1, 1:] + U[1:-1, :-1]) / 2 - dt / (2 * dy) * (
        V[1:-1, 1:] * U[1:-1, 1:] / H[1:-1, 1:] - V[1:-1, :-1] * U[1:-1, :-1] / H[1:-1, :-1]
    )
    Vy = (V[1:-1, 1:] + V[1:-1, :-1]) / 2 - dt / (2 * dy) * (
        (V[1:-1, 1:] ** 2 / H[1:-1, 1:] + g / 2 * H[1:-1, 1:] ** 2)
        - (V[1:-1, :-1] ** 2 / H[1:-1, :-1] + g / 2 * H[1:-1, :-1] ** 2)
    )

    # Second half step: the interior from the fluxes of both half steps.
    H[1:-1, 1:-1] -= dt / dx * (Ux[1:, :] - Ux[:-1, :]) + dt / dy * (Vy[:, 1:] - Vy[:, :-1])
    U[1:-1, 1:-1] -= dt / dx * (
        (Ux[1:, :] ** 2 / Hx[1:, :] + g / 2 * Hx[1:, :] ** 2) - (Ux[:-1, :] ** 2 / Hx[:-1, :] + g / 2 * Hx[:-1, :] ** 2)
    ) + dt / dy * (Vy[:, 1:] * Uy[:, 1:] / Hy[:, 1:] - Vy[:, :-1] * Uy[:, :-1] / Hy[:, :-1])
    V[1:-1, 1:-1] -= dt / dx * (Ux[1:, :] * Vx[1:, :] / Hx[1:, :] - Ux[:-1, :] * Vx[:-1, :] / Hx[:-1, :]) + dt / dy * (
        (Vy[:, 1:] ** 2 / Hy[:, 1:] + g / 2 * Hy[:, 1:] ** 2) - (Vy[:, :-1] ** 2 / Hy[:, :-1] + g / 2 * Hy[:, :-1] ** 2)
    )


def result(np, s: dict) -> dict:
    """The fields, as NumPy arrays (collective on spmdarray: a gather, for the check only)."""
    import numpy

    return {k: numpy.asarray(s[k]) for k in ("H", "U", "V")}
