"""twincache.suite.scoring — scoring a model (a predict function or a
predictions file) and the baselines on the built cells: the ground truth read
from each cell's cache, the Loader pass, and the report dict."""
import os
import time

import numpy as np

from .baseline import _field, _to_numpy, baseline_chance, baselines
from .cells import cell_stats, check_built
from .errors import SuiteError
from .metrics import METRICS, THRESHOLD, graph_metrics, pair_kinds, pooled_pair_kinds, summarize
from .predictions import read_predictions
from .recipe import (cache_digest, cell_dir, check_cell_digest, load_recipe, select_cells,
                     suite_id)
from .real import is_real, truth_adj
from .references import reference_models


def truth(root, cell, check=True):
    """Per graph of a cell: (adj (n,n) uint8, pair kinds (n,n) int8 or None).
    Pair kind of (i, j), index in PAIR_KINDS, from what the twin worlds moved
    (a node moved in world k when any of the rows both it and the base
    world hold differs from the base world's): both moved (some world moved i and j), only j moved, only i
    moved, neither; None for a graph without twin worlds. The same pass
    computes the cache's digest; check=True (what score does) raises
    SuiteError unless it is the recipe's (recipe.check_cell_digest)."""
    out = []

    def visit(g):
        kinds = None
        if g.n_inter > 0 and g.n_samples > 0:
            r = getattr(g, "rows", None)
            if r is None or (r == g.n_samples).all():
                kinds = pair_kinds((g.inter != g.base[None]).any(axis=1))  # moved: (K, n)
            else:  # rows per world (FORMAT.md 3.10): the rows both world k and base hold
                m = np.minimum(r[1:], r[0])
                kinds = pair_kinds(np.stack([(g.inter[k, :m[k]] != g.base[:m[k]]).any(axis=0)
                                             for k in range(g.n_inter)]))
        # a real cell's truth is the recipe's edge list (it may hold a cycle, which no stored graph may)
        out.append((truth_adj(cell) if is_real(cell) else g.adj.astype(np.uint8), kinds))
    digest = cache_digest(cell_dir(root, cell), visit)
    if check:
        check_cell_digest(root, cell, digest)
    return out


def collect(predict, root, cell, batch_size=32, threads=2, output=None):
    """Runs predict over a cell's cache through the Loader (index order, one
    pass); returns {graph id: (n,n) float64}. Raises SuiteError for a wrong
    shape, NaN or values outside [0, 1]."""
    from ..loader import Loader
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
    for i, (adj, _) in enumerate(gt):
        check_prediction(np.asarray(preds[i]), cell["name"], i, n=len(adj))
        for k, v in graph_metrics(preds[i], adj).items():
            per[k].append(v)
    res = {"metrics": {m: summarize(v) for m, v in per.items()}, "graphs": len(gt)}
    # what moved is in the worlds, withheld targets or not
    kinds = pooled_pair_kinds((preds[i], adj, k) for i, (adj, k) in enumerate(gt))
    if kinds:
        res["pair_kinds"] = kinds
    return res


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
    sel, skipped = _built(root, select_cells(recipe, cells))
    models = _models(predict, name, baselines)
    if reference:
        models.update(reference_models(None if reference is True else reference))
    results, timing, cpu = {}, {}, {}
    _score_cells(models, root, sel, batch_size, threads, output, results, timing, cpu)
    return _report(recipe, sel, results, timing, cpu, root, skipped)


def score_file(path, root, cells=None, name=None, baselines=True, recipe=None, reference=False):
    """Scores a predictions file (read_predictions) beside the baselines, on
    the cells it holds (or `cells`)."""
    recipe = recipe or load_recipe()
    stored = read_predictions(path, recipe)
    if not stored:
        raise SuiteError(f"{path}: holds no prediction of any cell")
    sel = select_cells(recipe, cells if cells is not None else
                       [c["name"] for c in recipe["cells"] if c["name"] in stored])
    for c in sel:
        if c["name"] not in stored:
            raise SuiteError(f"{path}: no prediction for cell {c['name']}")
    sel, skipped = _built(root, sel)
    results, timing, cpu = {}, {}, {}
    name = name or os.path.splitext(os.path.basename(path))[0]
    models = _models(None, name, baselines, stored)
    if reference:
        models.update(reference_models(None if reference is True else reference))
    _score_cells(models, root, sel, 32, 2, "numpy", results, timing, cpu)
    return _report(recipe, sel, results, timing, cpu, root, skipped)


def _built(root, sel):
    """The selected cells that are built, and {cell: why} for the real
    cells that are not (their package was not at hand when the suite was
    built: skipped, not an error); a missing generated cell raises."""
    skipped = {c["name"]: f"not built ({c['source']['package']} {c['source']['version']}'s files "
                          f"were not given to build)"
               for c in sel if is_real(c) and not os.path.isdir(cell_dir(root, c))}
    sel = [c for c in sel if c["name"] not in skipped]
    check_built(root, sel)
    return sel, skipped


def _report(recipe, cells, results, timing, cpu, root, skipped=None):
    return {"suite": suite_id(recipe), "threshold": THRESHOLD, "root": os.fspath(root),
            "skipped": dict(skipped or {}),
            "cells": [c["name"] for c in cells],
            "cell_stats": {c["name"]: cell_stats(root, c) for c in cells},
            "splits": {k: [n for n in v.get("test", []) if n in {c["name"] for c in cells}]
                       for k, v in recipe.get("splits", {}).items()},
            "results": results, "seconds": timing, "cpu_seconds": cpu}
