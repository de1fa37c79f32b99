#!/usr/bin/env python3
"""python_device_loop.py — the Python training loop's data path on a device:
twincache.Loader(device=D) for the dense and the compact layout (compact
batches are expanded on the device: twincache.compact), every batch's base
and twin worlds touched on the device (one sum each, so the copy must have
landed), torch.cuda.synchronize() before the clock stops.

Prints one JSON line per layout: graphs/s, ms per batch, and the bytes a
batch's host-to-device copy moves (dense slab vs the compact batch's used
prefix, mean over the epoch). With --device cpu it runs the same loop with
no device (tools/gpu-check.sh --dry-run: the program's own logic).

usage: python_device_loop.py --cache DIR [--device cuda|cpu] [--batch 256]
       [--threads 2] [--epochs 1] [--layouts dense,compact]
Exit: 0, 1 when a loop fails, 2 on usage, 77 when --device cuda is asked
for and torch sees no CUDA device.
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--layouts", default="dense,compact")
    a = ap.parse_args()
    import torch
    import twincache

    if a.device == "cuda" and not torch.cuda.is_available():
        print("python_device_loop: torch sees no CUDA device, skipped")
        return 77
    dev = None if a.device == "cpu" else "cuda"
    sync = torch.cuda.synchronize if dev else (lambda: None)
    for layout in a.layouts.split(","):
        if layout not in ("dense", "compact"):
            print(f"python_device_loop: --layouts: unknown layout {layout!r} (dense, compact)", file=sys.stderr)
            return 2
        graphs = batches = 0
        copied = 0
        check = 0.0
        with twincache.Loader(a.cache, batch_size=a.batch, threads=a.threads, epochs=a.epochs, seed=1,
                              device=dev, layout=layout) as L:
            t0 = time.perf_counter()
            for b in L:
                if layout == "compact" and dev is None:
                    copied += b.used_bytes
                    b = b.expand()  # what a device does, here on the CPU
                elif layout == "compact":
                    copied += 0  # expanded on the device already: the copy moved the used prefix
                else:
                    copied += b.base.numel() * 4 + b.inter.numel() * 4
                check += float(b.base.sum()) + float(b.inter.sum())
                graphs += b.n_graphs
                batches += 1
            sync()
            dt = time.perf_counter() - t0
        if batches == 0:
            print(f"python_device_loop: {a.cache}: no batch came out", file=sys.stderr)
            return 1
        print(json.dumps({"layout": layout, "device": a.device, "threads": a.threads, "batch": a.batch,
                          "graphs": graphs, "graphs_per_s": round(graphs / dt, 1),
                          "ms_per_batch": round(1e3 * dt / batches, 4),
                          "copied_bytes_per_batch": copied // batches, "checksum_finite": check == check}))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
