"""twincache.suite's metrics and baselines against answers computed by hand
on graphs of 2-4 nodes, no cache: each case is the edge case its docstring
decides (an empty prediction of an empty graph, orientation ties, the
baselines' orders and standardisation, |T| with withheld targets, the
diagonal left out of the pooled pair kinds). The metrics module itself
loads without the C library."""
import os
import subprocess
import sys

import numpy as np
import pytest

import twincache
from twincache.suite import baseline as tb
from twincache.suite import metrics as tm


def test_metrics_module_needs_no_library():
    """metrics.py by its path, in a Python where the library cannot load:
    nothing of twincache is imported, the metrics compute."""
    path = tm.__file__  # the source tree's or the wheel's
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('m', {path!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "import numpy as np\n"
            "assert not any(k.startswith('twincache') for k in sys.modules)\n"
            "print(m.graph_metrics(np.zeros((2, 2)), np.zeros((2, 2), np.uint8))['f1'])\n")
    env = dict(os.environ, TWINCACHE_LIBRARY="/nonexistent/libtwincache.so")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, cwd="/")
    assert r.returncode == 0 and r.stdout == "1.0\n", r.stderr


def test_f1_of_empty_graphs():
    z = np.zeros((3, 3))
    empty = np.zeros((3, 3), np.uint8)
    assert tm.graph_metrics(z, empty)["f1"] == 1.0  # nothing predicted, nothing there: right
    one = empty.copy()
    one[0, 2] = 1
    assert tm.graph_metrics(z, one)["f1"] == 0.0   # missed the only edge
    full = np.ones((3, 3))
    m = tm.graph_metrics(full, empty)
    assert m["f1"] == 0.0 and m["shd"] == 3 and m["shd2"] == 6  # the diagonal is no edge
    assert np.isnan(m["orient"]) and np.isnan(m["auprc"])


def test_orientation_ties_count_half():
    adj = np.zeros((3, 3), np.uint8)
    adj[0, 1] = adj[1, 2] = 1
    p = np.zeros((3, 3))
    p[0, 1] = p[1, 0] = 0.7  # a tie on 0 -> 1
    assert tm.graph_metrics(p, adj)["orient"] == 0.5 * (0.5 + 0.5)  # 1 -> 2: 0 vs 0, a tie too
    p[1, 2] = 0.2           # 1 -> 2 oriented right
    assert tm.graph_metrics(p, adj)["orient"] == 0.5 * (0.5 + 1.0)
    p[2, 1] = 0.9           # and now wrong
    assert tm.graph_metrics(p, adj)["orient"] == 0.5 * (0.5 + 0.0)


def test_pair_kinds_by_hand():
    # world 0 moved nodes 0 and 1, world 1 moved node 2; node 3 never moved
    k = tm.pair_kinds([[1, 1, 0, 0], [0, 0, 1, 0]])
    N, J, B, I = 0, 1, 2, 3  # indices of PAIR_KINDS
    assert tm.PAIR_KINDS[N] == "neither moved" and tm.PAIR_KINDS[B] == "both moved"
    want = np.array([[B, B, J, I],
                     [B, B, J, I],
                     [J, J, B, I],
                     [J, J, J, N]])
    assert np.array_equal(k, want)


def test_pooled_pair_kinds_leave_out_the_diagonal():
    """One world moved both nodes of 0 -> 1: the two pairs (0,1), (1,0) are
    'both moved', the diagonal is no pair (its high p would count as a
    false positive ranked first)."""
    adj = np.array([[0, 1], [0, 0]], np.uint8)
    p = np.array([[0.95, 0.9], [0.1, 0.95]])
    kinds = tm.pair_kinds([[1, 1]])
    out = tm.pooled_pair_kinds([(p, adj, kinds), (p, adj, None)])  # no kinds: not pooled
    assert out["both moved"] == {"pairs": 2, "edges": 1, "auprc": 1.0}
    assert all(out[k] == {"pairs": 0, "edges": 0, "auprc": None} for k in tm.PAIR_KINDS
               if k != "both moved")
    assert tm.pooled_pair_kinds([(p, adj, None)]) == {}


def _two_nodes(scale):
    """x1 = scale * x0 exactly, 4 rows: x0 = -1, 1, -1, 1 (sd 1)."""
    x0 = np.array([-1.0, 1.0, -1.0, 1.0])
    return np.stack([x0, scale * x0], axis=1)


def test_sortnregress_fits_standardised_columns():
    """x1 = 10 x0: on standardised columns x1's coefficient on x0 is 1 (4 /
    (4 + 1e-6), the ridge), not the raw 10."""
    W = tb._regress_in_order(_two_nodes(10.0), np.array([0, 1]))
    assert W[0, 1] == pytest.approx(4 / (4 + 1e-6), abs=1e-9) and W[1, 0] == 0 and W[0, 0] == 0


def test_var_sort_orders_by_ascending_variance():
    """var(x0) = 1 < var(x1) = 100: the order is 0, 1, so 0 -> 1 gets
    |w| / (|w| + 0.25) = 0.8 (w = 1, standardised) and 1 -> 0 nothing;
    with x0 the larger (x0 = 10 x1), the other way round."""
    for X, i, j in ((_two_nodes(10.0), 0, 1), (_two_nodes(0.1), 1, 0)):
        p = tb.baseline_var_sort(tb.graph_batch(X))
        assert p.shape == (1, 2, 2)
        assert p[0, i, j] == pytest.approx(0.8, abs=1e-6) and p[0, j, i] == 0, (i, j)


def test_twin_T_by_hand_targets_known_and_withheld():
    """base rows (x0, x1) = (-1, -2), (1, 2): sd 1 and 2. World 0 is do(x0 =
    3): both move, effect |3 - x0| = 4, 2 -> 3 / sd 1 = 3 on x0, |6 - x1| =
    8, 4 -> 6 / 2 = 3 on x1. World 1 is do(x1 = 0): x1 moves by 2, 2 -> 1
    (sd 2), x0 not at all. Targets known: p(0 -> 1) = 3 / (3 + 1) = 0.75,
    p(1 -> 0) = 0 (world 1 does not move x0). Withheld: a world hits what
    it moved, so world 0 hits 0 and 1: p(0 -> 1) = 3 / 4 still, p(1 -> 0) =
    mean(3, 0) = 1.5 -> 1.5 / 2.5 = 0.6."""
    base = np.array([[-1.0, -2.0], [1.0, 2.0]])
    inter = np.array([[[3.0, 6.0], [3.0, 6.0]], [[-1.0, 0.0], [1.0, 0.0]]])
    known = tb.baseline_twin_T(tb.graph_batch(base, inter, np.eye(2)))[0]
    assert known[0, 1] == pytest.approx(0.75) and known[1, 0] == 0
    withheld = tb.baseline_twin_T(tb.graph_batch(base, inter, None))[0]
    assert withheld[0, 1] == pytest.approx(0.75) and withheld[1, 0] == pytest.approx(0.6)
    assert known[0, 0] == known[1, 1] == withheld[0, 0] == 0


def test_baselines_read_only_the_rows_a_world_holds():
    """Rows per world (FORMAT.md 3.10): the |T| case above with a third,
    zero row in every world (a batch's padding past each world's 2 rows)
    gives the same answers when the rows array says 2, and others when the
    zero row is read (rows = 3: base sd and the effects change). The
    base-world baselines (corr) likewise: x1 = 2 x0 on the 2 rows held
    (|corr| 1); read with the padded row (0, 0), base (-1,-2), (1,2), (0,0)
    still has corr 1, so corr is checked on base rows (1, 5), (2, 4), (0, 0)
    instead: held rows give |corr| 1, all three 4 / sqrt(2 * 14) = 2 / sqrt(7)."""
    base = np.array([[-1.0, -2.0], [1.0, 2.0], [0.0, 0.0]])
    inter = np.array([[[3.0, 6.0], [3.0, 6.0], [0.0, 0.0]], [[-1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]])
    held = tb.baseline_twin_T(tb.graph_batch(base, inter, np.eye(2), rows=[2, 2, 2]))[0]
    assert held[0, 1] == pytest.approx(0.75) and held[1, 0] == 0
    read = tb.baseline_twin_T(tb.graph_batch(base, inter, np.eye(2)))[0]
    assert read[0, 1] != pytest.approx(0.75)
    fewer = tb.baseline_twin_T(tb.graph_batch(base, inter, np.eye(2), rows=[2, 2, 1]))[0]
    assert fewer[0, 1] == pytest.approx(0.75) and fewer[1, 0] == 0  # world 1: its one row, x0 unmoved
    b2 = np.array([[1.0, 5.0], [2.0, 4.0], [0.0, 0.0]])
    c_held = tb.baseline_corr(tb.graph_batch(b2, rows=[2]))[0]
    c_all = tb.baseline_corr(tb.graph_batch(b2))[0]
    assert c_held[0, 1] == pytest.approx(1.0) and c_all[0, 1] == pytest.approx(2.0 / 7.0 ** 0.5)


def test_graph_batch_is_a_batch():
    b = tb.graph_batch(np.zeros((3, 2)), np.zeros((1, 3, 2)), [[1, 0]], [[0, 1], [0, 0]])
    assert isinstance(b, twincache.Batch) and b.nodes == 2
    assert b.base.shape == (1, 3, 2) and b["inter"].shape == (1, 1, 3, 2)
    assert b.target.tolist() == [[[1, 0]]] and b.adj[0, 0, 1] == 1 and b.valid.tolist() == [1]


# ---- the closing sentences of a report, on a hand-made report ---------------

def _rep(cells, **models):
    """A report dict as score returns it, reduced to what standing reads:
    models maps name -> {cell: AUPRC mean or None}."""
    res = {m: {c: {"metrics": {"auprc": {"mean": v}}} for c, v in per.items()}
           for m, per in models.items()}
    return {"cells": list(cells), "results": res}


def test_standing_by_hand():
    from twincache.suite.report import standing
    cells = ("a", "b", "c", "d", "e")
    rep = _rep(cells, **{
        "mine": {"a": 0.679, "b": 0.80, "c": 0.7, "d": 0.5, "e": None},
        "chance": {"a": 0.1, "b": 0.1, "c": 0.1, "d": None, "e": 0.1},
        "var-sort": {"a": 0.769, "b": 0.6, "c": 0.7004, "d": None, "e": 0.3},
        "twin-T": {"a": 0.5, "b": 0.75, "c": 0.69, "d": None, "e": 0.3},
        "pc": {"a": 0.99, "b": 0.99, "c": 0.99, "d": 0.99, "e": 0.99},  # a reference: no baseline
    })
    assert standing(rep) == [
        "a: mine AUPRC 0.679: behind var-sort (0.769) by 0.090",
        "b: mine AUPRC 0.800: ahead of every baseline (best: twin-T 0.750) by 0.050",
        "c: mine AUPRC 0.700: level with the best baseline, var-sort (0.700)",
        "d: mine AUPRC 0.500; no baseline scored on this cell, nothing to compare",
        "e: mine AUPRC undefined (no graph of the cell has one), nothing to compare",
        "mine is ahead of every baseline on 1 of 3 cells, level on 1, behind on 1 "
        "(AUPRC, mean over graphs)",
    ]
    # baselines tied at the best are all named; no model: the best baseline alone
    tied = _rep(("a",), **{"corr": {"a": 0.4}, "var-sort": {"a": 0.4001}, "chance": {"a": 0.2}})
    assert standing(tied) == ["a: no model scored; the best baseline is var-sort and corr (AUPRC 0.400)"]
    # references alone (score --no-baselines --reference ...): the best of them
    refs = _rep(("a", "b"), pc={"a": 0.687, "b": None}, gies={"a": 0.768, "b": None})
    assert standing(refs) == ["a: no model and no baseline scored; the best reference is gies (AUPRC 0.768)",
                              "b: no model and no baseline scored on this cell"]
    one = _rep(("a",), m={"a": 0.3}, corr={"a": 0.4})
    assert standing(one) == ["a: m AUPRC 0.300: behind corr (0.400) by 0.100"]  # one cell: no count
    assert standing(_rep(())) == []


def test_every_table_has_its_legend():
    """Under every metric table of the Markdown (the OOD split tables too)
    the legend line of that metric; the sortability table and the baselines
    named once; the last line is where the model stands."""
    from twincache.suite.report import LEGEND, SORTABILITY_LEGEND, markdown
    s = {"mean": 0.5, "lo": 0.4, "hi": 0.6, "n": 2}
    res = {m: {"a": {"metrics": {k: dict(s) for k in tm.METRICS}}} for m in ("mine", "var-sort")}
    rep = {"suite": "twincache-suite v99", "threshold": 0.5, "cells": ["a"], "splits": {"t": ["a"]},
           "cell_stats": {"a": {"var_sortability": 0.9, "r2_sortability": 0.6, "linear_share": 1.0}},
           "results": res, "seconds": {m: {"a": 0.1} for m in res}}
    lines = markdown(rep).splitlines()
    titles = [i for i, x in enumerate(lines) if x.startswith("### ") and not x.startswith("### cells")]
    assert len(titles) == len(tm.METRICS) + 3  # + the split's auprc, shd, f1
    for i in titles:
        metric = lines[i][4:].split(": ")[-1]
        end = next(j for j in range(i + 4, len(lines)) if not lines[j].startswith("|"))
        assert lines[end] == "" and lines[end + 1] == LEGEND[metric], (metric, lines[i:end + 2])
    assert SORTABILITY_LEGEND in lines
    assert any(x.startswith("Models: var-sort = sortnregress") for x in lines)
    assert lines[-1] == "a: mine AUPRC 0.500: level with the best baseline, var-sort (0.500)"
