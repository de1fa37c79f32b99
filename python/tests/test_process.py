"""Issue 16, defect 4: a forked child that drops, closes or exits with an
inherited Loader or Cache does not hang (its threads are the parent's); using
one in the child is a clear error; sending a Loader to another process
(spawn-context DataLoader workers pickle it) gives the same clear message."""
import pickle
import subprocess
import sys

import pytest
import torch

import twincache
from conftest import package_env

_CHILD = r"""
import gc, os, sys
import twincache
L = twincache.Loader(sys.argv[1], batch_size=8, threads=2)
c = twincache.Cache(sys.argv[1])
b = L.next_batch()
g = c[3]
pid = os.fork()
if pid == 0:
    import signal
    signal.alarm(30)  # a hang ends the child (SIGALRM) instead of the test run
    what = sys.argv[2]
    if what == "use":
        try:
            L.next_batch()
            sys.exit(3)
        except twincache.Error as e:
            assert "another process" in str(e), e
        try:
            c[3]
            sys.exit(4)
        except twincache.Error as e:
            assert "another process" in str(e), e
    elif what == "close":
        L.close(); c.close()
    elif what == "drop":
        del L, c, b
        gc.collect()
    sys.exit(0)  # "exit": the interpreter's own teardown drops them
_, status = os.waitpid(pid, 0)
assert L.next_batch().seq == 1 and c[3].n_nodes == g.n_nodes  # the parent's are untouched
print("child", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.parametrize("what", ["drop", "close", "exit", "use"])
def test_fork_child(cache_path, what):
    out = subprocess.run([sys.executable, "-c", _CHILD, cache_path, what], env=package_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["child", "0"], out.stdout + out.stderr


def test_not_picklable_clear_message(cache_path):
    with twincache.Loader(cache_path, batch_size=8, threads=1) as L:
        with pytest.raises(twincache.InvalidArgument) as e:
            pickle.dumps(L)
        assert "num_workers=0" in str(e.value) and "process" in str(e.value)
        dl = torch.utils.data.DataLoader(L, batch_size=None, num_workers=1,
                                         multiprocessing_context="spawn")
        with pytest.raises(twincache.InvalidArgument) as e:
            next(iter(dl))
        assert "num_workers=0" in str(e.value)
