"""twincache — pre-built causal-discovery training data for PyTorch.

    import twincache
    for batch in twincache.Loader("cache.lmdb", batch_size=256, device="cuda"):
        loss = model(batch.base, batch.inter, batch.target).loss(batch.adj)

Pure Python over libtwincache.so (ctypes). `pip install .` puts the library
inside this package and the programs (twincache-gen, -inspect, -train) on the
environment's PATH; see _capi for how the library is found otherwise
(TWINCACHE_LIBRARY, the build tree, the system).
"""
from . import _capi
from .cache import Cache, Graph
from .errors import (Closed, Corrupt, Error, InvalidArgument, Mismatch, NotACache, NotFound,
                     OutOfMemory, StaleBatch, StorageError, ThreadError, TooManyHeld, VersionError,
                     strerror)
from .gen import find_program, generate
from .batch import Batch
from .loader import Loader, default_rank_world
from .fresh import fresh_graph
from .write import write_cache
from ._launch import LaunchRanks, launch_ranks

__version__ = _capi.version().decode()  # TWINCACHE_VERSION_STRING, as the wheel's
library_path = _capi.library_path

__all__ = ["Cache", "Graph", "Loader", "Batch", "fresh_graph", "write_cache", "generate", "find_program", "default_rank_world",
           "launch_ranks", "LaunchRanks",
           "Error", "NotFound", "NotACache", "Corrupt", "VersionError", "InvalidArgument",
           "OutOfMemory", "StorageError", "Mismatch", "Closed", "ThreadError", "TooManyHeld",
           "StaleBatch", "strerror", "library_path"]
