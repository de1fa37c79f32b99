"""Local mode from Python (issue 29): Loader(path, local=M) with each rank
opening its node's directory, which holds exactly the shards k, k+M, ... of a
set; across all ranks every graph once per epoch, equal batch counts, a
resume from state_dict() continuing the same batches, and C's refusals passed
through with the Python keyword."""
import os
import shutil

import numpy as np
import pytest

import twincache

ARGS = dict(graphs=90, nodes=(3, 6), samples=4, chunk_graphs=8, seed=6, threads=2, progress=False)
NODES, PER_NODE = 2, 2


@pytest.fixture(scope="module")
def node_dirs(tmp_root):
    base = os.path.join(tmp_root, "local")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    for i in range(4):
        twincache.generate(os.path.join(base, "set"), shard=f"{i}/4", **ARGS)
    dirs = [os.path.join(base, f"node{k}") for k in range(NODES)]
    for i in range(4):  # node k's local disk: shards k, k + 2
        name = f"shard-{i:05d}-of-00004"
        os.makedirs(dirs[i % NODES], exist_ok=True)
        shutil.move(os.path.join(base, "set", name), os.path.join(dirs[i % NODES], name))
    return dirs


def loaders(dirs, state=None, **kw):
    out = []
    for r in range(NODES * PER_NODE):
        l = twincache.Loader(dirs[r // PER_NODE], batch_size=5, epochs=2, seed=3, rank=r,
                             world_size=NODES * PER_NODE, local=NODES, output="numpy", **kw)
        if state is not None:
            l.load_state_dict(state)
        out.append(l)
    return out


def read(ls, steps=None):
    """[step][rank] = (graph ids with -1 for padding, base bytes)."""
    out = []
    while steps is None or len(out) < steps:
        step = [l.next_batch() for l in ls]
        assert all(b is None for b in step) or None not in step  # the ranks end together
        if step[0] is None:
            break
        out.append([(np.where(b.valid.astype(bool), b.graph_id.astype(np.int64), -1), b.base.copy())
                    for b in step])
    return out


def test_worlds_known_on_a_node(node_dirs):
    """A node's folder holds only its shards (no whole set opens there): the
    Loader still names the set's worlds, read from one of its shards."""
    with twincache.Loader(node_dirs[1], batch_size=5, rank=2, world_size=4, local=NODES) as ld:
        assert ld.worlds == "twin"


def test_each_graph_once_per_epoch(node_dirs):
    ls = loaders(node_dirs)
    assert len({len(l) for l in ls}) == 1
    bpe = len(ls[0])
    steps = read(ls)
    for l in ls:
        l.close()
    assert len(steps) == 2 * bpe
    for e in range(2):
        ids = np.concatenate([ids for s in steps[e * bpe:(e + 1) * bpe] for ids, _ in s])
        ids = np.sort(ids[ids >= 0])
        np.testing.assert_array_equal(ids, np.arange(90))


def test_resume_continues(node_dirs):
    first = loaders(node_dirs)
    whole = read(first)
    for l in first:
        l.close()
    ls = loaders(node_dirs)
    read(ls, 2)
    state = ls[0].state_dict()
    for l in ls:
        l.close()
    assert state["local_nodes"] == NODES and state["world_size"] == 4
    resumed = loaders(node_dirs, state=state)
    rest = read(resumed)
    for l in resumed:
        l.close()
    assert len(rest) == len(whole) - 2
    for a, b in zip(rest, whole[2:]):
        for (ia, ba), (ib, bb) in zip(a, b):
            np.testing.assert_array_equal(ia, ib)
            np.testing.assert_array_equal(ba, bb)


def test_refusals_name_the_problem(node_dirs):
    with pytest.raises(twincache.InvalidArgument, match="local 2 must divide world_size 3"):
        twincache.Loader(node_dirs[0], world_size=3, rank=0, local=2)
    with pytest.raises(twincache.Error, match="not one of node 1 of 2's"):
        twincache.Loader(node_dirs[0], world_size=2, rank=1, local=2)
    ls = loaders(node_dirs)
    state = ls[0].state_dict()
    for l in ls:
        l.close()
    with twincache.Loader(node_dirs[0], batch_size=5, epochs=2, seed=3, rank=0, world_size=2, local=2,
                          output="numpy") as l:
        with pytest.raises(twincache.InvalidArgument, match="local_nodes 0 differs from this loader's 2"):
            l.load_state_dict(dict(state, local_nodes=0))
    with pytest.raises(twincache.Error, match="is missing"):  # node 0 of 1 holds every shard
        twincache.Loader(node_dirs[0], world_size=1, rank=0, local=1)


def test_elastic_resume(node_dirs):
    """4 ranks for 3 steps, then 2 ranks (one per node) at batch 10: each
    graph once per epoch across the change."""
    ls = loaders(node_dirs)
    head = read(ls, 3)
    state = ls[0].state_dict()
    for l in ls:
        l.close()
    seen = np.concatenate([ids for s in head for ids, _ in s])
    seen = list(seen[seen >= 0])
    ls = [twincache.Loader(node_dirs[r], batch_size=10, epochs=2, seed=3, rank=r, world_size=2, local=2,
                           output="numpy") for r in range(2)]
    for l in ls:
        l.load_state_dict(state)
    epochs = [seen, []]
    while True:
        step = [l.next_batch() for l in ls]
        if step[0] is None:
            break
        for b in step:
            epochs[b.epoch] += list(b.graph_id[b.valid.astype(bool)])
    for l in ls:
        l.close()
    for e in range(2):
        np.testing.assert_array_equal(np.sort(np.array(epochs[e], dtype=np.int64)), np.arange(90))


def test_set_epoch_and_len(node_dirs):
    ls = loaders(node_dirs)
    bpe = len(ls[0])
    whole = read(ls)
    for l in ls:
        l.close()
    ls = loaders(node_dirs)
    for l in ls:
        l.set_epoch(1)  # a DistributedSampler-style loop: the second epoch's first step
    second = read(ls)
    for l in ls:
        l.close()
    assert len(second) == bpe
    for a, b in zip(second, whole[bpe:]):
        for (ia, _), (ib, _) in zip(a, b):
            np.testing.assert_array_equal(ia, ib)
