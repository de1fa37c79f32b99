"""twincache.Cache against the C tools, and its errors."""
import json
import os
import subprocess

import numpy as np
import pytest

import twincache


def test_facts(cache_path):
    with twincache.Cache(cache_path) as c:
        assert len(c) == 600
        assert c.dims["max_nodes"] == 7 and c.dims["samples"] == 8 and c.dims["graphs"] == 600
        assert c.config["seed"] == 3 and c.config["nodes_max"] == 7
        assert c.stats["nodes"] > 0 and c.stats["frame_bytes"] > 0
        assert c[-1].index == 599


@pytest.mark.parametrize("index", [0, 3, 77, 311, 599])
def test_graph_equals_inspect_json(cache_path, inspect_exe, index):
    out = subprocess.run([inspect_exe, "show", cache_path, str(index), "--json"], check=True,
                         capture_output=True, text=True).stdout
    want = json.loads(out)
    with twincache.Cache(cache_path) as c:
        g = c[index]
    assert g.index == want["index"] and g.n_nodes == want["n_nodes"]
    assert g.n_inter == want["n_inter"] and g.mechanism == want["mechanism"]
    assert g.family == want["family"] == "er"  # names from C's one table
    f32 = lambda v: np.asarray(v, dtype=np.float32)  # noqa: E731
    np.testing.assert_array_equal(g.adj, np.asarray(want["adjacency"], dtype=np.uint8))
    np.testing.assert_array_equal(g.weight, f32(want["weights"]))
    np.testing.assert_array_equal(g.noise_scale, f32(want["noise_scale"]))
    np.testing.assert_array_equal(g.target, np.asarray(want["targets"]))
    assert [twincache.cache.KINDS[k] for k in g.kind] == want["kinds"]
    np.testing.assert_array_equal(g.value, f32(want["values"]))
    np.testing.assert_array_equal(g.base, f32(want["base"]))
    np.testing.assert_array_equal(g.inter, f32(want["inter"]).reshape(g.inter.shape))


def test_errors(cache_path, tmp_root):
    with pytest.raises(twincache.NotFound):
        twincache.Cache(os.path.join(tmp_root, "no-such-cache"))
    empty = os.path.join(tmp_root, "empty-dir")
    os.makedirs(empty, exist_ok=True)
    with pytest.raises(twincache.NotACache) as e:
        twincache.Cache(empty)
    assert e.value.code == -12 and twincache.strerror(-12) in str(e.value)
    with pytest.raises(twincache.InvalidArgument):
        twincache.Cache(42)
    with twincache.Cache(cache_path) as c:
        with pytest.raises(IndexError):
            c[600]
        with pytest.raises(TypeError):
            c["1"]
    with pytest.raises(ValueError):
        c[0]  # closed
    assert issubclass(twincache.NotACache, twincache.Error)


def test_generate(tmp_root):
    out = os.path.join(tmp_root, "gen-cache")
    twincache.generate(out, graphs=20, nodes=(4, 6), samples=4, seed=9, threads=1, progress=False)
    with twincache.Cache(out) as c:
        assert len(c) == 20 and c.dims["max_nodes"] == 6
        assert c.format_version == c.config["format_version"] >= 3
    with pytest.raises(twincache.InvalidArgument):
        twincache.generate(os.path.join(tmp_root, "bad"), graphs=20, no_such_flag=3, progress=False)


def test_scm_only_graph(tmp_root, inspect_exe):
    """cache[i] of an SCM-only cache says it has no worlds and points to
    twincache.fresh_graph(), whose worlds are the C loader's (show --fresh-rows)."""
    path = os.path.join(tmp_root, "cache-scm-only")
    twincache.generate(path, graphs=12, nodes=(3, 6), samples=0, seed=4, threads=1, progress=False)
    with twincache.Cache(path) as c:
        assert c.dims["samples"] == 0
        with pytest.warns(UserWarning, match=r"SCM-only.*twincache\.fresh_graph\(cache, 5, rows=S\)"):
            g = c[5]
        assert g.base.shape == (0, g.n_nodes) and g.inter.shape == (g.n_inter, 0, g.n_nodes)
        f = twincache.fresh_graph(c, 5, rows=12, epoch=1)
    out = subprocess.run([inspect_exe, "show", path, "5", "--fresh-rows", "12", "--epoch", "1", "--json"],
                         check=True, capture_output=True, text=True).stdout
    want = json.loads(out)
    assert f.n_samples == 12 and f.base.shape == (12, g.n_nodes)
    np.testing.assert_array_equal(f.base, np.asarray(want["base"], dtype=np.float32))
    np.testing.assert_array_equal(f.inter, np.asarray(want["inter"], dtype=np.float32).reshape(f.inter.shape))
    np.testing.assert_array_equal(f.weight, g.weight)
    assert f.base.any()


@pytest.mark.parametrize("mechanism", ["linear", "mlp", "linear:0.5,rff:0.5"])
def test_soft_rows_equal_inspect(tmp_root, inspect_exe, mechanism):
    """Graph.soft's rows are C's (their width twincache_soft_stride, read from
    the library, not derived in Python): equal to show --json's "soft"."""
    path = os.path.join(tmp_root, "cache-soft-" + mechanism.replace(":", "").replace(",", "-"))
    twincache.generate(path, graphs=6, nodes=(3, 6), samples=4, seed=5, threads=1, progress=False,
                       mechanism=mechanism, intervention="soft", mlp_hidden=3)
    with twincache.Cache(path) as c:
        for i in range(len(c)):
            g = c[i]
            want = json.loads(subprocess.run([inspect_exe, "show", path, str(i), "--json"], check=True,
                                             capture_output=True, text=True).stdout)["soft"]
            assert g.soft is not None and len(want) == g.n_inter
            for k, row in enumerate(want):
                np.testing.assert_array_equal(g.soft[k], np.asarray(row, dtype=np.float32))


def _poke_lmdb_meta(path, at, value):
    """Writes u64 `value` at byte `at` of the LMDB meta page LMDB reads (the
    one with the larger txnid): mm_last_pg is at 136, mm_txnid at 144."""
    import struct
    data = os.path.join(path, "data.mdb")
    with open(data, "r+b") as f:
        head = f.read(8192)
        psize = struct.unpack_from("<I", head, 40)[0]
        f.seek(0)
        both = f.read(2 * psize)
        txnid = [struct.unpack_from("<Q", both, p + 144)[0] for p in (0, psize)]
        page = 0 if txnid[0] > txnid[1] else psize
        f.seek(page + at)
        f.write(struct.pack("<Q", value))


def test_damaged_lmdb_meta_page(tmp_root):
    """A damaged last-page number is Corrupt, never MemoryError; a damaged
    transaction id (LMDB falls back to the state before any graph) makes the
    Loader say how many graphs of how many, and how to finish."""
    import shutil
    src = os.path.join(tmp_root, "cache-meta-page")
    shutil.rmtree(src, ignore_errors=True)
    twincache.generate(src, graphs=30, nodes=(3, 5), samples=4, seed=2, threads=1, progress=False)
    last = src + "-last-page"
    shutil.rmtree(last, ignore_errors=True)
    shutil.copytree(src, last)
    _poke_lmdb_meta(last, 136, 0xFFFFFFFF00)
    with pytest.raises(twincache.Corrupt) as e:
        twincache.Cache(last)
    assert not isinstance(e.value, MemoryError) and "damaged" in str(e.value)
    txn = src + "-txnid"
    shutil.rmtree(txn, ignore_errors=True)
    shutil.copytree(src, txn)
    _poke_lmdb_meta(txn, 144, 0)
    with twincache.Cache(txn) as c:
        assert len(c) == 0 and c.dims["graphs"] == 30
    with pytest.raises(twincache.InvalidArgument) as e:
        twincache.Loader(txn, output="numpy")
    assert "0 of the 30 graphs" in str(e.value) and "rerun twincache-gen to finish" in str(e.value)
