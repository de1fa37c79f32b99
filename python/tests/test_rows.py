"""Rows per world (twincache-gen --inter-samples, FORMAT.md 3.10): Graph.rows
and Batch.rows say how many rows each world holds, the rows past a count
are zero, trimmed() cuts S to the most rows a world of the batch holds, and
a cache made without counts gives rows = S on every real world."""
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


def test_compact_refused_naming_dense(caches):
    with pytest.raises(twincache.InvalidArgument, match="dense layout"):
        with twincache.Loader(caches["rows"], batch_size=4, layout="compact", output="numpy") as L:
            next(iter(L))
