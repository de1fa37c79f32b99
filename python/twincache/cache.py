"""twincache.Cache: one graph at a time, decoded by the C reader."""
import ctypes
import json
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _capi as C
from .errors import InvalidArgument, OutOfMemory, check, error_from_status

# Indexed by code, read from libtwincache's one table (formats/names.c).
MECHANISMS = C.choice_names(C.CHOICE_MECHANISM)
NOISES = C.choice_names(C.CHOICE_NOISE)
KINDS = C.choice_names(C.CHOICE_INTER_KIND)
FAMILIES = C.choice_names(C.CHOICE_FAMILY)
# Codes by name, from the same table: Python writes no code number.
_SOFT = C.code_of(C.CHOICE_INTER_KIND, "soft")
_MIXED = C.code_of(C.CHOICE_MECHANISM, "mixed")


def _name(names, code):
    """The name of a code; "unknown" for one C's table does not name (a family
    before format version 4 is not recorded)."""
    return names[code] if code < len(names) else "unknown"


@dataclass
class Graph:
    """One decoded graph, arrays trimmed to its own sizes (n nodes, K
    interventions, S samples, H hidden) and owned by Python (copies).
    base (S,n) float32; inter (K,S,n) float32, row s of world k twins base
    row s; target (K,) node index; kind (K,) codes, KINDS[code] their names
    (do, shift, noise, soft: C's table); value (K,) float32;
    soft (K, P) float32 or None: row k is soft world k's new parameter block
    (P as C's twincache_soft_stride says: n for linear, the weight of edge
    i -> target at i; H*n+2H for the other mechanisms, a node block as in
    mlp; in a mixed graph a linear target's weights are its first n floats),
    rows of other worlds 0; None when no world is soft. On a root target t
    (no parents) entry t is its noise scale factor (0: factor 1) and
    value[k] its new mean (FORMAT.md 3.6);
    target_sets / value_sets: per world, every node it intervenes on at once
    (target[k] first; several for multi-target worlds) and their values;
    adj (n,n) uint8, adj[i,j]=1 <=> edge i->j; weight (n,n) float32;
    noise_scale (n,); mlp (n, H*n+2H) or None; norm_mean/norm_std (n,) or None;
    family: the graph family's name ("unknown" in caches before format 4);
    node_mechanisms: each node's mechanism name (n,) when mechanism is
    "mixed", else None. worlds: "twin" (world k's row s shares base row s's
    noise) or "independent" (each world its own noise, format 5).
    rows (K+1,) int64: rows each world holds, rows[0] the base world's,
    rows[k+1] world k's: S unless the cache stores fewer (twincache-gen
    --inter-samples, FORMAT.md 3.10); base[rows[0]:] and inter[k,
    rows[k+1]:] are zero."""
    index: int
    n_nodes: int
    n_samples: int
    n_inter: int
    n_hidden: int
    mechanism: str
    noise: str
    flags: int
    base: np.ndarray
    inter: np.ndarray
    target: np.ndarray
    kind: np.ndarray
    value: np.ndarray
    adj: np.ndarray
    weight: np.ndarray
    noise_scale: np.ndarray
    mlp: Optional[np.ndarray]
    norm_mean: Optional[np.ndarray]
    norm_std: Optional[np.ndarray]
    family: str = "unknown"
    node_mechanisms: Optional[tuple] = None
    soft: Optional[np.ndarray] = None
    target_sets: Optional[list] = None
    value_sets: Optional[list] = None
    rows: Optional[np.ndarray] = None

    @property
    def worlds(self):
        if self.flags & C.GRAPH_OBSERVED:
            return "observed"  # imported data, no SCM (FORMAT.md 3.11)
        return "independent" if self.flags & C.GRAPH_INDEPENDENT else "twin"

    @property
    def graph_known(self):
        """False for observed data whose graph is unknown (adj all zero then means "unknown")."""
        return not self.flags & C.GRAPH_NO_DAG

    @property
    def targets_known(self):
        """False for observed data whose regimes' targets are withheld (target 0 means nothing)."""
        return not self.flags & C.GRAPH_NO_TARGETS


def _array(ptr, count, dtype):
    """A Python-owned copy of `count` items at a ctypes pointer."""
    if count == 0:
        return np.zeros(0, dtype=dtype)
    return np.ctypeslib.as_array(ptr, shape=(count,)).copy()


def check_path(path):
    """The path as bytes after the one check C cannot make (its type); whether
    it is a cache is C's check, so the exception carries C's message."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InvalidArgument(f"path must be a str or os.PathLike, not {type(path).__name__}")
    return os.fsencode(os.fspath(path))


def open_error(code, path):
    """The exception of a failed C open of `path` (C's message), saying so
    when the path is a file."""
    e = error_from_status(code, path)
    if os.path.isfile(path) and code == C.ENOTCACHE:  # a file that is no set manifest either
        e = type(e)(f"{e.message}: {path} is a file; a cache is the directory twincache-gen "
                    "--out wrote (or a cache-set manifest)", code)
    return e


class Closable:
    """`with` support and close-on-collection for objects holding a C handle:
    the subclass defines an idempotent close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: modules may be gone
            pass


class Cache(Closable):
    """A cache opened read-only: one cache directory, or a set of shards (their
    directory or a manifest, twincache-gen --shard) read as the whole cache.
    len(cache) graphs committed; cache[i] decodes
    graph i (negative i counts from the end); iterating yields every graph it
    holds in index order. Thread-safe (one decoder, locked). Close with
    close() or a `with` block.

    A shard opened alone (twincache-gen --shard I/N, one shard directory)
    keeps the whole cache's graph indices: it holds graphs
    cache.first .. len(cache) - 1, so len() is one past its last graph, not
    its graph count (len(cache) - cache.first); a graph of another shard
    raises NotFound naming it. cache.first is 0 for a cache or a set.

    An SCM-only cache (twincache-gen --samples 0; dims["samples"] == 0)
    stores each graph's DAG, SCM and interventions but no worlds: cache[i]
    returns them with base and inter of 0 rows and says so (a UserWarning,
    once per Cache); twincache.fresh_graph(cache, i, rows=S) samples fresh
    worlds of graph i from its SCM, as Loader(samples="fresh") and
    twincache-inspect show --fresh-rows do."""

    def __init__(self, path):
        self.path = os.fspath(path) if isinstance(path, os.PathLike) else path
        bpath = check_path(path)
        self._h = ctypes.c_void_p()
        self._lock = threading.Lock()
        self._graph = None
        self._dctx = None
        self._pid = os.getpid()
        self._said_scm_only = False
        rc = C.cache_open(bpath, ctypes.byref(self._h))
        if rc < 0:
            raise open_error(rc, os.fsdecode(bpath))
        d = C.cache_dims(self._h).contents
        self.dims = {f: getattr(d, f) for f, _ in C.Dims._fields_}
        s = C.cache_stats(self._h).contents
        self.stats = {f: getattr(s, f) for f, _ in C.Stats._fields_}
        self.config_text = C.cache_config(self._h).decode("utf-8", "replace")
        try:
            self.config = json.loads(self.config_text)
        except ValueError:
            self.config = {}
        self.library = C.cache_library(self._h).decode("utf-8", "replace")
        self.disk_bytes = C.cache_disk_bytes(self._h)
        self.format_version = C.cache_format_version(self._h)  # the format it was written in
        # "twin" or "independent" (twincache-gen --worlds; FORMAT.md 3.9)
        self.worlds = self.config.get("worlds", "twin") if isinstance(self.config, dict) else "twin"
        if isinstance(self.config, dict) and self.config.get("observed") is True:
            self.worlds = "observed"  # twincache-import / write_cache: no SCM (FORMAT.md 3.11)
        self._count = C.cache_count(self._h)
        self.first = C.cache_first(self._h)  # a lone shard's first graph; else 0

    def __len__(self):
        return self._count

    def __iter__(self):
        # the graphs held, so a lone shard iterates its own range (the
        # sequence protocol's fallback would start at 0, another shard's)
        for i in range(self.first, self._count):
            yield self[i]

    def __getitem__(self, i):
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise TypeError(f"graph index must be an int, not {type(i).__name__}")
        asked = i = int(i)
        n = self._count
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"graph index {asked} out of range: the cache holds {n} graphs "
                             f"(0..{n - 1}, or -{n}..-1 from the end)")
        if self.dims["samples"] == 0 and not self._said_scm_only:  # once: its SCMs are what it holds
            self._said_scm_only = True
            warnings.warn(f"{self.path} is an SCM-only cache (no stored samples): graph {i}'s base "
                          f"and inter have 0 rows; twincache.fresh_graph(cache, {i}, rows=S) samples "
                          "fresh worlds from its SCM", UserWarning, stacklevel=2)
        return self._decode(i)

    def _decode(self, i):
        """Graph i (0 <= i < len) decoded by C, as a Python-owned Graph."""
        with self._lock:
            if not self._h:
                raise ValueError("I/O operation on a closed twincache.Cache")
            if os.getpid() != self._pid:
                raise InvalidArgument("twincache.Cache was opened in another process: open it "
                                      "again in this one")
            if self._graph is None:
                d = self.dims
                self._graph = C.graph_alloc(d["max_nodes"], d["samples"], max(d["max_inter"], 1),
                                            d["hidden"])
                self._dctx = C.dctx_create()
                if not self._graph or not self._dctx:
                    raise OutOfMemory("twincache.Cache: cannot allocate the decoder", C.ENOMEM)
            g = self._graph.contents
            check(C.cache_read_graph(self._h, self._dctx, i, self._graph),
                  f"{self.path}: graph {i}")
            return self._copy(g)

    def frame(self, i):
        """The raw, still encoded bytes of graph i's frame (for tools and tests)."""
        i = int(i)
        if not 0 <= i < self._count:
            raise IndexError(f"graph index {i} out of range: the cache holds {self._count} graphs")
        ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
        with self._lock:
            check(C.cache_read_frame(self._h, i, ctypes.byref(ptr), ctypes.byref(size)),
                  f"{self.path}: graph {i}")
        try:
            return ctypes.string_at(ptr, size.value)
        finally:
            C.libc_free(ptr)

    def _copy(self, g):
        n, s, k, h, ld, lda = g.n_nodes, g.n_samples, g.n_inter, g.n_hidden, g.ld, g.ld_adj
        base = _array(g.base, s * ld, np.float32).reshape(s, ld)[:, :n].copy()
        inter = _array(g.inter, k * s * ld, np.float32).reshape(k, s, ld)[:, :, :n].copy()
        adj = _array(g.adj, n * lda, np.uint8).reshape(n, lda)[:, :n].copy()
        weight = _array(g.weight, n * lda, np.float32).reshape(n, lda)[:, :n].copy()
        stride = h * n + 2 * h
        mlp = _array(g.mlp, n * stride, np.float32).reshape(n, stride) if h else None  # H = 0: linear
        std = bool(g.flags & C.GRAPH_STANDARDIZED)
        kind = _array(g.kind, k, np.uint8)
        soft = None
        if (kind == _SOFT).any():
            p = C.graph_soft_stride(ctypes.pointer(g))
            soft = _array(g.soft, k * p, np.float32).reshape(k, p)
            soft[kind != _SOFT] = 0  # rows of other worlds are not decoded
        m = C.MAX_TARGETS - 1
        nt = _array(g.n_targets, k, np.uint8)
        more_t = _array(g.more_target, k * m, np.uint16).reshape(k, m).astype(np.int64)
        more_v = _array(g.more_value, k * m, np.float32).reshape(k, m)
        tsets = [np.concatenate(([int(g.target[q])], more_t[q, :nt[q] - 1])) for q in range(k)]
        vsets = [np.concatenate(([g.value[q]], more_v[q, :nt[q] - 1])).astype(np.float32) for q in range(k)]
        return Graph(
            index=g.index, n_nodes=n, n_samples=s, n_inter=k, n_hidden=h,
            mechanism=_name(MECHANISMS, g.mechanism), noise=_name(NOISES, g.noise), flags=g.flags,
            base=base, inter=inter, target=_array(g.target, k, np.uint16).astype(np.int64),
            kind=kind, value=_array(g.value, k, np.float32), adj=adj,
            weight=weight, noise_scale=_array(g.noise_scale, n, np.float32), mlp=mlp,
            norm_mean=_array(g.norm_mean, n, np.float32) if std else None,
            norm_std=_array(g.norm_std, n, np.float32) if std else None,
            family=_name(FAMILIES, g.family), soft=soft, target_sets=tsets, value_sets=vsets,
            rows=_array(g.world_rows, k + 1, np.uint32).astype(np.int64),
            node_mechanisms=(tuple(_name(MECHANISMS, int(c)) for c in _array(g.node_mech, n, np.uint8))
                             if g.mechanism == _MIXED else None))

    def close(self):
        """Closes the cache (idempotent); graphs already returned stay valid.
        In a forked child it only forgets the parent's handle."""
        if os.getpid() != getattr(self, "_pid", os.getpid()):
            self._h, self._graph, self._dctx = ctypes.c_void_p(), None, None
            return
        with self._lock:
            if self._graph:
                C.graph_free(self._graph)
            if self._dctx:
                C.dctx_free(self._dctx)
            self._graph = self._dctx = None
            if self._h:
                C.cache_close(self._h)
                self._h = ctypes.c_void_p()

    def __repr__(self):
        return f"twincache.Cache({self.path!r}, graphs={self._count}, dims={self.dims})"
