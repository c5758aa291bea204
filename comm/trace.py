"""Communication attributed to the user's source line: :func:`comm_trace`.

While a trace is active, every point-to-point exchange and every collective
is charged to the first frame of the user's program (``file:line``) and to an
operation such as ``"halo exchange for add"`` or ``"allgather_blocks for
sum"``, with the messages and bytes this rank sent, the collectives it joined
and the time it spent waiting for them.  When no trace is active the hooks
cost one attribute check: ``TRACING.rec is None``.

Deferred (fused) operations post their messages when they are recorded, so
those messages, and the later wait for them, are charged to the line that
built the expression, not to the line that made it evaluate.

The operation name comes from the call stack, read only while tracing.
Higher layers name their frames with :func:`label_frames` (the elementwise
engine gives the ufunc, the fetch gives halo exchange or redistribute);
otherwise it is the name of the first spmdarray function the user called.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass

from .callsite import _internal
from .stats import COUNTERS

__all__ = ["TRACING", "CommTrace", "TraceRecord", "comm_trace", "label_frames", "traced", "note_exchange"]


class _Tracing:
    """The active trace: ``rec`` is a :class:`CommTrace` or None (tracing off)."""

    __slots__ = ("rec",)

    def __init__(self) -> None:
        self.rec = None


#: The hooks' single check: ``TRACING.rec is None`` when no trace is active.
TRACING = _Tracing()

#: code object -> function(frame) -> (part, text); part is "kind" or "op".
_LABELS: dict = {}
_PROTOCOL = {"__array_function__", "__array_ufunc__", "__array__", "wrapper", "<lambda>", "<module>"}


def label_frames(func, labeller) -> None:
    """Name the communication done inside ``func`` while tracing.  Not collective.

    ``labeller(frame)`` returns ``(part, text)``: part ``"kind"`` names the
    kind of message (``"halo exchange"``), part ``"op"`` the operation
    (``"add"``); the innermost frame of each part wins.  Called once per
    function, at import.
    """
    _LABELS[func.__code__] = labeller


@dataclass
class TraceRecord:
    """Communication charged to one source line and operation.

    Attributes
    ----------
    file, line, function : str, int, str
        The user's frame.
    operation : str
        What communicated, e.g. ``"halo exchange for add"``.
    messages, bytes : int
        Point-to-point messages and bytes this rank sent.
    messages_received, bytes_received : int
        Point-to-point messages and bytes this rank received.
    collectives, collective_bytes : int
        Collective calls this rank joined and the bytes it contributed.
    wait : float
        Seconds this rank spent waiting: in ``Waitall`` for its messages and
        inside the collectives.
    calls : int
        Exchanges and collective calls charged here.
    """

    file: str
    line: int
    function: str
    operation: str
    messages: int = 0
    bytes: int = 0
    messages_received: int = 0
    bytes_received: int = 0
    collectives: int = 0
    collective_bytes: int = 0
    wait: float = 0.0
    calls: int = 0

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"


def _site(kind: str) -> tuple:
    """Key ``(file, line, function, operation)`` of the current call."""
    f = sys._getframe(2)
    parts: dict = {}
    entry = None
    while f is not None:
        co = f.f_code
        if not _internal(co.co_filename):
            break
        lab = _LABELS.get(co)
        if lab is not None:
            part, text = lab(f)
            parts.setdefault(part, text)
        if co.co_name not in _PROTOCOL and not co.co_name.startswith("_"):
            entry = co.co_name
        elif co.co_name.startswith("__") and co.co_name not in _PROTOCOL:
            entry = co.co_name.strip("_")
        f = f.f_back
    where = ("?", 0, "?") if f is None else (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
    kind = parts.get("kind", kind)
    op = parts.get("op", entry)
    return (*where, kind if op is None or op == kind else f"{kind} for {op}")


def note_exchange(sends: list, recvs: list):
    """Charge a point-to-point exchange being posted; returns its key for the wait.  Not collective."""
    rec = TRACING.rec
    key = _site("point-to-point")
    r = rec._record(key)
    r.calls += 1
    for _, d in sends:
        if d.size:
            r.messages += 1
            r.bytes += d.nbytes
    for _, d in recvs:
        if d.size:
            r.messages_received += 1
            r.bytes_received += d.nbytes
    return (rec, key)


def note_wait(tag, seconds: float) -> None:
    """Charge ``seconds`` waited for the exchange that :func:`note_exchange` tagged.  Not collective."""
    rec, key = tag
    rec._record(key).wait += seconds


_FIELDS = (
    ("messages_sent", "messages"),
    ("bytes_sent", "bytes"),
    ("messages_received", "messages_received"),
    ("bytes_received", "bytes_received"),
    ("collectives", "collectives"),
    ("collective_bytes", "collective_bytes"),
)


def traced(func):
    """Wrap a blocking communication call (a collective, the I/O turn token).

    While tracing, what the call adds to the counters of ``comm.stats`` and
    the time it takes are charged to the caller's line; otherwise the wrapper
    costs one attribute check.
    """

    def wrapper(*args, **kwargs):
        rec = TRACING.rec
        if rec is None:
            return func(*args, **kwargs)
        key = _site(func.__name__)
        before = [COUNTERS[c] for c, _ in _FIELDS]
        t0 = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            r = rec._record(key)
            r.wait += time.perf_counter() - t0
            r.calls += 1
            for (c, f), b in zip(_FIELDS, before):
                setattr(r, f, getattr(r, f) + COUNTERS[c] - b)

    wrapper.__name__ = func.__name__
    wrapper.__qualname__ = func.__qualname__
    wrapper.__doc__ = func.__doc__
    wrapper.__wrapped__ = func
    return wrapper


class CommTrace:
    """This rank's communication inside a ``with`` block, by source line.  Not collective.

    Use :func:`comm_trace`.  After the block, :attr:`records` lists a
    :class:`TraceRecord` per ``(file:line, operation)``, most bytes first;
    :meth:`table` formats them, :meth:`as_dict` gives plain data, and
    :meth:`plot` draws bytes and waiting time per line.
    """

    def __init__(self) -> None:
        self._by_key: dict = {}
        self._outer = None

    def __enter__(self) -> CommTrace:
        self._outer = TRACING.rec
        TRACING.rec = self
        return self

    def __exit__(self, *exc) -> None:
        TRACING.rec = self._outer

    def _record(self, key) -> TraceRecord:
        r = self._by_key.get(key)
        if r is None:
            r = self._by_key[key] = TraceRecord(*key)
        return r

    @property
    def records(self) -> list[TraceRecord]:
        """One record per (source line, operation), most bytes (point-to-point plus collective) first."""
        return sorted(self._by_key.values(), key=lambda r: (-(r.bytes + r.collective_bytes), -r.wait, r.where))

    def totals(self) -> dict[str, int]:
        """Sums over all records, named as :class:`~spmdarray.comm.CommStats` names them."""
        rs = self._by_key.values()
        return {
            "messages_sent": sum(r.messages for r in rs),
            "bytes_sent": sum(r.bytes for r in rs),
            "messages_received": sum(r.messages_received for r in rs),
            "bytes_received": sum(r.bytes_received for r in rs),
            "collectives": sum(r.collectives for r in rs),
            "collective_bytes": sum(r.collective_bytes for r in rs),
        }

    def as_dict(self) -> list[dict]:
        """The records as a list of plain dictionaries (for JSON), most bytes first."""
        return [{**asdict(r), "where": r.where} for r in self.records]

    def table(self, width: int = 40) -> str:
        """The records as a text table, most bytes first (``file:line`` shortened to ``width``)."""
        head = (
            f"{'file:line':<{width}} {'operation':<32} {'messages':>8} {'bytes':>12} {'collectives':>11} {'wait ms':>9}"
        )
        lines = [head, "-" * len(head)]
        for r in self.records:
            w = r.where if len(r.where) <= width else "..." + r.where[-(width - 3) :]
            lines.append(
                f"{w:<{width}} {r.operation[:32]:<32} {r.messages:>8} {r.bytes + r.collective_bytes:>12} "
                f"{r.collectives:>11} {r.wait * 1e3:>9.3f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def plot(self, path: str, top: int = 20) -> None:
        """Save a bar chart of bytes and waiting time per source line to ``path``.  Not collective.

        Needs matplotlib (``ImportError`` naming it otherwise).  Lines with the
        same ``file:line`` are summed over their operations; ``top`` lines with
        the most bytes are shown.
        """
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError("CommTrace.plot needs matplotlib: pip install matplotlib") from e
        per: dict = {}
        for r in self._by_key.values():
            b, w = per.get(r.where, (0, 0.0))
            per[r.where] = (b + r.bytes + r.collective_bytes, w + r.wait)
        rows = sorted(per.items(), key=lambda kv: -kv[1][0])[:top]
        names = [k.rsplit("/", 1)[-1] for k, _ in rows]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 0.4 * len(rows) + 1.5), sharey=True)
        ax1.barh(names, [v[0] for _, v in rows])
        ax1.set_xlabel("bytes sent")
        ax2.barh(names, [v[1] * 1e3 for _, v in rows], color="tab:orange")
        ax2.set_xlabel("time waiting (ms)")
        ax1.invert_yaxis()
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)


def comm_trace() -> CommTrace:
    """Attribute this rank's communication to source lines inside a ``with`` block.  Not collective.

    Examples
    --------
    >>> with comm_trace() as t:
    ...     pass
    >>> t.records, t.totals()["bytes_sent"]
    ([], 0)

    See Also
    --------
    spmdarray.comm_stats : the totals only.
    """
    return CommTrace()
