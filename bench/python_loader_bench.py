#!/usr/bin/env python3
"""python_loader_bench.py — the Python loop over twincache.Loader against the C
loader (twincache-loader-bench) on the same cache, threads and batch size.

For each thread count the C loop (twincache-loader-bench --repeat 1), the
Python loop with numpy views and the Python loop with torch views take
turns, --repeat rounds, so load that comes and goes hits them alike; the
table keeps the best round of each. Both consumers do the same work per
batch: take it, read its size and its base array (no data), release it.
Printed: graphs/s and the Python/C ratios (target >= 0.90); the consumer
thread's own CPU per batch on each side (clock_gettime(CLOCK_THREAD_CPUTIME_ID)
in C, time.thread_time in Python: next/release with their futex calls, plus
the binding on the Python side; a blocked wait costs none, so load barely
moves it) and their difference, the binding's own cost; the per-round
ratios; the share of one core the binding takes at the Python loop's
batch rate; and the wrap cost alone (no waiting).

The compact layout (layout="compact", in --layouts): the C loop filling
compact slabs, the Python loop over compact torch views, and the Python loop
that also expands every batch to the dense layout with the torch expansion on
the CPU (twincache.compact; on a GPU the same code runs on the device). It
also prints the bytes per graph a device copy moves: the dense slab vs the
compact batch's used prefix (mean over the epoch), and the expansion's time
per batch on its own. The physical limit of the expansion is writing the
dense slab: its memcpy time per batch is printed beside it.

--instructions (instead of the tables): where wall time is too noisy, the
same three loops under valgrind's callgrind, each run for 1 and for 1 +
--epochs epochs so that start-up (Python, imports, the cache's open) cancels:
instructions per batch of the consumer thread (the C loop's, or the Python
loop's with the binding: the difference is the binding's own) and of the
decode threads, and the ratio they imply — the Python loop's rate against
the C loop's when decoding keeps every core busy (at equal instructions per
cycle), which is the batch-32, 2-thread case.

usage: /usr/bin/python3 bench/python_loader_bench.py --cache DIR [--threads 1,2]
       [--batch 256] [--epochs 3] [--repeat 5] [--layouts dense,compact] [--instructions]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
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
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions per batch under callgrind (dense layout, the first "
                         "of --threads) instead of timing")
    ap.add_argument("--one-loop", choices=["numpy", "torch"], help=argparse.SUPPRESS)  # callgrind's child
    a = ap.parse_args()
    if a.one_loop:  # one Python loop, its batch count on stdout (run under valgrind by --instructions)
        g, n, *_ = python_run(a.cache, int(a.threads.split(",")[0]), a.batch, a.epochs, a.one_loop)
        print(json.dumps({"batches": n, "graphs": g}))
        return
    if a.epochs < 1:
        ap.error(f"--epochs must be at least 1, got {a.epochs}")
    if a.instructions:
        instruction_table(a, find_program("twincache-loader-bench"))
        return
    layouts = a.layouts.split(",")
    if not set(layouts) <= {"dense", "compact"}:
        ap.error(f"--layouts takes dense and/or compact, got {a.layouts!r}")
    bench = find_program("twincache-loader-bench")
    import numpy
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = "none"
    print(f"cache {a.cache}  batch {a.batch}  epochs {a.epochs}  best of {a.repeat}  "
          f"python {sys.version.split()[0]}  numpy {numpy.__version__}  torch {torch_version}  "
          f"cores {os.cpu_count()}  load avg {os.getloadavg()[0]:.2f}")
    threads_list = [int(t) for t in a.threads.split(",")]
    if "dense" in layouts:
        dense_table(a, bench, threads_list)
    if "compact" in layouts:
        compact_table(a, bench, threads_list)
    print(f"load avg at the end {os.getloadavg()[0]:.2f}")


def dense_table(a, bench, threads_list):
    """Per thread count: the C loop, the numpy loop and the torch loop take
    turns (--repeat rounds), so load that comes and goes hits them alike;
    the best round of each is kept. Both sides run the same consumer: take
    the batch, read its size and its base array (no data), release it."""
    print(f"{'threads':>7} {'C graphs/s':>11} {'numpy g/s':>10} {'ratio':>6} {'torch g/s':>10} "
          f"{'ratio':>6} {'C us/batch':>10} {'consumer CPU us/batch: C':>25} {'numpy':>6} "
          f"{'torch':>6} {'binding us np':>13} {'torch':>6}")
    notes = []
    for threads in threads_list:
        runs = {"C": [], "numpy": [], "torch": []}
        for _ in range(a.repeat):
            c = c_loader_run(bench, a, threads, "dense")
            runs["C"].append((c["graphs_per_s"], c["consumer_cpu_us_per_batch"], c["batches"]))
            for output in ("numpy", "torch"):
                g, n, t, _, _, h = python_run(a.cache, threads, a.batch, a.epochs, output)
                runs[output].append((g / t, 1e6 * h / max(n, 1), n))
        best_rate = {k: max(r[0] for r in v) for k, v in runs.items()}
        # the consumer thread's own CPU per batch, least of the rounds: the
        # C side's next/release with their futex calls, and on the Python
        # side those plus the binding (waiting costs none)
        cpu = {k: min(r[1] for r in v) for k, v in runs.items()}
        c_us = 1e6 * a.batch / best_rate["C"]
        print(f"{threads:>7} {best_rate['C']:>11.0f} {best_rate['numpy']:>10.0f} "
              f"{best_rate['numpy'] / best_rate['C']:>6.2f} {best_rate['torch']:>10.0f} "
              f"{best_rate['torch'] / best_rate['C']:>6.2f} {c_us:>10.1f} {cpu['C']:>25.2f} "
              f"{cpu['numpy']:>6.2f} {cpu['torch']:>6.2f} {cpu['numpy'] - cpu['C']:>13.2f} "
              f"{cpu['torch'] - cpu['C']:>6.2f}")
        pairs = [(rn[0] / rc[0], rt[0] / rc[0])
                 for rc, rn, rt in zip(runs["C"], runs["numpy"], runs["torch"])]
        rounds = " ".join(f"{x:.2f}/{y:.2f}" for x, y in pairs)
        med = [sorted(p[i] for p in pairs)[len(pairs) // 2] for i in (0, 1)]
        # what the binding takes of the two cores: its CPU per batch beyond
        # C's, at the Python loop's batch rate
        share = {k: (cpu[k] - cpu["C"]) * 1e-6 * best_rate[k] / a.batch for k in ("numpy", "torch")}
        notes.append(f"  {threads} thread(s): per-round ratios numpy/torch {rounds} (median "
                     f"{med[0]:.2f}/{med[1]:.2f}); the binding's "
                     f"extra CPU is {100 * share['numpy']:.1f}% (numpy) / "
                     f"{100 * share['torch']:.1f}% (torch) of one core")
    print("\n".join(notes))
    print(f"binding's own work per batch (C calls stubbed, best of 15 x 20000): numpy "
          f"{wrap_cost_us(a.cache, a.batch, 'numpy'):.2f} us, torch "
          f"{wrap_cost_us(a.cache, a.batch, 'torch'):.2f} us")


def callgrind(cmd):
    """Instructions of cmd under callgrind: (the main thread's, every other
    thread's together), and cmd's stdout. The main thread is the consumer
    (and start-up); the others are the loader's decode threads."""
    with tempfile.TemporaryDirectory(prefix="tc-callgrind-") as d:
        r = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                            f"--callgrind-out-file={d}/cg.out", *cmd], capture_output=True, text=True)
        files = sorted(n for n in os.listdir(d) if re.fullmatch(r"cg\.out-\d+", n))
        main_thread = other = 0
        for name in files:  # cg.out-01 is the main thread, -02... the threads it started
            with open(os.path.join(d, name)) as f:
                total = next((int(line.split()[1]) for line in f if line.startswith("summary:")), None)
            if total is None:
                files = []
                break
            if name.endswith("-01"):
                main_thread = total
            else:
                other += total
    if r.returncode != 0 or not files or not main_thread:
        sys.exit(f"python_loader_bench.py: valgrind {' '.join(cmd)} failed (status {r.returncode}):\n"
                 + r.stderr[-2000:])
    return (main_thread, other), r.stdout


def instruction_table(a, bench):
    """Instructions per batch under callgrind: the consumer thread's (the C
    loop's or the Python loop's: next, the field read, release, and the
    binding) and the decode threads', each the difference of a run of
    1 + --epochs epochs and a run of 1 epoch over the difference in batches,
    so start-up cancels."""
    if shutil.which("valgrind") is None:
        sys.exit("python_loader_bench.py: --instructions needs valgrind (apt-get install valgrind)")
    threads = int(a.threads.split(",")[0])
    me = os.path.abspath(__file__)

    def per_batch(kind):
        res = []
        for epochs in (1, 1 + a.epochs):
            if kind == "C":
                cmd = [bench, "--cache", a.cache, "--threads", str(threads), "--batch", str(a.batch),
                       "--epochs", str(epochs), "--repeat", "1", "--layout", "dense", "--json",
                       "--no-baselines"]
            else:
                cmd = [sys.executable, me, "--cache", a.cache, "--threads", str(threads), "--batch",
                       str(a.batch), "--epochs", str(epochs), "--one-loop", kind]
            ins, out = callgrind(cmd)
            j = json.loads(out)
            res.append((ins, j["runs"][0]["batches"] if kind == "C" else j["batches"]))
        ((c1, d1), b1), ((c2, d2), b2) = res
        return (c2 - c1) / (b2 - b1), (d2 - d1) / (b2 - b1), b2 - b1

    print(f"instructions per batch (callgrind): cache {a.cache}  batch {a.batch}  decode threads "
          f"{threads}  {a.epochs} epoch(s) beyond the first")
    rows = {k: per_batch(k) for k in ("C", "numpy", "torch")}
    decode = sum(r[1] for r in rows.values()) / len(rows)  # the same work in every loop
    cc = rows["C"][0]
    print(f"{'loop':>6} {'consumer':>9} {'beyond C':>9} {'decoders':>9} {'ratio C/loop':>12}   "
          f"({rows['C'][2]} batches)")
    for k, (c, d, _) in rows.items():
        print(f"{k:>6} {c:>9.0f} {c - cc:>9.0f} {d:>9.0f} {(decode + cc) / (decode + c):>12.3f}")
    print(f"ratio C/loop = (decoders + C consumer) / (decoders + this consumer), decoders the mean "
          f"of the three runs ({decode:.0f}; they differ with how the threads interleave under "
          f"valgrind): the Python loop's graphs/s over the C loop's when decoding keeps every core "
          f"busy and all code runs at the same instructions per cycle")


def c_loader_run(bench, a, threads, layout):
    out = subprocess.run([bench, "--cache", a.cache, "--threads", str(threads), "--batch",
                          str(a.batch), "--epochs", str(a.epochs), "--repeat", "1",
                          "--layout", layout, "--json"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["runs"][0]
    return r


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


def wrap_cost_us(cache, batch, output, n=20000, repeat=15):
    """The binding's own work per batch, without C: `b = L.next_batch(); x =
    b.base; del b, x` n times with the two C calls (next, release) replaced
    by stubs that hand out the same batch again, so what is timed is the
    Python side alone (checks, hold, Batch, the base view, the release
    path); best of `repeat` by the thread's CPU time, garbage collector on."""
    from twincache import _capi
    L = twincache.Loader(cache, batch_size=batch, threads=1, output=output)
    core = L._core
    rc, addr = core.next()
    real_next, real_release = core.next, _capi.loader_release
    core.next = lambda: (rc, addr)
    _capi.loader_release = lambda handle, a: 0
    try:
        runs = []
        for _ in range(repeat):
            t0 = time.thread_time_ns()
            for _ in range(n):
                b = L.next_batch()
                x = b.base
                del b, x
            runs.append((time.thread_time_ns() - t0) / n)
    finally:
        core.next, _capi.loader_release = real_next, real_release
    core.release([addr, None, False, -1])
    L.close()
    return 1e-3 * min(runs)


if __name__ == "__main__":
    main()
