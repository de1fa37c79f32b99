#!/usr/bin/env python3
"""python_binding_ab.py — what the Python binding costs per batch, two
package trees compared in alternating runs (A/B under the same load).

For each tree: a bare `for b in loader` over --epochs epochs reading
b.base, and the consumer thread's own CPU time per batch
(time.thread_time: the binding plus the C next/release calls; a blocked
next() costs none, so other jobs' load barely moves it), best of --repeat.

usage: python3 bench/python_binding_ab.py --cache DIR --trees A_PY_DIR[,B_PY_DIR]
       [--batch 32] [--threads 2] [--epochs 3] [--repeat 5]
(a tree is a folder holding the twincache package, e.g. python/)"""
import argparse
import json
import os
import subprocess
import sys

RUN = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import twincache
cache, batch, threads, epochs, output = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
L = twincache.Loader(cache, batch_size=batch, epochs=epochs, threads=threads, output=output)
n = 0
t0, h0 = time.perf_counter(), time.thread_time()
for b in L.stream():
    x = b.base
    n += 1
    del x, b
t, h = time.perf_counter() - t0, time.thread_time() - h0
L.close()
print(json.dumps({"batches": n, "wall_us": 1e6 * t / n, "cpu_us": 1e6 * h / n}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--trees", required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    trees = a.trees.split(",")
    best = {}
    for _ in range(a.repeat):
        for tree in trees:
            for output in ("numpy", "torch"):
                out = subprocess.run([sys.executable, "-c", RUN, tree, a.cache, str(a.batch),
                                      str(a.threads), str(a.epochs), output], check=True,
                                     capture_output=True, text=True).stdout
                r = json.loads(out)
                k = (tree, output)
                best[k] = {m: min(best.get(k, {}).get(m, 1e18), r[m]) for m in ("wall_us", "cpu_us")}
    print(f"batch {a.batch}, {a.threads} decode threads, {a.epochs} epochs, best of {a.repeat}, "
          f"python {sys.version.split()[0]}, load avg {os.getloadavg()[0]:.2f}")
    print(f"{'tree':<40} {'output':>6} {'consumer CPU us/batch':>21} {'wall us/batch':>13}")
    for (tree, output), r in best.items():
        print(f"{tree:<40} {output:>6} {r['cpu_us']:>21.1f} {r['wall_us']:>13.1f}")


if __name__ == "__main__":
    main()
