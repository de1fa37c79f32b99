"""_capi — the ONE place that knows the C ABI of libtwincache: how the
library is found, the ctypes mirrors of the public structs, and the function
signatures. Every struct mirrored here is checked at import against
twincache_abi_sizes() (loader/abi.c), compiled with the real headers, so a
struct that changes in C without its mirror fails loudly at import instead of
reading the wrong bytes.

Where the library is found, first match wins:
  1. $TWINCACHE_LIBRARY (a path to libtwincache.so*);
  2. next to this package: twincache/libtwincache.so* (where `pip install`
     puts it), then twincache/ of every sys.path entry (`pip install -e`:
     the package is the source folder, the library in site-packages), then
     ../../lib (an installed prefix: PREFIX/lib/pythonX/.../twincache -> PREFIX/lib);
  3. the build tree of a source checkout: <repo>/build/{rel,release,*}/;
  4. the system's search path (ctypes.util.find_library("twincache")).
"""
import ctypes
import ctypes.util
import glob
import os
import sys

c_size_t = ctypes.c_size_t
u8, u16, u32, u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
P = ctypes.POINTER


def _candidates():
    env = os.environ.get("TWINCACHE_LIBRARY")
    if env:
        yield env
        return  # an explicit choice is never second-guessed
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, "libtwincache.so*")))
    # pip install -e: the package is this source folder, the library lies in
    # site-packages/twincache/ where the editable wheel installed it
    for entry in sys.path:
        d = os.path.join(entry or ".", "twincache")
        if os.path.abspath(d) != here:
            yield from sorted(glob.glob(os.path.join(d, "libtwincache.so*")))
    prefix_lib = os.path.normpath(os.path.join(here, "..", "..", "lib"))
    yield from sorted(glob.glob(os.path.join(prefix_lib, "libtwincache.so*")))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    for sub in ("rel", "release"):
        yield os.path.join(repo, "build", sub, "libtwincache.so")
    yield from sorted(glob.glob(os.path.join(repo, "build", "*", "libtwincache.so")))
    found = ctypes.util.find_library("twincache")
    if found:
        yield found


# The system libraries libtwincache.so links, and the Debian packages that
# hold them (tools/install-deps.sh installs them).
_SYSTEM_LIBS = {"libzstd": "libzstd1", "liblmdb": "liblmdb0"}


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            for name, pkg in _SYSTEM_LIBS.items():
                if f"{name}." in str(e) and "cannot open" in str(e):
                    raise ImportError(f"twincache: {path} needs the system library {name} "
                                      f"(Debian package {pkg}), which is not installed: {e}")
            tried.append(f"{path} ({e})")
    raise ImportError(
        "twincache: libtwincache.so not found. Install the package (pip install .), build it "
        "(cmake --build build/release) or set TWINCACHE_LIBRARY=/path/to/libtwincache.so. "
        "Tried: " + "; ".join(tried or ["nothing"]))


lib, library_path = _load()

# ---- status codes (formats/twincache_format.h) -------------------------------
OK, END = 0, 1
ENOMEM, EINVAL, ECORRUPT, ECHECKSUM, EVERSION, ETOOBIG, EZSTD, ELMDB, EIO = range(-1, -10, -1)
ENOTFOUND, EMISMATCH, ENOTCACHE, ETHREAD, ECLOSED, EFULL, EBUSY = range(-10, -17, -1)
EAGAIN, EDEADLK, ESTALE, ETRUNCATED = -17, -18, -19, -20  # the session's new codes


# ---- struct mirrors -------------------------------------------------------------
class Dims(ctypes.Structure):
    _fields_ = [("graphs", u64), ("chunk_graphs", u32), ("max_nodes", u32), ("max_inter", u32),
                ("samples", u32), ("hidden", u32)]


class Stats(ctypes.Structure):
    _fields_ = [("raw_bytes", u64), ("frame_bytes", u64), ("edges", u64), ("nodes", u64)]


class Graph(ctypes.Structure):
    _fields_ = [("cap_nodes", u32), ("cap_samples", u32), ("cap_inter", u32), ("cap_hidden", u32),
                ("ld", u32), ("ld_adj", u32), ("index", u64), ("n_nodes", u32), ("n_samples", u32),
                ("n_inter", u32), ("n_hidden", u32), ("mechanism", u8), ("noise", u8), ("flags", u8),
                ("family", u8),
                ("adj", P(u8)), ("weight", P(ctypes.c_float)), ("mlp", P(ctypes.c_float)),
                ("noise_scale", P(ctypes.c_float)), ("norm_mean", P(ctypes.c_float)),
                ("norm_std", P(ctypes.c_float)), ("target", P(u16)), ("kind", P(u8)),
                ("value", P(ctypes.c_float)), ("base", P(ctypes.c_float)),
                ("inter", P(ctypes.c_float)), ("node_mech", P(u8)),
                ("hetero_w", P(ctypes.c_float)), ("hetero_c", P(ctypes.c_float)),
                ("soft", P(ctypes.c_float)), ("n_targets", P(u8)), ("more_target", P(u16)),
                ("more_value", P(ctypes.c_float)),
                ("world_rows", P(u32))]  # (K+1) rows per world, format 5


# The batch arrays, in slab order: (layout field, numpy dtype name, shape in G,N,K,S).
# The binding builds its views from these offsets, never from the typed pointers.
BATCH_ARRAYS = (
    ("base", "base", "float32", "GSN"),
    ("inter", "inter_off", "float32", "GKSN"),
    ("target", "target", "uint8", "GKN"),
    ("value", "value", "float32", "GKN"),
    ("kind", "kind", "uint8", "GK"),
    ("adj", "adj", "uint8", "GNN"),
    ("node_mask", "node_mask", "uint8", "GN"),
    ("int_mask", "int_mask", "uint8", "GK"),
    ("graph_id", "graph_id", "uint64", "G"),
    ("valid", "valid", "uint8", "G"),
    ("rows", "rows", "uint32", "GR"),  # R = K+1: rows each world holds (FORMAT.md 3.10)
)


class BatchLayout(ctypes.Structure):
    _fields_ = [("graphs", u32), ("nodes", u32), ("inter", u32), ("samples", u32),
                ("base", c_size_t), ("inter_off", c_size_t), ("target", c_size_t),
                ("value", c_size_t), ("kind", c_size_t), ("adj", c_size_t),
                ("node_mask", c_size_t), ("int_mask", c_size_t), ("graph_id", c_size_t),
                ("valid", c_size_t), ("bytes", c_size_t), ("rows", c_size_t)]


class Batch(ctypes.Structure):
    _fields_ = [("layout", BatchLayout), ("slab", ctypes.c_void_p), ("n_graphs", u32),
                ("epoch", u64), ("seq", u64), ("generation", u64),
                ("base", ctypes.c_void_p), ("inter", ctypes.c_void_p), ("target", ctypes.c_void_p),
                ("value", ctypes.c_void_p), ("kind", ctypes.c_void_p), ("adj", ctypes.c_void_p),
                ("node_mask", ctypes.c_void_p), ("int_mask", ctypes.c_void_p),
                ("graph_id", ctypes.c_void_p), ("valid", ctypes.c_void_p),
                ("compact", ctypes.c_void_p), ("internal_", ctypes.c_void_p), ("nodes", u32),
                ("rows", ctypes.c_void_p)]


# The compact batch (twincache_loader.h, "the compact batch"): arrays of one
# compact slab, in slab order: (name, layout field, numpy dtype name, shape in
# G,N,K,S,W). cols is (n_cols, S) of a batch (capacity max_cols); it is not
# listed here because its row count changes per batch.
LAYOUT_DENSE, LAYOUT_COMPACT = 0, 1
COMPACT_ARRAYS = (
    ("base", "base", "float32", "GSN"),
    ("adj", "adj", "uint8", "GNN"),
    ("kind", "kind", "uint8", "GK"),
    ("graph_id", "graph_id", "uint64", "G"),
    ("valid", "valid", "uint8", "G"),
    ("n_nodes", "n_nodes", "uint32", "G"),
    ("n_inter", "n_inter", "uint32", "G"),
    ("target", "target", "uint16", "GK"),
    ("value", "value", "float32", "GK"),
    ("col_first", "col_first", "uint32", "GK"),
    ("col_mask", "col_mask", "uint64", "GKW"),
    ("rows", "rows", "uint32", "GR"),  # R = K + 1: rows per world, as the dense rows
)


class CompactLayout(ctypes.Structure):
    _fields_ = [("graphs", u32), ("nodes", u32), ("inter", u32), ("samples", u32),
                ("mask_words", u32), ("max_cols", u64),
                ("base", c_size_t), ("adj", c_size_t), ("kind", c_size_t), ("graph_id", c_size_t),
                ("valid", c_size_t), ("n_nodes", c_size_t), ("n_inter", c_size_t),
                ("target", c_size_t), ("value", c_size_t), ("col_first", c_size_t),
                ("col_mask", c_size_t), ("rows", c_size_t), ("cols", c_size_t), ("bytes", c_size_t),
                ("dense", BatchLayout)]


class CompactBatch(ctypes.Structure):
    _fields_ = [("layout", CompactLayout), ("slab", ctypes.c_void_p), ("used_bytes", c_size_t),
                ("n_cols", u64),
                ("base", ctypes.c_void_p), ("adj", ctypes.c_void_p), ("kind", ctypes.c_void_p),
                ("graph_id", ctypes.c_void_p), ("valid", ctypes.c_void_p),
                ("n_nodes", ctypes.c_void_p), ("n_inter", ctypes.c_void_p),
                ("target", ctypes.c_void_p), ("value", ctypes.c_void_p),
                ("col_first", ctypes.c_void_p), ("col_mask", ctypes.c_void_p),
                ("rows", ctypes.c_void_p), ("cols", ctypes.c_void_p)]


ALLOC_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, c_size_t, ctypes.c_void_p)
FREE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
CORRUPT_FN = ctypes.CFUNCTYPE(None, u64, ctypes.c_int, ctypes.c_void_p)


class LoaderOptions(ctypes.Structure):
    _fields_ = [("batch_size", u32), ("epochs", u32), ("shuffle", ctypes.c_int), ("seed", u64),
                ("rank", u32), ("world_size", u32), ("threads", u32), ("slots", u32),
                ("drop_last", ctypes.c_int), ("index_begin", u64), ("index_end", u64),
                ("corrupt_policy", ctypes.c_int), ("alloc", ALLOC_FN), ("free", FREE_FN),
                ("alloc_user", ctypes.c_void_p), ("on_corrupt", CORRUPT_FN),
                ("corrupt_user", ctypes.c_void_p), ("release_on_any_thread", ctypes.c_int),
                ("equal_ranks", ctypes.c_int), ("layout", ctypes.c_int),
                ("samples", ctypes.c_int), ("rows", u32), ("resample_every", u32),
                ("withhold_targets", ctypes.c_int), ("buckets", ctypes.c_int),
                ("source_samples", ctypes.POINTER(ctypes.c_int)), ("local_nodes", u32)]


class LoaderState(ctypes.Structure):
    """twincache_loader_state: a position in the global order and what defines
    the stream (64 bytes encoded; loader/twincache_loader.h)."""
    _fields_ = [("seed", u64), ("next_seq", u64), ("magic", u32), ("version", u32),
                ("cache_tag", u64), ("index_begin", u64), ("index_end", u64),
                ("batch_size", u32), ("world_size", u32), ("rank", u32), ("shuffle", u8),
                ("drop_last", u8), ("equal_ranks", u8), ("bucket", u8), ("origin", u64),
                ("local_nodes", u32)]


class LoaderStats(ctypes.Structure):
    _fields_ = [("batches", u64), ("graphs", u64), ("corrupt", u64), ("bytes_decoded", u64),
                ("producer_wait_ns", u64), ("consumer_wait_ns", u64), ("threads", u32),
                ("thread_graphs", u64 * 64), ("thread_busy_ns", u64 * 64)]


class Dataset(ctypes.Structure):
    """twincache_dataset (import/twincache_import.h)."""
    _fields_ = [("n_nodes", ctypes.c_uint32), ("n_rows", ctypes.c_uint32), ("n_regimes", ctypes.c_uint32),
                ("rows", P(ctypes.c_float)), ("adj", P(ctypes.c_uint8)), ("n_targets", P(ctypes.c_uint8)),
                ("targets", P(ctypes.c_uint16)), ("regime_rows", P(ctypes.c_uint32))]


# ---- the ABI check (order = abi_facts in loader/abi.c) ------------------------------
_EXPECTED = (
    ("sizeof(twincache_dims)", ctypes.sizeof(Dims)),
    ("sizeof(twincache_stats)", ctypes.sizeof(Stats)),
    ("sizeof(twincache_graph)", ctypes.sizeof(Graph)),
    ("sizeof(twincache_batch_layout)", ctypes.sizeof(BatchLayout)),
    ("sizeof(twincache_batch)", ctypes.sizeof(Batch)),
    ("offsetof(twincache_batch, slab)", Batch.slab.offset),
    ("offsetof(twincache_batch, n_graphs)", Batch.n_graphs.offset),
    ("offsetof(twincache_batch, internal_)", Batch.internal_.offset),
    ("sizeof(twincache_loader_options)", ctypes.sizeof(LoaderOptions)),
    ("offsetof(twincache_loader_options, alloc)", LoaderOptions.alloc.offset),
    ("offsetof(twincache_loader_options, corrupt_user)", LoaderOptions.corrupt_user.offset),
    ("sizeof(twincache_loader_state)", ctypes.sizeof(LoaderState)),
    ("sizeof(twincache_loader_stats)", ctypes.sizeof(LoaderStats)),
    ("offsetof(twincache_batch, generation)", Batch.generation.offset),
    ("offsetof(twincache_batch, valid)", Batch.valid.offset),
    ("offsetof(twincache_loader_options, layout)", LoaderOptions.layout.offset),
    ("offsetof(twincache_loader_state, cache_tag)", LoaderState.cache_tag.offset),
    ("offsetof(twincache_loader_options, withhold_targets)", LoaderOptions.withhold_targets.offset),
    ("offsetof(twincache_loader_state, origin)", LoaderState.origin.offset),
    ("offsetof(twincache_batch, nodes)", Batch.nodes.offset),
    ("offsetof(twincache_loader_options, buckets)", LoaderOptions.buckets.offset),
    ("offsetof(twincache_loader_options, local_nodes)", LoaderOptions.local_nodes.offset),
    ("offsetof(twincache_loader_state, local_nodes)", LoaderState.local_nodes.offset),
    ("sizeof(twincache_dataset)", ctypes.sizeof(Dataset)),
    ("offsetof(twincache_dataset, regime_rows)", Dataset.regime_rows.offset),
)


def _check_abi(clib, path):
    """ImportError unless the library's layout facts are _EXPECTED's. A library
    of another version (an older install found first) has fewer or more."""
    clib.twincache_abi_sizes.restype = u32
    clib.twincache_abi_sizes.argtypes = [P(u64), u32]
    n = clib.twincache_abi_sizes(None, 0)
    facts = (u64 * n)()
    clib.twincache_abi_sizes(facts, n)
    bad = [f"{name}: C {facts[i] if i < n else 'none'} != Python {want}"
           for i, (name, want) in enumerate(_EXPECTED) if i >= n or facts[i] != want]
    if n != len(_EXPECTED) or bad:
        raise ImportError(f"twincache: {path} does not match python/twincache/_capi.py "
                          f"({n} facts, {len(_EXPECTED)} expected): " + "; ".join(bad) +
                          ". It is another version of the library (TWINCACHE_LIBRARY chooses "
                          "one), or the ctypes mirrors in _capi.py need updating together with "
                          "the C header.")


_check_abi(lib, library_path)


# ---- function signatures ---------------------------------------------------------
def _sig(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


vp, cint, cstr = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
strerror = _sig("twincache_strerror", cstr, cint)
version = _sig("twincache_version", cstr)
cache_open = _sig("twincache_cache_open", cint, cstr, P(vp))
cache_close = _sig("twincache_cache_close", None, vp)
cache_dims = _sig("twincache_cache_dims", P(Dims), vp)
cache_count = _sig("twincache_cache_count", u64, vp)
cache_first = _sig("twincache_cache_first", u64, vp)
cache_stats = _sig("twincache_cache_stats", P(Stats), vp)
cache_config = _sig("twincache_cache_config", cstr, vp)
cache_library = _sig("twincache_cache_library", cstr, vp)
cache_disk_bytes = _sig("twincache_cache_disk_bytes", u64, vp)
cache_format_version = _sig("twincache_cache_format_version", u32, vp)
cache_read_graph = _sig("twincache_cache_read_graph", cint, vp, vp, u64, P(Graph))
cache_read_frame = _sig("twincache_cache_read_frame", cint, vp, u64, P(vp), P(c_size_t))
libc_free = ctypes.CDLL(None).free  # frees what read_frame malloc'd
libc_free.restype, libc_free.argtypes = None, [vp]
MAX_TARGETS = 16  # TWINCACHE_MAX_TARGETS: targets of one world (multi-target interventions)
graph_alloc = _sig("twincache_graph_alloc", P(Graph), u32, u32, u32, u32)
graph_free = _sig("twincache_graph_free", None, P(Graph))
graph_soft_stride = _sig("twincache_graph_soft_stride", u32, P(Graph))
inter_kind_fixes_target = _sig("twincache_inter_kind_fixes_target", cint, cint)
GRAPH_STANDARDIZED = 0x1  # TWINCACHE_GRAPH_STANDARDIZED: norm_mean/norm_std hold the standardisation
GRAPH_INDEPENDENT = 0x8  # TWINCACHE_GRAPH_INDEPENDENT (format 5): each world has its own noise
GRAPH_OBSERVED = 0x20  # TWINCACHE_GRAPH_OBSERVED (format 5): imported data, no SCM (FORMAT.md 3.11)
GRAPH_NO_DAG = 0x40  # TWINCACHE_GRAPH_NO_DAG: the graph is unknown (adj all zero)
GRAPH_NO_TARGETS = 0x80  # TWINCACHE_GRAPH_NO_TARGETS: the regimes' targets are withheld
INTER_OBSERVED = 4  # TWINCACHE_INTER_OBSERVED: the kind of every world of an observed graph



import_write = _sig("twincache_import_write", cint, cstr, P(Dataset), ctypes.c_uint32, cstr)
dctx_create = _sig("twincache_dctx_create", vp)
dctx_free = _sig("twincache_dctx_free", None, vp)
batch_layout_init = _sig("twincache_batch_layout_init", cint, P(BatchLayout), u32, u32, u32, u32)
compact_layout_init = _sig("twincache_compact_layout_init", cint, P(CompactLayout), P(BatchLayout))
compact_used_bytes = _sig("twincache_compact_used_bytes", c_size_t, P(CompactLayout), u64)
options_init = _sig("twincache_loader_options_init", None, P(LoaderOptions))
loader_open = _sig("twincache_loader_open", cint, cstr, P(LoaderOptions), P(LoaderState), P(vp))
loader_open_mixture = _sig("twincache_loader_open_mixture", cint, P(cstr), P(ctypes.c_double), ctypes.c_uint32,
                           P(LoaderOptions), P(LoaderState), P(vp))
loader_close = _sig("twincache_loader_close", None, vp)
loader_get_state = _sig("twincache_loader_get_state", None, vp, P(LoaderState))
loader_get_stats = _sig("twincache_loader_get_stats", None, vp, P(LoaderStats))
loader_bpe = _sig("twincache_loader_batches_per_epoch", u64, vp)
loader_total = _sig("twincache_loader_batches_total", u64, vp)
loader_epoch_end = _sig("twincache_loader_epoch_end", u64, vp, u64)
loader_epoch_state = _sig("twincache_loader_epoch_state", cint, vp, u64, P(LoaderState))
loader_layout = _sig("twincache_loader_layout", P(BatchLayout), vp)
loader_dims = _sig("twincache_loader_dims", P(Dims), vp)
loader_mix_counts = _sig("twincache_loader_mix_counts", u32, vp, P(u32), u32)
last_error = _sig("twincache_last_error", cstr)

# The names of the choices a frame records come from C's one table
# (formats/names.c, twincache_choice_*); Python keeps no copy of it.
CHOICE_FAMILY, CHOICE_MECHANISM, CHOICE_NOISE, CHOICE_INTER_KIND = 0, 1, 2, 3
choice_count = _sig("twincache_choice_count", cint, cint)
choice_name = _sig("twincache_choice_name", cstr, cint, cint)
choice_code = _sig("twincache_choice_code", cint, cint, cstr, c_size_t)


def choice_names(choice):
    """The names of one choice's codes, indexed by code (read from C)."""
    return tuple(choice_name(choice, c).decode() for c in range(choice_count(choice)))


def code_of(choice, name):
    """The code C's table gives `name` (a str) in `choice`."""
    code = choice_code(choice, name.encode(), ctypes.c_size_t(-1).value)
    if code < 0:
        raise RuntimeError(f"libtwincache has no {name!r} in choice {choice}")
    return code

# ---- the per-batch calls -------------------------------------------------------------
# A batch crosses the boundary as its address (an int): next_timeout writes
# it into one c_void_p the caller keeps, and release/detach take it back. The
# struct of a slot never moves (twincache_loader.h: a slot's two structs
# alternate), so the binding reads it through one ctypes mirror per address
# and makes no pointer object per batch.
loader_next_timeout = _sig("twincache_loader_next_timeout", cint, vp, P(vp), ctypes.c_int64)
loader_release = _sig("twincache_loader_release", cint, vp, vp)
loader_detach = _sig("twincache_loader_detach", cint, vp, vp)
# next() finds the slot the next batch needs held by the caller: EDEADLK at
# once (the binding opens the loader with release_on_any_thread = 0).
HELD_STATUS = EDEADLK
POLL_NS = 100_000_000  # a blocked next() returns to Python this often (Ctrl-C works)


# ---- the compact structs' mirror check ------------------------------------------------
# twincache_abi_sizes() predates the compact batch, so its two mirrors are
# checked here against the C code itself: twincache_compact_layout_init must
# write exactly sizeof(CompactLayout) bytes, put the dense layout where the
# mirror has it, and lay the arrays out as COMPACT_ARRAYS says (each 64-byte
# aligned, in order, cols last). CompactBatch's pointers are checked against
# its slab and layout on the first batch of every compact loader
# (loader._Core.check_compact).
def _align64(x):
    return (x + 63) & ~63


def _check_compact_abi():
    G, N, K, S = 3, 70, 5, 9  # N > 64: two mask words
    d = BatchLayout()
    if batch_layout_init(ctypes.byref(d), G, N, K, S) != OK:
        raise ImportError("twincache: twincache_batch_layout_init failed in the ABI check")
    size = ctypes.sizeof(CompactLayout)
    raw = (u8 * (size + 64))(*([0xAB] * (size + 64)))
    c = CompactLayout.from_buffer(raw)
    bad = []
    if compact_layout_init(c, ctypes.byref(d)) != OK:
        bad.append("twincache_compact_layout_init failed")
    if any(b != 0xAB for b in raw[size:]):
        bad.append(f"C twincache_compact_layout is larger than the mirror ({size} bytes)")
    if bytes(c.dense) != bytes(d):
        bad.append("the dense layout is not at the mirror's offset")
    dims = {"G": G, "N": N, "K": K, "S": S, "W": (N + 63) // 64, "R": K + 1}
    if (c.graphs, c.nodes, c.inter, c.samples, c.mask_words, c.max_cols) != \
            (G, N, K, S, dims["W"], G * K * N):
        bad.append("dims fields")
    off = 0
    for name, field, dtype, code in COMPACT_ARRAYS:
        if getattr(c, field) != off:
            bad.append(f"{field} at {getattr(c, field)}, expected {off}")
        n = 1
        for ch in code:
            n *= dims[ch]
        off = _align64(off + n * {"float32": 4, "uint8": 1, "uint16": 2, "uint32": 4,
                                  "uint64": 8}[dtype])
    if c.cols != off or c.bytes != _align64(off + G * K * N * S * 4):
        bad.append(f"cols at {c.cols} / bytes {c.bytes}, expected {off} / "
                   f"{_align64(off + G * K * N * S * 4)}")
    if compact_used_bytes(c, 2) != _align64(c.cols + 2 * S * 4):
        bad.append("twincache_compact_used_bytes")
    if bad:
        raise ImportError(f"twincache: {library_path} does not match the compact mirrors in "
                          "python/twincache/_capi.py: " + "; ".join(bad))


_check_compact_abi()
