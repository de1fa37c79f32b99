"""twincache.Loader: the C batch loader as a Python iterable (and a
torch.utils.data.IterableDataset when torch is installed).

Zero-copy: a batch's arrays are numpy views / torch tensors on the slot's
slab, the memory the C decode threads wrote. The slab memory is allocated by
Python (through the C loader's alloc/free callbacks: pinned by torch when CUDA
is usable, numpy otherwise), so an array never dangles: it keeps its memory
alive even after the loader is closed.

Lifetime of a batch: its slot stays held while the Batch object or any of its
arrays or tensors is alive, or until batch.release() / the end of
`with batch:`. After release the arrays still point at the slot, which the
loader refills: copy what you keep (np.array(batch.base), tensor.clone()).
When every slot is held, the next batch raises TooManyHeld (never hangs).

Epochs: one `for batch in loader` runs to the end of the current epoch (as a
DataLoader does); the next `for` continues with the next epoch, until the
`epochs` option (0 = endless) is spent. The stream is a pure function of the
options and the batch number, so set_epoch(e) is not needed; it is supported
and jumps to the first batch of epoch e. state_dict()/load_state_dict()
resume exactly (the C loader state: the position and what defines the stream).
"""
import ctypes
import gc
import os
import threading

import numpy as np

from . import _capi as C
from . import compact as _compact
from .cache import Closable, check_path
from .errors import Closed, InvalidArgument, TooManyHeld, check, error_from_status

try:
    import torch
    _Base = torch.utils.data.IterableDataset
except ImportError:  # numpy-only use
    torch = None
    _Base = object

_CORRUPT = {"fail": 0, "skip": 1}
_LAYOUTS = {"dense": C.LAYOUT_DENSE, "compact": C.LAYOUT_COMPACT}


def _cuda_usable():
    return torch is not None and torch.cuda.is_available()


def default_rank_world():
    """(rank, world_size): torch.distributed when initialised, else the
    RANK / WORLD_SIZE environment variables, else (0, 1)."""
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    try:
        return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    except ValueError as e:
        raise InvalidArgument(f"RANK/WORLD_SIZE environment variables must be integers ({e})")


class _Memory:
    """A slot's slab region; numpy arrays made from it keep it (and through
    it the hold of the batch) alive. __array_interface__ makes np.asarray()
    record this object as the array's base."""

    def __init__(self, addr, nbytes, keep, hold):
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                    "data": (addr, False), "version": 3}
        self.keep = keep  # the Python object owning the bytes (ndarray / pinned tensor)
        self.hold = hold  # releases the slot when the last array dies


class _Hold:
    """One batch's claim on its slot. Released once: explicitly, or when the
    last reference (a Batch, an array, a tensor) goes away."""

    __slots__ = ("core", "ptr", "released", "__weakref__")

    def __init__(self, core, ptr):
        self.core, self.ptr, self.released = core, ptr, False

    def release(self):
        if not self.released:
            self.released = True
            self.core.release(self.ptr)

    def __del__(self):
        try:
            self.release()
        except Exception:  # interpreter shutdown
            pass


class _Core:
    """One open C loader and the Python-owned memory of its slots."""

    def __init__(self, bpath, opts, state, pin):
        # re-entrant: a batch dropped by the garbage collector while this
        # thread is inside release/close releases through here again
        self.lock = threading.RLock()
        self.handle = ctypes.c_void_p()
        self.slabs = {}  # aligned address -> (keep object, numpy uint8 view of the slab)
        self.pin = pin
        # the callbacks must outlive the C loader: they are attributes of this core
        self._alloc_cb = C.ALLOC_FN(self._alloc)
        self._free_cb = C.FREE_FN(self._free)
        opts.alloc, opts.free = self._alloc_cb, self._free_cb
        self.corrupt = []  # (index, status) of skipped graphs
        self.compact_checked = False
        self._corrupt_cb = C.CORRUPT_FN(self._on_corrupt)
        opts.on_corrupt = self._corrupt_cb
        rc = C.loader_open(bpath, ctypes.byref(opts), ctypes.byref(state) if state else None,
                           ctypes.byref(self.handle))
        if rc < 0:
            raise error_from_status(rc, os.fsdecode(bpath))
        self.layout = C.loader_layout(self.handle).contents
        self.bpe = C.loader_bpe(self.handle)

    def _alloc(self, nbytes, user):
        try:
            if self.pin:
                keep = torch.empty(nbytes + 64, dtype=torch.uint8, pin_memory=True)
                raw = keep.numpy()
            else:
                keep = raw = np.empty(nbytes + 64, dtype=np.uint8)
            addr = raw.ctypes.data
            off = (-addr) % 64
            self.slabs[addr + off] = (keep, raw[off:off + nbytes])
            return addr + off
        except Exception:  # NULL: the C loader reports ENOMEM
            return None

    def _free(self, ptr, user):
        self.slabs.pop(ptr, None)  # arrays still alive keep their own reference

    def check_compact(self, b, cb):
        """Once per loader: the CompactBatch mirror's pointers agree with its
        slab and layout, and the batch's typed views point into that slab
        (see _capi._check_compact_abi)."""
        L, slab = cb.layout, cb.slab
        if slab is None:
            raise ImportError("twincache: a compact batch without a slab: the CompactBatch mirror "
                              "in python/twincache/_capi.py does not match the C header")
        want = [(cb.base, slab + L.base), (cb.cols, slab + L.cols),
                (cb.col_mask, slab + L.col_mask), (b.base, cb.base), (b.graph_id, cb.graph_id)]
        if slab % 64 or any(x != w for x, w in want) or not L.cols <= cb.used_bytes <= L.bytes:
            raise ImportError("twincache: the C compact batch does not match the CompactBatch "
                              "mirror in python/twincache/_capi.py: update it with the C header")
        self.compact_checked = True

    def _on_corrupt(self, index, status, user):
        self.corrupt.append((index, status))  # list.append is atomic under the GIL

    def release(self, ptr):
        with self.lock:
            if self.handle:
                rc = C.loader_release(self.handle, ptr)
                if rc < 0 and rc != C.ESTALE:
                    raise error_from_status(rc, "release")

    def next(self):
        out = ctypes.POINTER(C.Batch)()
        rc = C.loader_next(self.handle, ctypes.byref(out))
        return rc, out

    def close(self):
        with self.lock:
            h, self.handle = self.handle, ctypes.c_void_p()
            if h:  # releases arriving during the C close (free callbacks, GC) see no handle
                C.loader_close(h)


class Batch:
    """One batch: G graphs padded to N nodes, K interventions, S samples.

    Fields (names and shapes as in loader/twincache_loader.h):
      base (G,S,N) float32, inter (G,K,S,N) float32, target (G,K,N) uint8,
      value (G,K,N) float32, kind (G,K) uint8, adj (G,N,N) uint8,
      node_mask (G,N) uint8, int_mask (G,K) uint8, graph_id (G) uint64
      (int64 as a torch tensor).
    batch.<name> / batch[name] is a torch tensor (output="torch"; on the GPU
    with device="cuda") or a numpy array (output="numpy"); batch.numpy[name]
    is always the zero-copy numpy view of the host slab (None on a device
    batch whose host slot went back to the loader).
    Scalars: seq, epoch, n_graphs (< G only for a kept last partial batch).

    layout="compact" host batches (batch.layout == "compact") have the
    compact fields instead (twincache.compact: base, adj, kind, graph_id,
    valid, n_nodes, n_inter, target (G,K), value (G,K), col_first, col_mask,
    cols (n_cols,S); torch views of uint16/32/64 arrays are int16/32/64),
    plus n_cols and used_bytes; batch.expand() gives the dense batch."""

    layout = "dense"
    n_cols = used_bytes = None
    _expander = None
    _output = "torch"

    def __init__(self, fields, numpy_views, seq, epoch, n_graphs, hold, slab_address, offsets):
        self._fields = fields
        self.numpy = numpy_views
        self.seq, self.epoch, self.n_graphs = seq, epoch, n_graphs
        self._hold = hold
        self.slab_address = slab_address  # host slab (device batches: the device buffer)
        self.offsets = offsets            # name -> byte offset in the slab

    def expand(self, device=None, output=None):
        """A compact batch expanded to the dense layout: a new Batch with the
        dense fields (names, shapes, dtypes of a dense batch; bit for bit the
        dense batch the C loader gives for the same options), in a new slab
        on `device` (None = the CPU). Only the used prefix of the compact
        slab is moved (one copy); the expansion runs there in torch ops, on
        the current stream. output: "torch" or "numpy" (CPU only); default:
        the loader's output on the CPU, torch elsewhere. The result holds no
        slot. Needs torch."""
        if self.layout != "compact":
            raise InvalidArgument("expand() is for layout='compact' batches; this batch is dense")
        if torch is None:
            raise InvalidArgument("expand() needs PyTorch installed")
        dev = torch.device(device) if device is not None else torch.device("cpu")
        if output is None:
            output = self._output if dev.type == "cpu" else "torch"
        if output not in ("torch", "numpy") or (output == "numpy" and dev.type != "cpu"):
            raise InvalidArgument(f"output must be 'torch' (or 'numpy' on the CPU), got {output!r}")
        ex = self._expander
        src = self._source_tensor()
        if dev.type == "cpu":
            c = src
        else:
            c = torch.empty(self.used_bytes, dtype=torch.uint8, device=dev)
        dense = ex.new_dense(dev)
        # blocking: the caller may release this batch's slot right after
        _compact.stage(ex, src, self.used_bytes, self.n_cols, c, dense, non_blocking=False)
        fields = ex.dense_fields(dense)
        views = {}
        if dev.type == "cpu":
            views = {n: (t.numpy() if t.dtype != torch.int64 else t.numpy().view(np.uint64))
                     for n, t in fields.items()}
            if output == "numpy":
                fields = views
        return Batch(fields, views, self.seq, self.epoch, self.n_graphs, None, dense.data_ptr(),
                     ex.dense_offsets)

    def _source_tensor(self):
        """The compact slab as a uint8 torch tensor (zero-copy; the pinned
        tensor itself when the slots are pinned)."""
        t = self.__dict__.get("_memory_tensor")
        if t is None:
            keep, mem = self._slab_keep
            if isinstance(keep, torch.Tensor):
                start = self.slab_address - keep.data_ptr()
                t = keep[start:start + mem.nbytes]
            else:
                t = torch.from_numpy(mem)
            self._memory_tensor = t
        return t

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields")
        if fields is not None and name in fields:
            return fields[name]
        raise AttributeError(name)

    def __getitem__(self, name):
        return self._fields[name]

    def keys(self):
        return self._fields.keys()

    def items(self):
        return self._fields.items()

    def release(self):
        """Gives the slot back now. The arrays stay readable but the loader
        refills them: copy what you keep first. Idempotent."""
        if self._hold is not None:
            self._hold.release()

    @property
    def released(self):
        return self._hold is None or self._hold.released

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self):
        return f"<twincache.Batch seq={self.seq} epoch={self.epoch} graphs={self.n_graphs}>"


def _shape(code, lay):
    dims = {"G": lay.graphs, "N": lay.nodes, "K": lay.inter, "S": lay.samples}
    return tuple(int(dims[c]) for c in code)


class _DeviceStage:
    """device="cuda": each host slab goes to the GPU with ONE non_blocking
    copy on a dedicated stream into one of two device buffers. The batch
    handed out is one copy behind the batch being copied, so the next copy
    overlaps the caller's compute. Before a buffer is overwritten, the copy
    stream waits on an event recorded on the caller's (compute) stream when
    the next-but-one batch was asked for: all work the caller queued on the
    old batch comes before it. So a device batch is valid until the next batch
    is taken, in stream order: work queued on it before asking for the next
    one is safe (as for a C batch until the next next()); clone() what you
    keep longer. The host slot is held until its copy is done.

    layout="compact" (expander given): the copy moves only the used prefix of
    the compact slab into one of two compact device buffers, and the
    expansion (twincache.compact, the same torch code the CPU tests check
    bit for bit) writes the paired dense device buffer, both on the copy
    stream after the same wait; the caller gets dense device batches."""

    def __init__(self, device, nbytes, expander=None):
        self.device = torch.device(device)
        self.stream = torch.cuda.Stream(device=self.device)
        self.nbytes = nbytes
        self.expander = expander
        if expander is None:
            self.buffers = [torch.empty(nbytes, dtype=torch.uint8, device=self.device)
                            for _ in range(2)]
        else:  # compact copies at capacity; dense outputs with their gaps zeroed once
            self.cbuffers = [torch.empty(expander.bytes, dtype=torch.uint8, device=self.device)
                             for _ in range(2)]
            self.buffers = [expander.new_dense(self.device) for _ in range(2)]
            torch.cuda.synchronize(self.device)  # the buffers' zeroing is on the default stream
        self.turn = 0
        self.pending = []  # (copy-done event, host batch): host slot held until the copy ends

    def reap(self, wait=False):
        """Drops host batches whose copy is done (wait=True: all of them)."""
        keep = []
        for ev, host in self.pending:
            if wait:
                ev.synchronize()
            elif not ev.query():
                keep.append((ev, host))
        self.pending = keep

    def submit(self, host, make_batch):
        """Starts the copy of host batch `host`; returns (device batch, copy-done event)."""
        i = self.turn
        self.turn ^= 1
        buf = self.buffers[i]
        compute = torch.cuda.current_stream(self.device)
        freed = torch.cuda.Event()
        freed.record(compute)  # everything queued on the buffer's previous batch is before this
        src = host._source_tensor()
        with torch.cuda.stream(self.stream):
            self.stream.wait_event(freed)
            if self.expander is None:
                buf[:src.numel()].copy_(src, non_blocking=True)
            else:  # temporaries of the expansion live and die on this stream
                _compact.stage(self.expander, src, host.used_bytes, host.n_cols,
                               self.cbuffers[i], buf)
            done = torch.cuda.Event()
            done.record(self.stream)
        self.pending.append((done, host))
        dev = make_batch(buf, host)
        return dev, done


class Loader(_Base, Closable):
    """Batches of a cache, decoded by C threads into pre-allocated slots.

    Loader(path, batch_size=32, epochs=1, shuffle=True, seed=0, rank=None,
           world_size=None, threads=2, drop_last=False, index_range=None,
           corrupt="fail", device=None, output=None, slots=0, pin_memory=None,
           layout="dense", samples="stored", rows=None, resample_every=1,
           withhold_targets=False)

    rank/world_size: None = torch.distributed when initialised, else the
    RANK/WORLD_SIZE environment variables, else 0/1. Rank r of W takes every
    W-th batch of the global stream. index_range=(begin, end) reads graphs
    [begin, end) only (end None or 0 = all committed). corrupt: "fail" (raise
    Corrupt) or "skip" (refill from the next graph; skipped (index, status)
    pairs in loader.corrupt). device: None (host batches) or "cuda"/"cuda:N".
    output: "torch" (default when torch is installed) or "numpy".
    pin_memory: None = pinned when CUDA is usable. slots: ring depth
    (0 = 2*threads+2), i.e. how many batches may be held at once.
    layout: "dense" (default) or "compact" (twincache.compact): the C loader
    writes compact slabs (base worlds plus only the changed columns of each
    twin world). Host batches then have the compact fields (zero-copy) and
    batch.expand(device) gives the dense batch. With device="cuda" only the
    used prefix of each compact slab crosses PCIe and the expansion runs on
    the GPU: the batches handed out are dense device batches, as with
    layout="dense". device="cuda" does not switch to compact by itself: the
    compact device path has been checked on the CPU only (the same torch
    code, bit for bit); pass layout="compact" to use it.
    samples: "stored" (default: the cache's worlds) or "fresh": new worlds of
    each graph's stored SCM, rows per world (needed; may differ from the
    stored S; the only way to read an SCM-only cache), the same draw for
    resample_every consecutive epochs; the same for any threads, ranks or
    resume (loader/twincache_loader.h). C checks rows and resample_every.
    withhold_targets: True for unknown-target training: the batch's target
    and value are all zero while the cache still records them (kind and
    int_mask stay); dense layout only.
    Every argument is checked before the cache is opened (InvalidArgument).

    Use from one thread. With torch's DataLoader: DataLoader(loader,
    batch_size=None, num_workers=0) (the loader has its own threads)."""

    def __init__(self, path, batch_size=32, epochs=1, shuffle=True, seed=0, rank=None,
                 world_size=None, threads=2, drop_last=False, index_range=None, corrupt="fail",
                 device=None, output=None, slots=0, pin_memory=None, layout="dense",
                 samples="stored", rows=None, resample_every=1, withhold_targets=False):
        def integer(name, v, lo, hi):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise InvalidArgument(f"{name} must be an int, not {type(v).__name__}")
            if not lo <= int(v) <= hi:
                raise InvalidArgument(f"{name} must be in {lo}..{hi}, got {v}")
            return int(v)

        U32, U64 = 2**32 - 1, 2**64 - 1
        self.batch_size = integer("batch_size", batch_size, 1, 65536)
        self.epochs = integer("epochs", epochs, 0, U32)
        self.seed = integer("seed", seed, 0, U64)
        self.threads = integer("threads", threads, 1, 100)
        self.slots = integer("slots", slots, 0, U32)
        if rank is None or world_size is None:
            r, w = default_rank_world()
            rank = r if rank is None else rank
            world_size = w if world_size is None else world_size
        self.world_size = integer("world_size", world_size, 1, U32)
        self.rank = integer("rank", rank, 0, U32)
        if self.rank >= self.world_size:
            raise InvalidArgument(f"rank must be < world_size ({self.world_size}), got {self.rank}")
        if not isinstance(shuffle, (bool, int, np.integer)):
            raise InvalidArgument(f"shuffle must be a bool, not {type(shuffle).__name__}")
        if not isinstance(drop_last, (bool, int, np.integer)):
            raise InvalidArgument(f"drop_last must be a bool, not {type(drop_last).__name__}")
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        if index_range is None:
            begin, end = 0, 0
        else:
            try:
                begin, end = index_range
            except (TypeError, ValueError):
                raise InvalidArgument(f"index_range must be (begin, end), got {index_range!r}")
            begin = integer("index_range begin", begin, 0, U64)
            end = 0 if end is None else integer("index_range end", end, 0, U64)
            if end and end <= begin:
                raise InvalidArgument(f"index_range ({begin}, {end}) is empty")
        self.index_range = (begin, end)
        if corrupt not in _CORRUPT:
            raise InvalidArgument(f"corrupt must be 'fail' or 'skip', got {corrupt!r}")
        self.corrupt_policy = corrupt
        if output is None:
            output = "torch" if torch is not None else "numpy"
        if output not in ("torch", "numpy"):
            raise InvalidArgument(f"output must be 'torch' or 'numpy', got {output!r}")
        if output == "torch" and torch is None:
            raise InvalidArgument("output='torch' needs PyTorch installed (or use output='numpy')")
        self.output = output
        if device is not None:
            if not isinstance(device, str) or not (device == "cuda" or device.startswith("cuda:")):
                raise InvalidArgument(f"device must be None, 'cuda' or 'cuda:N', got {device!r}")
            if not _cuda_usable():
                raise InvalidArgument(f"device={device!r} but CUDA is not usable here "
                                      "(torch.cuda.is_available() is False); use device=None")
            if output != "torch":
                raise InvalidArgument("device='cuda' gives torch tensors: use output='torch'")
        self.device = device
        if not isinstance(layout, str) or layout not in _LAYOUTS:
            raise InvalidArgument(f"layout must be 'dense' or 'compact', got {layout!r}")
        if layout == "compact" and device is not None and torch is None:
            raise InvalidArgument("layout='compact' with a device needs PyTorch installed")
        self.batch_layout = layout
        if samples not in ("stored", "fresh"):
            raise InvalidArgument(f"samples must be 'stored' or 'fresh', got {samples!r}")
        self.samples = samples
        self.rows = integer("rows", 0 if rows is None else rows, 0, U32)
        self.resample_every = integer("resample_every", resample_every, 0, U32)
        if not isinstance(withhold_targets, bool):
            raise InvalidArgument(f"withhold_targets must be a bool, not {type(withhold_targets).__name__}")
        if withhold_targets and layout != "dense":
            raise InvalidArgument("withhold_targets=True needs layout='dense'")
        self.withhold_targets = withhold_targets
        self._expander = None
        if pin_memory is None:
            pin_memory = _cuda_usable()
        if pin_memory and not _cuda_usable():
            raise InvalidArgument("pin_memory=True needs CUDA (torch.cuda.is_available())")
        self.pin_memory = bool(pin_memory)
        self._bpath = check_path(path)
        self.path = os.fsdecode(self._bpath)
        self._pid = os.getpid()
        self._next_seq = 0  # position of the consumer (after the last batch handed out)
        self._stage = None
        self._inflight = None  # device mode: (device batch, event) copied ahead
        self._core = None
        self._open(None)

    # ---- opening, state --------------------------------------------------------
    def _options(self):
        o = C.LoaderOptions()
        C.options_init(ctypes.byref(o))
        o.batch_size, o.epochs, o.shuffle, o.seed = self.batch_size, self.epochs, int(self.shuffle), self.seed
        o.rank, o.world_size, o.threads, o.slots = self.rank, self.world_size, self.threads, self.slots
        o.drop_last = int(self.drop_last)
        # Python releases on the consumer thread (explicitly or when a batch's
        # arrays die), so a held slot is a certain deadlock: get EDEADLK at once
        # and raise TooManyHeld instead of waiting forever.
        o.release_on_any_thread = 0
        o.index_begin, o.index_end = self.index_range
        o.corrupt_policy = _CORRUPT[self.corrupt_policy]
        o.layout = _LAYOUTS[self.batch_layout]
        o.samples, o.rows, o.resample_every = int(self.samples == "fresh"), self.rows, self.resample_every
        o.withhold_targets = int(self.withhold_targets)
        return o

    def _open(self, state):
        self._drop_inflight()
        if self._core is not None:
            self._core.close()
        self._core = None
        self._core = _Core(self._bpath, self._options(), state, self.pin_memory)
        lay = self._core.layout
        self.layout = {f: getattr(lay, f) for f, _ in C.BatchLayout._fields_}
        self._make_specs(lay)
        if self.batch_layout == "compact" and self._expander is None:
            cl = C.CompactLayout()
            check(C.compact_layout_init(ctypes.byref(cl), ctypes.byref(lay)), "compact layout")
            self._expander = _compact.Expander(cl, self._specs)
        self.slot_count = self.slots or 2 * self.threads + 2
        self._next_seq = state.next_seq if state else 0
        if self.device is not None and self._stage is None:
            self._stage = _DeviceStage(self.device, lay.bytes, self._expander)

    def _drop_inflight(self):
        self._inflight = None
        if self._stage is not None:
            self._stage.reap(wait=True)

    def __len__(self):
        """Batches per epoch for this rank."""
        return int(self._core.bpe) if self._core else 0

    @property
    def batches_per_epoch(self):
        return len(self)

    @property
    def corrupt(self):
        """(graph index, status) of every corrupt graph skipped so far."""
        return list(self._core.corrupt) if self._core else []

    def state_dict(self):
        """The C loader state (twincache_loader_state) as a dict of ints: the
        position after the last batch this Loader handed out, plus what
        defines the stream (batch size, ranks, range, cache identity), which
        load_state_dict() checks."""
        self._check_open()
        s = C.LoaderState()
        C.loader_get_state(self._core.handle, ctypes.byref(s))
        d = {f: int(getattr(s, f)) for f, _ in C.LoaderState._fields_}
        d["next_seq"] = self._next_seq
        return d

    def load_state_dict(self, state):
        """Continues exactly where state_dict() was taken (same options)."""
        keys = {f for f, _ in C.LoaderState._fields_}
        if not isinstance(state, dict) or not (set(state) == keys or set(state) == {"seed", "next_seq"}):
            raise InvalidArgument(f"state must be a dict from state_dict() with keys "
                                  f"{[f for f, _ in C.LoaderState._fields_]}, got {state!r}")
        if state["seed"] != self.seed:
            raise InvalidArgument(f"state is of seed {state['seed']}, this loader's seed is {self.seed}")
        s = C.LoaderState()  # {seed, next_seq} alone (magic 0): position only
        for f in state:
            setattr(s, f, int(state[f]))
        self._check_open()
        self._open(s)

    def set_epoch(self, epoch):
        """Positions the stream at the first batch of `epoch` (no-op when it is
        there already). Not needed: the stream moves on to the next epoch by
        itself; this exists for loops written for DistributedSampler."""
        epoch = int(epoch)
        if epoch < 0 or (self.epochs and epoch >= self.epochs):
            raise InvalidArgument(f"epoch must be in 0..{self.epochs - 1 if self.epochs else 'inf'}")
        seq = epoch * len(self)
        if seq != self._next_seq:
            self.load_state_dict({"seed": self.seed, "next_seq": seq})

    def stats(self):
        """The C loader's counters (twincache_loader_stats) as a dict."""
        s = C.LoaderStats()
        C.loader_get_stats(self._core.handle, ctypes.byref(s))
        d = {f: getattr(s, f) for f, _ in C.LoaderStats._fields_ if not f.startswith("thread_")}
        n = min(s.threads, 64)
        d["thread_graphs"] = list(s.thread_graphs[:n])
        d["thread_busy_ns"] = list(s.thread_busy_ns[:n])
        return d

    # ---- batches -----------------------------------------------------------------
    def _check_open(self):
        if self._core is None or not self._core.handle:
            raise Closed("twincache.Loader is closed")
        if os.getpid() != self._pid:
            raise InvalidArgument("twincache.Loader was opened in another process (its threads do "
                                  "not survive fork): use DataLoader(..., num_workers=0)")

    def _host_batch(self):
        """The next host batch from C, or None at the end of the stream."""
        core = self._core
        rc, out = core.next()
        if rc == C.HELD_STATUS:
            gc.collect()  # batches only kept alive by reference cycles
            if self._stage is not None:
                self._stage.reap(wait=True)
            rc, out = core.next()
            if rc == C.HELD_STATUS:
                raise TooManyHeld(
                    f"twincache.Loader: all {self.slot_count} batch slots are held by batches still "
                    f"referenced, so batch {self._core_seq()} cannot be filled. Drop or release the "
                    f"batches you keep (batch.release(), `with batch:`, del, or copy what you keep: "
                    f"np.array(batch.base) / tensor.clone()), or open the Loader with a larger "
                    f"slots= (now {self.slot_count}).", rc)
        if rc == C.END:
            return None
        check(rc, f"{self.path}: next batch")
        return self._wrap(core, out)

    def _core_seq(self):
        s = C.LoaderState()
        C.loader_get_state(self._core.handle, ctypes.byref(s))
        return s.next_seq

    def _make_specs(self, lay):
        """Per loader, once: (name, offset, shape, numpy dtype, torch dtype, bytes)."""
        specs = []
        for name, field, dtype, code in C.BATCH_ARRAYS:
            shape = _shape(code, lay)
            dt = np.dtype(dtype)
            nbytes = int(np.prod(shape)) * dt.itemsize
            tdt = None
            if torch is not None:
                tdt = {"float32": torch.float32, "uint8": torch.uint8, "uint64": torch.int64}[dtype]
            specs.append((name, int(getattr(lay, field)), shape, dt, tdt, nbytes))
        self._specs = specs
        self._offsets = {sp[0]: sp[1] for sp in specs}
        self._i64 = {sp[0] for sp in specs if sp[3] == np.uint64}

    def _wrap(self, core, out):
        b = out.contents
        if self._expander is not None:
            return self._wrap_compact(core, out, b)
        slab, nbytes = b.slab, self.layout["bytes"]
        hold = _Hold(core, out)
        keep, raw = core.slabs[slab]
        mem = np.asarray(_Memory(slab, nbytes, keep, hold))
        views = {name: np.ndarray(shape, dt, mem, off) for name, off, shape, dt, _, _ in self._specs}
        if self.output == "torch":  # torch has no uint64: graph_id is an int64 view
            from_numpy, i64 = torch.from_numpy, self._i64
            fields = {n: from_numpy(v) if n not in i64 else from_numpy(v.view(np.int64))
                      for n, v in views.items()}
        else:
            fields = views
        batch = Batch(fields, views, b.seq, b.epoch, b.n_graphs, hold, slab, self._offsets)
        batch._slab_keep = (keep, mem)
        if self._stage is not None:
            batch._source_tensor()
        return batch

    def _wrap_compact(self, core, out, b):
        cb = ctypes.cast(b.compact, ctypes.POINTER(C.CompactBatch)).contents
        if not core.compact_checked:
            core.check_compact(b, cb)
        ex = self._expander
        slab, n_cols, used = cb.slab, int(cb.n_cols), int(cb.used_bytes)
        hold = _Hold(core, out)
        keep, raw = core.slabs[slab]
        mem = np.asarray(_Memory(slab, ex.bytes, keep, hold))
        views = ex.numpy_views(mem, n_cols)
        if self.output == "torch":  # int16/32/64 views of the unsigned arrays
            from_numpy = torch.from_numpy
            fields = {n: from_numpy(v.view(_compact._signed(v.dtype))) for n, v in views.items()}
        else:
            fields = views
        batch = Batch(fields, views, b.seq, b.epoch, b.n_graphs, hold, slab, ex.offsets)
        batch.layout, batch.n_cols, batch.used_bytes = "compact", n_cols, used
        batch._expander, batch._output, batch._slab_keep = ex, self.output, (keep, mem)
        return batch

    def _device_batch(self, buf, host):
        fields = {name: buf[off:off + n].view(tdt).view(shape)
                  for name, off, shape, _, tdt, n in self._specs}
        return Batch(fields, {}, host.seq, host.epoch, host.n_graphs, None, buf.data_ptr(),
                     self._offsets)

    def next_batch(self):
        """The next batch of the stream, or None when the epochs are done.
        Raises the C status as an exception (Corrupt under corrupt='fail')."""
        self._check_open()
        if self._stage is None:
            b = self._host_batch()
            if b is not None:
                self._next_seq = b.seq + 1
            return b
        # device: hand out the batch copied ahead, start the copy of the next one
        stage = self._stage
        stage.reap()
        if self._inflight is None:
            host = self._host_batch()
            if host is None:
                return None
            self._inflight = stage.submit(host, self._device_batch)
        dev, done = self._inflight
        self._inflight = None
        # the prefetch must not cross the epoch end a `for` loop stops at
        if (dev.seq + 1) % max(len(self), 1) != 0:
            host = self._host_batch()
            if host is not None:
                self._inflight = stage.submit(host, self._device_batch)
        torch.cuda.current_stream(stage.device).wait_event(done)
        self._next_seq = dev.seq + 1
        return dev

    def __iter__(self):
        """Batches to the end of the current epoch (see the module text)."""
        self._check_open()
        bpe = len(self)
        while True:
            if self.epochs and self._next_seq >= bpe * self.epochs:
                return
            b = self.next_batch()
            if b is None:
                return
            last = bpe == 0 or (b.seq + 1) % bpe == 0
            yield b
            del b
            if last:
                return

    def stream(self):
        """Every remaining batch of every epoch, in one iterator."""
        while True:
            b = self.next_batch()
            if b is None:
                return
            yield b
            del b

    # ---- closing -----------------------------------------------------------------
    def close(self):
        """Stops the decode threads and frees the C loader. Arrays of batches
        still referenced stay valid (their memory is Python's). Idempotent."""
        self._drop_inflight()
        if self._core is not None:
            self._core.close()

    def __repr__(self):
        return (f"twincache.Loader({self.path!r}, batch_size={self.batch_size}, rank={self.rank}/"
                f"{self.world_size}, threads={self.threads}, device={self.device}, "
                f"layout={self.batch_layout!r})")
