"""Check a built sdist and wheel against the source tree they were built from.

::

    python .ci/check_dist.py SOURCE DIST

``SOURCE`` is the tree that ``python -m build`` was given (tests/run_all.sh gives it a
copy of the files git sees, as a clean clone has them); ``DIST`` holds the one
``.tar.gz`` and the one ``.whl`` it made.

The packages of the source tree are every folder under ``spmdarray/`` that holds a
``.py`` file, and every folder that setup.cfg's ``package_dir`` maps into ``spmdarray``
(``spmdarray.comm = comm``), with their subfolders.  The wheel must hold each of them
with all of its files, and nothing besides them and its ``.dist-info``, except one compiled
module (``name.cpython-311-x86_64-linux-gnu.so``) for each C source ``name.c``, which it must
hold too (the extension is optional in setup.py, so that a machine without a compiler
still installs; here, where the wheel is tested, it must have been built).  The sdist must
hold the same source files and what a build reads: pyproject.toml, setup.py, setup.cfg
and the files setup.cfg names with ``file:``.  Each problem is one line on stderr, and
the exit status is 1.
"""

import configparser
import os
import sys
import tarfile
import zipfile

ROOT_PACKAGE = "spmdarray"
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo")


def read_setup_cfg(source):
    cfg = configparser.ConfigParser(interpolation=None)
    if not cfg.read(os.path.join(source, "setup.cfg")):
        sys.exit(f"check_dist.py: no setup.cfg in {source}")
    return cfg


def package_roots(cfg):
    """``{package: source folder}`` for spmdarray and each package that package_dir maps into it."""
    mapping = {}
    for line in cfg.get("options", "package_dir", fallback="").splitlines():
        if "=" in line:
            name, folder = (part.strip() for part in line.split("=", 1))
            mapping[name] = folder
    base = mapping.pop("", "")
    roots = {ROOT_PACKAGE: os.path.join(base, *ROOT_PACKAGE.split("."))}
    for name, folder in mapping.items():
        if name == ROOT_PACKAGE or name.startswith(ROOT_PACKAGE + "."):
            roots[name] = folder
    return roots


def source_files(source, roots):
    """``{installed path: source path}`` of every file in the package folders (paths with /)."""
    files = {}
    for package, folder in roots.items():
        top = os.path.join(source, folder)
        if not os.path.isdir(top):
            sys.exit(f"check_dist.py: {package}'s folder {folder}/ does not exist in {source}")
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
            rel = os.path.relpath(dirpath, top)
            installed_dir = package.replace(".", "/") + ("" if rel == "." else "/" + rel.replace(os.sep, "/"))
            for name in filenames:
                if not name.endswith(SKIP_SUFFIXES):
                    src = os.path.relpath(os.path.join(dirpath, name), source)
                    files[f"{installed_dir}/{name}"] = src.replace(os.sep, "/")
    return files


def packages_of(paths):
    """Dotted names of the folders among ``paths`` that hold a ``.py`` file."""
    return {p.rsplit("/", 1)[0].replace("/", ".") for p in paths if p.endswith(".py") and "/" in p}


def build_inputs(cfg):
    """Files a build of the sdist reads: the build configuration and setup.cfg's ``file:`` entries."""
    needed = {"pyproject.toml", "setup.py", "setup.cfg"}
    for section in cfg.sections():
        for value in cfg[section].values():
            value = value.strip()
            if value.startswith("file:"):
                needed.update(f.strip() for f in value[len("file:") :].split(",") if f.strip())
    return needed


def only(dist, suffix):
    found = sorted(f for f in os.listdir(dist) if f.endswith(suffix))
    if len(found) != 1:
        sys.exit(f"check_dist.py: expected one {suffix} in {dist}, found {found or 'none'}")
    return os.path.join(dist, found[0])


def check_wheel(wheel, expected, problems):
    names = [n for n in zipfile.ZipFile(wheel).namelist() if not n.endswith("/")]
    dist_info = {n for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    content = set(names) - dist_info
    missing_packages = packages_of(expected) - packages_of(content)
    for package in sorted(missing_packages):
        folder = next(os.path.dirname(src) for dst, src in expected.items() if packages_of([dst]) == {package})
        problems.append(
            f"wheel: package {package} (source folder {folder}/) is missing: setup.py must list it "
            f"(find_packages finds only folders with an __init__.py under {ROOT_PACKAGE}/, "
            "and a folder elsewhere also needs package_dir in setup.cfg)"
        )
    for path in sorted(set(expected) - content):
        if path.endswith(".py") and packages_of([path]) <= missing_packages:
            continue  # reported with its package
        data = "" if path.endswith(".py") else " (a data file: add it to package_data in setup.cfg)"
        problems.append(f"wheel: {path} (from {expected[path]}) is missing{data}")
    compiled = {p for p in content - set(expected) if p.endswith((".so", ".pyd"))}
    matched = set()
    for path in sorted(p for p in expected if p.endswith(".c")):
        stem = path[: -len(".c")]
        built = {p for p in compiled if p.startswith(stem + ".") and "/" not in p[len(stem) :]}
        if not built:
            problems.append(f"wheel: {path} was not compiled (no {stem}.*.so: see the extension's build output)")
        matched |= built
    for path in sorted(content - set(expected) - matched):
        problems.append(f"wheel: {path} is not in the source tree it was built from")


def check_sdist(sdist, expected, needed, problems):
    with tarfile.open(sdist) as tar:
        names = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile() and "/" in m.name}
    for path in sorted(needed | {"PKG-INFO"}):
        if path not in names:
            problems.append(f"sdist: {path} is missing, and a build from the sdist needs it (add it to MANIFEST.in)")
    for src in sorted(set(expected.values()) - names):
        problems.append(f"sdist: {src} is missing (add it to MANIFEST.in, or its package to setup.py)")


def main(source, dist):
    cfg = read_setup_cfg(source)
    roots = package_roots(cfg)
    expected = source_files(source, roots)
    wheel, sdist = only(dist, ".whl"), only(dist, ".tar.gz")
    problems = []
    check_wheel(wheel, expected, problems)
    check_sdist(sdist, expected, build_inputs(cfg), problems)
    if problems:
        for line in problems:
            print(f"check_dist.py: {line}", file=sys.stderr)
        print(f"check_dist.py: {len(problems)} problem(s) with {os.path.basename(wheel)} and/or "
              f"{os.path.basename(sdist)}, built from {source}", file=sys.stderr)  # fmt: skip
        return 1
    packages = sorted(packages_of(expected))
    mapped = ", ".join(f"{folder}/ as {name}" for name, folder in roots.items() if name != ROOT_PACKAGE)
    print(f"check_dist.py: {os.path.basename(wheel)} holds all {len(packages)} packages ({len(expected)} files) "
          f"of the source tree ({mapped}): {', '.join(packages)}")  # fmt: skip
    print(f"check_dist.py: {os.path.basename(sdist)} holds the same sources and {', '.join(sorted(build_inputs(cfg)))}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
