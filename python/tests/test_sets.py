"""Cache sets from Python (issue 29): twincache.generate(shard="I/N") builds
the shards, and twincache.Cache / twincache.Loader take the set's directory
where they take a cache: the same graphs, frames and batches as the whole
cache; an inconsistent set raises C's message naming the shard."""
import os
import shutil

import numpy as np
import pytest

import twincache

ARGS = dict(graphs=150, nodes=(3, 6), samples=8, chunk_graphs=16, seed=4, threads=2, progress=False)


@pytest.fixture(scope="module")
def whole_and_set(tmp_root):
    whole = os.path.join(tmp_root, "sets-whole")
    shards = os.path.join(tmp_root, "sets-set")
    twincache.generate(whole, **ARGS)
    for i in range(3):
        twincache.generate(shards, shard=f"{i}/3", **ARGS)
    return whole, shards


def test_cache_of_a_set(whole_and_set):
    whole, shards = whole_and_set
    with twincache.Cache(whole) as a, twincache.Cache(shards) as b:
        assert len(a) == len(b) == 150
        assert a.dims == b.dims and a.stats == b.stats and a.config_text == b.config_text
        for i in range(len(a)):
            assert a.frame(i) == b.frame(i)
        np.testing.assert_array_equal(a[149].base, b[149].base)


@pytest.mark.parametrize("threads", [1, 2])
def test_loader_of_a_set(whole_and_set, threads):
    whole, shards = whole_and_set
    opts = dict(batch_size=20, seed=9, threads=threads, output="numpy")
    with twincache.Loader(whole, **opts) as a, twincache.Loader(shards, **opts) as b:
        n = 0
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x.graph_id, y.graph_id)
            np.testing.assert_array_equal(x.base, y.base)
            np.testing.assert_array_equal(x.inter, y.inter)
            np.testing.assert_array_equal(x.adj, y.adj)
            n += 1
        assert n == 8  # a for loop is one epoch: ceil(150 / 20) batches


def test_lone_shard_holds_its_range(whole_and_set):
    whole, shards = whole_and_set
    one = os.path.join(shards, "shard-00001-of-00003")
    with twincache.Cache(whole) as a, twincache.Cache(one) as b:
        assert a.first == 0 and 0 < b.first < len(b) < len(a)  # shard 1 of 3: the middle
        ids = [g.index for g in b]  # iteration covers the shard's own graphs
        assert ids == list(range(b.first, len(b))) and len(ids) < len(a)
        np.testing.assert_array_equal(a[b.first].base, b[b.first].base)
        with pytest.raises(twincache.NotFound, match="not in this shard"):
            b[0]


def test_incomplete_set_names_the_shard(whole_and_set, tmp_root):
    _, shards = whole_and_set
    bad = os.path.join(tmp_root, "sets-missing")
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(shards, bad)
    shutil.rmtree(os.path.join(bad, "shard-00001-of-00003"))
    for make in (twincache.Cache, twincache.Loader):
        with pytest.raises(twincache.Error) as e:
            make(bad)
        assert "shard 1 of 3" in str(e.value) and "missing" in str(e.value)
