#!/usr/bin/env python3
"""python_bucket_padding.py — node padding with and without size buckets.

One epoch of --cache at --batch, without and with buckets. For each batch the
model attends over G_valid x N_b node slots, N_b the cache's N (the batch
as it comes, no trimming), or the batch's own largest N (batch.nodes, what
batch.trimmed() keeps). Printed per setting: the padding fraction (node
slots that are no real node), the mean N_b, the attention work per graph in
units of N_b^2 relative to the cache-N batch, the loader's open time (the
frame header pass buckets add) and its graphs/s over the epoch (decode only,
one thread; wall clock: state the load).

  /usr/bin/python3 bench/python_bucket_padding.py --cache CACHE [--batch 16]
"""
import argparse
import os
import sys
import time

try:
    import twincache
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import twincache


def epoch(cache, batch, buckets, trim):
    t0 = time.perf_counter()
    L = twincache.Loader(cache, batch_size=batch, epochs=1, seed=1, threads=1, output="numpy", buckets=buckets)
    t_open = time.perf_counter() - t0
    real = slots = sq = graphs = 0
    t1 = time.perf_counter()
    with L:
        N = L.layout["nodes"]
        for b in L.stream():
            nm = b.numpy["node_mask"]
            valid = b.numpy["valid"].astype(bool)
            n_b = b.nodes if trim else N
            g = int(valid.sum())
            real += int(nm[valid].sum())
            slots += g * n_b
            sq += g * n_b * n_b
            graphs += g
    t_epoch = time.perf_counter() - t1
    return 1 - real / slots, slots / graphs, sq / graphs, t_open, graphs / t_epoch, N


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--batch", type=int, default=16)
    a = ap.parse_args()
    print(f"cache {a.cache}, batch {a.batch}, load {os.getloadavg()[0]:.1f}")
    print(f"{'setting':<24} {'padding':>8} {'mean N_b':>9} {'N_b^2 work':>11} {'open ms':>8} {'graphs/s':>9}")
    rows = [("cache N (no trim)", False, False), ("batch N, no buckets", False, True), ("batch N, buckets", True, True)]
    base_sq = None
    for name, b, trim in rows:
        pad, mean_n, sq, t_open, gps, N = epoch(a.cache, a.batch, b, trim)
        base_sq = base_sq or sq
        print(f"{name:<24} {100 * pad:7.1f}% {mean_n:9.1f} {sq / base_sq:11.2f} {1e3 * t_open:8.1f} {gps:9.0f}")


if __name__ == "__main__":
    main()
