"""Argument checks of the Loader: Python types and what a C option field can
hold. The ranges themselves (batch_size 1..65536, threads, slots, rank <
world_size, the graph range) live in C only: twincache_loader_open checks
them and its message reaches the caller as an InvalidArgument, in Python's
words (python_words)."""
import re

import numpy as np

from .errors import InvalidArgument

U32, U64 = 2**32 - 1, 2**64 - 1


def integer(name, v, top=U32):
    """v as an int that a C field of max value `top` holds unchanged (ctypes
    would silently wrap a negative or larger one). A bool (Python's or
    numpy's) is refused: batch_size=True is a slip, not 1."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise InvalidArgument(f"{name} must be an int, not {type(v).__name__}")
    if not 0 <= int(v) <= top:
        raise InvalidArgument(f"{name} must be a non-negative integer below 2**{top.bit_length()}, "
                              f"got {v}")
    return int(v)


def flag(name, v):
    """v as a bool: True/False or numpy's np.True_/np.False_ (what a comparison
    of arrays gives); anything else, 0 and 1 included, is refused as
    integer() refuses a bool."""
    if not isinstance(v, (bool, np.bool_)):
        raise InvalidArgument(f"{name} must be a bool (True or False), not {type(v).__name__}")
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


# C's spellings of the loader's options (loader/loader.c) -> the Loader's
# keywords, most specific first; anything else keeps C's words.
_C_WORDS = [
    (re.compile(r"option rows must be 1\.\.(\d+) with fresh samples \(got 0\)"),
     r'samples="fresh" needs rows=S, the rows of each fresh world (1..\1)'),
    (re.compile(r"option rows must be 1\.\.(\d+) with fresh samples \(got (\d+)\)"),
     r'rows must be 1..\1 with samples="fresh" (got \2)'),
    (re.compile(r"option rows \((\d+)\) needs samples = FRESH"), r'rows=\1 needs samples="fresh"'),
    (re.compile(r"option resample_every \((\d+)\) needs samples = FRESH"),
     r'resample_every=\1 needs samples="fresh"'),
    (re.compile(r"option index_end"), "index_range end"),
    (re.compile(r"option local_nodes"), "local"),
    (re.compile(r"option corrupt_policy must be FAIL \(0\) or SKIP \(1\)"),
     "corrupt must be 'fail' or 'skip'"),
    (re.compile(r"samples = FRESH"), 'samples="fresh"'),
    (re.compile(r"rows = S"), "rows=S"),
    (re.compile(r"\boption (\w+)"), r"\1"),
]


def python_words(message):
    """C's message about a loader option, with the option named as the Loader
    keyword a Python caller passed ("option rows must be 1..65535 with fresh
    samples (got 0)" -> 'samples="fresh" needs rows=S, ...')."""
    for pattern, words in _C_WORDS:
        message = pattern.sub(words, message)
    return message
