"""Write docs/settings.md, the table of every setting of ``spmdarray.config`` (``--check``: fail if stale).

python docs/gen_settings.py           # rewrite docs/settings.md
python docs/gen_settings.py --check   # exit 1 when docs/settings.md differs
"""

from __future__ import annotations

import os
import sys

from spmdarray.settings import FIELDS

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "settings.md")

HEAD = """# Settings

Every setting of spmdarray lives in one object, `spmdarray.config`. Each has a
default, an environment variable read **once**, when spmdarray is imported
(where one exists), and a scoped override:

```python
import spmdarray as sp

x = sp.arange(10.0)

sp.config.set(fuse_min_size=0)        # from now on
with sp.config.set(fuse=False):       # only inside the block
    y = 2 * x + 1
print(sp.config.fuse_min_size)        # read a value
```

`config.set` raises `TypeError` for an unknown name and lists the valid ones;
`config.x = v` is the same as `config.set(x=v)`. Changing an environment variable
after `import spmdarray` changes nothing: use `config.set`.

**Agreed** settings decide what is communicated, so every rank must use the same
value. When a communicator context is made (the first array on a communicator),
the ranks compare one 64-bit hash of the agreed settings in one `Allreduce`; if
any differs, every rank raises `spmdarray.settings.SettingsDisagree` (a
`ValueError`) naming the settings and each rank's value. Change agreed settings
on every rank alike.

This table is generated from `spmdarray.settings.FIELDS` by `python docs/gen_settings.py`.

| area | setting | environment variable | default | agreed | meaning |
|---|---|---|---|---|---|
"""

TAIL = """
The test harness reads three more variables, which are not library settings:
`SPMDARRAY_MPI_TIMEOUT` (seconds per `mpiexec` run of `tests/run_all.sh`),
`SPMDARRAY_TEST_TIMEOUT` (seconds per test) and `SPMDARRAY_PHDF5` (`0` skips the
parallel-HDF5 step). The library's own wait limit is `hang_timeout` above.
"""


def table() -> str:
    rows = []
    for name, f in FIELDS.items():
        env = f"`{f.env}`" if f.env else "(none)"
        agreed = "yes" if f.agreed else "no"
        rows.append(f"| {f.group} | `{name}` | {env} | `{f.default!r}` | {agreed} | {f.doc} |")
    return HEAD + "\n".join(rows) + "\n" + TAIL


def main() -> int:
    text = table()
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as fh:
            if fh.read() != text:
                print("docs/settings.md is out of date: run python docs/gen_settings.py", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
