"""Size buckets in Python: Loader(..., buckets=True) hands out batches whose
`nodes` is the largest N of their graphs, trimmed() cuts the dense fields to
it (views of the slab, zero beyond), fewer node slots than without buckets,
every graph once per epoch over two ranks, a state_dict() of two ranks of
batch 8 resumed on one of batch 16 continues that rank's stream, and the
wrong arguments are refused by name."""
import numpy as np
import pytest

import twincache

G = 16  # the global batch


def _loader(path, W=1, r=0, **kw):
    return twincache.Loader(path, batch_size=G // W, epochs=2, seed=3, world_size=W, rank=r, output="numpy",
                            threads=1, **kw)


def _ids(b):
    return [int(i) for i, v in zip(b.numpy["graph_id"], b.numpy["valid"]) if v]


def test_nodes_and_trimmed(cache_path):
    slots = {}
    for buckets in (False, True):
        slots[buckets] = 0
        with _loader(cache_path, buckets=buckets) as L:
            for b in L.stream():
                nm = b.numpy["node_mask"][:b.n_graphs]
                assert b.nodes == int(nm.sum(axis=1).max())
                t = b.trimmed()
                n = b.nodes
                assert t["base"].shape[-1] == n and t["adj"].shape[1:] == (n, n)
                assert t["inter"].shape[-1] == n and t["node_mask"].shape[-1] == n
                assert np.shares_memory(t["base"], b.numpy["base"])  # a view, no copy
                assert t.base is t["base"] and t.adj is t["adj"]  # attributes, as a Batch's
                with pytest.raises(AttributeError):
                    t.no_such_field
                assert not b.numpy["base"][..., n:].any() and not b.numpy["adj"][:, n:].any()
                slots[buckets] += b.n_graphs * n
    assert slots[True] < slots[False]


def test_ranks_and_elastic_resume(cache_path):
    n = len(twincache.Cache(cache_path))
    with _loader(cache_path, buckets=True) as L:
        one = [i for b in L.stream() for i in _ids(b)]
    assert sorted(one) == sorted(list(range(n)) * 2)
    ranks = [_loader(cache_path, 2, r, buckets=True) for r in range(2)]
    its = [L.stream() for L in ranks]
    got = []
    for _ in range(5):  # global order: rank 0's batch, then rank 1's
        for it in its:
            got.extend(_ids(next(it)))
    state = ranks[0].state_dict()
    assert state["bucket"] == 1
    for L in ranks:
        L.close()
    with _loader(cache_path, buckets=True) as L:
        L.load_state_dict(state)
        got.extend(i for b in L.stream() for i in _ids(b))
    assert got == one
    with _loader(cache_path) as L:  # without buckets: refused, named
        with pytest.raises(twincache.InvalidArgument, match="bucket"):
            L.load_state_dict(state)


def test_refusals(cache_path):
    with pytest.raises(twincache.InvalidArgument, match="buckets"):
        _loader(cache_path, buckets=2)
    with pytest.raises(twincache.InvalidArgument, match="buckets"):
        twincache.Loader([cache_path, cache_path], weights=[1, 1], batch_size=G, buckets=True)
