#!/usr/bin/env python3
"""python_loader_bench.py — the Python loop over twincache.Loader against the C
loader (twincache-loader-bench) on the same cache, threads and batch size.

For each thread count it prints graphs/s of: the C loop (best of --repeat),
the Python loop with numpy views, the Python loop with torch views; the ratio
Python/C (target >= 0.90) and the Python overhead per batch in microseconds
((t_python - t_C) / batches). The loops touch no data: they measure what the
binding adds per batch (creating the views, the slot hold, the ctypes call).

usage: /usr/bin/python3 bench/python_loader_bench.py --cache DIR [--threads 1,2]
       [--batch 256] [--epochs 3] [--repeat 5]
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import twincache  # noqa: E402
from twincache.gen import find_program  # noqa: E402


def python_run(cache, threads, batch, epochs, output):
    L = twincache.Loader(cache, batch_size=batch, epochs=epochs, threads=threads, output=output)
    t0, c0 = time.perf_counter(), time.process_time()
    graphs = batches = 0
    for b in L.stream():
        graphs += b.n_graphs
        batches += 1
        x = b.base  # the field access a training loop does
        del x, b
    t, c = time.perf_counter() - t0, time.process_time() - c0
    L.close()
    return graphs, batches, t, c


def best(runs):
    return min(runs, key=lambda r: r[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    bench = find_program("twincache-loader-bench")
    print(f"cache {a.cache}  batch {a.batch}  epochs {a.epochs}  best of {a.repeat}  "
          f"python {sys.version.split()[0]}  load avg {os.getloadavg()[0]:.2f}")
    print(f"{'threads':>7} {'C graphs/s':>11} {'numpy g/s':>10} {'ratio':>6} {'torch g/s':>10} "
          f"{'ratio':>6} {'C us/batch':>10} {'py +us/batch np':>15} {'torch':>6}")
    for threads in [int(t) for t in a.threads.split(",")]:
        out = subprocess.run([bench, "--cache", a.cache, "--threads", str(threads), "--batch",
                              str(a.batch), "--epochs", str(a.epochs), "--repeat", str(a.repeat),
                              "--json"], check=True, capture_output=True, text=True).stdout
        c = json.loads(out)
        c_gps = c["graphs_per_s"]
        res = {}
        for output in ("numpy", "torch"):
            g, n, t, _ = best([python_run(a.cache, threads, a.batch, a.epochs, output)
                               for _ in range(a.repeat)])
            res[output] = (g / t, n, t)
        # per batch: the C loop's time, and what the Python loop takes beyond it
        graphs_per_batch = res["numpy"][0] * res["numpy"][2] / max(res["numpy"][1], 1)
        c_us = 1e6 * graphs_per_batch / c_gps
        over = {k: 1e6 * v[2] / max(v[1], 1) - c_us for k, v in res.items()}
        print(f"{threads:>7} {c_gps:>11.0f} {res['numpy'][0]:>10.0f} {res['numpy'][0] / c_gps:>6.2f} "
              f"{res['torch'][0]:>10.0f} {res['torch'][0] / c_gps:>6.2f} {c_us:>10.1f} "
              f"{over['numpy']:>15.1f} {over['torch']:>6.1f}")
    print(f"binding cost per batch (wrap one C batch, no waiting): numpy "
          f"{wrap_cost_us(a.cache, a.batch, 'numpy'):.1f} us, torch "
          f"{wrap_cost_us(a.cache, a.batch, 'torch'):.1f} us")


def wrap_cost_us(cache, batch, output, n=2000):
    """What the binding adds per batch, without the wait for C: wrapping one
    returned C batch into a Batch (views, tensors, hold), n times."""
    L = twincache.Loader(cache, batch_size=batch, threads=1, output=output)
    rc, out = L._core.next()
    t0 = time.perf_counter()
    for _ in range(n):
        b = L._wrap(L._core, out)
        b._hold.released = True  # the slot is released once, below
        del b
    t = time.perf_counter() - t0
    L._core.release(out)
    L.close()
    return 1e6 * t / n


if __name__ == "__main__":
    main()
