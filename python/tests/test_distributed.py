"""Two processes under torch.distributed (gloo, CPU): each reads its shard
(rank and world size taken from the process group), the shards are disjoint
and cover the epoch, and the all-reduced model is the same on both ranks."""
import json
import os
import socket
import subprocess
import sys

import pytest
import torch.distributed as dist
from conftest import package_env

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="no gloo")
def test_two_ranks_gloo(cache_path):
    port = str(free_port())
    procs = []
    for r in range(2):
        env = dict(package_env(), MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(r),
                   WORLD_SIZE="2", OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "dist_worker.py"),
                                       cache_path], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r["rank"] for r in results) == [0, 1]
    assert all(r["world"] == 2 and r["steps"] > 0 for r in results)
    a, b = (set(r["ids"]) for r in results)
    assert a.isdisjoint(b) and sorted(a | b) == list(range(600))
    assert results[0]["weights"] == results[1]["weights"]
