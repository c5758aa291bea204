"""A one-line description of the machine, for the CSV and the report."""

from __future__ import annotations

import os
import platform


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def describe() -> str:
    """CPU model, core count, memory and OS, e.g. ``"Intel Xeon ..., 2 cores, 23 GiB, Linux 6.1"``.

    Not collective.
    """
    model = platform.processor() or platform.machine()
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = ""
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal"):
            mem = f", {int(line.split()[1]) / 2**20:.0f} GiB"
            break
    return f"{model}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}"
