"""The compact batch layout and its expansion to the dense layout, in torch
tensor ops that run on whatever device the tensors are on (the CPU in the
tests, the GPU behind Loader(device="cuda", layout="compact")).

A compact slab (loader/twincache_loader.h, "the compact batch") holds the
base worlds and, per twin world, only the columns its intervention changed;
a batch occupies the first `used_bytes` of its slab. Fields, G graphs, N
nodes, K interventions, S samples, W = (N + 63) // 64, C = n_cols:

    base      (G,S,N) float32  as the dense base
    adj       (G,N,N) uint8    as the dense adj
    kind      (G,K)   uint8    as the dense kind
    graph_id  (G)     uint64   as the dense graph_id
    valid     (G)     uint8    as the dense valid
    n_nodes   (G)     uint32   nodes of graph g (0 = padding graph)
    n_inter   (G)     uint32   interventions of graph g
    target    (G,K)   uint16   intervened node (0 beyond n_inter)
    value     (G,K)   float32  do value, shift or noise factor (0 beyond n_inter)
    col_first (G,K)   uint32   first column of (g,k) in cols
    col_mask  (G,K,W) uint64   bit j set <=> column j of (g,k) is stored
    cols      (C,S)   float32  stored columns, in (g,k,j) order

Torch has no unsigned 16/32/64-bit tensors on torch 1.13, so the torch views
of uint16/uint32/uint64 fields are int16/int32/int64 views of the same bytes
(every value of a loader's batch fits; graph_id is read back with
.view(numpy.uint64) on the numpy side if needed).

The expansion (Expander.run) writes the dense slab the C loader's dense
layout gives for the same batch, bit for bit, padding included (the CPU
reference is kernels/expand_cpu.c): twin block k < n_inter of graph g is
base g with a do() target's column set to value, then the stored columns
written over; blocks k >= n_inter are zero. Floats are moved as int32 bits.
Nothing in it depends on the device or synchronises with the host: the
number of stored columns comes from the host (the C batch's n_cols), the
rest are fixed-shape tensor ops queued on the current stream.
"""
import numpy as np

try:
    import torch
except ImportError:  # numpy-only use: compact views work, expansion needs torch
    torch = None

from . import _capi as C

# The kinds whose twin world sets the target's column to the value (do): C's
# rule (twincache_inter_kind_fixes_target), so a new kind needs no change here.
_FIXING_KINDS = tuple(k for k in range(C.choice_count(C.CHOICE_INTER_KIND))
                      if C.inter_kind_fixes_target(k))
assert _FIXING_KINDS, "libtwincache names no kind that fixes its target (do)"
_NP_SIZE = {"float32": 4, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8}
if torch is not None:
    _T_SIZE = {torch.float32: 4, torch.int32: 4, torch.int64: 8, torch.int16: 2, torch.uint8: 1}


def _torch_dtype(name):
    """The torch dtype of a view of a C array of numpy dtype `name` (floats
    as themselves; unsigned types wider than a byte as the signed type of
    the same width)."""
    return {"float32": torch.float32, "uint8": torch.uint8, "uint16": torch.int16,
            "uint32": torch.int32, "uint64": torch.int64}[name]


def _signed(dtype):
    """numpy dtype -> the numpy dtype of the torch view (see _torch_dtype)."""
    return {np.dtype(np.uint16): np.int16, np.dtype(np.uint32): np.int32,
            np.dtype(np.uint64): np.int64}.get(np.dtype(dtype), dtype)


def _dims(lay):
    return {"G": int(lay.graphs), "N": int(lay.nodes), "K": int(lay.inter), "S": int(lay.samples),
            "W": (int(lay.nodes) + 63) // 64, "R": int(lay.inter) + 1}


class Expander:
    """The compact layout of one loader and its expansion to the dense layout.

    clayout: a _capi.CompactLayout (its .dense is the dense layout);
    dense_specs: the dense fields (name, offset, shape, numpy dtype, torch
    dtype, bytes), as the Loader builds them for dense batches."""

    def __init__(self, clayout, dense_specs):
        self.dims = _dims(clayout)
        if int(clayout.max_cols) >= 2**31:  # int32 column indices below
            raise ValueError(f"compact batch of {clayout.max_cols} columns: at most 2**31 - 1")
        self.cols_offset = int(clayout.cols)
        self.bytes = int(clayout.bytes)              # compact slab capacity
        self.dense_bytes = int(clayout.dense.bytes)  # dense slab
        self.specs = []  # (name, offset, shape, numpy dtype, bytes)
        for name, field, dtype, code in C.COMPACT_ARRAYS:
            shape = tuple(self.dims[ch] for ch in code)
            nbytes = int(np.prod(shape)) * _NP_SIZE[dtype]
            self.specs.append((name, int(getattr(clayout, field)), shape, np.dtype(dtype), nbytes))
        self.offsets = {sp[0]: sp[1] for sp in self.specs}
        self.offsets["cols"] = self.cols_offset
        self.dense_specs = dense_specs
        self.dense_offsets = {sp[0]: sp[1] for sp in dense_specs}
        # byte ranges of the dense slab no field covers (alignment gaps, the
        # tail): zero in a C slab, so zeroed once in every new dense buffer
        gaps, end = [], 0
        for _, off, _, _, _, n in sorted(dense_specs, key=lambda sp: sp[1]):
            if off > end:
                gaps.append((end, off))
            end = max(end, off + n)
        if end < self.dense_bytes:
            gaps.append((end, self.dense_bytes))
        self.gaps = gaps
        self._pos = {}

    # ---- host views ------------------------------------------------------------
    def numpy_views(self, mem, n_cols):
        """Zero-copy numpy views of a compact slab (mem: uint8 array of the
        slab); cols has its n_cols valid rows."""
        views = {name: np.ndarray(shape, dt, mem, off) for name, off, shape, dt, _ in self.specs}
        views["cols"] = np.ndarray((n_cols, self.dims["S"]), np.float32, mem, self.cols_offset)
        return views

    def used_bytes(self, n_cols):
        """Bytes of the slab prefix that holds a batch of n_cols columns."""
        return C._align64(self.cols_offset + n_cols * self.dims["S"] * 4)

    # ---- the dense output ----------------------------------------------------------
    def new_dense(self, device=None):
        """A dense slab (uint8, dense_bytes) on `device` whose gaps are zero,
        as in a C slab; the expansion writes every field."""
        out = torch.empty(self.dense_bytes, dtype=torch.uint8, device=device)
        for a, b in self.gaps:
            out[a:b].zero_()
        return out

    def dense_fields(self, out):
        """Torch views of the dense fields of a dense slab tensor."""
        return {name: out[off:off + n].view(tdt).view(shape)
                for name, off, shape, _, tdt, n in self.dense_specs}

    # ---- the expansion -----------------------------------------------------------------
    def _positions(self, dev):
        """(G,K,N) int32: the flat (g,k,j) position of every column (a
        constant, made once per device; on CUDA the stream that made it is
        synchronised once, so any stream may read it)."""
        key = str(dev)
        pos = self._pos.get(key)
        if pos is None:
            d = self.dims
            pos = torch.arange(d["G"] * d["K"] * d["N"], dtype=torch.int32, device=dev)
            pos = self._pos[key] = pos.view(d["G"], d["K"], d["N"])
            if dev.type == "cuda":
                torch.cuda.current_stream(dev).synchronize()
        return pos

    def run(self, c, n_cols, out):
        """Expands the compact batch in `c` (uint8 tensor holding at least the
        batch's used prefix) into the dense slab `out` (uint8 tensor of
        dense_bytes, same device). n_cols: the batch's stored columns (the C
        batch's n_cols, a host int: no device-to-host read here)."""
        d = self.dims
        G, N, K, S, W = d["G"], d["N"], d["K"], d["S"], d["W"]
        dev = c.device
        i32, i64, u8 = torch.int32, torch.int64, torch.uint8

        def cv(name, tdt, shape):
            off = self.offsets[name]
            n = int(np.prod(shape)) * _T_SIZE[tdt]
            return c[off:off + n].view(tdt).view(shape)

        def dv(name, tdt, shape):
            off = self.dense_offsets[name]
            n = int(np.prod(shape)) * _T_SIZE[tdt]
            return out[off:off + n].view(tdt).view(shape)

        base = cv("base", i32, (G, S, N))  # float bits
        n_nodes = cv("n_nodes", i32, (G,)).long()
        n_inter = cv("n_inter", i32, (G,)).long()
        kind = cv("kind", u8, (G, K))
        target = cv("target", torch.int16, (G, K)).long() & 0xFFFF
        value = cv("value", i32, (G, K))

        dv("base", i32, (G, S, N)).copy_(base)
        dv("adj", u8, (G, N, N)).copy_(cv("adj", u8, (G, N, N)))
        dv("kind", u8, (G, K)).copy_(kind)
        dv("graph_id", i64, (G,)).copy_(cv("graph_id", i64, (G,)))
        dv("valid", u8, (G,)).copy_(cv("valid", u8, (G,)))

        j_n = torch.arange(N, device=dev)
        dv("node_mask", u8, (G, N)).copy_(j_n[None, :] < n_nodes[:, None])
        real = torch.arange(K, device=dev)[None, :] < n_inter[:, None]  # (G,K) k < n_inter
        dv("int_mask", u8, (G, K)).copy_(real)
        # rows per world (FORMAT.md 3.10), as the loader wrote them
        rows_c = cv("rows", i32, (G, K + 1))
        dv("rows", i32, (G, K + 1)).copy_(rows_c)
        hit = (j_n[None, None, :] == target[:, :, None]) & real[:, :, None]  # (G,K,N)
        dv("target", u8, (G, K, N)).copy_(hit)
        torch.mul(value[:, :, None], hit.to(i32), out=dv("value", i32, (G, K, N)))

        # twin worlds: base, with a do() target's column set to the value,
        # zero beyond n_inter. Bit selects on whole blocks (4 elementwise
        # passes) instead of a gather/scatter of the target columns:
        #   inter = base ^ ((base ^ value) & fill) & real, fill/real 0 or ~0
        inter = dv("inter", i32, (G, K, S, N))
        fixes = kind == _FIXING_KINDS[0]  # one compare, as do() alone is today
        for code in _FIXING_KINDS[1:]:
            fixes |= kind == code
        fill = (hit & fixes[:, :, None]).to(i32).neg_()[:, :, None, :]  # (G,K,1,N)
        real_bits = real.to(i32).neg_()[:, :, None, None]                   # (G,K,1,1)
        base_b = base[:, None]                                               # (G,1,S,N)
        torch.bitwise_xor(base_b, value[:, :, None, None], out=inter)
        inter.bitwise_and_(fill)
        inter.bitwise_xor_(base_b)
        inter.bitwise_and_(real_bits)
        # rows a world does not hold are 0 (its stored columns are, from the loader)
        held = (torch.arange(S, device=dev)[None, None, :] < rows_c[:, 1:, None]).to(i32).neg_()  # (G,K,S)
        inter.bitwise_and_(held[:, :, :, None])
        if G == 0 or K == 0 or n_cols == 0:
            return out
        # stored columns: (g,k,j) with bit j of col_mask[g,k] set (k < n_inter)
        # comes from cols[col_first[g,k] + (set bits of (g,k) before j)]
        mask = cv("col_mask", i64, (G, K, W))
        bits = ((mask[:, :, j_n >> 6] >> (j_n & 63)) & 1).bool() & real[:, :, None]  # (G,K,N)
        first = cv("col_first", i32, (G, K))  # < max_cols < 2**31 (checked at init)
        # int32 index arithmetic: half the bytes of the (G,K,N) temporaries
        src = bits.to(i32).cumsum(2, dtype=i32).add_(first[:, :, None]).sub_(1)  # (G,K,N)
        # invert (g,k,j) -> column into column -> (g,k,j) with one scatter:
        # unset positions go to distinct slots past n_cols, so no index repeats
        pos = self._positions(dev)
        slot = torch.where(bits, src.clamp_(0, n_cols - 1), pos + n_cols).view(-1).long()
        dest = torch.zeros(n_cols + G * K * N, dtype=i32, device=dev)
        dest.scatter_(0, slot, pos.view(-1))
        dest = dest[:n_cols].long()
        cols = cv("cols", i32, (n_cols, S))
        inter[dest // (K * N), (dest // N) % K, :, dest % N] = cols
        return out


def stage(expander, src, used_bytes, n_cols, cbuf, dense, non_blocking=True):
    """The device path's work for one batch, on the current stream: ONE copy
    of the used prefix of the compact slab `src` (uint8 tensor, host) into
    `cbuf` (uint8 tensor on the device, >= used_bytes), then the expansion
    into `dense`. non_blocking: whether the copy may return before it is
    done (the caller then keeps `src` alive and unchanged until it is). The
    Loader calls it on its copy stream; the tests call it with CPU tensors,
    so only the device differs."""
    part = cbuf[:used_bytes]
    part.copy_(src[:used_bytes], non_blocking=non_blocking)
    expander.run(part, n_cols, dense)
    return dense
