"""Device staging: which device a Loader's batches go to, and how they get
there.

resolve() turns device= into a torch.device once, at construction: None (host
batches), "cpu" / torch.device("cpu") (host batches too), "cuda" / "cuda:N" /
torch.device. A CUDA device without an index is LOCAL_RANK's GPU when
torchrun (or another launcher) set LOCAL_RANK, else the current device — so a
Loader built before torch.cuda.set_device() still puts each rank on its own
GPU.

DeviceStage: each host slab goes to the GPU with ONE non_blocking copy on a
dedicated copy stream into one of two device buffers. The batch handed out
is one copy behind the batch being copied, so the next copy overlaps the
caller's compute. A batch is READY ON THE STREAM THAT WAS CURRENT when it was
taken (that stream waits for its copy); batch.record_stream(s) makes it safe
on another stream s too. Before a buffer is overwritten, the copy stream
waits for an event recorded on the caller's current stream (and on every
stream recorded with record_stream) when the next batch was asked for
(whose call starts the copy into the other buffer): all work queued on the
old batch comes first. So a device batch is valid until the next batch is
taken, in stream order — work queued on it before is safe; its fields raise
StaleBatch after that. The host slot is held until its copy is done.

layout="compact" (an expander given): the copy moves only the used prefix
of the compact slab into one of two compact device buffers, and the
expansion (twincache.compact, the same torch code the CPU tests check bit
for bit) writes the paired dense device buffer, both on the copy stream after
the same wait; the caller gets dense device batches."""
from . import compact as _compact
from ._ranks import local_rank
from .errors import InvalidArgument

try:
    import torch
except ImportError:
    torch = None


def resolve(device, current=None):
    """device= as a torch.device (None stays None); see the module text.
    current: the current CUDA device index (looked up when needed)."""
    if device is None:
        return None
    if torch is None:
        if device == "cpu":
            return "cpu"
        raise InvalidArgument(f"device={device!r} needs PyTorch installed")
    if not isinstance(device, (str, torch.device)):
        raise InvalidArgument(f"device must be None, 'cpu', 'cuda', 'cuda:N' or a torch.device, "
                              f"not {type(device).__name__}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError) as e:
        raise InvalidArgument(f"device={device!r} is not a device ({e})")
    if dev.type == "cpu":
        return torch.device("cpu")
    if dev.type != "cuda":
        raise InvalidArgument(f"device must be the CPU or a CUDA device, got {device!r}")
    if dev.index is None:
        idx = local_rank()
        if idx is None:
            idx = torch.cuda.current_device() if current is None else current
        dev = torch.device("cuda", idx)
    return dev


class DeviceStage:
    """Double-buffered copies of host batches to one CUDA device."""

    def __init__(self, device, nbytes, expander=None):
        self.device = torch.device(device)
        self.copy_stream = torch.cuda.Stream(device=self.device)
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
        self.generation = [0, 0]  # per buffer: bumped when a new batch is copied into it
        self.users = [[], []]     # per buffer: streams given by record_stream
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
        """Starts the copy of host batch `host`; returns the device batch."""
        i = self.turn
        self.turn ^= 1
        buf = self.buffers[i]
        freed = []  # everything queued on the buffer's previous batch is before these
        for s in [torch.cuda.current_stream(self.device)] + self.users[i]:
            ev = torch.cuda.Event()
            ev.record(s)
            freed.append(ev)
        self.users[i] = []
        self.generation[i] += 1
        src = host._source_tensor()
        with torch.cuda.stream(self.copy_stream):
            for ev in freed:
                self.copy_stream.wait_event(ev)
            if self.expander is None:
                buf[:src.numel()].copy_(src, non_blocking=True)
            else:  # temporaries of the expansion live and die on this stream
                _compact.stage(self.expander, src, host.used_bytes, host.n_cols,
                               self.cbuffers[i], buf)
            done = torch.cuda.Event()
            done.record(self.copy_stream)
        self.pending.append((done, host))
        dev = make_batch(buf, host)
        dev._stage, dev.ready = (self, i, self.generation[i]), done
        return dev
