"""write_cache — numpy or pandas data as a twincache cache of observed data
(FORMAT.md 3.11: rows and regimes, the graph if known, no SCM), through the C
library's twincache_import_write: the same writer, checks and atomic rename
as `twincache-import`. The loader reads such a cache stored (samples =
"stored"); fresh mode refuses it."""
import json
import os

import numpy as np

from . import _capi as C
from .cache import check_path
from .errors import InvalidArgument, check


def _rows(x, what):
    """x (a 2-D array or DataFrame) as C-contiguous float32, (rows, N)."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidArgument(f"{what}: not numbers: {e}") from None
    if a.ndim != 2:
        raise InvalidArgument(f"{what}: shape {a.shape}: a 2-D (rows, variables) array expected")
    bad = ~np.isfinite(a)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InvalidArgument(f"{what}: row {r}, column {c} is {a[r, c]}: not a finite number")
    with np.errstate(over="ignore"):
        f = a.astype(np.float32)
    bad = ~np.isfinite(f)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InvalidArgument(f"{what}: row {r}, column {c} is {a[r, c]:.6g}: outside float32's range")
    return np.ascontiguousarray(f)


def _dataset(i, d):
    """One dataset (a dict) checked and packed: its arrays and the C struct."""
    if not isinstance(d, dict) or "regimes" not in d:
        raise InvalidArgument(f"dataset {i}: a dict with 'regimes' (a list of (rows, N) arrays, the "
                              "observational one first) and optional 'targets' and 'graph' expected")
    regs = d["regimes"]
    if not isinstance(regs, (list, tuple)) or not regs:
        raise InvalidArgument(f"dataset {i}: 'regimes' must be a non-empty list of (rows, N) arrays")
    rows = [_rows(r, f"dataset {i}, regime {k}") for k, r in enumerate(regs)]
    n = rows[0].shape[1]
    for k, r in enumerate(rows):
        if r.shape[1] != n:
            raise InvalidArgument(f"dataset {i}, regime {k}: {r.shape[1]} columns, regime 0 has {n}")
        if r.shape[0] < 1:
            raise InvalidArgument(f"dataset {i}, regime {k}: no rows")
    held = np.array([r.shape[0] for r in rows], dtype=np.uint32)  # each regime its own count (FORMAT.md 3.10)
    s = int(held.max())
    block = np.zeros((len(rows), s, n), dtype=np.float32)  # (R, S, N), zero past a regime's rows
    for k, r in enumerate(rows):
        block[k, :len(r)] = r
    keep = [block, held]
    st = C.Dataset(n_nodes=n, n_rows=s, n_regimes=len(rows))
    st.rows = block.ctypes.data_as(C.P(C.ctypes.c_float))
    st.regime_rows = held.ctypes.data_as(C.P(C.ctypes.c_uint32))
    g = d.get("graph")
    if g is not None:
        a = np.asarray(g)
        if a.shape != (n, n) or not np.all((a == 0) | (a == 1)):
            raise InvalidArgument(f"dataset {i}: 'graph' must be an ({n}, {n}) 0/1 adjacency (edge i -> j at [i, j])")
        a = np.ascontiguousarray(a, dtype=np.uint8)
        keep.append(a)
        st.adj = a.ctypes.data_as(C.P(C.ctypes.c_uint8))
    t = d.get("targets")
    if t is not None:
        if len(t) != len(rows):
            raise InvalidArgument(f"dataset {i}: 'targets' names {len(t)} regimes, 'regimes' holds {len(rows)}")
        nt = np.zeros(len(rows), dtype=np.uint8)
        tg = np.zeros((len(rows), C.MAX_TARGETS), dtype=np.uint16)
        for k, ts in enumerate(t):
            ts = [int(x) for x in ts]
            if len(ts) > C.MAX_TARGETS or any(x < 0 or x >= n for x in ts):
                raise InvalidArgument(f"dataset {i}, regime {k}: targets {ts}: at most {C.MAX_TARGETS} "
                                      f"node indices in [0, {n})")
            nt[k] = len(ts)
            tg[k, :len(ts)] = ts
        keep += [nt, tg]
        st.n_targets = nt.ctypes.data_as(C.P(C.ctypes.c_uint8))
        st.targets = tg.ctypes.data_as(C.P(C.ctypes.c_uint16))
    return st, keep


def write_cache(path, datasets, source=None):
    """Writes `datasets` as a new cache at `path` (which must not exist; the
    cache is built beside it and renamed once complete). Graph i is
    datasets[i], a dict:
      regimes: a list of R >= 1 arrays or DataFrames (rows, N), the
               observational regime first; each keeps its own row count
               (the cache's S is the most any regime holds; batches carry
               the counts as `rows`), every value finite;
      targets: optional, R lists of node indices (regime 0's empty, every
               other's 1..16 distinct nodes); None: the targets are withheld;
      graph:   optional (N, N) 0/1 adjacency, acyclic; None: unknown.
    `source` is any JSON
    value recorded in the cache's config ("source"). Raises InvalidArgument
    naming the dataset, regime, row and column of a bad value (C's message
    for what C checks: a cycle, repeated targets, sizes)."""
    p = check_path(path)
    if isinstance(datasets, dict):
        datasets = [datasets]
    datasets = list(datasets)
    if not datasets:
        raise InvalidArgument("write_cache: no dataset")
    packed = [_dataset(i, d) for i, d in enumerate(datasets)]
    arr = (C.Dataset * len(packed))(*[st for st, _ in packed])
    src = json.dumps(source).encode() if source is not None else None
    check(C.import_write(p, arr, len(packed), src), os.fsdecode(p))
    del packed
