#!/usr/bin/env python3
"""train_avici.py — an AVICI-style structure-learning model trained in PyTorch,
fed either by twincache (--data twincache) or by the pipeline it replaces: a
Python IterableDataset generating graphs on the fly with numpy, batched by a
DataLoader(num_workers=W) (--data onthefly).

Input (per graph): the base world and its K twin worlds (same noise, one do()
each): `--rows` sample rows of the base world, the first `--twin-rows` of
those same samples in each twin world (aligned row by row). Every value x[w, r, j] (world w,
row r, node j) becomes a token of 4 numbers: the value standardised per node
(mean/std of node j over the base world's samples), "intervened here", the
twin-minus-base difference of the same row in the same units (non-zero
exactly on the intervened node's descendants — what twin worlds are for), and
"this row is from a twin world". Padded nodes, worlds and graphs are masked.

Model (AVICI's shape): the tokens are embedded to d; `--layers` layers
alternate self-attention over the rows (all worlds' samples of one node) and
over the nodes (one row); rows are max-pooled; edge logit(i -> j) =
<u_i, v_j>/sqrt(d) + b. With --stats on (the default) an edge head reads,
beside that score, summary statistics of all S samples of every world
(correlations, partial correlations, kernel dependence, additive nonlinear
fits, and what the twin deltas say: who moved when whom was intervened, and
which nodes explain a moved node's noise-free change): an MLP per ordered pair and
--edge-layers axial attention layers over the pairs; --layers 0 drops the
sample encoder (the model in twin_model.py; examples/README.md, run D). Loss:
BCE over real node pairs (i != j). AdamW with warm-up and cosine decay,
gradient clipping; bf16 autocast on the GPU (and on the CPU with --amp bf16).

  /usr/bin/python3 examples/train_avici.py --data twincache --cache CACHE --steps 2000 \\
      --eval-graphs 1000 --checkpoint run.pt          # --resume continues run.pt
  /usr/bin/python3 examples/train_avici.py --data onthefly --workers 2 --steps 200
  torchrun --nproc_per_node 2 examples/train_avici.py --data twincache --cache CACHE
A checkpoint resumes at another process count with the same global batch:
written by W processes at --batch B, resume at W' processes with --batch B*W/W'
(the Loader's state continues the global graph order where it stopped).
Prints graphs/s of the training loop and, with --eval-graphs, the held-out
AUPRC (the last graphs of the cache, never trained on) against the edge base
rate of those graphs.
"""
import argparse
from contextlib import nullcontext
import gc
import math
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

try:  # the installed package (pip install .); else this checkout's source tree
    import twincache  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # twin_model beside this file
from twin_model import IN_FEATURES, PAIR_NAMES, PAIR_STATS, TwinModel, twin_stats  # noqa: E402  (this folder)


# ---- the model's inputs ---------------------------------------------------------------
def model_inputs(b, rows, dev, row_idx=None, twin_rows=None, feats=True, stats=True, drop=(),
                 pair_rows=0):
    """Batch fields -> (inp, graph_mask (G)); inp: node_mask (G,N) and, with
    feats, the encoder's tokens feats (G,R,N,4) and row_mask (G,R),
    R = rows + K*twin_rows; with stats, twin_stats' pair (G,N,N,P) and node
    (G,N,Q) over all S samples of every world. b: a mapping with base (G,S,N), inter (G,K,S,N),
    target (G,K,N), int_mask (G,K), node_mask (G,N), valid (G) tensors.
    row_idx: which `rows` of the S samples the base world gives (None = the
    first `rows`); each twin world gives the first `twin_rows` of those
    (None = all), the same samples: a twin row is aligned with its base row,
    and away from the target's descendants it equals it."""
    base = b["base"].to(dev, non_blocking=True).float()
    inter = b["inter"].to(dev, non_blocking=True).float()
    target = b["target"].to(dev, non_blocking=True)
    node_mask = b["node_mask"].to(dev, non_blocking=True).bool()
    int_mask = b["int_mask"].to(dev, non_blocking=True).bool()
    graph_mask = b["valid"].to(dev, non_blocking=True).bool()
    base, inter, target = held_rows(b, base, inter, target, node_mask, int_mask, graph_mask)
    if inter.shape[1] == 0:  # observed data without regimes (K = 0): one empty world slot, as
        # generated observational caches have, so the statistics' shapes hold
        inter = base.new_zeros(base.shape[0], 1, *base.shape[1:])
        target = target.new_zeros(base.shape[0], 1, base.shape[2])
        int_mask = int_mask.new_zeros(base.shape[0], 1)
    G, S, N = base.shape
    K = inter.shape[1]
    inp = {"node_mask": node_mask}
    if stats:
        inp["pair"], inp["node"] = twin_stats(base, inter, target, node_mask, int_mask, drop=drop)
    # per-node standardisation from the base world's samples (all S of them)
    mean = base.mean(dim=1, keepdim=True)  # (G,1,N)
    std = base.std(dim=1, keepdim=True)
    std = torch.where(std > 1e-6, std, torch.ones_like(std))
    if pair_rows:  # the pair-row encoder's rows: the same samples in every world
        pr_idx = row_idx[:pair_rows] if row_idx is not None else torch.arange(min(pair_rows, S), device=dev)
        zb = ((base[:, pr_idx] - mean) / std).clamp(-10, 10) * node_mask[:, None]  # (G,r,N)
        dz = ((inter[:, :, pr_idx] - base[:, None, pr_idx]) / std[:, None]).clamp(-10, 10) \
            * node_mask[:, None, None]  # (G,K,r,N)
        r = zb.shape[1]
        zw = zb[:, None].expand(G, K + 1, r, N)
        dw = torch.cat([torch.zeros_like(zb)[:, None], dz], dim=1)
        tw = torch.cat([torch.zeros_like(target[:, :1]), target], dim=1).float()[:, :, None, :].expand(G, K + 1, r, N)
        inp["rows"] = torch.stack([zw, dw, tw], dim=-1)  # (G,K+1,r,N,3)
        inp["row_w"] = torch.cat([torch.ones_like(int_mask[:, :1]), int_mask], dim=1).float()  # (G,K+1)
    if not feats:
        return inp, graph_mask
    if row_idx is None:
        row_idx = torch.arange(min(rows, S), device=dev)
    row_idx = row_idx[:rows]
    tw_idx = row_idx[:twin_rows] if twin_rows else row_idx
    zb = ((base[:, row_idx] - mean) / std).clamp(-10, 10)  # (G,rows,N)
    zi = ((inter[:, :, tw_idx] - mean[:, None]) / std[:, None]).clamp(-10, 10)  # (G,K,r,N)
    zbt = zb[:, :tw_idx.shape[0]]  # the base rows the twin rows are twins of
    r = zi.shape[2]
    flag = target.float()[:, :, None, :].expand(G, K, r, N)
    twin = torch.ones_like(zi)
    world = torch.stack([zi, flag, zi - zbt[:, None], twin], dim=-1)  # (G,K,r,N,4)
    basef = torch.stack([zb, torch.zeros_like(zb), torch.zeros_like(zb), torch.zeros_like(zb)], dim=-1)
    feats = torch.cat([basef, world.reshape(G, K * r, N, IN_FEATURES)], dim=1)  # (G,R,N,4)
    feats = feats * node_mask[:, None, :, None]  # padded nodes: zeros
    row_mask = torch.cat([torch.ones(G, zb.shape[1], dtype=torch.bool, device=dev),
                          int_mask[:, :, None].expand(G, K, r).reshape(G, K * r)], dim=1)
    inp["feats"], inp["row_mask"] = feats, row_mask
    return inp, graph_mask


def held_rows(b, base, inter, target, node_mask, int_mask, graph_mask):
    """The rows the worlds hold and the targets they name, as the model reads
    them. Worlds that hold fewer rows than S (rows per world, FORMAT.md 3.10:
    b["rows"] (G,K+1); an AVICI cell's 600 observational and 200
    interventional rows) are all cut to the fewest rows a real world of the
    batch holds, so no padded row enters a statistic; a world with no target
    named (withheld, int_mask set) gets the real nodes constant over its held
    rows as targets, which reads a do()'s targets back exactly (the C
    trainer's rule, train/MODEL.md "Any shape, withheld targets")."""
    S = base.shape[1]
    if "rows" in b.keys():
        held = b["rows"].to(base.device).long()  # (G,K+1)
        real = torch.cat([graph_mask[:, None], int_mask & graph_mask[:, None]], dim=1)
        if bool(real.any()):
            r = int(held[real].min())
            if 0 < r < S:
                base, inter, S = base[:, :r], inter[:, :, :r], r
    unnamed = int_mask & (target.sum(dim=-1) == 0)  # (G,K)
    if S >= 2 and bool(unnamed.any()):
        const = (inter == inter[:, :, :1]).all(dim=2) & node_mask[:, None]  # (G,K,N)
        target = torch.where(unnamed[..., None], const.to(target.dtype), target)
    return base, inter, target


def pair_mask(node_mask, graph_mask):
    """(G,N,N) bool: real ordered pairs i != j of real graphs."""
    m = node_mask[:, :, None] & node_mask[:, None, :] & graph_mask[:, None, None]
    return m & ~torch.eye(m.shape[1], dtype=torch.bool, device=m.device)[None]


def auprc(scores, labels):
    """Average precision of scores against 0/1 labels (numpy, 1-D)."""
    order = np.argsort(-scores, kind="stable")
    y = labels[order].astype(np.float64)
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
                   "node_mask": (np.arange(N) < n).astype(np.uint8), "adj": pad_adj,
                   "valid": np.uint8(1)}


# ---- evaluation -------------------------------------------------------------------------
@torch.no_grad()
def evaluate(model, cache, index_range, batch, rows, twin_rows, dev, amp, threads, drop=()):
    """(AUPRC, edge base rate, graphs) over the graphs [begin, end) of the cache."""
    import twincache
    was = model.training
    model.eval()
    scores, labels = [], []
    with twincache.Loader(cache, batch_size=batch, shuffle=False, threads=threads,
                          index_range=index_range, output="torch", rank=0, world_size=1) as ev:
        for b in ev:
            inp, gm = model_inputs(b, rows, dev, twin_rows=twin_rows, feats=model.layers > 0,
                                   stats=model.stats, drop=drop, pair_rows=model.pair_rows)
            with amp():
                lg = model(inp)
            pm = pair_mask(inp["node_mask"], gm)
            scores.append(lg.float()[pm].cpu().numpy())
            labels.append(b["adj"].to(dev)[pm].cpu().numpy())
    model.train(was)
    s, y = np.concatenate(scores), np.concatenate(labels)
    return auprc(s, y), float(y.mean()), index_range[1] - index_range[0]


# ---- the loop ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--data", choices=["twincache", "onthefly"], default="twincache")
    ap.add_argument("--cache")
    ap.add_argument("--mix", metavar="DIR=W,...",
                    help="instead of --cache: train on a Loader mixture of 2..16 whole caches with "
                         "these weights (W > 0, default 1), e.g. twin and independent worlds mixed; "
                         "evaluates on --val-cache only (with --eval-graphs)")
    ap.add_argument("--batch", type=int, default=64, help="graphs per step (per process)")
    ap.add_argument("--steps", type=int, default=100,
                    help="total optimiser steps of the run (the LR schedule's length)")
    ap.add_argument("--minutes", type=float, default=0,
                    help="stop this invocation after this much training time, checkpoint, "
                         "exit (0 = run to --steps); --resume continues")
    ap.add_argument("--rows", type=int, default=16, help="sample rows of the base world given to the model")
    ap.add_argument("--twin-rows", type=int, default=0,
                    help="rows of each twin world (the first of the base rows' samples; 0 = --rows)")
    ap.add_argument("--d", "--width", dest="d", type=int, default=64,
                    help="model width (--width under torchrun, whose parser takes --d for its own)")
    ap.add_argument("--layers", type=int, default=2,
                    help="encoder: alternating row/node attention layers over the samples (0 = none)")
    ap.add_argument("--stats", choices=["on", "off"], default="on",
                    help="the twin-world statistics as edge inputs (off: the encoder's u.v score only)")
    ap.add_argument("--drop-stats", default="",
                    help="comma-separated statistics to zero (ablations): " + ",".join(PAIR_NAMES))
    ap.add_argument("--pair-rows", type=int, default=0,
                    help="a learned dependence measure: an MLP over each pair's values in this many "
                         "sample rows of every world, mean-pooled (0 = off; with --stats on)")
    ap.add_argument("--pair-width", type=int, default=16, help="the pair-row MLP's width")
    ap.add_argument("--edge-layers", type=int, default=1,
                    help="axial attention layers over the pairs (row i, column j), with --stats on")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1, help="twincache decode threads")
    ap.add_argument("--torch-threads", type=int, default=0,
                    help="torch intra-op threads (0 = CPU cores / processes)")
    ap.add_argument("--workers", type=int, default=2, help="DataLoader workers (onthefly)")
    ap.add_argument("--eval-graphs", type=int, default=0, help="hold out the cache's last graphs")
    ap.add_argument("--eval-every", type=int, default=0, help="evaluate every E steps (0 = at the end)")
    ap.add_argument("--val-cache", help="also evaluate on the last --eval-graphs graphs of this "
                    "cache (out of distribution: e.g. BA or WS graphs of the same sizes)")
    ap.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    ap.add_argument("--warmup", type=int, default=100, help="linear warm-up steps")
    ap.add_argument("--weight-decay", type=float, default=1e-2)
    ap.add_argument("--amp", choices=["auto", "bf16", "off"], default="auto",
                    help="bf16 autocast: auto = on the GPU only; bf16 = also on the CPU "
                         "(fast where the CPU has AVX512-BF16 and torch uses oneDNN)")
    ap.add_argument("--checkpoint", help="save model, optimiser and loader state here "
                                         "(at every evaluation and at the end)")
    ap.add_argument("--resume", action="store_true",
                    help="continue from --checkpoint if it exists, at any process count with the "
                         "same global batch (--batch x processes)")
    ap.add_argument("--stop-after", type=int, default=0, metavar="K",
                    help="stop this invocation after K steps, checkpoint, exit (0 = run to --steps); "
                         "--resume continues")
    ap.add_argument("--log-every", type=int, default=0, help="print every L steps (0 = steps/10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", choices=["stored", "fresh"], default="stored",
                    help="twincache: train on the stored worlds, or on fresh worlds of the stored "
                         "SCMs every epoch (evaluation always reads the stored held-out worlds)")
    ap.add_argument("--buckets", action="store_true",
                    help="twincache: size buckets: steps of graphs of similar node counts, each batch cut "
                         "to its own largest N (attention costs N^2 per graph)")
    ap.add_argument("--fresh-rows", type=int, default=0,
                    help="rows per fresh world (0 = the cache's stored S)")
    ap.add_argument("--loss-log", metavar="FILE",
                    help="CSV of every step (rank 0): step, the global batch's loss (all ranks' "
                         "pairs), its graph ids sorted — what one process at --batch x ranks logs")
    ap.add_argument("--data-only", action="store_true",
                    help="no model: how fast the data source alone delivers batches (on the device)")
    a = ap.parse_args()
    mix = None
    if a.mix:
        if a.cache:
            ap.error("--mix: not with --cache (the mixture's caches are its sources)")
        mix = []
        for item in a.mix.split(","):
            path, eq, w = item.rpartition("=") if "=" in item else (item, "", "1")
            try:
                w = float(w)
            except ValueError:
                w = -1.0
            if not path or not w > 0:
                ap.error(f"--mix: {item!r}: expected DIR=W with W > 0 (or DIR)")
            mix.append((path, w))
        if not 2 <= len(mix) <= 16:
            ap.error(f"--mix: {len(mix)} cache(s); a mixture has 2..16 (one cache: --cache DIR)")
        if a.buckets:
            ap.error("--mix: not with --buckets (a mixture fixes each source's slots)")
        a.cache = mix[0][0]  # the first source names the run (its stored S for --fresh-rows)
    if a.data == "twincache" and not a.cache:
        ap.error("--data twincache needs --cache")
    if a.resume and not a.checkpoint:
        ap.error("--resume needs --checkpoint")
    if a.stop_after < 0:
        ap.error(f"--stop-after: must be >= 0, got {a.stop_after}")

    # -- processes: twincache.launch_ranks() (torch.distributed, torchrun's RANK/WORLD_SIZE/
    # LOCAL_RANK, Slurm's SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID) => data parallel over
    # gloo (CPU) or NCCL (GPU: cuda:LOCAL_RANK); the rendezvous is env:// (MASTER_ADDR,
    # MASTER_PORT: torchrun sets them, a Slurm script exports them)
    import twincache
    cuda = torch.cuda.is_available()
    rank, world, local, launcher = twincache.launch_ranks()
    distributed = world > 1
    if distributed and not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo", init_method="env://", rank=rank,
                                world_size=world)
    main_proc = rank == 0
    if cuda:
        torch.cuda.set_device(local)
    dev = torch.device(f"cuda:{local}" if cuda else "cpu")
    if not cuda:
        torch.set_num_threads(a.torch_threads or max(1, (os.cpu_count() or 1) // world))
    use_bf16 = a.amp == "bf16" or (a.amp == "auto" and cuda)

    def amp():
        return torch.autocast(device_type=dev.type, dtype=torch.bfloat16) if use_bf16 else nullcontext()

    torch.manual_seed(a.seed)
    drop = tuple(x for x in a.drop_stats.split(",") if x)
    for x in drop:
        if x not in PAIR_NAMES:
            ap.error(f"--drop-stats: unknown statistic '{x}' (one of {','.join(PAIR_NAMES)})")
    if a.layers <= 0 and a.stats == "off":
        ap.error("--layers 0 needs --stats on (the model needs an input)")
    if a.pair_rows and a.stats == "off":
        ap.error("--pair-rows needs --stats on (it feeds the statistics' edge head)")
    net = TwinModel(a.d, a.layers, a.heads, a.stats == "on", a.edge_layers,
                    a.pair_rows, a.pair_width).to(dev)
    model = nn.parallel.DistributedDataParallel(net, device_ids=[local] if cuda else None) \
        if distributed else net
    decay = [p for n, p in net.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in net.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=a.lr)

    def lr_at(step):
        if step < a.warmup:
            return a.lr * (step + 1) / a.warmup
        t = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup))
        return a.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    loader = None
    if a.data == "twincache":
        n = len(twincache.Cache(a.cache))
        train_end = n - a.eval_graphs if not mix else n  # a mixture reads its caches whole
        if train_end <= 0:
            ap.error(f"--eval-graphs {a.eval_graphs} leaves no training graphs (cache has {n})")
        # the Loader takes rank/world size from torch.distributed by itself
        fresh = {}
        if a.samples == "fresh":
            fresh = dict(samples="fresh", rows=a.fresh_rows or twincache.Cache(a.cache).dims["samples"])
        if mix:
            loader = twincache.Loader([p for p, _ in mix], weights=[w for _, w in mix], batch_size=a.batch,
                                      epochs=0, seed=a.seed, threads=a.threads,
                                      device=f"cuda:{local}" if cuda else None, **fresh)
        else:
            loader = twincache.Loader(a.cache, batch_size=a.batch, epochs=0, seed=a.seed,
                                      threads=a.threads, index_range=(0, train_end),
                                      device=f"cuda:{local}" if cuda else None, buckets=a.buckets, **fresh)

    step, graphs, train_s = 0, 0, 0.0
    gen_state = None
    if a.resume and os.path.exists(a.checkpoint):
        ck = torch.load(a.checkpoint, map_location=dev)
        try:
            net.load_state_dict(ck["model"])
        except RuntimeError as e:  # another model shape: other flags, or an older statistics set
            was = {k: ck.get("args", {}).get(k) for k in ("d", "layers", "heads", "edge_layers", "stats")}
            sys.exit(f"train_avici.py: --checkpoint {a.checkpoint} holds another model than these flags "
                     f"build ({PAIR_STATS} pair statistics here; it was saved with {was}): "
                     f"{str(e).splitlines()[0]} ...; start a new checkpoint or resume with its flags")
        opt.load_state_dict(ck["opt"])
        step, graphs, train_s = ck["step"], ck["graphs"], ck["train_s"]
        if loader is not None:
            # the global batch fixes the steps: per-process --batch = global / processes
            was = len(ck["loader"])
            glob = ck["args"]["batch"] * was
            if glob % world:
                sys.exit(f"train_avici.py: --checkpoint {a.checkpoint} has a global batch of {glob} "
                         f"graphs (--batch {ck['args']['batch']} x {was} processes), which does not "
                         f"divide over {world} processes; resume with a process count that divides it")
            if a.batch * world != glob:
                sys.exit(f"train_avici.py: --batch: --checkpoint {a.checkpoint} has a global batch of "
                         f"{glob} graphs (--batch {ck['args']['batch']} x {was} processes), this run "
                         f"has {a.batch * world} (--batch {a.batch} x {world}); use --batch {glob // world}")
            # every rank's state is the same point of the global order: at another
            # process count the Loader continues it with this rank and batch size
            loader.load_state_dict(ck["loader"][rank if was == world else 0])
        if "rows_rng" in ck:  # the rows drawn each step continue as uninterrupted
            gen_state = ck["rows_rng"]
        if main_proc:
            print(f"resumed from {a.checkpoint}: step {step}, {graphs} graphs seen, "
                  f"{train_s:.0f} s trained", flush=True)

    if loader is not None:
        batches = loader.stream()
    else:
        dl = torch.utils.data.DataLoader(OnTheFly(seed=a.seed * 1000 + rank + step), batch_size=a.batch,
                                         num_workers=a.workers, pin_memory=cuda,
                                         persistent_workers=a.workers > 0)
        batches = iter(dl)

    def save():
        states = [loader.state_dict()] if loader is not None else [None]
        if distributed:
            every = [None] * world
            dist.all_gather_object(every, states[0])
            states = every
        if main_proc and a.checkpoint:
            tmp = a.checkpoint + ".tmp"
            torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "loader": states,
                        "step": step, "graphs": graphs, "train_s": train_s, "args": vars(a),
                        "rows_rng": gen.get_state()}, tmp)
            os.replace(tmp, a.checkpoint)

    def report_eval():
        if main_proc and a.data == "twincache" and a.eval_graphs:
            if not mix:
                ap_, base_rate, ng = evaluate(net, a.cache, (train_end, n), a.batch, a.rows, a.twin_rows, dev,
                                              amp, a.threads, drop)
                print(f"eval step {step}  graphs seen {graphs}  held-out AUPRC {ap_:.3f} on {ng} graphs "
                      f"(edge base rate {base_rate:.3f})  load {os.getloadavg()[0]:.2f}", flush=True)
            if a.val_cache:
                m = len(twincache.Cache(a.val_cache))
                ap_, base_rate, ng = evaluate(net, a.val_cache, (max(0, m - a.eval_graphs), m),
                                              a.batch, a.rows, a.twin_rows, dev, amp, a.threads, drop)
                print(f"eval step {step}  graphs seen {graphs}  val-cache AUPRC {ap_:.3f} on {ng} "
                      f"graphs of {a.val_cache} (edge base rate {base_rate:.3f})", flush=True)

    gen = torch.Generator().manual_seed(a.seed * 7919 + step)
    if gen_state is not None:
        gen.set_state(gen_state)
    S = None

    node_slots = [0, 0]  # (real nodes, node slots the model attends over) of valid graphs

    def train_step(b):
        nonlocal S
        if a.buckets:  # the batch's own N: the arrays' columns beyond it are padding
            b = b.trimmed()
        vm = b["valid"].bool()  # summed as tensors: no device sync per step
        node_slots[0] = node_slots[0] + (b["node_mask"].sum(-1) * vm).sum()
        node_slots[1] = node_slots[1] + vm.sum() * b["node_mask"].shape[-1]
        if a.data_only:
            return (b["base"].to(dev, non_blocking=True).sum()
                    + b["inter"].to(dev, non_blocking=True).sum())
        if S is None:
            S = b["base"].shape[1]
        rows = min(a.rows, S)
        # a fresh random subset of the samples each step (the same rows in every world)
        row_idx = torch.randperm(S, generator=gen)[:max(rows, a.pair_rows)].to(dev)
        inp, gm = model_inputs(b, rows, dev, row_idx, a.twin_rows, feats=net.layers > 0,
                               stats=net.stats, drop=drop, pair_rows=net.pair_rows)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        with amp():
            logits = model(inp)
        pm = pair_mask(inp["node_mask"], gm)
        adj = b["adj"].to(dev, non_blocking=True).float()[pm]
        if distributed:
            # the global batch's mean over all ranks' pairs: DDP averages the ranks'
            # gradients, so each rank's loss is its pairs' sum * world / all pairs
            lsum = F.binary_cross_entropy_with_logits(logits.float()[pm], adj, reduction="sum")
            tot = torch.stack([pm.sum().float(), lsum.detach()])
            dist.all_reduce(tot)
            loss = lsum * world / tot[0].clamp_min(1)
            shown = tot[1] / tot[0].clamp_min(1)
        else:
            loss = F.binary_cross_entropy_with_logits(logits.float()[pm], adj)
            shown = loss.detach()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        return shown

    log_every = a.log_every or max(a.steps // 10, 1)
    t_start = time.perf_counter()
    t0 = t_log = t_start  # t0: start of the current training stretch (evaluations excluded)
    g_log, window_loss = graphs, []
    stop_reason = "steps"
    seen_ids = []
    step_start = step
    loss_log = open(a.loss_log, "w") if a.loss_log and main_proc else None
    if loss_log:
        loss_log.write("step,loss,graph_ids\n")
    while step < a.steps:
        b = next(batches)
        if distributed and len(seen_ids) < 64 and "graph_id" in b.keys():
            gid = b["graph_id"][b["valid"].bool()]
            seen_ids.extend(gid.cpu().tolist())
        ids = None
        if a.loss_log and "graph_id" in b.keys():
            ids = b["graph_id"][b["valid"].bool()].cpu().tolist()
            if distributed:
                every = [None] * world
                dist.all_gather_object(every, ids)
                ids = [i for part in every for i in part]
        loss = train_step(b)
        if loss_log:
            loss_log.write(f"{step + 1},{loss.item():.9g},{' '.join(map(str, sorted(ids or [])))}\n")
        del b
        step += 1
        graphs += a.batch * world
        window_loss.append(loss)
        if step % log_every == 0 or step == a.steps:
            if cuda:
                torch.cuda.synchronize()
            now = time.perf_counter()
            if main_proc:
                lv = torch.stack(window_loss).float().mean().item()
                what = "" if a.data_only else f"loss {lv:.4f}  lr {lr_at(step - 1):.2e}  "
                print(f"step {step:6d}  graphs {graphs:8d}  {what}"
                      f"{(graphs - g_log) / (now - t_log):7.1f} graphs/s  "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)
            window_loss, t_log, g_log = [], now, graphs
        if a.eval_every and step % a.eval_every == 0 and step < a.steps:
            train_s += time.perf_counter() - t0
            report_eval()
            save()
            t0 = t_log = time.perf_counter()
            g_log = graphs
        if a.stop_after and step - step_start >= a.stop_after and step < a.steps:
            stop_reason = "stop-after"
            break
        if a.minutes:  # every process stops at the same step
            out = torch.tensor([float(time.perf_counter() - t_start >= a.minutes * 60)])
            if distributed:
                out = out.to(dev)
                dist.all_reduce(out, op=dist.ReduceOp.MAX)
            if out.item() > 0:
                stop_reason = "minutes"
                break
    if cuda:
        torch.cuda.synchronize()
    train_s += time.perf_counter() - t0
    wall = time.perf_counter() - t_start
    if main_proc:
        what = "data only" if a.data_only else "training"
        # each data path names only its own knob: decode threads (twincache), workers (onthefly)
        loading = f"decode threads={a.threads}" if a.data == "twincache" else f"workers={a.workers}"
        print(f"{a.data} {what}: {step} steps, {graphs} graphs seen, {train_s:.0f} s trained in all; "
              f"this invocation {wall:.0f} s ({'GPU' if cuda else 'CPU'}, processes={world}, "
              f"{loading}, torch threads="
              f"{torch.get_num_threads()}, amp={'bf16' if use_bf16 else 'off'}, stopped by "
              f"--{stop_reason})", flush=True)
        real, slots = float(node_slots[0]), float(node_slots[1])
        if slots:
            print(f"node padding: {100 * (1 - real / slots):.1f}% of the node slots the "
                  f"model attends over (rank 0{', --buckets' if a.buckets else ''})", flush=True)
    if not a.data_only:
        report_eval()
        save()
    if loss_log:
        loss_log.close()
    if loader is not None:
        loader.close()
    if distributed and not a.data_only:
        # the all-reduce's cost: DDP overlaps its bucketed reduce with the backward pass,
        # so time the same volume (every gradient) alone, against the mean step
        flat = torch.zeros(sum(p.numel() for p in net.parameters()), device=dev)
        dist.barrier()
        t1 = time.perf_counter()
        for _ in range(20):
            dist.all_reduce(flat)
        if cuda:
            torch.cuda.synchronize()
        ar_ms = (time.perf_counter() - t1) / 20 * 1e3
        step_ms = train_s / max(step, 1) * 1e3
        if main_proc:
            print(f"all-reduce of the {flat.numel()} gradients ({'nccl' if cuda else 'gloo'}, "
                  f"{launcher}): {ar_ms:.3f} ms = {100 * ar_ms / step_ms:.1f}% of the mean step "
                  f"({step_ms:.1f} ms); {graphs / max(train_s, 1e-9) / world:.1f} graphs/s per rank",
                  flush=True)
    if distributed:  # the data-parallel invariants, checked once at the end
        ids = [None] * world
        dist.all_gather_object(ids, set(seen_ids))
        flat = torch.cat([p.detach().float().reshape(-1) for p in net.parameters()])
        sums = [torch.zeros(2, device=dev) for _ in range(world)]
        dist.all_gather(sums, torch.stack([flat.sum(), (flat * flat).sum()]))
        if main_proc:
            overlap = sum(len(ids[i] & ids[j]) for i in range(world) for j in range(i + 1, world))
            same = all(torch.equal(sums[0], x) for x in sums[1:])
            print(f"data parallel: {world} processes; first graphs read per rank "
                  f"{[len(x) for x in ids]}, shared between ranks {overlap}; "
                  f"parameters identical on every rank: {same}", flush=True)
        # DDP's reducer holds the process group: free it first, so gloo's
        # threads are stopped by destroy_process_group, not left joinable for
        # the interpreter's exit (seen once here: "terminate called without an
        # active exception", SIGABRT after a finished run)
        model = opt = None
        gc.collect()
        dist.barrier()
        dist.destroy_process_group()
        # that was not enough: gloo can still abort in torch's C++ destructors
        # at the interpreter's exit (seen again in CI, torch 2.13 CPU, in a
        # worker without DDP). Everything is written, checkpointed and
        # flushed by now, so leave without running them.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
