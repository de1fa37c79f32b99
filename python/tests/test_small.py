"""Issue 16, defects 5-6 that run without a GPU: device arguments and their
resolution (torch.device, "cpu", LOCAL_RANK), StaleBatch and record_stream on
the device path with the CPU standing in for the GPU, a rejected
load_state_dict that leaves the Loader usable, generate() mismatches, index
and path messages, and an error raised by the prefetch at the right step."""
import os

import pytest
import torch

import twincache
from twincache import _device

import fake_cuda


def test_device_cpu_and_torch_device(cache_path):
    for dev in ("cpu", torch.device("cpu")):
        with twincache.Loader(cache_path, batch_size=8, threads=1, device=dev) as L:
            b = L.next_batch()
            assert b.base.device.type == "cpu" and L.device == torch.device("cpu")


def test_device_index_resolved_once(monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert _device.resolve("cuda", current=0) == torch.device("cuda", 1)
    assert _device.resolve(torch.device("cuda"), current=0) == torch.device("cuda", 1)
    assert _device.resolve("cuda:0", current=1) == torch.device("cuda", 0)  # explicit wins
    monkeypatch.delenv("LOCAL_RANK")
    assert _device.resolve("cuda", current=2) == torch.device("cuda", 2)
    assert _device.resolve(None, current=0) is None
    assert _device.resolve("cpu", current=0) == torch.device("cpu")
    for bad in ("gpu", 3, "cuda:x"):
        with pytest.raises(twincache.InvalidArgument):
            _device.resolve(bad, current=0)


def _cpu_stage_loader(cache_path, monkeypatch, **kw):
    current = fake_cuda.install(monkeypatch)
    L = twincache.Loader(cache_path, threads=1, **kw)
    L._attach_stage(torch.device("cpu"))  # the device path, with the CPU as the device
    return L, current


def test_stale_device_batch(cache_path, monkeypatch):
    L, _ = _cpu_stage_loader(cache_path, monkeypatch, batch_size=8, shuffle=False)
    with L:
        b0 = L.next_batch()
        ids0 = b0.graph_id.tolist()
        b1 = L.next_batch()
        assert b1.graph_id.tolist() != ids0
        with pytest.raises(twincache.StaleBatch):  # the copy of batch 2 reuses b0's buffer
            b0.graph_id
        ids1 = b1.graph_id.tolist()
        b2 = L.next_batch()
        assert b2.graph_id.tolist() != ids1
        with pytest.raises(twincache.StaleBatch):
            b1["base"]


def test_record_stream(cache_path, monkeypatch):
    L, current = _cpu_stage_loader(cache_path, monkeypatch, batch_size=8)
    with L:
        other = fake_cuda.FakeStream()
        b0 = L.next_batch()
        b0.record_stream(other)
        assert other.waited_for == [b0.ready]  # the other stream waits for the batch's copy
        before = len(L._stage.copy_stream.waited_for)
        L.next_batch()  # starts the copy into b0's buffer: it must wait for `other` too
        recorded_on = [getattr(e, "stream", None) for e in L._stage.copy_stream.waited_for[before:]]
        assert other in recorded_on


def test_prefetch_error_at_its_own_step(cache_path, monkeypatch):
    L, _ = _cpu_stage_loader(cache_path, monkeypatch, batch_size=8)
    calls = []
    real = L._host_batch

    def flaky():
        calls.append(1)
        if len(calls) == 3:
            raise twincache.Corrupt("graph 17: checksum", -4)
        return real()
    L._host_batch = flaky
    with L:
        assert L.next_batch().seq == 0
        assert L.next_batch().seq == 1  # batch 1 was copied before the prefetch of 2 failed
        with pytest.raises(twincache.Corrupt):
            L.next_batch()


def test_rejected_state_keeps_loader_open(cache_path):
    with twincache.Loader(cache_path, batch_size=8, threads=1) as L:
        s = L.state_dict()
        L.next_batch()
        bad = dict(s, drop_last=1)  # (batch_size may change: elastic resume)
        with pytest.raises(twincache.Error):
            L.load_state_dict(bad)
        assert L.next_batch().seq == 1  # still open, where it was


def test_generate_mismatch(tmp_root):
    out = os.path.join(tmp_root, "mismatch")
    twincache.generate(out, graphs=20, nodes=(4, 6), samples=4, seed=9, threads=1, progress=False)
    with pytest.raises(twincache.Mismatch) as e:
        twincache.generate(out, graphs=20, nodes=(4, 6), samples=4, seed=10, threads=1,
                           progress=False)
    assert str(e.value).count("twincache-gen:") == 1


def test_index_and_path_messages(cache_path, tmp_root):
    with twincache.Cache(cache_path) as c:
        with pytest.raises(IndexError) as e:
            c[-2001]
        assert "-2001" in str(e.value)
    f = os.path.join(tmp_root, "a-file")
    open(f, "w").close()
    for make in (twincache.Cache, twincache.Loader):
        with pytest.raises(twincache.Error) as e:
            make(f)
        assert "is a file" in str(e.value)
