"""twincache.suite: the recipe, build and digests, the metrics against
hand-computed cases, the scorer's known answers (a perfect predictor, chance,
the |T| baseline's orientation), the predictions file and its errors, the
command line's exit codes. Small cells (a test recipe of its own) plus three
of v1's cheapest cells checked against v1's digests, two of v2's against v2's."""
import json
import os
import re
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

from conftest import BUILD, INSTALLED, package_env, program

import twincache.suite as ts
from twincache.suite import baseline as tb, references as tr

TMP = os.environ.get("TWINCACHE_TEST_TMP", os.path.join(BUILD, "test-tmp", "suite"))

SMALL = {"graph": "er", "expected_degree": 2, "nodes": [5, 7], "samples": 32, "mechanism": "linear",
         "noise": "gauss", "intervention": "do", "targets": "all"}


def small_recipe(path):
    cells = [
        {"name": "do", "seed": 11, "graphs": 12, "options": dict(SMALL)},
        {"name": "obs", "seed": 12, "graphs": 10, "options": dict(SMALL, targets="none")},
        {"name": "unknown", "seed": 13, "graphs": 9, "options": dict(SMALL, targets=2),
         "withhold_targets": True},
    ]
    r = {"suite": "twincache-suite", "version": 99, "splits": {"t": {"test": ["obs"]}}, "cells": cells}
    with open(path, "w") as f:
        f.write(ts.dump_recipe(r))
    return path


@pytest.fixture(scope="module")
def built():
    """A built small suite with its digests written into its recipe."""
    root = os.path.join(TMP, "small")
    os.makedirs(TMP, exist_ok=True)
    rpath = small_recipe(os.path.join(TMP, "small.json"))
    import shutil
    shutil.rmtree(root, ignore_errors=True)
    ts.build(root, threads=2, recipe=ts.load_recipe(rpath), progress=None)
    assert sorted(ts.update_digests(root, recipe=ts.load_recipe(rpath))) == ["do", "obs", "unknown"]
    return root, ts.load_recipe(rpath)


# ---- metrics against hand-computed cases ------------------------------------

def test_average_precision_by_hand():
    # ranks: 1 (pos) P=1 R=1/2, 2 (neg), 3 (pos) P=2/3 R=1 -> 1/2*1 + 1/2*2/3
    assert ts.average_precision([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx(5 / 6)
    # one tied group: a single threshold, P = 1/3, R = 1 (sklearn's definition)
    assert ts.average_precision([0.5, 0.5, 0.5], [1, 0, 0]) == pytest.approx(1 / 3)
    # ties between a positive and a negative ranked first: P = 1/2 at R = 1/2
    assert ts.average_precision([0.9, 0.9, 0.1, 0.2], [1, 0, 1, 0]) == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    assert np.isnan(ts.average_precision([0.1, 0.2], [0, 0]))


def test_roc_auc_by_hand():
    # positives 0.9, 0.7 against negatives 0.8, 0.6: 3 of 4 pairs ordered
    assert ts.roc_auc([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx(0.75)
    assert ts.roc_auc([0.5, 0.5, 0.5, 0.5], [1, 0, 1, 0]) == pytest.approx(0.5)  # ties: 1/2
    assert ts.roc_auc([0.2, 0.2, 0.9], [1, 0, 0]) == pytest.approx(0.25)  # (0.5 + 0) / 2
    assert np.isnan(ts.roc_auc([0.1, 0.2], [1, 1]))


def test_shd_reversal_once_and_twice():
    adj = np.zeros((3, 3), np.uint8)
    adj[0, 1] = adj[1, 2] = 1  # 0 -> 1 -> 2
    pred = np.zeros((3, 3), np.uint8)
    pred[1, 0] = 1  # reversed
    pred[1, 2] = 1  # right
    pred[0, 2] = 1  # extra
    assert ts.shd(pred, adj) == 2  # the reversal once, the extra edge once
    assert ts.shd_double(pred, adj) == 3  # the reversal twice
    assert ts.shd(adj, adj) == 0 and ts.shd(np.zeros_like(adj), adj) == 2
    both = pred.copy()
    both[0, 1] = 1  # 0 <-> 1 predicted: differs from 0 -> 1, counted once
    assert ts.shd(both, adj) == 2
    up = np.zeros((3, 3), np.uint8)
    up[2, 0] = 1  # an edge against the index order, predicted right, then reversed
    assert ts.shd(up, up) == 0 and ts.shd(up.T, up) == 1 and ts.shd_double(up.T, up) == 2


def test_graph_metrics_by_hand():
    adj = np.zeros((3, 3), np.uint8)
    adj[0, 1] = adj[1, 2] = 1
    p = np.zeros((3, 3))
    p[0, 1] = 0.9   # right, oriented right
    p[2, 1] = 0.8   # the edge 1 -> 2 predicted reversed
    p[1, 2] = 0.3
    m = ts.graph_metrics(p, adj)
    # thresholded: {0->1, 2->1}; tp 1, 2 predicted, 2 true -> F1 1/2
    assert m["f1"] == pytest.approx(0.5)
    assert m["shd"] == 1 and m["shd2"] == 2
    assert m["orient"] == pytest.approx(0.5)  # 0->1 right, 1->2 wrong
    # ranking: 0.9 (pos), 0.8 (neg), 0.3 (pos): AP = 1/2 + 1/2 * 2/3
    assert m["auprc"] == pytest.approx(5 / 6)


def test_r2_scores_are_least_squares_r2():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 6))
    X[:, 1] += 2 * X[:, 0]
    X[:, 2] += X[:, 1] - X[:, 3]
    Z = X - X.mean(0)
    want = []
    for j in range(6):
        A, y = np.delete(Z, j, axis=1), Z[:, j]
        res = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
        want.append(1 - res @ res / (y @ y))
    assert tb._r2_each(X) == pytest.approx(want, abs=1e-9)
    # sortnregress in the true order finds the edges, nothing against it
    W = tb._regress_in_order(X, np.array([0, 3, 1, 2, 4, 5]))
    assert W[0, 1] > 0.5 and W[1, 2] > 0.3 and W[3, 2] > 0.3 and W[1, 0] == 0 and W[2, 1] == 0


def test_summarize_interval():
    s = ts.summarize([1.0, 2.0, 3.0, float("nan")])
    assert s["n"] == 3 and s["mean"] == pytest.approx(2.0)
    assert s["hi"] - s["mean"] == pytest.approx(1.96 * 1.0 / np.sqrt(3))
    assert ts.summarize([float("nan")])["mean"] is None


# ---- the v1 recipe ----------------------------------------------------------

def test_v1_recipe_covers_the_issue():
    r = ts.load_recipe()
    assert r["version"] == 1 and len(r["cells"]) >= 30
    opts = [c["options"] for c in r["cells"]]
    assert all(c["digest"].startswith("sha256:") for c in r["cells"])
    assert {o["graph"] for o in opts} >= {"er", "sf", "ba", "ws", "sbm", "rgg"}
    assert {o["nodes"][0] for o in opts} >= {10, 20, 30}
    assert {o["mechanism"] for o in opts} >= {"linear", "mlp", "rff", "sigmoid", "poly"}
    assert any(o.get("standardize") for o in opts) and any(o.get("iscm") for o in opts)
    assert {o["noise"] for o in opts} >= {"gauss", "laplace", "cauchy"} and any(o.get("hetero") for o in opts)
    assert {str(o["targets"]) for o in opts} >= {"all", "none", "3"}
    assert {o["intervention"] for o in opts} >= {"do", "soft", "noise"}
    assert any(c.get("withhold_targets") for c in r["cells"])
    assert {o["nodes"][0] for o in opts if o["samples"] == 1000} == {10, 20, 30}
    assert set(r["splits"]) == {"avici", "sea"}


def test_v1_cells_match_their_digests():
    """Three cheap cells of v1, built here, against the recipe's digests (a
    generator change that alters them fails here: `digest --update`)."""
    root = os.path.join(TMP, "v1")
    import shutil
    shutil.rmtree(root, ignore_errors=True)
    out = ts.build(root, threads=1, cells="nodes-10,inter-obs,inter-do3", progress=None)
    assert set(out) == {"nodes-10", "inter-obs", "inter-do3"}
    # v1 is frozen: no cell names worlds, so none gains a --worlds flag
    assert not any("worlds" in c or "--worlds" in ts.gen_args(c) for c in ts.load_recipe()["cells"])


# ---- worlds: a cell's twin or independent worlds -----------------------------------

def test_worlds_field():
    """`worlds` reaches twincache-gen as --worlds (a twin cell's flags are
    unchanged), the built cache holds those worlds and its digest differs
    from the twin cell's; a bad value or one among the options: one line."""
    import shutil
    twin = {"name": "t", "seed": 21, "graphs": 3, "options": dict(SMALL)}
    ind = dict(twin, name="i", worlds="independent")
    assert "--worlds" not in ts.gen_args(twin)
    assert ts.gen_args(ind)[4:6] == ["--worlds", "independent"]
    assert ts.gen_args(dict(twin, worlds="twin")) == ts.gen_args(twin)
    path = os.path.join(TMP, "worlds.json")
    with open(path, "w") as f:
        f.write(ts.dump_recipe({"suite": "twincache-suite", "version": 98, "cells": [twin, ind]}))
    root = os.path.join(TMP, "worlds")
    shutil.rmtree(root, ignore_errors=True)
    out = ts.build(root, recipe=ts.load_recipe(path), progress=None)
    assert out["t"][0] != out["i"][0]
    from twincache import Cache
    with Cache(os.path.join(root, "i")) as c:
        assert c.worlds == "independent"
    with Cache(os.path.join(root, "t")) as c:
        assert c.worlds == "twin"
    for bad, want in ((dict(ind, worlds="paired"), "worlds must be one of twin, independent"),
                      (dict(twin, options=dict(SMALL, worlds="independent")), "not an option")):
        with open(path, "w") as f:
            f.write(ts.dump_recipe({"suite": "twincache-suite", "version": 98, "cells": [bad]}))
        with pytest.raises(ts.SuiteError, match=want) as e:
            ts.load_recipe(path)
        assert "\n" not in str(e.value)


def test_build_refuses_other_worlds(monkeypatch):
    """A cache whose worlds are not the cell's is refused by name (here a
    generator that dropped --worlds)."""
    import shutil
    from twincache.suite import cells as tcells
    cell = {"name": "i", "seed": 22, "graphs": 2, "options": dict(SMALL), "worlds": "independent"}
    recipe = {"suite": "twincache-suite", "version": 98, "cells": [cell], "_path": "x.json"}
    root = os.path.join(TMP, "worlds-dropped")
    shutil.rmtree(root, ignore_errors=True)
    monkeypatch.setattr(tcells, "gen_args", lambda c: [a for a in ts.gen_args(c)
                                                      if a not in ("--worlds", "independent")])
    with pytest.raises(ts.SuiteError, match="cell i: .* holds twin worlds, the recipe's cell independent"):
        tcells.build(root, recipe=recipe, progress=None)


# ---- the v2 recipe ----------------------------------------------------------

def _v2():
    return ts.load_recipe(ts.recipe_path(2))


def test_recipe_by_version_name(tmp_path, monkeypatch):
    """--recipe v2 names the package's v2.json; a file of that name in the
    working directory is read as the file it is; v99 is one SuiteError."""
    assert ts.load_recipe("v2")["version"] == 2
    assert ts.load_recipe("v1")["version"] == 1
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v2").write_text("[]")
    with pytest.raises(ts.Error, match="recipe v2: not a"):
        ts.load_recipe("v2")
    with pytest.raises(ts.Error, match="suite version 99"):
        ts.load_recipe("v99")


def test_v2_recipe_covers_the_issue():
    """v2.json parses and holds what issue 37's first part names: SEA's
    regimes with independent worlds and floor(1000 N / (N + 1)) rows per
    world, observational cells at N = 10/20/50/100 raw and standardised,
    few- and withheld-target cells, twin cells; every cell with a digest."""
    r = _v2()
    assert r["version"] == 2 and ts.suite_id(r) == "twincache-suite v2"
    cells = {c["name"]: c for c in r["cells"]}
    assert all(c["digest"].startswith("sha256:") for c in r["cells"])
    sea = [c for c in r["cells"] if c["axis"] == "sea"]
    assert len(sea) == 12
    for c in sea:
        o, n = c["options"], c["options"]["nodes"][0]
        assert ts.cell_worlds(c) == "independent" and o["nodes"] == [n, n] and n in (10, 20)
        assert o["samples"] == 1000 * n // (n + 1) and o["targets"] == "all" and o["intervention"] == "do"
        assert o["graph"] in ("er", "sf")
    assert {(c["options"]["graph"], c["options"]["mechanism"]) for c in sea} == \
        {(g, m) for g in ("er", "sf") for m in ("linear", "sigmoid", "poly")}
    assert set(r["splits"]["sea"]["test"]) == {c["name"] for c in sea if "linear" not in c["name"]}
    real = [c for c in r["cells"] if c.get("axis") == "real"]
    assert [c["name"] for c in real] == ["sachs-cdt"]
    assert real[0]["rows"] == 7466 and len(real[0]["edges"]) == 18
    gen = [c for c in r["cells"] if c.get("axis") != "real"]
    obs = [c for c in gen if c["options"]["targets"] == "none"]
    assert sorted((c["options"]["nodes"][0], bool(c["options"].get("standardize"))) for c in obs) == \
        sorted((n, s) for n in (10, 20, 50, 100) for s in (False, True))
    assert all(c["options"]["samples"] == 1000 for c in obs)
    assert any(isinstance(c["options"]["targets"], int) and ts.cell_worlds(c) == "independent"
               for c in gen)
    assert any(c.get("withhold_targets") and ts.cell_worlds(c) == "independent" for c in gen)
    # a do()'s targets are constant columns a model reads back: withheld targets must be of another kind
    assert all(c["options"]["intervention"] != "do" for c in gen if c.get("withhold_targets"))
    assert any(ts.cell_worlds(c) == "twin" and c["options"]["targets"] != "none" for c in gen)
    assert cells["sea-er20-poly"]["options"]["samples"] == 952
    # AVICI's test regimes: d = 20 and 30, 600 observational + 200
    # interventional rows over the targets, WS/SBM/GRG graphs,
    # laplace/cauchy/heteroscedastic noise, linear and RFF mechanisms
    av = [c for c in r["cells"] if c["axis"] == "avici"]
    assert 6 <= len(av) <= 8
    for c in av:
        o = c["options"]
        assert ts.cell_worlds(c) == "independent" and o["nodes"][0] == o["nodes"][1]
        assert o["samples"] == 600 and o["inter_samples"] == 200
        assert o["intervention"] == "do" and o["targets"] == "all"
        assert o["graph"] in ("ws", "sbm", "rgg") and o["mechanism"] in ("linear", "rff")
        assert o["noise"] in ("laplace", "cauchy") or (o["noise"] == "gauss" and o.get("hetero", 0) > 0)
    assert {c["options"]["nodes"][0] for c in av} == {20, 30}
    assert {c["options"]["graph"] for c in av} == {"ws", "sbm", "rgg"}
    assert {c["options"]["mechanism"] for c in av} == {"linear", "rff"}
    assert {"hetero" if c["options"].get("hetero") else c["options"]["noise"] for c in av} == \
        {"laplace", "cauchy", "hetero"}


def test_v2_cells_match_their_digests():
    """Two cheap v2 cells, built here, against v2's digests: one with
    independent worlds, one observational."""
    import shutil
    root = os.path.join(TMP, "v2")
    shutil.rmtree(root, ignore_errors=True)
    out = ts.build(root, threads=1, cells="sea-er10-linear,obs-n10-std,avici-ws20-linear-laplace",
                   recipe=_v2(), progress=None)
    assert set(out) == {"sea-er10-linear", "obs-n10-std", "avici-ws20-linear-laplace"}
    # the AVICI cell's worlds hold 10 rows each (200 over 20 targets), the
    # base world 600; the digest covers those counts
    from twincache.suite.recipe import _graph_digest_parts
    import twincache
    g = twincache.Cache(os.path.join(root, "avici-ws20-linear-laplace"))[0]
    assert list(g.rows) == [600] + [10] * 20
    a = b"".join(_graph_digest_parts(g))
    g.rows = g.rows.copy()
    g.rows[1] = 9
    assert b"".join(_graph_digest_parts(g)) != a


def test_v2_small_cell_scores():
    """A v2 cell of independent worlds at a tiny graph count (its own
    recipe) builds and is scored: every baseline, AUPRC in [0, 1]."""
    import shutil
    cell = dict(ts.select_cells(_v2(), "sea-er10-sigmoid")[0], graphs=2)
    del cell["digest"]
    path = os.path.join(TMP, "v2-small.json")
    with open(path, "w") as f:
        f.write(ts.dump_recipe({"suite": "twincache-suite", "version": 97, "cells": [cell]}))
    root = os.path.join(TMP, "v2-small")
    shutil.rmtree(root, ignore_errors=True)
    ts.build(root, recipe=ts.load_recipe(path), progress=None)
    assert ts.update_digests(root, recipe=ts.load_recipe(path)) == ["sea-er10-sigmoid"]
    rep = ts.score(None, root, recipe=ts.load_recipe(path))
    assert set(rep["results"]) == {"chance", "var-sort", "r2-sort", "corr", "twin-T"}
    for m, res in rep["results"].items():
        r = res["sea-er10-sigmoid"]
        assert r["graphs"] == 2 and 0 <= r["metrics"]["auprc"]["mean"] <= 1, m
    assert "cells solved" in ts.markdown(rep)


# ---- the solved marking ----------------------------------------------------

def test_solved_cells_by_hand():
    """The solved marking on a hand-made report: the best of every model
    at >= 0.95 marks the cell (0.95 itself too), below it does not, a
    cell without an AUPRC (no edges) is not solved."""
    def res(ap):  # every metric (the report's tables print them all) at ap
        return {"metrics": {m: {"mean": ap, "lo": ap, "hi": ap} for m in ts.METRICS}}
    rep = {"suite": "hand", "threshold": 0.5, "cells": ["a", "b", "c", "d"], "splits": {},
           "results": {"var-sort": {"a": res(0.94), "b": res(0.95), "c": res(None), "d": res(0.2)},
                       "model": {"a": res(0.97), "b": res(0.5), "c": res(None)}},
           "seconds": {}, "cpu_seconds": {}}
    assert ts.solved_cells(rep) == {"a": ("model", 0.97), "b": ("var-sort", 0.95)}
    assert ts.solved_cells(rep, threshold=0.96) == {"a": ("model", 0.97)}
    md = ts.markdown(rep)
    assert "cells solved (the best model here reaches AUPRC >= 0.95): 2 of 4" in md
    assert "- a: model 0.970" in md and "- b: var-sort 0.950" in md and "- d:" not in md
    paths, _ = ts.write_report(rep, os.path.join(TMP, "solved", "r"))
    assert json.load(open(paths[0]))["solved"] == {"a": {"model": "model", "auprc": 0.97},
                                                   "b": {"model": "var-sort", "auprc": 0.95}}



# ---- build and digests --------------------------------------------------------

def test_digest_independent_of_threads(built):
    root, recipe = built
    other = os.path.join(TMP, "small-t1")
    import shutil
    shutil.rmtree(other, ignore_errors=True)
    out = ts.build(other, threads=1, recipe=recipe, progress=None)  # checks every digest
    assert all(out[c["name"]][0] == c["digest"] for c in recipe["cells"])


def test_digest_mismatch_names_the_cell(built):
    root, recipe = built
    bad = json.loads(json.dumps({k: v for k, v in recipe.items() if k != "_path"}))
    bad["cells"][1]["digest"] = "sha256:" + "0" * 64
    path = os.path.join(TMP, "bad.json")
    with open(path, "w") as f:
        f.write(ts.dump_recipe(bad))
    with pytest.raises(ts.SuiteError, match="cell obs: digest"):
        ts.build(root, threads=2, recipe=ts.load_recipe(path), progress=None)
    # the way to accept an intended change: build without the check, rewrite
    out = ts.build(root, threads=2, recipe=ts.load_recipe(path), check=False, progress=None)
    assert ts.update_digests(root, recipe=ts.load_recipe(path)) == ["obs"]
    assert ts.load_recipe(path)["cells"][1]["digest"] == out["obs"][0] == recipe["cells"][1]["digest"]


def test_score_checks_the_digests(built, capsys):
    """score trusts only the recipe: a cell regenerated with another seed,
    cut to fewer graphs, or another cell's directory under its name is
    refused with one line naming the cell (exit 1), predictions file or not;
    the untouched cells still score."""
    import shutil
    root, recipe = built
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    do, obs, unknown = recipe["cells"]
    pred = os.path.join(TMP, "digest-pred.npz")
    ts.write_predictions(_perfect_preds(root, recipe, ("do",)), pred, recipe)

    def tampered(tag, edit):
        r2 = os.path.join(TMP, f"tampered-{tag}")
        shutil.rmtree(r2, ignore_errors=True)
        shutil.copytree(root, r2)
        edit(r2)
        return r2

    def regen(r2, cell):
        shutil.rmtree(os.path.join(r2, "do"))
        r = _run([gen, "--out", os.path.join(r2, "do"), "--quiet"] + ts.gen_args(cell))
        assert r.returncode == 0, r.stderr

    def swap(r2):
        a, b = os.path.join(r2, "do"), os.path.join(r2, "obs")
        os.rename(a, a + ".x"), os.rename(b, a), os.rename(a + ".x", b)
    for tag, edit in (("seed", lambda r2: regen(r2, dict(do, seed=99))),
                      ("cut", lambda r2: regen(r2, dict(do, graphs=6))),
                      ("swap", swap)):
        r2 = tampered(tag, edit)
        for extra in ([], [pred]):
            rc = ts.main(["--recipe", recipe["_path"], "score", r2, *extra, "--cells", "do"])
            err = capsys.readouterr().err
            assert rc == 1 and err.count("\n") == 1, (tag, err)
            assert "cell do: " in err and "is not the recipe's cell: its digest" in err, (tag, err)
        with pytest.raises(ts.SuiteError, match="cell do: .* is not the recipe's cell"):
            ts.score(perfect, r2, recipe=recipe, cells=["do"], baselines=False)
        if tag != "swap":
            rep = ts.score(perfect, r2, recipe=recipe, cells=["obs"], baselines=False)
            assert rep["results"]["model"]["obs"]["graphs"] == 10
    nodigest = json.loads(json.dumps({k: v for k, v in recipe.items() if k != "_path"}))
    del nodigest["cells"][0]["digest"]
    path = os.path.join(TMP, "nodigest.json")
    with open(path, "w") as f:
        f.write(ts.dump_recipe(nodigest))
    with pytest.raises(ts.SuiteError, match="cell do: the recipe holds no digest"):
        ts.score(perfect, root, recipe=ts.load_recipe(path), cells=["do"], baselines=False)


def test_observational_cell_has_no_twin_world(built):
    root, recipe = built
    import twincache
    with twincache.Cache(os.path.join(root, "obs")) as c:
        assert len(c) == 10 and all(c[i].n_inter == 0 for i in range(len(c)))
    assert all(k is None for _, k in ts.truth(root, recipe["cells"][1]))


# ---- scoring ------------------------------------------------------------------

def perfect(batch):
    return np.asarray(tb._field(batch, "adj"), dtype=np.float64)


def test_perfect_predictor_scores_one(built):
    root, recipe = built
    rep = ts.score(perfect, root, recipe=recipe, name="perfect")
    for cell in ("do", "obs", "unknown"):
        m = rep["results"]["perfect"][cell]["metrics"]
        for k in ("auprc", "auroc", "f1", "orient"):
            assert m[k]["mean"] == pytest.approx(1.0), (cell, k)
        assert m["shd"]["mean"] == 0 and m["shd2"]["mean"] == 0
    kinds = rep["results"]["perfect"]["do"]["pair_kinds"]
    assert kinds["only j moved"]["edges"] == 0  # an edge i -> j: do(i) moves j too
    assert "pair_kinds" not in rep["results"]["perfect"]["obs"]
    assert rep["splits"] == {"t": ["obs"]}
    md = ts.markdown(rep)
    assert "## OOD split: t" in md and "| do |" in md and "| var-sortability |" in md
    assert "| do | only j moved |" in md  # the per-kind table, a row per cell and kind


def test_chance_is_the_density_and_twin_T_orients(built):
    root, recipe = built
    rep = ts.score(None, root, recipe=recipe, cells=["do", "obs"])
    for cell in recipe["cells"][:2]:
        dens = np.mean([a.sum() / (len(a) * (len(a) - 1)) for a, _ in ts.truth(root, cell)
                        if a.sum() > 0])
        ch = rep["results"]["chance"][cell["name"]]["metrics"]
        assert ch["auprc"]["mean"] == pytest.approx(dens)  # AP of a constant = the base rate
        assert ch["auroc"]["mean"] == pytest.approx(0.5)
    # one do() per node, linear: do(i) moves exactly i's descendants, so |T|
    # scores i -> j above j -> i on every edge
    assert rep["results"]["twin-T"]["do"]["metrics"]["orient"]["mean"] == pytest.approx(1.0)
    # no twin world: |T| has nothing, every score 0
    assert rep["results"]["twin-T"]["obs"]["metrics"]["auroc"]["mean"] == pytest.approx(0.5)
    assert set(rep["results"]) == set(ts.BASELINES)


def test_unknown_cell_withholds_targets(built):
    root, recipe = built
    seen = []

    def spy(batch):
        seen.append(int(np.asarray(tb._field(batch, "target")).sum()))
        return perfect(batch)
    ts.score(spy, root, recipe=recipe, cells=["unknown"], baselines=False)
    assert seen and all(s == 0 for s in seen)


def test_batch_size_per_cell(built):
    root, recipe = built
    sizes = []

    def spy(batch):
        sizes.append(np.asarray(tb._field(batch, "node_mask")).shape[0])
        return perfect(batch)
    rep = ts.score(spy, root, recipe=recipe, cells=["do"], baselines=False, batch_size=lambda c: 5)
    assert sizes and max(sizes) == 5 and rep["results"]["model"]["do"]["graphs"] == 12
    with pytest.raises(ts.SuiteError, match="batch size for cell do"):
        ts.score(perfect, root, recipe=recipe, cells=["do"], baselines=False, batch_size=lambda c: 0)


def test_predict_errors(built):
    root, recipe = built
    with pytest.raises(ts.SuiteError, match=r"cell do: predict returned shape \(3,\)"):
        ts.score(lambda b: np.zeros(3), root, recipe=recipe, cells=["do"], baselines=False)

    def nan(batch):
        p = perfect(batch)
        p[0, 0, 1] = np.nan
        return p
    with pytest.raises(ts.SuiteError, match="cell do graph 0: prediction holds NaN"):
        ts.score(nan, root, recipe=recipe, cells=["do"], baselines=False)
    with pytest.raises(ts.SuiteError, match=r"in \[0, 1\]"):
        ts.score(lambda b: perfect(b) * 3, root, recipe=recipe, cells=["do"], baselines=False)
    with pytest.raises(ts.UnknownCell, match="unknown cell"):
        ts.score(perfect, root, recipe=recipe, cells=["nope"])


def _perfect_preds(root, recipe, cells):
    return {c["name"]: {i: a.astype(float) for i, (a, _) in enumerate(ts.truth(root, c))}
            for c in recipe["cells"] if c["name"] in cells}


def test_predictions_file_roundtrip_and_errors(built):
    root, recipe = built
    path = os.path.join(TMP, "pred.npz")
    preds = _perfect_preds(root, recipe, ("do", "obs"))
    ts.write_predictions(preds, path, recipe)
    rep = ts.score_file(path, root, recipe=recipe, baselines=False)
    assert rep["cells"] == ["do", "obs"]
    assert rep["results"]["pred"]["do"]["metrics"]["auprc"]["mean"] == pytest.approx(1.0)

    def bad(mutate, match):
        p = json.loads(json.dumps({c: {str(g): a.tolist() for g, a in d.items()}
                                   for c, d in preds.items()}))
        arrays = {"suite": np.array(ts.suite_id(recipe))}
        for c, d in p.items():
            for g, a in d.items():
                arrays[f"{c}/{g}"] = np.array(a)
        mutate(arrays)
        f = os.path.join(TMP, "bad.npz")
        np.savez(f, **arrays)
        with pytest.raises(ts.SuiteError, match=match):
            ts.score_file(f, root, recipe=recipe, baselines=False)

    bad(lambda a: a.update(suite=np.array("twincache-suite v1")),
        "predictions for 'twincache-suite v1', this suite is 'twincache-suite v99'")
    bad(lambda a: a.pop("suite"), "no 'suite' key")
    bad(lambda a: a.pop("do/3"), "cell do: predictions miss 1 of 12 graphs")
    bad(lambda a: a.update({"do/2": np.zeros((2, 2))}), r"cell do graph 2: prediction shape \(2, 2\)")
    bad(lambda a: a.update({"do/1": np.full_like(a["do/1"], np.nan)}), "cell do graph 1: prediction holds NaN")
    bad(lambda a: a.update({"elsewhere/0": np.zeros((2, 2))}), "no cell 'elsewhere'")
    bad(lambda a: a.update({"do/x": np.zeros((2, 2))}), "expected '<cell>/<graph id>'")
    # one key per graph: another spelling of graph 3 would land on it and one would win
    for key in ("do/003", "do/\u0663", "do/\u00b2", "do/+3", "do/ 3", "do/3 ", "do/1e20", "do/-1",
                "do/", "do"):
        bad(lambda a: a.update({key: a["do/3"]}), re.escape(f"key {key!r}: expected '<cell>/<graph id>'"))
    for key in ("do/12", "do/100000000000000000000"):  # the cell holds graphs 0..11
        bad(lambda a: a.update({key: a["do/3"]}), re.escape(f"key {key!r}: cell do has graphs 0 to 11"))
    # the former argument order still writes the same file, with a warning
    old = os.path.join(TMP, "pred-old-order.npz")
    with pytest.warns(DeprecationWarning, match=r"write_predictions\(preds, path\)"):
        ts.write_predictions(old, preds, recipe)
    got = ts.read_predictions(old, recipe)
    assert sorted(got) == ["do", "obs"] and all(np.array_equal(got["do"][i], preds["do"][i])
                                                for i in preds["do"])
    v1 = os.path.join(TMP, "pred-v1.npz")  # recipe=None: the package's (v1), writing and reading
    ts.write_predictions({"nodes-10": {0: np.eye(10)}}, v1)
    assert list(ts.read_predictions(v1)) == ["nodes-10"]
    with open(os.path.join(TMP, "junk.npz"), "w") as f:
        f.write("not a zip")
    with pytest.raises(ts.SuiteError, match="not a readable .npz"):
        ts.score_file(os.path.join(TMP, "junk.npz"), root, recipe=recipe)


def test_write_report(built):
    root, recipe = built
    rep = ts.score(perfect, root, recipe=recipe, cells=["do"], baselines=False)
    paths, note = ts.write_report(rep, os.path.join(TMP, "report", "r"))
    assert json.load(open(paths[0]))["results"]["model"]["do"]["graphs"] == 12
    assert open(paths[1]).read().startswith("# twincache-suite v99")
    try:
        import matplotlib  # noqa: F401
        assert note is None and os.path.getsize(paths[2]) > 0
    except ImportError:
        assert "matplotlib" in note and len(paths) == 2


# ---- the command line ------------------------------------------------------------

def _run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _trainer_and_cache(recipe, cell_name, name, seed, graphs):
    """twincache-train, the recipe's cell and a training cache of its regime
    (another seed: `graphs` graphs under TMP/name)."""
    import shutil
    train = program("twincache-train", os.path.join(BUILD, "train", "twincache-train"))
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    cell = ts.select_cells(recipe, cell_name)[0]
    tr = os.path.join(TMP, name)
    shutil.rmtree(tr, ignore_errors=True)
    r = _run([gen, "--out", tr, "--threads", "2"] + ts.gen_args(dict(cell, seed=seed, graphs=graphs)))
    assert r.returncode == 0, r.stderr
    return train, cell, tr


def test_c_trainer_predict(built):
    """twincache-train --predict: the suite's .npz for the --val-cache cell;
    its probabilities pooled over the cell's pairs give the trainer's own
    validation AUPRC, and the scorer reads it (a recipe of version 1: the C
    trainer writes 'twincache-suite v1'). Bad --predict uses: one line."""
    root, recipe = built
    train, cell, tr = _trainer_and_cache(recipe, "do", "predict-train", 5, 48)
    pred = os.path.join(TMP, "c-pred.npz")
    val = os.path.join(root, "do")
    r = _run([train, "--cache", tr, "--val-cache", val + "/", "--steps", "30", "--batch", "8",
              "--eval-every", "30", "--device", "cpu", "--json", "--predict", pred])
    assert r.returncode == 0, r.stderr
    auprc = json.loads(r.stdout)["val_auprc"]
    with np.load(pred, allow_pickle=False) as z:
        assert sorted(z.keys()) == sorted(["suite"] + [f"do/{i}" for i in range(cell["graphs"])])
        assert str(z["suite"]) == "twincache-suite v1"
        preds = {i: z[f"do/{i}"] for i in range(cell["graphs"])}
    s, y = [], []
    for i, (adj, _) in enumerate(ts.truth(root, cell)):
        q = preds[i]
        assert q.shape == adj.shape and q.dtype == np.float32
        assert np.all((q >= 0) & (q <= 1)) and np.all(np.diag(q) == 0)
        off = ~np.eye(len(adj), dtype=bool)
        s.append(q[off]), y.append(adj[off])
    assert ts.average_precision(np.concatenate(s), np.concatenate(y)) == pytest.approx(auprc, abs=2e-5)
    rep = ts.score_file(pred, root, recipe=dict(recipe, version=1), baselines=False)
    per = [ts.graph_metrics(preds[i].astype(np.float64), adj)["auprc"]
           for i, (adj, _) in enumerate(ts.truth(root, cell))]
    assert rep["results"]["c-pred"]["do"]["metrics"]["auprc"]["mean"] == pytest.approx(np.nanmean(per))
    with pytest.raises(ts.SuiteError, match="predictions for 'twincache-suite v1'"):
        ts.score_file(pred, root, recipe=recipe, baselines=False)

    base = [train, "--cache", tr, "--steps", "2", "--batch", "8", "--device", "cpu"]
    for args, rc, msg in (
            (["--predict", pred], 2, "--predict: needs --val-cache DIR"),
            (["--val-cache", val, "--predict", ""], 2, "--predict: expected a file name"),
            (["--val-cache", val, "--predict", os.path.join(TMP, "no-such-dir", "p.npz")], 1,
             "--predict: cannot create"),
            (["--val-cache", val, "--predict", TMP], 1, "is not a file"),
            (["--val-cache", "/", "--predict", pred], 1, "--predict: cannot name a suite cell")):
        r = _run(base + args)
        assert r.returncode == rc and r.stderr.count("\n") == 1 and msg in r.stderr, (args, r.stderr)
        assert "step" not in r.stdout  # refused before training


def test_c_trainer_predict_from_checkpoint(built):
    """--resume CKPT --predict-only (and --resume of a finished run with
    --predict): the checkpoint's model predicts, nothing is trained, and the
    file equals, bit for bit, the one the training run wrote after its last
    step, whatever --batch/--seed/--steps the predicting run names. Without
    --resume or --predict: one line, exit 2."""
    root, recipe = built
    train, cell, tr = _trainer_and_cache(recipe, "do", "predict-only-train", 6, 40)
    ckpt = os.path.join(TMP, "predict-only.ckpt")
    val = os.path.join(root, "do")
    run = [train, "--cache", tr, "--val-cache", val, "--device", "cpu"]
    ref = os.path.join(TMP, "trained.npz")
    r = _run(run + ["--steps", "12", "--batch", "8", "--eval-every", "12", "--quiet",
                    "--checkpoint", ckpt, "--predict", ref])
    assert r.returncode == 0, r.stderr

    def read(path):
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.keys()}
    want = read(ref)
    for extra in (["--predict-only", "--batch", "5", "--seed", "9"],  # stream flags need not match
                  ["--steps", "12", "--batch", "8"]):                 # the finished run itself
        out = os.path.join(TMP, "from-ckpt.npz")
        r = _run(run + ["--resume", ckpt, "--predict", out] + extra)
        assert r.returncode == 0, (extra, r.stderr)
        assert "predict only: the model of" in r.stdout and "step     " not in r.stdout, r.stdout
        got = read(out)
        assert sorted(got) == sorted(want)
        for k in want:
            assert np.array_equal(got[k], want[k]), (extra, k)
    r = _run(run + ["--resume", ckpt, "--steps", "12", "--batch", "8"])
    assert r.returncode == 1 and "nothing left of --steps 12" in r.stderr and "--predict-only" in r.stderr
    for args in (["--predict-only", "--predict", ref], ["--predict-only", "--resume", ckpt]):
        r = _run(run + args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "--predict-only: needs --resume CKPT" in r.stderr, r.stderr


def test_c_trainer_predicts_any_shape(built):
    """One checkpoint, trained on graphs of 3..6 nodes, 16 rows and a do()
    per node, predicts on caches of other N, K, S, rows per world and
    worlds (issue 37: one model for every cell): during training (--val-cache
    of another shape) and from the checkpoint alone (--predict-only with no
    --cache), the same file bit for bit; every graph's (n, n) array has its
    own n; --suite-version names the suite in the file."""
    import shutil
    import twincache
    root, recipe = built
    train, cell, tr = _trainer_and_cache(recipe, "do", "anyshape-train", 8, 40)
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    ckpt = os.path.join(TMP, "anyshape.ckpt")
    others = {"wide": ["--nodes", "9:12", "--samples", "40", "--targets", "3"],
              "rows": ["--nodes", "4:7", "--samples", "30", "--inter-samples", "25"],
              "indep": ["--nodes", "5:8", "--samples", "24", "--worlds", "independent"],
              "obs": ["--nodes", "12:12", "--samples", "50", "--targets", "none"]}
    first = True
    for name, args in others.items():
        val = os.path.join(TMP, "anyshape", name)
        shutil.rmtree(val, ignore_errors=True)
        os.makedirs(os.path.dirname(val), exist_ok=True)
        r = _run([gen, "--out", val, "--graphs", "7", "--seed", "4", "--quiet"] + args)
        assert r.returncode == 0, r.stderr
        ref, got = os.path.join(TMP, f"anyshape-{name}-1.npz"), os.path.join(TMP, f"anyshape-{name}-2.npz")
        if first:  # trains once, validating on a cache of another shape
            r = _run([train, "--cache", tr, "--val-cache", val, "--steps", "10", "--batch", "8",
                      "--eval-every", "10", "--device", "cpu", "--quiet", "--checkpoint", ckpt,
                      "--predict", ref, "--suite-version", "7"])
            assert r.returncode == 0, r.stderr
            first = False
        else:
            r = _run([train, "--val-cache", val, "--resume", ckpt, "--predict-only", "--device", "cpu",
                      "--predict", ref, "--suite-version", "7", "--batch", "3"])
            assert r.returncode == 0, (name, r.stderr)
        r = _run([train, "--val-cache", val, "--resume", ckpt, "--predict-only", "--device", "cpu",
                  "--predict", got, "--suite-version", "7"])
        assert r.returncode == 0, (name, r.stderr)
        with np.load(ref, allow_pickle=False) as a, np.load(got, allow_pickle=False) as b:
            assert sorted(a.keys()) == sorted(b.keys()) == sorted(["suite"] + [f"{name}/{i}" for i in range(7)])
            assert str(b["suite"]) == "twincache-suite v7"
            with twincache.Cache(val) as c:
                for i in range(7):
                    n = c[i].n_nodes
                    q = b[f"{name}/{i}"]
                    assert q.shape == (n, n) and np.all(np.diag(q) == 0) and np.all((q >= 0) & (q <= 1))
                    assert np.array_equal(a[f"{name}/{i}"], q), (name, i)
            assert len({float(v) for k in b.keys() if k != "suite" for v in b[k].ravel()}) > 7
    r = _run([train, "--val-cache", val, "--resume", ckpt, "--predict", got, "--device", "cpu"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "only --predict-only goes without it" in r.stderr
    r = _run([train, "--val-cache", val, "--resume", ckpt, "--predict-only", "--predict", got,
              "--device", "cpu", "--local-nodes", "1"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--local-nodes: needs --cache" in r.stderr


def test_c_trainer_withholds_targets(built):
    """--val-withhold-targets: the validation (and --predict) batches of a
    withhold_targets cell carry no targets, and the trainer reads a do()'s
    back from its worlds (the node constant over a world's rows: MODEL.md),
    so on the do() cell its predictions equal, bit for bit, those it makes
    seeing the targets, and it says it inferred every world; on shift
    worlds nothing is constant, no target is inferred and the predictions
    differ. The flag needs --val-cache (one line, exit 2)."""
    import shutil
    root, recipe = built
    train, cell, tr = _trainer_and_cache(recipe, "unknown", "withhold-train", 5, 32)
    assert cell["withhold_targets"]
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    shift = os.path.join(TMP, "withhold-shift", "shift")
    shutil.rmtree(shift, ignore_errors=True)
    os.makedirs(os.path.dirname(shift), exist_ok=True)
    shifted = dict(cell, seed=3, graphs=9, options=dict(cell["options"], intervention="shift"))
    r = _run([gen, "--out", shift, "--quiet"] + ts.gen_args(shifted))
    assert r.returncode == 0, r.stderr
    for val, name, worlds, same in ((os.path.join(root, "unknown"), "unknown", 9 * 2, True),
                                    (shift, "shift", None, False)):
        preds = []
        for extra in ([], ["--val-withhold-targets"]):
            pred = os.path.join(TMP, f"withhold-{name}{len(extra)}.npz")
            r = _run([train, "--cache", tr, "--val-cache", val, "--steps", "20", "--batch", "8",
                      "--eval-every", "20", "--device", "cpu", "--predict", pred] + extra)
            assert r.returncode == 0, r.stderr
            with np.load(pred, allow_pickle=False) as z:
                preds.append(np.concatenate([z[f"{name}/{i}"].ravel() for i in range(9)]))
        line = [x for x in r.stdout.splitlines() if x.startswith("targets withheld:")]
        assert len(line) == 1, r.stdout
        if same:
            assert f"inferred for {worlds} of {worlds} worlds" in line[0], line
        else:
            assert line[0].startswith("targets withheld: inferred for 0 of "), line
        assert preds[0].shape == preds[1].shape and np.array_equal(preds[0], preds[1]) == same, name
    r = _run([train, "--cache", tr, "--steps", "2", "--device", "cpu", "--val-withhold-targets"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "needs --val-cache" in r.stderr, r.stderr


def test_cli_program(built):
    """The program itself (the wheel's console script, the build tree's
    wrapper, else python -m): a usage error is one line and exit 2."""
    root, recipe = built
    cmd = os.environ.get("TWINCACHE_SUITE")
    if INSTALLED:  # pyproject.toml's [project.scripts]
        cmd = os.path.join(sysconfig.get_path("scripts"), "twincache-suite")
        assert os.access(cmd, os.X_OK), f"the wheel installed no {cmd}"
    cmd = [cmd] if cmd else [sys.executable, "-m", "twincache.suite"]
    r = subprocess.run(cmd + ["--recipe", recipe["_path"], "build", root, "--cells", "do,nope"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=package_env())
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown cell(s) nope" in r.stderr
    bad = os.path.join(TMP, "program-truncated.npz")  # damaged bytes: one line, no traceback
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04" + bytes(40))
    r = subprocess.run(cmd + ["--recipe", recipe["_path"], "score", root, bad],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=package_env())
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "not a readable .npz" in r.stderr, r.stderr


def test_cli(built, capsys):
    """The subcommands, in this process (each program start imports torch)."""
    root, recipe = built

    def cli(*args):
        rc = ts.main(["--recipe", recipe["_path"], *args])
        out, err = capsys.readouterr()
        return rc, out, err
    rc, _, err = cli("build", root, "--threads", "0")
    assert rc == 2 and "--threads 0" in err
    rc, out, err = cli("digest", root)
    assert rc == 0 and out.count(" ok") == 3, out + err
    rc, out, err = cli("build", root, "--no-check", "--cells", "do")
    assert rc == 0 and "do " in out and " ok" in out, out + err
    rc, out, err = cli("info", root)
    assert rc == 0 and "var-sort" in out and "[targets withheld]" in out, err
    # --recipe after the command as well (`build --recipe v2 DIR`); there it wins over one before
    for args in (["info", root, "--recipe", recipe["_path"]],
                 ["--recipe", "v1", "info", "--recipe", recipe["_path"], root]):
        assert ts.main(args) == 0
        out2, err2 = capsys.readouterr()
        assert out2 == out, (args, err2)
    rc, out, err = cli("score", root, os.path.join(TMP, "missing.npz"))
    assert rc == 1 and "not a readable .npz" in err and err.count("\n") == 1
    rc, out, err = cli("score", root, "--cells", "obs")
    assert rc == 0 and "| obs |" in out and "var-sort" in out, err
    # the report ends with where the (here: no) model stands; --out prints it after `wrote`
    assert out.rstrip().splitlines()[-1].startswith("obs: no model scored; the best baseline is "), out
    rc, out, err = cli("score", root, "--cells", "obs", "--out", os.path.join(TMP, "cli-obs"))
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith("wrote ") and len(lines) == 2, out + err
    assert lines[1].startswith("obs: no model scored; the best baseline is "), out
    rc, out, err = cli("score", root, "--cells", "obs", "--no-baselines")
    assert rc == 2 and "nothing to score" in err
    rc, out, err = cli("score", root, "--cells", "obs", "--reference", "pc,fci")
    assert rc == 2 and "'fci' is none of pc, ges, gies" in err and err.count("\n") == 1, err
    try:
        import causallearn  # noqa: F401
    except ImportError:
        return
    rc, out, err = cli("score", root, "--cells", "obs", "--no-baselines", "--reference", "pc")
    assert rc == 0 and "| cell | pc |" in out, out + err  # no baseline column


def test_example_model_scorer(built):
    """examples/score_suite.py: a train_avici.py checkpoint (an untrained
    model here) loads and its predictor scores through the suite."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
    import score_suite
    from twin_model import TwinModel
    root, recipe = built
    torch.manual_seed(0)
    f = {"d": 16, "layers": 0, "heads": 2, "stats": "on", "edge_layers": 1, "rows": 8}
    net = TwinModel(f["d"], f["layers"], f["heads"], True, f["edge_layers"], 0, 16)
    path = os.path.join(TMP, "untrained.pt")
    torch.save({"args": f, "model": net.state_dict()}, path)
    net2, f2 = score_suite.load_checkpoint(path)
    rep = ts.score(score_suite.predictor(net2, f2), root, recipe=recipe, cells=["do"], name="m",
                   baselines=False, output="torch")
    m = rep["results"]["m"]["do"]["metrics"]
    assert m["auprc"]["n"] > 0 and 0 <= m["auprc"]["mean"] <= 1 and m["shd"]["mean"] >= 0


def test_example_model_reads_held_rows_and_withheld_targets():
    """examples/train_avici.py's held_rows: worlds holding fewer rows than S
    are all cut to the fewest rows a real world holds (a padded graph's
    count aside), and a world that names no target gets the real nodes
    constant over its rows; named targets and batches without a rows field
    stay as they are."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
    import train_avici as ta
    g = torch.Generator().manual_seed(3)
    G, K, S, N = 3, 2, 6, 4
    base, inter = torch.randn(G, S, N, generator=g), torch.randn(G, K, S, N, generator=g)
    inter[0, 1, :, 2] = 1.5            # graph 0, world 1: node 2 held constant (a do())
    inter[0, 1, :, 3] = 0.0            # node 3 constant too, but padded (node_mask 0)
    inter[1, 0, :, 0] = -2.0           # graph 1, world 0: node 0 constant, its target named
    target = torch.zeros(G, K, N, dtype=torch.uint8)
    target[1, 0, 1] = 1                # named (not the constant node): kept as named
    node_mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1], [1, 1, 1, 1]], dtype=torch.bool)
    int_mask = torch.tensor([[1, 1], [1, 0], [1, 1]], dtype=torch.bool)
    graph_mask = torch.tensor([True, True, False])  # graph 2: padding
    # graph 1's second world is no world (int_mask 0), graph 2 no graph: their counts do not count
    rows = torch.tensor([[6, 6, 5], [6, 4, 1], [0, 0, 0]], dtype=torch.int32)
    b = {"rows": rows}
    bb, ii, tt = ta.held_rows(b, base, inter, target, node_mask, int_mask, graph_mask)
    # the fewest of the real worlds: graph 1's first intervened world, 4 rows
    assert bb.shape == (G, 4, N) and ii.shape == (G, K, 4, N)
    assert torch.equal(bb, base[:, :4]) and torch.equal(ii, inter[:, :, :4])
    assert tt[0, 1].tolist() == [0, 0, 1, 0] and tt[1, 0].tolist() == [0, 1, 0, 0]
    # graph 0's world 0 has no constant node: no target; graph 1's unused world stays empty
    assert tt[0, 0].sum() == 0 and tt[1, 1].sum() == 0
    # observed data without regimes (K = 0): the inputs still build (one empty world slot)
    b0 = {"base": base[:1], "inter": inter[:1, :0], "target": target[:1, :0], "int_mask": int_mask[:1, :0],
          "node_mask": node_mask[1:2], "valid": graph_mask[:1], "rows": rows[:1, :1]}
    inp, gm = ta.model_inputs(b0, 4, "cpu", feats=False)
    assert inp["pair"].shape[:3] == (1, N, N) and bool(gm[0])
    # without a rows field (on-the-fly batches) only the targets are read back
    bb, ii, tt2 = ta.held_rows({}, base, inter, target, node_mask, int_mask, graph_mask)
    assert bb.shape == base.shape and torch.equal(tt2, tt)


def test_example_suite_table():
    """examples/suite_table.py: one row per recipe cell in its order (a
    report's cell the recipe lost is left out and named), the best baseline
    per cell, solved where the best of all reaches 0.95, and how often each
    shipped model is ahead of the best baseline."""
    import json
    rpath = small_recipe(os.path.join(TMP, "table-recipe.json"))
    def report(path, results):
        res = {m: {c: {"metrics": {"auprc": {"mean": v}}} for c, v in per.items()} for m, per in results.items()}
        with open(path, "w") as f:
            json.dump({"cells": ["gone", "obs", "do"], "results": res}, f)
        return path
    a = report(os.path.join(TMP, "table-a.json"), {"model": {"do": 0.97, "obs": 0.4, "gone": 0.99},
                                                    "var-sort": {"do": 0.5, "obs": 0.6, "gone": 0.1}})
    b = report(os.path.join(TMP, "table-b.json"), {"pc": {"do": 0.8, "obs": 0.96, "gone": 0.2},
                                                    "model": {"do": 0.1}})  # the first report's model wins
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "suite_table.py")
    r = subprocess.run([sys.executable, script, a, b, "--recipe", rpath, "--models", "model=M,var-sort,pc=PC"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=package_env())
    assert r.returncode == 0, r.stderr
    assert "left out 1 cell(s) the recipe does not have: gone" in r.stderr, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| ") and not ln.startswith("| cell")]
    assert [ln.split(" | ")[0][2:] for ln in rows] == ["do", "obs", "unknown"], rows
    assert rows[0].split(" | ")[2:5] == ["0.970", "0.500", "0.800"] and rows[0].endswith("**solved** |")
    assert "pc 0.960" in rows[1] and rows[1].endswith("**solved** |")  # a baseline solves it too
    assert not rows[2].endswith("**solved** |")  # no report holds it: dashes, not solved
    assert "Solved (the best of every column ≥ 0.95): 2 of 3 cells." in r.stdout
    assert "M: ahead of the best baseline or reference on 1 of 2 cells." in r.stdout, r.stdout


def test_example_trains_on_a_mixture():
    """examples/train_avici.py --mix A=1,B=3: trains on a Loader mixture of
    whole caches (twin and independent worlds); one cache or a bad weight is
    refused with one line (argparse's exit 2)."""
    pytest.importorskip("torch")
    import shutil
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    d = os.path.join(TMP, "avici-mix")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, extra in (("twin", []), ("indep", ["--worlds", "independent"])):
        r = _run([gen, "--out", os.path.join(d, name), "--graphs", "12", "--nodes", "3:5", "--samples", "8",
                  "--quiet"] + extra)
        assert r.returncode == 0, r.stderr
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "train_avici.py")
    base = [sys.executable, script, "--steps", "2", "--batch", "4", "--layers", "0", "--d", "8", "--heads", "2",
            "--amp", "off", "--torch-threads", "1"]
    mix = f"{d}/twin=1,{d}/indep=3"
    r = subprocess.run(base + ["--mix", mix], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=package_env())
    assert r.returncode == 0 and "2 steps, 8 graphs seen" in r.stdout, r.stdout + r.stderr
    for args, msg in ((["--mix", f"{d}/twin=2"], "a mixture has 2..16"),
                      (["--mix", f"{d}/twin=0,{d}/indep"], "expected DIR=W with W > 0"),
                      (["--mix", mix, "--cache", f"{d}/twin"], "--mix: not with --cache")):
        r = subprocess.run(base + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=package_env())
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)


def test_cpdag_probs_by_hand():
    # causal-learn's encoding: G[j,i] = 1, G[i,j] = -1 <=> i -> j; both -1: i - j
    G = np.zeros((3, 3), int)
    G[1, 0], G[0, 1] = 1, -1     # 0 -> 1
    G[1, 2] = G[2, 1] = -1       # 1 - 2 (undirected)
    p = tr._cpdag_probs(G)
    assert p[0, 1] == 1 and p[1, 0] == 0 and p[1, 2] == p[2, 1] == 0.5 and p.sum() == 2


def test_reference_algorithms(built):
    """causal-learn's PC and GES (venv tests only: pip install causal-learn)."""
    pytest.importorskip("causallearn")
    root, recipe = built
    rep = ts.score(None, root, recipe=recipe, cells=["obs"], baselines=False, reference=["pc", "ges"])
    for m in ("pc", "ges"):
        s = rep["results"][m]["obs"]["metrics"]
        assert s["auprc"]["n"] > 0 and s["shd"]["mean"] >= 0


def test_essential_graph_probs():
    A = np.zeros((3, 3))
    A[0, 1] = 1                  # 0 -> 1
    A[1, 2] = A[2, 1] = 1        # 1 - 2 (undirected)
    p = tr._essential_probs(A)
    assert p[0, 1] == 1 and p[1, 0] == 0 and p[1, 2] == p[2, 1] == 0.5 and p.sum() == 2
    with pytest.raises(ts.SuiteError, match="reference 'fci': one of pc, ges, gies"):
        ts.reference_models(["fci"])


def test_gies_uses_the_targets(built):
    """GIES (venv tests only: pip install gies==0.0.3) gets every twin world
    with its targets: with a do() on every node the I-essential graph is one
    DAG, so no edge is left undirected (0.5); with the targets withheld it
    sees the base world alone."""
    pytest.importorskip("gies")
    root, recipe = built
    import twincache
    fit = ts.reference_models(["gies"])["gies"]
    with twincache.Loader(os.path.join(root, "do"), batch_size=12, shuffle=False, output="numpy") as ld:
        p = fit(next(iter(ld)))
    assert set(np.unique(p)) == {0.0, 1.0}
    cell = ts.select_cells(recipe, "do")[0]
    orient = [ts.graph_metrics(p[g, :len(adj), :len(adj)], adj)["orient"]
              for g, (adj, _) in enumerate(ts.truth(root, cell))]
    assert np.nanmean(orient) > 0.5
    rep = ts.score(None, root, recipe=recipe, cells=["unknown"], baselines=False, reference=["gies"])
    assert rep["results"]["gies"]["unknown"]["metrics"]["auprc"]["n"] > 0


def test_gies_environments_share_no_noise_draw(built, monkeypatch):
    """Twin rows repeat the base rows' noise, which GIES's score of
    independent samples would count K + 1 times: every environment it gets
    holds its own rows, so no value of an untargeted column appears in two
    environments (with the twin rows reused, the columns a do() leaves alone
    would be the base world's, value for value)."""
    gies = pytest.importorskip("gies")
    root, recipe = built
    import twincache
    seen = []
    def fit_bic(data, I):  # records what GIES is given; an empty graph back
        seen.append((data, I))
        return np.zeros((data[0].shape[1],) * 2), 0.0
    monkeypatch.setattr(gies, "fit_bic", fit_bic)
    with twincache.Loader(os.path.join(root, "do"), batch_size=12, shuffle=False, output="numpy") as ld:
        ts.reference_models(["gies"])["gies"](next(iter(ld)))
    assert len(seen) == 12
    for data, I in seen:
        assert len(data) == len(I) == data[0].shape[1] + 1 and min(len(d) for d in data) >= 2
        for j in range(data[0].shape[1]):
            vals = [set(d[:, j].tolist()) for d, t in zip(data, I) if j not in t]
            assert sum(len(v) for v in vals) == len(set().union(*vals)), j


def test_gies_takes_every_row_of_independent_worlds(monkeypatch):
    """On independent worlds (each its own noise) no row repeats another
    world's noise draw, so GIES gets every row each world holds: the base
    world's S and world k's own count (rows per world), not the disjoint
    blocks it gets on twin worlds."""
    gies = pytest.importorskip("gies")
    import shutil
    import twincache
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    cache = os.path.join(TMP, "gies-independent")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(TMP, exist_ok=True)
    r = _run([gen, "--out", cache, "--graphs", "4", "--seed", "5", "--nodes", "4:6", "--samples", "40",
              "--inter-samples", "70", "--worlds", "independent", "--quiet"])
    assert r.returncode == 0, r.stderr
    seen = []
    def fit_bic(data, I):
        seen.append((data, I))
        return np.zeros((data[0].shape[1],) * 2), 0.0
    monkeypatch.setattr(gies, "fit_bic", fit_bic)
    with twincache.Loader(cache, batch_size=4, shuffle=False, output="numpy") as ld:
        batch = next(iter(ld))
        assert batch.worlds == "independent"
        ts.reference_models(["gies"])["gies"](batch)
    with twincache.Cache(cache) as c:
        assert len(seen) == 4
        for g, (data, I) in enumerate(seen):
            rows = c[g].rows
            assert [len(d) for d in data] == [int(x) for x in rows], (g, rows)
            assert I[1:] == [[int(t)] for t in c[g].target]


def test_corr_is_symmetric(built):
    root, recipe = built
    import twincache
    with twincache.Loader(os.path.join(root, "do"), batch_size=4, shuffle=False, output="numpy") as ld:
        p = ts.baseline_corr(next(iter(ld)))
    assert np.array_equal(p, np.swapaxes(p, 1, 2))


# ---- real data a package ships -------------------------------------------------


def _fake_package(tmp, data, truth, as_wheel=True):
    """A wheel (zip) or a site-packages-like folder holding pkg/data/x.csv and
    pkg/data/y.csv; returns (where, sha256 of data, sha256 of truth)."""
    import hashlib
    import zipfile
    os.makedirs(tmp, exist_ok=True)
    files = {"fakepkg/data/x.csv": data.encode(), "fakepkg/data/y.csv": truth.encode()}
    if as_wheel:
        where = os.path.join(tmp, "fakepkg-1.0-py3-none-any.whl")
        with zipfile.ZipFile(where, "w") as z:
            for k, v in files.items():
                z.writestr(k, v)
    else:
        where = os.path.join(tmp, "site")
        for k, v in files.items():
            os.makedirs(os.path.join(where, os.path.dirname(k)), exist_ok=True)
            with open(os.path.join(where, k), "wb") as f:
                f.write(v)
    return (where,) + tuple(hashlib.sha256(v).hexdigest() for v in files.values())


def _real_recipe(path, hd, ht, edges=(("a", "b"), ("b", "c"), ("c", "a"))):
    cells = [{"name": "gen", "seed": 3, "graphs": 2, "options": dict(SMALL)},
             {"name": "real", "axis": "real", "graphs": 1,
              "source": {"package": "fakepkg", "version": "1.0",
                         "data": {"path": "fakepkg/data/x.csv", "sha256": hd},
                         "truth": {"path": "fakepkg/data/y.csv", "sha256": ht}},
              "columns": ["a", "b", "c", "d"], "rows": 40, "edges": [list(e) for e in edges],
              "transform": "none"}]
    with open(path, "w") as f:
        json.dump({"suite": "twincache-suite", "version": 98, "cells": cells}, f)
    return ts.load_recipe(path)


def test_real_cell(capsys):
    """A real-data cell (suite/SUITE.md "Real data"): built from a wheel or a
    folder whose files match the recipe's sha256 pins, the rows an observed
    cache without a graph, the truth the recipe's edges — a 3-cycle here,
    as Sachs's has, which no stored graph may hold — scored by known
    answers; a changed file is refused naming it and both hashes; without the
    package the cell is skipped at build and at score, the others go on."""
    import shutil
    import twincache
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4)).round(3)
    data = "a,b,c,d\n" + "\n".join(",".join(str(v) for v in r) for r in X) + "\n"
    truth = '"Cause","Effect"\n"a","b"\n"b","c"\n"c","a"\n'
    tmp = os.path.join(TMP, "real")
    shutil.rmtree(tmp, ignore_errors=True)
    whl, hd, ht = _fake_package(tmp, data, truth)
    recipe = _real_recipe(os.path.join(tmp, "r.json"), hd, ht)
    for where in (whl, _fake_package(os.path.join(tmp, "dir"), data, truth, as_wheel=False)[0]):
        root = os.path.join(tmp, "built-" + os.path.basename(where))
        got = ts.build(root, recipe=recipe, sources={"fakepkg": where}, progress=None)
        assert sorted(got) == ["gen", "real"]
        if where == whl:  # pin the digests; the folder's build must then give the same cell
            ts.update_digests(root, recipe=recipe)
            recipe = ts.load_recipe(recipe["_path"])
        with twincache.Cache(os.path.join(root, "real")) as c:
            g = c[0]
            assert c.worlds == "observed" and g.n_nodes == 4 and g.n_inter == 0 and not g.graph_known
            assert np.array_equal(g.base, X.astype(np.float32))
        (adj, kinds), = ts.truth(root, recipe["cells"][1])
        assert kinds is None and adj.tolist() == [[0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    # known answers on the cycle: the truth scores 1; the reversed cycle's AUPRC is the density
    rep = ts.score(lambda b: np.broadcast_to(adj.astype(np.float32), (len(b.valid), 4, 4)).copy(), root,
                   cells=["real"], baselines=False, recipe=recipe)
    assert rep["results"]["model"]["real"]["metrics"]["auprc"]["mean"] == pytest.approx(1.0)
    rep = ts.score(lambda b: np.broadcast_to(adj.T.astype(np.float32), (len(b.valid), 4, 4)).copy(), root,
                   cells=["real"], baselines=False, recipe=recipe)
    m = rep["results"]["model"]["real"]["metrics"]
    assert m["auprc"]["mean"] == pytest.approx(3 / 12) and m["shd"]["mean"] == 3
    # a changed data file: refused, naming the file and both hashes
    bad, bhd, _ = _fake_package(os.path.join(tmp, "bad"), data.replace("a,b,c,d", "a,b,c,d ", 1), truth)
    with pytest.raises(ts.SuiteError, match=f"fakepkg/data/x.csv in .* has sha256 {bhd}, the recipe pins {hd}"):
        ts.build(os.path.join(tmp, "built-bad"), recipe=recipe, cells="real", sources={"fakepkg": bad},
                 progress=None)
    # recipe edges that are not the file's: refused
    other = _real_recipe(os.path.join(tmp, "r2.json"), hd, ht, edges=(("a", "b"),))
    with pytest.raises(ts.SuiteError, match="its 3 edges are not the recipe's 1"):
        ts.build(os.path.join(tmp, "built-other"), recipe=other, cells="real", sources={"fakepkg": whl},
                 progress=None)
    # a recipe naming a column the data lacks: refused at load
    with open(os.path.join(tmp, "r.json")) as f:
        r = json.load(f)
    r["cells"][1]["edges"][0] = ["a", "zz"]
    with open(os.path.join(tmp, "r3.json"), "w") as f:
        json.dump(r, f)
    with pytest.raises(ts.SuiteError, match="real cell real: 'edges' must list"):
        ts.load_recipe(os.path.join(tmp, "r3.json"))
    # not installed, not named: skipped with one line; score leaves it out and says so
    root = os.path.join(tmp, "built-none")
    lines = []
    got = ts.build(root, recipe=recipe, progress=lines.append)
    assert sorted(got) == ["gen"] and any(x.startswith("real") and "skipped: fakepkg 1.0 is not installed" in x
                                          for x in lines), lines
    rep = ts.score(None, root, recipe=recipe)
    assert rep["cells"] == ["gen"] and "real" in rep["skipped"]
    assert "Cell real is not scored: not built" in ts.markdown(rep)
    with pytest.raises(ts.SuiteError, match="real data .* no twincache-gen flags"):
        ts.gen_args(recipe["cells"][1])


def test_real_cell_sachs_wheel():
    """The v2 recipe's Sachs cell from the real cdt 0.6.0 wheel (its pins), when
    the wheel is at hand (TWINCACHE_CDT_WHEEL; CI has no network): 7,466 rows
    x 11 proteins, the 18 edges with the cycle plcg -> PIP2 -> PIP3 -> plcg,
    the recipe's digest."""
    whl = os.environ.get("TWINCACHE_CDT_WHEEL")
    if not whl or not os.path.isfile(whl):
        pytest.skip("no cdt 0.6.0 wheel (set TWINCACHE_CDT_WHEEL)")
    import shutil
    recipe = ts.load_recipe("v2")
    root = os.path.join(TMP, "sachs")
    shutil.rmtree(root, ignore_errors=True)
    got = ts.build(root, recipe=recipe, cells="sachs-cdt", sources={"cdt": whl}, progress=None)
    assert list(got) == ["sachs-cdt"]
    (adj, _), = ts.truth(root, ts.select_cells(recipe, "sachs-cdt")[0])
    cols = ts.select_cells(recipe, "sachs-cdt")[0]["columns"]
    ix = {c: i for i, c in enumerate(cols)}
    assert adj.shape == (11, 11) and adj.sum() == 18
    assert adj[ix["plcg"], ix["PIP2"]] and adj[ix["PIP2"], ix["PIP3"]] and adj[ix["PIP3"], ix["plcg"]]


# ---- DCDI-folder import -------------------------------------------------------


def _export_dcdi(cache, index, out):
    inspect = program("twincache-inspect", os.path.join(BUILD, "tools", "twincache-inspect"))
    import shutil
    shutil.rmtree(out, ignore_errors=True)
    r = _run([inspect, "export", cache, str(index), "--format", "dcdi", "--out", out])
    assert r.returncode == 0, r.stderr


def test_import_dcdi_roundtrip():
    """Our DCDI export -> import-dcdi: the same worlds bit for bit, graph and
    target sets, for do() and for multi-target worlds; the store scores."""
    import twincache
    from twincache.cache import Cache
    gen = program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))
    import shutil
    os.makedirs(TMP, exist_ok=True)
    for name, extra in (("do", ["--intervention", "do", "--targets", "all"]),
                        ("multi", ["--intervention", "do", "--targets", "3", "--targets-per-world", "2:3"])):
        cache = os.path.join(TMP, f"dcdi-{name}")
        shutil.rmtree(cache, ignore_errors=True)
        r = _run([gen, "--out", cache, "--graphs", "3", "--seed", "7", "--nodes", "4:8", "--samples", "16",
                  "--quiet"] + extra)
        assert r.returncode == 0, r.stderr
        with Cache(cache) as c:
            for i in range(len(c)):
                g = c[i]
                d = os.path.join(TMP, f"dcdi-{name}-{i}")
                _export_dcdi(cache, i, d)
                store = os.path.join(TMP, f"dcdi-{name}-{i}-cache")  # a cache of observed data
                shutil.rmtree(store, ignore_errors=True)
                ts.import_dcdi(d, store)
                with Cache(store) as ci:
                    assert ci.worlds == "observed" and len(ci) == 2  # the regimes, data1.npy's rows
                s = ts.load_import(store)
                assert np.array_equal(s["adj"], g.adj.astype(np.uint8))
                assert s["base"].tobytes() == np.ascontiguousarray(g.base, np.float32).tobytes()
                assert s["obs"].tobytes() == s["base"].tobytes()
                assert list(s["regimes"]) == list(range(1, g.n_inter + 1))
                assert list(s["rows"]) == [g.n_samples] * g.n_inter
                assert s["inter"].tobytes() == np.ascontiguousarray(g.inter, np.float32).tobytes()
                sets = [sorted(int(x) for x in t[t >= 0]) for t in s["targets"]]
                assert sets == [sorted(int(x) for x in ts_) for ts_ in g.target_sets], name
                if name == "multi":
                    assert max(len(t) for t in sets) >= 2
                seen = []

                def oracle(b):  # the batch type score hands predict, attributes and all
                    seen.append(isinstance(b, twincache.Batch) and b.base.shape == (1,) + s["base"].shape)
                    return b["node_mask"][:, :, None] * 0.0 + s["adj"][None]
                res = ts.score_import(store, predict=oracle, name="oracle")
                assert seen == [True]
                assert res["oracle"]["metrics"]["auprc"]["mean"] == 1.0
                assert set(res) == {"oracle", *ts.BASELINES}  # paired worlds: |T| too


def _bad_dcdi(tag, edit):
    """A copy of a good export with edit(dir) applied."""
    import shutil
    src = os.path.join(TMP, "dcdi-do-0")
    d = os.path.join(TMP, f"dcdi-bad-{tag}")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(src, d)
    edit(d)
    return d


def test_import_dcdi_refuses_bad_folders(capsys):
    """Each broken folder: one error naming the file and what is wrong; the
    command line exits 1 with one line (2 for a usage error)."""
    import shutil
    if not os.path.isdir(os.path.join(TMP, "dcdi-do-0")):
        pytest.skip("needs test_import_dcdi_roundtrip's export")

    def npy(d, f, fn):
        p = os.path.join(d, f)
        np.save(p, fn(np.load(p)))

    def cyc(a):
        a = a.copy()
        a[:] = 0
        a[0, 1] = a[1, 2] = a[2, 0] = 1
        return a

    def nan(x):
        x = x.copy()
        x[3, 1] = np.nan
        return x

    def lines(d, f, fn):
        p = os.path.join(d, f)
        with open(p) as fh:
            ls = fh.read().split("\n")[:-1]
        with open(p, "w") as fh:
            fh.write("\n".join(fn(ls)) + "\n")

    cases = [
        ("missing", lambda d: os.remove(os.path.join(d, "regime1.csv")), "missing regime1.csv"),
        ("nodag", lambda d: os.remove(os.path.join(d, "DAG1.npy")), "no DAG<i>.npy"),
        ("cycle", lambda d: npy(d, "DAG1.npy", cyc), "directed cycle"),
        ("cols", lambda d: npy(d, "data_interv1.npy", lambda x: x[:, 1:]), "expected (rows,"),
        ("nan", lambda d: npy(d, "data_interv1.npy", nan), "row 3, node 1 is nan"),
        ("short", lambda d: lines(d, "regime1.csv", lambda ls: ls[:-1]), "one line per row"),
        ("range", lambda d: lines(d, "intervention1.csv", lambda ls: ls[:-1] + ["99"]),
         "target outside"),
        ("mixed", lambda d: lines(d, "intervention1.csv", lambda ls: ls[:-2] + ["0", "1"]),
         "one target set per regime"),
        ("obs", lambda d: lines(d, "regime1.csv", lambda ls: ["1"] + ls[1:]), "regime 0 is the"),
        ("inf", lambda d: lines(d, "regime1.csv", lambda ls: ls[:-1] + ["inf"]), "a regime number"),
    ]
    for tag, edit, want in cases:
        d = _bad_dcdi(tag, edit)
        out = os.path.join(TMP, f"dcdi-bad-{tag}-cache")
        if os.path.exists(out):  # a store an earlier, broken run left
            shutil.rmtree(out)
        with pytest.raises(ts.SuiteError, match=want.replace("(", r"\(")):
            ts.import_dcdi(d, out)
        assert not os.path.exists(out)
        assert ts.main(["import-dcdi", d, out]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and want in err, (tag, err)
    assert ts.main(["import-dcdi", os.path.join(TMP, "dcdi-do-0"), "x.npz", "--dataset", "0"]) == 2
    store = os.path.join(TMP, "dcdi-do-0-cache")
    assert ts.main(["import-dcdi", os.path.join(TMP, "dcdi-do-0"), store]) == 1  # exists
    assert "exists" in capsys.readouterr().err
    assert ts.main(["score-import", store]) == 0
    out = capsys.readouterr().out
    assert "var-sort" in out and "twin-T" in out and "auprc" in out


# ---- every input of the suite: one line and a non-zero exit -----------------


def _store(path, **change):
    """A hand-made import store: 0 -> 1 -> 2, 8 base rows, one do() world per
    node of 8 rows (paired: twin-T scores it); `change` replaces arrays."""
    rng = np.random.default_rng(1)
    adj = np.zeros((3, 3), np.uint8)
    adj[0, 1] = adj[1, 2] = 1
    d = {"format": np.array(ts.IMPORT_FORMAT), "adj": adj,
         "base": rng.normal(size=(8, 3)).astype(np.float32), "regimes": np.array([1, 2, 3]),
         "rows": np.array([8, 8, 8]), "inter": rng.normal(size=(24, 3)).astype(np.float32),
         "targets": np.array([[0], [1], [2]], np.int32)}
    d.update(change)
    np.savez(path, **{k: v for k, v in d.items() if v is not None})
    return path


def _dcdi_folder(d, data=None, regime=None):
    """A hand-made DCDI folder (dataset 1): 0 -> 1, 4 observational rows, 4
    rows of do(0); `data` replaces data_interv1.npy, `regime` the bytes of
    regime1.csv."""
    import shutil
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    np.save(os.path.join(d, "DAG1.npy"), np.array([[0, 1], [0, 0]]))
    x = np.arange(16, dtype=np.float64).reshape(8, 2) if data is None else data
    np.save(os.path.join(d, "data_interv1.npy"), x)
    with open(os.path.join(d, "intervention1.csv"), "w") as f:
        f.write("\n" * 4 + "0\n" * 4)
    with open(os.path.join(d, "regime1.csv"), "wb") as f:
        f.write(b"0\n" * 4 + b"1\n" * 4 if regime is None else regime)
    return d


def test_cli_refuses_bad_inputs(built, capsys):
    """Damaged predictions files, import stores, DCDI folders, recipes and
    build targets: each is one line on stderr and exit 1 (2: usage), never a
    traceback (this runs main in-process: an exception would fail here)."""
    import shutil
    import zipfile
    root, recipe = built
    R = ["--recipe", recipe["_path"]]
    d = os.path.join(TMP, "inputs")
    os.makedirs(d, exist_ok=True)

    def cli(args, rc, want):
        got = ts.main(args)
        out, err = capsys.readouterr()
        assert got == rc and err.count("\n") == 1 and want in err, (args, got, out, err)
        return out

    good = os.path.join(d, "good.npz")
    ts.write_predictions(_perfect_preds(root, recipe, ("do",)), good, recipe)
    raw = open(good, "rb").read()
    with zipfile.ZipFile(good) as z:  # a byte inside do/0's compressed data
        at = z.getinfo("do/0.npy").header_offset
    name_len, extra_len = np.frombuffer(raw[at + 26:at + 30], "<u2")  # the local header's
    flip = at + 30 + int(name_len) + int(extra_len) + 8
    damaged = {
        "truncated.npz": raw[:len(raw) // 2],
        "flipped.npz": raw[:flip] + bytes([raw[flip] ^ 0x5A]) + raw[flip + 1:],
        "empty.npz": b"",
    }
    for f, b in damaged.items():
        with open(os.path.join(d, f), "wb") as fh:
            fh.write(b)
    np.savez(os.path.join(d, "objects.npz"), suite=np.array(ts.suite_id(recipe)),
             **{"do/0": np.array([{"p": 1}], dtype=object)})
    np.save(os.path.join(d, "single.npy"), np.zeros((5, 5)))
    np.savez(os.path.join(d, "super.npz"), suite=np.array(ts.suite_id(recipe)),
             **{"do/\u00b2": np.zeros((5, 5))})
    for f, want in (("truncated.npz", "not a readable"), ("flipped.npz", "not a readable"),
                    ("empty.npz", "not a readable"), ("objects.npz", "'do/0': not a readable array"),
                    ("single.npy", "a single .npy array"), ("super.npz", "expected '<cell>/<graph id>'")):
        cli(R + ["score", root, os.path.join(d, f)], 1, want)
    cli(R + ["score", root, d], 1, "not a readable")  # a directory

    # import stores: a good one scores, twin-T said to be left out of unpaired worlds
    assert ts.main(["score-import", _store(os.path.join(d, "s.npz"))]) == 0
    out = capsys.readouterr().out
    assert "twin-T" in out and "not scored" not in out
    unpaired = _store(os.path.join(d, "unpaired.npz"), rows=np.array([4, 4, 4]),
                      inter=np.zeros((12, 3), np.float32))
    assert ts.main(["score-import", unpaired]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("twin-T: not scored: its regimes hold 4 rows, the base world 8: "
                                   "they are no twin worlds of its rows"), out
    cyc = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], np.uint8)
    for tag, change, want in (
            ("cycle", {"adj": cyc}, "'adj' uint8 (3, 3): a self-loop or a directed cycle"),
            ("doubled", {"rows": np.array([16, 16, 16])}, "they sum to 48, 'inter' holds 24 rows"),
            ("negative", {"rows": np.array([-8, 16, 16])}, "one row count >= 1 per regime"),
            ("empty", {"base": np.zeros((0, 3), np.float32)}, "no rows: the base world is empty"),
            ("onerow", {"base": np.ones((1, 3), np.float32), "rows": np.array([1, 1, 1]),
                        "inter": np.ones((3, 3), np.float32)}, "holds 1 row: the baselines"),
            ("norows", {"rows": None}, "no 'rows' array"),
            ("target", {"targets": np.array([[0], [1], [9]], np.int32)}, "a target outside the 3 nodes"),
            ("shape", {"targets": np.array([0, 1, 2], np.int32)}, "(3, T) node indices expected"),
            ("inf", {"base": np.full((8, 3), np.inf, np.float32)}, "NaN or infinity"),
            ("objects", {"rows": np.array([8, 8, None], dtype=object)}, "not a readable import store"),
            ("format", {"format": np.array("something else")}, "not a 'twincache-suite dcdi-import v1'")):
        cli(["score-import", _store(os.path.join(d, f"store-{tag}.npz"), **change)], 1, want)
    cli(["score-import", os.path.join(d, "single.npy")], 1, "a single .npy array")
    cli(["score-import", os.path.join(d, "truncated.npz")], 1, "not a readable import store")

    # DCDI folders: float64 beyond float32, a binary csv; nothing written
    big = np.arange(16, dtype=np.float64).reshape(8, 2)
    big[5, 1] = 1e300
    for tag, kw, want in (("big", {"data": big}, "row 5, node 1 is 1e+300: outside float32's range"),
                          ("binary", {"regime": bytes(range(256))}, "regime1.csv: not a text file")):
        folder = _dcdi_folder(os.path.join(d, f"dcdi-{tag}"), **kw)
        out = os.path.join(d, f"dcdi-{tag}-cache")
        shutil.rmtree(out, ignore_errors=True)  # a store an earlier, broken run left
        cli(["import-dcdi", folder, out], 1, want)
        assert not os.path.exists(out)
    ok = os.path.join(d, "dcdi-ok-cache")  # a cache of observed data (a directory)
    shutil.rmtree(ok, ignore_errors=True)
    assert ts.main(["import-dcdi", _dcdi_folder(os.path.join(d, "dcdi-ok")), ok]) == 0
    capsys.readouterr()

    # build into a file, --cells '', a recipe that is a JSON list or has a bad cell
    afile = os.path.join(d, "a-file")
    open(afile, "w").close()
    cli(R + ["build", afile], 1, "exists and is not a directory")
    nothing = os.path.join(d, "nothing")
    shutil.rmtree(nothing, ignore_errors=True)  # what an earlier, broken run made
    cli(R + ["build", nothing, "--cells", ""], 2, "cells '' names no cell")
    cli(R + ["build", nothing, "--cells", ","], 2, "names no cell")
    assert not os.path.exists(nothing)
    for tag, text, want in (("list", "[1, 2]", "not a twincache-suite recipe"),
                            ("cells", '{"suite": "twincache-suite", "version": 1, "cells": [1]}',
                             "cell 1 is not an object"),
                            ("graphs", '{"suite": "twincache-suite", "version": 1, "cells": [{"name": '
                                       '"a", "options": {}, "seed": 1, "graphs": "9"}]}',
                             "cell a: options must be an object"),
                            ("binary", "\udcff", "recipe")):
        rp = os.path.join(d, f"recipe-{tag}.json")
        with open(rp, "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape"))
        cli(["--recipe", rp, "info"], 1, want)
