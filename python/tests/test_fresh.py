"""Loader(samples="fresh"): Python's fresh worlds are the C loader's (through
twincache-inspect show --fresh-rows --json), the same for any thread count
and after a resume, new each epoch (resample_every 1) and shared within an
epoch group; SCM-only caches; C's checks of rows and resample_every."""
import json
import os
import subprocess

import numpy as np
import pytest

import twincache


def fresh_worlds(loader):
    """{(epoch, graph id): (base, inter)} copied out of every batch."""
    out = {}
    for b in loader.stream():  # every epoch
        base, inter = b.numpy["base"], b.numpy["inter"]
        for g in range(b.n_graphs):
            out[(b.epoch, int(b.numpy["graph_id"][g]))] = (base[g].copy(), inter[g].copy())
    return out


def test_python_equals_c(cache_path, inspect_exe):
    with twincache.Loader(cache_path, batch_size=16, epochs=3, threads=2, samples="fresh",
                          rows=12, output="numpy") as L:
        assert L.layout["samples"] == 12
        worlds = fresh_worlds(L)
    for epoch, gid in [(0, 0), (0, 5), (2, 5), (1, 599)]:
        out = subprocess.run([inspect_exe, "show", cache_path, str(gid), "--fresh-rows", "12",
                              "--epoch", str(epoch), "--json"],
                             check=True, capture_output=True, text=True).stdout
        g = json.loads(out)
        n, k = g["n_nodes"], g["n_inter"]
        base, inter = worlds[(epoch, gid)]
        np.testing.assert_array_equal(base[:, :n], np.array(g["base"], dtype=np.float32))
        np.testing.assert_array_equal(inter[:k, :, :n], np.array(g["inter"], dtype=np.float32))
        assert not base[:, n:].any()


def test_threads_resume_epochs(cache_path):
    kw = dict(batch_size=24, epochs=2, seed=5, samples="fresh", rows=10, output="numpy")
    with twincache.Loader(cache_path, threads=1, **kw) as L:
        one = fresh_worlds(L)
    with twincache.Loader(cache_path, threads=3, **kw) as L:
        three = fresh_worlds(L)
    assert one.keys() == three.keys()
    for key in one:
        np.testing.assert_array_equal(one[key][0], three[key][0])
        np.testing.assert_array_equal(one[key][1], three[key][1])
    with twincache.Loader(cache_path, threads=2, **kw) as L:
        it = L.stream()
        for _ in range(9):
            next(it)
        state = L.state_dict()
        del it
    with twincache.Loader(cache_path, threads=2, **kw) as L:
        L.load_state_dict(state)
        for b in L.stream():
            for g in range(b.n_graphs):
                base, _ = one[(b.epoch, int(b.numpy["graph_id"][g]))]
                np.testing.assert_array_equal(b.numpy["base"][g], base)
    assert not np.array_equal(one[(0, 7)][0], one[(1, 7)][0])
    with twincache.Loader(cache_path, threads=2, resample_every=2, **kw) as L:
        two = fresh_worlds(L)
    np.testing.assert_array_equal(two[(0, 7)][0], two[(1, 7)][0])
    np.testing.assert_array_equal(two[(0, 7)][0], one[(0, 7)][0])


def test_scm_only_cache(tmp_root, gen_exe):
    gen = gen_exe
    path = os.path.join(tmp_root, "scm-only")
    subprocess.run([gen, "--out", path, "--graphs", "50", "--nodes", "3:6", "--samples", "0",
                    "--quiet"], check=True)
    with pytest.raises(twincache.InvalidArgument) as e:
        twincache.Loader(path)
    assert "SCMs only" in str(e.value)
    with twincache.Loader(path, batch_size=10, samples="fresh", rows=33, output="numpy") as L:
        seen = sum(b.n_graphs for b in L)
        assert seen == 50 and L.layout["samples"] == 33


def test_checks_come_from_c(cache_path):
    for kw, word in [(dict(samples="fresh"), "rows"), (dict(samples="fresh", rows=0), "rows"),
                     (dict(samples="fresh", rows=65536), "rows"),
                     (dict(samples="fresh", rows=8, resample_every=0), "resample_every"),
                     (dict(rows=8), "rows")]:
        with pytest.raises(twincache.InvalidArgument) as e:
            twincache.Loader(cache_path, **kw)
        assert word in str(e.value)
    with pytest.raises(twincache.InvalidArgument):
        twincache.Loader(cache_path, samples="sometimes")


def test_withhold_targets(cache_path):
    """withhold_targets=True: target and value all zero, every other field the
    batch without it, stored and fresh; compact and non-bool refused."""
    for extra in (dict(), dict(samples="fresh", rows=6)):
        kw = dict(batch_size=32, epochs=1, seed=3, threads=2, output="numpy", **extra)
        with twincache.Loader(cache_path, **kw) as A, \
                twincache.Loader(cache_path, withhold_targets=True, **kw) as B:
            targets = 0
            for a, b in zip(A.stream(), B.stream()):
                targets += int(a.numpy["target"].sum())
                assert not b.numpy["target"].any() and not b.numpy["value"].any()
                for name in a.numpy:
                    if name not in ("target", "value"):
                        np.testing.assert_array_equal(a.numpy[name], b.numpy[name], err_msg=name)
            assert targets > 0
    with pytest.raises(twincache.InvalidArgument):
        twincache.Loader(cache_path, withhold_targets=True, layout="compact")
    with pytest.raises(twincache.InvalidArgument):
        twincache.Loader(cache_path, withhold_targets=1)


def test_soft_fresh(tmp_root, gen_exe):
    """Fresh worlds of soft interventions (an SCM-only linear cache): the
    target's twin residual under the stored new weights (Graph.soft) is its
    base residual (the new mechanism in effect, the same noise), and for a
    target with parents its residual under its own weights is not; a root's
    is its base residual times the factor soft[k][t] plus the value (its new
    noise scale and mean)."""
    gen = gen_exe
    path = os.path.join(tmp_root, "soft-scm-only")
    subprocess.run([gen, "--out", path, "--graphs", "40", "--nodes", "4:8", "--samples", "0",
                    "--intervention", "soft", "--targets", "3", "--edge-prob", "0.6", "--quiet"],
                   check=True)
    moved = 0
    with twincache.Cache(path) as c, \
            twincache.Loader(path, batch_size=8, samples="fresh", rows=16, output="numpy") as L:
        for b in L:
            for g in range(b.n_graphs):
                gr = c[int(b.numpy["graph_id"][g])]
                n = gr.n_nodes
                assert gr.soft is not None and (gr.kind == 3).all()
                base = b.numpy["base"][g][:, :n].astype(np.float64)
                for k in range(gr.n_inter):
                    t = int(gr.target[k])
                    x = b.numpy["inter"][g][k][:, :n].astype(np.float64)
                    pa = gr.adj[:, t] == 1
                    r_base = base[:, t] - base[:, pa] @ gr.weight[pa, t]
                    r_soft = x[:, t] - x[:, pa] @ gr.soft[k][pa]
                    if not pa.any():  # a root (FORMAT.md 3.6): noise term times soft[k][t], + the value
                        a = float(gr.soft[k][t]) or 1.0
                        assert 0.5 <= a < 2.0 and gr.value[k] != 0
                        r_base = a * r_base + float(gr.value[k])
                    np.testing.assert_allclose(r_soft, r_base, rtol=0, atol=1e-4 * (1 + np.abs(x).max()))
                    if pa.any():
                        r_own = x[:, t] - x[:, pa] @ gr.weight[pa, t]
                        moved += not np.allclose(r_own, r_base, atol=1e-3)
    assert moved > 0


def test_multi_target(tmp_root, gen_exe):
    """Multi-target worlds: Graph.target_sets/value_sets from C, and the
    batch's target/value rows hold every target of a world, stored and fresh;
    the compact layout refuses them."""
    gen = gen_exe
    path = os.path.join(tmp_root, "multi")
    subprocess.run([gen, "--out", path, "--graphs", "30", "--nodes", "4:8", "--samples", "4",
                    "--targets", "3", "--targets-per-world", "2:3", "--quiet"], check=True)
    with twincache.Cache(path) as c:
        for extra in (dict(), dict(samples="fresh", rows=5)):
            with twincache.Loader(path, batch_size=8, output="numpy", **extra) as L:
                for b in L:
                    for g in range(b.n_graphs):
                        gr = c[int(b.numpy["graph_id"][g])]
                        for k in range(gr.n_inter):
                            ts, vs = gr.target_sets[k], gr.value_sets[k]
                            assert 2 <= len(ts) <= 3 and len(set(ts.tolist())) == len(ts)
                            row = b.numpy["target"][g][k]
                            assert sorted(np.flatnonzero(row).tolist()) == sorted(ts.tolist())
                            np.testing.assert_array_equal(b.numpy["value"][g][k][ts], vs)
    with pytest.raises(twincache.InvalidArgument) as e:
        with twincache.Loader(path, layout="compact", output="numpy") as L:
            next(iter(L))
    assert "dense layout" in str(e.value)
