"""Which process of a data-parallel job this is, in one documented order.

launch_ranks() -> LaunchRanks(rank, world_size, local_rank, source), from the
first of these that is there:

1. torch.distributed, when its process group is initialised: its rank and
   world size (source "torch.distributed"); the local rank then comes from
   LOCAL_RANK, else SLURM_LOCALID, else 0.
2. torchrun's environment, when RANK and WORLD_SIZE are both set: those and
   LOCAL_RANK (default 0) (source "torchrun"; also what any launcher that
   follows the env:// convention sets).
3. Slurm's, when SLURM_PROCID and SLURM_NTASKS are both set: those and
   SLURM_LOCALID (default 0) (source "slurm"). Slurm sets them in every task
   of `srun`; note that an `sbatch` script's own shell has them too (rank 0
   of the allocation's task count): start training processes with srun.
4. Otherwise one process: rank 0 of 1, local rank LOCAL_RANK when set (a
   GPU chosen by hand), else 0 (source "default").

Only the first source found is read (no mixing of variables from two
launchers). A variable that is not an integer, a world size < 1, or a rank
outside [0, world_size) raises twincache.InvalidArgument naming the
variables. The local rank picks the GPU (cuda:LOCAL_RANK).
"""
import collections
import os

from .errors import InvalidArgument

try:
    import torch
except ImportError:
    torch = None

LaunchRanks = collections.namedtuple("LaunchRanks", "rank world_size local_rank source")


def _env_int(name, default=None):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise InvalidArgument(f"the environment variable {name} must be an integer, got {v!r}")


def _checked(rank, world, local, source, names):
    if world < 1:
        raise InvalidArgument(f"{source}: world size {names[1]} must be >= 1, got {world}")
    if not 0 <= rank < world:
        raise InvalidArgument(f"{source}: rank {names[0]} must be in [0, {world}), got {rank}")
    if local < 0:
        raise InvalidArgument(f"{source}: local rank {names[2]} must be >= 0, got {local}")
    return LaunchRanks(rank, world, local, source)


def launch_ranks():
    """(rank, world_size, local_rank, source) of this process: see the module
    docstring for the order (torch.distributed, torchrun, Slurm, one process)."""
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        local = _env_int("LOCAL_RANK")
        if local is None:
            local = _env_int("SLURM_LOCALID", 0)
        return _checked(torch.distributed.get_rank(), torch.distributed.get_world_size(), local,
                        "torch.distributed", ("(process group)", "(process group)", "LOCAL_RANK"))
    rank, world = _env_int("RANK"), _env_int("WORLD_SIZE")
    if rank is not None and world is not None:
        return _checked(rank, world, _env_int("LOCAL_RANK", 0), "torchrun",
                        ("RANK", "WORLD_SIZE", "LOCAL_RANK"))
    rank, world = _env_int("SLURM_PROCID"), _env_int("SLURM_NTASKS")
    if rank is not None and world is not None:
        return _checked(rank, world, _env_int("SLURM_LOCALID", 0), "slurm",
                        ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"))
    return _checked(0, 1, _env_int("LOCAL_RANK", 0), "default", ("-", "-", "LOCAL_RANK"))
