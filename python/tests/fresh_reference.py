"""A fresh-world reader written from formats/FORMAT.md 3.8 and 3.9 alone (not from
scm/): the counter-based draws in Python integers and doubles, the worlds in
numpy float32, one IEEE operation at a time (no FMA: numpy never fuses).
It reproduces `twincache-inspect show --fresh-rows S --epoch E --json` bit
for bit (test_fresh_spec.py). Heteroscedastic noise is not covered: the
Python Graph does not expose its parameters.

fresh_worlds(graph, tag, epoch_group, S) -> (base (S,n), inter (K,S,n)),
graph a twincache.Graph (its parameters, as stored)."""
import math
import struct

import numpy as np

M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


# ---- 3.8.1 the counter-based generator -------------------------------------
def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def stream_init(key, stream):
    """The state of stream `stream` of `key`."""
    return mix64(key ^ mix64((stream + GAMMA) & M64))


class Stream:
    def __init__(self, state):
        self.state = state

    def u64(self):
        self.state = (self.state + GAMMA) & M64
        return mix64(self.state)

    def uniform(self):
        return uniform_of(self.u64())


def uniform_of(bits):  # [0, 1): the top 53 bits times 2^-53
    return float(bits >> 11) * (1.0 / 9007199254740992.0)


def signed_of(bits):  # [-1, 1)
    return float(bits >> 11) * (1.0 / 4503599627370496.0) - 1.0


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def fresh_key(tag, index, group):
    k = mix64(tag ^ 0x5BD1E9955BD1E995)
    k = mix64(k ^ mix64((index + GAMMA) & M64))
    return mix64(k ^ mix64((group + 0xC2B2AE3D27D4EB4F) & M64))


def world_key(key, w):
    """3.9: the key of world w (0: the base world; k + 1: intervention k's
    independent world)."""
    return mix64(key ^ mix64((w + 0xD6E8FEB86659FD93) & M64)) if w else key


# ---- 3.8.2 log and exp of the draws (doubles) --------------------------------
def _bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _double(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def flog(x):
    b = _bits(x)
    k = ((b >> 52) & 0x7FF) - 1023
    m = _double((b & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    if m > 1.4142135623730951:
        m = 0.5 * m
        k += 1
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    p = 1.0 / 19.0
    for c in (17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0):
        p = p * z + 1.0 / c
    kd = float(k)
    return kd * 6.93147180369123816490e-01 + (kd * 1.90821492927058770002e-10 + (2.0 * s + 2.0 * s * (z * p)))


def fexp(y):
    t = y * 1.4426950408889634 + 0.5
    kd = float(int(t))  # truncation toward zero
    if kd > t:
        kd -= 1.0
    r = (y - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    for c in (479001600.0, 39916800.0, 3628800.0, 362880.0, 40320.0, 5040.0, 720.0, 120.0, 24.0, 6.0):
        p = p * r + 1.0 / c
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _double((int(kd) + 1023) << 52)


# ---- 3.8.3 the standard normal: a 256-layer ziggurat -------------------------
ZIG_R, ZIG_V = 3.6541528853610088, 0.00492867323399


def _zig_tables():
    x = [0.0] * 257
    f = math.exp(-0.5 * ZIG_R * ZIG_R)
    x[0] = ZIG_V / f
    x[1] = ZIG_R
    for i in range(2, 256):
        x[i] = math.sqrt(-2.0 * math.log(ZIG_V / x[i - 1] + f))
        f = math.exp(-0.5 * x[i] * x[i])
    return x, [x[i + 1] / x[i] for i in range(256)]


ZX, ZRATIO = _zig_tables()


def normal(bits, more):
    """The ziggurat from a first draw `bits`; further draws from `more`."""
    while True:
        i = bits & 0xFF
        u = signed_of(bits)
        if abs(u) < ZRATIO[i]:
            return u * ZX[i]
        if i == 0:
            while True:
                u1 = 1.0 - more.uniform()
                u2 = 1.0 - more.uniform()
                xt = flog(u1) / ZIG_R
                yt = flog(u2)
                if not (-2.0 * yt < xt * xt):
                    break
            return xt - ZIG_R if u < 0.0 else ZIG_R - xt
        x = u * ZX[i]
        f0 = fexp(-0.5 * (ZX[i] * ZX[i] - x * x))
        f1 = fexp(-0.5 * (ZX[i + 1] * ZX[i + 1] - x * x))
        if f1 + more.uniform() * (f0 - f1) < 1.0:
            return x
        bits = more.u64()


def cell_draw(noise, bits, row_state, j):
    """Standard draw of node j's cell; `bits` its first draw."""
    more = lambda: Stream(stream_init(row_state, j))  # noqa: E731 (made only when needed)
    if noise == "gauss":
        return normal(bits, more())
    if noise == "laplace":
        u = uniform_of(bits) - 0.5
        a = 1.0 - 2.0 * abs(u)
        if a <= 0.0:
            a = 1e-300
        return (1.0 if u < 0 else -1.0) * flog(a)
    if noise == "uniform":
        return -1.0 + 2.0 * uniform_of(bits)
    if noise == "cauchy":
        st = more()
        a = normal(bits, st)
        b = normal(st.u64(), st)
        return a / (b if b != 0.0 else 2.0 ** -60)
    if noise == "gumbel":
        u = uniform_of(bits)
        if u <= 0.0:
            u = 2.0 ** -54
        return -flog(-flog(u))
    raise ValueError(noise)


def fresh_noise(g, key, S):
    """(n, S) float32: cell (s, j) = noise_scale[j] * (float)draw."""
    n = g.n_nodes
    e = np.zeros((n, S), np.float32)
    for s in range(S):
        row = stream_init(key, s)
        for j in range(n):
            bits = mix64((row + (j + 1) * GAMMA) & M64)
            e[j, s] = np.float32(g.noise_scale[j]) * np.float32(cell_draw(g.noise, bits, row, j))
    return e


# ---- 3.8.4 scm's float32 functions --------------------------------------------
def F(bits):
    return np.uint32(bits).view(np.float32)


C_LOG2E, C_LN2_HI, C_LN2_LO = F(0x3FB8AA3B), F(0x3F317200), F(0x35BFBE8E)
C_INV_2PI, C_2PI_A, C_2PI_B, C_2PI_C = F(0x3E22F983), F(0x40C90000), F(0x3AFDAA22), F(0x2D34611A)
C_HALF_PI, C_PI = F(0x3FC90FDB), F(0x40490FDB)
f32 = np.float32


def exp_pos(y):
    k = (y * C_LOG2E + f32(0.5)).astype(np.int32)
    kf = k.astype(np.float32)
    r = (y - kf * C_LN2_HI) - kf * C_LN2_LO
    p = f32(1) / f32(5040)
    for c in (720, 120, 24, 6):
        p = p * r + f32(1) / f32(c)
    p = p * r + f32(0.5)
    p = p * r + f32(1)
    p = p * r + f32(1)
    return p * ((k + 127).astype(np.uint32) << np.uint32(23)).view(np.float32)


def tanhf(x):
    a = np.abs(x)
    z = x * x
    q = f32(62) / f32(2835)
    q = q * z - f32(17) / f32(315)
    q = q * z + f32(2) / f32(15)
    q = q * z - f32(1) / f32(3)
    small = x + x * (z * q)
    e = exp_pos(f32(2) * np.minimum(a, f32(9)))
    big = f32(1) - f32(2) / (e + f32(1))
    big = np.where(x < 0, -big, big)
    return np.where(a < f32(0.3), small, big).astype(np.float32)


def cosf(x):
    a = np.minimum(np.abs(x), f32(65536))
    kf = (a * C_INV_2PI + f32(0.5)).astype(np.int32).astype(np.float32)
    r = np.abs(((a - kf * C_2PI_A) - kf * C_2PI_B) - kf * C_2PI_C)
    sgn = np.where(r > C_HALF_PI, f32(-1), f32(1))
    r = np.where(r > C_HALF_PI, C_PI - r, r)
    z = r * r
    p = f32(-1) / f32(87178291200.0)
    for c in (479001600.0, -3628800.0, 40320.0, -720.0, 24.0):
        p = p * z + f32(1 if c > 0 else -1) / f32(abs(c))
    p = p * z - f32(0.5)
    p = p * z + f32(1)
    return (sgn * p).astype(np.float32)


UNIT = {
    "mlp": tanhf,
    "rff": cosf,
    "sigmoid": lambda a: f32(0.5) + f32(0.5) * tanhf(f32(0.5) * a),
    "poly": lambda a: np.clip(a, f32(-4), f32(4)) * np.clip(a, f32(-4), f32(4)),
}


# ---- 3.8.5 a node's column -----------------------------------------------------
def node_mech(g, j):
    if g.node_mechanisms is not None:
        return g.node_mechanisms[j]
    return g.mechanism


def column(g, j, col, e, params=None):
    """x_j (S,) float32 from the columns its parents read; params: a soft
    world's block instead of j's own."""
    n = g.n_nodes
    pa = [i for i in range(n) if g.adj[i, j]]
    S = e.shape[0]
    mech = node_mech(g, j)
    if mech == "linear":
        w = [f32(params[i]) if params is not None else f32(g.weight[i, j]) for i in pa]
        x = np.zeros(S, np.float32)
        for q, i in enumerate(pa):
            x = x + w[q] * col[i]
        return x + e
    H = g.n_hidden
    blk = params if params is not None else g.mlp[j]
    blk = np.asarray(blk, np.float32)
    b1, w2 = blk[H * n:H * n + H], blk[H * n + H:H * n + 2 * H]
    x = np.zeros(S, np.float32)
    for h in range(H):
        a = np.full(S, b1[h], np.float32)
        for i in pa:
            a = a + blk[h * n + i] * col[i]
        x = x + w2[h] * UNIT[mech](a)
    return x + e


def stats(x):
    """Population mean and std of a column, in doubles, rows ascending."""
    S = len(x)
    sm = 0.0
    for v in x:
        sm += float(v)
    mean = sm / S
    sq = 0.0
    for v in x:
        d = float(v) - mean
        sq += d * d
    sd = math.sqrt(sq / S)
    fm = f32(mean)
    fs = f32(sd) if (sd > 1e-12 and math.isfinite(sd)) else f32(1)
    if not math.isfinite(float(fm)) or fs == 0:
        fs = f32(1)
    return fm, fs


def topo_order(g):
    n, order, done = g.n_nodes, [], set()
    while len(order) < n:
        for j in range(n):
            if j not in done and all(g.adj[i, j] == 0 or i in done for i in range(n)):
                order.append(j)
                done.add(j)
    return order


def descendants(g, t):
    out, todo = {t}, [t]
    while todo:
        v = todo.pop()
        for c in np.flatnonzero(g.adj[v]):
            if int(c) not in out:
                out.add(int(c))
                todo.append(int(c))
    return out


# ---- 3.8.6 the worlds ----------------------------------------------------------
def fresh_worlds(g, tag, group, S):
    n = g.n_nodes
    key = fresh_key(tag, g.index, group)
    e = fresh_noise(g, key, S)
    std_flag, iscm = bool(g.flags & 1), bool(g.flags & 4)
    order = topo_order(g)
    col = [None] * n
    mean, sd = [f32(0)] * n, [f32(1)] * n
    for j in order:
        x = column(g, j, col, e[j])
        if iscm:
            mean[j], sd[j] = stats(x)
            x = (x - mean[j]) / sd[j]
        col[j] = x
    if std_flag and not iscm:
        for j in range(n):
            mean[j], sd[j] = stats(col[j])
    out = lambda j, x: (x - mean[j]) / sd[j] if std_flag and not iscm else x  # noqa: E731
    base = np.stack([out(j, col[j]) for j in range(n)], axis=1).astype(np.float32)
    inter = np.zeros((g.n_inter, S, n), np.float32)
    indep = bool(g.flags & 8)  # INDEPENDENT (3.9): world k's own noise, every node recomputed
    base_e = e
    for k in range(g.n_inter):
        kind = int(g.kind[k])
        targets = {int(t): f32(v) for t, v in zip(g.target_sets[k], g.value_sets[k])}
        changed = set()
        for t in targets:
            changed |= descendants(g, t)
        e = base_e
        if indep:
            e = fresh_noise(g, world_key(key, k + 1), S)
            changed = set(range(n))
        tw = list(col)
        res = base.copy()
        for j in order:
            if j not in changed:
                continue
            if j in targets and kind == 0:  # do
                v = targets[j]
                x = np.full(S, v * sd[j] + mean[j] if std_flag and not iscm else v, np.float32)
                tw[j] = x
                res[:, j] = v
                continue
            if j in targets and kind == 1:  # shift
                x = column(g, j, tw, e[j]) + targets[j]
            elif j in targets and kind == 2:  # noise
                x = column(g, j, tw, targets[j] * e[j])
            elif j in targets and kind == 3 and g.adj[:, j].any():  # soft
                x = column(g, j, tw, e[j], params=g.soft[k])
            elif j in targets and kind == 3:  # soft on a root: noise term times a, + v
                a = f32(np.asarray(g.soft[k], np.float32)[j])
                x = column(g, j, tw, a * e[j] if a != 0 else e[j], params=g.soft[k]) + targets[j]
            else:
                x = column(g, j, tw, e[j])
            if iscm:
                x = (x - mean[j]) / sd[j]
            tw[j] = x
            res[:, j] = out(j, x)
        inter[k] = res
    return base, inter
