"""Rows per world (twincache-gen --inter-samples, FORMAT.md 3.10): Graph.rows
and Batch.rows say how many rows each world holds, the rows past a count
are zero, trimmed() cuts S to the most rows a world of the batch holds, the
compact layout carries the counts, and a cache made without counts gives
rows = S on every real world."""
import os
import subprocess

import numpy as np
import pytest

import twincache


@pytest.fixture(scope="module")
def caches(gen_exe, tmp_root):
    out = {}
    for name, extra in (("rows", ["--inter-samples", "9"]), ("full", [])):
        p = os.path.join(tmp_root, f"rows-{name}")
        subprocess.run([gen_exe, "--out", p, "--graphs", "12", "--nodes", "3:5", "--samples", "16",
                        "--targets", "3", "--worlds", "independent", "--seed", "2", "--threads", "1",
                        "--quiet", *extra], check=True)
        out[name] = p
    return out


def test_graph_rows(caches):
    with twincache.Cache(caches["rows"]) as c, twincache.Cache(caches["full"]) as f:
        assert c.format_version == 5
        for i in range(len(c)):
            g, h = c[i], f[i]
            assert list(g.rows) == [16, 3, 3, 3]  # 9 rows over 3 worlds
            assert list(h.rows) == [16, 16, 16, 16]
            for k in range(3):
                assert np.array_equal(g.inter[k, :3], h.inter[k, :3])  # the first rows of the full draw
                assert not g.inter[k, 3:].any()


@pytest.mark.parametrize("samples", ["stored", "fresh"])
def test_batch_rows_and_trimmed(caches, samples):
    kw = {"rows": 16} if samples == "fresh" else {}
    with twincache.Loader(caches["rows"], batch_size=5, output="numpy", shuffle=False, samples=samples,
                          **kw) as L:
        b = next(iter(L))
        assert b.rows.shape == (5, 4) and b.rows.dtype == np.uint32
        assert (b.rows == np.array([16, 3, 3, 3])).all()
        assert not b.inter[:, :, 3:].any() and b.inter[:, :, :3].any()
        t = b.trimmed()
        assert t["base"].shape[1] == 16 and t["inter"].shape[2] == 16  # the base world holds all 16
        assert "rows" in twincache.Batch.__doc__
    with twincache.Loader(caches["full"], batch_size=5, output="numpy", shuffle=False) as L:
        b = next(iter(L))
        assert (b.rows == 16).all()


@pytest.mark.parametrize("samples,rows", [("stored", 0), ("fresh", 16), ("fresh", 20)])
def test_compact_carries_rows(caches, samples, rows):
    """The compact layout carries the rows per world: its batch's rows are the
    dense one's and it expands to the dense batch, the zero rows included
    (fresh rows = 20: the base world holds its stored 16, then zeros)."""
    import torch
    kw = dict(batch_size=5, shuffle=False, samples=samples, **({"rows": rows} if rows else {}))
    with twincache.Loader(caches["rows"], **kw) as D, twincache.Loader(caches["rows"], layout="compact", **kw) as Cl:
        n = 0
        for d, c in zip(D.stream(), Cl.stream()):
            assert np.array_equal(c.numpy["rows"], d.numpy["rows"]) and (d.numpy["rows"][:, 1:] <= 3).all()
            e = c.expand()
            for name in ("base", "inter", "rows", "target", "value", "int_mask", "node_mask"):
                assert torch.equal(e[name], d[name]), f"batch {d.seq}: {name}"
            n += 1
        assert n == len(D) > 0


def test_export_gives_the_rows_each_world_holds(caches, inspect_exe, tmp_root):
    """gen -> loader -> export: the rows of graph 4 in a batch (shuffle off:
    batch 0, position 4) are what every export format writes, each world's
    own rows and no more; npy keeps the padded arrays and adds the counts.
    The same graph without counts exports no rows file."""
    with twincache.Loader(caches["rows"], batch_size=5, output="numpy", shuffle=False) as L:
        b = next(iter(L))
        g, n = 4, int(b.node_mask[4].sum())
        rows = b.rows[g].astype(int)
        base, inter = np.array(b.base[g, :rows[0], :n]), [np.array(b.inter[g, k, :rows[k + 1], :n]) for k in range(3)]
    out = os.path.join(tmp_root, "rows-export")
    os.makedirs(out, exist_ok=True)
    run = lambda *a: subprocess.run([inspect_exe, "export", caches["rows"], "4", *a, "--force"], check=True,
                                    capture_output=True)
    run("--format", "csv", "--out", os.path.join(out, "g"))
    got = np.loadtxt(os.path.join(out, "g_base.csv"), delimiter=",", skiprows=1, dtype=np.float32, ndmin=2)
    assert np.array_equal(got, base)
    tab = np.loadtxt(os.path.join(out, "g_inter.csv"), delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    for k in range(3):
        assert np.array_equal(tab[tab[:, 0] == k][:, 2:].astype(np.float32), inter[k])
    run("--format", "npy", "--out", os.path.join(out, "g"))
    assert list(np.load(os.path.join(out, "g_rows.npy"))) == list(rows)
    ni = np.load(os.path.join(out, "g_inter.npy"))
    assert ni.shape[1] == 16 and all(not ni[k, rows[k + 1]:].any() for k in range(3))
    run("--format", "dcdi", "--out", os.path.join(out, "dcdi"))
    d = np.load(os.path.join(out, "dcdi", "data_interv1.npy"))
    assert np.array_equal(d, np.concatenate([base] + inter))
    with open(os.path.join(out, "dcdi", "regime1.csv")) as f:
        regimes = [int(x) for x in f.read().split()]
    assert regimes == [0] * rows[0] + [1] * rows[1] + [2] * rows[2] + [3] * rows[3]
    subprocess.run([inspect_exe, "export", caches["full"], "4", "--format", "npy", "--out",
                    os.path.join(out, "full"), "--force"], check=True, capture_output=True)
    assert not os.path.exists(os.path.join(out, "full_rows.npy"))


def test_trimmed_cuts_to_the_most_rows_held():
    """trimmed() cuts S to the most rows a world of the batch holds (a
    one-graph batch whose worlds hold 2, 2 and 1 of 3 rows: S becomes 2),
    and keeps rows itself."""
    from twincache.suite.baseline import graph_batch
    b = graph_batch(np.ones((3, 2)), np.ones((2, 3, 2)), np.eye(2), rows=[2, 2, 1])
    t = b.trimmed()
    assert t["base"].shape == (1, 2, 2) and t["inter"].shape == (1, 2, 2, 2)
    assert t["rows"].tolist() == [[2, 2, 1]]
    full = graph_batch(np.ones((3, 2)), np.ones((2, 3, 2)), np.eye(2)).trimmed()
    assert full["base"].shape == (1, 3, 2) and full["inter"].shape == (1, 2, 3, 2)


def test_fresh_graph_keeps_the_counts(caches):
    with twincache.Cache(caches["rows"]) as c:
        g = twincache.fresh_graph(c, 2, rows=16)
        assert list(g.rows) == [16, 3, 3, 3] and not g.inter[:, 3:].any() and g.inter[:, :3].any()
        h = twincache.fresh_graph(c, 2, rows=2)
        assert list(h.rows) == [2, 2, 2, 2]
