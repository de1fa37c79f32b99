"""The native loader handle and the lifetime of its memory.

Core owns one open C loader. The slabs of its slots are Python memory, made
through the C loader's alloc/free hooks (pinned torch tensors when CUDA is
usable, numpy arrays otherwise), so an array never dangles: it keeps its
memory alive even after the slot or the loader is gone.

A batch handed out holds its slot through a Hold, released once: explicitly,
or when the last array / tensor / Batch referring to it goes away. Then:
  - pinned memory under CUDA: the release records an event on the current
    stream (`fence`), and the slot goes back to C only once that event has
    completed, so `x = b.base.to("cuda", non_blocking=True); del b` is safe:
    the copy queued before the release ends before a decode thread refills
    the slab;
  - a batch still referenced when its slot comes round again is detached
    (twincache_loader_detach): its slab becomes Python's alone and the slot
    gets a new one, so a kept batch costs one slab of memory, never the ring.
After fork, a child never calls into the parent's C loader (its threads did
not survive the fork): close and release there only forget the handle."""
import ctypes
import os
import threading

import numpy as np

from . import _capi as C
from .errors import Closed, InvalidArgument, TooManyHeld, error_from_status

try:
    import torch
except ImportError:
    torch = None


# Bumped in every child after fork: "was this opened in another process" is
# then an int compare per call instead of a getpid() system call.
_forks = [0]
os.register_at_fork(after_in_child=lambda: _forks.__setitem__(0, _forks[0] + 1))


def fork_generation():
    return _forks[0]


def cuda_fence():
    """An event recorded on the current CUDA stream (what a queued copy from
    a pinned slab must finish before), or None when CUDA was never used."""
    if torch is None or not torch.cuda.is_initialized():
        return None
    ev = torch.cuda.Event()
    ev.record(torch.cuda.current_stream())
    return ev


class SlotMemory(np.ndarray):
    """A slot's slab as allocated (one per slab). Its own type keeps numpy
    from collapsing a batch's views past the batch's Slab onto it."""


class Slab(np.ndarray):
    """One batch's uint8 view of its slot's slab. Every array of the batch is
    a view of it (numpy stops the base chain here: the next base is a
    SlotMemory), and it carries the batch's Hold: the slot is held while any
    of them is alive."""


class Hold:
    """One batch's claim on its slot (see the module text). rec is the
    Core's record of it: [C batch address, slab address, done, seq], done
    once released or detached."""

    __slots__ = ("core", "rec", "__weakref__")

    def __init__(self, core, rec):
        self.core, self.rec = core, rec

    @property
    def seq(self):
        return self.rec[3]

    @property
    def released(self):
        return self.rec[2]

    @released.setter
    def released(self, v):  # the benchmark's wrap-only loop marks a hold done
        self.rec[2] = v

    def release(self):
        rec = self.rec
        if not rec[2]:
            rec[2] = True
            self.core.release(rec)

    def __del__(self):  # release() inlined: this runs once per batch
        rec = self.rec
        if not rec[2]:
            rec[2] = True
            try:
                self.core.release(rec)
            except Exception:  # interpreter shutdown
                pass


class Core:
    """One open C loader, the Python-owned memory of its slots, the holds of
    the batches handed out and the releases waiting for their copies."""

    def __init__(self, bpath, opts, state, pin, weights=None):
        """bpath: a cache's path (bytes); with weights, a mixture's paths
        (list of bytes, one weight each: twincache_loader_open_mixture)."""
        self.born = _forks[0]
        # re-entrant: a batch dropped by the garbage collector while this
        # thread is inside release/close releases through here again
        self.lock = threading.RLock()
        self.handle = ctypes.c_void_p()
        self.slabs = {}  # aligned address -> (keep object, numpy uint8 view of the slab)
        self.pin = pin
        self.fence = cuda_fence if pin else None
        self.fenced = []  # (event, rec): released, slot given back once the event completed
        self.live = {}  # seq -> rec [address, slab, done, seq] of every batch handed out, not released
        self.structs = {}  # C batch address -> its ctypes mirror (a slot's structs never move)
        self._out = ctypes.c_void_p()  # where next() writes the batch's address
        self._out_ref = ctypes.byref(self._out)
        # the callbacks must outlive the C loader: they are attributes of this core
        self._alloc_cb = C.ALLOC_FN(self._alloc)
        self._free_cb = C.FREE_FN(self._free)
        opts.alloc, opts.free = self._alloc_cb, self._free_cb
        self.corrupt = []  # (index, status) of skipped graphs
        self.compact_checked = False
        self._corrupt_cb = C.CORRUPT_FN(self._on_corrupt)
        opts.on_corrupt = self._corrupt_cb
        at = ctypes.byref(state) if state else None
        if weights is None:
            rc = C.loader_open(bpath, ctypes.byref(opts), at, ctypes.byref(self.handle))
        else:
            n = len(bpath)
            rc = C.loader_open_mixture((C.cstr * n)(*bpath), (ctypes.c_double * n)(*weights), n,
                                       ctypes.byref(opts), at, ctypes.byref(self.handle))
        if rc < 0:
            from .cache import open_error
            from .errors import error_from_status
            if weights is not None:  # C's message names the source
                raise error_from_status(rc, "mixture")
            raise open_error(rc, os.fsdecode(bpath))
        self.layout = C.loader_layout(self.handle).contents
        self.bpe = C.loader_bpe(self.handle)
        n = C.loader_mix_counts(self.handle, None, 0)  # a mixture's graphs of each source per batch
        counts = (C.u32 * max(n, 1))()
        C.loader_mix_counts(self.handle, counts, n)
        self.mix_counts = tuple(int(c) for c in counts[:n]) if n else None

    # ---- memory ----------------------------------------------------------------
    def _alloc(self, nbytes, user):
        try:
            if self.pin:
                keep = torch.empty(nbytes + 64, dtype=torch.uint8, pin_memory=True)
                raw = keep.numpy()
            else:
                keep = raw = np.empty(nbytes + 64, dtype=np.uint8)
            addr = raw.ctypes.data
            off = (-addr) % 64
            self.slabs[addr + off] = (keep, raw[off:off + nbytes].view(SlotMemory))
            return addr + off
        except Exception:  # NULL: the C loader reports ENOMEM
            return None

    def _free(self, ptr, user):
        self.slabs.pop(ptr, None)  # arrays still alive keep their own reference

    def _on_corrupt(self, index, status, user):
        self.corrupt.append((index, status))  # list.append is atomic under the GIL

    def compact_struct(self, addr):
        """The C compact batch at `addr` (a detach gives a slot a new one)."""
        cb = self.structs.get(addr)
        if cb is None:
            cb = self.structs[addr] = C.CompactBatch.from_address(addr)
        return cb

    def check_compact(self, b, cb):
        """Once per loader: the CompactBatch mirror's pointers agree with its
        slab and layout, and the batch's typed views point into that slab
        (see _capi._check_compact_abi)."""
        L, slab = cb.layout, cb.slab
        if slab is None:
            raise ImportError("twincache: a compact batch without a slab: the CompactBatch mirror "
                              "in python/twincache/_capi.py does not match the C header")
        want = [(cb.base, slab + L.base), (cb.cols, slab + L.cols), (cb.col_mask, slab + L.col_mask),
                (cb.rows, slab + L.rows), (b.base, cb.base), (b.graph_id, cb.graph_id)]
        if slab % 64 or any(x != w for x, w in want) or not L.cols <= cb.used_bytes <= L.bytes:
            raise ImportError("twincache: the C compact batch does not match the CompactBatch "
                              "mirror in python/twincache/_capi.py: update it with the C header")
        self.compact_checked = True

    # ---- holds ----------------------------------------------------------------------
    def forked(self):
        return _forks[0] != self.born

    def struct(self, addr):
        """The C batch at `addr` (a mirror made once per address)."""
        b = self.structs.get(addr)
        if b is None:
            b = self.structs[addr] = C.Batch.from_address(addr)
        return b

    def hold(self, addr, seq, slab):
        rec = [addr, slab, False, seq]
        self.live[seq] = rec
        return Hold(self, rec)

    def release(self, rec):
        """The slot of a batch (its record) back to C, now or once its fence
        completed."""
        self.live.pop(rec[3], None)
        with self.lock:
            if not self.handle or _forks[0] != self.born:
                return
            if self.fence is not None:
                ev = self.fence()
                if ev is not None and not ev.query():
                    self.fenced.append((ev, rec))
                    return
            self._give_back(rec)

    def _give_back(self, rec):
        rc = C.loader_release(self.handle, rec[0])
        if rc < 0 and rc != C.ESTALE:  # ESTALE: detached meanwhile, nothing to give
            raise error_from_status(rc, "release")

    def reap(self, wait=False):
        """Gives back the slots whose fence completed (wait=True: waits for all)."""
        if not self.fenced:
            return
        with self.lock:
            keep = []
            for ev, rec in self.fenced:
                if wait:
                    ev.synchronize()
                elif not ev.query():
                    keep.append((ev, rec))
                    continue
                if self.handle:
                    self._give_back(rec)
            self.fenced = keep

    def make_room(self):
        """next() found the slot it needs held: wait for fenced releases, then
        detach the oldest batch still referenced. False when nothing changed."""
        if self.fenced:
            self.reap(wait=True)
            return True
        for seq in sorted(self.live):
            rec = self.live.get(seq)  # a batch collected meanwhile is gone from live
            if rec is None or rec[2]:
                continue
            rc = C.loader_detach(self.handle, rec[0])
            if rc == C.OK:
                rec[2] = True  # its memory is Python's alone now: nothing to give back
                self.slabs.pop(rec[1], None)
                self.live.pop(seq, None)
                return True
            if rc == C.ESTALE:
                self.live.pop(seq, None)
                continue
            held = ", ".join(f"seq {x}" for x in sorted(self.live))
            raise TooManyHeld(
                f"twincache.Loader: the next batch needs the slot of a batch you still hold, "
                f"and that batch cannot be moved to its own memory ({error_from_status(rc).message}). "
                f"Held: {held}. Drop or release them (batch.release(), `with batch:`, del) "
                f"or copy what you keep.", rc)
        return False

    def next(self):
        """(status, address of the C batch) of one C next(): fenced releases
        are reaped first; a held slot is made free (make_room) and the call
        retried; a wait is cut every POLL_NS so Python's signal handlers
        (Ctrl-C) run."""
        if _forks[0] != self.born:
            raise InvalidArgument("twincache.Loader was opened in another process (its threads "
                                  "do not survive fork): open it in this process, or use "
                                  "DataLoader(loader, batch_size=None, num_workers=0)")
        if self.fenced:
            self.reap()
        nxt, h, ref = C.loader_next_timeout, self.handle, self._out_ref
        while True:
            rc = nxt(h, ref, C.POLL_NS)
            if rc == C.EAGAIN or (rc == C.HELD_STATUS and self.make_room()):
                continue
            return rc, self._out.value

    def close(self):
        with self.lock:
            h, self.handle = self.handle, ctypes.c_void_p()
            if not h:
                return
            if self.forked():  # the parent's threads: not ours to join
                return
            for ev, _ in self.fenced:  # copies still reading a slab the close frees
                ev.synchronize()
            self.fenced = []
            self.structs = {}  # mirrors of C memory the close frees
            C.loader_close(h)  # releases arriving meanwhile (free hooks, GC) see no handle

    def check_open(self):
        if not self.handle:
            raise Closed("twincache.Loader is closed")
