"""Package list: every package under ``spmdarray/`` (found, so none can be left out), plus
``decomposition/`` and ``comm/`` installed as ``spmdarray.decomposition`` and ``spmdarray.comm``
(``package_dir`` in setup.cfg), and the compiled lane.  Everything else is in setup.cfg."""

from setuptools import Extension, find_packages, setup

# The compiled lane (spmdarray/core/_lane.c): optional, so that a machine without a C
# compiler still installs spmdarray, which then runs the Python lane alone (the same results).
lane = Extension(
    "spmdarray.core._lane",
    ["spmdarray/core/_lane.c"],
    depends=["spmdarray/core/_lane_rows.h"],  # (included by _lane.c; the sdist carries it)
    optional=True,
)

setup(
    packages=[*find_packages(include=["spmdarray", "spmdarray.*"]), "spmdarray.decomposition", "spmdarray.comm"],
    ext_modules=[lane],
)
