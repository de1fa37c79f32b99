"""twincache.Loader: the C batch loader as a Python iterable (and a
torch.utils.data.IterableDataset when torch is installed).

Zero-copy: a batch's arrays are numpy views / torch tensors on the slot's
slab, the memory the C decode threads wrote (twincache.batch says what every
field means and how long it lives; twincache._slots how the memory is held).

Epochs: one `for batch in loader` runs to the end of the current epoch (as a
DataLoader does); the next `for` continues with the next epoch, until the
`epochs` option (0 = endless) is spent. The stream is a pure function of the
options and the batch number, so set_epoch(e) is not needed; it is supported
and jumps to the first batch of epoch e. state_dict()/load_state_dict()
resume exactly, at the same world size or another (elastic: the state is a
point of the global order; twincache._state lists the keys). Where each
epoch starts and ends comes from the C stream plan, never recomputed here.

The pieces, one concern each: _args (argument types), _ranks (rank, world
size, local rank), _slots (the native handle and the memory lifetime), batch
(the views), _device (device staging), _state (resume state)."""
import ctypes
import numbers
import os
import warnings

from . import _args, _capi as C, _device, _state
from . import compact as _compact
from ._ranks import default_rank_world
from ._slots import Core, Slab, fork_generation
from .batch import Batch, Views
from .cache import Closable, check_path
from .errors import Closed, Error, InvalidArgument, TooManyHeld, check

try:
    import torch
    _BASES = (torch.utils.data.IterableDataset,)
except ImportError:  # numpy-only use
    torch = None
    _BASES = ()

__all__ = ["Loader", "Batch", "default_rank_world"]

_CORRUPT = {"fail": 0, "skip": 1}
_LAYOUTS = {"dense": C.LAYOUT_DENSE, "compact": C.LAYOUT_COMPACT}


def _cuda_usable():
    return torch is not None and torch.cuda.is_available()


def _mixture_weights(path, weights):
    """None for one source; for a mixture (path a list or tuple of paths)
    the weights as floats, one per path (their values are C's check)."""
    if not isinstance(path, (list, tuple)):
        if weights is not None:
            raise InvalidArgument("weights needs a list of paths (a mixture); one path reads one source")
        return None
    if weights is None:
        raise InvalidArgument("a list of paths is a mixture: give weights=[...], one per path")
    if not isinstance(weights, (list, tuple)) or len(weights) != len(path):
        raise InvalidArgument(f"weights must be a list of {len(path)} numbers, one per path, got {weights!r}")
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            raise InvalidArgument(f"weights must be numbers, got {w!r}")
    return [float(w) for w in weights]


def _worlds_of(paths):
    """The kind of worlds the caches at `paths` hold: "twin", "independent"
    (twincache-gen --worlds, FORMAT.md 3.9), "observed" (imported) or
    "mixed". A path that does not open whole (local mode: a node's folder
    holds only its shards of a set) is asked through any of its shards, which
    share the set's config; "unknown" when none opens."""
    from .cache import Cache
    kinds = set()
    for p in paths:
        tries = [p]
        try:
            tries += sorted(os.path.join(p, d) for d in os.listdir(p) if d.startswith("shard-"))
        except OSError:
            pass
        for t in tries:
            try:
                with Cache(t) as c:
                    kinds.add(c.worlds)
                break
            except Error:
                continue
        else:
            return "unknown"
    return kinds.pop() if len(kinds) == 1 else "mixed"


class Loader(*_BASES, Closable):
    """Batches of a cache (or of a set of shards: the whole cache's batches),
    decoded by C threads into pre-allocated slots.

    Loader(path, batch_size=32, epochs=1, shuffle=True, seed=0, rank=None,
           world_size=None, threads=2, drop_last=False, index_range=None,
           corrupt="fail", device=None, output=None, slots=0, pin_memory=None,
           layout="dense", samples="stored", rows=None, resample_every=1,
           withhold_targets=False, buckets=False, local=0)

    rank/world_size: None = twincache.launch_ranks(): torch.distributed when
    initialised, else torchrun's RANK/WORLD_SIZE, else Slurm's SLURM_PROCID/
    SLURM_NTASKS, else 0/1. Rank r of W takes every
    W-th batch of the global stream. index_range=(begin, end) reads graphs
    [begin, end) only (end None or 0 = all committed). corrupt: "fail" (raise
    Corrupt) or "skip" (refill from the next graph; skipped (index, status)
    pairs in loader.corrupt). device: None or "cpu" (host batches), "cuda",
    "cuda:N" or a torch.device (twincache._device: an index-less CUDA device
    is LOCAL_RANK's GPU, resolved once here; batches are ready on the stream
    current when they are taken, batch.record_stream(s) for another).
    output: "torch" (default when torch is installed) or "numpy".
    Bool options (shuffle, drop_last, withhold_targets, pin_memory) take True,
    False or numpy's bools; integer options take int or numpy integers, never
    a bool. pin_memory: None = pinned when CUDA is usable. slots: ring depth (0 =
    the C default, 2*threads+2): how many batches are decoded ahead. A batch
    you keep costs one slab of memory, never the ring; 1 works.
    layout: "dense" (default) or "compact" (twincache.compact): the C loader
    writes compact slabs (base worlds plus only the changed columns of each
    twin world). Host batches then have the compact fields (zero-copy) and
    batch.expand(device) gives the dense batch. With a CUDA device only the
    used prefix of each compact slab crosses PCIe and the expansion runs on
    the GPU: the batches handed out are dense device batches, as with
    layout="dense" (checked bit for bit on the CPU, with the same torch code).
    samples: "stored" (default: the cache's worlds) or "fresh": new worlds of
    each graph's stored SCM, rows per world (needed; may differ from the
    stored S; the only way to read an SCM-only cache), the same draw for
    resample_every consecutive epochs; the same for any threads, ranks or
    resume (loader/twincache_loader.h).
    weights: with path a list of caches or sets, a mixture
    (twincache_loader_open_mixture in loader/twincache_loader.h): every batch
    holds a fixed count of graphs from each source (largest remainder of
    batch_size * weight, each >= 1), in source order; each source runs
    through its own permutations (one that runs out starts its next one);
    an epoch is one pass over the source of the largest count. graph_id's
    top 8 bits are the source (id >> 56), the rest the graph index
    (id & (2**56 - 1)); the slab is padded to the largest N and K (node_mask, int_mask).
    Dense or compact layout (compact: stored sources of one S), no
    index_range; dense stored worlds of another S pad to the sources'
    largest S (zero rows past a source's own; the batch's rows
    say each world's count), samples="fresh" gives every source `rows`
    rows; samples as a list says it per source (["stored", "fresh"]): the
    fresh ones get `rows` rows and every stored one must store S <= rows
    (padded; a larger S is refused naming the source).
    The counts are whole graphs, so the weights are realised as
    source_counts / batch_size (the property shares): 0.5/0.3/0.2 at
    batch_size 7 are 4, 2, 1 graphs, i.e. 0.571/0.286/0.143; when these
    differ from the weights the Loader says so in a warning at open.
    state_dict()/load_state_dict() work as for one source (any world size).
        withhold_targets: True for unknown-target training: the batch's target
    and value are all zero while the cache still records them (kind and
    int_mask stay); dense layout only.
    buckets: True for size buckets (loader/tc_plan.h, "Buckets"): every epoch
    sorts the graphs by node count (shuffled within each count), cuts them
    into global batches (batch_size x world_size) and shuffles their order,
    so each step's batches hold graphs of about the same N on every rank.
    batch.nodes is the batch's own largest N; batch.trimmed() gives the
    dense fields cut to it, so a model pays for the batch's N, not the
    cache's. Every graph still once per epoch, equal ranks; the state
    records it (resume with the same batch_size x world_size, any world
    size). One source only; the loader reads every frame's header at open.
    local: M >= 1 for local mode (loader/tc_plan.h, "Local mode"; 0 = off):
    the W ranks are M nodes of W/M consecutive ranks, node k = rank //
    (W/M) reads path as its part of a set, exactly the shards k, k+M, ...
    (its local disk), and across all ranks every graph is read once per
    epoch, every rank the same number of full batches (padding valid=False).
    The order is not the non-local one; index_range, buckets and mixtures
    are refused; a state resumes with the same local at any world_size it
    divides (elastic per node).
    Argument types are checked here, ranges by the C loader (InvalidArgument
    with C's message), both before the cache is opened.

    Use from one thread, in the process that opened it (after fork the child
    must open its own; closing or dropping the inherited one there is safe).
    With torch's DataLoader: DataLoader(loader, batch_size=None,
    num_workers=0) (the loader has its own threads)."""

    def __init__(self, path, batch_size=32, epochs=1, shuffle=True, seed=0, rank=None,
                 world_size=None, threads=2, drop_last=False, index_range=None, corrupt="fail",
                 device=None, output=None, slots=0, pin_memory=None, layout="dense",
                 samples="stored", rows=None, resample_every=1, withhold_targets=False,
                 weights=None, buckets=False, local=0):
        self._core = None
        self.batch_size = _args.integer("batch_size", batch_size)
        self.epochs = _args.integer("epochs", epochs)
        self.seed = _args.integer("seed", seed, _args.U64)
        self.threads = _args.integer("threads", threads)
        self.slots = _args.integer("slots", slots)
        if rank is None or world_size is None:
            r, w = default_rank_world()
            rank = r if rank is None else rank
            world_size = w if world_size is None else world_size
        self.world_size = _args.integer("world_size", world_size)
        self.rank = _args.integer("rank", rank)
        self.shuffle = _args.flag("shuffle", shuffle)
        self.drop_last = _args.flag("drop_last", drop_last)
        self.index_range = _args.index_range(index_range)
        self.corrupt_policy = _args.choice("corrupt", corrupt, tuple(_CORRUPT))
        if output is None:
            output = "torch" if torch is not None else "numpy"
        self.output = _args.choice("output", output, ("torch", "numpy"))
        if output == "torch" and torch is None:
            raise InvalidArgument("output='torch' needs PyTorch installed (or use output='numpy')")
        dev = _device.resolve(device, current=None if _cuda_usable() else 0)
        if dev is not None and getattr(dev, "type", "cpu") == "cuda":
            if not _cuda_usable():
                raise InvalidArgument(f"device={device!r} but CUDA is not usable here "
                                      "(torch.cuda.is_available() is False); use device=None")
            if output != "torch":
                raise InvalidArgument("a CUDA device gives torch tensors: use output='torch'")
        self.device = dev
        self.batch_layout = _args.choice("layout", layout, tuple(_LAYOUTS))
        if isinstance(samples, (list, tuple)):  # a mixture's, per source
            if weights is None or len(samples) != len(path):
                raise InvalidArgument("samples as a list names each source of a mixture (Loader([a, b], "
                                      f"weights=..., samples=['stored', 'fresh'])), got {samples!r}")
            self.samples = [_args.choice("samples", s, ("stored", "fresh")) for s in samples]
        else:
            self.samples = _args.choice("samples", samples, ("stored", "fresh"))
        self.rows = _args.integer("rows", 0 if rows is None else rows)
        self.resample_every = _args.integer("resample_every", resample_every)
        self.withhold_targets = _args.flag("withhold_targets", withhold_targets)
        self.buckets = _args.flag("buckets", buckets)
        self.local = _args.integer("local", local)
        if self.withhold_targets and self.batch_layout != "dense":
            raise InvalidArgument("withhold_targets=True needs layout='dense'")
        pin_memory = _cuda_usable() if pin_memory is None else _args.flag("pin_memory", pin_memory)
        if pin_memory and not _cuda_usable():
            raise InvalidArgument("pin_memory=True needs CUDA (torch.cuda.is_available())")
        self.pin_memory = bool(pin_memory)
        self.weights = _mixture_weights(path, weights)
        if self.weights is None:
            self._bpath = check_path(path)
            self.path = os.fsdecode(self._bpath)
        else:
            self._bpath = [check_path(p) for p in path]
            self.path = [os.fsdecode(p) for p in self._bpath]
        self._born = fork_generation()
        self._next_seq = 0  # position of the consumer (after the last batch handed out)
        self._stage = None
        self._inflight = None  # device mode: the device batch copied ahead
        self._deferred = None  # device mode: an error of the prefetch, raised at its own step
        self._views = None
        self._open(None)
        # "twin", "independent" or "mixed" (a mixture of both): every Batch says it
        self.worlds = _worlds_of(self.path if self.weights is not None else [self.path])
        self._views.worlds = self.worlds
        if self.weights is not None:
            self._say_shares()
            self._say_padding()
        if self.device is not None and self.device.type == "cuda":
            self._attach_stage(self.device)

    # ---- opening, state --------------------------------------------------------
    def _options(self):
        o = C.LoaderOptions()
        C.options_init(ctypes.byref(o))
        o.batch_size, o.epochs, o.shuffle, o.seed = self.batch_size, self.epochs, int(self.shuffle), self.seed
        o.rank, o.world_size, o.threads, o.slots = self.rank, self.world_size, self.threads, self.slots
        o.drop_last = int(self.drop_last)
        # Python releases on the consumer thread (explicitly or when a batch's
        # arrays die): a held slot next() needs comes back as EDEADLK at once,
        # and the held batch is detached (twincache._slots) instead of waited for.
        o.release_on_any_thread = 0
        o.index_begin, o.index_end = self.index_range
        o.corrupt_policy = _CORRUPT[self.corrupt_policy]
        o.layout = _LAYOUTS[self.batch_layout]
        if isinstance(self.samples, list):
            fresh = [int(s == "fresh") for s in self.samples]
            o.samples = int(any(fresh))
            o.source_samples = (ctypes.c_int * len(fresh))(*fresh)  # read by the open; the struct keeps it
        else:
            o.samples = int(self.samples == "fresh")
        o.rows, o.resample_every = self.rows, self.resample_every
        o.withhold_targets = int(self.withhold_targets)
        o.buckets = int(self.buckets)
        o.local_nodes = self.local
        return o

    def _open(self, state):
        """Opens a C loader at `state` (None: the start); the current one is
        closed only once the new one is open, so a rejected state leaves the
        Loader as it was."""
        try:
            core = Core(self._bpath, self._options(), state, self.pin_memory, self.weights)
        except InvalidArgument as e:  # C's message, the option named as Python's keyword
            raise InvalidArgument(_args.python_words(e.message), e.code) from None
        self._drop_inflight()
        if self._core is not None:
            self._core.close()
        self._core = core
        lay = core.layout
        self.layout = {f: getattr(lay, f) for f, _ in C.BatchLayout._fields_}
        if self._views is None:
            ex = None
            if self.batch_layout == "compact":
                cl = C.CompactLayout()
                check(C.compact_layout_init(ctypes.byref(cl), ctypes.byref(lay)), "compact layout")
                ex = _compact.Expander(cl, Views(lay, self.output).specs)
            self._views = Views(lay, self.output, ex)
        # where C put the stream (an elastic resume starts a new numbering at 0)
        at = C.LoaderState()
        C.loader_get_state(core.handle, ctypes.byref(at))
        self._next_seq = at.next_seq

    def _attach_stage(self, device):
        """Device batches on `device` (a CUDA device; the tests pass the CPU
        with torch.cuda's streams replaced)."""
        self._stage = _device.DeviceStage(device, self._views.nbytes, self._views.expander)

    @property
    def _expander(self):
        return self._views.expander

    def _drop_inflight(self):
        self._inflight = None
        self._deferred = None
        if self._stage is not None:
            self._stage.reap(wait=True)

    def __len__(self):
        """Batches of one whole epoch for this rank (the epoch a resume at
        another world size lands in may have fewer)."""
        return int(self._core.bpe) if self._core else 0

    @property
    def source_counts(self):
        """A mixture's graphs of each source in every batch (batch_size x
        weight rounded by the largest remainder, each >= 1:
        twincache_loader_mix_counts); None for one source."""
        return self._core.mix_counts if self._core else None

    @property
    def shares(self):
        """A mixture's realised share of each source, source_counts /
        batch_size: the weights as every batch holds them; None for one
        source."""
        c = self.source_counts
        return None if c is None else tuple(x / self.batch_size for x in c)

    def _say_shares(self):
        """A warning when rounding to whole graphs per batch moved the weights."""
        total = sum(self.weights)
        asked = [w / total for w in self.weights]
        if all(abs(a - b) <= 1e-9 for a, b in zip(asked, self.shares)):
            return
        fmt = "/".join
        warnings.warn(f"mixture weights {fmt(f'{a:.3g}' for a in asked)} are realised as "
                      f"{fmt(str(c) for c in self.source_counts)} graphs per batch of {self.batch_size}: "
                      f"shares {fmt(f'{b:.3f}' for b in self.shares)}", stacklevel=3)

    def _say_padding(self):
        """A warning when a mixture's stored sources of fewer samples than the
        batch's S are padded: their rows past their own S are zeros, which a
        model reading every row would take for data (batch rows says each
        world's count)."""
        from .cache import Cache
        S = self.layout["samples"]
        kinds = self.samples if isinstance(self.samples, list) else [self.samples] * len(self.path)
        short = []
        for p, kind in zip(self.path, kinds):
            if kind != "stored":
                continue
            try:
                with Cache(p) as c:
                    s = c.dims["samples"]
            except Exception:  # the loader opened it; a set or shard Cache cannot is not this warning's
                continue
            if s < S:
                short.append(f"{p} (S = {s})")
        if short:
            warnings.warn(f"mixture batches have S = {S}; the worlds of {', '.join(short)} are padded with zero "
                          f"rows past their own S: read batch rows (rows per world), not all S rows",
                          stacklevel=3)

    @property
    def batches_per_epoch(self):
        return len(self)

    @property
    def corrupt(self):
        """(graph index, status) of every corrupt graph skipped so far."""
        return list(self._core.corrupt) if self._core else []

    def state_dict(self):
        """The C loader state as a dict of ints: the position after the last
        batch this Loader handed out, plus what defines the stream, which
        load_state_dict() checks. Keys: seed, next_seq (the next batch,
        counted from origin), magic, version, cache_tag (the cache's
        identity), index_begin, index_end, batch_size, world_size, rank,
        shuffle, drop_last, equal_ranks, bucket, origin, local_nodes. Every rank's state
        after the same number of batches is the same point of the global
        order: save one (e.g. rank 0's) with your checkpoint; it resumes at
        any world size."""
        self._check_open()
        return _state.current(self._core.handle, self._next_seq)

    def load_state_dict(self, state):
        """Continues exactly where state_dict() was taken. Seed, shuffle,
        drop_last, index_range and the cache must be the same; world_size,
        rank and batch_size may differ (elastic: every graph of the epoch is
        still read once, in the same global order; twincache_loader_open in
        loader/twincache_loader.h states the rule). A state C rejects raises
        and leaves this Loader where it was. A state saved before the
        "origin" key existed (version 1) is read too."""
        s = _state.from_dict(state, self.seed)
        self._check_open()
        self._open(s)

    def set_epoch(self, epoch):
        """Positions the stream at the first batch of `epoch` (no-op when it is
        there already). Not needed: the stream moves on to the next epoch by
        itself; this exists for loops written for DistributedSampler."""
        epoch = _args.integer("epoch", epoch, _args.U64)
        if self.epochs and epoch >= self.epochs:
            raise InvalidArgument(f"epoch must be below epochs={self.epochs}, got {epoch}")
        self._check_open()
        s = C.LoaderState()
        check(C.loader_epoch_state(self._core.handle, epoch, ctypes.byref(s)), "set_epoch")
        here = _state.current(self._core.handle, self._next_seq)
        if (s.origin, s.next_seq) != (here["origin"], here["next_seq"]):
            self._open(s)

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
        if fork_generation() != self._born:
            raise InvalidArgument("twincache.Loader was opened in another process (its threads do "
                                  "not survive fork): open it in this process, or use "
                                  "DataLoader(loader, batch_size=None, num_workers=0)")
        if self._core is None:
            raise Closed("twincache.Loader is closed")
        self._core.check_open()

    def _host_batch(self):
        """The next host batch from C, or None at the end of the stream."""
        core = self._core
        rc, addr = core.next()
        if rc:
            if rc == C.END:
                return None
            if rc == C.HELD_STATUS:
                raise TooManyHeld(f"twincache.Loader: batch {self._next_seq} needs a slot that is "
                                  "still held and could not be freed", rc)
            check(rc, f"{self.path}: next batch")
        return self._wrap(core, addr)

    def _wrap(self, core, addr):
        """The Batch of the C batch at `addr`, holding its slot: its arrays
        are views of one Slab array, which carries the Hold."""
        b = core.structs.get(addr) or core.struct(addr)
        views = self._views
        if views.expander is None:
            slab = b.slab
            keep, raw = core.slabs[slab]
            mem = raw.view(Slab)
            hold = mem.hold = core.hold(addr, b.seq, slab)
            batch = views.host(mem, hold, b, slab, keep)
        else:
            cb = core.compact_struct(b.compact)
            if not core.compact_checked:
                core.check_compact(b, cb)
            slab = cb.slab
            keep, raw = core.slabs[slab]
            mem = raw.view(Slab)
            hold = mem.hold = core.hold(addr, b.seq, slab)
            batch = views.host_compact(mem, hold, b, slab, keep, int(cb.n_cols),
                                       int(cb.used_bytes))
        if self._stage is not None:
            batch._source_tensor()
        return batch

    def next_batch(self):
        """The next batch of the stream, or None when the epochs are done.
        Raises the C status as an exception (Corrupt under corrupt='fail')."""
        core = self._core
        if core is None or not core.handle or self._born != fork_generation():
            self._check_open()  # raises
        if self._stage is None:
            b = self._host_batch()
            if b is not None:
                self._next_seq = b.seq + 1
            return b
        # device: hand out the batch copied ahead, start the copy of the next one
        if self._deferred is not None:
            e, self._deferred = self._deferred, None
            raise e
        stage = self._stage
        stage.reap()
        if self._inflight is None:
            host = self._host_batch()
            if host is None:
                return None
            self._inflight = stage.submit(host, self._views.device)
        dev, self._inflight = self._inflight, None
        # the prefetch must not cross the epoch end a `for` loop stops at
        if dev.seq + 1 != C.loader_epoch_end(core.handle, dev.seq):
            try:
                host = self._host_batch()
                if host is not None:
                    self._inflight = stage.submit(host, self._views.device)
            except Error as e:  # raised when its own batch is asked for
                self._deferred = e
        torch.cuda.current_stream(stage.device).wait_event(dev.ready)
        self._next_seq = dev.seq + 1
        return dev

    def __iter__(self):
        """Batches to the end of the current epoch (see the module text)."""
        self._check_open()
        handle = self._core.handle
        total = C.loader_total(handle)
        while True:
            if self._next_seq >= total:
                return
            b = self.next_batch()
            if b is None:
                return
            last = b.seq + 1 == C.loader_epoch_end(handle, b.seq)
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

    # ---- processes, closing -----------------------------------------------------------
    def __reduce_ex__(self, protocol):
        raise InvalidArgument(
            "twincache.Loader cannot be sent to another process (it owns C decode threads and "
            "memory): DataLoader workers (num_workers > 0, fork or spawn) cannot use it. Use "
            "DataLoader(loader, batch_size=None, num_workers=0) — the loader decodes in its "
            "own threads — or open a Loader in each process.")

    def close(self):
        """Stops the decode threads and frees the C loader. Arrays of batches
        still referenced stay valid (their memory is Python's). Idempotent;
        in a forked child it only forgets the parent's loader."""
        if fork_generation() == self._born:
            self._drop_inflight()
        if self._core is not None:
            self._core.close()

    def __repr__(self):
        return (f"twincache.Loader({self.path!r}, batch_size={self.batch_size}, rank={self.rank}/"
                f"{self.world_size}, threads={self.threads}, device={self.device}, "
                f"layout={self.batch_layout!r})")
