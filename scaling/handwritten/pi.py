"""Monte-Carlo pi: each rank draws its share of points, one ``allreduce`` of the counts."""

from __future__ import annotations

import numpy

from .common import block_range, new_state, rng


def setup(comm, d: tuple[int]) -> dict:
    """This rank's share of the points and its generator."""
    s = new_state(comm)
    lo, hi = block_range(d[0], comm.Get_size(), comm.Get_rank())
    s.update(n=d[0], local=hi - lo, rng=rng(comm, 2026), pi=0.0)
    return s


def step(s: dict) -> None:
    """Draw, test, count locally, then sum the counts."""
    x = s["rng"].random(s["local"])
    y = s["rng"].random(s["local"])
    hits = int(numpy.count_nonzero(x * x + y * y < 1.0))
    s["coll"] += 1
    s["pi"] = 4.0 * s["comm"].allreduce(hits) / s["n"]


def result(s: dict) -> float:
    """The last estimate of pi."""
    return s["pi"]
