"""Which kind of worlds a cache holds (twincache-gen --worlds, FORMAT.md 3.9)
is said by Cache.worlds, Graph.worlds, Loader.worlds and every Batch (dense
and compact, stored and fresh, a mixture of both kinds: "mixed"), and
help(Batch) says what each kind means. An independent cache is format 5, a
twin one still format 4."""
import os
import subprocess

import numpy as np
import pytest

import twincache


@pytest.fixture(scope="module")
def caches(gen_exe, tmp_root):
    out = {}
    for worlds in ("twin", "independent"):
        for samples in ("6", "0"):
            p = os.path.join(tmp_root, f"worlds-{worlds}-{samples}")
            subprocess.run([gen_exe, "--out", p, "--graphs", "20", "--nodes", "3:6", "--samples", samples,
                            "--seed", "4", "--threads", "1", "--quiet", "--worlds", worlds], check=True)
            out[worlds, samples] = p
    return out


def test_cache_and_graph_say_it(caches):
    for worlds in ("twin", "independent"):
        with twincache.Cache(caches[worlds, "6"]) as c:
            assert c.worlds == worlds
            assert c.format_version == (5 if worlds == "independent" else 4)
            g = c[3]
            assert g.worlds == worlds
            # independent: no column of a world is the base world's (twin: most are)
            shared = sum(np.array_equal(g.inter[k][:, j], g.base[:, j])
                         for k in range(g.n_inter) for j in range(g.n_nodes))
            assert (shared == 0) == (worlds == "independent"), (worlds, shared)


@pytest.mark.parametrize("layout", ["dense", "compact"])
@pytest.mark.parametrize("samples", ["stored", "fresh"])
def test_batches_say_it(caches, layout, samples):
    for worlds in ("twin", "independent"):
        path = caches[worlds, "6" if samples == "stored" else "0"]
        kw = {"rows": 6} if samples == "fresh" else {}
        with twincache.Loader(path, batch_size=8, output="numpy", layout=layout, samples=samples, **kw) as L:
            assert L.worlds == worlds
            b = next(iter(L))
            assert b.worlds == worlds
            if layout == "compact" and twincache.batch.torch is not None:  # expand() needs torch
                assert b.expand().worlds == worlds


def test_a_mixture_is_mixed(caches):
    with twincache.Loader([caches["twin", "6"], caches["independent", "6"]], weights=[1, 1], batch_size=4,
                          output="numpy") as L:
        assert L.worlds == "mixed" and next(iter(L)).worlds == "mixed"


def test_help_says_what_each_kind_is():
    doc = twincache.Batch.__doc__
    assert "batch.worlds" in doc and "independent" in doc and "twin" in doc


def test_inspect_says_it_and_verifies(caches, inspect_exe):
    import json
    for worlds in ("twin", "independent"):
        p = caches[worlds, "6"]
        subprocess.run([inspect_exe, "verify", p, "--quiet"], check=True)  # no twin property asked of independent
        info = json.loads(subprocess.run([inspect_exe, "info", p, "--json"], check=True, capture_output=True,
                                         text=True).stdout)
        stats = json.loads(subprocess.run([inspect_exe, "stats", p, "--json"], check=True, capture_output=True,
                                          text=True).stdout)
        assert info["world_kind"] == worlds and stats["world_kind"] == worlds
        assert info["format_version"] == (5 if worlds == "independent" else 4)
        show = json.loads(subprocess.run([inspect_exe, "show", p, "2", "--json"], check=True, capture_output=True,
                                         text=True).stdout)
        assert show["worlds"] == worlds
        # the text says what each kind stores: no twin effect or sparse-twin saving for independent worlds
        text = subprocess.run([inspect_exe, "stats", p], check=True, capture_output=True, text=True).stdout
        if worlds == "twin":
            assert "\n|effect| " in text and "sparse twin" in text and "; twin mean" in text, text
        else:
            assert "\n|effect| " not in text and "sparse twin" not in text, text
            assert "; intervened mean" in text and "stored values" in text, text
