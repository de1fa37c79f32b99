"""twincache.launch_ranks(): rank, world size and local rank from
torch.distributed, then torchrun's environment, then Slurm's — each source
alone, the order between them, and bad values refused."""
import pytest

import twincache

ALL = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")


@pytest.fixture
def env(monkeypatch):
    for k in ALL:
        monkeypatch.delenv(k, raising=False)

    def set_(**kv):
        for k, v in kv.items():
            monkeypatch.setenv(k, str(v))
    return set_


def test_default_one_process(env):
    assert twincache.launch_ranks() == (0, 1, 0, "default")
    assert twincache.default_rank_world() == (0, 1)
    env(LOCAL_RANK=1)  # one process on a GPU chosen by hand
    assert twincache.launch_ranks() == (0, 1, 1, "default")


def test_torchrun_alone(env):
    env(RANK=3, WORLD_SIZE=8, LOCAL_RANK=1)
    assert twincache.launch_ranks() == (3, 8, 1, "torchrun")
    assert twincache.default_rank_world() == (3, 8)


def test_slurm_alone(env):
    env(SLURM_PROCID=5, SLURM_NTASKS=8, SLURM_LOCALID=1)
    assert twincache.launch_ranks() == (5, 8, 1, "slurm")
    assert twincache.default_rank_world() == (5, 8)


def test_torchrun_before_slurm(env):
    # torchrun inside a Slurm allocation: torchrun's variables win, unmixed
    env(RANK=1, WORLD_SIZE=2, SLURM_PROCID=0, SLURM_NTASKS=1, SLURM_LOCALID=0)
    assert twincache.launch_ranks() == (1, 2, 0, "torchrun")


def test_half_a_set_is_not_a_source(env):
    env(RANK=1)  # no WORLD_SIZE: not torchrun's set
    assert twincache.launch_ranks().source == "default"
    env(SLURM_PROCID=2, SLURM_NTASKS=4)
    assert twincache.launch_ranks() == (2, 4, 0, "slurm")


@pytest.mark.parametrize("kv, words", [
    (dict(RANK="x", WORLD_SIZE=2), "RANK must be an integer"),
    (dict(RANK=2, WORLD_SIZE=2), "RANK must be in [0, 2)"),
    (dict(RANK=0, WORLD_SIZE=0), "WORLD_SIZE must be >= 1"),
    (dict(RANK=0, WORLD_SIZE=2, LOCAL_RANK=-1), "LOCAL_RANK must be >= 0"),
    (dict(SLURM_PROCID=4, SLURM_NTASKS=4), "SLURM_PROCID must be in [0, 4)"),
])
def test_bad_values_refused(env, kv, words):
    env(**kv)
    with pytest.raises(twincache.InvalidArgument, match=words.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        twincache.launch_ranks()


def test_torch_distributed_first(env, tmp_path):
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available() or not dist.is_gloo_available():
        pytest.skip("no gloo")
    env(RANK=7, WORLD_SIZE=9, SLURM_PROCID=3, SLURM_NTASKS=4, SLURM_LOCALID=2)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/rendezvous", rank=0, world_size=1)
    try:
        assert twincache.launch_ranks() == (0, 1, 2, "torch.distributed")
    finally:
        dist.destroy_process_group()
