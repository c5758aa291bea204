"""Package list: every package under ``spmdarray/`` (found, so none can be left out), plus
``decomposition/`` and ``comm/`` installed as ``spmdarray.decomposition`` and ``spmdarray.comm``
(``package_dir`` in setup.cfg).  Everything else is in setup.cfg."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["spmdarray", "spmdarray.*"]), "spmdarray.decomposition", "spmdarray.comm"])
