"""Resume state: the C loader state (twincache_loader_state, 64 bytes
encoded) as the dict of ints state_dict() returns and load_state_dict() takes.

Keys (all ints): seed, next_seq (the next batch of the stream, counted from
origin), magic, version, cache_tag (identity of the cache), index_begin,
index_end, batch_size, world_size, rank, shuffle, drop_last, equal_ranks,
bucket (size buckets 0 or 1; "reserved" in dicts saved before buckets), origin (graphs of the global order consumed before the stream's
batch 0), local_nodes (local mode's node count, 0 = off; absent in dicts saved
before local mode: 0). The C loader checks a full state against its own options and cache
(a mismatch is an InvalidArgument naming the field) and resumes it at any
world size; a dict without "origin" (saved by an older version) reads as
origin 0; {"seed", "next_seq"} alone is a bare position in this loader's
own stream. A mixture's state (Loader([a, b], weights=...)) has the same
keys: cache_tag is the mixture's identity (the sources, their ranges and
per-batch counts), origin counts global batches (not graphs), index_end is
the global batches of an epoch; it resumes at any world size, batch_size and
weights unchanged."""
import ctypes
import numbers

from . import _capi as C
from .errors import InvalidArgument

KEYS = tuple(f for f, _ in C.LoaderState._fields_)


def to_dict(s, next_seq):
    d = {f: int(getattr(s, f)) for f in KEYS}
    d["next_seq"] = next_seq
    return d


def current(handle, next_seq):
    """The state of C loader `handle` with the consumer's position next_seq."""
    s = C.LoaderState()
    C.loader_get_state(handle, ctypes.byref(s))
    return to_dict(s, next_seq)


def from_dict(state, seed):
    """A LoaderState from state_dict()'s dict (or {"seed", "next_seq"})."""
    if isinstance(state, dict) and "reserved" in state and "bucket" not in state:
        state = dict(state)  # saved before size buckets: the same byte, then always 0
        state["bucket"] = state.pop("reserved")
    optional = {"origin", "local_nodes"}  # absent from dicts saved before elastic resume / local mode
    if not isinstance(state, dict) or not (set(KEYS) - optional <= set(state) <= set(KEYS) or
                                           set(state) == {"seed", "next_seq"}):
        raise InvalidArgument(f"state must be a dict from state_dict() with keys {list(KEYS)}, "
                              f"got {state!r}")
    if state["seed"] != seed:
        raise InvalidArgument(f"state is of seed {state['seed']}, this loader's seed is {seed}")
    s = C.LoaderState()  # {seed, next_seq} alone (magic 0): position only
    for f, v in state.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
            raise InvalidArgument(f"state[{f!r}] must be a non-negative int, got {v!r}")
        setattr(s, f, int(v))
        if getattr(s, f) != v:
            raise InvalidArgument(f"state[{f!r}] = {v} does not fit its field")
    return s
