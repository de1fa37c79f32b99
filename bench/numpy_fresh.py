#!/usr/bin/env python3
"""numpy_fresh.py — the per-graph numpy generator the loader's fresh mode
replaces: for each graph, draw its exogenous noise and compute its base world
and every twin world (target and descendants recomputed on the same noise),
one graph at a time in numpy on one core, as a Python IterableDataset would.
The SCMs are drawn once up front (not timed), so only the sampling is
measured: the work twincache's fresh mode does per graph.

usage: numpy_fresh.py [--workload default|avici] [--graphs G] [--repeat R]
  default: 5..10 nodes, ER p = 0.3, S = 64, linear, one do() per node
  avici:   20..30 nodes, ER p = 0.3, S = 800, 3 targets, tanh MLP (H = 8)
Prints one table row: graphs/s (best of R runs) and the numpy version."""
import argparse
import sys
import time

import numpy as np


def make_scm(rng, workload):
    lo, hi = (5, 10) if workload == "default" else (20, 30)
    n = int(rng.integers(lo, hi + 1))
    order = rng.permutation(n)
    rank = np.empty(n, int)
    rank[order] = np.arange(n)
    adj = (rng.random((n, n)) < 0.3) & (rank[:, None] < rank[None, :])
    scale = rng.uniform(0.5, 1.5, n).astype(np.float32)
    if workload == "default":
        w = (rng.uniform(0.5, 2.0, (n, n)) * rng.choice([-1, 1], (n, n)) * adj).astype(np.float32)
        mlp = None
        targets = np.arange(n)
    else:
        w = None
        H = 8
        npa = np.maximum(adj.sum(0), 1)
        w1 = (rng.normal(size=(n, H, n)) / np.sqrt(npa)[:, None, None] * adj.T[:, None, :]).astype(np.float32)
        mlp = (w1, rng.normal(0, 0.5, (n, H)).astype(np.float32),
               (rng.normal(size=(n, H)) / np.sqrt(H)).astype(np.float32))
        targets = rng.choice(n, 3, replace=False)
    desc = np.eye(n, dtype=bool)
    for j in order[::-1]:  # reverse topological order: children first
        for c in np.nonzero(adj[j])[0]:
            desc[j] |= desc[c]
    values = rng.uniform(1, 3, len(targets)).astype(np.float32)
    return n, order, adj, scale, w, mlp, targets, desc, values


def node(j, x, e, adj, w, mlp):
    pa = np.nonzero(adj[:, j])[0]
    if mlp is None:
        return x[:, pa] @ w[pa, j] + e[:, j]
    w1, b1, w2 = mlp
    return np.tanh(x[:, pa] @ w1[j][:, pa].T + b1[j]) @ w2[j] + e[:, j]


def sample(rng, scm, S):
    n, order, adj, scale, w, mlp, targets, desc, values = scm
    e = rng.standard_normal((S, n), dtype=np.float32) * scale
    base = np.empty((S, n), np.float32)
    for j in order:
        base[:, j] = node(j, base, e, adj, w, mlp)
    twins = np.empty((len(targets), S, n), np.float32)
    for k, t in enumerate(targets):
        x = base.copy()
        for j in order:
            if not desc[t, j]:
                continue
            x[:, j] = values[k] if j == t else node(j, x, e, adj, w, mlp)
        twins[k] = x
    return base, twins


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", choices=["default", "avici"], default="default")
    ap.add_argument("--graphs", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    graphs = a.graphs or (2000 if a.workload == "default" else 100)
    S = 64 if a.workload == "default" else 800
    rng = np.random.default_rng(0)
    scms = [make_scm(rng, a.workload) for _ in range(graphs)]
    best = 0.0
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        for scm in scms:
            sample(rng, scm, S)
        best = max(best, graphs / (time.perf_counter() - t0))
    print(f"numpy per-graph generator, {a.workload} workload (S = {S}), 1 core: "
          f"{best:.0f} graphs/s (best of {a.repeat}, {graphs} graphs, numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
