#!/usr/bin/env python3
"""python_loader_bench.py — the Python loop over twincache.Loader against the C
loader (twincache-loader-bench) on the same cache, threads and batch size.

For each thread count it prints graphs/s of: the C loop (best of --repeat),
the Python loop with numpy views, the Python loop with torch views; the ratio
Python/C (target >= 0.90) and the Python overhead per batch in microseconds
((t_python - t_C) / batches); the consumer thread's own CPU time per batch
(time.thread_time: the binding plus the C next/release calls, waiting costs
none, so other jobs' load does not inflate it); and the binding's wrap cost
alone. The loops read one field (base) and no data: they measure what the
binding adds per batch (the slot hold, the view read, the ctypes calls).

The compact layout (layout="compact", in --layouts): the C loop filling
compact slabs, the Python loop over compact torch views, and the Python loop
that also expands every batch to the dense layout with the torch expansion on
the CPU (twincache.compact; on a GPU the same code runs on the device). It
also prints the bytes per graph a device copy moves: the dense slab vs the
compact batch's used prefix (mean over the epoch), and the expansion's time
per batch on its own. The physical limit of the expansion is writing the
dense slab: its memcpy time per batch is printed beside it.

usage: /usr/bin/python3 bench/python_loader_bench.py --cache DIR [--threads 1,2]
       [--batch 256] [--epochs 3] [--repeat 5] [--layouts dense,compact]
"""
import argparse
import json
import os
import subprocess
import sys
import time

try:  # the installed package (pip install .); else this checkout's source tree
    import twincache
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import twincache  # noqa: E402
from twincache.gen import find_program  # noqa: E402


def python_run(cache, threads, batch, epochs, output, layout="dense", expand=False):
    L = twincache.Loader(cache, batch_size=batch, epochs=epochs, threads=threads, output=output,
                         layout=layout)
    t0, c0, h0 = time.perf_counter(), time.process_time(), time.thread_time()
    graphs = batches = used = 0
    for b in L.stream():
        graphs += b.n_graphs
        batches += 1
        if expand:
            used += b.used_bytes
            b = b.expand()  # the dense batch, on the CPU
        x = b.base  # the field access a training loop does
        del x, b
    t, c, h = time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - h0
    L.close()
    return graphs, batches, t, c, used, h


def best(runs):
    return min(runs, key=lambda r: r[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--layouts", default="dense,compact")
    a = ap.parse_args()
    layouts = a.layouts.split(",")
    if not set(layouts) <= {"dense", "compact"}:
        ap.error(f"--layouts takes dense and/or compact, got {a.layouts!r}")
    bench = find_program("twincache-loader-bench")
    print(f"cache {a.cache}  batch {a.batch}  epochs {a.epochs}  best of {a.repeat}  "
          f"python {sys.version.split()[0]}  load avg {os.getloadavg()[0]:.2f}")
    threads_list = [int(t) for t in a.threads.split(",")]
    if "dense" in layouts:
        dense_table(a, bench, threads_list)
    if "compact" in layouts:
        compact_table(a, bench, threads_list)
    print(f"load avg at the end {os.getloadavg()[0]:.2f}")


def dense_table(a, bench, threads_list):
    print(f"{'threads':>7} {'C graphs/s':>11} {'numpy g/s':>10} {'ratio':>6} {'torch g/s':>10} "
          f"{'ratio':>6} {'C us/batch':>10} {'py +us/batch np':>15} {'torch':>6} "
          f"{'cpu us np':>9} {'torch':>6}")
    for threads in threads_list:
        c_gps = c_loader(bench, a, threads, "dense")
        res, cpu = {}, {}
        for output in ("numpy", "torch"):
            runs = [python_run(a.cache, threads, a.batch, a.epochs, output)
                    for _ in range(a.repeat)]
            g, n, t, _, _, _ = best(runs)
            res[output] = (g / t, n, t)
            # the consumer thread's own CPU time per batch (the binding plus
            # the C next/release calls; waiting costs none): robust to load
            cpu[output] = 1e6 * min(r[5] / max(r[1], 1) for r in runs)
        # per batch: the C loop's time, and what the Python loop takes beyond it
        graphs_per_batch = res["numpy"][0] * res["numpy"][2] / max(res["numpy"][1], 1)
        c_us = 1e6 * graphs_per_batch / c_gps
        over = {k: 1e6 * v[2] / max(v[1], 1) - c_us for k, v in res.items()}
        print(f"{threads:>7} {c_gps:>11.0f} {res['numpy'][0]:>10.0f} {res['numpy'][0] / c_gps:>6.2f} "
              f"{res['torch'][0]:>10.0f} {res['torch'][0] / c_gps:>6.2f} {c_us:>10.1f} "
              f"{over['numpy']:>15.1f} {over['torch']:>6.1f} {cpu['numpy']:>9.1f} {cpu['torch']:>6.1f}")
    print(f"binding cost per batch (wrap one C batch, no waiting): numpy "
          f"{wrap_cost_us(a.cache, a.batch, 'numpy'):.1f} us, torch "
          f"{wrap_cost_us(a.cache, a.batch, 'torch'):.1f} us")


def c_loader(bench, a, threads, layout, repeat=None):
    out = subprocess.run([bench, "--cache", a.cache, "--threads", str(threads), "--batch",
                          str(a.batch), "--epochs", str(a.epochs),
                          "--repeat", str(repeat or a.repeat),
                          "--layout", layout, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["graphs_per_s"]


def compact_table(a, bench, threads_list):
    """graphs/s: C dense, C compact, Python dense torch views, Python compact
    torch views, Python compact + torch expansion on the CPU; bytes per
    graph of a device copy."""
    import torch
    L = twincache.Loader(a.cache, batch_size=a.batch, threads=1, layout="compact")
    ex = L._expander
    L.close()
    exp_ms, memcpy_ms = expand_cost_ms(a.cache, a.batch, a.repeat)
    print(f"compact layout: torch {torch.__version__}, {torch.get_num_threads()} torch thread(s); "
          f"expansion alone {exp_ms:.2f} ms/batch ({a.batch / exp_ms * 1e3:.0f} graphs/s), "
          f"memcpy of the dense slab {memcpy_ms:.2f} ms/batch (ratio to that bound "
          f"{memcpy_ms / exp_ms:.2f})")
    print(f"{'threads':>7} {'C dense':>9} {'C compact':>9} {'py dense':>9} {'py compact':>10} "
          f"{'ratio':>6} {'py cmp+expand':>13} {'B/graph dense':>13} {'B/graph compact':>15} "
          f"{'fewer':>6}")
    for threads in threads_list:
        # the five loops take turns, best of --repeat each: load that comes
        # and goes on a shared machine hits them alike
        runs = {k: [] for k in ("c_dense", "c_comp", "dense", "comp", "expd")}
        for _ in range(a.repeat):
            runs["c_dense"].append(c_loader(bench, a, threads, "dense", repeat=1))
            runs["c_comp"].append(c_loader(bench, a, threads, "compact", repeat=1))
            runs["dense"].append(python_run(a.cache, threads, a.batch, a.epochs, "torch"))
            runs["comp"].append(python_run(a.cache, threads, a.batch, a.epochs, "torch",
                                           "compact"))
            runs["expd"].append(python_run(a.cache, threads, a.batch, a.epochs, "torch",
                                           "compact", True))
        c_dense, c_comp = max(runs["c_dense"]), max(runs["c_comp"])
        dense, comp, expd = best(runs["dense"]), best(runs["comp"]), best(runs["expd"])
        g = expd[0]
        dense_b = ex.dense_bytes * expd[1] / g  # per graph, padding of a partial batch included
        comp_b = expd[4] / g
        print(f"{threads:>7} {c_dense:>9.0f} {c_comp:>9.0f} {dense[0] / dense[2]:>9.0f} "
              f"{comp[0] / comp[2]:>10.0f} {comp[0] / comp[2] / c_comp:>6.2f} "
              f"{g / expd[2]:>13.0f} {dense_b:>13.0f} {comp_b:>15.0f} {dense_b / comp_b:>5.2f}x")
    print("ratio: Python compact loop / C compact loop; fewer: dense bytes / compact bytes "
          "moved per graph by a device copy")


def expand_cost_ms(cache, batch, repeat, n=20):
    """The torch expansion of one compact batch on the CPU, best of `repeat`
    runs of n, and the memcpy of a dense slab of the same size (the bound:
    the expansion writes the whole dense slab)."""
    import torch
    L = twincache.Loader(cache, batch_size=batch, threads=1, layout="compact")
    b = L.next_batch()
    ex, src = b._expander, b._source_tensor()
    out = ex.new_dense()
    ex.run(src, b.n_cols, out)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            ex.run(src, b.n_cols, out)
        ts.append((time.perf_counter() - t0) / n)
    other = torch.empty_like(out)
    other.copy_(out)
    tm = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            other.copy_(out)
        tm.append((time.perf_counter() - t0) / n)
    b.release()
    L.close()
    return 1e3 * min(ts), 1e3 * min(tm)


def wrap_cost_us(cache, batch, output, n=2000, repeat=5):
    """What the binding adds per batch, without the wait for C: wrapping one
    returned C batch into a Batch (hold, lazy views) and reading its base
    array, n times; best of `repeat` (after one warm-up round)."""
    L = twincache.Loader(cache, batch_size=batch, threads=1, output=output)
    rc, out = L._core.next()
    runs = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        for _ in range(n):
            b = L._wrap(L._core, out)
            x = b.base  # the field a loop reads
            b._hold.released = True  # the slot is released once, below
            del b, x
        runs.append((time.perf_counter() - t0) / n)
    L._core.release(L._core.hold(out, 0, 0, None))
    L.close()
    return 1e6 * min(runs[1:])


if __name__ == "__main__":
    main()
