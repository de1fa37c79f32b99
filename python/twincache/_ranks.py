"""Rank and world size of a data-parallel job, and the local rank (the GPU
of this process): torch.distributed when initialised, else the environment
torchrun and most launchers set (RANK, WORLD_SIZE, LOCAL_RANK)."""
import os

from .errors import InvalidArgument

try:
    import torch
except ImportError:
    torch = None


def _env_int(name, default):
    v = os.environ.get(name)
    if v is None:
        return default
    try:
        return int(v)
    except ValueError:
        raise InvalidArgument(f"the environment variable {name} must be an integer, got {v!r}")


def default_rank_world():
    """(rank, world_size): torch.distributed when initialised, else the
    RANK / WORLD_SIZE environment variables, else (0, 1)."""
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return _env_int("RANK", 0), _env_int("WORLD_SIZE", 1)


def local_rank():
    """LOCAL_RANK (set by torchrun per process on a node), or None."""
    return _env_int("LOCAL_RANK", None)
