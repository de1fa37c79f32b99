"""twincache.suite — the frozen held-out benchmark: build, check, score.

A suite version is one recipe file (suite/v1.json in the repository,
twincache/suites/v1.json in the wheel): cells, each a regime — twincache-gen
options, seed, graph count — with the digest its cache must have. A cache is a
pure function of (options, seed), so the recipe is the suite.

    twincache-suite build DIR [--threads T] [--cells A,B]   # generate, check digests
    twincache-suite info DIR                                # sortability per cell
    twincache-suite score DIR [PRED.npz] [--out PREFIX]     # baselines (+ a model)
    twincache-suite digest DIR [--update]                   # recompute (rewrite) digests
    twincache-suite import-dcdi FOLDER OUT.npz [--dataset I] # a DCDI-layout folder -> a store
    twincache-suite score-import OUT.npz                    # the baselines on that store
    (after an intended generator change: rm -rf DIR; build DIR --no-check; digest DIR --update)

    import twincache.suite as ts
    report = ts.score(predict, "suite-dir", cells=["er-n20-linear-gauss-do"])
    ts.write_report(report, "out/model")          # out/model.json, .md (.png)

predict(batch) -> (G, N, N) edge probabilities in [0, 1], p[g, i, j] for the
edge i -> j of graph g, for the batch's padded shape (a numpy array or a torch
tensor). SUITE.md defines every metric and the predictions file.

Digest: sha256 over the decoded content of every graph in index order (sizes,
names, flags, adjacency, SCM parameters, every world's samples, interventions:
see _graph_digest_parts), so it does not depend on thread count, LMDB's page
layout or zstd's compressed bytes.
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

from .cache import Cache
from .errors import Error, InvalidArgument
from .gen import find_program

SUITE_NAME = "twincache-suite"
DEFAULT_VERSION = 1
THRESHOLD = 0.5  # SHD and F1: an edge is predicted where p > THRESHOLD
METRICS = ("auprc", "auroc", "shd", "shd2", "f1", "orient")
PAIR_KINDS = ("neither moved", "only j moved", "both moved", "only i moved")
BASELINES = ("chance", "var-sort", "r2-sort", "corr", "twin-T")


class SuiteError(Error):
    """A suite cannot be built, checked or scored: the message names the cell,
    graph or file."""


class UnknownCell(SuiteError, InvalidArgument):
    """A cell name the recipe does not hold (the command line exits 2)."""


# ---------------------------------------------------------------------------
# recipe


def recipe_path(version=DEFAULT_VERSION):
    """The recipe file of a suite version: the wheel's copy, else the source tree's."""
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "suites", f"v{version}.json"),
                 os.path.join(here, "..", "..", "suite", f"v{version}.json")):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    raise SuiteError(f"suite version {version}: no recipe v{version}.json next to {here} "
                     "(twincache/suites/) nor in the source tree's suite/")


def load_recipe(path=None):
    """The recipe as a dict, checked: names unique, every cell complete."""
    path = path or recipe_path()
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        raise SuiteError(f"recipe {path}: {e}") from None
    if r.get("suite") != SUITE_NAME or not isinstance(r.get("version"), int):
        raise SuiteError(f"recipe {path}: not a {SUITE_NAME} recipe (keys suite, version)")
    seen = set()
    for c in r.get("cells", []):
        for k in ("name", "options", "seed", "graphs"):
            if k not in c:
                raise SuiteError(f"recipe {path}: cell {c.get('name', '?')} lacks '{k}'")
        if c["name"] in seen or "/" in c["name"]:
            raise SuiteError(f"recipe {path}: cell name {c['name']!r} twice or with '/'")
        seen.add(c["name"])
    for split, s in r.get("splits", {}).items():
        for name in s.get("test", []):
            if name not in seen:
                raise SuiteError(f"recipe {path}: split {split} names unknown cell {name}")
    r["_path"] = path
    return r


def select_cells(recipe, cells=None):
    """The recipe's cells named by `cells` (None: all; a list or 'a,b' string)."""
    if cells is None:
        return list(recipe["cells"])
    if isinstance(cells, str):
        cells = [c for c in cells.split(",") if c]
    by = {c["name"]: c for c in recipe["cells"]}
    bad = [c for c in cells if c not in by]
    if bad:
        raise UnknownCell(f"unknown cell(s) {', '.join(bad)}; the suite's cells: "
                         f"{', '.join(by)}")
    return [by[c] for c in cells]


def suite_id(recipe):
    return f"{SUITE_NAME} v{recipe['version']}"


def gen_args(cell):
    """twincache-gen flags of a cell (options dict -> --flag value)."""
    args = ["--seed", str(cell["seed"]), "--graphs", str(cell["graphs"])]
    for k, v in cell["options"].items():
        flag = "--" + k.replace("_", "-")
        if v is True:
            args.append(flag)
        elif isinstance(v, list):
            args += [flag, ":".join(str(x) for x in v)]
        else:
            args += [flag, str(v)]
    return args


# ---------------------------------------------------------------------------
# digest


def _graph_digest_parts(g):
    """The decoded content of one graph, in a fixed order."""
    head = [g.n_nodes, g.n_samples, g.n_inter, g.n_hidden, g.flags]
    yield ("|".join(map(str, head)) + f"|{g.mechanism}|{g.noise}|{g.family}|"
           f"{','.join(g.node_mechanisms or ())}").encode()
    for a in (g.adj, g.weight, g.noise_scale, g.mlp, g.norm_mean, g.norm_std, g.base, g.inter,
              g.target, g.kind, g.value, g.soft):
        if a is None:
            yield b"-"
        else:
            a = np.ascontiguousarray(a)
            yield f"{a.dtype.str}{a.shape}".encode()
            yield a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    for sets in (g.target_sets, g.value_sets):
        for s in sets or ():
            yield np.ascontiguousarray(s).astype(np.float64).tobytes() + b";"


def cache_digest(path):
    """sha256 of a cache's decoded content: 'sha256:' + 64 hex digits."""
    h = hashlib.sha256()
    with Cache(path) as c:
        h.update(f"graphs={len(c)}".encode())
        for i in range(len(c)):
            for part in _graph_digest_parts(c[i]):
                h.update(part)
    return "sha256:" + h.hexdigest()


# ---------------------------------------------------------------------------
# build / digest / info


def cell_dir(root, cell):
    return os.path.join(root, cell["name"])


def build(root, threads=2, cells=None, recipe=None, check=True, progress=print):
    """Generates every selected cell under root/<cell> with twincache-gen and
    checks its digest. Returns {cell: (digest, seconds)}. Raises SuiteError
    naming the first cell whose digest differs (the cache stays, for a look)."""
    recipe = recipe or load_recipe()
    os.makedirs(root, exist_ok=True)
    gen = find_program("twincache-gen")
    out = {}
    for cell in select_cells(recipe, cells):
        d = cell_dir(root, cell)
        t0 = time.perf_counter()
        cmd = [gen, "--out", d, "--threads", str(threads), "--quiet"] + gen_args(cell)
        p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise SuiteError(f"cell {cell['name']}: twincache-gen exited {p.returncode}: {last}")
        dg = cache_digest(d)
        dt = time.perf_counter() - t0
        out[cell["name"]] = (dg, dt)
        want = cell.get("digest")
        if check and want and dg != want:
            raise SuiteError(f"cell {cell['name']}: digest {dg} but the recipe "
                             f"({recipe['_path']}) says {want}: this build differs from the "
                             "suite's (another generator?); rerun `twincache-suite digest "
                             "--update` only when the change is intended")
        if progress:
            verdict = ("no digest in recipe" if not want else "ok" if dg == want else
                       "DIFFERS (not checked)")
            progress(f"{cell['name']:28s} {cell['graphs']:5d} graphs {dt:6.2f} s {verdict}")
    return out


def update_digests(root, cells=None, recipe=None):
    """Rewrites the recipe's digests from the caches under root (built
    before); returns the names whose digest changed."""
    recipe = recipe or load_recipe()
    changed = []
    for cell in select_cells(recipe, cells):
        d = cell_dir(root, cell)
        if not os.path.isdir(d):
            raise SuiteError(f"cell {cell['name']}: {d} missing: build it first")
        dg = cache_digest(d)
        if cell.get("digest") != dg:
            changed.append(cell["name"])
            cell["digest"] = dg
    path = recipe["_path"]
    body = {k: v for k, v in recipe.items() if not k.startswith("_")}
    with open(path + ".tmp", "w") as f:
        f.write(dump_recipe(body))
    os.replace(path + ".tmp", path)
    return changed


def dump_recipe(r):
    """The recipe's text: one cell per line, so a diff shows which cell changed."""
    lines = ["{"]
    for k, v in r.items():
        if k == "cells":
            lines.append('  "cells": [')
            for i, c in enumerate(v):
                lines.append("    " + json.dumps(c) + ("," if i + 1 < len(v) else ""))
            lines.append("  ],")
        else:
            lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    lines[-1] = lines[-1].rstrip(",")
    lines.append("}")
    return "\n".join(lines) + "\n"


def disk_bytes(root):
    """Bytes the files under root occupy on disk (allocated blocks: LMDB's
    data file is sparse up to its map size)."""
    return sum(os.stat(os.path.join(p, f)).st_blocks * 512 for p, _, fs in os.walk(root) for f in fs)


def cell_stats(root, cell):
    """var-/R2-sortability and the linear-fit share of a cell's cache, as
    `twincache-inspect stats --json` reports them."""
    p = subprocess.run([find_program("twincache-inspect"), "stats", "--json", cell_dir(root, cell)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SuiteError(f"cell {cell['name']}: twincache-inspect stats: "
                         f"{(p.stderr.strip().splitlines() or ['?'])[-1]}")
    s = json.loads(p.stdout)
    sort = s.get("sortability", {})
    return {"var_sortability": sort.get("var"), "r2_sortability": sort.get("r2"),
            "linear_share": s.get("mechanism_fit", {}).get("linear_share"),
            "edge_density": s.get("edge_density")}


# ---------------------------------------------------------------------------
# ground truth and metrics


def truth(root, cell):
    """Per graph of a cell: (adj (n,n) uint8, pair kinds (n,n) int8 or None).
    Pair kind of (i, j), index in PAIR_KINDS, from what the twin worlds moved
    (a node moved in world k when any of its S rows differs from the base
    world's): both moved (some world moved i and j), only j moved, only i
    moved, neither; None for a graph without twin worlds."""
    out = []
    with Cache(cell_dir(root, cell)) as c:
        for i in range(len(c)):
            g = c[i]
            kinds = None
            if g.n_inter > 0 and g.n_samples > 0:
                moved = (g.inter != g.base[None]).any(axis=1)  # (K, n)
                both = (moved[:, :, None] & moved[:, None, :]).any(axis=0)
                jm = np.broadcast_to(moved.any(axis=0)[None, :], both.shape)
                im = np.broadcast_to(moved.any(axis=0)[:, None], both.shape)
                kinds = np.where(both, 2, np.where(jm, 1, np.where(im, 3, 0))).astype(np.int8)
            out.append((g.adj.astype(np.uint8), kinds))
    return out


def average_precision(score, label):
    """sklearn's average precision: sum over distinct thresholds t (descending)
    of (R(t) - R(t_prev)) * P(t). NaN when there is no positive."""
    score = np.asarray(score, dtype=np.float64).ravel()
    label = np.asarray(label).ravel().astype(bool)
    npos = label.sum()
    if npos == 0:
        return float("nan")
    o = np.argsort(-score, kind="mergesort")
    s, y = score[o], label[o]
    tp = np.cumsum(y)
    last = np.r_[np.nonzero(np.diff(s))[0], len(s) - 1]  # last index of each tied group
    tp, k = tp[last], last + 1
    prec, rec = tp / k, tp / npos
    return float(np.sum(np.diff(np.r_[0.0, rec]) * prec))


def roc_auc(score, label):
    """P(score of a random positive > score of a random negative), ties 1/2
    (Mann-Whitney U / (P * N)). NaN without positives or negatives."""
    score = np.asarray(score, dtype=np.float64).ravel()
    label = np.asarray(label).ravel().astype(bool)
    p, n = label.sum(), (~label).sum()
    if p == 0 or n == 0:
        return float("nan")
    o = np.argsort(score, kind="mergesort")
    s = score[o]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):  # average ranks of ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = 0.5 * (i + j) + 1
        i = j + 1
    r = np.empty(len(s))
    r[o] = ranks
    return float((r[label].sum() - p * (p + 1) / 2) / (p * n))


def shd(pred, adj):
    """Structural Hamming distance, a reversal counted ONCE: the number of
    unordered pairs {i, j} whose edge state (none, i->j, j->i, both) differs
    between the 0/1 matrices pred and adj (diagonals ignored)."""
    pred, adj = np.asarray(pred, bool), np.asarray(adj, bool)
    iu = np.triu_indices(len(adj), 1)
    a = adj[iu] * 1 + adj.T[iu] * 2
    b = pred[iu] * 1 + pred.T[iu] * 2
    return int(np.sum(a != b))


def shd_double(pred, adj):
    """SHD with a reversal counted TWICE: the ordered pairs (i, j), i != j,
    where pred and adj differ (sum |pred - adj| off the diagonal)."""
    pred, adj = np.asarray(pred, bool), np.asarray(adj, bool)
    off = ~np.eye(len(adj), dtype=bool)
    return int(np.sum((pred != adj) & off))


def graph_metrics(p, adj):
    """Metrics of one graph's (n,n) prediction p against adj (see SUITE.md)."""
    n = len(adj)
    off = ~np.eye(n, dtype=bool)
    s, y = p[off], adj[off].astype(bool)
    b = (p > THRESHOLD) & off
    tp = int(np.sum(b & adj.astype(bool)))
    npred, ntrue = int(b.sum()), int(y.sum())
    f1 = 2 * tp / (npred + ntrue) if npred + ntrue else 1.0
    ii, jj = np.nonzero(adj.astype(bool) & off)
    if len(ii):
        d = p[ii, jj] - p[jj, ii]
        orient = float(np.mean((d > 0) + 0.5 * (d == 0)))
    else:
        orient = float("nan")
    return {"auprc": average_precision(s, y), "auroc": roc_auc(s, y), "shd": shd(b, adj),
            "shd2": shd_double(b, adj), "f1": f1, "orient": orient}


def summarize(values):
    """mean and a 95% interval (mean +- 1.96 sd / sqrt(n), normal approximation)
    over the finite values; n counts them."""
    v = np.asarray([x for x in values if x == x], dtype=np.float64)
    if len(v) == 0:
        return {"mean": None, "lo": None, "hi": None, "n": 0}
    m = float(v.mean())
    h = 1.96 * float(v.std(ddof=1)) / math.sqrt(len(v)) if len(v) > 1 else 0.0
    return {"mean": m, "lo": m - h, "hi": m + h, "n": int(len(v))}


# ---------------------------------------------------------------------------
# predictions


def _to_numpy(x):
    if hasattr(x, "detach"):  # a torch tensor, on any device
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def _field(batch, name):
    v = batch.numpy.get(name) if batch.numpy else None
    return np.asarray(v) if v is not None else _to_numpy(batch[name])


def collect(predict, root, cell, batch_size=32, threads=2, output=None):
    """Runs predict over a cell's cache through the Loader (index order, one
    pass); returns {graph id: (n,n) float64}. Raises SuiteError for a wrong
    shape, NaN or values outside [0, 1]."""
    from .loader import Loader
    preds = {}
    name = cell["name"]
    kw = {} if output is None else {"output": output}
    with Loader(cell_dir(root, cell), batch_size=batch_size, shuffle=False, epochs=1, rank=0,
                world_size=1, threads=threads, withhold_targets=bool(cell.get("withhold_targets")),
                **kw) as ld:
        for batch in ld:
            mask = _field(batch, "node_mask")
            G, N = mask.shape
            p = _to_numpy(predict(batch))
            if p.shape != (G, N, N):
                raise SuiteError(f"cell {name}: predict returned shape {tuple(p.shape)}, expected "
                                 f"(G, N, N) = ({G}, {N}, {N}) for this batch")
            valid = _field(batch, "valid")
            gid = _field(batch, "graph_id")
            for g in range(G):
                if not valid[g]:
                    continue
                n = int(mask[g].sum())
                q = np.array(p[g, :n, :n], dtype=np.float64)
                check_prediction(q, name, int(gid[g]))
                preds[int(gid[g])] = q
            batch.release()
    return preds


def check_prediction(q, cell, gid, n=None):
    if n is not None and q.shape != (n, n):
        raise SuiteError(f"cell {cell} graph {gid}: prediction shape {q.shape}, the graph has "
                         f"{n} nodes: expected ({n}, {n})")
    if not np.all(np.isfinite(q)):
        raise SuiteError(f"cell {cell} graph {gid}: prediction holds NaN or infinity")
    if q.size and (q.min() < 0 or q.max() > 1):
        raise SuiteError(f"cell {cell} graph {gid}: predictions are edge probabilities in [0, 1]; "
                         f"got values in [{q.min():.4g}, {q.max():.4g}]")


def evaluate(preds, root, cell, gt=None):
    """Scores {graph id: (n,n)} of one cell: per metric the summary over
    graphs, and per pair kind the pooled AUPRC (cells with twin worlds)."""
    gt = gt if gt is not None else truth(root, cell)
    missing = [i for i in range(len(gt)) if i not in preds]
    if missing:
        raise SuiteError(f"cell {cell['name']}: predictions miss {len(missing)} of {len(gt)} "
                         f"graphs (first: graph {missing[0]})")
    per = {m: [] for m in METRICS}
    pooled = {k: ([], []) for k in range(len(PAIR_KINDS))}
    for i, (adj, kinds) in enumerate(gt):
        q = preds[i]
        check_prediction(np.asarray(q), cell["name"], i, n=len(adj))
        for k, v in graph_metrics(q, adj).items():
            per[k].append(v)
        if kinds is not None:  # what moved is in the worlds, withheld targets or not
            off = ~np.eye(len(adj), dtype=bool)
            for k in pooled:
                m = (kinds == k) & off
                pooled[k][0].append(q[m])
                pooled[k][1].append(adj[m])
    res = {"metrics": {m: summarize(v) for m, v in per.items()}, "graphs": len(gt)}
    kinds = {}
    for k, (s, y) in pooled.items():
        if s:
            s, y = np.concatenate(s), np.concatenate(y)
            kinds[PAIR_KINDS[k]] = {"pairs": int(len(y)), "edges": int(y.sum()),
                                    "auprc": average_precision(s, y) if len(y) else None}
    if kinds:
        res["pair_kinds"] = kinds
    return res


# ---------------------------------------------------------------------------
# baselines: predict functions over a batch (numpy)


def _graphs(batch):
    """(g, n, base (S,n) float64, inter (K,S,n), targets (K,n) bool or None,
    moved (K,n) bool) for every valid graph of a batch."""
    mask, valid = _field(batch, "node_mask"), _field(batch, "valid")
    base, inter = _field(batch, "base"), _field(batch, "inter")
    tgt, im = _field(batch, "target"), _field(batch, "int_mask")
    for g in range(mask.shape[0]):
        if not valid[g]:
            continue
        n = int(mask[g].sum())
        k = im[g].astype(bool)
        X = base[g][:, :n].astype(np.float64)
        I = inter[g][k][:, :, :n].astype(np.float64)
        T = tgt[g][k][:, :n].astype(bool)
        yield g, n, X, I, T


def _squash(w, scale):
    """A monotone map of a nonnegative score to [0, 1): w / (w + scale); p > 0.5 <=> w > scale."""
    return w / (w + scale)


def _regress_in_order(X, order):
    """sortnregress: each node regressed (least squares, standardised data)
    on the nodes before it in `order`; (n,n) |coefficient| of i in j's fit."""
    S, n = X.shape
    Z = (X - X.mean(0)) / (X.std(0) + 1e-12)
    W = np.zeros((n, n))
    for pos in range(1, n):
        j, prev = order[pos], order[:pos]
        A = Z[:, prev]
        coef = np.linalg.lstsq(A.T @ A + 1e-6 * np.eye(len(prev)), A.T @ Z[:, j], rcond=None)[0]
        W[prev, j] = np.abs(coef)
    return W


def _r2_each(X):
    """R^2 of each node regressed on all the others: 1 - 1/[C^-1]_jj of the
    correlation matrix C (as twincache_graph_sortability computes it)."""
    n = X.shape[1]
    if n < 2:
        return np.zeros(n)
    C = np.nan_to_num(np.corrcoef(X, rowvar=False))
    d = np.diag(np.linalg.pinv(C))
    return 1.0 - 1.0 / np.maximum(d, 1.0)


def _batch_out(batch):
    mask = _field(batch, "node_mask")
    G, N = mask.shape
    return np.zeros((G, N, N), dtype=np.float64)


def baseline_chance(density):
    """Edge-density chance: every pair scores the cell's mean edge density."""
    def predict(batch):
        out = _batch_out(batch)
        out[:] = density
        return out
    return predict


def baseline_var_sort(batch):
    """var-sort (sortnregress): order by base-world variance, ascending."""
    out = _batch_out(batch)
    for g, n, X, _, _ in _graphs(batch):
        out[g, :n, :n] = _squash(_regress_in_order(X, np.argsort(X.var(0), kind="stable")), 0.25)
    return out


def baseline_r2_sort(batch):
    """R2-sort (sortnregress): order by R^2 on all other nodes, ascending."""
    out = _batch_out(batch)
    for g, n, X, _, _ in _graphs(batch):
        out[g, :n, :n] = _squash(_regress_in_order(X, np.argsort(_r2_each(X), kind="stable")), 0.25)
    return out


def baseline_corr(batch):
    """Marginal |correlation| of the base world (symmetric: orientation 1/2)."""
    out = _batch_out(batch)
    for g, n, X, _, _ in _graphs(batch):
        c = np.abs(np.corrcoef(X, rowvar=False)) if len(X) > 1 else np.zeros((n, n))
        c = np.nan_to_num(c)
        c = 0.5 * (c + c.T)  # exactly symmetric: the tie of (i, j) and (j, i) on any numpy
        np.fill_diagonal(c, 0.0)
        out[g, :n, :n] = np.clip(c, 0.0, 1.0)
    return out


def baseline_twin_T(batch):
    """|T| twin effect: p(i->j) = squash(mean over worlds hitting i of
    mean_s |inter[s,j] - base[s,j]| / std(base[:,j]), 1). Worlds 'hit' i where
    i is a target; with withheld targets (all zero), where i moved."""
    out = _batch_out(batch)
    for g, n, X, I, T in _graphs(batch):
        if len(I) == 0:
            continue
        eff = np.abs(I - X[None]).mean(axis=1) / (X.std(0) + 1e-12)  # (K, n)
        hit = T if T.any() else eff > 0
        cnt = hit.sum(0)  # worlds hitting each node (n,)
        tot = hit.T.astype(np.float64) @ eff  # (n, n): sum over worlds hitting i of effect on j
        w = np.where(cnt[:, None] > 0, tot / np.maximum(cnt[:, None], 1), 0.0)
        np.fill_diagonal(w, 0.0)
        out[g, :n, :n] = _squash(w, 1.0)
    return out


def _cpdag_probs(G):
    """causal-learn's graph matrix (G[j,i] = 1 and G[i,j] = -1 <=> i -> j;
    both -1: undirected) as (n,n) probabilities: 1 on i -> j, 0.5 both ways
    on an undirected edge (below the SHD/F1 threshold), 0 elsewhere."""
    G = np.asarray(G)
    p = ((G.T == 1) & (G == -1)).astype(np.float64)
    p[(G == -1) & (G.T == -1)] = 0.5
    np.fill_diagonal(p, 0.0)
    return p


REFERENCES = ("pc", "ges", "gies")
REFERENCE_PINS = {"pc": "causal-learn==0.1.4.0", "ges": "causal-learn==0.1.4.0", "gies": "gies==0.0.3"}


def _gies_fit(X, I, T):
    """GIES (Hauser & Buehlmann 2012; the gies package, Gaussian BIC) on the
    base world as the observational environment and every twin world as
    one interventional environment with its targets. GIES's score assumes
    independent samples, and twin rows repeat the base rows' noise: given
    every row of every world it counts each noise draw K + 1 times and adds
    spurious edges (rows1000-n10: SHD 9.9 against 0.6). So each environment
    gets its own block of b = S // (K + 1) rows: the base world rows [0, b),
    world k rows [(k + 1) b, (k + 2) b) — no noise draw enters twice. With
    the targets withheld (T all zero) no world can be given its targets:
    GIES then sees the base world alone, all its rows (= GES's search with
    gies's score)."""
    import gies
    if len(I) == 0 or not T.any():
        return gies.fit_bic([X], [[]])[0]
    K, S = len(I), len(X)
    b = S // (K + 1)
    if b < 2:
        raise SuiteError(f"GIES: {S} rows over {K + 1} worlds leave fewer than 2 rows per world "
                         f"(each world gets its own rows; run it on cells with S >= {2 * (K + 1)})")
    data = [X[:b]] + [I[k][(k + 1) * b:(k + 2) * b] for k in range(K)]
    return gies.fit_bic(data, [[]] + [np.flatnonzero(T[k]).tolist() for k in range(K)])[0]


def _essential_probs(A):
    """An I-essential graph as gies returns it (A[i,j] != 0 and A[j,i] == 0
    <=> i -> j; both nonzero: undirected) as _cpdag_probs's probabilities."""
    A = np.asarray(A) != 0
    p = (A & ~A.T).astype(np.float64)
    p[A & A.T] = 0.5
    np.fill_diagonal(p, 0.0)
    return p


def reference_models(names=None):
    """The reference algorithms (never dependencies of this package; pins in
    REFERENCE_PINS): causal-learn's PC (Fisher-z tests, alpha 0.05) and GES
    (BIC) on the base world's samples (observational), and GIES (the gies
    package, BIC) on the base and twin worlds with their targets
    (interventional). names: an iterable of REFERENCES (None: all). Raises
    SuiteError naming an unknown one or the package to install."""
    names = list(REFERENCES if names is None else names)
    for n in names:
        if n not in REFERENCES:
            raise SuiteError(f"reference {n!r}: one of {', '.join(REFERENCES)}")
    fits = {}
    try:
        if "pc" in names:
            from causallearn.search.ConstraintBased.PC import pc
            fits["pc"] = lambda X, I, T: _cpdag_probs(
                pc(X, 0.05, "fisherz", show_progress=False, verbose=False).G.graph)
        if "ges" in names:
            from causallearn.search.ScoreBased.GES import ges
            fits["ges"] = lambda X, I, T: _cpdag_probs(ges(X, score_func="local_score_BIC")["G"].graph)
        if "gies" in names:
            import gies  # noqa: F401
            fits["gies"] = lambda X, I, T: _essential_probs(_gies_fit(X, I, T))
    except ImportError as e:
        pins = " ".join(sorted({REFERENCE_PINS[n] for n in names}))
        raise SuiteError(f"the reference algorithms {', '.join(names)} need pip install {pins}: "
                         f"{e}") from None

    def run(fit):
        def predict(batch):
            out = _batch_out(batch)
            for g, n, X, I, T in _graphs(batch):
                out[g, :n, :n] = fit(X, I, T)
            return out
        return predict
    return {n: run(fits[n]) for n in names}


def baselines(density):
    return {"chance": baseline_chance(density), "var-sort": baseline_var_sort,
            "r2-sort": baseline_r2_sort, "corr": baseline_corr, "twin-T": baseline_twin_T}


# ---------------------------------------------------------------------------
# scoring


def _score_cells(models, root, cells, batch_size, threads, output, results, timing, cpu):
    """models: name -> predict or name -> {cell: {gid: (n,n)}} (stored predictions)."""
    for cell in cells:
        gt = truth(root, cell)
        dens = float(np.mean([a.sum() / max(len(a) * (len(a) - 1), 1) for a, _ in gt]))
        ms = dict(models)
        if "chance" in ms and ms["chance"] is None:
            ms["chance"] = baseline_chance(dens)
        for name, model in ms.items():
            t0, c0 = time.perf_counter(), time.process_time()
            if callable(model):
                preds = collect(model, root, cell, _cell_batch(batch_size, cell), threads, output)
            else:
                if cell["name"] not in model:
                    continue
                preds = model[cell["name"]]
            results.setdefault(name, {})[cell["name"]] = evaluate(preds, root, cell, gt)
            timing.setdefault(name, {})[cell["name"]] = time.perf_counter() - t0
            cpu.setdefault(name, {})[cell["name"]] = time.process_time() - c0


def _cell_batch(batch_size, cell):
    """batch_size, or batch_size(cell) when it is a function of the cell (a
    model whose memory grows with the rows picks smaller batches for the
    1,000-row cells); a positive int either way."""
    b = batch_size(cell) if callable(batch_size) else batch_size
    if isinstance(b, bool) or not isinstance(b, int) or b < 1:
        raise SuiteError(f"batch size for cell {cell['name']}: {b!r} is not a positive int")
    return b


def _models(predict, name, with_baselines, stored=None):
    models = {}
    if predict is not None:
        models[name] = predict
    if stored is not None:
        models[name] = stored
    if with_baselines:
        models.update({k: v for k, v in baselines(0.0).items()})
        models["chance"] = None  # made per cell from its density
    return models


def score(predict, root, cells=None, name="model", baselines=True, batch_size=32, threads=2,
          output=None, recipe=None, reference=False):
    """Scores predict(batch) -> (G, N, N) edge probabilities on the suite
    built under root, beside the baselines (baselines=False: the model only).
    batch_size: graphs per predict call, an int or a function cell -> int
    (the cell's recipe dict: cell["options"]["samples"] is its rows).
    Returns the report dict (write_report / markdown). predict=None scores the
    baselines alone; reference=True adds the reference algorithms PC, GES
    and GIES, or a list of their names only those (reference_models)."""
    recipe = recipe or load_recipe()
    sel = select_cells(recipe, cells)
    _check_built(root, sel)
    models = _models(predict, name, baselines)
    if reference:
        models.update(reference_models(None if reference is True else reference))
    results, timing, cpu = {}, {}, {}
    _score_cells(models, root, sel, batch_size, threads, output, results, timing, cpu)
    return _report(recipe, sel, results, timing, cpu, root)


def read_predictions(path, recipe):
    """The predictions file: an .npz with key 'suite' = 'twincache-suite vV'
    and one (n,n) float array per graph, key '<cell>/<graph id>'. Returns
    {cell: {gid: array}}; SuiteError names what is wrong."""
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SuiteError(f"{path}: not a readable .npz predictions file: {e}") from None
    with z:
        keys = list(z.keys())
        if "suite" not in keys:
            raise SuiteError(f"{path}: no 'suite' key (expected '{suite_id(recipe)}')")
        sid = str(z["suite"])
        if sid != suite_id(recipe):
            raise SuiteError(f"{path}: predictions for '{sid}', this suite is '{suite_id(recipe)}'")
        names = {c["name"] for c in recipe["cells"]}
        out = {}
        for k in keys:
            if k == "suite":
                continue
            cell, _, gid = k.partition("/")
            if cell not in names:
                raise SuiteError(f"{path}: key {k!r}: no cell {cell!r} in {suite_id(recipe)}")
            if not gid.isdigit():
                raise SuiteError(f"{path}: key {k!r}: expected '<cell>/<graph id>'")
            a = z[k]
            if a.ndim != 2 or a.dtype.kind not in "fiu":
                raise SuiteError(f"{path}: key {k!r}: a 2-D numeric array expected, got "
                                 f"{a.dtype} {a.shape}")
            out.setdefault(cell, {})[int(gid)] = a.astype(np.float64)
    return out


def write_predictions(path, preds, recipe=None):
    """Writes {cell: {gid: (n,n)}} as the predictions file read_predictions reads."""
    recipe = recipe or load_recipe()
    arrays = {"suite": np.array(suite_id(recipe))}
    for cell, d in preds.items():
        for gid, a in d.items():
            arrays[f"{cell}/{gid}"] = np.asarray(a, dtype=np.float32)
    np.savez_compressed(path, **arrays)


def score_file(path, root, cells=None, name=None, baselines=True, recipe=None, reference=False):
    """Scores a predictions file (read_predictions) beside the baselines, on
    the cells it holds (or `cells`)."""
    recipe = recipe or load_recipe()
    stored = read_predictions(path, recipe)
    sel = select_cells(recipe, cells if cells is not None else
                       [c["name"] for c in recipe["cells"] if c["name"] in stored])
    if not sel:
        raise SuiteError(f"{path}: holds no prediction of any cell")
    for c in sel:
        if c["name"] not in stored:
            raise SuiteError(f"{path}: no prediction for cell {c['name']}")
    _check_built(root, sel)
    results, timing, cpu = {}, {}, {}
    name = name or os.path.splitext(os.path.basename(path))[0]
    models = _models(None, name, baselines, stored)
    if reference:
        models.update(reference_models(None if reference is True else reference))
    _score_cells(models, root, sel, 32, 2, "numpy", results, timing, cpu)
    return _report(recipe, sel, results, timing, cpu, root)


def _check_built(root, cells):
    for c in cells:
        if not os.path.isdir(cell_dir(root, c)):
            raise SuiteError(f"cell {c['name']}: {cell_dir(root, c)} missing: "
                             f"twincache-suite build {root} --cells {c['name']}")


def _report(recipe, cells, results, timing, cpu, root):
    return {"suite": suite_id(recipe), "threshold": THRESHOLD, "root": os.fspath(root),
            "cells": [c["name"] for c in cells],
            "cell_stats": {c["name"]: cell_stats(root, c) for c in cells},
            "splits": {k: [n for n in v.get("test", []) if n in {c["name"] for c in cells}]
                       for k, v in recipe.get("splits", {}).items()},
            "results": results, "seconds": timing, "cpu_seconds": cpu}


# ---------------------------------------------------------------------------
# DCDI-folder import (issue 26 item 4): data in DCDI's layout (Brouillard et
# al. 2020, dcdi/data.py; SEA and DCDI release theirs so; `twincache-inspect
# export --format dcdi` writes it) into a suite-side store this module scores.
# The cache writer is internal to the C library (cache/tc_cache_writer.h), so
# the store is an .npz of its own, not a twincache cache.

IMPORT_FORMAT = "twincache-suite dcdi-import v1"
DCDI_FILES = ("DAG{}.npy", "data_interv{}.npy", "intervention{}.csv", "regime{}.csv")


def _dcdi_dataset(src, dataset):
    """The i_dataset of the folder: `dataset`, or the one DAG{i}.npy there."""
    if dataset is not None:
        return int(dataset)
    found = sorted(int(f[3:-4]) for f in os.listdir(src)
                   if f.startswith("DAG") and f.endswith(".npy") and f[3:-4].isdigit())
    if not found:
        raise SuiteError(f"{src}: no DAG<i>.npy: not a DCDI folder (DAG<i>.npy, data_interv<i>.npy, "
                         "intervention<i>.csv, regime<i>.csv)")
    if len(found) > 1:
        raise SuiteError(f"{src}: datasets {', '.join(map(str, found))}: name one with --dataset")
    return found[0]


def _load_npy(path, what):
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SuiteError(f"{path}: not a readable .npy file ({what}): {e}") from None


def _csv_lines(path):
    with open(path) as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    return [ln.rstrip("\r") for ln in lines]


def _is_acyclic(adj):
    """Kahn's algorithm on adj[i, j] = edge i -> j."""
    indeg = adj.sum(axis=0).astype(np.int64)
    ready = list(np.nonzero(indeg == 0)[0])
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for j in np.nonzero(adj[i])[0]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return seen == len(adj)


def read_dcdi(src, dataset=None):
    """Reads and checks a DCDI folder (dataset i: DAG{i}.npy, data_interv{i}.npy,
    intervention{i}.csv, regime{i}.csv; data{i}.npy optional). Returns a dict:
    adj (N,N) uint8, base (S,N) float32 = the regime-0 rows, regimes (K,)
    the other regime numbers ascending, rows (K,) their row counts, inter
    (sum rows, N) float32 = their rows (world by world, file order within
    one), targets (K, T) int32 (-1 padded), obs (S0,N) float32 or None =
    data{i}.npy. Raises SuiteError naming the file, row or node for a
    missing file, shapes that disagree, NaN or infinity, a target out of
    range or differing within a regime, or a cyclic graph."""
    if not os.path.isdir(src):
        raise SuiteError(f"{src}: no such directory")
    i = _dcdi_dataset(src, dataset)
    paths = [os.path.join(src, f.format(i)) for f in DCDI_FILES]
    for p in paths:
        if not os.path.isfile(p):
            raise SuiteError(f"{src}: missing {os.path.basename(p)} (DCDI's layout for dataset {i}: "
                             + ", ".join(f.format(i) for f in DCDI_FILES) + ")")
    adj = _load_npy(paths[0], "the DAG")
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] < 1:
        raise SuiteError(f"{paths[0]}: shape {adj.shape}: a square (N, N) adjacency expected")
    if adj.dtype.kind not in "biuf" or not np.all((adj == 0) | (adj == 1)):
        raise SuiteError(f"{paths[0]}: entries must be 0 or 1 (edge i -> j at [i][j])")
    adj = adj.astype(np.uint8)
    n = adj.shape[0]
    if np.any(np.diag(adj)):
        raise SuiteError(f"{paths[0]}: node {int(np.nonzero(np.diag(adj))[0][0])} has a self-loop: not a DAG")
    if not _is_acyclic(adj):
        raise SuiteError(f"{paths[0]}: the graph has a directed cycle: not a DAG")

    def rows_of(p, what):
        x = _load_npy(p, what)
        if x.ndim != 2 or x.shape[1] != n:
            raise SuiteError(f"{p}: shape {x.shape}, the DAG has {n} nodes: expected (rows, {n})")
        if x.dtype.kind != "f":
            raise SuiteError(f"{p}: dtype {x.dtype}: floating-point samples expected")
        bad = ~np.isfinite(x)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise SuiteError(f"{p}: row {r}, node {c} is {x[r, c]}: NaN or infinity")
        return x.astype(np.float32)  # exact for float32 files; float64 ones are rounded

    data = rows_of(paths[1], "the samples")
    rows = data.shape[0]
    masks, regs = _csv_lines(paths[2]), _csv_lines(paths[3])
    for p, lines in ((paths[2], masks), (paths[3], regs)):
        if len(lines) != rows:
            raise SuiteError(f"{p}: {len(lines)} lines, {os.path.basename(paths[1])} has {rows} rows: "
                             "one line per row expected")
    targets, regime = [], np.empty(rows, dtype=np.int64)
    for r in range(rows):
        try:
            t = tuple(int(x) for x in masks[r].split(",")) if masks[r].strip() else ()
        except ValueError:
            raise SuiteError(f"{paths[2]}: line {r + 1}: {masks[r]!r}: comma-separated node indices "
                             "expected (empty: observational)") from None
        if any(x < 0 or x >= n for x in t):
            raise SuiteError(f"{paths[2]}: line {r + 1}: target outside the {n} nodes [0, {n - 1}]")
        targets.append(tuple(sorted(set(t))))
        try:
            regime[r] = int(float(regs[r]))
            if regime[r] != float(regs[r]) or regime[r] < 0:
                raise ValueError
        except (ValueError, OverflowError):  # int(float("inf")) overflows
            raise SuiteError(f"{paths[3]}: line {r + 1}: {regs[r]!r}: a regime number >= 0 "
                             "expected") from None
    sets = {}
    for r in range(rows):
        k = int(regime[r])
        if (k == 0) != (targets[r] == ()):
            raise SuiteError(f"{paths[2]}: line {r + 1}: regime {k} with targets {list(targets[r])}: "
                             "regime 0 is the observational one (no target), every other has targets")
        if sets.setdefault(k, targets[r]) != targets[r]:
            raise SuiteError(f"{paths[2]}: line {r + 1}: targets {list(targets[r])}, earlier rows of "
                             f"regime {k} have {list(sets[k])}: one target set per regime")
    if 0 not in sets:
        raise SuiteError(f"{paths[3]}: no regime 0: the observational rows are the base world")
    ks = sorted(k for k in sets if k)
    t_max = max([len(sets[k]) for k in ks] or [1])
    tg = np.full((len(ks), t_max), -1, dtype=np.int32)
    for w, k in enumerate(ks):
        tg[w, :len(sets[k])] = sets[k]
    obs_path = os.path.join(src, f"data{i}.npy")
    obs = rows_of(obs_path, "the observational samples") if os.path.isfile(obs_path) else None
    return {"adj": adj, "base": data[regime == 0],
            "regimes": np.array(ks, dtype=np.int64),
            "rows": np.array([(regime == k).sum() for k in ks], dtype=np.int64),
            "inter": (np.concatenate([data[regime == k] for k in ks]) if ks
                      else np.zeros((0, n), np.float32)),
            "targets": tg, "obs": obs, "dataset": i}


def import_dcdi(src, out, dataset=None):
    """Writes the store of a DCDI folder (read_dcdi) to `out` (an .npz; an
    existing file is refused). Returns read_dcdi's dict."""
    d = read_dcdi(src, dataset)
    if os.path.exists(out):
        raise SuiteError(f"{out}: exists: refusing to overwrite")
    arrays = {k: v for k, v in d.items() if k not in ("obs", "dataset")}
    if d["obs"] is not None:
        arrays["obs"] = d["obs"]
    tmp = out + ".tmp.npz"
    try:
        np.savez(tmp, format=np.array(IMPORT_FORMAT), **arrays)
        os.replace(tmp, out)
    except OSError as e:
        raise SuiteError(f"{out}: cannot write: {e}") from None
    return d


def load_import(path):
    """The store import_dcdi wrote, as read_dcdi's dict (obs None when absent)."""
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise SuiteError(f"{path}: not a readable import store: {e}") from None
    with z:
        if "format" not in z.files or str(z["format"]) != IMPORT_FORMAT:
            raise SuiteError(f"{path}: not a '{IMPORT_FORMAT}' store (twincache-suite import-dcdi)")
        d = {k: z[k] for k in z.files if k != "format"}
    d.setdefault("obs", None)
    return d


class _StoreBatch:
    """One imported graph as the batch fields the baselines read (numpy)."""

    def __init__(self, d, withhold_targets=False):
        n, S = d["adj"].shape[0], d["base"].shape[0]
        K = len(d["rows"])
        paired = K > 0 and bool(np.all(d["rows"] == S))  # twin-style worlds: S rows each
        k = K if paired else 0
        tmask = np.zeros((1, k, n), dtype=np.uint8)
        if not withhold_targets:
            for w in range(k):
                t = d["targets"][w]
                tmask[0, w, t[t >= 0]] = 1
        self.numpy = {"node_mask": np.ones((1, n), np.uint8), "valid": np.ones(1, np.uint8),
                      "graph_id": np.zeros(1, np.uint64), "base": d["base"][None],
                      "inter": (d["inter"].reshape(1, k, S, n) if paired
                                else np.zeros((1, 0, S, n), np.float32)),
                      "target": tmask, "int_mask": np.ones((1, k), np.uint8)}
        self.paired = paired

    def __getitem__(self, name):
        return self.numpy[name]

    def release(self):
        pass


def score_import(path, predict=None, name="model", with_baselines=True):
    """Scores an imported graph (load_import): predict(batch) -> (1, N, N)
    (a _StoreBatch: base, inter, target, node_mask fields) and/or the
    baselines. Returns {model: evaluate()'s dict}; |T| only where every
    regime has the base world's row count (its rows read as twin worlds)."""
    d = load_import(path)
    adj = d["adj"]
    n = len(adj)
    b = _StoreBatch(d)
    dens = float(adj.sum() / max(n * (n - 1), 1))
    models = {name: predict} if predict is not None else {}
    if with_baselines:
        models.update(baselines(dens))
        if not b.paired:
            models.pop("twin-T")
    cell = {"name": os.path.basename(path)}
    out = {}
    for m, f in models.items():
        p = _to_numpy(f(b))
        if p.shape != (1, n, n):
            raise SuiteError(f"{path}: {m} returned shape {tuple(p.shape)}, expected (1, {n}, {n})")
        out[m] = evaluate({0: np.asarray(p[0], np.float64)}, None, cell, gt=[(adj, None)])
    return out


# ---------------------------------------------------------------------------
# reports


def _fmt(s, digits=3):
    if s["mean"] is None:
        return "—"
    return f"{s['mean']:.{digits}f} ±{(s['hi'] - s['mean']):.{digits}f}"


def markdown(report, metrics=METRICS):
    """The report as Markdown: per metric a table cells x models (mean ±
    half-width of the 95% interval), the OOD splits as their own tables, the
    pooled AUPRC per kind of pair, and the seconds per cell."""
    models = list(report["results"])
    out = [f"# {report['suite']}: scores (mean ± 95% interval over graphs; "
           f"SHD and F1 at p > {report['threshold']})", ""]

    def table(title, cells, metric):
        rows = [f"### {title}", "", "| cell | " + " | ".join(models) + " |",
                "|---|" + "---|" * len(models)]
        for c in cells:
            vals = []
            for m in models:
                r = report["results"][m].get(c)
                vals.append(_fmt(r["metrics"][metric], 1 if metric.startswith("shd") else 3)
                            if r else "")
            rows.append(f"| {c} | " + " | ".join(vals) + " |")
        return rows + [""]

    out += ["### cells: what a sort could game (twincache-inspect stats)", "",
            "| cell | var-sortability | R2-sortability | linear-fit share |", "|---|---|---|---|"]
    for c in report["cells"]:
        st = report.get("cell_stats", {}).get(c, {})
        out.append(f"| {c} | " + " | ".join("—" if st.get(k) is None else f"{st[k]:.3f}" for k in
                                            ("var_sortability", "r2_sortability", "linear_share")) + " |")
    out.append("")
    for metric in metrics:
        out += table(f"{metric}", report["cells"], metric)
    for split, cells in report["splits"].items():
        if cells:
            out += [f"## OOD split: {split}", ""]
            for metric in ("auprc", "shd", "f1"):
                out += table(f"{split}: {metric}", cells, metric)
    kinds_rows = []
    for c in report["cells"]:
        first = report["results"][models[0]].get(c, {}).get("pair_kinds", {})
        for kname, k in first.items():
            if not k["pairs"]:
                continue
            aps = []
            for m in models:
                ap = report["results"][m].get(c, {}).get("pair_kinds", {}).get(kname, {}).get("auprc")
                aps.append("—" if ap is None or ap != ap else f"{ap:.3f}")
            kinds_rows.append(f"| {c} | {kname} | {k['pairs']} | {k['edges']} | " + " | ".join(aps) + " |")
    if kinds_rows:
        out += ["## AUPRC per kind of pair (pooled over the cell's graphs)", "",
                "| cell | pair (i, j) | pairs | edges | " + " | ".join(models) + " |",
                "|---|---|---|---|" + "---|" * len(models)]
        out += kinds_rows + [""]
    out += ["## seconds per cell (predict + metrics: wall clock / CPU of this process, "
            "the loader's decode threads included)", "",
            "| cell | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for c in report["cells"]:
        out.append(f"| {c} | " + " | ".join(
            f"{report['seconds'][m][c]:.2f} / " + (f"{report['cpu_seconds'][m][c]:.2f}" if
                                                   c in report.get("cpu_seconds", {}).get(m, {}) else "?")
            if c in report["seconds"].get(m, {}) else ""
            for m in models) + " |")
    return "\n".join(out) + "\n"


def heatmap(report, path):
    """PNG heat map (cells x metric, one panel per model) when matplotlib is
    importable; returns None on success, else the reason it was not drawn."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not importable: no PNG heat map"
    mets = ("auprc", "auroc", "f1", "orient")  # in [0, 1]; SHD is a count, in the tables
    models, cells = list(report["results"]), report["cells"]
    fig, axes = plt.subplots(1, len(models), figsize=(2.2 * len(models) + 2, 0.28 * len(cells) + 1.5),
                             squeeze=False)
    for ax, m in zip(axes[0], models):
        a = np.array([[np.nan if report["results"][m].get(c) is None or
                       report["results"][m][c]["metrics"][k]["mean"] is None
                       else report["results"][m][c]["metrics"][k]["mean"] for k in mets]
                      for c in cells], dtype=float)
        ax.imshow(a, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(m, fontsize=8)
        ax.set_xticks(range(len(mets)))
        ax.set_xticklabels(mets, rotation=90, fontsize=7)
        ax.set_yticks(range(len(cells)))
        ax.set_yticklabels(cells if ax is axes[0][0] else [], fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def write_report(report, prefix):
    """Writes PREFIX.json, PREFIX.md and PREFIX.png (if matplotlib is
    importable). Returns the paths written and a note when the PNG is not."""
    d = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(d, exist_ok=True)
    paths = []
    with open(prefix + ".json", "w") as f:
        json.dump(report, f, indent=1)
    paths.append(prefix + ".json")
    with open(prefix + ".md", "w") as f:
        f.write(markdown(report))
    paths.append(prefix + ".md")
    note = heatmap(report, prefix + ".png")
    if note is None:
        paths.append(prefix + ".png")
    return paths, note


# ---------------------------------------------------------------------------
# command line


def _usage(msg):
    print(f"twincache-suite: {msg}", file=sys.stderr)
    return 2


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="twincache-suite",
        description="The frozen held-out benchmark of twincache: build its caches (checked by "
                    "digest), list their sortability, score predictions beside the baselines.")
    ap.add_argument("--recipe", help="a recipe file (default: the package's v1.json)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="generate every cell under DIR and check its digest")
    b.add_argument("dir")
    b.add_argument("--threads", type=int, default=2, help="twincache-gen threads (default 2)")
    b.add_argument("--cells", help="comma-separated cell names (default: all)")
    b.add_argument("--no-check", action="store_true",
                   help="do not compare digests (before `digest --update`, on a fresh DIR)")
    i = sub.add_parser("info", help="cells with var-/R2-sortability and linear-fit share")
    i.add_argument("dir", nargs="?", help="a built suite (without: the recipe only)")
    i.add_argument("--cells")
    g = sub.add_parser("args", help="the twincache-gen flags of a cell's regime (no --seed, "
                                    "--graphs): to generate training data like it")
    g.add_argument("cell")
    d = sub.add_parser("digest", help="recompute digests of a built suite; --update writes them")
    d.add_argument("dir")
    d.add_argument("--cells")
    d.add_argument("--update", action="store_true", help="rewrite the recipe's digests")
    m = sub.add_parser("import-dcdi", help="read a DCDI-layout folder (DAG<i>.npy, data_interv<i>.npy, "
                                          "intervention<i>.csv, regime<i>.csv) into OUT.npz, a store "
                                          "score-import scores")
    m.add_argument("src", metavar="DIR")
    m.add_argument("out", metavar="OUT")
    m.add_argument("--dataset", type=int, help="DCDI's i_dataset (default: the folder's only one)")
    q = sub.add_parser("score-import", help="the baselines' metrics on an import-dcdi store")
    q.add_argument("store", metavar="OUT")
    s = sub.add_parser("score", help="score a predictions .npz (and/or the baselines)")
    s.add_argument("dir")
    s.add_argument("predictions", nargs="?", help="PRED.npz (see SUITE.md); without: baselines only")
    s.add_argument("--cells")
    s.add_argument("--name", help="the model's name in the tables (default: the file's)")
    s.add_argument("--no-baselines", action="store_true")
    s.add_argument("--reference", nargs="?", const="pc,ges,gies", metavar="NAMES",
                   help="add the reference algorithms: pc, ges (pip install causal-learn==0.1.4.0), "
                        "gies (pip install gies==0.0.3); comma-separated, default all three "
                        "(slow: N = 10 cells)")
    s.add_argument("--out", help="write OUT.json, OUT.md (and OUT.png); default: Markdown to stdout")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    try:
        recipe = load_recipe(a.recipe)
        if a.cmd == "build":
            if a.threads < 1 or a.threads > 1024:
                return _usage(f"--threads {a.threads}: an integer in [1, 1024]")
            t0 = time.perf_counter()
            r = build(a.dir, a.threads, a.cells, recipe, check=not a.no_check)
            print(f"{suite_id(recipe)}: {len(r)} cells built and checked in "
                  f"{time.perf_counter() - t0:.1f} s, {disk_bytes(a.dir) / 2**20:.1f} MiB "
                  f"on disk under {a.dir}")
        elif a.cmd == "args":
            print(" ".join(gen_args(select_cells(recipe, [a.cell])[0])[4:]))
        elif a.cmd == "digest":
            if a.update:
                ch = update_digests(a.dir, a.cells, recipe)
                print(f"{recipe['_path']}: {len(ch)} digest(s) changed"
                      + (": " + ", ".join(ch) if ch else ""))
            else:
                bad = 0
                for c in select_cells(recipe, a.cells):
                    dg = cache_digest(cell_dir(a.dir, c))
                    ok = dg == c.get("digest")
                    bad += not ok
                    print(f"{c['name']:28s} {dg} {'ok' if ok else 'DIFFERS'}")
                return 1 if bad else 0
        elif a.cmd == "info":
            print(f"{suite_id(recipe)} ({recipe['_path']})")
            hdr = f"{'cell':28s} {'graphs':>6s}"
            if a.dir:
                hdr += f" {'var-sort':>8s} {'R2-sort':>8s} {'lin.share':>9s}"
            print(hdr + "  options")
            for c in select_cells(recipe, a.cells):
                line = f"{c['name']:28s} {c['graphs']:6d}"
                if a.dir:
                    st = cell_stats(a.dir, c)
                    line += "".join(f" {'—' if v is None else format(v, '.3f'):>{w}s}" for v, w in
                                    ((st["var_sortability"], 8), (st["r2_sortability"], 8),
                                     (st["linear_share"], 9)))
                print(line + "  " + " ".join(gen_args(c)[4:]) +
                      (" [targets withheld]" if c.get("withhold_targets") else ""))
        elif a.cmd == "import-dcdi":
            if a.dataset is not None and not 1 <= a.dataset <= 999999:
                return _usage(f"--dataset {a.dataset}: an integer in [1, 999999]")
            d = import_dcdi(a.src, a.out, a.dataset)
            print(f"{a.out}: dataset {d['dataset']}, {len(d['adj'])} nodes, {int(d['adj'].sum())} edges, "
                  f"{len(d['base'])} observational rows, {len(d['rows'])} interventional regimes "
                  f"({int(d['rows'].sum())} rows)")
        elif a.cmd == "score-import":
            res = score_import(a.store)
            print(f"{'model':10s} " + " ".join(f"{m:>7s}" for m in METRICS))
            for name, r in res.items():
                print(f"{name:10s} " + " ".join(
                    f"{'—' if r['metrics'][m]['mean'] is None else format(r['metrics'][m]['mean'], '.3f'):>7s}"
                    for m in METRICS))
        elif a.cmd == "score":
            refs = a.reference and [x.strip() for x in a.reference.split(",")]
            for x in refs or ():
                if x not in REFERENCES:
                    return _usage(f"--reference {a.reference}: {x!r} is none of {', '.join(REFERENCES)}")
            if a.predictions:
                rep = score_file(a.predictions, a.dir, a.cells, a.name, not a.no_baselines, recipe,
                                 refs)
            else:
                if a.no_baselines and not refs:
                    return _usage("score: nothing to score (no predictions file, --no-baselines)")
                rep = score(None, a.dir, a.cells, baselines=not a.no_baselines, recipe=recipe,
                            reference=refs)
            if a.out:
                paths, note = write_report(rep, a.out)
                print("wrote " + ", ".join(paths) + (f" ({note})" if note else ""))
            else:
                sys.stdout.write(markdown(rep))
    except UnknownCell as e:
        return _usage(str(e))
    except Error as e:
        print(f"twincache-suite: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
