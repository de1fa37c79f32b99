"""Rank and world size of a data-parallel job, and the local rank (the GPU
of this process), for the Loader's defaults: _launch.launch_ranks() decides
(torch.distributed, then torchrun's RANK/WORLD_SIZE/LOCAL_RANK, then Slurm's
SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID, else one process)."""
import os

from ._launch import launch_ranks


def default_rank_world():
    """(rank, world_size) of launch_ranks()."""
    r = launch_ranks()
    return r.rank, r.world_size


def local_rank():
    """The local rank of launch_ranks() when a launcher named one (LOCAL_RANK
    or SLURM_LOCALID is set), else None (the caller's current device)."""
    if "LOCAL_RANK" not in os.environ and "SLURM_LOCALID" not in os.environ:
        return None
    return launch_ranks().local_rank
