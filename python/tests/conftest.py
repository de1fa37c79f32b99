"""Fixtures of the binding's tests. Two ways to run them:
  - ctest (python/tests.cmake): the package from the source tree
    (python/twincache), the library and programs of the build tree, passed
    through the environment; run by hand, they default to build/release.
  - TWINCACHE_TEST_INSTALLED=1 (tools/run-tests.sh, the torch 2 venv): the
    package as pip installed it — nothing from the source tree is put on
    sys.path, the library and programs are the wheel's, so a file missing
    from the wheel fails here."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TWINCACHE_BIN_DIR", os.path.join(REPO, "build", "release"))
INSTALLED = os.environ.get("TWINCACHE_TEST_INSTALLED") == "1"
if INSTALLED:
    for var in ("TWINCACHE_LIBRARY", "TWINCACHE_GEN", "TWINCACHE_INSPECT", "TWINCACHE_IMPORT"):
        os.environ.pop(var, None)  # the wheel's own, found as a user's would be
else:
    os.environ.setdefault("TWINCACHE_LIBRARY", os.path.join(BUILD, "libtwincache.so"))
    sys.path.insert(0, os.path.join(REPO, "python"))

import twincache  # noqa: E402

if INSTALLED and os.path.dirname(os.path.abspath(twincache.__file__)) == \
        os.path.join(REPO, "python", "twincache"):
    raise RuntimeError(f"TWINCACHE_TEST_INSTALLED=1 but twincache was imported from the source "
                       f"tree ({twincache.__file__}): pip install the package first")


def package_env():
    """Environment for a child Python that must import the same package."""
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.path.join(REPO, "python")
    return env


def program(name, build_path):
    """A program of the build tree (ctest) or of the installed package."""
    if INSTALLED:
        return twincache.find_program(name)
    return os.environ.get("TWINCACHE_" + name.split("-", 1)[1].upper(), build_path)


def _env_path(name, default):
    return os.environ.get(name, default)


@pytest.fixture(scope="session")
def cache_path():
    """600 graphs, 3..7 nodes, 8 samples, one do() per node (tests/loader's cache)."""
    p = _env_path("TWINCACHE_TEST_CACHE", os.path.join(BUILD, "test-tmp", "loader-cache"))
    if not os.path.isdir(p):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        subprocess.run([program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen")),
                        "--out", p, "--graphs", "600", "--nodes", "3:7", "--samples", "8",
                        "--chunk-graphs", "64", "--seed", "3", "--threads", "2", "--quiet"],
                       check=True)
    return p


@pytest.fixture(scope="session")
def tmp_root():
    """A fresh directory per session: caches left by an earlier build (another
    format version) must not leak into this run."""
    p = _env_path("TWINCACHE_TEST_TMP", os.path.join(BUILD, "test-tmp", "python"))
    shutil.rmtree(p, ignore_errors=True)
    os.makedirs(p)
    return p


@pytest.fixture(scope="session")
def inspect_exe():
    return program("twincache-inspect", os.path.join(BUILD, "tools", "twincache-inspect"))


@pytest.fixture(scope="session")
def import_exe():
    return program("twincache-import", os.path.join(BUILD, "import", "twincache-import"))


@pytest.fixture(scope="session")
def order_dump_exe():
    return _env_path("TWINCACHE_ORDER_DUMP", os.path.join(BUILD, "twincache_order_dump"))


@pytest.fixture(scope="session")
def gen_exe():
    """twincache-gen: the build tree's (ctest) or the installed package's, as
    every other program; never a reason to skip."""
    return program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
