"""layout="compact": zero-copy compact views, the torch expansion equal to
the C loader's dense batch bit for bit (padding, partial batches, K < N,
graphs with fewer interventions than K, shift interventions, N > 64 so two
mask words), order and coverage equal to the C loader's, the device path's
work (copy of the used prefix, expansion into reused buffers) on the CPU,
bad layout arguments, and the CUDA path (skips without a GPU)."""
import ctypes
import os
import subprocess

import numpy as np
import pytest
import torch

import twincache
from twincache import compact as tc_compact

import fake_cuda
from test_loader import c_order, py_order

@pytest.fixture(scope="session")
def gen_exe():
    from conftest import BUILD, program
    return program("twincache-gen", os.path.join(BUILD, "gen", "twincache-gen"))


def _make(gen_exe, tmp_root, name, args):
    p = os.path.join(tmp_root, "compact-" + name)
    if not os.path.isdir(p):
        subprocess.run([gen_exe, "--out", p, "--threads", "2", "--quiet"] + args, check=True)
    return p


@pytest.fixture(scope="session")
def caches(cache_path, gen_exe, tmp_root):
    """name -> cache path. loader: 600 graphs of 3..7 nodes, every node
    intervened (K = N = 7, smaller graphs have fewer interventions than K);
    k_lt_n: 2 random targets of 3..9 nodes, standardised (K = 2 < N = 9);
    shift: shift interventions, 3 targets; wide: 60..70 nodes (two mask
    words per column mask), 3 targets."""
    return {
        "loader": cache_path,
        "k_lt_n": _make(gen_exe, tmp_root, "k-lt-n", [
            "--graphs", "300", "--nodes", "3:9", "--samples", "8", "--targets", "2",
            "--standardize", "--seed", "21"]),
        "shift": _make(gen_exe, tmp_root, "shift", [
            "--graphs", "200", "--nodes", "2:8", "--samples", "5", "--targets", "3",
            "--intervention", "shift", "--value-dist", "uniform", "--seed", "22"]),
        "wide": _make(gen_exe, tmp_root, "wide", [
            "--graphs", "40", "--nodes", "60:70", "--samples", "4", "--targets", "3",
            "--edge-prob", "0.1", "--seed", "23"]),
    }


def dense_bytes(batch, nbytes):
    """The whole dense slab of a batch (fields and the zero gaps between them)."""
    return ctypes.string_at(batch.slab_address, nbytes)


def assert_same_dense(d, e, nbytes):
    """e (an expanded batch) equals d (a C dense batch): every field as
    integer bits (floats as int32), then the whole slab byte for byte."""
    assert (e.seq, e.epoch, e.n_graphs) == (d.seq, d.epoch, d.n_graphs)
    assert set(e.numpy) == set(d.numpy)
    for name, a in d.numpy.items():
        b = e.numpy[name]
        assert a.shape == b.shape and a.dtype == b.dtype, name
        if a.dtype == np.float32:
            a, b = a.view(np.int32), b.view(np.int32)
        assert np.array_equal(a, b), f"batch {d.seq}: field {name} differs"
        t = e[name]
        assert isinstance(t, torch.Tensor) and t.dtype == d[name].dtype and t.shape == d[name].shape
    assert dense_bytes(e, nbytes) == dense_bytes(d, nbytes), f"batch {d.seq}: slab padding differs"


@pytest.mark.parametrize("name", ["loader", "k_lt_n", "shift", "wide"])
@pytest.mark.parametrize("threads", [1, 2])
def test_expand_equals_dense(caches, name, threads):
    kw = dict(batch_size=13, seed=4, epochs=1, threads=threads)
    with twincache.Loader(caches[name], **kw) as D, \
            twincache.Loader(caches[name], layout="compact", **kw) as Cl:
        lay = D.layout
        if name == "k_lt_n":
            assert lay["inter"] < lay["nodes"]
        if name == "wide":
            assert lay["nodes"] > 64
        batches = partial = fewer = stored = 0
        for d, c in zip(D.stream(), Cl.stream()):
            assert c.layout == "compact" and d.layout == "dense"
            e = c.expand()
            assert e.layout == "dense" and e.released  # holds no slot
            assert_same_dense(d, e, lay["bytes"])
            batches += 1
            partial += c.n_graphs < lay["graphs"]
            n_inter = c.numpy["n_inter"][:c.n_graphs]
            fewer += int((n_inter < lay["inter"]).sum())
            stored += c.n_cols
            del d, c, e
        assert batches == len(D) == len(Cl)
        assert partial == 1  # the last batch of the epoch is partial
        assert stored > 0
        if name == "loader":
            assert fewer > 0


def test_compact_zero_copy_views(caches):
    with twincache.Loader(caches["k_lt_n"], batch_size=16, threads=1, seed=2) as L:
        b = next(iter(L))
        lay = L.layout
        G, N, K, S = lay["graphs"], lay["nodes"], lay["inter"], lay["samples"]
        W = (N + 63) // 64
        want = {"base": ((G, S, N), np.float32), "adj": ((G, N, N), np.uint8),
                "kind": ((G, K), np.uint8), "graph_id": ((G,), np.uint64),
                "valid": ((G,), np.uint8), "n_nodes": ((G,), np.uint32),
                "n_inter": ((G,), np.uint32), "target": ((G, K), np.uint16),
                "value": ((G, K), np.float32), "col_first": ((G, K), np.uint32),
                "col_mask": ((G, K, W), np.uint64), "rows": ((G, K + 1), np.uint32)}
    with twincache.Loader(caches["k_lt_n"], batch_size=16, threads=1, seed=2,
                          layout="compact") as L:
        b = next(iter(L))
        want["cols"] = ((b.n_cols, S), np.float32)
        assert set(b.keys()) == set(want) == set(b.offsets)
        assert b.slab_address % 64 == 0 and b.n_cols > 0
        assert b.used_bytes == L._expander.used_bytes(b.n_cols) <= L._expander.bytes
        for name, (shape, dt) in want.items():
            v, t = b.numpy[name], b[name]
            assert v.shape == shape and v.dtype == dt, name
            assert v.ctypes.data == b.slab_address + b.offsets[name], name
            assert t.data_ptr() == b.slab_address + b.offsets[name], name
            assert t.shape == shape and t.element_size() == v.itemsize, name
            assert np.array_equal(t.numpy().view(dt), v), name
        assert b.offsets["cols"] + b.n_cols * S * 4 <= b.used_bytes
        assert b.base.is_pinned() == torch.cuda.is_available()
        # the stored columns account for every set mask bit of a real intervention
        bits = np.unpackbits(b.numpy["col_mask"].view(np.uint8), bitorder="little")
        bits = bits.reshape(G, K, W * 64)[:, :, :N]
        real = np.arange(K)[None, :] < b.numpy["n_inter"][:, None]
        assert int(bits[real].sum()) == b.n_cols


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("opts", [dict(batch=32, shuffle=1, seed=5, epochs=2),
                                  dict(batch=50, shuffle=0, epochs=1, drop_last=1),
                                  dict(batch=7, shuffle=1, seed=1, epochs=1, rank=1, world=3)])
def test_compact_order_equals_c(cache_path, order_dump_exe, threads, opts):
    want = c_order(order_dump_exe, cache_path, threads=threads, **opts)
    kw = dict(batch_size=opts["batch"], shuffle=bool(opts["shuffle"]), seed=opts.get("seed", 0),
              epochs=opts["epochs"], drop_last=bool(opts.get("drop_last", 0)), threads=threads,
              rank=opts.get("rank", 0), world_size=opts.get("world", 1), layout="compact")
    with twincache.Loader(cache_path, **kw) as L:
        assert py_order(L) == want
    assert len(want) > 3


def test_device_stage_on_cpu(caches):
    """The device path's work (compact.stage: one copy of the used prefix,
    then the expansion) with CPU tensors standing in for the two device
    buffer pairs, reused across batches and filled with junk first: nothing
    stale leaks from one batch into the next."""
    kw = dict(batch_size=11, seed=9, epochs=1, threads=2)
    with twincache.Loader(caches["loader"], **kw) as D, \
            twincache.Loader(caches["loader"], layout="compact", **kw) as Cl:
        ex = Cl._expander
        cbufs = [torch.full((ex.bytes,), 0xA5, dtype=torch.uint8) for _ in range(2)]
        dense = [ex.new_dense() for _ in range(2)]
        for t in dense:
            for name, off, _, _, _, n in ex.dense_specs:
                t[off:off + n].fill_(0x5A)
        for i, (d, c) in enumerate(zip(D.stream(), Cl.stream())):
            out = tc_compact.stage(ex, c._source_tensor(), c.used_bytes, c.n_cols,
                                   cbufs[i % 2], dense[i % 2])
            assert out is dense[i % 2]
            if i < 2:  # the copy moved the used prefix only (later: stale bytes beyond it)
                assert bool((cbufs[i % 2][c.used_bytes:] == 0xA5).all())
            got = ex.dense_fields(out)
            for name, t in got.items():
                assert torch.equal(t, d[name]), (d.seq, name)
            assert out.numpy().tobytes() == dense_bytes(d, D.layout["bytes"])


def test_expand_numpy_output_and_lifetime(caches):
    with twincache.Loader(caches["shift"], batch_size=16, seed=1, threads=1, slots=4,
                          output="numpy", layout="compact") as L:
        b = L.next_batch()
        assert isinstance(b.base, np.ndarray) and b.target.dtype == np.uint16
        e = b.expand()
        assert isinstance(e.inter, np.ndarray) and e.inter.dtype == np.float32
        assert isinstance(b.expand(output="torch").inter, torch.Tensor)
        keep = e.inter.copy()
        b.release()  # the expansion is its own memory: it outlives the slot
        for _ in range(6):
            L.next_batch()
        assert np.array_equal(keep.view(np.int32), e.inter.view(np.int32))
        held = [L.next_batch() for _ in range(4)]  # compact batches hold slots too ...
        kept = [h.cols.copy() for h in held]
        held.append(L.next_batch())  # ... and a kept one costs its own slab, not the ring
        for h, k in zip(held, kept):
            assert np.array_equal(h.cols, k)
        with pytest.raises(twincache.InvalidArgument):
            b.expand(output="jax")
    with twincache.Loader(caches["shift"], batch_size=16, threads=1) as L:
        with pytest.raises(twincache.InvalidArgument):
            next(iter(L)).expand()  # a dense batch


def test_compact_resume(caches):
    kw = dict(batch_size=24, epochs=2, seed=11, threads=2, layout="compact")
    with twincache.Loader(caches["k_lt_n"], **kw) as L:
        full = py_order(L)
    with twincache.Loader(caches["k_lt_n"], **kw) as L:
        it = L.stream()
        for _ in range(7):
            next(it)
        state = L.state_dict()
        del it
    with twincache.Loader(caches["k_lt_n"], **kw) as L2:
        L2.load_state_dict(state)
        assert py_order(L2) == full[7:]


def test_bad_layout_checked_before_open(tmp_root):
    missing = os.path.join(tmp_root, "no-such-cache")
    for bad in ["sparse", "Dense", 1, None, b"compact"]:
        with pytest.raises(twincache.InvalidArgument) as e:
            twincache.Loader(missing, layout=bad)
        assert "layout" in str(e.value)


@pytest.mark.parametrize("layout", ["dense", "compact"])
def test_device_stage_logic_on_cpu(caches, monkeypatch, layout):
    """The Loader's device path (_DeviceStage: double buffers, prefetch of
    the next batch, not across an epoch end, host slot held until the copy
    is done) run with the CPU as the "device" and torch.cuda's streams and
    events replaced by no-ops (work on the CPU is done when queued): every
    batch handed out equals the C dense batch while it is the current one."""
    fake_cuda.install(monkeypatch)
    kw = dict(batch_size=13, seed=6, epochs=2, threads=2, slots=4)
    with twincache.Loader(caches["loader"], **kw) as D, \
            twincache.Loader(caches["loader"], layout=layout, **kw) as L:
        L._attach_stage(torch.device("cpu"))
        seen = 0
        for epoch in range(2):
            for d, b in zip(D, L):
                assert b.layout == "dense" and b.seq == d.seq and b.n_graphs == d.n_graphs
                assert b.slab_address in [t.data_ptr() for t in L._stage.buffers]
                for name, t in d.items():
                    assert torch.equal(b[name], t), (b.seq, name)
                seen += 1
            assert L._next_seq == (epoch + 1) * len(L)
        assert seen == 2 * len(D) and list(L) == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_compact_equals_dense(caches):
    for name in ("loader", "k_lt_n", "wide"):
        kw = dict(batch_size=13, seed=3, epochs=1, threads=2)
        with twincache.Loader(caches[name], **kw) as D:
            want = [(b.seq, b.n_graphs, {n: t.clone() for n, t in b.items()}) for b in D]
        with twincache.Loader(caches[name], device="cuda", layout="compact", **kw) as L:
            got = []
            for b in L:
                assert b.base.is_cuda and b.layout == "dense"
                got.append((b.seq, b.n_graphs, {n: t.cpu() for n, t in b.items()}))
        assert [g[:2] for g in got] == [w[:2] for w in want]
        for g, w in zip(got, want):
            for n in w[2]:
                assert torch.equal(g[2][n], w[2][n]), (name, g[0], n)
        # the explicit expansion of a host compact batch onto the GPU
        with twincache.Loader(caches[name], layout="compact", **kw) as Cl:
            c = next(iter(Cl))
            e = c.expand(device="cuda")
            for n in want[0][2]:
                assert torch.equal(e[n].cpu(), want[0][2][n]), (name, n)
