#!/usr/bin/env python3
"""train_avici.py — an AVICI-style structure-learning model trained in PyTorch,
fed either by twincache (--data twincache) or by the pipeline it replaces: a
Python IterableDataset generating graphs on the fly with numpy, batched by a
DataLoader(num_workers=W) (--data onthefly).

Model (small: 2 layers, d=64): every value x[r, j] (row r of a world, node j)
with an "intervened here" flag is embedded to d; layers alternate attention
over the rows (samples of all worlds) and over the nodes; rows are max-pooled;
edge logit(i -> j) = <u_i, v_j> of two projections of the node embeddings.
Loss: BCE over real node pairs (i != j). AdamW; bf16 autocast on the GPU.

  /usr/bin/python3 examples/train_avici.py --data twincache --cache CACHE --steps 200
  /usr/bin/python3 examples/train_avici.py --data onthefly --workers 2 --steps 200
Prints graphs/s of the whole loop and, with --eval-graphs, the held-out AUPRC
(the last graphs of the cache, never trained on).
"""
import argparse
from contextlib import nullcontext
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


# ---- the model ------------------------------------------------------------------------
class AxisBlock(nn.Module):
    """Pre-norm self-attention over one axis of (G, R, N, d), then an MLP."""

    def __init__(self, d, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, h, pad):  # h (B, L, d), pad (B, L) True = ignore
        y = self.n1(h)
        h = h + self.attn(y, y, y, key_padding_mask=pad, need_weights=False)[0]
        return h + self.mlp(self.n2(h))


class Avici(nn.Module):
    def __init__(self, d=64, layers=2, heads=4):
        super().__init__()
        self.embed = nn.Linear(2, d)
        self.row_blocks = nn.ModuleList(AxisBlock(d, heads) for _ in range(layers))
        self.node_blocks = nn.ModuleList(AxisBlock(d, heads) for _ in range(layers))
        self.u, self.v = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x, flag, node_mask, row_mask):
        """x, flag (G,R,N); node_mask (G,N) bool; row_mask (G,R) bool -> logits (G,N,N)."""
        G, R, N = x.shape
        h = self.embed(torch.stack([x, flag], dim=-1))  # (G,R,N,d)
        d = h.shape[-1]
        row_pad = ~row_mask[:, None, :].expand(G, N, R).reshape(G * N, R)
        node_pad = ~node_mask[:, None, :].expand(G, R, N).reshape(G * R, N)
        node_pad = node_pad & row_mask.reshape(G * R, 1)  # padding rows: attend to all nodes
        for rb, nb in zip(self.row_blocks, self.node_blocks):
            h = rb(h.transpose(1, 2).reshape(G * N, R, d), row_pad).reshape(G, N, R, d).transpose(1, 2)
            h = nb(h.reshape(G * R, N, d), node_pad).reshape(G, R, N, d)
        h = h.masked_fill(~row_mask[:, :, None, None], float("-inf")).amax(dim=1)  # (G,N,d)
        return torch.einsum("gid,gjd->gij", self.u(h), self.v(h)) / d ** 0.5


def model_inputs(base, inter, target, int_mask, node_mask, rows):
    """Batch fields -> model inputs: `rows` rows of the base world and of each
    intervened world. base (G,S,N), inter (G,K,S,N), target (G,K,N)."""
    G, S, N = base.shape
    K = inter.shape[1]
    b = base[:, :rows].float()
    i = inter[:, :, :rows].float().reshape(G, K * rows, N)
    x = torch.cat([b, i], dim=1)  # (G, R=(1+K)*rows, N)
    flag = torch.cat([torch.zeros_like(b), target.float()[:, :, None, :].expand(G, K, rows, N)
                      .reshape(G, K * rows, N)], dim=1)
    row_mask = torch.cat([torch.ones(G, rows, dtype=torch.bool, device=base.device),
                          int_mask.bool()[:, :, None].expand(G, K, rows).reshape(G, K * rows)], dim=1)
    return x, flag, node_mask.bool(), row_mask


def pair_mask(node_mask):
    m = node_mask[:, :, None] & node_mask[:, None, :]
    return m & ~torch.eye(m.shape[1], dtype=torch.bool, device=m.device)[None]


def auprc(scores, labels):
    """Average precision of scores against 0/1 labels (numpy, 1-D)."""
    order = np.argsort(-scores, kind="stable")
    y = labels[order]
    tp = np.cumsum(y)
    precision = tp / np.arange(1, len(y) + 1)
    return float((precision * y).sum() / max(y.sum(), 1))


# ---- the pipeline twincache replaces: on-the-fly numpy generation -------------------------
class OnTheFly(torch.utils.data.IterableDataset):
    """Random ER DAGs (nodes lo..hi, p), linear-Gaussian SCM, `samples` rows,
    one do() per node whose twin world reuses the base world's noise; one
    padded graph per item, as such pipelines do."""

    def __init__(self, nodes=(5, 10), p=0.3, samples=64, seed=0):
        self.lo, self.hi, self.p, self.S, self.seed = nodes[0], nodes[1], p, samples, seed

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng([self.seed, info.id if info else 0])
        N, S = self.hi, self.S
        while True:
            n = int(rng.integers(self.lo, self.hi + 1))
            perm = rng.permutation(n)
            up = np.triu(rng.random((n, n)) < self.p, 1)
            adj = np.zeros((n, n), np.uint8)
            adj[np.ix_(perm, perm)] = up
            w = adj * rng.uniform(0.5, 2.0, (n, n)) * rng.choice([-1, 1], (n, n))
            scale = rng.uniform(0.5, 1.5, n)
            e = rng.standard_normal((S, n)) * scale
            order = perm  # topological: edges go from earlier to later in perm

            def world(do_node=None, do_val=0.0):
                x = np.zeros((S, n))
                for j in order:
                    x[:, j] = do_val if j == do_node else x @ w[:, j] + e[:, j]
                return x

            base = np.zeros((S, N), np.float32)
            base[:, :n] = world()
            inter = np.zeros((N, S, N), np.float32)
            target = np.zeros((N, N), np.uint8)
            for k in range(n):
                v = rng.uniform(1, 3) * rng.choice([-1, 1])
                inter[k, :, :n] = world(k, v)
                target[k, k] = 1
            pad_adj = np.zeros((N, N), np.uint8)
            pad_adj[:n, :n] = adj
            yield {"base": base, "inter": inter, "target": target,
                   "int_mask": (np.arange(N) < n).astype(np.uint8),
                   "node_mask": (np.arange(N) < n).astype(np.uint8), "adj": pad_adj}


# ---- the loop ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=["twincache", "onthefly"], default="twincache")
    ap.add_argument("--cache")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rows", type=int, default=16, help="rows per world given to the model")
    ap.add_argument("--threads", type=int, default=1, help="twincache decode threads")
    ap.add_argument("--workers", type=int, default=2, help="DataLoader workers (onthefly)")
    ap.add_argument("--eval-graphs", type=int, default=0, help="hold out the cache's last graphs")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-only", action="store_true",
                    help="no model: how fast the data source alone delivers batches (on the device)")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    model = Avici().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)

    import twincache
    if a.data == "twincache":
        if not a.cache:
            ap.error("--data twincache needs --cache")
        n = len(twincache.Cache(a.cache))
        train_end = n - a.eval_graphs
        loader = twincache.Loader(a.cache, batch_size=a.batch, epochs=0, seed=a.seed,
                                  threads=a.threads, index_range=(0, train_end),
                                  device="cuda" if cuda else None)
        batches = loader.stream()
    else:
        dl = torch.utils.data.DataLoader(OnTheFly(seed=a.seed), batch_size=a.batch,
                                         num_workers=a.workers, pin_memory=cuda,
                                         persistent_workers=a.workers > 0)
        batches = iter(dl)

    def step(b):
        get = (lambda k: b[k].to(dev, non_blocking=True)) if a.data == "onthefly" else (lambda k: b[k])
        if a.data_only:
            return get("base").sum() + get("inter").sum()
        x, flag, nm, rm = model_inputs(get("base"), get("inter"), get("target"), get("int_mask"),
                                       get("node_mask"), a.rows)
        amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if cuda else nullcontext()
        with amp:
            logits = model(x, flag, nm, rm)
        pm = pair_mask(nm)
        loss = F.binary_cross_entropy_with_logits(logits.float()[pm], get("adj").float()[pm])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):  # warm-up (workers start, allocator, kernels)
        step(next(batches))
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for s in range(a.steps):
        loss = step(next(batches))
        if (s + 1) % max(a.steps // 5, 1) == 0:
            print(f"step {s + 1:5d}  loss {loss.item():.4f}", flush=True)
    if cuda:
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"{a.data}: {a.steps * a.batch / dt:.0f} graphs/s over {a.steps} steps of {a.batch} "
          f"({'GPU' if cuda else 'CPU'}, threads={a.threads} workers={a.workers})")

    if a.data == "twincache" and a.eval_graphs:
        model.eval()
        scores, labels = [], []
        with twincache.Loader(a.cache, batch_size=a.batch, shuffle=False, threads=a.threads,
                              index_range=(train_end, n), output="torch") as ev, torch.no_grad():
            for b in ev:
                x, flag, nm, rm = model_inputs(*(b[k].to(dev) for k in
                                                 ("base", "inter", "target", "int_mask", "node_mask")),
                                               a.rows)
                pm = pair_mask(nm)[:b.n_graphs]
                lg = model(x, flag, nm, rm)[:b.n_graphs]
                scores.append(lg.float()[pm].cpu().numpy())
                labels.append(b["adj"].to(dev)[:b.n_graphs][pm].cpu().numpy())
        print(f"held-out AUPRC {auprc(np.concatenate(scores), np.concatenate(labels)):.3f} "
              f"on {n - train_end} graphs")


if __name__ == "__main__":
    main()
