#!/usr/bin/env python3
"""breakdown.py — where a train_avici.py model's errors are: held-out AUPRC
per kind of ordered pair (i, j), by what the twin worlds say about it:

  neither moved       no do() moved i or j: the base world's samples alone
  only j moved        j moved in some twin world, never in one where i moved
  both moved          i and j moved in the same twin world (their changes
                      are noise-free functions of their parents')
  only i moved        i moved in some twin world, j in none: i -> j is
                      impossible (an edge would have moved j too)

usage: python3 examples/breakdown.py --checkpoint run.pt --cache CACHE [--eval-graphs 1000]
The model's flags come from the checkpoint; the graphs are the cache's last
--eval-graphs (the held-out ones of a run with the same --eval-graphs)."""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_avici as ta  # noqa: E402  (this folder; it finds twincache as the script does)
from score_suite import load_checkpoint  # noqa: E402  (this folder)

KINDS = ("neither moved", "only j moved", "both moved", "only i moved")


def pair_kinds(b):
    """(G,N,N) int: the index in KINDS of every ordered pair of the batch b."""
    inter, base = b["inter"].float(), b["base"].float()
    moved = ((inter - base[:, None]).abs().amax(dim=2) > 0) & b["int_mask"].bool()[:, :, None]  # (G,K,N)
    both = (moved[:, :, :, None] & moved[:, :, None, :]).any(dim=1)
    j_moved = moved.any(dim=1)[:, None, :].expand_as(both)
    i_moved = moved.any(dim=1)[:, :, None].expand_as(both)
    return torch.where(both, 2, torch.where(j_moved, 1, torch.where(i_moved, 3, 0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="a train_avici.py --checkpoint file")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--eval-graphs", type=int, default=1000, help="the cache's last graphs")
    ap.add_argument("--batch", type=int, default=32)
    a = ap.parse_args()
    import twincache
    net, f = load_checkpoint(a.checkpoint, "breakdown.py")
    n = len(twincache.Cache(a.cache))
    if not 0 < a.eval_graphs <= n:
        sys.exit(f"breakdown.py: --eval-graphs {a.eval_graphs}: the cache has {n} graphs")
    scores, labels, kinds = [], [], []
    with torch.no_grad(), twincache.Loader(a.cache, batch_size=a.batch, shuffle=False, threads=1,
                                           index_range=(n - a.eval_graphs, n), output="torch",
                                           rank=0, world_size=1) as ev:
        for b in ev:
            inp, gm = ta.model_inputs(b, f["rows"], "cpu", twin_rows=f.get("twin_rows") or None,
                                      feats=net.layers > 0, stats=net.stats, pair_rows=net.pair_rows)
            pm = ta.pair_mask(inp["node_mask"], gm)
            scores.append(net(inp).float()[pm].numpy())
            labels.append(b["adj"][pm].numpy())
            kinds.append(pair_kinds(b)[pm].numpy())
    s, y, k = map(np.concatenate, (scores, labels, kinds))
    print(f"{a.eval_graphs} graphs of {a.cache}, {len(y)} ordered pairs: AUPRC {ta.auprc(s, y):.3f} "
          f"(edge base rate {y.mean():.3f})")
    print(f"{'pair (i, j)':14s} {'pairs':>7s} {'edges':>7s} {'base rate':>10s} {'AUPRC':>7s}")
    for i, name in enumerate(KINDS):
        m = k == i
        ap_ = ta.auprc(s[m], y[m]) if y[m].sum() else float("nan")
        print(f"{name:14s} {m.mean():7.3f} {y[m].sum() / max(y.sum(), 1):7.3f} {y[m].mean():10.3f} {ap_:7.3f}")


if __name__ == "__main__":
    main()
