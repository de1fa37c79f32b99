"""twincache.Batch: the views of one batch — numpy arrays or torch tensors on
a slot's slab (host batches, zero-copy) or on a device buffer.

The Batch class text lists the fields and their lifetime."""
import numpy as np

from . import compact as _compact
from .errors import InvalidArgument, StaleBatch

try:
    import torch
except ImportError:
    torch = None


class Fields(dict):
    """name -> array of one batch, each view made on first access (a loop that
    reads 3 of the 10 arrays pays for 3). makers: name -> function(slab) that
    makes the view, in slab order (Views). Iteration, keys() and items() list
    every field."""

    __slots__ = ("_makers", "_arg")

    def __init__(self, makers, arg):
        self._makers, self._arg = makers, arg

    def __missing__(self, name):
        v = self[name] = self._makers[name](self._arg)  # KeyError for a name that is no field
        return v

    def __contains__(self, name):
        return name in self._makers

    def get(self, name, default=None):
        return self[name] if name in self._makers else default

    def __iter__(self):
        return iter(self._makers)

    def __len__(self):
        return len(self._makers)

    def keys(self):
        return list(self._makers)

    def items(self):
        return [(n, self[n]) for n in self._makers]

    def values(self):
        return [self[n] for n in self._makers]

    def __repr__(self):
        return "{" + ", ".join(f"{n!r}: ..." for n in self._makers) + "}"


class Trimmed(dict):
    """What Batch.trimmed() returns: name -> array, read as t["base"] or
    t.base alike (an unknown name: KeyError, AttributeError)."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _field(name):
    def get(self):
        try:
            v = self._fields[name]
        except KeyError:
            raise AttributeError(name) from None
        if self._stage is not None:
            self._check_current()
        return v
    return property(get, doc=f"the {name} array (see twincache.batch)")


class Batch:
    """One batch: G graphs padded to N nodes, K interventions, S samples.

    Fields of a dense batch (names and shapes as in loader/twincache_loader.h;
    G graphs padded to N nodes, K interventions, S samples):
    
      base      (G,S,N)   float32  observational rows of each graph's base world
      inter     (G,K,S,N) float32  world k under intervention k. batch.worlds
                                   says which kind: "twin" (row s shares base
                                   row s's noise) or "independent" (world k
                                   draws its own noise: rows of different
                                   worlds are unpaired; FORMAT.md 3.9),
                                   "mixed" for a mixture of both kinds, or
                                   "unknown" in local mode
      target    (G,K,N)   uint8    ONE-HOT mask: 1 on the node(s) intervention k
                                   sets (twincache.Graph.target is the node INDEX)
      value     (G,K,N)   float32  intervention k's value on each of its target
                                   nodes (0 elsewhere); its meaning is kind's
      kind      (G,K)     uint8    0 = do: x_t := value (in standard units with
                                       --standardize/--iscm, like the stored x)
                                   1 = shift: x_t := f_t + noise + value; value in
                                       RAW units, also under --standardize and
                                       --iscm (added before standardising)
                                   2 = noise: x_t := f_t + value * noise; value
                                       is a unitless factor >= 0
                                   3 = soft: t's mechanism redrawn (parameters in
                                       Graph.soft); value is 0, except on a
                                       root (no parents): x_t := f'_t + a *
                                       noise + value, value the root's new
                                       mean in RAW units, a = Graph.soft[k][t]
                                       its noise scale factor (0: factor 1)
                                   (formats/FORMAT.md 3.6 gives every formula)
      adj       (G,N,N)   uint8    adj[g,i,j] = 1 <=> edge i -> j
      node_mask (G,N)     uint8    1 on the graph's real nodes (the rest is padding)
      int_mask  (G,K)     uint8    1 on the graph's real interventions
      graph_id  (G)       uint64   the cache index of each graph (int64 in torch)
      valid     (G)       uint8    0 on graphs that only pad a batch: the repeats
                                   that give every rank the same batch count, and
                                   the empty rows after n_graphs; weigh losses by it
      rows      (G,K+1)   uint32   (int32 in torch) rows each world holds: [g,0] the base world's,
                                   [g,k+1] world k's; S unless the cache stores
                                   fewer (twincache-gen --inter-samples, FORMAT.md
                                   3.10), 0 for padded worlds and graphs. Rows
                                   from it on are zero padding: statistics of a
                                   world read base[g,:rows[g,0]] and
                                   inter[g,k,:rows[g,k+1]]; a twin world's rows
                                   pair with base's first rows
    
    batch.<name> / batch[name] is a torch tensor (output="torch") or a numpy
    array (output="numpy"). batch.numpy[name] is always the zero-copy numpy view
    of the HOST slab: on a device batch (device="cuda") it is {} — the data is on
    the GPU; use batch.<name>.cpu(). Scalars: seq (the batch number in the
    stream), epoch, n_graphs (< G only for a kept last partial batch), nodes
    (the largest N of the batch's graphs: the arrays keep the cache's N, and
    nodes, adjacencies and columns from `nodes` on are zero padding;
    trimmed() cuts the dense fields to it, as Loader(buckets=...) intends).
    
    layout="compact" host batches (batch.layout == "compact") carry the compact
    fields instead (twincache.compact), plus n_cols and used_bytes;
    batch.expand() gives the dense batch.
    
    Lifetime: a host batch holds its slot while the Batch or any of its arrays
    is alive, or until batch.release() / the end of `with batch:`. Keeping one
    for long is fine (it then costs one slab of memory, see twincache._slots).
    After release the arrays still point at the slot, which the loader refills:
    copy what you keep (np.array(batch.base), tensor.clone()). A device batch is
    valid until the next batch is taken (the prefetch then reuses its buffer):
    reading its fields after that raises StaleBatch; clone() what you keep."""

    layout = "dense"
    worlds = "twin"  # or "independent" / "mixed": the cache's kind of worlds (Loader.worlds)
    n_cols = used_bytes = None
    nodes = 0
    _expander = None
    _output = "torch"
    _stage = None  # device batches: (DeviceStage, buffer index, buffer generation)
    ready = None   # device batches: the CUDA event its copy completes at

    def __init__(self, fields, numpy_views, seq, epoch, n_graphs, hold, slab_address, offsets):
        self._fields = fields
        self._numpy = numpy_views  # None: made on first use (torch host batches)
        self.seq, self.epoch, self.n_graphs = seq, epoch, n_graphs
        self._hold = hold
        self.slab_address = slab_address  # host slab (device batches: the device buffer)
        self.offsets = offsets            # name -> byte offset in the slab

    @property
    def numpy(self):
        """name -> the zero-copy numpy view of the host slab ({} on device batches)."""
        v = self._numpy
        if v is None:
            f = self._fields
            v = self._numpy = Fields(self._np_makers, f._arg)
        return v

    def _check_current(self):
        st = self._stage
        if st is not None and st[0].generation[st[1]] != st[2]:
            raise StaleBatch(f"device batch {self.seq} was read after its buffer was reused by a "
                             "later batch: a device batch is valid until the next batch "
                             "is taken; clone() what you keep")

    # the fields of both layouts as properties (faster than __getattr__)
    for _n in ("base", "inter", "target", "value", "kind", "adj", "node_mask", "int_mask",
               "graph_id", "valid", "rows", "n_nodes", "n_inter", "col_first", "col_mask", "cols"):
        locals()[_n] = _field(_n)
    del _n

    def trimmed(self):
        """name -> the dense fields cut to the batch's own N (self.nodes):
        views (no copy) of base[..., :n], inter[..., :n], target, value,
        node_mask [..., :n] and adj[:, :n, :n]; base and inter also cut to
        the most rows a world of the batch holds (max of rows: S unless the
        cache stores fewer, FORMAT.md 3.10), rows itself as it is; the other
        fields as they are. A Trimmed dict: t["base"] and t.base are the
        same array."""
        if self.layout != "dense":
            raise InvalidArgument("trimmed() needs a dense batch (batch.expand() first)")
        n, out = self.nodes, Trimmed()
        r = int(self["rows"].max()) if "rows" in self.keys() else None
        for name in self.keys():
            v = self[name]
            if name == "adj":
                v = v[:, :n, :n]
            elif name in ("base", "inter", "target", "value", "node_mask"):
                v = v[..., :n]
                if name == "base" and r is not None:
                    v = v[:, :r]
                elif name == "inter" and r is not None:
                    v = v[:, :, :r]
            out[name] = v
        return out

    def __getitem__(self, name):
        self._check_current()
        return self._fields[name]

    def keys(self):
        return self._fields.keys()

    def items(self):
        self._check_current()
        return self._fields.items()

    def record_stream(self, stream):
        """Device batches: use this batch on CUDA `stream` too (not only the
        stream that was current when it was taken, on which it is ready): the
        stream waits for the batch's copy, and the copy that later reuses the
        batch's buffer waits for the work queued on `stream` until then."""
        if self._stage is None:
            raise InvalidArgument("record_stream() is for device batches (device='cuda')")
        self._check_current()
        stage, i, _ = self._stage
        stream.wait_event(self.ready)
        stage.users[i].append(stream)

    def expand(self, device=None, output=None, non_blocking=False):
        """A compact batch expanded to the dense layout: a new Batch with the
        dense fields (bit for bit the dense batch the C loader gives for the
        same options), in a new slab on `device` (None = the CPU). Only the
        used prefix of the compact slab is moved (one copy); the expansion
        runs there in torch ops, on the current stream. non_blocking=False:
        the copy is complete on return (the slot may be released at once);
        True: it is queued, and the result keeps this batch (its slot) alive.
        output: "torch" or "numpy" (CPU only); default: the loader's output on
        the CPU, torch elsewhere. Needs torch."""
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
        c = src if dev.type == "cpu" else torch.empty(self.used_bytes, dtype=torch.uint8, device=dev)
        dense = ex.new_dense(dev)
        _compact.stage(ex, src, self.used_bytes, self.n_cols, c, dense,
                       non_blocking=bool(non_blocking))
        fields = ex.dense_fields(dense)
        views = {}
        if dev.type == "cpu":
            views = {n: (t.numpy() if t.dtype not in (torch.int64, torch.int32)
                         else t.numpy().view(np.uint64 if t.dtype == torch.int64 else np.uint32))
                     for n, t in fields.items()}
            if output == "numpy":
                fields = views
        out = Batch(fields, views, self.seq, self.epoch, self.n_graphs, None, dense.data_ptr(),
                    ex.dense_offsets)
        out.nodes, out.worlds = self.nodes, self.worlds
        if non_blocking and dev.type != "cpu":
            out._source = self  # the slot stays held while the copy may still read it
        return out

    def _source_tensor(self):
        """The slab as a uint8 torch tensor (zero-copy; the pinned tensor
        itself when the slots are pinned)."""
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

    def release(self):
        """Gives the slot back now (for a pinned slab: once the copies queued
        on the current stream are done). The arrays stay readable but the
        loader refills them: copy what you keep first. Idempotent."""
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
    dims = {"G": lay.graphs, "N": lay.nodes, "K": lay.inter, "S": lay.samples, "R": lay.inter + 1}
    return tuple(int(dims[c]) for c in code)


def _np_maker(shape, dtype, offset):
    nd = np.ndarray

    def make(mem):
        return nd(shape, dtype, mem, offset)
    return make


def _torch_maker(shape, dtype, offset):
    """torch has no uint64 (and few uint32 ops): graph_id is an int64 view,
    rows an int32 one (counts <= 65535: the same values)."""
    if torch is None:
        return None
    nd, from_numpy = np.ndarray, torch.from_numpy
    if dtype == np.uint64:
        dtype = np.dtype(np.int64)
    elif dtype == np.uint32:
        dtype = np.dtype(np.int32)

    def make(mem):
        return from_numpy(nd(shape, dtype, mem, offset))
    return make


class Views:
    """Per loader, once: how a slab becomes a Batch's arrays — (name, offset,
    shape, numpy dtype, torch dtype, bytes) of every dense array."""

    def __init__(self, lay, output, expander=None):
        from . import _capi as C
        specs = []
        for name, field, dtype, code in C.BATCH_ARRAYS:
            shape = _shape(code, lay)
            dt = np.dtype(dtype)
            nbytes = int(np.prod(shape)) * dt.itemsize
            tdt = None
            if torch is not None:
                tdt = {"float32": torch.float32, "uint8": torch.uint8, "uint64": torch.int64,
                       "uint32": torch.int32}[dtype]
            specs.append((name, int(getattr(lay, field)), shape, dt, tdt, nbytes))
        self.specs = specs
        self.offsets = {sp[0]: sp[1] for sp in specs}
        self.nbytes = int(lay.bytes)
        self.output = output
        self.expander = expander
        self.worlds = "twin"  # the loader's kind of worlds, given to every Batch
        # name -> function(slab) making that array's view, in slab order
        self.np_makers = {sp[0]: _np_maker(sp[2], sp[3], sp[1]) for sp in specs}
        self.torch_makers = {sp[0]: _torch_maker(sp[2], sp[3], sp[1]) for sp in specs}

    def host(self, mem, hold, b, slab, keep):
        """A dense host Batch on `mem` (the slab's uint8 Slab array, which
        carries the hold); its views are made when first read."""
        if self.output == "torch":
            batch = Batch(Fields(self.torch_makers, mem), None, b.seq, b.epoch, b.n_graphs, hold,
                          slab, self.offsets)
            batch._np_makers = self.np_makers
        else:
            views = Fields(self.np_makers, mem)
            batch = Batch(views, views, b.seq, b.epoch, b.n_graphs, hold, slab, self.offsets)
        batch._slab_keep = (keep, mem)
        batch.nodes, batch.worlds = b.nodes, self.worlds
        return batch

    def host_compact(self, mem, hold, b, slab, keep, n_cols, used):
        ex = self.expander
        views = ex.numpy_views(mem, n_cols)
        if self.output == "torch":  # int16/32/64 views of the unsigned arrays
            from_numpy = torch.from_numpy
            fields = {n: from_numpy(v.view(_compact._signed(v.dtype))) for n, v in views.items()}
        else:
            fields = views
        batch = Batch(fields, views, b.seq, b.epoch, b.n_graphs, hold, slab, ex.offsets)
        batch.layout, batch.n_cols, batch.used_bytes = "compact", n_cols, used
        batch._expander, batch._output, batch._slab_keep = ex, self.output, (keep, mem)
        batch.nodes, batch.worlds = b.nodes, self.worlds
        return batch

    def device(self, buf, host):
        """A dense device Batch on device buffer `buf` (uint8 tensor)."""
        fields = {name: buf[off:off + n].view(tdt).view(shape)
                  for name, off, shape, _, tdt, n in self.specs}
        batch = Batch(fields, {}, host.seq, host.epoch, host.n_graphs, None, buf.data_ptr(),
                      self.offsets)
        batch.nodes, batch.worlds = host.nodes, host.worlds
        return batch
