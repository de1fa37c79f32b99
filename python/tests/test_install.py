"""The package as installed: one version everywhere, the library and the
programs where pip put them (under TWINCACHE_TEST_INSTALLED=1, see conftest),
and numpy-only use (no torch imported)."""
import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig

import pytest

import twincache
from conftest import INSTALLED, REPO, package_env


def test_one_version():
    with open(os.path.join(REPO, "formats", "twincache_format.h")) as f:
        header = re.search(r'#define TWINCACHE_VERSION_STRING "([^"]+)"', f.read()).group(1)
    assert twincache.__version__ == header  # the library's own string
    if INSTALLED:
        assert importlib.metadata.version("twincache") == header


@pytest.mark.skipif(not INSTALLED, reason="the source-tree run uses the build tree's library")
def test_bundled_library_and_programs():
    pkg = os.path.dirname(os.path.abspath(twincache.__file__))
    assert os.path.dirname(twincache.library_path) == pkg
    scripts = sysconfig.get_path("scripts")
    for name in ("twincache-gen", "twincache-inspect", "twincache-train"):
        assert twincache.find_program(name) == os.path.join(scripts, name)
        out = subprocess.run([os.path.join(scripts, name), "--help"], capture_output=True,
                             text=True)
        assert out.returncode in (0, 2) and "usage" in (out.stdout + out.stderr).lower(), name


def test_numpy_only_import(cache_path):
    """import twincache and a numpy Loader work where torch cannot be imported."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "import twincache\n"
            f"L = twincache.Loader({cache_path!r}, batch_size=8, threads=1)\n"
            "b = next(iter(L)); assert type(b.base).__module__ == 'numpy', type(b.base)\n"
            "print(b.base.shape)\n")
    out = subprocess.run([sys.executable, "-c", code], env=package_env(), capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr


class _FakeAbi:
    """A stand-in for the library's twincache_abi_sizes: reports `facts`."""

    def __init__(self, facts):
        self.facts = facts

    def __call__(self, buf, n):
        for i in range(min(n, len(self.facts)) if buf is not None else 0):
            buf[i] = self.facts[i]
        return len(self.facts)


class _FakeLib:
    def __init__(self, facts):
        self.twincache_abi_sizes = _FakeAbi(facts)


def test_abi_check_names_another_version():
    """A library of another version found first (an older install on
    sys.path) is one clear ImportError, whether it reports fewer facts (it
    once raised IndexError), more, or a different one."""
    from twincache import _capi
    want = [v for _, v in _capi._EXPECTED]
    _capi._check_abi(_FakeLib(want), "/x/libtwincache.so")  # the same layout passes
    for facts, named in ((want[:-2], "none"), (want + [8], f"{len(want) + 1} facts"),
                         (want[:3] + [want[3] + 8] + want[4:], _capi._EXPECTED[3][0])):
        with pytest.raises(ImportError) as e:
            _capi._check_abi(_FakeLib(facts), "/x/libtwincache.so")
        msg = str(e.value)
        assert "/x/libtwincache.so" in msg and "another version" in msg and named in msg, msg
