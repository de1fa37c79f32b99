"""Observed data (FORMAT.md 3.11): twincache-import and twincache.write_cache
write a cache the loader reads stored and fresh mode refuses; a DCDI folder
in DCDI's own layout and a CSV with a targets column round-trip (import ->
loader -> export: the same rows, regimes and graph); bad input is refused in
one line naming the file, row and column, and leaves no cache behind."""
import os
import subprocess

import numpy as np
import pytest

import twincache

N, S = 4, 6
ADJ = np.array([[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=np.uint8)
TARGETS = [(), (1,), (0, 3), (2,)]  # regime 0 observational, then DCDI's regimes 1..3


def _regime_rows(seed=0):
    r = np.random.default_rng(seed)
    return [r.normal(size=(S, N)).astype(np.float32) for _ in TARGETS]


def _write_dcdi(d, rows, i=1, shuffle=True):
    """A folder as DCDI's generate_data / data.py read it: DAG{i}.npy,
    data_interv{i}.npy (all rows), intervention{i}.csv (per row its targets,
    comma-separated, empty for observational), regime{i}.csv (per row its
    regime), rows of the regimes interleaved (DCDI does not sort them)."""
    os.makedirs(d, exist_ok=True)
    order = [(k, s) for s in range(S) for k in range(len(rows))] if shuffle else \
        [(k, s) for k in range(len(rows)) for s in range(S)]
    np.save(os.path.join(d, f"DAG{i}.npy"), ADJ.astype(np.float64))
    np.save(os.path.join(d, f"data_interv{i}.npy"), np.stack([rows[k][s] for k, s in order]).astype(np.float64))
    with open(os.path.join(d, f"intervention{i}.csv"), "w") as f:
        f.writelines(",".join(map(str, TARGETS[k])) + "\n" for k, _ in order)
    with open(os.path.join(d, f"regime{i}.csv"), "w") as f:
        f.writelines(f"{k}\n" for k, _ in order)


def _run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True)


def _loaded(path):
    """base (S, N), inter (K, S, N), adj, targets per world from one stored batch."""
    with twincache.Loader(path, batch_size=1, shuffle=False) as ld:
        b = next(iter(ld))
        k = int(np.asarray(b.int_mask)[0].sum())  # the graph's worlds
        out = (np.asarray(b.base)[0].copy(), np.asarray(b.inter)[0][:k].copy(), np.asarray(b.adj)[0].copy(),
               b.worlds)
    return out


def test_dcdi_round_trip(import_exe, inspect_exe, tmp_root):
    rows = _regime_rows()
    src, cache, back = (os.path.join(tmp_root, f"imp-dcdi-{w}") for w in ("src", "cache", "back"))
    _write_dcdi(src, rows)
    p = _run(import_exe, "dcdi", src, "--out", cache)
    assert p.returncode == 0, p.stderr
    base, inter, adj, worlds = _loaded(cache)
    assert worlds == "observed"
    np.testing.assert_array_equal(base, rows[0])
    for k in range(1, len(TARGETS)):
        np.testing.assert_array_equal(inter[k - 1][:, :N], rows[k])
    np.testing.assert_array_equal(adj[:N, :N], ADJ)
    with twincache.Cache(cache) as c:
        g = c[0]
        assert c.worlds == "observed" and c.format_version == 5 and g.graph_known and g.targets_known
        assert [tuple(int(x) for x in t) for t in g.target_sets] == TARGETS[1:]
    # export in DCDI's layout: the same graph, rows (regime by regime), targets and regimes
    p = _run(inspect_exe, "export", cache, "0", "--format", "dcdi", "--out", back)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(os.path.join(back, "DAG1.npy")), ADJ)
    np.testing.assert_array_equal(np.load(os.path.join(back, "data_interv1.npy")), np.concatenate(rows))
    with open(os.path.join(back, "intervention1.csv")) as f:
        assert f.read().split("\n")[:-1] == [",".join(map(str, t)) for t in TARGETS for _ in range(S)]
    with open(os.path.join(back, "regime1.csv")) as f:
        assert f.read().split() == [str(k) for k in range(len(TARGETS)) for _ in range(S)]
    # and the export imports again to the same cache contents
    again = os.path.join(tmp_root, "imp-dcdi-again")
    assert _run(import_exe, "dcdi", back, "--out", again).returncode == 0
    b2, i2, a2, _ = _loaded(again)
    assert np.array_equal(b2, base) and np.array_equal(i2, inter) and np.array_equal(a2, adj)
    p = _run(inspect_exe, "verify", cache)
    assert p.returncode == 0, p.stdout + p.stderr


def test_csv_round_trip(import_exe, inspect_exe, tmp_root):
    rows = _regime_rows(1)
    names = ["a", "b", "c", "d"]
    csv, edges = os.path.join(tmp_root, "imp.csv"), os.path.join(tmp_root, "imp.edges")
    with open(csv, "w") as f:
        f.write("targets," + ",".join(names) + "\n")
        for s in range(S):
            for k in range(len(TARGETS)):
                f.write(";".join(names[t] for t in TARGETS[k]) + "," + ",".join(repr(float(x)) for x in rows[k][s])
                        + "\n")
    with open(edges, "w") as f:
        f.write("# the graph\n" + "".join(f"{names[i]} -> {names[j]}\n" for i, j in zip(*np.nonzero(ADJ))))
    cache, back = os.path.join(tmp_root, "imp-csv-cache"), os.path.join(tmp_root, "imp-csv-back")
    p = _run(import_exe, "csv", csv, "--graph", edges, "--out", cache)
    assert p.returncode == 0, p.stderr
    base, inter, adj, _ = _loaded(cache)
    np.testing.assert_array_equal(base, rows[0])
    for k in range(1, len(TARGETS)):  # regimes in order of first appearance
        np.testing.assert_array_equal(inter[k - 1][:, :N], rows[k])
    np.testing.assert_array_equal(adj[:N, :N], ADJ)
    p = _run(inspect_exe, "export", cache, "0", "--format", "npy", "--out", back)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(back + "_base.npy"), rows[0])
    np.testing.assert_array_equal(np.load(back + "_inter.npy"), np.stack(rows[1:]))
    np.testing.assert_array_equal(np.load(back + "_adj.npy"), ADJ)


def test_regimes_only_withhold_targets_and_no_graph_is_unknown(import_exe, inspect_exe, tmp_root):
    rows = _regime_rows(2)
    data, reg = os.path.join(tmp_root, "imp-w.npy"), os.path.join(tmp_root, "imp-w.regimes")
    np.save(data, np.concatenate(rows))
    with open(reg, "w") as f:
        f.writelines(f"{k}\n" for k in range(len(TARGETS)) for _ in range(S))
    cache = os.path.join(tmp_root, "imp-w-cache")
    p = _run(import_exe, "npy", data, "--regimes", reg, "--out", cache)
    assert p.returncode == 0, p.stderr
    with twincache.Cache(cache) as c:
        g = c[0]
        assert not g.graph_known and not g.targets_known and not g.adj.any()
        np.testing.assert_array_equal(g.inter[2], rows[3])
    p = _run(inspect_exe, "export", cache, "0", "--format", "dcdi", "--out", os.path.join(tmp_root, "imp-w-d"))
    assert p.returncode == 1 and "graph is unknown" in p.stderr


def test_fresh_mode_refuses_it(import_exe, tmp_root):
    cache = os.path.join(tmp_root, "imp-fresh")
    twincache.write_cache(cache, {"regimes": _regime_rows(3), "targets": TARGETS, "graph": ADJ})
    with pytest.raises(twincache.InvalidArgument, match="observed data"):
        twincache.Loader(cache, batch_size=1, samples="fresh", rows=4)


def test_write_cache_equals_the_importer(import_exe, tmp_root):
    """write_cache and twincache-import of the same data: the same frames."""
    rows = _regime_rows(4)
    src = os.path.join(tmp_root, "imp-same-src")
    _write_dcdi(src, rows, shuffle=False)
    a, b = os.path.join(tmp_root, "imp-same-a"), os.path.join(tmp_root, "imp-same-b")
    assert _run(import_exe, "dcdi", src, "--out", a).returncode == 0
    twincache.write_cache(b, [{"regimes": rows, "targets": TARGETS, "graph": ADJ}])
    with twincache.Cache(a) as ca, twincache.Cache(b) as cb:
        assert ca.frame(0) == cb.frame(0)  # byte for byte (the configs differ: source)
        ga, gb = ca[0], cb[0]
        assert np.array_equal(ga.base, gb.base) and np.array_equal(ga.inter, gb.inter)
        assert np.array_equal(ga.adj, gb.adj) and ga.flags == gb.flags


BAD_DCDI = [  # (what to break, the words the one line must hold)
    ("nan", ["data_interv1.npy", "row 5, column 2", "not a finite number"]),
    ("wide", ["intervention1.csv", "line 3", "target '7'"]),
    ("cycle", ["DAG1.npy", "cycle"]),
    ("lines", ["regime1.csv", "lines", "rows"]),
    ("mixed", ["intervention1.csv", "line", "one target set per regime"]),
]


@pytest.mark.parametrize("what,words", BAD_DCDI, ids=[b[0] for b in BAD_DCDI])
def test_bad_dcdi_is_refused_in_one_line(import_exe, tmp_root, what, words):
    src, cache = os.path.join(tmp_root, f"imp-bad-{what}"), os.path.join(tmp_root, f"imp-bad-{what}-cache")
    _write_dcdi(src, _regime_rows(5))
    x = np.load(os.path.join(src, "data_interv1.npy"))
    if what == "nan":
        x[5, 2] = np.nan
        np.save(os.path.join(src, "data_interv1.npy"), x)
    elif what == "wide":
        lines = open(os.path.join(src, "intervention1.csv")).read().split("\n")
        lines[2] = "7"
        open(os.path.join(src, "intervention1.csv"), "w").write("\n".join(lines))
    elif what == "cycle":
        adj = ADJ.copy()
        adj[3, 0] = 1
        np.save(os.path.join(src, "DAG1.npy"), adj)
    elif what == "lines":
        with open(os.path.join(src, "regime1.csv"), "a") as f:
            f.write("1\n")
    elif what == "mixed":
        lines = open(os.path.join(src, "intervention1.csv")).read().split("\n")
        regs = open(os.path.join(src, "regime1.csv")).read().split("\n")
        j = [i for i, r in enumerate(regs) if r == "1"][1]
        lines[j] = "2"
        open(os.path.join(src, "intervention1.csv"), "w").write("\n".join(lines))
    p = _run(import_exe, "dcdi", src, "--out", cache)
    assert p.returncode == 1, p.stdout
    line = p.stderr.strip()
    assert "\n" not in line and all(w in line for w in words), line
    assert not os.path.exists(cache)
    assert not [f for f in os.listdir(tmp_root) if f.startswith(f"imp-bad-{what}-cache")]


def test_bad_csv_is_refused_in_one_line(import_exe, tmp_root):
    csv = os.path.join(tmp_root, "imp-bad.csv")
    cases = [("targets,a,b\n,1,2\n,3\n", ["imp-bad.csv", "line 3", "2 fields, the header has 3"]),
             ("targets,a,b\n,1,2\n,inf,2\n", ["line 3, column 2 (a)", "'inf' is not a finite number"]),
             ("targets,a,b\n,1,2\nc,1,2\n", ["line 3, column targets", "target 'c' is no variable"]),
             ("targets,a,b\nb,1,2\n", ["no observational rows"])]
    for text, words in cases:
        with open(csv, "w") as f:
            f.write(text)
        cache = os.path.join(tmp_root, "imp-bad-csv-cache")
        p = _run(import_exe, "csv", csv, "--out", cache)
        line = p.stderr.strip()
        assert p.returncode == 1 and "\n" not in line and all(w in line for w in words), (text, line)
        assert not os.path.exists(cache)
    edges = os.path.join(tmp_root, "imp-bad.edges")
    with open(csv, "w") as f:
        f.write("targets,a,b\n,1,2\na,3,4\n")
    with open(edges, "w") as f:
        f.write("a b\nb -> a\n")
    p = _run(import_exe, "csv", csv, "--graph", edges, "--out", os.path.join(tmp_root, "imp-bad-e"))
    assert p.returncode == 1 and "imp-bad.edges: line 2: b -> a closes a directed cycle" in p.stderr, p.stderr


def test_an_npz_is_named_as_such(import_exe, tmp_root):
    """np.savez's zip (empty too: its end record alone) given where one .npy
    array belongs: one line saying it is an .npz, not "no magic"."""
    for name, arrays in (("empty.npz", {}), ("two.npz", {"a": np.zeros((3, 2)), "b": np.ones(3)})):
        path = os.path.join(tmp_root, name)
        np.savez(path, **arrays)
        p = _run(import_exe, "npy", path, "--out", os.path.join(tmp_root, "imp-npz"))
        line = p.stderr.strip()
        assert p.returncode == 1 and "\n" not in line and f"{name}: an .npz (a zip of arrays)" in line, line


def test_usage_errors_exit_2(import_exe, tmp_root):
    assert _run(import_exe, "--help").returncode == 0
    assert _run(import_exe, "dcdi", tmp_root).returncode == 2  # no --out
    assert _run(import_exe, "xml", tmp_root, "--out", "x").returncode == 2
    assert _run(import_exe, "csv", "f.csv", "--out", "x", "--dataset", "1").returncode == 2


def test_an_existing_cache_is_never_replaced(import_exe, tmp_root):
    cache = os.path.join(tmp_root, "imp-exists")
    os.makedirs(cache)
    with pytest.raises(twincache.InvalidArgument, match="exists"):
        twincache.write_cache(cache, {"regimes": _regime_rows(6)})


def test_write_cache_refuses_bad_values(tmp_root):
    rows = _regime_rows(7)
    rows[2][4, 1] = np.inf
    with pytest.raises(twincache.InvalidArgument, match=r"dataset 0, regime 2: row 4, column 1"):
        twincache.write_cache(os.path.join(tmp_root, "imp-inf"), {"regimes": rows})
    cyc = ADJ.copy()
    cyc[3, 0] = 1
    with pytest.raises(twincache.InvalidArgument, match="cycle"):
        twincache.write_cache(os.path.join(tmp_root, "imp-cyc"), {"regimes": _regime_rows(), "graph": cyc})
    assert not os.path.exists(os.path.join(tmp_root, "imp-cyc"))
    with pytest.raises(twincache.InvalidArgument, match="dataset 0, regime 1: no rows"):
        twincache.write_cache(os.path.join(tmp_root, "imp-empty"), {"regimes": [rows[0], rows[1][:0]]})


def test_regimes_keep_their_own_row_counts(import_exe, inspect_exe, tmp_root):
    """DCDI's regimes of unequal sizes (n rows over the regimes, Sachs's 853 to
    1,755): each keeps its rows through import -> loader (batch.rows) -> export."""
    r = np.random.default_rng(8)
    counts = [7, 3, 5, 2]  # observational, then regimes 1..3
    rows = [r.normal(size=(c, N)).astype(np.float32) for c in counts]
    src, cache, back = (os.path.join(tmp_root, f"imp-uneven-{w}") for w in ("src", "cache", "back"))
    os.makedirs(src)
    order = []
    for s in range(max(counts)):  # interleaved, as DCDI leaves them
        for k in range(len(counts)):
            if s < counts[k]:
                order.append((k, s))
    np.save(os.path.join(src, "DAG1.npy"), ADJ)
    np.save(os.path.join(src, "data_interv1.npy"), np.stack([rows[k][s] for k, s in order]))
    with open(os.path.join(src, "intervention1.csv"), "w") as f:
        f.writelines(",".join(map(str, TARGETS[k])) + "\n" for k, _ in order)
    with open(os.path.join(src, "regime1.csv"), "w") as f:
        f.writelines(f"{k}\n" for k, _ in order)
    p = _run(import_exe, "dcdi", src, "--out", cache)
    assert p.returncode == 0, p.stderr
    with twincache.Loader(cache, batch_size=1, shuffle=False) as ld:
        b = next(iter(ld))
        held = np.asarray(b.rows)[0]
        assert list(held) == counts
        base, inter = np.asarray(b.base)[0], np.asarray(b.inter)[0]
        np.testing.assert_array_equal(base[:7, :N], rows[0])
        for k in range(1, 4):
            np.testing.assert_array_equal(inter[k - 1][:counts[k], :N], rows[k])
            assert not inter[k - 1][counts[k]:].any()  # zero past a regime's rows
    p = _run(inspect_exe, "export", cache, "0", "--format", "dcdi", "--out", back)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(os.path.join(back, "data_interv1.npy")), np.concatenate(rows))
    with open(os.path.join(back, "regime1.csv")) as f:
        assert f.read().split() == [str(k) for k in range(4) for _ in range(counts[k])]
    # write_cache of the same regimes: the same frame
    again = os.path.join(tmp_root, "imp-uneven-py")
    twincache.write_cache(again, {"regimes": rows, "targets": TARGETS, "graph": ADJ})
    with twincache.Cache(cache) as ca, twincache.Cache(again) as cb:
        assert ca.frame(0) == cb.frame(0)
    assert _run(inspect_exe, "verify", cache).returncode == 0


def test_a_mixture_with_a_generated_cache(cache_path, tmp_root):
    """An import mixes with a generated cache (dense, stored): the batch's
    worlds are 'mixed' and the imported graph's rows come through whole."""
    r = np.random.default_rng(9)
    rows = [r.normal(size=(8, 3)).astype(np.float32) for _ in range(3)]  # the generated cache's S = 8
    obs = os.path.join(tmp_root, "imp-mix")
    twincache.write_cache(obs, {"regimes": rows, "targets": [[], [0], [2]]})
    seen = 0
    with twincache.Loader([cache_path, obs], weights=[1.0, 1.0], batch_size=4, shuffle=False, epochs=1) as ld:
        assert ld.worlds == "mixed"
        for b in ld:
            src = np.asarray(b.graph_id)
            base = np.asarray(b.base)
            for g in range(base.shape[0]):
                if np.array_equal(base[g][:, :3], rows[0]) and not base[g][:, 3:].any():
                    seen += 1
                    np.testing.assert_array_equal(np.asarray(b.inter)[g][1][:, :3], rows[2])
    assert seen >= 1, "the imported graph never came through"
    with pytest.raises(twincache.InvalidArgument, match="observed data"):
        twincache.Loader([cache_path, obs], weights=[1.0, 1.0], batch_size=2, samples=["stored", "fresh"], rows=8)
