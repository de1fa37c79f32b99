"""The generator's interventions, checked from outside scm/: the sign and
range of intervention values (--value-dist signed and uniform), and an iSCM
do() world recomputed independently (numpy, float64, from the stored
parameters) equal to the stored twin and to the fresh twin."""
import os
import subprocess

import numpy as np

import twincache


def gen_cache(gen_exe, tmp_root, name, *flags):
    path = os.path.join(tmp_root, name)
    subprocess.run([gen_exe, "--out", path, "--quiet", "--threads", "2", *flags], check=True)
    return path


def all_values(path):
    vals = []
    with twincache.Cache(path) as c:
        for i in range(len(c)):
            g = c[i]
            for vs in g.value_sets:
                vals.extend(vs.tolist())
    return np.array(vals, dtype=np.float64)


def test_value_signs_and_ranges(gen_exe, tmp_root):
    # default: signed, |v| in [1, 3)
    v = all_values(gen_cache(gen_exe, tmp_root, "values-signed", "--graphs", "120", "--samples", "2"))
    assert len(v) > 500
    assert (v > 0).sum() > len(v) // 4 and (v < 0).sum() > len(v) // 4, "a signed cache has both signs"
    assert (np.abs(v) >= 1.0).all() and (np.abs(v) < 3.0).all()
    # --value-dist uniform: v in [LO, HI), the sign of the range itself
    v = all_values(gen_cache(gen_exe, tmp_root, "values-uniform", "--graphs", "120", "--samples", "2",
                             "--value-dist", "uniform", "--values", "-0.5:2"))
    assert ((v >= -0.5) & (v < 2.0)).all()
    assert (v < 0).any() and (v > 1).any()  # the whole range, not only a part of it
    v = all_values(gen_cache(gen_exe, tmp_root, "values-uniform-pos", "--graphs", "120", "--samples", "2",
                             "--value-dist", "uniform"))
    assert ((v >= 1.0) & (v < 3.0)).all()


def iscm_child_error(g, base, inter, std=None):
    """max relative |recomputed - stored| over the children of each do()
    target, and how many were checked. An iSCM node j stores
    z_j = (x_j - mean_j) / std_j with x_j = sum_i w_ij z_i + noise_j, and a
    twin world keeps the base world's noise and map, so
    z'_c - z_c = sum_i w_ic (z'_i - z_i) / std_c: the child's change from its
    parents' changes. std (n,): the map's std; None (a fresh world, whose
    map the batch does not carry): the one std_c > 0 that fits every row."""
    w = g.weight.astype(np.float64)
    base = base.astype(np.float64)
    worst, checked = 0.0, 0
    for k in range(g.n_inter):
        t = int(g.target[k])
        twin = inter[k].astype(np.float64)
        # the do() target column is the stored value itself (standard units)
        assert (inter[k][:, t] == g.value[k]).all()
        for c in np.flatnonzero(g.adj[t]):
            pa = np.flatnonzero(g.adj[:, c])
            drive = (twin[:, pa] - base[:, pa]) @ w[pa, c]  # sum_i w_ic (z'_i - z_i)
            moved = twin[:, c] - base[:, c]
            if std is None:
                sc = float(drive @ drive) / float(drive @ moved)
                assert sc > 0
            else:
                sc = float(std[c])
            want = base[:, c] + drive / sc
            worst = max(worst, np.abs(want - twin[:, c]).max() / (1.0 + np.abs(want).max()))
            checked += 1
            assert np.abs(moved).max() > 1e-3  # the child moved: not a world compared with itself
    return worst, checked


def test_iscm_do_child_recomputed(gen_exe, tmp_root):
    path = gen_cache(gen_exe, tmp_root, "iscm-do", "--graphs", "60", "--nodes", "4:8", "--samples", "32",
                     "--edge-prob", "0.6", "--iscm", "--targets", "3")
    with twincache.Cache(path) as c:
        assert c[0].flags & 4, "ISCM flag"
        checked = 0
        for i in range(len(c)):
            g = c[i]
            err, n = iscm_child_error(g, g.base, g.inter, g.norm_std.astype(np.float64))
            assert err < 1e-5, (i, err)
            checked += n
        assert checked > 50
        # the fresh twins of the same SCMs (standardised by their own base world)
        fresh = 0
        with twincache.Loader(path, batch_size=20, samples="fresh", rows=24, output="numpy") as L:
            for b in L:
                for gi in range(b.n_graphs):
                    g = c[int(b.numpy["graph_id"][gi])]
                    n, k = g.n_nodes, g.n_inter
                    base = b.numpy["base"][gi][:, :n]
                    inter = b.numpy["inter"][gi][:k, :, :n]
                    assert np.abs(base.astype(np.float64).mean(axis=0)).max() < 1e-4
                    err, m = iscm_child_error(g, base, inter)
                    assert err < 1e-5, (g.index, err)
                    fresh += m
        assert fresh > 50
