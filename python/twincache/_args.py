"""Argument checks of the Loader: Python types and what a C option field can
hold. The ranges themselves (batch_size 1..65536, threads, slots, rank <
world_size, the graph range) live in C only: twincache_loader_open checks
them and its message reaches the caller as an InvalidArgument."""
import numpy as np

from .errors import InvalidArgument

U32, U64 = 2**32 - 1, 2**64 - 1


def integer(name, v, top=U32):
    """v as an int that a C field of max value `top` holds unchanged (ctypes
    would silently wrap a negative or larger one)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidArgument(f"{name} must be an int, not {type(v).__name__}")
    if not 0 <= int(v) <= top:
        raise InvalidArgument(f"{name} must be a non-negative integer below 2**{top.bit_length()}, "
                              f"got {v}")
    return int(v)


def flag(name, v):
    if not isinstance(v, (bool, int, np.integer)):
        raise InvalidArgument(f"{name} must be a bool, not {type(v).__name__}")
    return bool(v)


def choice(name, v, choices):
    if not isinstance(v, str) or v not in choices:
        raise InvalidArgument(f"{name} must be one of {', '.join(map(repr, choices))}, got {v!r}")
    return v


def index_range(v):
    """(begin, end) of index_range=; end 0 (or None) = every committed graph."""
    if v is None:
        return 0, 0
    try:
        begin, end = v
    except (TypeError, ValueError):
        raise InvalidArgument(f"index_range must be (begin, end), got {v!r}")
    return integer("index_range begin", begin, U64), \
        (0 if end is None else integer("index_range end", end, U64))
