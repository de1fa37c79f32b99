"""Fixtures of the binding's tests. ctest passes the paths through the
environment (python/tests.cmake); run by hand, they default to build/rel."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("TWINCACHE_BIN_DIR", os.path.join(REPO, "build", "rel"))
os.environ.setdefault("TWINCACHE_LIBRARY", os.path.join(BUILD, "libtwincache.so"))
sys.path.insert(0, os.path.join(REPO, "python"))


def _env_path(name, default):
    return os.environ.get(name, default)


@pytest.fixture(scope="session")
def cache_path():
    """600 graphs, 3..7 nodes, 8 samples, one do() per node (tests/loader's cache)."""
    p = _env_path("TWINCACHE_TEST_CACHE", os.path.join(BUILD, "test-tmp", "loader-cache"))
    if not os.path.isdir(p):
        subprocess.run([_env_path("TWINCACHE_GEN", os.path.join(BUILD, "gen", "twincache-gen")),
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
    return _env_path("TWINCACHE_INSPECT", os.path.join(BUILD, "tools", "twincache-inspect"))


@pytest.fixture(scope="session")
def order_dump_exe():
    return _env_path("TWINCACHE_ORDER_DUMP", os.path.join(BUILD, "twincache_order_dump"))
