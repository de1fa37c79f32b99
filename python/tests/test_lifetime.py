"""Issue 16, defects 1-3 and the ring-full wait: a released pinned batch
goes back to the loader only once its copy has completed; expand() honours
non_blocking=False; a batch kept alive costs one slot (never the ring) and
the smallest ring runs a plain for loop; no gc.collect() on a ring-full wait."""
import ctypes
import gc

import numpy as np
import pytest
import torch

import twincache
from twincache import _capi, compact

import fake_cuda


def test_release_waits_for_the_copy(cache_path):
    """`x = b.base.to("cuda", non_blocking=True); del b`: the release records
    an event on the current stream (here a LateEvent, as a queued copy would
    be) and the slot is refilled only after that event completed."""
    events = []

    def fence():
        e = fake_cuda.LateEvent()
        events.append(e)
        return e

    with twincache.Loader(cache_path, batch_size=8, threads=1, slots=2, shuffle=False,
                          output="numpy") as L:
        L._core.fence = fence  # pinned memory under CUDA gets an event on the current stream
        b = L.next_batch()
        addr, n = b.slab_address, b.base.nbytes
        saved = ctypes.string_at(addr, n)
        del b  # the "copy" is still queued
        for _ in range(6):
            c = L.next_batch()
            assert c is not None
            # the first slot's bytes stay until its copy is done
            assert (events and events[0].done) or ctypes.string_at(addr, n) == saved, c.seq
            del c
        assert events[0].waited  # the ring came round: the loader waited for it, not skipped it


class _SpyTensor(torch.Tensor):
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "copy_":
            cls.calls.append(dict(kwargs or {}))
        return super().__torch_function__(func, types, args, kwargs or {})


def test_expand_copy_honours_non_blocking(cache_path):
    with twincache.Loader(cache_path, batch_size=8, threads=1, layout="compact") as L:
        b = L.next_batch()
        ex = b._expander
        for nb in (False, True):
            _SpyTensor.calls.clear()
            cbuf = torch.empty(ex.bytes, dtype=torch.uint8).as_subclass(_SpyTensor)
            compact.stage(ex, b._source_tensor(), b.used_bytes, b.n_cols, cbuf,
                          ex.new_dense(torch.device("cpu")), non_blocking=nb)
            assert _SpyTensor.calls and _SpyTensor.calls[0].get("non_blocking") is nb


def test_one_kept_batch_costs_one_slot(cache_path):
    with twincache.Loader(cache_path, batch_size=8, threads=1, slots=2, shuffle=False) as L:
        first = next(iter(L))  # kept for the whole epoch, as a leftover variable would be
        keep = first.base.clone()
        n = sum(1 for _ in L)
        assert n == len(L) - 1
        assert torch.equal(first.base, keep)  # its bytes were never refilled


def test_smallest_ring_runs_a_for_loop(cache_path):
    with twincache.Loader(cache_path, batch_size=32, threads=1, slots=1, seed=2) as L:
        ids = [i for b in L for i in b.graph_id[:b.n_graphs].tolist()]
    assert sorted(ids) == list(range(600))


def test_many_held_then_released(cache_path):
    """Holding more batches than slots works (each kept one costs its slab);
    the stream is the same as a plain run's."""
    with twincache.Loader(cache_path, batch_size=8, threads=1, slots=2, seed=4) as L:
        held = [L.next_batch() for _ in range(6)]
        ids = [h.graph_id.tolist() for h in held]
        b = L.next_batch()
        assert b.seq == 6 and [h.graph_id.tolist() for h in held] == ids
        del held, b
        rest = [b.seq for b in L]
    with twincache.Loader(cache_path, batch_size=8, threads=1, seed=4) as R:
        want = [b.graph_id.tolist() for b in R]
    assert ids == want[:6] and rest == list(range(7, len(want)))


def test_too_many_held_names_what_is_held(cache_path, monkeypatch):
    """When a kept batch cannot be given its own memory (no memory), the
    error says which batches are held."""
    with twincache.Loader(cache_path, batch_size=8, threads=1, slots=2, shuffle=False) as L:
        a, b = L.next_batch(), L.next_batch()
        monkeypatch.setattr(_capi, "loader_detach", lambda h, p: _capi.ENOMEM)
        with pytest.raises(twincache.TooManyHeld) as e:
            L.next_batch()
        assert "seq 0" in str(e.value) and "seq 1" in str(e.value)
        monkeypatch.undo()
        del a
        assert L.next_batch().seq == 2


def test_no_gc_collect_on_a_full_ring(cache_path, monkeypatch):
    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    with twincache.Loader(cache_path, batch_size=8, threads=1, slots=1, epochs=1) as L:
        kept = next(iter(L))
        assert sum(1 for _ in L) == len(L) - 1
        del kept
    assert calls == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_copy_then_release(cache_path):
    """The real thing: copies queued from pinned batches, each batch dropped
    at once, the GPU kept busy; every copy equals the host batch."""
    with twincache.Loader(cache_path, batch_size=32, seed=1, epochs=1) as H:
        want = [b.base.clone() for b in H]
    with twincache.Loader(cache_path, batch_size=32, seed=1, epochs=1, slots=2) as L:
        assert L.pin_memory
        got = []
        for b in L:
            x = b.base.to("cuda", non_blocking=True)
            del b
            torch.cuda._sleep(2_000_000)  # a busy stream: the copy completes late
            got.append(x)
        torch.cuda.synchronize()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w)


@pytest.mark.parametrize("output", ["numpy", "torch"])
def test_an_array_alone_holds_its_batch(cache_path, output):
    with twincache.Loader(cache_path, batch_size=8, threads=1, slots=2, shuffle=False,
                          output=output) as L:
        x = L.next_batch().base  # the Batch is gone at once; the array keeps the slot
        keep = np.array(x)
        for _ in range(5):
            L.next_batch()
        assert np.array_equal(np.asarray(x), keep)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_expand_then_release(cache_path):
    """expand("cuda") (non_blocking=False) has copied when it returns: the
    slot released at once and refilled, the device batch is still right."""
    kw = dict(batch_size=32, seed=1, epochs=1, threads=2, slots=2)
    with twincache.Loader(cache_path, **kw) as D:
        want = [b.inter.clone() for b in D]
    with twincache.Loader(cache_path, layout="compact", **kw) as L:
        got = []
        for b in L:
            torch.cuda._sleep(2_000_000)  # a busy stream
            got.append(b.expand("cuda").inter)
            b.release()
        torch.cuda.synchronize()
    for g, w in zip(got, want):
        assert torch.equal(g.cpu(), w)
