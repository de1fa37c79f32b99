"""The names of families, mechanisms, noises and kinds come from C's one
table (formats/names.c), and a cache of several families says which graph
is which."""
import os

import twincache
from twincache import _capi as C


def test_names_are_cs():
    assert twincache.cache.FAMILIES == ("er", "ba", "ws", "sf", "sbm", "rgg", "file")
    assert twincache.cache.MECHANISMS == ("linear", "mlp", "rff", "sigmoid", "poly", "mixed")
    assert twincache.cache.NOISES[:3] == ("gauss", "laplace", "uniform")
    assert "cauchy" in twincache.cache.NOISES and "gumbel" in twincache.cache.NOISES
    assert twincache.cache.KINDS == ("do", "shift", "noise", "soft")
    for choice in (C.CHOICE_FAMILY, C.CHOICE_MECHANISM, C.CHOICE_NOISE, C.CHOICE_INTER_KIND):
        assert len(C.choice_names(choice)) == C.choice_count(choice) > 0
    assert C.choice_name(C.CHOICE_NOISE, 99) is None


def test_mixture_families(tmp_root):
    out = os.path.join(tmp_root, "mixture")
    twincache.generate(out, graphs=200, graph="sf:0.5,rgg:0.5", noise="gumbel", samples=8,
                       threads=2, progress=False)
    with twincache.Cache(out) as c:
        fams = [c[i].family for i in range(len(c))]
        assert set(fams) == {"sf", "rgg"}
        assert c[0].noise == "gumbel"


def test_mixture_mechanisms(tmp_root):
    out = os.path.join(tmp_root, "mech-mixture")
    twincache.generate(out, graphs=50, mechanism="linear:0.5,rff:0.3,sigmoid:0.2", samples=8,
                       nodes="6:8", threads=2, progress=False)
    with twincache.Cache(out) as c:
        seen = set()
        for i in range(len(c)):
            g = c[i]
            assert g.mechanism == "mixed" and len(g.node_mechanisms) == g.n_nodes
            seen.update(g.node_mechanisms)
            for j, m in enumerate(g.node_mechanisms):  # a linear node has no unit weights
                if g.adj[:, j].any():  # (nor has a sigmoid root)
                    assert (m == "linear") == (not g.mlp[j].any())
        assert seen == {"linear", "rff", "sigmoid"}
