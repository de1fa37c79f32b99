"""twincache.Loader: zero-copy, contents, order equal to the C loader's,
sharding, resume, lifetime, errors, DataLoader."""
import gc
import os
import subprocess

import numpy as np
import pytest
import torch

import twincache


def c_order(exe, cache, **opts):
    """[(seq, epoch, [graph ids])] of the C loader for these options."""
    cmd = [exe, cache]
    for k, v in opts.items():
        cmd += ["--" + k.replace("_", "-"), str(int(v))]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        f = [int(x) for x in line.split()]
        rows.append((f[0], f[1], f[3:3 + f[2]]))
    return rows


def py_order(loader):
    rows = []
    for b in loader.stream():
        rows.append((b.seq, b.epoch, b.numpy["graph_id"][:b.n_graphs].tolist()))
    return rows


def test_zero_copy(cache_path):
    with twincache.Loader(cache_path, batch_size=16, threads=1) as L:
        b = next(iter(L))
        for name, off in b.offsets.items():
            assert b.numpy[name].ctypes.data == b.slab_address + off
            assert b[name].data_ptr() == b.slab_address + off
            assert getattr(b, name).data_ptr() == b.slab_address + off
        assert b.base.shape == (16, 8, 7) and b.inter.shape == (16, 7, 8, 7)
        assert b.target.shape == (16, 7, 7) and b.adj.shape == (16, 7, 7)
        assert b.graph_id.dtype == torch.int64 and b.numpy["graph_id"].dtype == np.uint64
        assert b.slab_address % 64 == 0
        assert b.base.is_pinned() == torch.cuda.is_available()


@pytest.mark.parametrize("output", ["numpy", "torch"])
def test_fields_made_on_first_read(cache_path, output):
    """A batch lists every field but makes a view only when it is read (the
    numpy views of a torch batch too); unknown names fail as a dict and an
    object would; every batch of the ring reads its own slot's bytes."""
    names = ["base", "inter", "target", "value", "kind", "adj", "node_mask", "int_mask",
             "graph_id", "valid", "rows"]
    with twincache.Loader(cache_path, batch_size=16, threads=1, slots=2, shuffle=False,
                          output=output) as L:
        seen = []
        for b in L:
            assert b.keys() == names and set(b.numpy) == set(names)
            assert not dict.__contains__(b._fields, "inter")  # not read: not made
            x = b.base
            assert dict.__contains__(b._fields, "base") and not dict.__contains__(b._fields, "adj")
            assert b.numpy["base"].ctypes.data == b.slab_address + b.offsets["base"]
            with pytest.raises(KeyError):
                b["nope"]
            with pytest.raises(AttributeError):
                b.cols  # a compact field on a dense batch
            seen.append((b.seq, b.slab_address, np.array(b.numpy["graph_id"][:b.n_graphs])))
            del b, x
    assert [s for s, _, _ in seen] == list(range(len(L)))
    assert len({a for _, a, _ in seen}) == 2  # two slots, each struct and slab reused
    ids = np.concatenate([g for _, _, g in seen])
    assert sorted(ids.tolist()) == sorted(set(ids.tolist()))  # no batch read another's slot


def test_contents_equal_cache(cache_path):
    with twincache.Cache(cache_path) as c, \
            twincache.Loader(cache_path, batch_size=32, threads=2, output="numpy") as L:
        checked = 0
        for b in L:
            for gi in range(0, b.n_graphs, 7):
                g = c[int(b.graph_id[gi])]
                n, k = g.n_nodes, g.n_inter
                np.testing.assert_array_equal(b.base[gi, :, :n], g.base)
                assert not b.base[gi, :, n:].any()
                np.testing.assert_array_equal(b.inter[gi, :k, :, :n], g.inter)
                assert not b.inter[gi, k:].any()
                np.testing.assert_array_equal(b.adj[gi, :n, :n], g.adj)
                assert b.node_mask[gi].tolist() == [1] * n + [0] * (7 - n)
                assert b.int_mask[gi].tolist() == [1] * k + [0] * (7 - k)
                np.testing.assert_array_equal(b.kind[gi, :k], g.kind)
                for j in range(k):
                    t = int(g.target[j])
                    assert b.target[gi, j].nonzero()[0].tolist() == [t]
                    assert b.value[gi, j, t] == g.value[j]
                checked += 1
        assert checked > 60


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("opts", [dict(batch=32, shuffle=1, seed=5, epochs=2),
                                  dict(batch=50, shuffle=0, epochs=1, drop_last=1),
                                  dict(batch=7, shuffle=1, seed=1, epochs=1, rank=1, world=3),
                                  dict(batch=16, shuffle=1, seed=2, epochs=1, begin=100, end=350)])
def test_order_equals_c(cache_path, order_dump_exe, threads, opts):
    want = c_order(order_dump_exe, cache_path, threads=threads, **opts)
    kw = dict(batch_size=opts["batch"], shuffle=bool(opts["shuffle"]), seed=opts.get("seed", 0),
              epochs=opts["epochs"], drop_last=bool(opts.get("drop_last", 0)), threads=threads,
              rank=opts.get("rank", 0), world_size=opts.get("world", 1))
    if "begin" in opts:
        kw["index_range"] = (opts["begin"], opts["end"])
    with twincache.Loader(cache_path, **kw) as L:
        assert py_order(L) == want
    assert len(want) > 3


def test_for_loop_is_one_epoch(cache_path):
    with twincache.Loader(cache_path, batch_size=64, epochs=3, seed=4) as L:
        seen = []
        for epoch in range(3):
            ids = [i for b in L for i in b.numpy["graph_id"][:b.n_graphs].tolist()]
            assert sorted(ids) == list(range(600)), epoch
            seen.append(ids)
        assert seen[0] != seen[1]
        assert list(L) == []  # the epochs are spent


def test_rank_sharding(cache_path):
    shards, counts = [], []
    for r in range(2):
        with twincache.Loader(cache_path, batch_size=32, seed=7, rank=r, world_size=2) as L:
            counts.append(len(L))
            # ranks get equal batch counts: graphs repeated to pad have valid 0
            shards.append([i for b in L
                           for i, v in zip(b.numpy["graph_id"][:b.n_graphs].tolist(),
                                           b.numpy["valid"][:b.n_graphs].tolist()) if v])
    assert counts[0] == counts[1]
    assert set(shards[0]).isdisjoint(shards[1])
    assert sorted(shards[0] + shards[1]) == list(range(600))


def test_rank_from_env(cache_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "4")
    with twincache.Loader(cache_path, batch_size=32) as L:
        assert (L.rank, L.world_size) == (1, 4)
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(twincache.InvalidArgument):
        twincache.Loader(cache_path)


def test_state_dict_resume(cache_path):
    kw = dict(batch_size=24, epochs=2, seed=11, threads=2)
    with twincache.Loader(cache_path, **kw) as L:
        full = py_order(L)
    with twincache.Loader(cache_path, **kw) as L:
        it = L.stream()
        head = [next(it).seq for _ in range(30)]
        state = L.state_dict()
        del it
    assert state["seed"] == 11 and state["next_seq"] == 30 and head == list(range(30))
    assert state["batch_size"] == 24 and state["world_size"] == 1
    with twincache.Loader(cache_path, **kw) as L2:
        L2.load_state_dict(state)
        assert py_order(L2) == full[30:]
        with pytest.raises(twincache.InvalidArgument):
            L2.load_state_dict({"seed": 12, "next_seq": 0})
        L2.set_epoch(1)
        assert next(iter(L2)).seq == len(L2)


def test_lifetime(cache_path):
    L = twincache.Loader(cache_path, batch_size=32, threads=1, slots=4, shuffle=False,
                         output="numpy")
    kept = []
    for b in L:
        kept.append((np.array(b.base), b.base))  # a copy and the zero-copy view
        break
    b = None
    L.close()  # the view outlives the loop and the loader: its memory is Python's
    gc.collect()
    for copy, view in kept:
        np.testing.assert_array_equal(copy, view)


def test_bad_arguments_checked_before_open(tmp_root):
    missing = os.path.join(tmp_root, "no-such-cache")
    # types here, ranges in C (its message passed through), both before the open
    bad = [dict(batch_size=0), dict(batch_size=70000), dict(batch_size="8"), dict(threads=0),
           dict(threads=101), dict(epochs=-1), dict(seed=-1), dict(rank=2, world_size=2),
           dict(world_size=0), dict(slots=4097), dict(slots=2**32), dict(index_range=7),
           dict(corrupt="ignore"), dict(device="tpu"), dict(output="jax"), dict(shuffle="yes")]
    if not torch.cuda.is_available():
        bad += [dict(device="cuda"), dict(pin_memory=True)]
    for kw in bad:
        with pytest.raises(twincache.InvalidArgument):
            twincache.Loader(missing, **kw)
    with pytest.raises(twincache.InvalidArgument) as e:  # C's limit, C's words
        twincache.Loader(missing, slots=5000)
    assert "slots must be 0 (auto) or 1..4096" in str(e.value)
    with pytest.raises(twincache.NotFound):
        twincache.Loader(missing)


def test_errors_from_c(cache_path, tmp_root):
    with pytest.raises(twincache.InvalidArgument) as e:  # beyond the committed count
        twincache.Loader(cache_path, index_range=(0, 601))
    assert e.value.code == -2
    empty = os.path.join(tmp_root, "empty-dir")
    os.makedirs(empty, exist_ok=True)
    with pytest.raises(twincache.NotACache):
        twincache.Loader(empty)
    L = twincache.Loader(cache_path)
    L.close()
    with pytest.raises(twincache.Closed):
        L.next_batch()


def test_dataloader(cache_path):
    ds = twincache.Loader(cache_path, batch_size=32, seed=3, epochs=2)
    assert isinstance(ds, torch.utils.data.IterableDataset)
    dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)
    for _ in range(2):
        ids = []
        for b in dl:
            assert isinstance(b, twincache.Batch)
            ids += b.graph_id[:b.n_graphs].tolist()
        assert sorted(ids) == list(range(600))
    ds.close()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_pinned_and_device(cache_path):
    with twincache.Loader(cache_path, batch_size=32, seed=1, epochs=1) as host:
        want = [(b.seq, b.base.clone(), b.adj.clone()) for b in host]
    with twincache.Loader(cache_path, batch_size=32, seed=1, epochs=1, device="cuda") as L:
        got = []
        for b in L:
            assert b.base.is_cuda and b.base.shape == want[0][1].shape
            got.append((b.seq, b.base.cpu(), b.adj.cpu()))
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want):
        assert torch.equal(g[1], w[1]) and torch.equal(g[2], w[2])
