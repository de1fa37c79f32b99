"""twin_model.py — the model of train_avici.py: an AVICI-style encoder over the
sample rows and nodes, and the twin-world summary statistics that the edge head
reads beside it. Imported by train_avici.py (this folder is on sys.path when the
script runs).

Shapes: G graphs, S samples per world, N nodes (padded), K twin worlds, R rows
given to the encoder, d the width, P pair statistics, Q node statistics.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")  # torch >= 2.0
IN_FEATURES = 4  # encoder token: value, intervened here, twin - base, twin-world row


class AxisBlock(nn.Module):
    """Pre-norm multi-head self-attention over the middle axis of (B, L, d),
    then an MLP. keep (B, L) bool: the keys that take part (every sequence
    must keep at least one), or None: all."""

    def __init__(self, d, heads):
        super().__init__()
        assert d % heads == 0, "d must be a multiple of heads"
        self.heads = heads
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, h, keep):
        B, L, d = h.shape
        H = self.heads
        q, k, v = self.qkv(self.n1(h)).view(B, L, 3, H, d // H).permute(2, 0, 3, 1, 4)  # (B,H,L,dh)
        if HAS_SDPA:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if keep is None
                                               else keep[:, None, None, :])
        else:  # torch 1.x: the same computation, unfused
            a = torch.matmul(q * (d // H) ** -0.5, k.transpose(-1, -2))
            if keep is not None:
                a = a.masked_fill(~keep[:, None, None, :], float("-inf"))
            y = torch.matmul(a.softmax(dim=-1), v)
        h = h + self.out(y.transpose(1, 2).reshape(B, L, d))
        return h + self.mlp(self.n2(h))


# ---- the twin-world statistics --------------------------------------------------------
PAIR_NAMES = ("corr", "pcorr", "logstd", "xsq", "sqsq", "anc", "excl", "both", "eff", "dcorr", "dpc",
              "cka", "pool_corr", "pool_pcorr", "gam", "dgam")
PAIR_STATS = len(PAIR_NAMES)  # per ordered pair (i, j); the head reads (i, j) and (j, i)
NODE_STATS = 6
BUMP_CENTRES = (-2.0, -1.0, 0.0, 1.0, 2.0)  # the additive fits' basis, in standard units
BUMP_WIDTH = 0.75
RIDGE_BASE, RIDGE_TWIN = 4.0, 1.0  # noisy base world: more shrinkage; twin differences are noise-free


def _partial_corr(gram, eye, ridge):
    """gram (..., N, N) -> partial correlations -prec_ij / sqrt(prec_ii prec_jj) of the
    ridge-regularised matrix (..., N, N); 0 on the diagonal."""
    prec = torch.linalg.inv(gram + ridge * eye)
    dg = prec.diagonal(dim1=-2, dim2=-1).clamp_min(1e-8).sqrt()
    return (-prec / (dg[..., :, None] * dg[..., None, :])) * (1 - eye)


def _basis(z):
    """z (..., S) standard units -> (..., S, m): z and Gaussian bumps at BUMP_CENTRES."""
    c = torch.tensor(BUMP_CENTRES, dtype=z.dtype, device=z.device)
    return torch.cat([z[..., None], torch.exp(-0.5 * ((z[..., None] - c) / BUMP_WIDTH).square())], dim=-1)


def _additive_fit(F, y, ridge):
    """A nonlinear conditional-dependence measure: for every node j the additive
    ridge regression y_j ~ sum_{i != j} F_i b_ij, each node i entering through its
    own basis F_i (S, m). F (B,N,S,m), zero for nodes that may not explain;
    y (B,N,S) -> share (B,N,N): |F_i b_ij|^2 / |y_j|^2, i's part of j's fit (0 on
    the diagonal), and r2 (B,N): the fit's R^2.
    Solved in the dual, where every j shares one S x S matrix: with
    M = Phi Phi' + ridge I (Phi (S, N m) all blocks), j's system drops its own
    block, M - F_j F_j', whose inverse is M^-1 plus a rank-m Woodbury term.
    float64 inside: the rank-m downdate cancels most of M when j dominates."""
    B, N, S, m = F.shape
    Fd, yd = F.double(), y.double()
    M = torch.einsum("bnsm,bntm->bst", Fd, Fd) + ridge * torch.eye(S, dtype=Fd.dtype, device=F.device)
    Minv = torch.linalg.inv(M)
    U = torch.einsum("bst,bntm->bnsm", Minv, Fd)  # M^-1 F_j (B,N,S,m)
    W = torch.eye(m, dtype=Fd.dtype, device=F.device) - torch.einsum("bnsm,bnsk->bnmk", Fd, U)
    alpha = torch.einsum("bst,bnt->bns", Minv, yd) + torch.einsum(
        "bnsm,bnm->bns", U, torch.linalg.solve(W, torch.einsum("bnsm,bns->bnm", U, yd)))  # (B,N_j,S)
    c = torch.einsum("bism,bjs->bijm", Fd, alpha)  # b_ij = F_i' alpha_j (B,N_i,N_j,m)
    gram = torch.einsum("bism,bisk->bimk", Fd, Fd)
    yy = yd.square().sum(dim=-1).clamp_min(1e-9)
    share = torch.einsum("bijm,bimk,bijk->bij", c, gram, c) / yy[:, None, :]
    r2 = 1 - ridge ** 2 * alpha.square().sum(dim=-1) / yy  # the residual is ridge * alpha_j
    off = 1 - torch.eye(N, dtype=Fd.dtype, device=F.device)
    return (share * off).to(F.dtype), r2.to(F.dtype)


@torch.no_grad()
def twin_stats(base, inter, target, node_mask, int_mask, ridge=0.1, drop=()):
    """Summary statistics of one batch's worlds, all S samples of each.

    base (G,S,N), inter (G,K,S,N) float; target (G,K,N) 0/1; node_mask (G,N),
    int_mask (G,K) bool -> pair (G,N,N,PAIR_STATS), node (G,N,NODE_STATS) float.

    Base world (x standardised per node: z):
      0 corr(z_i, z_j)                       3 E[z_i (z_j^2 - 1)] / sqrt 2 (j's spread with i)
      1 partial corr (ridge precision)       4 corr(z_i^2, z_j^2)
      2 log(std_j / std_i) of the raw values (var-sortability: causes tend to vary less)
    Twin worlds (d = (twin - base) / std_base, per row; non-zero exactly on the
    target's descendants, whose base noise it cancels):
      5 worlds where i is the target and j moved (i is an ancestor of j)
      6 worlds where i moved and j did not (then i -> j is impossible)
      7 worlds where both moved (and i is not the target)
      8 mean |d_j| over rows in worlds where i is the target (size of the effect)
      9 corr over rows of (d_i, d_j), worlds where both moved, averaged
     10 partial corr of the d of the moved nodes (noise-free: a child's d is a
        function of its parents' d and base values), worlds averaged
    Base world, nonlinear:
     11 CKA of RBF kernels (bandwidth 1 in standard units): a kernel dependence
        measure (normalised HSIC) that sees the tanh's bends that corr misses
    All worlds pooled (base and twin rows, standardised together: the twin
    rows are samples of the intervened distributions):
     12 corr                                13 partial corr (ridge precision)
    Additive nonlinear fits (_additive_fit; each node through z and 5 bumps):
     14 base world: i's share of the fit of z_j on every other node
     15 twin worlds: i's share of the fit of d_j (j moved, not a target) on the
        other nodes, the moved ones through basis(twin) - basis(base), the
        others through basis(base): d_j is noise-free, so a parent's share is
        large where the linear dpc misses the bumps; averaged over those worlds
    Node: log std of the raw values, times intervened, times moved, 1 (real
    node), R^2 of the base-world fit (14), mean R^2 of the twin fits (15).
    drop: names of PAIR_NAMES to zero (ablations; "logstd" zeroes the node's log std too).
    """
    G, S, N = base.shape
    K = inter.shape[1]
    nm = node_mask.float()
    eye = torch.eye(N, device=base.device, dtype=base.dtype)
    mean = base.mean(dim=1, keepdim=True)
    std = base.std(dim=1, keepdim=True)  # (G,1,N)
    std = torch.where(std > 1e-6, std, torch.ones_like(std))
    z = (base - mean) / std * nm[:, None]  # (G,S,N)
    corr = torch.einsum("gsi,gsj->gij", z, z) / (S - 1)
    pcorr = _partial_corr(corr, eye, ridge)
    logstd = std[:, 0].log() * nm  # (G,N)
    lsr = (logstd[:, None, :] - logstd[:, :, None])
    z2 = (z * z - 1) * nm[:, None]
    xsq = torch.einsum("gsi,gsj->gij", z, z2) / (S * 2 ** 0.5)
    z2c = z2 - z2.mean(dim=1, keepdim=True)
    z2n = z2c / z2c.norm(dim=1, keepdim=True).clamp_min(1e-6)
    sqsq = torch.einsum("gsi,gsj->gij", z2n, z2n)

    im = int_mask.float()  # (G,K)
    d = (inter - base[:, None]) / std[:, None] * nm[:, None, None, :] * im[:, :, None, None]  # (G,K,S,N)
    moved = (d.abs().amax(dim=2) > 1e-6).float()  # (G,K,N)
    tgt = target.float() * im[:, :, None]
    still = (1 - moved) * nm[:, None, :]
    anc = torch.einsum("gki,gkj->gij", tgt, moved)
    excl = torch.einsum("gki,gkj->gij", moved, still)
    both = torch.einsum("gki,gkj->gij", moved * (1 - tgt), moved)
    eff = torch.einsum("gki,gkj->gij", tgt, d.abs().mean(dim=2)).clamp(max=20).log1p()
    gram = torch.einsum("gksi,gksj->gkij", d, d) / S  # (G,K,N,N)
    dn = gram.diagonal(dim1=-2, dim2=-1).clamp_min(1e-12).sqrt()
    dcorr_k = gram / (dn[..., :, None] * dn[..., None, :])
    bothk = moved[:, :, :, None] * moved[:, :, None, :] * (1 - eye)  # (G,K,N,N)
    nboth = bothk.sum(dim=1).clamp_min(1)
    dcorr = (dcorr_k * bothk).sum(dim=1) / nboth
    scale = dn.square().mean(dim=-1, keepdim=True).clamp_min(1e-12)[..., None]  # (G,K,1,1)
    dpc = (_partial_corr(gram / scale, eye, ridge) * bothk).sum(dim=1) / nboth

    # kernel dependence: centred RBF Gram matrices per node, their cosine similarity
    kern = torch.exp(-0.5 * (z[:, :, None, :] - z[:, None, :, :]).square())  # (G,S,S,N)
    kern = kern - kern.mean(dim=1, keepdim=True)
    kern = kern - kern.mean(dim=2, keepdim=True)
    kern = kern.reshape(G, S * S, N) * nm[:, None]
    kern = kern / kern.norm(dim=1, keepdim=True).clamp_min(1e-6)
    cka = torch.einsum("gai,gaj->gij", kern, kern)
    # pooled worlds: weights w (G,(K+1)S) drop the padded twin worlds
    xs = torch.cat([base[:, None], inter], dim=1).reshape(G, (K + 1) * S, N)
    w = torch.cat([torch.ones_like(im[:, :1]), im], dim=1)[:, :, None].expand(G, K + 1, S).reshape(G, -1, 1)
    wn = w.sum(dim=1, keepdim=True)
    pm_ = (xs * w).sum(dim=1, keepdim=True) / wn
    ps = (((xs - pm_).square() * w).sum(dim=1, keepdim=True) / wn).sqrt()
    ps = torch.where(ps > 1e-6, ps, torch.ones_like(ps))
    zp = (xs - pm_) / ps * w * nm[:, None]
    pcorr_all = torch.einsum("gsi,gsj->gij", zp, zp) / wn
    ppc = _partial_corr(pcorr_all, eye, ridge)

    # additive fits: base world (centred basis), twin worlds (basis differences, 0 off the moved nodes)
    zt = z.transpose(1, 2)  # (G,N,S)
    bz = _basis(zt)  # (G,N,S,m), once for both fits
    fb = (bz - bz.mean(dim=2, keepdim=True)) * nm[:, :, None, None]
    gam, gam_r2 = _additive_fit(fb, zt, RIDGE_BASE)
    zi = (inter - mean[:, None]) / std[:, None] * nm[:, None, None]  # (G,K,S,N)
    zit = zi.transpose(2, 3)  # (G,K,N,S)
    # moved nodes enter through basis(twin) - basis(base), the others through their base
    # values (a parent that did not move still shapes its moving child's d through the
    # mechanism's interactions); explained: d of the moved nodes but the targets
    fd = (_basis(zit) - bz[:, None]) * moved[..., None, None] \
        + fb[:, None] * (still * im[:, :, None])[..., None, None]  # (G,K,N,S,m)
    fit = moved * (1 - tgt)  # (G,K,N)
    dgk, dr2k = _additive_fit(fd.reshape(G * K, N, S, -1), ((zit - zt[:, None]) * fit[..., None]).reshape(G * K, N, S),
                              RIDGE_TWIN)
    jk = fit[:, :, None, :] * nm[:, None, :, None]  # (G,K,N_i,N_j): worlds where j moved and is no target
    dgam = (dgk.view(G, K, N, N) * jk).sum(dim=1) / jk.sum(dim=1).clamp_min(1)
    dgam_r2 = (dr2k.view(G, K, N) * fit).sum(dim=1) / fit.sum(dim=1).clamp_min(1)

    pair = torch.stack([corr, pcorr, lsr, xsq, sqsq, anc, excl, both, eff, dcorr, dpc, cka, pcorr_all, ppc,
                        gam, dgam], dim=-1)
    pm = (nm[:, :, None] * nm[:, None, :] * (1 - eye))[..., None]
    pair = torch.nan_to_num(pair, 0.0, 0.0, 0.0).clamp(-20, 20) * pm
    node = torch.stack([logstd, tgt.sum(dim=1), moved.sum(dim=1), nm, gam_r2 * nm, dgam_r2 * nm], dim=-1)
    node = torch.nan_to_num(node, 0.0, 0.0, 0.0).clamp(-20, 20)  # (G,N,Q)
    for name in drop:
        pair[..., PAIR_NAMES.index(name)] = 0
        if name == "logstd":
            node[..., 0] = 0
        if name in ("gam", "dgam"):  # their fits' R^2
            node[..., 4 if name == "gam" else 5] = 0
    return pair, node


# ---- the model ------------------------------------------------------------------------
class TwinModel(nn.Module):
    """Edge logits (G,N,N) from two sources, either of which may be off:
      * the AVICI-style encoder (layers > 0): tokens (G,R,N,4) embedded to d,
        layers alternating self-attention over rows and over nodes, rows
        max-pooled -> node embeddings h (G,N,d);
      * the statistics (stats=True): twin_stats' pair and node features.
    Without statistics the logit is <u_i, v_j>/sqrt(d) + b (the original
    model). With them, every ordered pair gets an embedding e_ij (G,N,N,d)
    from an MLP over [pair(i,j), pair(j,i), node(i), node(j)] plus u_i + v_j
    of the encoder; edge_layers axial blocks let pairs attend along their row
    (i -> all j) and their column (all i -> j) — what explaining away needs;
    the logit is a linear read-out of e_ij, plus the encoder's u.v score."""

    def __init__(self, d=64, layers=2, heads=4, stats=True, edge_layers=1, pair_rows=0, pair_width=16):
        super().__init__()
        assert layers > 0 or stats, "a model needs the encoder or the statistics"
        assert stats or not pair_rows, "the pair-row encoder feeds the statistics' edge head"
        self.layers, self.stats, self.pair_rows = layers, stats, pair_rows
        if pair_rows:  # a learned dependence measure: an MLP over each pair's rows, mean-pooled
            self.pr_a, self.pr_b = nn.Linear(3, pair_width), nn.Linear(3, pair_width, bias=False)
            self.pr_2 = nn.Linear(pair_width, pair_width)
            self.pr_out = nn.Linear(2 * pair_width, d)
        if layers:
            self.embed = nn.Linear(IN_FEATURES, d)
            self.row_blocks = nn.ModuleList(AxisBlock(d, heads) for _ in range(layers))
            self.node_blocks = nn.ModuleList(AxisBlock(d, heads) for _ in range(layers))
            self.norm = nn.LayerNorm(d)
            self.u, self.v = nn.Linear(d, d), nn.Linear(d, d)
        if stats:
            self.pair_in = nn.Sequential(nn.Linear(2 * PAIR_STATS + 2 * NODE_STATS, 2 * d), nn.GELU(),
                                         nn.Linear(2 * d, d))
            self.row_e = nn.ModuleList(AxisBlock(d, heads) for _ in range(edge_layers))
            self.col_e = nn.ModuleList(AxisBlock(d, heads) for _ in range(edge_layers))
            self.e_norm = nn.LayerNorm(d)
            self.e_out = nn.Linear(d, 1)
        self.bias = nn.Parameter(torch.tensor(-1.5))  # about the prior edge rate

    def encode(self, feats, node_mask, row_mask):
        """feats (G,R,N,4), node_mask (G,N), row_mask (G,R) bool -> h (G,N,d)."""
        G, R, N, _ = feats.shape
        h = self.embed(feats).float()  # (G,R,N,d); the residual stream stays fp32 under autocast
        d = h.shape[-1]
        # keys: rows of real worlds; nodes of the graph (a graph with none — a
        # padding graph of a partial batch — keeps all, so softmax stays finite)
        row_keep = row_mask[:, None, :].expand(G, N, R).reshape(G * N, R)
        nkeep = node_mask | ~node_mask.any(dim=1, keepdim=True)
        node_keep = nkeep[:, None, :].expand(G, R, N).reshape(G * R, N)
        if bool(row_keep.all()):  # (every graph has all its twin worlds)
            row_keep = None
        if bool(node_keep.all()):
            node_keep = None
        for rb, nb in zip(self.row_blocks, self.node_blocks):
            h = rb(h.transpose(1, 2).reshape(G * N, R, d), row_keep).view(G, N, R, d).transpose(1, 2)
            h = nb(h.reshape(G * R, N, d), node_keep).view(G, R, N, d)
        h = h.masked_fill(~row_mask[:, :, None, None], float("-inf")).amax(dim=1)  # (G,N,d)
        return self.norm(h)

    def pair_row_embed(self, x, w):
        """x (G,W,R,N,3): per world (base, then the K twins) and row, each node's
        [z, twin - base, target] (z the base value standardised); w (G,W) world
        weights (0: padded) -> (G,N,N,d). For the pair (i, j) every row gives
        gelu(A x_i + B x_j) (the first layer, split by node so the N^2 pairs cost
        one broadcast add), one more layer, then the mean over the rows of each
        world and the mean and max over the worlds."""
        G, W, R, N, _ = x.shape
        h = F.gelu(self.pr_a(x)[:, :, :, :, None, :] + self.pr_b(x)[:, :, :, None, :, :])  # (G,W,R,N,N,H)
        h = F.gelu(self.pr_2(h)).mean(dim=2)  # (G,W,N,N,H)
        wm = w[:, :, None, None, None]
        mean = (h * wm).sum(dim=1) / wm.sum(dim=1).clamp_min(1)
        mx = h.masked_fill(wm == 0, float("-inf")).amax(dim=1)
        return self.pr_out(torch.cat([mean, mx], dim=-1)).float()

    def forward(self, inp):
        """inp: model_inputs' dict -> logits (G,N,N)."""
        node_mask = inp["node_mask"]
        G, N = node_mask.shape
        logit = self.bias
        u = v = None
        if self.layers:
            h = self.encode(inp["feats"], node_mask, inp["row_mask"])
            u, v = self.u(h), self.v(h)  # (G,N,d)
            logit = logit + torch.einsum("gid,gjd->gij", u, v) / h.shape[-1] ** 0.5
        if self.stats:
            pair, node = inp["pair"], inp["node"]
            x = torch.cat([pair, pair.transpose(1, 2),
                           node[:, :, None, :].expand(G, N, N, node.shape[-1]),
                           node[:, None, :, :].expand(G, N, N, node.shape[-1])], dim=-1)
            e = self.pair_in(x).float()  # (G,N,N,d)
            if self.pair_rows:
                e = e + self.pair_row_embed(inp["rows"], inp["row_w"])
            if u is not None:
                e = e + u[:, :, None, :] + v[:, None, :, :]
            d = e.shape[-1]
            nkeep = node_mask | ~node_mask.any(dim=1, keepdim=True)  # (G,N)
            keep = nkeep[:, None, :].expand(G, N, N).reshape(G * N, N)
            if bool(keep.all()):
                keep = None
            for rb, cb in zip(self.row_e, self.col_e):
                e = rb(e.reshape(G * N, N, d), keep).view(G, N, N, d)  # row i: its pairs (i, all j)
                e = cb(e.transpose(1, 2).reshape(G * N, N, d), keep).view(G, N, N, d).transpose(1, 2)
            logit = logit + self.e_out(self.e_norm(e)).squeeze(-1)
        return logit
