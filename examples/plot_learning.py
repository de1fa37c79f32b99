#!/usr/bin/env python3
"""plot_learning.py — the learning curve of train_avici.py runs as a PNG:
held-out AUPRC (and the --val-cache AUPRC when present) against graphs
seen, read from the runs' printed logs, with the edge base rate as the
floor and, optionally, reference points of other models.

usage: python3 examples/plot_learning.py --out curve.png LOG [LOG ...]
       [--ref "label:graphs=auprc,graphs=auprc"]...   (needs matplotlib)"""
import argparse
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EVAL = re.compile(r"eval step (\d+)\s+graphs seen (\d+)\s+(held-out|val-cache) AUPRC ([0-9.]+)"
                  r".*?edge base rate ([0-9.]+)")


def read(path):
    held, val, base = [], [], None
    with open(path) as f:
        for line in f:
            m = EVAL.search(line)
            if not m:
                continue
            g, ap_, kind = int(m.group(2)), float(m.group(4)), m.group(3)
            (held if kind == "held-out" else val).append((g, ap_))
            if kind == "held-out":
                base = float(m.group(5))
    return held, val, base


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ref", action="append", default=[],
                    help='"label:graphs=auprc,graphs=auprc" reference points')
    ap.add_argument("--title", default="held-out AUPRC, mlp mechanism, 10-20 nodes, 3 targets")
    a = ap.parse_args()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    base = None
    for path in a.logs:
        held, val, b = read(path)
        base = b if b is not None else base
        if held:
            ax.plot(*zip(*held), marker="o", label=f"{path}: held-out (ER)")
        if val:
            ax.plot(*zip(*val), marker="s", linestyle="--", label=f"{path}: --val-cache (OOD)")
    for r in a.ref:
        label, pts = r.split(":", 1)
        xy = [tuple(float(v) for v in p.split("=")) for p in pts.split(",")]
        ax.plot(*zip(*xy), marker="^", linestyle=":", label=label)
    if base is not None:
        ax.axhline(base, color="grey", linewidth=0.8, label=f"edge base rate {base:.3f}")
    ax.axhline(0.80, color="red", linewidth=0.8, linestyle="--", label="target 0.80")
    ax.set_xlabel("graphs seen")
    ax.set_ylabel("AUPRC")
    ax.set_ylim(0, 1)
    ax.set_title(a.title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
