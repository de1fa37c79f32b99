"""twincache.fresh_graph: one graph of a cache with fresh worlds sampled
from its stored SCM — how to see worlds of an SCM-only cache. Above both
cache and loader (it uses the two), so neither imports the other."""
import dataclasses

import numpy as np

from .cache import Cache
from .loader import Loader


def fresh_graph(cache, i, rows, epoch=0):
    """Graph i of `cache` (a twincache.Cache) with fresh worlds of `rows` rows
    (1..65535) sampled from its stored SCM: the worlds
    Loader(samples="fresh", rows=rows) gives graph i in `epoch` (seed 0,
    resample_every 1), the same as twincache-inspect show CACHE i
    --fresh-rows rows --epoch epoch. Works on any cache. Returns a Graph
    whose n_samples is rows; its SCM and interventions are the stored ones;
    rows: each world's count (the stored counts of a cache made with
    --inter-samples, capped at rows; else rows), zero rows past it."""
    if not isinstance(cache, Cache):
        raise TypeError(f"cache must be a twincache.Cache, not {type(cache).__name__}")
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
        raise TypeError(f"graph index must be an int, not {type(i).__name__}")
    n_graphs = len(cache)
    i = int(i) + (n_graphs if int(i) < 0 else 0)
    if not 0 <= i < n_graphs:
        raise IndexError(f"graph index {i} out of range: the cache holds {n_graphs} graphs")
    with Loader(cache.path, batch_size=1, epochs=0, shuffle=False, threads=1, index_range=(i, i + 1),
                samples="fresh", rows=rows, output="numpy", pin_memory=False, rank=0,
                world_size=1) as loader:
        loader.set_epoch(epoch)
        b = next(iter(loader))
        base, inter = b.numpy["base"][0].copy(), b.numpy["inter"][0].copy()
        held = b.numpy["rows"][0].astype(np.int64)  # rows per world the fresh draw holds (FORMAT.md 3.10)
    g = cache._decode(i)  # the SCM as stored, without the SCM-only notice
    n, k = g.n_nodes, g.n_inter
    return dataclasses.replace(g, n_samples=int(base.shape[0]), base=base[:, :n].copy(),
                               inter=inter[:k, :, :n].copy(), rows=held[:k + 1].copy())
